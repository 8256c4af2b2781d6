//! Email (magic link) providers (Auth.js `providers/nodemailer.ts`, `providers/resend.ts`, …):
//! the sign-in link is sent by a pluggable sender (Auth.js `sendVerificationRequest`).
//!
//! ```
//! use authcore::providers::email::EmailProvider;
//! let email = EmailProvider::new("Auth <no-reply@example.com>").send_verification_request(|request| async move {
//!     // deliver `request.url` to `request.identifier` (SMTP, an HTTP API …)
//!     let _ = request;
//!     Ok(())
//! });
//! assert_eq!(email.id(), "email");
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::callbacks::SecurityChange;
pub use crate::email_address::{InvalidEmail, MAX_EMAIL_LEN, normalize_email};
use crate::error::BoxError;
use crate::types::Theme;
use time::OffsetDateTime;

pub mod mail;
pub mod services;

/// What a link mailed by an [`EmailProvider`] is for. Auth.js mails sign-in links only;
/// authcore's password accounts mail their confirmation and reset links through the same
/// sender, so one sender serves them all: [`VerificationRequest::default_mail`] renders the
/// mail of the purpose.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LinkPurpose {
    /// A magic sign-in link (Auth.js).
    #[default]
    SignIn,
    /// Confirms the address of a new password account.
    VerifyAddress,
    /// Resets a forgotten password.
    ResetPassword,
    /// Confirms the new address of a user who changed theirs.
    ConfirmNewAddress,
    /// Tells the owner of an address that someone tried to sign up with it again: the
    /// link is the sign-in page (an answer that, on the site, is the same as a sign-up's).
    AccountExists,
    /// Tells the owner of an address that someone asked to reset the password of an
    /// account it does not have: the link is where to sign up, or to sign in.
    NoAccount,
    /// Invites the address to an organization, or to sign up: the link accepts the
    /// invitation once its holder signs in with this address.
    Invitation,
    /// Sets up an account an administrator made: the link sets its first password, or
    /// signs its holder in once (without password accounts).
    AccountSetup,
}

impl LinkPurpose {
    /// Every purpose.
    pub const ALL: [LinkPurpose; 8] = [
        LinkPurpose::SignIn,
        LinkPurpose::VerifyAddress,
        LinkPurpose::ResetPassword,
        LinkPurpose::ConfirmNewAddress,
        LinkPurpose::AccountExists,
        LinkPurpose::NoAccount,
        LinkPurpose::Invitation,
        LinkPurpose::AccountSetup,
    ];
}

/// What the sender receives: where to send which link (Auth.js
/// `sendVerificationRequest({identifier, url, token, expires, provider, theme})`), and
/// what it is for ([`LinkPurpose`]). `Debug` hides the token and the API key.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct VerificationRequest {
    /// The (normalised) email address.
    pub identifier: String,
    /// The plain token (only its hash is stored).
    pub token: String,
    /// When the link expires.
    pub expires: OffsetDateTime,
    /// The sign-in link.
    pub url: String,
    /// The provider id.
    pub provider: String,
    /// The provider's display name.
    pub provider_name: String,
    /// The sender address.
    pub from: String,
    /// The provider's API key (HTTP email services), from the preset or `AUTH_<ID>_KEY`.
    pub api_key: Option<String>,
    /// The config's theme, for the mail's colours.
    pub theme: Theme,
    /// What the link is for (a sign-in link unless password accounts sent it).
    pub purpose: LinkPurpose,
}

impl std::fmt::Debug for VerificationRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerificationRequest")
            .field("identifier", &self.identifier)
            .field("expires", &self.expires)
            .field("provider", &self.provider)
            .field("from", &self.from)
            .field("purpose", &self.purpose)
            .finish_non_exhaustive()
    }
}

impl VerificationRequest {
    /// A request to send `url` to `identifier` from `from` (provider `email`, default
    /// theme, expiring in 24 h): for hosts that send links outside the sign-in flow, and
    /// for tests.
    pub fn new(
        identifier: impl Into<String>,
        url: impl Into<String>,
        from: impl Into<String>,
    ) -> Self {
        VerificationRequest {
            identifier: identifier.into(),
            token: String::new(),
            expires: OffsetDateTime::now_utc() + time::Duration::days(1),
            url: url.into(),
            provider: "email".into(),
            provider_name: "Email".into(),
            from: from.into(),
            api_key: None,
            theme: Theme::default(),
            purpose: LinkPurpose::SignIn,
        }
    }
    /// With `purpose` instead of a sign-in.
    pub fn with_purpose(mut self, purpose: LinkPurpose) -> Self {
        self.purpose = purpose;
        self
    }
    /// The default mail for this link, in the config's theme: Auth.js's for a sign-in
    /// link, authcore's for the other purposes.
    pub fn default_mail(&self) -> Result<mail::SignInMail, mail::MailError> {
        mail::SignInMail::for_purpose(&self.url, self.purpose, &self.theme)
    }
}

/// A security notice to mail (beyond Auth.js): a change to how the user signs in, rendered
/// ([`mail::SecurityNoticeMail`]) and addressed to the user's verified address. `Debug`
/// shows the address masked and leaves the bodies out.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SecurityNotice {
    /// The user's verified email address.
    pub to: String,
    /// The sender address (the provider's `from`).
    pub from: String,
    /// The subject (`Security alert: a passkey was added to your account` …).
    pub subject: String,
    /// The plain-text body.
    pub text: String,
    /// The HTML body.
    pub html: String,
    /// What changed.
    pub change: SecurityChange,
    /// The account page (`<origin><basePath>/account`), when the site's URL is known: the
    /// request's origin, else the configured `url`.
    pub account_url: Option<String>,
    /// The user's id.
    pub user_id: String,
}

impl std::fmt::Debug for SecurityNotice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecurityNotice")
            .field("to", &crate::email_address::masked(&self.to))
            .field("from", &self.from)
            .field("subject", &self.subject)
            .field("change", &self.change)
            .field("account_url", &self.account_url)
            .field("user_id", &self.user_id)
            .finish_non_exhaustive()
    }
}

impl SecurityNotice {
    /// The default notice of `change` to `to` from `from`, linking to `account_url`, in
    /// `theme`: for senders that render their own mail from the parts, and for tests.
    pub fn new(
        user_id: impl Into<String>,
        to: impl Into<String>,
        from: impl Into<String>,
        change: SecurityChange,
        account_url: Option<String>,
        theme: &Theme,
    ) -> Result<Self, mail::MailError> {
        let mail = mail::SecurityNoticeMail::new(change, account_url.as_deref(), theme)?;
        Ok(SecurityNotice {
            to: to.into(),
            from: from.into(),
            subject: mail.subject,
            text: mail.text,
            html: mail.html,
            change,
            account_url,
            user_id: user_id.into(),
        })
    }
}

type SendFuture = Pin<Box<dyn Future<Output = Result<(), BoxError>> + Send>>;
type SendFn = dyn Fn(VerificationRequest) -> SendFuture + Send + Sync;
pub(crate) type NoticeFn = dyn Fn(SecurityNotice) -> SendFuture + Send + Sync;
type NormalizeFn = dyn Fn(&str) -> Result<String, InvalidEmail> + Send + Sync;
type TokenFn = dyn Fn() -> String + Send + Sync;

/// An email provider.
#[derive(Clone)]
pub struct EmailProvider {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) from: String,
    pub(crate) max_age: u64,
    pub(crate) send: Option<Arc<SendFn>>,
    pub(crate) send_notice: Option<Arc<NoticeFn>>,
    pub(crate) normalize: Option<Arc<NormalizeFn>>,
    pub(crate) generate_token: Option<Arc<TokenFn>>,
    pub(crate) secret: Option<String>,
    pub(crate) api_key: Option<String>,
    /// Set by the HTTP service presets: building the config fails without a key.
    pub(crate) requires_api_key: bool,
    /// Whether the provider is a way to sign in (magic links); see
    /// [`EmailProvider::magic_links`].
    pub(crate) magic_links: bool,
}

impl std::fmt::Debug for EmailProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmailProvider")
            .field("id", &self.id)
            .field("from", &self.from)
            .field("max_age", &self.max_age)
            .field("magic_links", &self.magic_links)
            .finish_non_exhaustive()
    }
}

impl EmailProvider {
    /// Id `email`, name `Email`, links valid for 24 h.
    pub fn new(from: impl Into<String>) -> Self {
        EmailProvider {
            id: "email".into(),
            name: "Email".into(),
            from: from.into(),
            max_age: 24 * 60 * 60,
            send: None,
            send_notice: None,
            normalize: None,
            generate_token: None,
            secret: None,
            api_key: None,
            requires_api_key: false,
            magic_links: true,
        }
    }
    /// Provider id.
    pub fn id(&self) -> &str {
        &self.id
    }
    /// Sets the id.
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = id.into();
        self
    }
    /// Sets the sender address (`a@example.com` or `Name <a@example.com>`).
    pub fn with_from(mut self, from: impl Into<String>) -> Self {
        self.from = from.into();
        self
    }
    /// Sets the display name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }
    /// How long links stay valid.
    pub fn max_age(mut self, max_age: std::time::Duration) -> Self {
        self.max_age = max_age.as_secs();
        self
    }
    /// The sender (Auth.js `sendVerificationRequest`); required.
    pub fn send_verification_request<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(VerificationRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), BoxError>> + Send + 'static,
    {
        self.send = Some(Arc::new(move |r| Box::pin(f(r))));
        self
    }
    /// The sender of security notices (beyond Auth.js): when set, a change to how a user
    /// signs in (see [`SecurityChange`]) is also mailed to the user's verified address.
    /// The sender should bound its network waits (a slow relay delays the change's answer);
    /// a failure is logged and never undoes the change.
    ///
    /// ```
    /// use authcore::providers::email::EmailProvider;
    /// let email = EmailProvider::new("Auth <no-reply@example.com>")
    ///     .send_security_notice(|notice| async move {
    ///         // deliver `notice.subject`, `notice.text` and `notice.html` to `notice.to`
    ///         let _ = notice;
    ///         Ok(())
    ///     });
    /// assert!(email.sends_security_notices());
    /// ```
    pub fn send_security_notice<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(SecurityNotice) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), BoxError>> + Send + 'static,
    {
        self.send_notice = Some(Arc::new(move |n| Box::pin(f(n))));
        self
    }
    /// Whether a security notice sender is set.
    pub fn sends_security_notices(&self) -> bool {
        self.send_notice.is_some()
    }
    /// Whether this provider is a way to sign in (beyond Auth.js, where every email
    /// provider is): `true` by default. With `false` the provider only mails: password
    /// accounts' links ([`LinkPurpose`]) and security notices still go out through its
    /// senders, but it sends no sign-in link and opens no session. It is left out of
    /// `GET <basePath>/providers`, of the built-in sign-in page and of a user's
    /// [`SignInMethods`](crate::account::SignInMethods), and `<basePath>/signin/<id>` and
    /// `<basePath>/callback/<id>` answer as for an unknown provider.
    ///
    /// ```
    /// use authcore::providers::email::EmailProvider;
    /// // Mails for password accounts, no magic links.
    /// let email = EmailProvider::new("Auth <no-reply@example.com>")
    ///     .send_verification_request(|request| async move {
    ///         let _ = request;
    ///         Ok(())
    ///     })
    ///     .magic_links(false);
    /// assert!(!email.sends_magic_links());
    /// ```
    pub fn magic_links(mut self, enabled: bool) -> Self {
        self.magic_links = enabled;
        self
    }
    /// Whether the provider signs users in with magic links ([`EmailProvider::magic_links`]).
    pub fn sends_magic_links(&self) -> bool {
        self.magic_links
    }
    /// Replaces the default address normaliser (Auth.js `normalizeIdentifier`).
    ///
    /// ```
    /// use authcore::providers::email::{EmailProvider, InvalidEmail, normalize_email};
    /// // Allow only one domain.
    /// let p = EmailProvider::new("a@example.com").normalize_identifier(|input| {
    ///     let email = normalize_email(input)?;
    ///     if email.ends_with("@example.com") { Ok(email) } else { Err(InvalidEmail::Format) }
    /// });
    /// # let _ = p;
    /// ```
    pub fn normalize_identifier<F>(mut self, f: F) -> Self
    where
        F: Fn(&str) -> Result<String, InvalidEmail> + Send + Sync + 'static,
    {
        self.normalize = Some(Arc::new(f));
        self
    }
    /// Replaces the token generator (Auth.js `generateVerificationToken`; default 32 bytes
    /// from the OS CSPRNG as 64 hex digits). An empty token is refused at sign-in.
    pub fn generate_verification_token<F>(mut self, f: F) -> Self
    where
        F: Fn() -> String + Send + Sync + 'static,
    {
        self.generate_token = Some(Arc::new(f));
        self
    }
    /// A secret for hashing this provider's tokens instead of the config's secret
    /// (Auth.js `provider.secret`).
    pub fn secret(mut self, secret: impl Into<String>) -> Self {
        self.secret = Some(secret.into());
        self
    }
    /// The API key handed to the sender (HTTP email services); otherwise `AUTH_<ID>_KEY`.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }
    /// The sender address.
    pub fn from_address(&self) -> &str {
        &self.from
    }
    pub(crate) fn normalize(&self, input: &str) -> Result<String, InvalidEmail> {
        match &self.normalize {
            Some(f) => f(input),
            None => normalize_email(input),
        }
    }
    /// What this provider's sender receives for a link of `purpose` to `to`.
    pub(crate) fn link_request(
        &self,
        to: &str,
        token: String,
        expires: OffsetDateTime,
        url: String,
        theme: &Theme,
        purpose: LinkPurpose,
    ) -> VerificationRequest {
        VerificationRequest {
            identifier: to.to_owned(),
            token,
            expires,
            url,
            provider: self.id.clone(),
            provider_name: self.name.clone(),
            from: self.from.clone(),
            api_key: self.api_key.clone(),
            theme: theme.clone(),
            purpose,
        }
    }
    pub(crate) fn new_token(&self) -> String {
        match &self.generate_token {
            Some(f) => f(),
            None => crate::random::hex_token::<32>(),
        }
    }
    pub(crate) fn apply_env(&mut self, env: &super::ProviderEnv) {
        if self.api_key.is_none() {
            self.api_key.clone_from(&env.api_key);
        }
    }
}
