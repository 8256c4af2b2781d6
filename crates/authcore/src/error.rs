//! Errors: the Auth.js error types of request handling ([`AuthError`]) and configuration
//! errors found when an [`AuthConfig`](crate::AuthConfig) is built ([`ConfigError`]).
//!
//! Each [`AuthError`] variant maps, in one `match`, to the Auth.js error type name, its kind
//! (sign-in page or error page) and whether the type may be shown to the client (Auth.js
//! `isClientError` in `errors.ts`).

pub use crate::box_error::BoxError;

/// Which page an error redirects to (Auth.js `kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// `pages.signIn` / `{basePath}/signin`.
    SignIn,
    /// `pages.error` / `{basePath}/error`.
    Error,
}

/// An error raised while handling a request, named after its Auth.js type.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// The `signIn` callback returned false or failed.
    #[error("AccessDenied")]
    AccessDenied {
        /// Why, if the callback said so.
        #[source]
        source: Option<BoxError>,
    },
    /// `authorize` returned no user (or a `CredentialsSignin` with a custom code).
    #[error("Read more at docs/manual/troubleshooting.md#credentialssignin")]
    CredentialsSignin {
        /// Auth.js `code` (`credentials` by default).
        code: String,
    },
    /// The CSRF token was missing or did not match.
    #[error("CSRF token was missing during an action {action}")]
    MissingCsrf {
        /// The action name.
        action: &'static str,
    },
    /// A route or method that the action does not support.
    #[error("{message}")]
    UnknownAction {
        /// What was not supported.
        message: String,
    },
    /// The provider does not support this route.
    #[error("{message}")]
    InvalidProvider {
        /// What was wrong.
        message: String,
    },
    /// No provider has the requested id (a plain `Error` upstream).
    #[error("Provider with id \"{id}\" not found. Available providers: [{available}].")]
    ProviderNotFound {
        /// The id in the URL.
        id: String,
        /// The configured ids joined by `, `.
        available: String,
    },
    /// A non-Auth.js error inside the callback route.
    #[error("Callback route error (provider {provider})")]
    CallbackRouteError {
        /// Provider id.
        provider: String,
        /// What failed.
        #[source]
        source: BoxError,
    },
    /// A `callbackUrl` query parameter or cookie that is not an http(s) URL.
    #[error("Invalid callback URL. Received: {received}")]
    InvalidCallbackUrl {
        /// The rejected value.
        received: String,
    },
    /// `trust_host` is off and no fixed URL is configured.
    #[error("Host must be trusted. URL was: {url}")]
    UntrustedHost {
        /// The request URL without its query.
        url: String,
    },
    /// A state / PKCE / nonce / challenge check failed.
    #[error("{message}")]
    InvalidCheck {
        /// What failed.
        message: String,
    },
    /// Session token could not be read (logged only).
    #[error("JWT session error")]
    JwtSessionError {
        /// What failed.
        #[source]
        source: BoxError,
    },
    /// The database session could not be looked up (logged only; Auth.js
    /// `SessionTokenError`).
    #[error("Session token error")]
    SessionTokenError {
        /// What failed.
        #[source]
        source: BoxError,
    },
    /// An account's access token could not be refreshed (logged only; the session stays
    /// valid with `"error": "RefreshTokenError"`, as in Auth.js's refresh-token recipe).
    #[error("Refresh token error: provider {provider}: {reason}")]
    RefreshTokenError {
        /// The account's provider.
        provider: String,
        /// Why (the provider's error or the failure to reach it; never a token).
        reason: String,
    },
    /// Sign-out side effects failed (logged only).
    #[error("Sign-out error")]
    SignOutError {
        /// What failed.
        #[source]
        source: BoxError,
    },
    /// An event handler failed (logged only).
    #[error("Event handler {event} failed")]
    EventError {
        /// Event name.
        event: &'static str,
        /// What failed.
        #[source]
        source: BoxError,
    },
    /// A callback returned an error that is not an Auth.js error.
    #[error("Callback {callback} failed")]
    CallbackError {
        /// Callback name.
        callback: &'static str,
        /// What failed.
        #[source]
        source: BoxError,
    },
    /// The provider answered the authorization request with an `error` (or the token
    /// endpoint refused the code).
    #[error("OAuth Provider returned an error: {error}")]
    OAuthCallbackError {
        /// Provider id.
        provider: String,
        /// The OAuth `error` code.
        error: String,
    },
    /// Too many attempts: a [rate limit](crate::ratelimit) is exceeded (authcore's own; not
    /// an Auth.js type). The message names the limit, never the identifier or address.
    #[error("RateLimited: too many attempts ({limit}); retry in {} s", retry_after.as_secs().max(1))]
    RateLimited {
        /// Which limit (`credentials_per_identifier`, `requests_per_client` …).
        limit: &'static str,
        /// When the client may try again.
        retry_after: std::time::Duration,
    },
    /// The second step of a sign-in was refused (authcore's own; not an Auth.js type): a
    /// wrong or reused code, or a second-step state that is missing, expired, used, or
    /// another browser's ([`crate::two_factor`]).
    #[error("TwoFactorError: {message}")]
    TwoFactor {
        /// What was refused (no code, secret or user data).
        message: &'static str,
    },
    /// A user without a second factor may not enrol one at this sign-in
    /// ([`FirstEnrolment`](crate::two_factor::FirstEnrolment)): sign in with the email link,
    /// or an operator enrols it (authcore's own; not an Auth.js type).
    #[error("TwoFactorEnrolment: {message}")]
    TwoFactorEnrolment {
        /// What the configuration asks for instead.
        message: &'static str,
    },
    /// A sensitive change from a session whose sign-in is not recent enough, or did not
    /// prove the user's second factor (authcore's own; not an Auth.js type): sign in again
    /// and come back ([`crate::account::SensitiveOperation`]).
    #[error("ReauthenticationRequired: {operation} needs a recent sign-in")]
    ReauthenticationRequired {
        /// The operation refused ([`crate::account::SensitiveOperation::name`]).
        operation: &'static str,
    },
    /// The provider's `profile()` mapping failed (logged only).
    #[error("Failed to map the profile of provider {provider}")]
    OAuthProfileParseError {
        /// Provider id.
        provider: String,
        /// What failed.
        #[source]
        source: BoxError,
    },
    /// A magic link that is unknown, used or expired.
    #[error(
        "Verification token is invalid or expired (has invite: {has_invite}, expired: {expired})"
    )]
    Verification {
        /// A stored token matched.
        has_invite: bool,
        /// It had expired.
        expired: bool,
    },
    /// An adapter call failed.
    #[error("Adapter error")]
    AdapterError {
        /// What failed.
        #[source]
        source: crate::adapter::AdapterError,
    },
    /// Account linking refused: the OAuth account or the email belongs to another user.
    #[error("{message}")]
    OAuthAccountNotLinked {
        /// Why.
        message: String,
    },
    /// WebAuthn linking refused: the credential or the email belongs to another user.
    #[error("{message}")]
    AccountNotLinked {
        /// Why.
        message: String,
    },
    /// A WebAuthn registration or authentication response did not verify (wrong origin,
    /// RP id, challenge, signature, user verification, counter …).
    #[error("WebAuthn verification failed: {reason}")]
    WebAuthnVerificationError {
        /// What failed (from the verifier; never a secret).
        reason: String,
    },
    /// The request body was not valid for the action.
    #[error("{message}")]
    InvalidRequest {
        /// What was wrong.
        message: String,
    },
    /// The request's body or `Cookie` headers exceed the configured limit (the handler
    /// answers 413 or 431; reported as Auth.js's `InvalidRequest` type).
    #[error("{message}")]
    RequestTooLarge {
        /// Which limit.
        message: String,
        /// `413` for the body, `431` for the `Cookie` headers.
        status: http::StatusCode,
    },
}

impl From<crate::adapter::AdapterError> for AuthError {
    fn from(source: crate::adapter::AdapterError) -> Self {
        AuthError::AdapterError { source }
    }
}

impl AuthError {
    /// The Auth.js error type name (`error=` query value for client-safe errors).
    pub fn error_type(&self) -> &'static str {
        match self {
            AuthError::AccessDenied { .. } => "AccessDenied",
            AuthError::CredentialsSignin { .. } => "CredentialsSignin",
            AuthError::MissingCsrf { .. } => "MissingCSRF",
            AuthError::UnknownAction { .. } => "UnknownAction",
            AuthError::InvalidProvider { .. } => "InvalidProvider",
            AuthError::ProviderNotFound { .. } => "Error",
            AuthError::CallbackRouteError { .. } => "CallbackRouteError",
            AuthError::InvalidCallbackUrl { .. } => "InvalidCallbackUrl",
            AuthError::UntrustedHost { .. } => "UntrustedHost",
            AuthError::InvalidCheck { .. } => "InvalidCheck",
            AuthError::JwtSessionError { .. } => "JWTSessionError",
            AuthError::SessionTokenError { .. } => "SessionTokenError",
            AuthError::RefreshTokenError { .. } => "RefreshTokenError",
            AuthError::SignOutError { .. } => "SignOutError",
            AuthError::EventError { .. } => "EventError",
            AuthError::CallbackError { .. } => "CallbackRouteError",
            AuthError::InvalidRequest { .. } | AuthError::RequestTooLarge { .. } => {
                "InvalidRequest"
            }
            AuthError::OAuthCallbackError { .. } => "OAuthCallbackError",
            AuthError::AdapterError { .. } => "AdapterError",
            AuthError::Verification { .. } => "Verification",
            AuthError::OAuthAccountNotLinked { .. } => "OAuthAccountNotLinked",
            AuthError::AccountNotLinked { .. } => "AccountNotLinked",
            AuthError::WebAuthnVerificationError { .. } => "WebAuthnVerificationError",
            AuthError::OAuthProfileParseError { .. } => "OAuthProfileParseError",
            AuthError::RateLimited { .. } => "RateLimited",
            AuthError::TwoFactor { .. } => "TwoFactorError",
            AuthError::ReauthenticationRequired { .. } => "ReauthenticationRequired",
            AuthError::TwoFactorEnrolment { .. } => "TwoFactorEnrolment",
        }
    }

    /// Sign-in page or error page.
    pub fn kind(&self) -> ErrorKind {
        match self {
            AuthError::CredentialsSignin { .. }
            | AuthError::MissingCsrf { .. }
            | AuthError::OAuthCallbackError { .. }
            | AuthError::OAuthAccountNotLinked { .. }
            | AuthError::AccountNotLinked { .. }
            | AuthError::RateLimited { .. }
            | AuthError::TwoFactor { .. }
            | AuthError::ReauthenticationRequired { .. }
            | AuthError::TwoFactorEnrolment { .. } => ErrorKind::SignIn,
            _ => ErrorKind::Error,
        }
    }

    /// Whether the type may be shown to the client; otherwise it is reported as `Configuration`.
    pub fn is_client_safe(&self) -> bool {
        matches!(
            self,
            AuthError::AccessDenied { .. }
                | AuthError::CredentialsSignin { .. }
                | AuthError::MissingCsrf { .. }
                | AuthError::OAuthCallbackError { .. }
                | AuthError::OAuthAccountNotLinked { .. }
                | AuthError::AccountNotLinked { .. }
                | AuthError::WebAuthnVerificationError { .. }
                | AuthError::Verification { .. }
                | AuthError::RateLimited { .. }
                | AuthError::TwoFactor { .. }
                | AuthError::ReauthenticationRequired { .. }
                | AuthError::TwoFactorEnrolment { .. }
        )
    }

    /// The `error=` value sent to the client.
    pub fn client_type(&self) -> &'static str {
        if self.is_client_safe() {
            self.error_type()
        } else {
            "Configuration"
        }
    }

    /// `code` for `CredentialsSignin`.
    pub fn code(&self) -> Option<&str> {
        match self {
            AuthError::CredentialsSignin { code } => Some(code),
            _ => None,
        }
    }

    pub(crate) fn unknown_action(message: impl Into<String>) -> Self {
        AuthError::UnknownAction {
            message: message.into(),
        }
    }

    pub(crate) fn invalid_provider(message: impl Into<String>) -> Self {
        AuthError::InvalidProvider {
            message: message.into(),
        }
    }
}

/// Why a catalogue preset could not be built from configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// No preset has this id.
    #[error("unknown provider id {id:?}; the catalogue has: {known}")]
    UnknownId {
        /// The id asked for.
        id: String,
        /// The known ids, comma-separated.
        known: String,
    },
    /// A client id or secret is missing.
    #[error("provider {id:?}: set both {prefix}_ID and {prefix}_SECRET")]
    MissingClient {
        /// The provider id.
        id: &'static str,
        /// `AUTH_<ID>`.
        prefix: String,
    },
    /// A setting the preset needs (issuer, account id …) is not set.
    #[error("provider {id:?} needs {what}: set {var}")]
    MissingSetting {
        /// The provider id.
        id: &'static str,
        /// The variable (`AUTH_KEYCLOAK_ISSUER`).
        var: String,
        /// What it is (`its issuer (the realm URL, …)`).
        what: &'static str,
    },
    /// A setting has a value the preset cannot use.
    #[error("provider {id:?}: {var} {reason}")]
    InvalidSetting {
        /// The provider id.
        id: &'static str,
        /// The variable.
        var: String,
        /// What is wrong (never the value itself).
        reason: &'static str,
    },
}

/// A configuration mistake found when building an [`AuthConfig`](crate::AuthConfig).
///
/// The message says what to fix. `Debug` prints the same message, so that `build()?` in a
/// `main` returning `Result<_, Box<dyn Error>>`, `.unwrap()` and `.expect(..)` show it too.
#[non_exhaustive]
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// No secret was configured.
    #[error(
        "MissingSecret: please define a `secret` (AuthConfig::builder().secret(..) or the AUTH_SECRET environment variable); generate one with `openssl rand -base64 33`"
    )]
    MissingSecret,
    /// A secret was empty.
    #[error(
        "MissingSecret: secret number {index} ({origin}) is empty; set a random one of at least 32 characters: make one with `openssl rand -base64 33`"
    )]
    EmptySecret {
        /// Position in the secret list.
        index: usize,
        /// Where it came from: its environment variable (`AUTH_SECRET`, `AUTH_SECRET_1` …)
        /// or the builder method (`AuthConfig::builder().secret(..)`, `.secrets(..)`).
        origin: &'static str,
    },
    /// A secret is shorter than [`MIN_SECRET_CHARS`](crate::config::MIN_SECRET_CHARS).
    #[error(
        "secret number {index} ({origin}) has {chars} characters; at least 32 are needed: make one with `openssl rand -base64 33`. To keep a shorter secret that an existing app shares, set DangerousOptions::short_secret"
    )]
    ShortSecret {
        /// Position in the secret list.
        index: usize,
        /// Its length in characters.
        chars: usize,
        /// Where it came from, as for [`ConfigError::EmptySecret`].
        origin: &'static str,
    },
    /// No provider was configured that signs users in (an email provider with
    /// [`magic_links(false)`](crate::providers::email::EmailProvider::magic_links) only
    /// mails).
    #[error(
        "no providers configured: add at least one provider with AuthConfig::builder().provider(..) (an email provider with .magic_links(false) only mails, it signs no one in), or call .sessions_only() for an API that only reads the sessions another app (Next.js, Auth.js) issues"
    )]
    NoProviders,
    /// `sessions_only()` with providers: a configuration either signs users in or only reads
    /// sessions.
    #[error(
        "sessions_only() reads sessions another app issues and takes no providers: remove the providers or the sessions_only() call"
    )]
    ProvidersWithSessionsOnly,
    /// A credentials provider has no `authorize` function.
    #[error(
        "MissingAuthorize: the credentials provider \"{provider}\" needs an `authorize` function (CredentialsProvider::authorize)"
    )]
    MissingAuthorize {
        /// Provider id.
        provider: String,
    },
    /// Credentials-only config with the database strategy.
    #[error(
        "UnsupportedStrategy: credentials sign-ins write a JWT, which the database strategy does not read; use session_strategy(SessionStrategy::Jwt), or credentials_database_sessions(true) with an `authorize` that returns the adapter's user id"
    )]
    UnsupportedStrategy,
    /// Database strategy without an adapter.
    #[error("MissingAdapter: database session requires an adapter")]
    MissingAdapter,
    /// A WebAuthn provider without an adapter to keep authenticators in.
    #[error("MissingAdapter: WebAuthn requires an adapter")]
    WebAuthnMissingAdapter,
    /// Second factors without an adapter to keep them in.
    #[error(
        "MissingAdapter: second factors (two_factor) are stored by an adapter; set one with adapter(…)"
    )]
    TwoFactorMissingAdapter,
    /// A WebAuthn provider offers a credential algorithm that cannot be verified, or none.
    #[error(
        "WebAuthn provider \"{provider}\": unsupported credential algorithm list {algorithms:?}; use COSE ids among -8 (EdDSA), -7 (ES256), -35 (ES384), -257 (RS256)"
    )]
    UnsupportedWebAuthnAlgorithms {
        /// Provider id.
        provider: String,
        /// The configured list.
        algorithms: Vec<i64>,
    },
    /// More than one WebAuthn provider enables conditional UI.
    #[error(
        "DuplicateConditionalUI: only one WebAuthn provider may enable conditional UI (found \"{first}\" and \"{second}\")"
    )]
    DuplicateConditionalUI {
        /// The first provider with it.
        first: String,
        /// The second one.
        second: String,
    },
    /// The conditional-UI provider has no form field with `webauthn` in its autocomplete.
    #[error(
        "MissingWebAuthnAutocomplete: provider \"{provider}\" enables conditional UI, so one of its form fields needs an autocomplete containing \"webauthn\" (e.g. \"username webauthn\")"
    )]
    MissingWebAuthnAutocomplete {
        /// Provider id.
        provider: String,
    },
    /// The adapter lacks methods the configuration needs.
    #[error("MissingAdapterMethods: Required adapter methods were missing: {methods}")]
    MissingAdapterMethods {
        /// Comma-separated Auth.js method names.
        methods: String,
    },
    /// Two providers share an id.
    #[error("duplicate provider id \"{id}\": every provider needs a unique id")]
    DuplicateProviderId {
        /// The repeated id.
        id: String,
    },
    /// A provider id that cannot appear in a URL path segment.
    #[error(
        "invalid provider id {id:?}: use a non-empty id without '/', '?', '#', '%' or whitespace"
    )]
    InvalidProviderId {
        /// The offending id.
        id: String,
    },
    /// The base path is malformed.
    #[error(
        "invalid base path {path:?}: it must start with '/' and must not end with '/' (e.g. \"/auth\")"
    )]
    InvalidBasePath {
        /// The offending path.
        path: String,
    },
    /// The fixed URL (`AUTH_URL`) is not an absolute http(s) URL.
    #[error("invalid url {url:?}: expected an absolute http(s) URL such as https://example.com")]
    InvalidUrl {
        /// The offending value.
        url: String,
    },
    /// An [`allowed_hosts`](crate::config::AuthConfigBuilder::allowed_hosts) pattern is
    /// not a host name, IP address or `*.` and a domain.
    #[error("invalid allowed host: {message}")]
    InvalidAllowedHost {
        /// What is wrong, naming the pattern.
        message: String,
    },
    /// A [`trusted_proxies`](crate::config::AuthConfigBuilder::trusted_proxies) entry is
    /// neither an IP address nor a CIDR range.
    #[error(
        "invalid trusted proxy {entry:?}: use an IP address or a CIDR range such as 10.0.0.0/8"
    )]
    InvalidTrustedProxy {
        /// The entry.
        entry: String,
    },
    /// A cookie name is not a valid RFC 6265 token.
    #[error("invalid cookie name {name:?}: cookie names must be RFC 6265 tokens")]
    InvalidCookieName {
        /// The offending name.
        name: String,
    },
    /// A custom page path is not a relative or absolute URL.
    #[error(
        "invalid page path {path:?} for pages.{page}: use a path starting with '/' or an absolute URL"
    )]
    InvalidPagePath {
        /// Which page.
        page: &'static str,
        /// The offending value.
        path: String,
    },
    /// An OAuth provider has neither an issuer nor an endpoint.
    #[error(
        "InvalidEndpoints: Provider \"{provider}\" is missing both `issuer` and `{key}` endpoint config. At least one of them is required"
    )]
    InvalidEndpoints {
        /// Provider id.
        provider: String,
        /// `authorization`, `token` or `userinfo`.
        key: &'static str,
    },
    /// An email provider without a sender.
    #[error(
        "email provider \"{provider}\" has no sender: call .send_verification_request(..), or use authcore_smtp::email_provider or a preset of providers::email::services"
    )]
    MissingEmailSender {
        /// Provider id.
        provider: String,
    },
    /// Password accounts that confirm their users' addresses, without an email provider to
    /// mail the links.
    #[error(
        "password accounts confirm addresses by mail: add an email provider (authcore_smtp::email_provider or a preset of providers::email::services), or call .require_verified_email(false) on the PasswordAccounts"
    )]
    PasswordAccountsWithoutMail,
    /// Organizations with roles that are not valid (the message names the role or
    /// permission and what is wrong).
    #[error("invalid organization roles: {0}")]
    InvalidRoles(String),
    /// Sign-up by invitation without an adapter that stores invitations.
    #[error(
        "SignUpPolicy::Invite needs an adapter with organizations (OrganizationStore): the SQL, Redis and memory adapters have it"
    )]
    InviteWithoutInvitations,
    /// Administrators with JWT sessions but no revocation list: a ban could not end them.
    #[error(
        "administrators (admins) with JWT sessions need the revocation list, so that a ban ends the user's sessions: call jwt_revocation(true), or use database sessions"
    )]
    AdminsWithoutRevocation,
    /// An administrators' organization while organizations are off.
    #[error(
        "the administrators' organization (Admins::organization) needs organizations: call organizations(..) too"
    )]
    AdminOrganizationWithoutOrganizations,
    /// An HTTP email service preset without its API key.
    #[error(
        "email provider \"{provider}\" needs an API key: call .api_key(..) or set AUTH_{}_KEY",
        provider.to_ascii_uppercase().replace('-', "_")
    )]
    MissingApiKey {
        /// Provider id.
        provider: String,
    },
    /// A `private_key_jwt` key that could not be read.
    #[error(
        "provider \"{provider}\": the client private key is not an RSA or EC P-256 private key in PEM form"
    )]
    InvalidClientKey {
        /// Provider id.
        provider: String,
    },
    /// `private_key_jwt` without a key.
    #[error(
        "provider \"{provider}\" uses private_key_jwt but has no key: call .client_private_key_pem(..)"
    )]
    MissingClientKey {
        /// Provider id.
        provider: String,
    },
    /// An OAuth provider has no client id.
    #[error("provider \"{provider}\" has no client id: set it with .client_id(..) or AUTH_<ID>_ID")]
    MissingClientId {
        /// Provider id.
        provider: String,
    },
    /// An OAuth provider has no HTTP client: authcore is built without its `reqwest`
    /// feature and the provider was given none.
    #[error(
        "provider \"{provider}\" has no HTTP client: enable authcore's `reqwest` feature or call .http_client(..)"
    )]
    NoHttpClient {
        /// Provider id.
        provider: String,
    },
    /// Session ages out of range.
    #[error("invalid session options: {0}")]
    InvalidSessionOptions(&'static str),
    /// A catalogue preset could not be built from its settings (`AUTH_<ID>_*`).
    #[cfg(feature = "oauth")]
    #[error("{0}")]
    Catalog(#[from] CatalogError),
}

impl std::fmt::Debug for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_safety_and_kinds_follow_authjs() {
        let e = AuthError::CredentialsSignin {
            code: "custom".into(),
        };
        assert_eq!(e.client_type(), "CredentialsSignin");
        assert_eq!(e.kind(), ErrorKind::SignIn);
        assert_eq!(e.code(), Some("custom"));
        let e = AuthError::MissingCsrf { action: "signin" };
        assert_eq!(e.client_type(), "MissingCSRF");
        assert_eq!(e.kind(), ErrorKind::SignIn);
        assert_eq!(
            e.to_string(),
            "CSRF token was missing during an action signin"
        );
        let e = AuthError::AccessDenied { source: None };
        assert_eq!(
            (e.client_type(), e.kind()),
            ("AccessDenied", ErrorKind::Error)
        );
        let e = AuthError::unknown_action("Cannot handle action: providers");
        assert_eq!(e.client_type(), "Configuration");
        let e = AuthError::ProviderNotFound {
            id: "x".into(),
            available: "a, b".into(),
        };
        assert_eq!(
            e.to_string(),
            "Provider with id \"x\" not found. Available providers: [a, b]."
        );
        assert_eq!(e.client_type(), "Configuration");
    }
}
