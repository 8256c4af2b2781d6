//! The database adapter interface (Auth.js `adapters.ts`): users, accounts, sessions,
//! verification tokens and WebAuthn authenticators. Backends: `authcore-sqlx` (SQLite,
//! PostgreSQL, MySQL/MariaDB), `authcore-redis`, and [`MemoryAdapter`] for examples and tests.
//!
//! [`Adapter`] holds the calls of Auth.js's adapter, all required. What authcore stores
//! beyond them is a capability of its own, a small trait ([`TwoFactorStore`],
//! [`AppAccessStore`] …) that a backend implements when it stores that thing and lists in
//! its [`Adapter::capabilities`] (none by default). The config
//! builder refuses a configuration that needs a capability the adapter lacks, as Auth.js
//! `assertConfig` (`lib/utils/assert.ts`) refuses missing adapter methods.

mod admin;
pub mod memory;
mod oidc_clients;
mod organizations;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::box_error::BoxError;
use crate::types::SignInInfo;
use crate::types::{Account, Authenticator};

pub use admin::{
    AuditLogStore, AuditQuery, AuditRecord, MAX_AUDIT_PAGE, MAX_USER_PAGE, UserBan,
    UserDirectoryStore, UserPage, UserQuery,
};
pub use memory::MemoryAdapter;
pub use oidc_clients::{
    OidcClientStore, StoredClient, client_secret_hash, client_secret_matches, redirect_uri_problem,
};
pub use organizations::{
    ApiKey, ApiKeyOwner, ApiKeyStore, Invitation, InvitationAcceptance, InvitationStatus, Member,
    MemberChange, OWNER_ROLE, Organization, OrganizationStore, Team,
};

/// How long past its expiry an unused verification token is kept before an adapter's
/// `create_verification_token` deletes it (SQLite, PostgreSQL and memory adapters; Redis
/// expires tokens itself).
pub const STALE_TOKEN_GRACE: time::Duration = time::Duration::days(1);

/// Which database a store keeps its rows in: stores made with equal ids (an adapter and the
/// rate-limit store made from it) read and write one database, so one statement may read
/// the rows of both ([`AppAccessStore::get_user_with_app_access_unless_locked`]). Each
/// [`DatabaseId::unique`] differs from every other in the process; stores that share a
/// database without sharing an id are read one after the other, as stores of different
/// databases are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DatabaseId(u64);

impl DatabaseId {
    /// An id no other call in this process returns.
    pub fn unique() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        DatabaseId(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

/// A stored user (`AdapterUser`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdapterUser {
    /// Id assigned by the adapter.
    pub id: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Email (unique when present).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// When the email was verified.
    #[serde(
        rename = "emailVerified",
        default,
        with = "time::serde::rfc3339::option"
    )]
    pub email_verified: Option<OffsetDateTime>,
    /// Avatar URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
}

impl From<&AdapterUser> for crate::types::User {
    fn from(u: &AdapterUser) -> Self {
        crate::types::User {
            id: Some(u.id.clone()),
            name: u.name.clone(),
            email: u.email.clone(),
            image: u.image.clone(),
            email_verified: u
                .email_verified
                .and_then(|t| {
                    t.format(&time::format_description::well_known::Rfc3339)
                        .ok()
                })
                .map(serde_json::Value::String),
            extra: Default::default(),
        }
    }
}

/// A user to create; the adapter assigns the id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewUser {
    /// Display name.
    pub name: Option<String>,
    /// Email.
    pub email: Option<String>,
    /// When the email was verified.
    pub email_verified: Option<OffsetDateTime>,
    /// Avatar URL.
    pub image: Option<String>,
}

/// A partial update of a user: `None` leaves a field unchanged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserUpdate {
    /// The user to update.
    pub id: String,
    /// New name (`Some(None)` clears it).
    pub name: Option<Option<String>>,
    /// New email.
    pub email: Option<Option<String>>,
    /// New verification time.
    pub email_verified: Option<Option<OffsetDateTime>>,
    /// New image.
    pub image: Option<Option<String>>,
}

/// A database session (`AdapterSession`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdapterSession {
    /// The token stored in the session cookie.
    #[serde(rename = "sessionToken")]
    pub session_token: String,
    /// Owner.
    #[serde(rename = "userId")]
    pub user_id: String,
    /// Expiry.
    #[serde(with = "time::serde::rfc3339")]
    pub expires: OffsetDateTime,
}

/// A database session with what authcore records about its use (beyond Auth.js's
/// schema; rows written by Auth.js have none of it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionActivity {
    /// The session.
    pub session: AdapterSession,
    /// When it was created (its first recorded activity).
    pub created_at: Option<OffsetDateTime>,
    /// Its last recorded use (recorded at most every `session_update_age`).
    pub last_seen_at: Option<OffsetDateTime>,
    /// The `User-Agent` of its last recorded use.
    pub user_agent: Option<String>,
}

/// A user's JWT revocation: sessions signed in before `before` are revoked, but `keep`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JwtRevocation {
    /// Sessions signed in before this are revoked.
    pub before: OffsetDateTime,
    /// The `sid` of the session that stays (the one that asked to sign out elsewhere).
    pub keep: Option<String>,
}

/// A user's TOTP second factor (beyond Auth.js). Recovery codes are kept apart
/// ([`TwoFactorStore::replace_recovery_codes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TwoFactor {
    /// The user.
    pub user_id: String,
    /// The TOTP secret as authcore sealed it (a JWE under the auth secret, never the
    /// secret itself).
    pub totp_secret: String,
    /// When a first valid code confirmed the secret; until then it does not count as a
    /// second factor.
    pub totp_confirmed_at: Option<OffsetDateTime>,
}

/// A session here that a session at an upstream OpenID provider signed in (beyond
/// Auth.js): the provider's session id (`sid` of its ID token) with the session it
/// started, so that the provider's back-channel logout token naming that `sid` ends that
/// session and no other (OpenID Connect Back-Channel Logout 1.0 §2.7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamSession {
    /// The provider's id here.
    pub provider: String,
    /// The provider's session id.
    pub sid: String,
    /// The user signed in.
    pub user_id: String,
    /// The database session's token (as stored); `None` when the session is none of the
    /// adapter's (authcore records database sessions only: a JWT session carries its
    /// provider session in a claim).
    pub session_token: Option<String>,
    /// When the record may be forgotten: the session's expiry.
    pub expires: OffsetDateTime,
}

/// A user's access granted to an application that signs in through authcore as an OpenID
/// Provider (beyond Auth.js): the scopes allowed so far, and the epoch that voids the
/// application's tokens when access is revoked. Listed and revoked on the account page
/// ("apps with access").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppAccess {
    /// The user.
    pub user_id: String,
    /// The application (its OpenID Connect `client_id`).
    pub client_id: String,
    /// The application's name when access was last granted, for the account page.
    pub client_name: String,
    /// The scopes allowed, sorted and each once; empty once access is revoked.
    pub scopes: Vec<String>,
    /// When access was first granted (again after a revocation).
    pub created_at: OffsetDateTime,
    /// When access was last granted (each authorization grants it again).
    pub updated_at: OffsetDateTime,
    /// How many times access was revoked: a token records the epoch it was issued in and is
    /// void once the epoch has moved on.
    pub epoch: i64,
}

impl AppAccess {
    /// The access after a grant of `scopes` at `at` to what was `previous` (for adapters'
    /// [`AppAccessStore::grant_app_access`]): the scopes added to those still granted, the name
    /// updated, the epoch kept; `created_at` is `at` when nothing was granted before.
    pub fn granted(
        previous: Option<AppAccess>,
        user_id: &str,
        client_id: &str,
        client_name: &str,
        scopes: &[String],
        at: OffsetDateTime,
    ) -> AppAccess {
        let (mut all, created_at, epoch) = match previous {
            Some(p) if !p.scopes.is_empty() => (p.scopes, p.created_at, p.epoch),
            Some(p) => (Vec::new(), at, p.epoch),
            None => (Vec::new(), at, 0),
        };
        all.extend(scopes.iter().cloned());
        all.sort();
        all.dedup();
        AppAccess {
            user_id: user_id.to_owned(),
            client_id: client_id.to_owned(),
            client_name: client_name.to_owned(),
            scopes: all,
            created_at,
            updated_at: at,
            epoch,
        }
    }

    /// This access revoked at `at` (for adapters' [`AppAccessStore::revoke_app_access`]): no
    /// scopes, the next epoch; `None` when it is revoked already.
    pub fn revoked(&self, at: OffsetDateTime) -> Option<AppAccess> {
        (!self.scopes.is_empty()).then(|| AppAccess {
            scopes: Vec::new(),
            updated_at: at,
            epoch: self.epoch + 1,
            ..self.clone()
        })
    }

    /// Whether `scopes` were all granted.
    pub fn covers(&self, scopes: &[String]) -> bool {
        scopes.iter().all(|s| self.scopes.contains(s))
    }
}

/// A verification (magic link) token; `token` is the hash of the emailed token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerificationToken {
    /// Email address (or other identifier).
    pub identifier: String,
    /// Hashed token.
    pub token: String,
    /// Expiry.
    #[serde(with = "time::serde::rfc3339")]
    pub expires: OffsetDateTime,
}

/// Why an adapter call failed.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum AdapterError {
    /// The backend lacks this capability (the name of its trait, e.g. `TwoFactorStore`).
    #[error("adapter method {0} is not supported by this adapter")]
    Unsupported(&'static str),
    /// A uniqueness rule was violated (e.g. the same account linked twice).
    #[error("conflict: {0}")]
    Conflict(String),
    /// The backend failed (connection, query …); the message carries no secrets.
    #[error("adapter backend error: {0}")]
    Backend(#[source] BoxError),
}

/// `capability` (a field of the adapter's [`Capabilities`], such as `two_factor`), or
/// [`AdapterError::Unsupported`] naming it (`name`, its trait) when the adapter lacks it.
pub(crate) fn capability<'a, T: ?Sized>(
    capability: Option<&'a T>,
    name: &'static str,
) -> Result<&'a T, AdapterError> {
    capability.ok_or(AdapterError::Unsupported(name))
}

/// A storage backend for users, accounts, sessions, verification tokens and authenticators:
/// the calls of Auth.js's adapter, and the optional [`Capabilities`] the backend has.
///
/// Implementations must: assign user ids in `create_user`; make `use_verification_token`
/// delete the token it returns (atomically: two concurrent uses return it once);
/// make `delete_user` delete the user's accounts, sessions, second factors, app access, password,
/// groups, memberships, API keys and ban (not the audit records that name the user); keep
/// `(provider, provider_account_id)` unique in `link_account` (a second link is a
/// [`AdapterError::Conflict`]).
#[async_trait]
pub trait Adapter: Send + Sync + 'static {
    /// Creates a user, assigning its id.
    async fn create_user(&self, user: NewUser) -> Result<AdapterUser, AdapterError>;
    /// A user by id.
    async fn get_user(&self, id: &str) -> Result<Option<AdapterUser>, AdapterError>;
    /// A user by email.
    async fn get_user_by_email(&self, email: &str) -> Result<Option<AdapterUser>, AdapterError>;
    /// The user owning an account.
    async fn get_user_by_account(
        &self,
        provider: &str,
        provider_account_id: &str,
    ) -> Result<Option<AdapterUser>, AdapterError>;
    /// Updates a user; unknown id → `Ok(None)`.
    async fn update_user(&self, update: UserUpdate) -> Result<Option<AdapterUser>, AdapterError>;
    /// Deletes a user with its accounts and sessions.
    async fn delete_user(&self, id: &str) -> Result<(), AdapterError>;
    /// Links an account (`user_id` set) to its user.
    async fn link_account(&self, account: Account) -> Result<(), AdapterError>;
    /// Unlinks an account.
    async fn unlink_account(
        &self,
        provider: &str,
        provider_account_id: &str,
    ) -> Result<(), AdapterError>;
    /// Stores a session.
    async fn create_session(&self, session: AdapterSession)
    -> Result<AdapterSession, AdapterError>;
    /// A session and its user.
    async fn get_session_and_user(
        &self,
        session_token: &str,
    ) -> Result<Option<(AdapterSession, AdapterUser)>, AdapterError>;
    /// Sets a session's expiry; unknown token → `Ok(None)`.
    async fn update_session(
        &self,
        session_token: &str,
        expires: OffsetDateTime,
    ) -> Result<Option<AdapterSession>, AdapterError>;
    /// Deletes a session, returning it if it existed.
    async fn delete_session(
        &self,
        session_token: &str,
    ) -> Result<Option<AdapterSession>, AdapterError>;
    /// Stores a verification token.
    async fn create_verification_token(&self, token: VerificationToken)
    -> Result<(), AdapterError>;
    /// Returns and deletes a verification token (at most once).
    async fn use_verification_token(
        &self,
        identifier: &str,
        token: &str,
    ) -> Result<Option<VerificationToken>, AdapterError>;
    /// An account by provider account id and provider.
    async fn get_account(
        &self,
        provider_account_id: &str,
        provider: &str,
    ) -> Result<Option<Account>, AdapterError>;
    /// A WebAuthn authenticator by credential id (standard base64).
    async fn get_authenticator(
        &self,
        credential_id: &str,
    ) -> Result<Option<Authenticator>, AdapterError>;
    /// Stores an authenticator (`user_id` set).
    async fn create_authenticator(
        &self,
        authenticator: Authenticator,
    ) -> Result<Authenticator, AdapterError>;
    /// A user's authenticators.
    async fn list_authenticators_by_user_id(
        &self,
        user_id: &str,
    ) -> Result<Vec<Authenticator>, AdapterError>;
    /// Sets an authenticator's counter; unknown id → `Ok(None)`.
    async fn update_authenticator_counter(
        &self,
        credential_id: &str,
        counter: u64,
    ) -> Result<Option<Authenticator>, AdapterError>;
    /// The optional capabilities this backend has; none by default. A backend that has some
    /// names them in one expression: `Capabilities::none().two_factor(self).passwords(self)`.
    fn capabilities(&self) -> Capabilities<'_> {
        Capabilities::none()
    }
}

/// Writes [`Capabilities`] from its list of capabilities: the struct with a field per
/// capability, a builder method per field, its `Debug`, the accessor per capability on
/// `dyn Adapter`, and the decorator's `wrapped_by`. Adding a capability is one line here.
macro_rules! capabilities {
    ($($(#[$doc:meta])* $name:ident: $store:ident,)*) => {
        /// The optional capabilities of an adapter ([`Adapter::capabilities`]): each the
        /// backend itself seen as that capability's trait, or `None` when it lacks it.
        ///
        /// A backend lists what it has in one expression, starting from
        /// [`Capabilities::none`] (`Capabilities::none().two_factor(self).passwords(self)`
        /// in its `capabilities`):
        ///
        /// ```
        /// use authcore::adapter::{Capabilities, MemoryAdapter};
        ///
        /// let store = MemoryAdapter::new();
        /// let capabilities = Capabilities::none().two_factor(&store).passwords(&store);
        /// assert!(capabilities.two_factor.is_some());
        /// assert!(capabilities.app_access.is_none());
        /// ```
        ///
        /// Callers holding a `dyn Adapter` read a capability with its accessor
        /// (`adapter.two_factor()`); generic code reads the field
        /// (`adapter.capabilities().two_factor`).
        #[non_exhaustive]
        #[derive(Clone, Copy, Default)]
        pub struct Capabilities<'a> {
            $(
                $(#[$doc])*
                pub $name: Option<&'a dyn $store>,
            )*
        }

        impl<'a> Capabilities<'a> {
            /// No capability: the start of a backend's list.
            pub fn none() -> Self {
                Self::default()
            }

            $(
                #[doc = concat!("These capabilities and `store` as the [`", stringify!($store), "`].")]
                pub fn $name(self, store: &'a dyn $store) -> Self {
                    Capabilities { $name: Some(store), ..self }
                }
            )*

            /// The capabilities present here, each handed out by `wrapper` instead (a
            /// decorator such as the debug channel's, which delegates to this adapter).
            pub(crate) fn wrapped_by<W: $($store +)* 'a>(self, wrapper: &'a W) -> Self {
                Capabilities {
                    $($name: self.$name.map(|_| wrapper as &dyn $store),)*
                }
            }
        }

        impl std::fmt::Debug for Capabilities<'_> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct("Capabilities")
                    $(.field(stringify!($name), &self.$name.is_some()))*
                    .finish()
            }
        }

        impl dyn Adapter {
            /// The user `user_id` (`None` when there is none) with their access for
            /// `client_id`: one read where the [`AppAccessStore`] makes it
            /// ([`AppAccessStore::get_user_with_app_access`]), else the user, then the access.
            /// [`AdapterError::Unsupported`] without an [`AppAccessStore`].
            pub async fn get_user_with_app_access(
                &self,
                user_id: &str,
                client_id: &str,
            ) -> Result<Option<(AdapterUser, Option<AppAccess>)>, AdapterError> {
                let store = capability(self.app_access(), "AppAccessStore")?;
                match store.get_user_with_app_access(user_id, client_id).await {
                    Err(AdapterError::Unsupported(_)) => {}
                    joined => return joined,
                }
                let Some(user) = self.get_user(user_id).await? else {
                    return Ok(None);
                };
                let access = store.get_app_access(user_id, client_id).await?;
                Ok(Some((user, access)))
            }

            $(
                #[doc = concat!("The [`", stringify!($store), "`] of this backend, if it has one (its [`Capabilities`]).")]
                pub fn $name(&self) -> Option<&dyn $store> {
                    self.capabilities().$name
                }
            )*
        }
    };
}

capabilities! {
    /// Listing a user's accounts and keeping refreshed tokens.
    linked_accounts: LinkedAccountStore,
    /// A user's database sessions with their recorded use.
    session_activity: SessionActivityStore,
    /// How each database session was signed in.
    session_sign_in: SessionSignInStore,
    /// The JWT revocation list.
    jwt_revocation: JwtRevocationStore,
    /// Removing and naming passkeys.
    passkeys: PasskeyStore,
    /// Second factors: TOTP secrets and recovery codes.
    two_factor: TwoFactorStore,
    /// Applications a user allowed (authcore as OpenID Provider).
    app_access: AppAccessStore,
    /// Sessions signed in by upstream provider sessions (back-channel logout).
    upstream_sessions: UpstreamSessionStore,
    /// Password hashes.
    passwords: PasswordStore,
    /// The groups a user source gave each user.
    user_groups: UserGroupsStore,
    /// Organizations, members, teams, invitations.
    organizations: OrganizationStore,
    /// API keys.
    api_keys: ApiKeyStore,
    /// Finding and banning users (administrators).
    user_directory: UserDirectoryStore,
    /// The append-only audit log.
    audit_log: AuditLogStore,
    /// The OpenID Provider's clients made at run time.
    oidc_clients: OidcClientStore,
}

/// A user's linked accounts beyond Auth.js's calls: listing them and keeping refreshed
/// tokens.
#[async_trait]
pub trait LinkedAccountStore: Send + Sync {
    /// A user's accounts, ordered by provider and provider account id (beyond Auth.js).
    async fn list_accounts_by_user_id(&self, user_id: &str) -> Result<Vec<Account>, AdapterError>;
    /// Replaces the tokens of the account with `account`'s provider and provider account
    /// id (`access_token`, `expires_at`, `refresh_token`, `id_token`, `scope`,
    /// `session_state`, `token_type`); `Ok(false)` when there is no such account (beyond
    /// Auth.js: used to keep refreshed access tokens).
    async fn update_account(&self, account: &Account) -> Result<bool, AdapterError>;
}

/// A user's database sessions with their recorded use: the account page's session list and
/// "sign out everywhere else".
#[async_trait]
pub trait SessionActivityStore: Send + Sync {
    /// A user's database sessions with their recorded activity, ordered by session token
    /// (beyond Auth.js).
    async fn list_sessions_by_user_id(
        &self,
        user_id: &str,
    ) -> Result<Vec<SessionActivity>, AdapterError>;
    /// Records a use of the session `session_token` at `at` (and its `User-Agent`, when
    /// given): the first record also sets its creation time (beyond Auth.js).
    async fn record_session_activity(
        &self,
        session_token: &str,
        at: OffsetDateTime,
        user_agent: Option<&str>,
    ) -> Result<(), AdapterError>;
    /// Deletes a user's sessions but `keep` ("sign out everywhere else"); how many went
    /// (beyond Auth.js).
    async fn delete_sessions_by_user_id(
        &self,
        user_id: &str,
        keep: Option<&str>,
    ) -> Result<u64, AdapterError>;
}

/// How each database session was signed in (`amr`, `auth_time`), for step-up checks.
#[async_trait]
pub trait SessionSignInStore: Send + Sync {
    /// Records how the user of database session `session_token` (its stored form) signed
    /// in: the methods (`amr`) and time (`auth_time`); an unknown token records nothing
    /// (beyond Auth.js: step-up checks on database sessions).
    async fn record_session_sign_in(
        &self,
        session_token: &str,
        sign_in: &SignInInfo,
    ) -> Result<(), AdapterError>;
    /// How the user of database session `session_token` signed in, if recorded (beyond
    /// Auth.js).
    async fn get_session_sign_in(
        &self,
        session_token: &str,
    ) -> Result<Option<SignInInfo>, AdapterError>;
}

/// The JWT revocation list (`AuthConfigBuilder::jwt_revocation`).
#[async_trait]
pub trait JwtRevocationStore: Send + Sync {
    /// Revokes the user's JWT sessions signed in before `before`, except session `keep`
    /// (its `sid` claim), replacing any earlier revocation of the user (the JWT revocation
    /// list, beyond Auth.js).
    async fn revoke_jwt_sessions(
        &self,
        user_id: &str,
        before: OffsetDateTime,
        keep: Option<&str>,
    ) -> Result<(), AdapterError>;
    /// The user's JWT revocation, if any: sessions signed in before the time are revoked,
    /// except the one whose `sid` is given.
    async fn get_jwt_revocation(
        &self,
        user_id: &str,
    ) -> Result<Option<JwtRevocation>, AdapterError>;
}

/// Passkeys beyond Auth.js's authenticator calls: removing and naming them.
#[async_trait]
pub trait PasskeyStore: Send + Sync {
    /// Deletes an authenticator (a passkey the user removes); whether it existed (beyond
    /// Auth.js).
    async fn delete_authenticator(&self, credential_id: &str) -> Result<bool, AdapterError>;
    /// Sets (or with `None` clears) the name of an authenticator; whether it exists (beyond
    /// Auth.js).
    async fn rename_authenticator(
        &self,
        credential_id: &str,
        name: Option<&str>,
    ) -> Result<bool, AdapterError>;
}

/// Second factors: a user's TOTP secret and recovery codes
/// (`AuthConfigBuilder::two_factor`).
#[async_trait]
pub trait TwoFactorStore: Send + Sync {
    /// The user's TOTP second factor, if any (beyond Auth.js).
    async fn get_two_factor(&self, user_id: &str) -> Result<Option<TwoFactor>, AdapterError>;
    /// Stores the user's TOTP second factor, replacing any earlier one (beyond Auth.js).
    async fn set_two_factor(&self, two_factor: TwoFactor) -> Result<(), AdapterError>;
    /// Removes the user's TOTP second factor and recovery codes (beyond Auth.js).
    async fn delete_two_factor(&self, user_id: &str) -> Result<(), AdapterError>;
    /// Replaces the user's recovery codes with `code_hashes` (the old set is void; beyond
    /// Auth.js).
    async fn replace_recovery_codes(
        &self,
        user_id: &str,
        code_hashes: &[String],
    ) -> Result<(), AdapterError>;
    /// Uses one of the user's recovery codes (by hash): removes it and answers `true`, or
    /// `false` when the user has no such code. Atomic: two concurrent uses of one code
    /// answer `true` once (beyond Auth.js).
    async fn use_recovery_code(&self, user_id: &str, code_hash: &str)
    -> Result<bool, AdapterError>;
    /// How many unused recovery codes the user has (beyond Auth.js).
    async fn count_recovery_codes(&self, user_id: &str) -> Result<u64, AdapterError>;
}

/// Which applications a user allowed when authcore is their OpenID Provider, and ending
/// that access.
#[async_trait]
pub trait AppAccessStore: Send + Sync {
    /// Grants `client_id` (named `client_name`) access to the user's `scopes` at `at`, added
    /// to the scopes granted before, and answers the access as it now is. Atomic: concurrent
    /// grants lose no scope, and a grant never lowers the epoch (beyond Auth.js).
    async fn grant_app_access(
        &self,
        user_id: &str,
        client_id: &str,
        client_name: &str,
        scopes: &[String],
        at: OffsetDateTime,
    ) -> Result<AppAccess, AdapterError>;
    /// The user's access for `client_id`, revoked (no scopes) or not; `None` when it was
    /// never granted (beyond Auth.js).
    async fn get_app_access(
        &self,
        user_id: &str,
        client_id: &str,
    ) -> Result<Option<AppAccess>, AdapterError>;
    /// The user `user_id` (`None` when there is none) with their access for `client_id`, in
    /// one read: what an OpenID Provider asks on every use of an access token. A store that
    /// cannot read both at once answers [`AdapterError::Unsupported`], as by default, and
    /// the `dyn Adapter` method of the same name reads them one after the other (beyond
    /// Auth.js).
    async fn get_user_with_app_access(
        &self,
        user_id: &str,
        client_id: &str,
    ) -> Result<Option<(AdapterUser, Option<AppAccess>)>, AdapterError> {
        let _ = (user_id, client_id);
        Err(AdapterError::Unsupported(
            "AppAccessStore::get_user_with_app_access",
        ))
    }
    /// [`get_user_with_app_access`](Self::get_user_with_app_access) and, in the same read,
    /// the locks of two keys of a rate-limit store
    /// ([`RateLimitStore::lockout_left`](crate::ratelimit::RateLimitStore::lockout_left))
    /// that keeps its rows in `database`: the user with their access, or `None` when there
    /// is no such user or either key is locked now. One read for what an OpenID Provider
    /// asks on every use of a user's access token (its two revocation marks, the user and
    /// their access; [`SingleUseStore::user_with_app_access_unless_marked`](crate::ratelimit::SingleUseStore::user_with_app_access_unless_marked)).
    /// [`AdapterError::Unsupported`] by default, and whenever `database` is not where this
    /// store keeps its own rows (beyond Auth.js).
    async fn get_user_with_app_access_unless_locked(
        &self,
        user_id: &str,
        client_id: &str,
        database: DatabaseId,
        keys: [&str; 2],
    ) -> Result<Option<(AdapterUser, Option<AppAccess>)>, AdapterError> {
        let _ = (user_id, client_id, database, keys);
        Err(AdapterError::Unsupported(
            "AppAccessStore::get_user_with_app_access_unless_locked",
        ))
    }
    /// The applications the user has granted access to and not revoked, by `client_id`
    /// (beyond Auth.js).
    async fn list_app_access(&self, user_id: &str) -> Result<Vec<AppAccess>, AdapterError>;
    /// Revokes the user's access for `client_id` at `at`: its scopes are cleared and its
    /// epoch moves on, so every token issued before is void. Answers whether there was
    /// access to revoke (beyond Auth.js).
    async fn revoke_app_access(
        &self,
        user_id: &str,
        client_id: &str,
        at: OffsetDateTime,
    ) -> Result<bool, AdapterError>;
}

/// The sessions here that each upstream provider session signed in, for OpenID Connect
/// back-channel logout with a `sid`.
#[async_trait]
pub trait UpstreamSessionStore: Send + Sync {
    /// Records that an upstream provider's session signed in `session` here (beyond
    /// Auth.js). Records of one provider session accumulate (the user may sign in here
    /// again through it); expired ones may be dropped at any time.
    async fn record_upstream_session(&self, session: &UpstreamSession) -> Result<(), AdapterError>;
    /// Removes and answers the unexpired records of the upstream session `sid` of
    /// `provider` at `now`. Atomic: of concurrent takes, each record goes to one (beyond
    /// Auth.js).
    async fn take_upstream_sessions(
        &self,
        provider: &str,
        sid: &str,
        now: OffsetDateTime,
    ) -> Result<Vec<UpstreamSession>, AdapterError>;
}

/// Password accounts: each user's password hash (a PHC string such as
/// `$argon2id$v=19$…`, or an imported `$2b$…` bcrypt hash; see `authcore::passwords`).
/// The store keeps the string as given and never looks into it.
#[async_trait]
pub trait PasswordStore: Send + Sync {
    /// The user's password hash, if the user has a password (beyond Auth.js).
    async fn get_password_hash(&self, user_id: &str) -> Result<Option<String>, AdapterError>;
    /// Sets the user's password hash, replacing any earlier one (beyond Auth.js). The user
    /// must exist; the hash goes when the user is deleted.
    async fn set_password_hash(&self, user_id: &str, hash: &str) -> Result<(), AdapterError>;
    /// Replaces the user's hash with `new` only if it is still `current`, and answers
    /// whether it did. Atomic: a rehash at sign-in never undoes a password change made
    /// meanwhile (beyond Auth.js).
    async fn replace_password_hash(
        &self,
        user_id: &str,
        current: &str,
        new: &str,
    ) -> Result<bool, AdapterError>;
    /// Removes the user's password; a user without one does nothing (beyond Auth.js).
    async fn delete_password_hash(&self, user_id: &str) -> Result<(), AdapterError>;
}

/// The groups a user source (a users file, a directory) gave a user at their last
/// sign-in, for database sessions and the OpenID Provider, which do not carry them in a
/// token.
#[async_trait]
pub trait UserGroupsStore: Send + Sync {
    /// Replaces the user's groups with `groups` (beyond Auth.js). The user must exist; the
    /// groups go when the user is deleted.
    async fn set_user_groups(&self, user_id: &str, groups: &[String]) -> Result<(), AdapterError>;
    /// The user's groups as last set, in the order given; none when never set (beyond
    /// Auth.js).
    async fn get_user_groups(&self, user_id: &str) -> Result<Vec<String>, AdapterError>;
}
