//! Callbacks (`signIn`, `redirect`, `jwt`, `session`) and events, as traits whose default
//! methods are the Auth.js defaults (`defaultCallbacks` in `lib/init.ts`). A host overrides
//! only what it needs.
//!
//! ```
//! use authcore::callbacks::{Callbacks, JwtParams};
//! use authcore::jwt::JwtClaims;
//! use authcore::BoxError;
//!
//! struct AddRole;
//! #[authcore::async_trait]
//! impl Callbacks for AddRole {
//!     async fn jwt(&self, mut params: JwtParams<'_>) -> Result<Option<JwtClaims>, BoxError> {
//!         if params.user.is_some() {
//!             params.token.insert("role".into(), "admin".into());
//!         }
//!         Ok(Some(params.token))
//!     }
//! }
//! ```

use async_trait::async_trait;
use serde_json::Value;

use crate::error::BoxError;
use crate::jwt::JwtClaims;
use crate::types::{Account, JsonObject, Profile, Session, User};

/// Parameters of the `signIn` callback.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct SignInParams<'a> {
    /// The user about to sign in.
    pub user: &'a User,
    /// The account used.
    pub account: Option<&'a Account>,
    /// The OAuth profile (OAuth / OIDC only).
    pub profile: Option<&'a Profile>,
    /// Set for the first step of an email sign-in (`{verificationRequest: true}`).
    pub email_verification_request: bool,
    /// The submitted credentials (credentials provider only).
    pub credentials: Option<&'a JsonObject>,
}

/// What the `signIn` callback decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignInOutcome {
    /// Continue signing in.
    Allow,
    /// Refuse (`AccessDenied`).
    Deny,
    /// Abort and redirect to this URL (passed through the `redirect` callback).
    Redirect(String),
}

impl From<bool> for SignInOutcome {
    fn from(allow: bool) -> Self {
        if allow {
            SignInOutcome::Allow
        } else {
            SignInOutcome::Deny
        }
    }
}

/// Parameters of the `redirect` callback.
#[derive(Debug, Clone, Copy)]
pub struct RedirectParams<'a> {
    /// The requested URL (absolute or starting with `/`).
    pub url: &'a str,
    /// The site origin.
    pub base_url: &'a str,
}

/// Why the `jwt` callback is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JwtTrigger {
    /// Sign-in of an existing user.
    SignIn,
    /// First sign-in of a new user.
    SignUp,
    /// `POST /session` (client `update()`).
    Update,
}

/// Parameters of the `jwt` callback.
#[derive(Debug)]
#[non_exhaustive]
pub struct JwtParams<'a> {
    /// The decoded token (or the default token at sign-in). Return it, changed or not.
    pub token: JwtClaims,
    /// The user (sign-in only).
    pub user: Option<&'a User>,
    /// The account (sign-in only).
    pub account: Option<&'a Account>,
    /// The OAuth profile (OAuth / OIDC sign-in only).
    pub profile: Option<&'a Profile>,
    /// Whether the user is new (sign-in with an adapter only).
    pub is_new_user: Option<bool>,
    /// Why the callback runs; `None` on a plain session read.
    pub trigger: Option<JwtTrigger>,
    /// The update payload (`trigger == Update`).
    pub session: Option<&'a Value>,
}

/// Parameters of the `session` callback.
#[derive(Debug)]
#[non_exhaustive]
pub struct SessionParams<'a> {
    /// The default session object.
    pub session: Session,
    /// The decoded token (JWT strategy).
    pub token: Option<&'a JwtClaims>,
    /// The user (database strategy).
    pub user: Option<&'a User>,
    /// Update payload (database strategy, `POST /session`).
    pub new_session: Option<&'a Value>,
    /// `Some(Update)` on `POST /session` (database strategy).
    pub trigger: Option<JwtTrigger>,
}

/// The four Auth.js callbacks. Every method has the Auth.js default.
///
/// An error returned from `sign_in` becomes `AccessDenied` unless it is an
/// [`AuthError`](crate::AuthError), which is passed on unchanged.
#[async_trait]
pub trait Callbacks: Send + Sync + 'static {
    /// Whether a user may sign in. Default: allow.
    async fn sign_in(&self, params: SignInParams<'_>) -> Result<SignInOutcome, BoxError> {
        let _ = params;
        Ok(SignInOutcome::Allow)
    }

    /// Where to redirect. Default: [`default_redirect`] (same origin or relative only).
    async fn redirect(&self, params: RedirectParams<'_>) -> Result<String, BoxError> {
        Ok(default_redirect(params.url, params.base_url))
    }

    /// The token to store; `None` signs the user out. Default: unchanged.
    async fn jwt(&self, params: JwtParams<'_>) -> Result<Option<JwtClaims>, BoxError> {
        Ok(Some(params.token))
    }

    /// The session object sent to the client. Default: `{user: {name, email, image}, expires}`.
    async fn session(&self, params: SessionParams<'_>) -> Result<Value, BoxError> {
        default_session(params)
    }
}

/// Auth.js's default `session` callback: the default session object as JSON.
fn default_session(params: SessionParams<'_>) -> Result<Value, BoxError> {
    Ok(serde_json::to_value(params.session)?)
}

/// The Auth.js callbacks with all defaults.
#[derive(Debug, Clone, Copy, Default)]
pub struct DefaultCallbacks;

#[async_trait]
impl Callbacks for DefaultCallbacks {}

/// Auth.js default `redirect`: a URL starting with `/` is joined to `base_url`; an absolute
/// URL with the same origin as `base_url` is kept; anything else gives `base_url`.
///
/// Unlike Auth.js, an unparsable URL gives `base_url` instead of a server error.
///
/// ```
/// use authcore::callbacks::default_redirect;
/// let base = "https://app.example";
/// assert_eq!(default_redirect("/dashboard", base), "https://app.example/dashboard");
/// assert_eq!(default_redirect("https://app.example/x", base), "https://app.example/x");
/// assert_eq!(default_redirect("https://evil.example/", base), base);
/// assert_eq!(default_redirect("javascript:alert(1)", base), base);
/// ```
pub fn default_redirect(url: &str, base_url: &str) -> String {
    if is_same_origin_fast(url, base_url) {
        return url.to_owned();
    }
    if url.starts_with('/') {
        let mut s = String::with_capacity(base_url.len() + url.len());
        s.push_str(base_url);
        s.push_str(url);
        return s;
    }
    match url::Url::parse(url) {
        // A URL parser drops leading and trailing controls and spaces and every tab or
        // newline, so such a value is only on the origin in its parsed form: return that
        // (found by fuzzing: "http://localhost:3000\u{1}" went out as written).
        Ok(u) if u.origin().ascii_serialization() == base_url => {
            if url.bytes().any(|b| b.is_ascii_control() || b == b' ') {
                u.into()
            } else {
                url.to_owned()
            }
        }
        _ => base_url.to_owned(),
    }
}

/// Hot-path shortcut: `url` is `base_url` itself or `base_url` followed by `/`, `?` or `#`,
/// which a URL parser would also give the origin `base_url` (the origin has no userinfo,
/// path or trailing characters that could change the authority). Also the request check's
/// shortcut for callback URLs (`actions::is_valid_http_url`).
pub(crate) fn is_same_origin_fast(url: &str, base_url: &str) -> bool {
    match url.strip_prefix(base_url) {
        Some("") => true,
        Some(rest) => {
            matches!(rest.as_bytes()[0], b'/' | b'?' | b'#')
                && !rest.starts_with("//")
                && !rest
                    .bytes()
                    .any(|b| b == b'\\' || b.is_ascii_control() || b == b' ')
        }
        None => false,
    }
}

/// Message of the `signIn` event.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct SignInEvent<'a> {
    /// The user.
    pub user: &'a User,
    /// The account.
    pub account: Option<&'a Account>,
    /// The OAuth profile.
    pub profile: Option<&'a Profile>,
    /// Whether the user is new.
    pub is_new_user: Option<bool>,
}

/// Message of the `signOut` event.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum SignOutEvent<'a> {
    /// JWT strategy: the decoded token, if it could be decoded.
    Token(Option<&'a JwtClaims>),
    /// Database strategy: the deleted session.
    Session(Option<&'a Value>),
}

/// Message of the `session` event.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct SessionEvent<'a> {
    /// The session returned to the client.
    pub session: &'a Value,
    /// The token (JWT strategy).
    pub token: Option<&'a JwtClaims>,
}

/// Message of the `rateLimited` event (an authcore addition: Auth.js has no rate limits).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct RateLimitedEvent<'a> {
    /// The limit of [`crate::ratelimit::RateLimits`] that refused the request, by its field
    /// name (`credentials_per_identifier`, `emails_per_client`, …).
    pub limit: &'static str,
    /// The identifier (user name or email address) for per-identifier limits.
    pub identifier: Option<&'a str>,
    /// The client address, when the host gave one.
    pub client: Option<std::net::IpAddr>,
    /// How long until the subject may try again.
    pub retry_after: std::time::Duration,
}

/// A change to a user's second factors, or the use of one that matters for alerting
/// ([`crate::two_factor`]).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct TwoFactorEvent<'a> {
    /// The user.
    pub user_id: &'a str,
    /// What happened: `totpEnrolled`, `totpDisabled`, `recoveryCodesRegenerated` or
    /// `recoveryCodeUsed`.
    pub action: &'static str,
}

/// Sessions that ended before their time: a sign-out, a session signed out from the account
/// page, "sign out everywhere", the user's deletion (beyond Auth.js; e.g. for an OpenID
/// Provider's back-channel logout).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct SessionsEndedEvent<'a> {
    /// The user.
    pub user_id: &'a str,
    /// The sessions' ids ([`SessionInfo::id`](crate::account::SessionInfo::id) of a database session,
    /// a JWT's `sid`); empty when `all`.
    pub session_ids: &'a [String],
    /// Every session of the user ended (or may have: the user was deleted, or JWT sessions
    /// were revoked, whose ids are not known).
    pub all: bool,
}

/// A user revoked an application's access from the account page (beyond Auth.js; authcore
/// as an OpenID Provider): its tokens for the user are void, and its sessions of the user
/// should end (back-channel logout).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct AppAccessRevokedEvent<'a> {
    /// The user.
    pub user_id: &'a str,
    /// The application's OpenID Connect `client_id`.
    pub client_id: &'a str,
}

/// A change to how a user signs in ([`SecurityChangeEvent`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SecurityChange {
    /// A passkey was added to the account.
    PasskeyAdded,
    /// A passkey was removed.
    PasskeyRemoved,
    /// An authenticator app (TOTP) was set up.
    TotpEnrolled,
    /// The authenticator app (TOTP) was removed.
    TotpDisabled,
    /// A new set of recovery codes replaced the old one.
    RecoveryCodesRenewed,
    /// A provider account was linked.
    ProviderLinked,
    /// The account was deleted.
    AccountDeleted,
    /// The password was changed or reset (beyond Auth.js: password accounts).
    PasswordChanged,
    /// The account's email address was changed; the notice goes to the old address.
    EmailChanged,
}

impl SecurityChange {
    /// Every change.
    pub const ALL: [SecurityChange; 9] = [
        SecurityChange::PasskeyAdded,
        SecurityChange::PasskeyRemoved,
        SecurityChange::TotpEnrolled,
        SecurityChange::TotpDisabled,
        SecurityChange::RecoveryCodesRenewed,
        SecurityChange::ProviderLinked,
        SecurityChange::AccountDeleted,
        SecurityChange::PasswordChanged,
        SecurityChange::EmailChanged,
    ];

    /// Its name in events and log lines (`passkeyAdded` …).
    pub fn name(self) -> &'static str {
        match self {
            SecurityChange::PasskeyAdded => "passkeyAdded",
            SecurityChange::PasskeyRemoved => "passkeyRemoved",
            SecurityChange::TotpEnrolled => "totpEnrolled",
            SecurityChange::TotpDisabled => "totpDisabled",
            SecurityChange::RecoveryCodesRenewed => "recoveryCodesRenewed",
            SecurityChange::ProviderLinked => "providerLinked",
            SecurityChange::AccountDeleted => "accountDeleted",
            SecurityChange::PasswordChanged => "passwordChanged",
            SecurityChange::EmailChanged => "emailChanged",
        }
    }

    /// What the notice tells the user, in a sentence.
    pub fn description(self) -> &'static str {
        match self {
            SecurityChange::PasskeyAdded => "A passkey was added to your account.",
            SecurityChange::PasskeyRemoved => "A passkey was removed from your account.",
            SecurityChange::TotpEnrolled => "An authenticator app was set up for your account.",
            SecurityChange::TotpDisabled => {
                "The authenticator app was removed from your account: two-factor \
                 authentication is off."
            }
            SecurityChange::RecoveryCodesRenewed => {
                "New recovery codes were made for your account; the old ones no longer work."
            }
            SecurityChange::ProviderLinked => "A new sign-in method was linked to your account.",
            SecurityChange::AccountDeleted => "Your account was deleted.",
            SecurityChange::PasswordChanged => {
                "The password of your account was changed, and your other sessions were signed out."
            }
            SecurityChange::EmailChanged => {
                "The email address of your account was changed: this address is no longer \
                 the account's."
            }
        }
    }
}

/// A change to how a user signs in that the user should hear of (beyond Auth.js): a
/// second factor or passkey added or removed, recovery codes renewed, a provider linked,
/// the account deleted. authcore also mails the user's verified address when an email
/// provider can send notices.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct SecurityChangeEvent<'a> {
    /// The user.
    pub user_id: &'a str,
    /// What changed.
    pub change: SecurityChange,
}

/// Auth.js events: awaited, errors logged as `EventError` and otherwise ignored.
#[async_trait]
pub trait Events: Send + Sync + 'static {
    /// After a successful sign-in.
    async fn sign_in(&self, message: SignInEvent<'_>) -> Result<(), BoxError> {
        let _ = message;
        Ok(())
    }
    /// After sign-out.
    async fn sign_out(&self, message: SignOutEvent<'_>) -> Result<(), BoxError> {
        let _ = message;
        Ok(())
    }
    /// After an adapter created a user.
    async fn create_user(&self, user: &User) -> Result<(), BoxError> {
        let _ = user;
        Ok(())
    }
    /// After an adapter updated a user.
    async fn update_user(&self, user: &User) -> Result<(), BoxError> {
        let _ = user;
        Ok(())
    }
    /// After an account was linked to a user.
    async fn link_account(
        &self,
        user: &User,
        account: &Account,
        profile: Option<&Profile>,
    ) -> Result<(), BoxError> {
        let _ = (user, account, profile);
        Ok(())
    }
    /// After every successful session read or update.
    async fn session(&self, message: SessionEvent<'_>) -> Result<(), BoxError> {
        let _ = message;
        Ok(())
    }
    /// After a request was refused by a rate limit (for alerting on brute force).
    async fn rate_limited(&self, message: RateLimitedEvent<'_>) -> Result<(), BoxError> {
        let _ = message;
        Ok(())
    }
    /// After a second factor was enrolled, disabled or regenerated, or a recovery code was
    /// used (beyond Auth.js).
    async fn two_factor(&self, message: TwoFactorEvent<'_>) -> Result<(), BoxError> {
        let _ = message;
        Ok(())
    }
    /// After sessions ended before their time (beyond Auth.js): after the `signOut` event
    /// of a sign-out, and for the account functions that end sessions.
    async fn sessions_ended(&self, message: SessionsEndedEvent<'_>) -> Result<(), BoxError> {
        let _ = message;
        Ok(())
    }
    /// After the user revoked an application's access (beyond Auth.js).
    async fn app_access_revoked(&self, message: AppAccessRevokedEvent<'_>) -> Result<(), BoxError> {
        let _ = message;
        Ok(())
    }
    /// After a change to how the user signs in (beyond Auth.js; for alerting and audit).
    async fn security_change(&self, message: SecurityChangeEvent<'_>) -> Result<(), BoxError> {
        let _ = message;
        Ok(())
    }
}

/// No-op events.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoEvents;

#[async_trait]
impl Events for NoEvents {}

/// The configured callbacks: a host's, or none, when the Auth.js defaults run in place.
/// A trait method's future is boxed (`async_trait`) and called through a vtable; the
/// defaults, which every sign-in and session read of a host without callbacks runs, are
/// neither.
#[derive(Clone, Default)]
pub(crate) struct CallbackHooks(Option<std::sync::Arc<dyn Callbacks>>);

impl CallbackHooks {
    /// The host's callbacks.
    pub(crate) fn new(callbacks: impl Callbacks) -> Self {
        CallbackHooks(Some(std::sync::Arc::new(callbacks)))
    }

    /// [`Callbacks::sign_in`].
    pub(crate) async fn sign_in(
        &self,
        params: SignInParams<'_>,
    ) -> Result<SignInOutcome, BoxError> {
        match &self.0 {
            Some(c) => c.sign_in(params).await,
            None => Ok(SignInOutcome::Allow),
        }
    }

    /// [`Callbacks::redirect`].
    pub(crate) async fn redirect(&self, params: RedirectParams<'_>) -> Result<String, BoxError> {
        match &self.0 {
            Some(c) => c.redirect(params).await,
            None => Ok(default_redirect(params.url, params.base_url)),
        }
    }

    /// [`Callbacks::jwt`].
    pub(crate) async fn jwt(&self, params: JwtParams<'_>) -> Result<Option<JwtClaims>, BoxError> {
        match &self.0 {
            Some(c) => c.jwt(params).await,
            None => Ok(Some(params.token)),
        }
    }

    /// [`Callbacks::session`].
    pub(crate) async fn session(&self, params: SessionParams<'_>) -> Result<Value, BoxError> {
        match &self.0 {
            Some(c) => c.session(params).await,
            None => default_session(params),
        }
    }
}

/// The configured events: a host's, or none, when nothing runs (see [`CallbackHooks`]).
#[derive(Clone, Default)]
pub(crate) struct EventHooks(Option<std::sync::Arc<dyn Events>>);

impl EventHooks {
    /// The host's events.
    pub(crate) fn new(events: impl Events) -> Self {
        EventHooks(Some(std::sync::Arc::new(events)))
    }
}

/// Each [`Events`] method on [`EventHooks`]: the host's, or `Ok(())` at once.
macro_rules! event_hooks {
    ($($(#[$doc:meta])* $name:ident($($arg:ident: $ty:ty),*);)*) => {
        impl EventHooks {
            $(
                $(#[$doc])*
                pub(crate) async fn $name(&self, $($arg: $ty),*) -> Result<(), BoxError> {
                    match &self.0 {
                        Some(e) => e.$name($($arg),*).await,
                        None => Ok(()),
                    }
                }
            )*
        }
    };
}

event_hooks! {
    /// [`Events::sign_in`].
    sign_in(message: SignInEvent<'_>);
    /// [`Events::sign_out`].
    sign_out(message: SignOutEvent<'_>);
    /// [`Events::create_user`].
    create_user(user: &User);
    /// [`Events::update_user`].
    update_user(user: &User);
    /// [`Events::link_account`].
    link_account(user: &User, account: &Account, profile: Option<&Profile>);
    /// [`Events::session`].
    session(message: SessionEvent<'_>);
    /// [`Events::rate_limited`].
    rate_limited(message: RateLimitedEvent<'_>);
    /// [`Events::two_factor`].
    two_factor(message: TwoFactorEvent<'_>);
    /// [`Events::sessions_ended`].
    sessions_ended(message: SessionsEndedEvent<'_>);
    /// [`Events::app_access_revoked`].
    app_access_revoked(message: AppAccessRevokedEvent<'_>);
    /// [`Events::security_change`].
    security_change(message: SecurityChangeEvent<'_>);
}

#[cfg(test)]
mod tests {
    use super::default_redirect;

    #[test]
    fn default_redirect_rejects_hostile_targets() {
        let base = "http://localhost:3000";
        for hostile in [
            "https://evil.example",
            "https:evil.example",
            "javascript:alert(1)",
            "data:text/html,x",
            "http://localhost:3000.evil.example/",
            "http://user@evil.example",
            "\\\\evil.example",
            "not a url",
            "",
        ] {
            assert_eq!(default_redirect(hostile, base), base, "{hostile}");
        }
        // Relative targets stay on our origin, whatever follows the slash.
        for rel in ["//evil.example", "/\\evil.example", "/a?b=c#d"] {
            let out = default_redirect(rel, base);
            assert!(out.starts_with("http://localhost:3000/"), "{rel}");
            let u = url::Url::parse(&out).unwrap();
            assert_eq!(u.origin().ascii_serialization(), base, "{rel}");
        }
        assert_eq!(
            default_redirect("http://localhost:3000/x", base),
            "http://localhost:3000/x"
        );
        assert_eq!(default_redirect(base, base), base);
        // The fast path never accepts what the parser would reject.
        for tricky in [
            "http://localhost:3000@evil.example",
            "http://localhost:3000.evil.example",
            "http://localhost:30001/",
            "http://localhost:3000\\@evil.example/",
        ] {
            let out = default_redirect(tricky, base);
            let u = url::Url::parse(&out).unwrap();
            assert_eq!(u.origin().ascii_serialization(), base, "{tricky}");
        }
        // Controls and spaces the parser drops: the parsed form goes out (fuzzing finding).
        for (messy, clean) in [
            (
                "http://localhost:3000\u{1}\0\u{12}",
                "http://localhost:3000/",
            ),
            (" http://localhost:3000/a\tb\n ", "http://localhost:3000/ab"),
            ("http://localhost:3000/a b", "http://localhost:3000/a%20b"),
        ] {
            assert_eq!(default_redirect(messy, base), clean, "{messy:?}");
        }
    }
}
