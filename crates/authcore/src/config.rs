//! [`AuthConfig`] and its builder. Configuration is validated once, in
//! [`AuthConfigBuilder::build`]; everything the hot path needs (JWE keys, cookie names,
//! the CSRF secret string) is prepared there too.

use std::sync::Arc;
use std::time::Duration;

use crate::callbacks::{CallbackHooks, Callbacks, EventHooks, Events};
use crate::cookies::{CookieSet, CookiesOverrides, ResolvedCookie, is_valid_cookie_name};
use crate::env::Env;
use crate::error::ConfigError;
use crate::jwt::JwtCodec;
use crate::logger::{Logger, TracingLogger, WarningCode};
use crate::providers::Provider;
use crate::types::{PagesOptions, ProviderType, Theme};

/// Where sessions live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SessionStrategy {
    /// An encrypted JWT in the session cookie (default without an adapter).
    #[default]
    Jwt,
    /// A database row whose token is in the cookie (needs an adapter).
    Database,
}

/// Default request body limit: 64 KiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 64 * 1024;
/// Default limit on the total size of `Cookie` headers: 64 KiB.
pub const DEFAULT_MAX_COOKIE_HEADER_BYTES: usize = 64 * 1024;

/// Options that weaken security. Each is off by default; keep them out of production.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DangerousOptions {
    /// Disable the CSRF double-submit check (`skipCSRFCheck`); `GET /csrf` answers 404.
    pub skip_csrf_check: bool,
    /// Let a passkey create the account of an email address nobody has proven, even where
    /// an email provider (or an OAuth provider linking by email) can later sign in as that
    /// address — Auth.js's behaviour. Whoever registers first then holds a passkey on the
    /// account the address's owner signs in to later: an account taken over in advance.
    /// Off, passkey sign-up there needs the address proven first (sign in by email, then
    /// add the passkey); see `docs/security.md`.
    pub passkey_sign_up_without_email_proof: bool,
    /// Accept a secret shorter than [`MIN_SECRET_CHARS`] characters — one an existing
    /// Auth.js app already uses, for sharing its sessions. Such a secret can be guessed far
    /// sooner than a random one; replace it through rotation (`secrets`) when you can.
    pub short_secret: bool,
}

/// The fewest characters `build()` accepts in a secret (without
/// [`DangerousOptions::short_secret`]): what `openssl rand -base64 33` makes is 44.
pub const MIN_SECRET_CHARS: usize = 32;

/// A validated configuration, cheap to clone.
#[derive(Clone)]
pub struct AuthConfig {
    pub(crate) inner: Arc<ConfigInner>,
}

impl std::fmt::Debug for AuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = &self.inner;
        f.debug_struct("AuthConfig")
            .field("base_path", &c.base_path)
            .field("providers", &c.providers)
            .field("trust_host", &c.trust_host)
            .field("url", &c.url.as_ref().map(|u| u.as_str()))
            .field("session_strategy", &c.session_strategy)
            .field("secret", &"[redacted]")
            .finish_non_exhaustive()
    }
}

/// The cookies of one scheme, prepared for the hot path.
#[derive(Debug)]
pub(crate) struct ResolvedCookies {
    pub session_token: ResolvedCookie,
    pub callback_url: ResolvedCookie,
    pub csrf_token: ResolvedCookie,
    pub pkce_code_verifier: ResolvedCookie,
    pub state: ResolvedCookie,
    pub nonce: ResolvedCookie,
    pub webauthn_challenge: ResolvedCookie,
    /// The second-step state of a sign-in ([`crate::two_factor`]): the session cookie's
    /// options under the name `authjs.two-factor` (`__Secure-` when secure).
    pub two_factor: ResolvedCookie,
}

impl ResolvedCookies {
    fn new(set: &CookieSet) -> Self {
        let session = &set.session_token;
        let two_factor = crate::cookies::CookieSpec {
            name: format!(
                "{}authjs.two-factor",
                if session.options.secure {
                    "__Secure-"
                } else {
                    ""
                }
            ),
            options: session.options.clone(),
        };
        ResolvedCookies {
            two_factor: ResolvedCookie::new(&two_factor),
            session_token: ResolvedCookie::new(&set.session_token),
            callback_url: ResolvedCookie::new(&set.callback_url),
            csrf_token: ResolvedCookie::new(&set.csrf_token),
            pkce_code_verifier: ResolvedCookie::new(&set.pkce_code_verifier),
            state: ResolvedCookie::new(&set.state),
            webauthn_challenge: ResolvedCookie::new(&set.webauthn_challenge),
            nonce: ResolvedCookie::new(&set.nonce),
        }
    }
}

pub(crate) struct ConfigInner {
    pub providers: Vec<Provider>,
    pub base_path: String,
    pub codec: JwtCodec,
    /// A host's session-token format instead of `codec`'s JWE (Auth.js `jwt.encode/decode`).
    pub session_codec: Option<Arc<dyn crate::jwt::SessionTokenCodec>>,
    /// The secret coerced to a JavaScript string (`"a,b"` for a list), for CSRF hashes.
    pub secret_string: String,
    pub trust_host: bool,
    /// Request hosts to answer (`None`: as `trust_host` says).
    pub allowed_hosts: Option<crate::hosts::HostList>,
    /// Brute-force limits, and where their counts live (`None` when all are off).
    pub rate_limits: crate::ratelimit::RateLimits,
    pub rate_limit_store: Option<Arc<dyn crate::ratelimit::RateLimitStore>>,
    /// Where single-use values (OAuth authorization codes) are marked as used: the one
    /// configured, else the rate-limit store when there is one (shared by instances), else
    /// one of this process.
    pub single_use_store: Arc<dyn crate::ratelimit::RateLimitStore>,
    /// Peers whose `X-Forwarded-For` names the client.
    pub trusted_proxies: Vec<ipnet::IpNet>,
    pub url: Option<url::Url>,
    pub session_strategy: SessionStrategy,
    pub session_max_age: u64,
    pub jwt_max_age: u64,
    pub pages: PagesOptions,
    pub theme: Theme,
    pub callbacks: CallbackHooks,
    pub events: EventHooks,
    pub logger: Arc<dyn Logger>,
    pub debug: bool,
    pub use_secure_cookies: Option<bool>,
    pub cookies_secure: ResolvedCookies,
    pub cookies_plain: ResolvedCookies,
    pub cookie_sets: [CookieSet; 2],
    pub dangerous: DangerousOptions,
    /// `redirectProxyUrl`: a stable deployment that relays OAuth callbacks.
    pub redirect_proxy_url: Option<String>,
    pub adapter: Option<Arc<dyn crate::adapter::Adapter>>,
    /// Who may become a user by signing in.
    pub sign_up: crate::sign_up::SignUpPolicy,
    /// The adapter's password accounts, with their self-service routes.
    #[cfg(feature = "passwords")]
    pub password_accounts: Option<crate::passwords::PasswordAccounts>,
    /// Organizations, with their roles resolved.
    pub organizations: Option<OrganizationsConfig>,
    /// Who the administrators are, when the admin functions are on.
    pub admins: Option<crate::admin::Admins>,
    /// The audit log (off unless configured).
    pub auditor: crate::audit::Auditor,
    pub credentials_database_sessions: bool,
    pub hash_session_tokens: bool,
    pub session_update_age: u64,
    pub max_body_bytes: usize,
    pub max_cookie_header_bytes: usize,
    /// NextAuth.js v4 compatibility (`next_auth_v4()`): next-auth 4's client asks for
    /// `{url}` JSON with a `json=true` body field (v5 sends `X-Auth-Return-Redirect`), and
    /// its session route answers `{}` without a session (v5: `null`).
    pub next_auth_v4: bool,
    /// Some OAuth provider refreshes access tokens (`refresh_access_token`).
    pub refreshes_tokens: bool,
    /// JWT sessions are checked against the adapter's revocation list.
    pub jwt_revocation: bool,
    /// Second factors, when turned on.
    #[cfg(feature = "two-factor")]
    pub two_factor: Option<crate::two_factor::TwoFactorOptions>,
    /// How recent a sign-in must be for a sensitive change
    /// ([`crate::account::SensitiveOperation`]).
    pub recent_sign_in: Duration,
    /// Per-origin values worked out once (request URL base, `/providers` body).
    pub sites: crate::site::Sites,
}

impl ConfigInner {
    /// The single-use values and marks of this configuration.
    pub(crate) fn single_use(&self) -> crate::ratelimit::SingleUseStore<'_> {
        crate::ratelimit::SingleUseStore::new(&*self.single_use_store)
    }

    /// The issuer authenticator apps show for TOTP secrets: the configured one, else the
    /// host of `AUTH_URL`, else `authcore`.
    #[cfg(feature = "two-factor")]
    pub(crate) fn two_factor_issuer(&self) -> String {
        self.two_factor
            .as_ref()
            .and_then(|t| t.issuer.clone())
            .or_else(|| {
                self.url
                    .as_ref()
                    .and_then(|u| u.host_str().map(str::to_owned))
            })
            .unwrap_or_else(|| "authcore".to_owned())
    }

    /// The form in which a database session token from a cookie is stored and looked up:
    /// itself, or with [`hash_session_tokens`](AuthConfigBuilder::hash_session_tokens) its
    /// SHA-256 in hex, so that a reader of the database holds no usable cookie.
    pub(crate) fn stored_session_token<'t>(&self, token: &'t str) -> std::borrow::Cow<'t, str> {
        if self.hash_session_tokens {
            crate::crypto::sha256_hex(token.as_bytes()).into()
        } else {
            token.into()
        }
    }

    /// Encodes a session token: the host's [`SessionTokenCodec`](crate::jwt::SessionTokenCodec)
    /// when set, else the JWE.
    pub(crate) fn encode_session(
        &self,
        claims: &crate::jwt::JwtClaims,
        salt: &str,
    ) -> Result<String, crate::error::BoxError> {
        match &self.session_codec {
            Some(codec) => codec.encode(claims, salt, self.jwt_max_age),
            None => Ok(self.codec.encode(claims, salt, self.jwt_max_age)?),
        }
    }

    /// Decodes a session token (see [`ConfigInner::encode_session`]).
    pub(crate) fn decode_session(
        &self,
        token: &str,
        salt: &str,
    ) -> Result<Option<crate::jwt::JwtClaims>, crate::error::BoxError> {
        match &self.session_codec {
            Some(codec) => codec.decode(token, salt),
            None => Ok(self.codec.decode(token, salt)?),
        }
    }

    /// Cookies for a request over HTTPS (`secure`) or not.
    pub(crate) fn cookies(&self, request_is_https: bool) -> &ResolvedCookies {
        if self.use_secure_cookies.unwrap_or(request_is_https) {
            &self.cookies_secure
        } else {
            &self.cookies_plain
        }
    }

    /// The providers that are ways to sign in: all but the email providers that only mail
    /// ([`EmailProvider::magic_links`](crate::providers::email::EmailProvider::magic_links)).
    pub(crate) fn sign_in_providers(&self) -> impl Iterator<Item = &Provider> {
        self.providers.iter().filter(|p| p.signs_in())
    }

    /// The sign-in provider `id` (see [`ConfigInner::sign_in_providers`]).
    pub(crate) fn provider(&self, id: &str) -> Option<&Provider> {
        self.sign_in_providers().find(|p| p.id() == id)
    }

    /// `<origin><basePath><suffix>` on `origin` (a request's), else on the configured
    /// `url`'s origin: where mailed links point.
    pub(crate) fn url_on(&self, origin: Option<&str>, suffix: &str) -> Option<String> {
        let configured;
        let origin = match origin {
            Some(o) => o,
            None => {
                configured = crate::site::origin_of(self.url.as_ref()?);
                &configured
            }
        };
        Some(format!(
            "{origin}{}{suffix}",
            self.base_path.trim_end_matches('/')
        ))
    }

    /// The email provider that mails password accounts' links: the first with a sender.
    #[cfg(feature = "email")]
    pub(crate) fn mailer(&self) -> Option<&crate::providers::email::EmailProvider> {
        self.providers.iter().find_map(|p| match p {
            Provider::Email(e) if e.send.is_some() => Some(&**e),
            _ => None,
        })
    }
}

impl AuthConfig {
    /// Starts a builder.
    pub fn builder() -> AuthConfigBuilder {
        AuthConfigBuilder::default()
    }

    /// The base path (`/auth` by default).
    pub fn base_path(&self) -> &str {
        &self.inner.base_path
    }

    /// The configured providers.
    pub fn providers(&self) -> &[Provider] {
        &self.inner.providers
    }

    /// The single-use values and marks of this configuration: the store authcore's own
    /// checks use, for a host's (an OpenID Provider's codes, refresh tokens and revocations).
    pub fn single_use(&self) -> crate::ratelimit::SingleUseStore<'_> {
        self.inner.single_use()
    }

    /// The session strategy.
    pub fn session_strategy(&self) -> SessionStrategy {
        self.inner.session_strategy
    }

    /// How long an idle session lives (`session.maxAge`, 30 days by default).
    pub fn session_max_age(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.inner.session_max_age)
    }

    /// How often a session is extended (`session.updateAge`, 24 hours by default).
    pub fn session_update_age(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.inner.session_update_age)
    }

    /// The JWT encoder/decoder bound to the configured secrets.
    pub fn jwt(&self) -> &JwtCodec {
        &self.inner.codec
    }

    /// All cookie names and options for HTTPS (`true`) or plain HTTP (`false`) requests.
    pub fn cookies(&self, secure: bool) -> &CookieSet {
        let secure = self.inner.use_secure_cookies.unwrap_or(secure);
        &self.inner.cookie_sets[usize::from(secure)]
    }

    /// Custom pages.
    pub fn pages(&self) -> &PagesOptions {
        &self.inner.pages
    }

    /// The organizations settings, when organizations are on
    /// ([`AuthConfigBuilder::organizations`]).
    pub fn organizations(&self) -> Option<&crate::organizations::Organizations> {
        self.inner.organizations.as_ref().map(|o| &o.settings)
    }

    /// The organizations' roles, checked, when organizations are on
    /// ([`AuthConfigBuilder::organizations`]); `None` when they are off.
    pub fn organization_roles(&self) -> Option<&crate::organizations::Roles> {
        self.inner.organizations.as_ref().map(|o| &o.roles)
    }
}

/// Builds an [`AuthConfig`].
///
/// ```
/// use authcore::{AuthConfig, providers::CredentialsProvider};
/// let config = AuthConfig::builder()
///     .secret("a long random secret-xxxxxxxxxxx")
///     .trust_host(true)
///     .provider(CredentialsProvider::new().authorize(|_, _| async { Ok(None) }))
///     .build()
///     .unwrap();
/// assert_eq!(config.base_path(), "/auth");
///
/// let err = AuthConfig::builder().trust_host(true).build().unwrap_err();
/// assert!(err.to_string().contains("secret"));
/// ```
pub struct AuthConfigBuilder {
    providers: Vec<Provider>,
    secrets: Vec<String>,
    base_path: Option<String>,
    trust_host: Option<bool>,
    allowed_hosts: Option<Vec<String>>,
    rate_limits: crate::ratelimit::RateLimits,
    rate_limit_store: Option<Arc<dyn crate::ratelimit::RateLimitStore>>,
    single_use_store: Option<Arc<dyn crate::ratelimit::RateLimitStore>>,
    trusted_proxies: Vec<String>,
    url: Option<String>,
    session_strategy: Option<SessionStrategy>,
    session_max_age: Duration,
    jwt_max_age: Option<Duration>,
    pages: PagesOptions,
    theme: Theme,
    callbacks: CallbackHooks,
    events: EventHooks,
    session_codec: Option<Arc<dyn crate::jwt::SessionTokenCodec>>,
    next_auth_v4: bool,
    logger: Arc<dyn Logger>,
    debug: bool,
    use_secure_cookies: Option<bool>,
    cookies: CookiesOverrides,
    dangerous: DangerousOptions,
    redirect_proxy_url: Option<String>,
    adapter: Option<Arc<dyn crate::adapter::Adapter>>,
    sign_up: crate::sign_up::SignUpPolicy,
    #[cfg(feature = "passwords")]
    password_accounts: Option<crate::passwords::PasswordAccounts>,
    organizations: Option<crate::organizations::Organizations>,
    admins: Option<crate::admin::Admins>,
    audit_log: crate::audit::AuditLog,
    credentials_database_sessions: bool,
    sessions_only: bool,
    hash_session_tokens: bool,
    jwt_revocation: bool,
    #[cfg(feature = "two-factor")]
    two_factor: Option<crate::two_factor::TwoFactorOptions>,
    recent_sign_in: Duration,
    session_update_age: Duration,
    max_body_bytes: usize,
    max_cookie_header_bytes: usize,
    pub(crate) warnings: Vec<WarningCode>,
    /// Applied by `build`, so options set before or after `env_defaults` count as explicit.
    env_defaults: Option<Env>,
    /// Applied with `env_defaults`, under its variables.
    auth_js_settings: Option<crate::env::AuthJsSettings>,
    /// Where `secrets` came from, for the errors that name it.
    secrets_from: SecretsFrom,
}

/// Where the builder's secrets came from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
enum SecretsFrom {
    /// [`AuthConfigBuilder::secret`] (or none).
    #[default]
    Secret,
    /// [`AuthConfigBuilder::secrets`].
    Secrets,
    /// The environment: the variable of each secret, in order.
    Env(Vec<&'static str>),
}

impl SecretsFrom {
    /// Where the secret at `index` came from: a variable, or the builder method.
    fn origin(&self, index: usize) -> &'static str {
        match self {
            SecretsFrom::Secret => "AuthConfig::builder().secret(..)",
            SecretsFrom::Secrets => "AuthConfig::builder().secrets(..)",
            SecretsFrom::Env(names) => names.get(index).copied().unwrap_or("AUTH_SECRET"),
        }
    }
}

impl Default for AuthConfigBuilder {
    fn default() -> Self {
        AuthConfigBuilder {
            providers: Vec::new(),
            secrets: Vec::new(),
            base_path: None,
            trust_host: None,
            allowed_hosts: None,
            rate_limits: crate::ratelimit::RateLimits::default(),
            rate_limit_store: None,
            single_use_store: None,
            trusted_proxies: Vec::new(),
            url: None,
            session_strategy: None,
            session_max_age: Duration::from_secs(30 * 24 * 60 * 60),
            jwt_max_age: None,
            pages: PagesOptions::default(),
            theme: Theme::default(),
            callbacks: CallbackHooks::default(),
            events: EventHooks::default(),
            session_codec: None,
            next_auth_v4: false,
            logger: Arc::new(TracingLogger),
            debug: false,
            use_secure_cookies: None,
            cookies: CookiesOverrides::default(),
            dangerous: DangerousOptions::default(),
            redirect_proxy_url: None,
            adapter: None,
            sign_up: crate::sign_up::SignUpPolicy::Open,
            #[cfg(feature = "passwords")]
            password_accounts: None,
            organizations: None,
            admins: None,
            audit_log: crate::audit::AuditLog::default(),
            credentials_database_sessions: false,
            sessions_only: false,
            hash_session_tokens: false,
            jwt_revocation: false,
            #[cfg(feature = "two-factor")]
            two_factor: None,
            recent_sign_in: Duration::from_secs(10 * 60),
            session_update_age: Duration::from_secs(24 * 60 * 60),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_cookie_header_bytes: DEFAULT_MAX_COOKIE_HEADER_BYTES,
            warnings: Vec::new(),
            env_defaults: None,
            auth_js_settings: None,
            secrets_from: SecretsFrom::Secret,
        }
    }
}

impl AuthConfigBuilder {
    /// Adds a provider.
    pub fn provider(mut self, provider: impl Into<Provider>) -> Self {
        self.providers.push(provider.into());
        self
    }

    /// Sets the secret (replaces any earlier ones).
    pub fn secret(mut self, secret: impl Into<String>) -> Self {
        self.secrets = vec![secret.into()];
        self.secrets_from = SecretsFrom::Secret;
        self
    }

    /// Sets several secrets for rotation: the first encrypts, all decrypt.
    pub fn secrets<I, S>(mut self, secrets: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.secrets = secrets.into_iter().map(Into::into).collect();
        self.secrets_from = SecretsFrom::Secrets;
        self
    }

    /// The path the handler is mounted on (default `/auth`).
    pub fn base_path(mut self, path: impl Into<String>) -> Self {
        self.base_path = Some(path.into());
        self
    }

    /// Trust the request's `Host` and `X-Forwarded-Host` / `X-Forwarded-Proto` headers to
    /// build URLs (Auth.js `trustHost`). Without it, or [`url`](Self::url), every request
    /// fails with `UntrustedHost`.
    pub fn trust_host(mut self, trust: bool) -> Self {
        self.trust_host = Some(trust);
        self
    }

    /// The request hosts authcore answers, and builds its links, redirects and mails from:
    /// exact names (`app.example.com`), IP literals and `*.example.com`, each with an
    /// optional port (`localhost:3000`, or `:*` for any; see
    /// [`HostList`](crate::hosts::HostList)). A pattern without a port means the scheme's
    /// default port only (443 for `https`, 80 for `http`). A request for any other host or
    /// port fails with `UntrustedHost`, so a forged `Host` can never put a magic-link token
    /// or an OAuth code into a link to another site or port.
    ///
    /// A finer choice than [`trust_host`](Self::trust_host), which trusts every host:
    /// with `trust_host(true)` as well, the host and protocol may come from
    /// `X-Forwarded-Host` / `X-Forwarded-Proto` (behind a proxy), and the host must still
    /// be on the list; without it, only the `Host` header is read. A fixed
    /// [`url`](Self::url) takes precedence over both. An invalid pattern fails
    /// [`build`](Self::build) with [`ConfigError::InvalidAllowedHost`].
    ///
    /// ```
    /// # use authcore::{AuthConfig, providers::CredentialsProvider};
    /// let config = AuthConfig::builder()
    ///     .secret("a long random secret-xxxxxxxxxxx")
    ///     .allowed_hosts(["app.example.com", "*.example.org", "localhost:3000"])
    ///     .provider(CredentialsProvider::new().authorize(|_, _| async { Ok(None) }))
    ///     .build();
    /// assert!(config.is_ok());
    /// ```
    pub fn allowed_hosts<I, S>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_hosts = Some(hosts.into_iter().map(Into::into).collect());
        self
    }

    /// Brute-force limits ([`crate::ratelimit`]); all off by default, as in Auth.js.
    /// [`RateLimits::recommended`](crate::ratelimit::RateLimits::recommended) is a good
    /// start. Counts live in a [`MemoryRateLimitStore`](crate::ratelimit::MemoryRateLimitStore)
    /// unless [`rate_limit_store`](Self::rate_limit_store) gives a shared one. With the
    /// `rate-limit` feature (a default).
    #[cfg(feature = "rate-limit")]
    pub fn rate_limits(mut self, limits: crate::ratelimit::RateLimits) -> Self {
        self.rate_limits = limits;
        self
    }

    /// Where rate-limit counts live (e.g. Redis, shared by every instance); also the
    /// single-use store unless [`single_use_store`](Self::single_use_store) gives another.
    pub fn rate_limit_store(mut self, store: impl crate::ratelimit::RateLimitStore) -> Self {
        self.rate_limit_store = Some(Arc::new(store));
        self
    }

    /// Where single-use values (OAuth authorization codes, refresh claims, WebAuthn
    /// challenges, second-factor steps) and revocation marks live, when not in the
    /// [`rate_limit_store`](Self::rate_limit_store): e.g. the database
    /// (`authcore_sqlx::SqlxAdapter::rate_limit_store`), so that they are shared by the
    /// instances using it and outlive a restart, while the counts stay in memory. Default:
    /// the rate-limit store given, else this process's memory (apart from the counts'
    /// memory, so that counts cannot crowd the marks out). Hosts reach it through
    /// [`AuthConfig::single_use`].
    pub fn single_use_store(mut self, store: impl crate::ratelimit::RateLimitStore) -> Self {
        self.single_use_store = Some(Arc::new(store));
        self
    }

    /// Proxies (addresses or CIDR ranges: `10.0.0.0/8`, `127.0.0.1`, `::1`) whose
    /// `X-Forwarded-For` names the client for the per-client rate limits. An invalid entry
    /// fails [`build`](Self::build) with [`ConfigError::InvalidTrustedProxy`].
    pub fn trusted_proxies<I, S>(mut self, proxies: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.trusted_proxies = proxies.into_iter().map(Into::into).collect();
        self
    }

    /// The site's fixed public URL (`AUTH_URL`): its origin is used for every request and
    /// request headers are not trusted for it. Implies `trust_host` for the URL path.
    pub fn url(mut self, url: impl Into<String>) -> Self {
        self.url = Some(url.into());
        self
    }

    /// JWT (default) or database sessions.
    pub fn session_strategy(mut self, strategy: SessionStrategy) -> Self {
        self.session_strategy = Some(strategy);
        self
    }

    /// Session lifetime (default 30 days).
    pub fn session_max_age(mut self, max_age: Duration) -> Self {
        self.session_max_age = max_age;
        self
    }

    /// JWT lifetime (default: the session lifetime).
    pub fn jwt_max_age(mut self, max_age: Duration) -> Self {
        self.jwt_max_age = Some(max_age);
        self
    }

    /// Custom pages.
    pub fn pages(mut self, pages: PagesOptions) -> Self {
        self.pages = pages;
        self
    }

    /// Theme of the built-in pages.
    pub fn theme(mut self, theme: Theme) -> Self {
        self.theme = theme;
        self
    }

    /// Callbacks (`sign_in`, `redirect`, `jwt`, `session`).
    pub fn callbacks(mut self, callbacks: impl Callbacks) -> Self {
        self.callbacks = CallbackHooks::new(callbacks);
        self
    }

    /// Replaces the session token's JWE with the host's own format (Auth.js
    /// `jwt: { encode, decode }`), e.g. a signed JWS that other services verify with a
    /// public key; see [`SessionTokenCodec`](crate::jwt::SessionTokenCodec). The OAuth
    /// check cookies stay JWEs.
    pub fn session_token_codec(mut self, codec: impl crate::jwt::SessionTokenCodec) -> Self {
        self.session_codec = Some(Arc::new(codec));
        self
    }

    /// NextAuth.js v4 compatibility: v4's session token (`next-auth/jwt`:
    /// [`NextAuthV4Codec`](crate::jwt::NextAuthV4Codec) of the first secret), v4's cookie
    /// names (`next-auth.session-token`, `__Host-next-auth.csrf-token` …) and, unless
    /// [`base_path`](Self::base_path) or `AUTH_URL` says otherwise, v4's base path
    /// `/api/auth`. A Next.js app on next-auth 4 and this service then share sessions (the
    /// same `NEXTAUTH_SECRET` as the secret). A custom
    /// [`session_token_codec`](Self::session_token_codec) still wins. v4's
    /// `next-auth/react` works unchanged: the `json=true` its `signIn`/`signOut` post asks
    /// for `{"url": …}` JSON instead of a redirect, as `X-Auth-Return-Redirect` does. The
    /// session action answers `{}` without a session, as v4 does (v5: `null`).
    pub fn next_auth_v4(mut self) -> Self {
        self.next_auth_v4 = true;
        self
    }

    /// Event handlers.
    pub fn events(mut self, events: impl Events) -> Self {
        self.events = EventHooks::new(events);
        self
    }

    /// Replaces the `tracing` logger.
    ///
    /// Like a user `logger.debug` in Auth.js, a logger whose
    /// [`debug_enabled`](Logger::debug_enabled) returns `true` receives debug messages even
    /// without [`debug(true)`](Self::debug).
    pub fn logger(mut self, logger: impl Logger) -> Self {
        self.logger = Arc::new(logger);
        self
    }

    /// Enables debug messages.
    pub fn debug(mut self, debug: bool) -> Self {
        self.debug = debug;
        self
    }

    /// Forces secure (`__Secure-` / `__Host-`) cookies on or off; by default they follow
    /// the request scheme.
    pub fn use_secure_cookies(mut self, secure: bool) -> Self {
        self.use_secure_cookies = Some(secure);
        self
    }

    /// Overrides cookie names and options.
    pub fn cookies(mut self, cookies: CookiesOverrides) -> Self {
        self.cookies = cookies;
        self
    }

    /// The database adapter (users, accounts, sessions …). With one, sessions default to the
    /// database strategy.
    pub fn adapter(mut self, adapter: impl crate::adapter::Adapter) -> Self {
        self.adapter = Some(Arc::new(adapter));
        self
    }

    /// How often a database session's expiry is pushed back (default 24 h).
    pub fn session_update_age(mut self, update_age: Duration) -> Self {
        self.session_update_age = update_age;
        self
    }

    /// Beyond Auth.js: a configuration without providers that only reads sessions another
    /// app issues — a Rust API beside a Next.js or Auth.js front end that signs users in,
    /// with the same secret (and base path, for the cookie names). `GET /session`, the
    /// framework integrations' `Session` extractors and guards, and
    /// [`Auth::read_session`](crate::Auth::read_session) work (a JWT session is
    /// refreshed as usual); sign-in and callback routes find no provider. `build()` refuses
    /// providers with it. The migration guide's "Running beside a Next.js app" shows the
    /// layouts.
    pub fn sessions_only(mut self) -> Self {
        self.sessions_only = true;
        self
    }

    /// Beyond Auth.js: who may become a user by signing in for the first time with a magic
    /// link, an OAuth / OpenID Connect provider or a passkey ([`SignUpPolicy`]; default
    /// [`SignUpPolicy::Open`], as Auth.js). A refused sign-up answers `AccessDenied`; a
    /// magic link is then sent to known addresses only, with the same answer for unknown
    /// ones. Users of a user source (`CredentialsProvider::from_source`) are never refused.
    ///
    /// [`SignUpPolicy`]: crate::SignUpPolicy
    /// [`SignUpPolicy::Open`]: crate::SignUpPolicy::Open
    pub fn sign_up(mut self, policy: crate::sign_up::SignUpPolicy) -> Self {
        self.sign_up = policy;
        self
    }

    /// Beyond Auth.js: the adapter's password accounts as a sign-in method (the
    /// credentials provider `password`, whose username is the email address), with their
    /// self-service routes and pages under `<basePath>/password/`: sign-up (when
    /// [`PasswordAccounts::allow_sign_up`], within the [`sign_up`](Self::sign_up) policy),
    /// the confirmation of a new account's address, and a forgotten password; and, on the
    /// account page and routes, changing the password and the address. The links are mailed
    /// by the first email provider, which a config with password accounts that confirm
    /// addresses must have.
    ///
    /// [`PasswordAccounts::allow_sign_up`]: crate::passwords::PasswordAccounts::allow_sign_up
    #[cfg(feature = "passwords")]
    pub fn password_accounts(mut self, accounts: crate::passwords::PasswordAccounts) -> Self {
        self.providers.push(Provider::Credentials(
            crate::providers::CredentialsProvider::from_source(Arc::new(accounts.clone())),
        ));
        self.password_accounts = Some(accounts);
        self
    }

    /// Beyond Auth.js: organizations with members, roles and permissions, invitations by
    /// email, teams, and API keys ([`Organizations`]; see [`crate::organizations`]). The
    /// adapter must store them (`OrganizationStore`, `ApiKeyStore`: the SQL, Redis and
    /// memory adapters do); `build` checks the roles and says which name is wrong.
    ///
    /// [`Organizations`]: crate::organizations::Organizations
    pub fn organizations(mut self, organizations: crate::organizations::Organizations) -> Self {
        self.organizations = Some(organizations);
        self
    }

    /// Beyond Auth.js: administrators ([`Admins`]; see [`crate::admin`]), who find users,
    /// end their sessions, ban them, reset their second factors and sign in as them. The
    /// adapter must find and ban users (`UserDirectoryStore`) and list their accounts
    /// (`LinkedAccountStore`: a set-up link for a user who signs in already is mailed to
    /// them only); with JWT sessions the revocation list must be on
    /// (`jwt_revocation(true)`), so that a ban ends them.
    ///
    /// [`Admins`]: crate::admin::Admins
    pub fn admins(mut self, admins: crate::admin::Admins) -> Self {
        self.admins = Some(admins);
        self
    }

    /// Beyond Auth.js: the audit log ([`AuditLog`]; see [`crate::audit`]): sign-ins,
    /// changes to how users sign in, organization changes and administrators' actions,
    /// stored by the adapter (`AuditLogStore`) and handed to sinks.
    ///
    /// [`AuditLog`]: crate::audit::AuditLog
    pub fn audit_log(mut self, log: crate::audit::AuditLog) -> Self {
        self.audit_log = log;
        self
    }

    /// Beyond Auth.js: let credentials sign-ins create database sessions (database strategy
    /// only). `authorize` must then return the adapter's user id. Trade-off: every request
    /// costs a database read, but sessions can be listed and revoked server-side, which a
    /// JWT cannot be.
    pub fn credentials_database_sessions(mut self, enabled: bool) -> Self {
        self.credentials_database_sessions = enabled;
        self
    }

    /// Beyond Auth.js (opt-in): store database session tokens as their SHA-256 (hex)
    /// instead of as sent, and look cookies up by that hash. Whoever can read the
    /// `sessions` table (a backup, a read replica, an SQL injection elsewhere) then holds no
    /// cookie that signs in. Incompatible with an Auth.js app sharing the database: it
    /// stores and looks up tokens as sent. Sessions made before turning it on (or off)
    /// are not found afterwards: their users sign in again.
    pub fn hash_session_tokens(mut self, enabled: bool) -> Self {
        self.hash_session_tokens = enabled;
        self
    }

    /// The JWT revocation list (opt-in, beyond Auth.js): JWT sessions get a session id
    /// (`sid`) and sign-in time (`sat`, milliseconds) claim, and every JWT session read asks the adapter
    /// whether the user revoked sessions signed in before some time
    /// ([`Auth::revoke_other_sessions`](crate::Auth::revoke_other_sessions): "sign out
    /// everywhere" for JWT sessions). Costs one adapter read per session read; needs an
    /// adapter with `revoke_jwt_sessions` / `get_jwt_revocation`. Tokens signed in before it
    /// was turned on count as signed in at time 0.
    pub fn jwt_revocation(mut self, enabled: bool) -> Self {
        self.jwt_revocation = enabled;
        self
    }

    /// Second factors (beyond Auth.js): TOTP, recovery codes and passkeys as a second step
    /// after the first factor, optional or required ([`crate::two_factor`]). Needs an
    /// adapter that stores them (a [`TwoFactorStore`](crate::adapter::TwoFactorStore)).
    #[cfg(feature = "two-factor")]
    pub fn two_factor(mut self, options: crate::two_factor::TwoFactorOptions) -> Self {
        self.two_factor = Some(options);
        self
    }

    /// How recent the sign-in of a session must be for a sensitive change (default 10
    /// minutes): adding or removing a passkey, TOTP enrolment and removal, new recovery
    /// codes, linking or unlinking a provider, revoking an app's access, deleting the
    /// account ([`SensitiveOperation`](crate::account::SensitiveOperation)). A user with a
    /// second factor must also have proven it at that sign-in. Older sessions are refused
    /// with `ReauthenticationRequired` and sign in again first.
    pub fn recent_sign_in(mut self, window: Duration) -> Self {
        self.recent_sign_in = window;
        self
    }

    /// Auth.js `experimental.enableWebAuthn`, accepted so that ported configurations build
    /// unchanged. WebAuthn is stable in authcore: a WebAuthn provider works without it, and
    /// no `experimental-webauthn` warning is logged.
    #[deprecated(note = "WebAuthn is stable in authcore: remove the call, it changes nothing")]
    pub fn experimental_enable_webauthn(self, enabled: bool) -> Self {
        let _ = enabled;
        self
    }

    /// A stable deployment (e.g. `https://auth.example.com/auth`) whose callback URL is
    /// registered at the OAuth providers; other deployments (previews) send users there and
    /// it relays the callback back to them in the encrypted `state` (`AUTH_REDIRECT_PROXY_URL`).
    pub fn redirect_proxy_url(mut self, url: impl Into<String>) -> Self {
        self.redirect_proxy_url = Some(url.into());
        self
    }

    /// Options that weaken security.
    pub fn dangerous(mut self, dangerous: DangerousOptions) -> Self {
        self.dangerous = dangerous;
        self
    }

    /// Largest accepted request body (default [`DEFAULT_MAX_BODY_BYTES`]); larger bodies
    /// get `413`.
    pub fn max_body_bytes(mut self, limit: usize) -> Self {
        self.max_body_bytes = limit;
        self
    }

    /// Largest accepted total of `Cookie` headers (default
    /// [`DEFAULT_MAX_COOKIE_HEADER_BYTES`]); more gets `431`.
    pub fn max_cookie_header_bytes(mut self, limit: usize) -> Self {
        self.max_cookie_header_bytes = limit;
        self
    }

    /// Fills unset options from environment variables (Auth.js `setEnvDefaults` in
    /// `lib/utils/env.ts`): `AUTH_SECRET`, `AUTH_SECRET_1..3`, `AUTH_URL`, `AUTH_TRUST_HOST`,
    /// and `AUTH_<PROVIDER>_ID/SECRET/ISSUER/KEY`.
    ///
    /// The variables are applied when the configuration is built, so the call may come
    /// anywhere in the chain: providers added after it get their `AUTH_<ID>_*` values, and
    /// an explicit option always wins over the environment, whichever came first.
    /// Calling it again adds variables; a later snapshot wins for a variable in both.
    pub fn env_defaults(mut self, env: &Env) -> Self {
        self.env_defaults = Some(match self.env_defaults.take() {
            Some(earlier) => earlier.overlay(env.clone()),
            None => env.clone(),
        });
        self
    }

    /// Auth.js options from a source under the environment, such as a configuration file:
    /// the secret, URL and host trust of [`AuthJsSettings`](crate::env::AuthJsSettings),
    /// each used where [`env_defaults`](Self::env_defaults) has no value for its variable,
    /// with that variable's rules (`url` sets the base path and trusts the host, `secret`
    /// is the oldest of a rotation). Like the environment, they fill only the options left
    /// unset.
    ///
    /// ```
    /// use authcore::env::{AuthJsSettings, Env};
    /// use authcore::{AuthConfig, providers::CredentialsProvider};
    /// let mut file = AuthJsSettings::default();
    /// file.url = Some("https://file.example/api/auth".into());
    /// file.secret = Some("a long random secret, 32 characters or more".into());
    /// let config = AuthConfig::builder()
    ///     .provider(CredentialsProvider::new().authorize(|_, _| async { Ok(None) }))
    ///     .auth_js_settings(file)
    ///     .env_defaults(&Env::from_pairs([("AUTH_URL", "https://env.example/auth")]))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(config.base_path(), "/auth");
    /// ```
    pub fn auth_js_settings(mut self, settings: crate::env::AuthJsSettings) -> Self {
        self.auth_js_settings = Some(settings);
        self
    }

    /// Fills the options left unset from the environment over the
    /// [`auth_js_settings`](Self::auth_js_settings) (Auth.js `lib/utils/env.ts`); an
    /// explicit option always wins. `suppress_base_path_warning` is Auth.js's
    /// `setEnvDefaults` argument.
    pub(crate) fn apply_env_defaults(
        mut self,
        env: &Env,
        suppress_base_path_warning: bool,
    ) -> Self {
        let defaults = env.defaults(&self.auth_js_settings.take().unwrap_or_default());
        if let Some(auth_url) = &defaults.auth_url {
            let parsed = url::Url::parse(auth_url).ok();
            if self.base_path.is_some() {
                if !suppress_base_path_warning {
                    self.warnings.push(WarningCode::EnvUrlBasepathRedundant);
                }
            } else if let Some(u) = &parsed {
                let path = u.path().trim_end_matches('/');
                self.base_path = Some(if path.is_empty() { "/" } else { path }.to_owned());
            }
            if self.url.is_none() && parsed.is_some() {
                self.url = Some(auth_url.clone());
            }
        }
        if !self.secrets.iter().any(|s| !s.is_empty()) {
            let (names, secrets) = defaults.secrets.into_iter().unzip();
            self.secrets = secrets;
            self.secrets_from = SecretsFrom::Env(names);
        }
        if self.redirect_proxy_url.is_none() {
            self.redirect_proxy_url = defaults.redirect_proxy_url;
        }
        if self.trust_host.is_none() {
            self.trust_host = defaults.trust_host;
        }
        for p in &mut self.providers {
            p.apply_env(&env.provider_env(p.id()));
        }
        self
    }

    /// Validates and prepares the configuration: each concern is checked and resolved by a
    /// function of its own, in the order below, so the first problem found is the one
    /// reported.
    pub fn build(mut self) -> Result<AuthConfig, ConfigError> {
        if self.env_defaults.is_some() || self.auth_js_settings.is_some() {
            let env = self.env_defaults.take().unwrap_or_default();
            self = self.apply_env_defaults(&env, false);
        }
        check_secrets(
            &self.secrets,
            &self.secrets_from,
            self.dangerous.short_secret,
        )?;
        #[cfg(feature = "oauth")]
        resolve_http_clients(&mut self.providers)?;
        check_providers(&self.providers, self.sessions_only, self.adapter.is_some())?;
        // Database sessions by default when an adapter is set (as Auth.js `lib/init.ts`).
        let strategy = self.session_strategy.unwrap_or(if self.adapter.is_some() {
            SessionStrategy::Database
        } else {
            SessionStrategy::Jwt
        });
        let storage = self.check_storage(strategy)?;
        let base_path = resolve_base_path(self.base_path, self.next_auth_v4)?;
        let url = resolve_url(self.url)?;
        check_pages(&self.pages)?;
        let redirect_proxy_url = resolve_redirect_proxy_url(self.redirect_proxy_url)?;
        let (session_max_age, jwt_max_age) =
            resolve_max_ages(self.session_max_age, self.jwt_max_age)?;
        let cookie_sets = resolve_cookie_sets(self.next_auth_v4, &self.cookies)?;
        let keys = SessionKeys::resolve(&self.secrets, self.session_codec, self.next_auth_v4)?;
        let trust_host = self.trust_host.unwrap_or(false) || url.is_some();
        let allowed_hosts = resolve_allowed_hosts(self.allowed_hosts)?;
        let trusted_proxies = resolve_trusted_proxies(&self.trusted_proxies)?;
        let stores = Stores::resolve(
            &self.rate_limits,
            self.rate_limit_store,
            self.single_use_store,
        );
        let debug = announce(&*self.logger, self.debug, &self.dangerous, &self.warnings);
        let adapter = match self.adapter {
            Some(a) if debug => Some(crate::logger::DebugAdapter::wrap(a, self.logger.clone())),
            other => other,
        };

        Ok(AuthConfig {
            inner: Arc::new(ConfigInner {
                providers: self.providers,
                base_path,
                codec: keys.codec,
                secret_string: keys.secret_string,
                trust_host,
                allowed_hosts,
                rate_limits: self.rate_limits,
                rate_limit_store: stores.rate_limit_store,
                single_use_store: stores.single_use_store,
                trusted_proxies,
                url,
                session_strategy: strategy,
                session_max_age,
                jwt_max_age,
                pages: self.pages,
                theme: self.theme,
                callbacks: self.callbacks,
                events: self.events,
                session_codec: keys.session_codec,
                logger: self.logger,
                debug,
                use_secure_cookies: self.use_secure_cookies,
                cookies_secure: ResolvedCookies::new(&cookie_sets[1]),
                cookies_plain: ResolvedCookies::new(&cookie_sets[0]),
                cookie_sets,
                dangerous: self.dangerous,
                redirect_proxy_url,
                adapter,
                sign_up: self.sign_up,
                #[cfg(feature = "passwords")]
                password_accounts: self.password_accounts,
                organizations: storage.organizations,
                admins: self.admins,
                auditor: crate::audit::Auditor::new(self.audit_log),
                credentials_database_sessions: self.credentials_database_sessions,
                hash_session_tokens: self.hash_session_tokens,
                session_update_age: self.session_update_age.as_secs(),
                max_body_bytes: self.max_body_bytes,
                max_cookie_header_bytes: self.max_cookie_header_bytes,
                next_auth_v4: self.next_auth_v4,
                refreshes_tokens: storage.refreshes_tokens,
                jwt_revocation: storage.jwt_revocation,
                #[cfg(feature = "two-factor")]
                two_factor: self.two_factor,
                recent_sign_in: self.recent_sign_in,
                sites: Default::default(),
            }),
        })
    }

    /// The adapter has what the chosen providers, session strategy and options store
    /// (Auth.js `lib/utils/assert.ts` for email sign-in and database sessions).
    fn check_storage(&self, strategy: SessionStrategy) -> Result<StorageChecks, ConfigError> {
        // Email sign-in needs an adapter (Auth.js `lib/utils/assert.ts`); the verification
        // token and user calls it makes are required of every adapter.
        if self.adapter.is_none()
            && self
                .providers
                .iter()
                .any(|p| p.kind() == ProviderType::Email)
        {
            return Err(ConfigError::MissingAdapter);
        }
        #[cfg(feature = "passwords")]
        if let Some(accounts) = &self.password_accounts
            && accounts.verifies_email()
            && !self
                .providers
                .iter()
                .any(|p| p.kind() == ProviderType::Email)
        {
            return Err(ConfigError::PasswordAccountsWithoutMail);
        }
        let organizations = match &self.organizations {
            Some(settings) => {
                let roles = settings.roles().map_err(ConfigError::InvalidRoles)?;
                let Some(adapter) = &self.adapter else {
                    return Err(ConfigError::MissingAdapter);
                };
                require_capability(
                    adapter.organizations().is_some(),
                    "createOrganization, getMember, addMember, setMemberRoles, removeMember, \
                     createInvitation, acceptInvitation (OrganizationStore)",
                )?;
                require_capability(
                    adapter.api_keys().is_some(),
                    "createApiKey, getApiKey, listApiKeys, revokeApiKey (ApiKeyStore)",
                )?;
                Some(OrganizationsConfig {
                    settings: settings.clone(),
                    roles,
                })
            }
            None => None,
        };
        if self.sign_up == crate::sign_up::SignUpPolicy::Invite
            && self
                .adapter
                .as_ref()
                .is_none_or(|a| a.organizations().is_none())
        {
            return Err(ConfigError::InviteWithoutInvitations);
        }
        let jwt_revocation = self.jwt_revocation && strategy == SessionStrategy::Jwt;
        if let Some(admins) = &self.admins {
            let Some(adapter) = &self.adapter else {
                return Err(ConfigError::MissingAdapter);
            };
            require_capability(
                adapter.user_directory().is_some(),
                "searchUsers, setUserBan, getUserBan (UserDirectoryStore)",
            )?;
            // Whether a user signs in already (an OAuth account of theirs), before a set-up
            // link is shown to an administrator rather than mailed to the user.
            require_capability(
                adapter.linked_accounts().is_some(),
                "listAccountsByUserId (LinkedAccountStore)",
            )?;
            if strategy == SessionStrategy::Jwt && !jwt_revocation {
                return Err(ConfigError::AdminsWithoutRevocation);
            }
            if admins.organization.is_some() && self.organizations.is_none() {
                return Err(ConfigError::AdminOrganizationWithoutOrganizations);
            }
        }
        if self.audit_log.store {
            let Some(adapter) = &self.adapter else {
                return Err(ConfigError::MissingAdapter);
            };
            require_capability(
                adapter.audit_log().is_some(),
                "lastAuditRecord, appendAuditRecord, queryAuditRecords, pruneAuditRecords \
                 (AuditLogStore)",
            )?;
        }
        if jwt_revocation {
            let Some(adapter) = &self.adapter else {
                return Err(ConfigError::MissingAdapter);
            };
            require_capability(
                adapter.jwt_revocation().is_some(),
                "revokeJwtSessions, getJwtRevocation",
            )?;
        }
        #[cfg(feature = "two-factor")]
        if self.two_factor.is_some() {
            let Some(adapter) = &self.adapter else {
                return Err(ConfigError::TwoFactorMissingAdapter);
            };
            require_capability(
                adapter.two_factor().is_some(),
                "getTwoFactor, setTwoFactor, deleteTwoFactor, replaceRecoveryCodes, \
                 useRecoveryCode, countRecoveryCodes",
            )?;
            if strategy == SessionStrategy::Database {
                require_capability(
                    adapter.session_sign_in().is_some(),
                    "recordSessionSignIn, getSessionSignIn",
                )?;
            }
        }
        let refreshes_tokens = self.providers.iter().any(Provider::refreshes_tokens);
        if strategy == SessionStrategy::Database {
            // A provider of a user source answers stored users: it needs no opt-in.
            let plain_credentials =
                |p: &Provider| matches!(p, Provider::Credentials(c) if !c.has_source());
            let has_credentials = self.providers.iter().any(plain_credentials);
            let credentials_only = !self.sessions_only
                && has_credentials
                && self
                    .providers
                    .iter()
                    .filter(|p| p.signs_in())
                    .all(|p| p.kind() == ProviderType::Credentials);
            if credentials_only && !self.credentials_database_sessions {
                return Err(ConfigError::UnsupportedStrategy);
            }
            if has_credentials && !self.credentials_database_sessions {
                // Auth.js accepts this and its credentials sign-ins end in a `null` session;
                // here they are refused with a log line that says the same as this warning.
                tracing::warn!(
                    "credentials sign-ins are refused under the database session strategy: set \
                     credentials_database_sessions(true) (authorize returning the adapter's \
                     user id) or session_strategy(SessionStrategy::Jwt)"
                );
            }
            let Some(adapter) = &self.adapter else {
                return Err(ConfigError::MissingAdapter);
            };
            // Refreshing access tokens with database sessions lists and updates accounts
            // (beyond Auth.js: its adapters have no way to).
            if refreshes_tokens {
                require_capability(
                    adapter.linked_accounts().is_some(),
                    "listAccountsByUserId, updateAccount",
                )?;
            }
        }
        Ok(StorageChecks {
            jwt_revocation,
            refreshes_tokens,
            organizations,
        })
    }
}

/// Organizations as configured: the settings and the roles they resolve to.
#[derive(Debug, Clone)]
pub(crate) struct OrganizationsConfig {
    /// The host's settings.
    pub settings: crate::organizations::Organizations,
    /// The roles, checked.
    pub roles: crate::organizations::Roles,
}

/// What [`AuthConfigBuilder::check_storage`] found the configuration to use.
struct StorageChecks {
    /// Organizations, their roles checked.
    organizations: Option<OrganizationsConfig>,
    /// JWT sessions are checked against the adapter's revocation list.
    jwt_revocation: bool,
    /// Some OAuth provider refreshes access tokens.
    refreshes_tokens: bool,
}

/// At least one secret, none empty, none shorter than [`MIN_SECRET_CHARS`] characters
/// unless `allow_short`; an error names where the secret came from.
fn check_secrets(
    secrets: &[String],
    from: &SecretsFrom,
    allow_short: bool,
) -> Result<(), ConfigError> {
    if secrets.is_empty() {
        return Err(ConfigError::MissingSecret);
    }
    if let Some(index) = secrets.iter().position(String::is_empty) {
        let origin = from.origin(index);
        return Err(ConfigError::EmptySecret { index, origin });
    }
    if !allow_short
        && let Some((index, chars)) = secrets
            .iter()
            .map(|s| s.chars().count())
            .enumerate()
            .find(|(_, chars)| *chars < MIN_SECRET_CHARS)
    {
        let origin = from.origin(index);
        return Err(ConfigError::ShortSecret {
            index,
            chars,
            origin,
        });
    }
    Ok(())
}

/// Each OAuth provider's HTTP client, resolved once: its own, else the shared one.
#[cfg(feature = "oauth")]
fn resolve_http_clients(providers: &mut [Provider]) -> Result<(), ConfigError> {
    for p in providers {
        if let Provider::OAuth(o) = p
            && !o.resolve_http_client()
        {
            return Err(ConfigError::NoHttpClient {
                provider: o.id.clone(),
            });
        }
    }
    Ok(())
}

/// Providers where they are expected (none with `sessions_only`), each with an id that is
/// unique and fits in a path, and each with what its kind needs.
fn check_providers(
    providers: &[Provider],
    sessions_only: bool,
    has_adapter: bool,
) -> Result<(), ConfigError> {
    if sessions_only && !providers.is_empty() {
        return Err(ConfigError::ProvidersWithSessionsOnly);
    }
    if !sessions_only && !providers.iter().any(Provider::signs_in) {
        return Err(ConfigError::NoProviders);
    }
    for (i, p) in providers.iter().enumerate() {
        let id = p.id();
        if id.is_empty()
            || id == "undefined"
            || id.bytes().any(|b| {
                matches!(b, b'/' | b'?' | b'#' | b'%')
                    || b.is_ascii_whitespace()
                    || b.is_ascii_control()
            })
        {
            return Err(ConfigError::InvalidProviderId { id: id.to_owned() });
        }
        let earlier = &providers[..i];
        if earlier.iter().any(|q| q.id() == id) {
            return Err(ConfigError::DuplicateProviderId { id: id.to_owned() });
        }
        check_provider(p, earlier, has_adapter)?;
    }
    Ok(())
}

/// What one provider's kind needs: an `authorize` function, a mail sender, OAuth endpoints
/// and client, WebAuthn algorithms (`earlier`: the providers listed before it).
#[cfg_attr(not(feature = "webauthn"), allow(unused_variables))]
fn check_provider(
    p: &Provider,
    earlier: &[Provider],
    has_adapter: bool,
) -> Result<(), ConfigError> {
    let id = p.id();
    match p {
        Provider::Credentials(c) if c.authorize.is_none() && !c.has_source() => {
            return Err(ConfigError::MissingAuthorize {
                provider: id.to_owned(),
            });
        }
        Provider::Credentials(_) => {}
        #[cfg(feature = "email")]
        Provider::Email(e) => {
            if e.send.is_none() {
                return Err(ConfigError::MissingEmailSender {
                    provider: id.to_owned(),
                });
            }
            if e.requires_api_key && e.api_key.as_deref().is_none_or(str::is_empty) {
                return Err(ConfigError::MissingApiKey {
                    provider: id.to_owned(),
                });
            }
        }
        #[cfg(feature = "webauthn")]
        Provider::WebAuthn(w) => check_webauthn(w, id, earlier, has_adapter)?,
        #[cfg(feature = "oauth")]
        Provider::OAuth(o) => {
            if let Some(key) = o.missing_endpoint() {
                return Err(ConfigError::InvalidEndpoints {
                    provider: id.to_owned(),
                    key,
                });
            }
            if o.client_auth == crate::providers::ClientAuthMethod::PrivateKeyJwt
                && o.client_private_key.is_none()
            {
                return Err(ConfigError::MissingClientKey {
                    provider: id.to_owned(),
                });
            }
            if o.client_id.is_empty() {
                return Err(ConfigError::MissingClientId {
                    provider: id.to_owned(),
                });
            }
        }
    }
    Ok(())
}

/// A WebAuthn provider: an adapter for its authenticators, algorithms this build verifies,
/// and at most one provider with conditional UI, whose form has a `webauthn` autocomplete.
#[cfg(feature = "webauthn")]
fn check_webauthn(
    w: &crate::providers::WebAuthnProvider,
    id: &str,
    earlier: &[Provider],
    has_adapter: bool,
) -> Result<(), ConfigError> {
    if !has_adapter {
        return Err(ConfigError::WebAuthnMissingAdapter);
    }
    if !w.algorithms_supported() {
        return Err(ConfigError::UnsupportedWebAuthnAlgorithms {
            provider: id.to_owned(),
            algorithms: w.supported_algorithms.clone(),
        });
    }
    if w.enable_conditional_ui {
        if let Some(first) = earlier
            .iter()
            .find(|q| matches!(q, Provider::WebAuthn(q) if q.enable_conditional_ui))
        {
            return Err(ConfigError::DuplicateConditionalUI {
                first: first.id().to_owned(),
                second: id.to_owned(),
            });
        }
        let autocomplete = w.form_fields.iter().any(|f| {
            f.autocomplete
                .as_deref()
                .is_some_and(|a| a.split_whitespace().any(|t| t == "webauthn"))
        });
        if !autocomplete {
            return Err(ConfigError::MissingWebAuthnAutocomplete {
                provider: id.to_owned(),
            });
        }
    }
    Ok(())
}

/// The base path: the configured one, else `/auth` (`/api/auth` for NextAuth.js v4); `/`
/// becomes the empty prefix.
fn resolve_base_path(base_path: Option<String>, next_auth_v4: bool) -> Result<String, ConfigError> {
    let default_base = if next_auth_v4 { "/api/auth" } else { "/auth" };
    let base_path = base_path.unwrap_or_else(|| default_base.to_owned());
    if base_path != "/" && (!base_path.starts_with('/') || base_path.ends_with('/')) {
        return Err(ConfigError::InvalidBasePath { path: base_path });
    }
    Ok(if base_path == "/" {
        String::new()
    } else {
        base_path
    })
}

/// An `http` or `https` URL with a host, or [`ConfigError::InvalidUrl`].
fn parse_site_url(u: &str) -> Result<url::Url, ConfigError> {
    url::Url::parse(u)
        .ok()
        .filter(|p| matches!(p.scheme(), "http" | "https") && p.has_host())
        .ok_or(ConfigError::InvalidUrl { url: u.to_owned() })
}

/// The site's fixed public URL, when set.
fn resolve_url(url: Option<String>) -> Result<Option<url::Url>, ConfigError> {
    url.as_deref().map(parse_site_url).transpose()
}

/// Custom pages are paths on this site or absolute URLs.
fn check_pages(pages: &PagesOptions) -> Result<(), ConfigError> {
    for (page, path) in [
        ("signIn", &pages.sign_in),
        ("signOut", &pages.sign_out),
        ("error", &pages.error),
        ("verifyRequest", &pages.verify_request),
        ("newUser", &pages.new_user),
    ] {
        if let Some(p) = path {
            let ok = p.starts_with('/') || url::Url::parse(p).is_ok_and(|u| u.has_host());
            if !ok {
                return Err(ConfigError::InvalidPagePath {
                    page,
                    path: p.clone(),
                });
            }
        }
    }
    Ok(())
}

/// `redirectProxyUrl`, checked as a site URL and kept without a trailing `/`.
fn resolve_redirect_proxy_url(url: Option<String>) -> Result<Option<String>, ConfigError> {
    match url {
        Some(u) => {
            parse_site_url(&u)?;
            Ok(Some(u.trim_end_matches('/').to_owned()))
        }
        None => Ok(None),
    }
}

/// The session's and the JWT's lifetimes in seconds (the JWT's defaults to the session's).
fn resolve_max_ages(
    session_max_age: Duration,
    jwt_max_age: Option<Duration>,
) -> Result<(u64, u64), ConfigError> {
    let max_age = session_max_age.as_secs();
    if max_age == 0 {
        return Err(ConfigError::InvalidSessionOptions(
            "session max age must be at least one second",
        ));
    }
    Ok((max_age, jwt_max_age.map_or(max_age, |d| d.as_secs())))
}

/// The cookies for plain HTTP (`[0]`) and HTTPS (`[1]`) requests, Auth.js's names (or
/// NextAuth.js v4's) with the host's overrides; every name must be a valid cookie name.
fn resolve_cookie_sets(
    next_auth_v4: bool,
    overrides: &CookiesOverrides,
) -> Result<[CookieSet; 2], ConfigError> {
    let stem = if next_auth_v4 { "next-auth" } else { "authjs" };
    let sets = [
        CookieSet::named(false, stem).with_overrides(overrides),
        CookieSet::named(true, stem).with_overrides(overrides),
    ];
    for set in &sets {
        for c in set.all() {
            if !is_valid_cookie_name(&c.name) {
                return Err(ConfigError::InvalidCookieName {
                    name: c.name.clone(),
                });
            }
        }
    }
    Ok(sets)
}

/// What the secrets become: the JWE codec, the session-token format, the CSRF string.
struct SessionKeys {
    codec: JwtCodec,
    session_codec: Option<Arc<dyn crate::jwt::SessionTokenCodec>>,
    secret_string: String,
}

impl SessionKeys {
    /// The keys of `secrets`; the session token is the host's codec, else NextAuth.js v4's
    /// of the first secret with `next_auth_v4`, else the JWE.
    fn resolve(
        secrets: &[String],
        custom: Option<Arc<dyn crate::jwt::SessionTokenCodec>>,
        next_auth_v4: bool,
    ) -> Result<Self, ConfigError> {
        let codec = JwtCodec::new(secrets).map_err(|_| ConfigError::MissingSecret)?;
        let session_codec = match (custom, next_auth_v4) {
            (Some(custom), _) => Some(custom),
            (None, true) => secrets.first().map(|secret| {
                Arc::new(crate::jwt::NextAuthV4Codec::new(secret))
                    as Arc<dyn crate::jwt::SessionTokenCodec>
            }),
            (None, false) => None,
        };
        Ok(SessionKeys {
            codec,
            session_codec,
            secret_string: secrets.join(","),
        })
    }
}

/// The allow-list of request hosts, when set.
fn resolve_allowed_hosts(
    hosts: Option<Vec<String>>,
) -> Result<Option<crate::hosts::HostList>, ConfigError> {
    hosts
        .map(|hosts| {
            crate::hosts::HostList::parse(&hosts)
                .map_err(|message| ConfigError::InvalidAllowedHost { message })
        })
        .transpose()
}

/// The trusted proxies: each an address or a CIDR range.
fn resolve_trusted_proxies(proxies: &[String]) -> Result<Vec<ipnet::IpNet>, ConfigError> {
    proxies
        .iter()
        .map(|p| {
            let p = p.trim();
            p.parse::<ipnet::IpNet>()
                .or_else(|_| p.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
                .map_err(|_| ConfigError::InvalidTrustedProxy {
                    entry: p.to_owned(),
                })
        })
        .collect()
}

/// Where rate-limit counts and single-use marks live.
struct Stores {
    rate_limit_store: Option<Arc<dyn crate::ratelimit::RateLimitStore>>,
    single_use_store: Arc<dyn crate::ratelimit::RateLimitStore>,
}

impl Stores {
    /// Counts in the given store, else in memory when some limit is on; single-use marks
    /// in their own store, else in the given rate-limit store, else in memory of their
    /// own: never in the memory the counts are kept in, where a flood of counted keys (a
    /// name per failed sign-in) would evict the marks of used codes and revoked tokens.
    fn resolve(
        limits: &crate::ratelimit::RateLimits,
        rate_limit_store: Option<Arc<dyn crate::ratelimit::RateLimitStore>>,
        single_use_store: Option<Arc<dyn crate::ratelimit::RateLimitStore>>,
    ) -> Self {
        let memory = || {
            Arc::new(crate::ratelimit::MemoryRateLimitStore::default())
                as Arc<dyn crate::ratelimit::RateLimitStore>
        };
        let single_use_store = single_use_store
            .or_else(|| rate_limit_store.clone())
            .unwrap_or_else(memory);
        Stores {
            rate_limit_store: rate_limit_store.or_else(|| limits.any().then(memory)),
            single_use_store,
        }
    }
}

/// Logs the warnings of a valid configuration (debug on, dangerous options, the builder's
/// own) and says whether the debug channel is on.
fn announce(
    logger: &dyn Logger,
    debug: bool,
    dangerous: &DangerousOptions,
    warnings: &[WarningCode],
) -> bool {
    if debug {
        warn_debug_enabled_once(logger);
    }
    if dangerous.skip_csrf_check {
        logger.warn(WarningCode::CsrfDisabled);
    }
    if dangerous.passkey_sign_up_without_email_proof {
        tracing::warn!(
            "dangerous: passkeys may create accounts for unproven email addresses \
             (passkey_sign_up_without_email_proof)"
        );
    }
    for w in warnings {
        logger.warn(*w);
    }
    // The debug channel (Auth.js `setLogger` in `lib/utils/logger.ts`): on with `debug`,
    // or for a host logger that asks for debug messages (Auth.js calls a user-supplied
    // `logger.debug` always).
    debug || logger.debug_enabled()
}

/// `debug-enabled` is warned once per process, as Auth.js `assertConfig` does, however
/// many configurations are built (tests, one per tenant …).
fn warn_debug_enabled_once(logger: &dyn Logger) {
    static WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !WARNED.swap(true, std::sync::atomic::Ordering::Relaxed) {
        logger.warn(WarningCode::DebugEnabled);
    }
}

/// `MissingAdapterMethods` (Auth.js `lib/utils/assert.ts`) naming `methods`, the methods of
/// a capability the configuration needs, when the adapter does not have it.
fn require_capability(present: bool, methods: &str) -> Result<(), ConfigError> {
    if present {
        Ok(())
    } else {
        Err(ConfigError::MissingAdapterMethods {
            methods: methods.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::CredentialsProvider;

    fn creds() -> CredentialsProvider {
        CredentialsProvider::new().authorize(|_, _| async { Ok(None) })
    }

    fn builder() -> AuthConfigBuilder {
        AuthConfig::builder().provider(creds())
    }

    /// Single-use marks never share the counts' memory (a flood of counted names would
    /// evict them); a store given for the counts keeps the marks too, and one given for
    /// the marks wins.
    #[test]
    fn single_use_marks_never_share_the_counts_memory() {
        use crate::ratelimit::{MemoryRateLimitStore, RateLimitStore, RateLimits};
        let on = RateLimits::recommended();
        let given = || Some(Arc::new(MemoryRateLimitStore::default()) as Arc<dyn RateLimitStore>);
        let s = Stores::resolve(&on, None, None);
        let counts = s.rate_limit_store.expect("limits on: counted in memory");
        assert!(!Arc::ptr_eq(&counts, &s.single_use_store));
        let s = Stores::resolve(&RateLimits::default(), None, None);
        assert!(s.rate_limit_store.is_none());
        let shared = given();
        let s = Stores::resolve(&on, shared.clone(), None);
        assert!(Arc::ptr_eq(&s.single_use_store, shared.as_ref().unwrap()));
        let own = given();
        let s = Stores::resolve(&on, shared, own.clone());
        assert!(Arc::ptr_eq(&s.single_use_store, own.as_ref().unwrap()));
    }

    /// A secret under 32 characters is refused with the command that makes one, in any
    /// position of a rotation; `DangerousOptions::short_secret` lets an existing app's in.
    #[test]
    fn short_secrets_are_refused_unless_dangerous() {
        let long = "x".repeat(MIN_SECRET_CHARS);
        let short = "x".repeat(MIN_SECRET_CHARS - 1);
        assert!(builder().secret(long.as_str()).build().is_ok());
        for secrets in [vec![short.as_str()], vec![long.as_str(), short.as_str()]] {
            let e = builder().secrets(secrets.clone()).build().unwrap_err();
            assert!(
                matches!(e, ConfigError::ShortSecret { chars: 31, .. }),
                "{secrets:?}: {e}"
            );
            assert!(e.to_string().contains("openssl rand -base64 33"), "{e}");
        }
        // Characters, not bytes: 16 two-byte characters are 16.
        let e = builder().secret("é".repeat(16)).build().unwrap_err();
        assert!(
            matches!(e, ConfigError::ShortSecret { chars: 16, .. }),
            "{e}"
        );
        let shared = builder().secret("short").dangerous(DangerousOptions {
            short_secret: true,
            ..DangerousOptions::default()
        });
        assert!(shared.build().is_ok());
    }

    /// An empty or short secret is named by where it came from, with the command that makes
    /// a good one.
    #[test]
    fn secret_errors_name_their_origin() {
        let long = "s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";
        let env = |pairs: &[(&str, &str)]| Env::from_pairs(pairs.iter().copied());
        for (b, index, origin) in [
            (
                builder().env_defaults(&env(&[("AUTH_SECRET", "")])),
                0,
                "AUTH_SECRET",
            ),
            (
                builder().env_defaults(&env(&[("AUTH_SECRET", long), ("AUTH_SECRET_1", "")])),
                0,
                "AUTH_SECRET_1",
            ),
            (
                builder().env_defaults(&env(&[("AUTH_SECRET", ""), ("AUTH_SECRET_2", long)])),
                1,
                "AUTH_SECRET",
            ),
            (builder().secret(""), 0, "AuthConfig::builder().secret(..)"),
            (
                builder().secrets([long, ""]),
                1,
                "AuthConfig::builder().secrets(..)",
            ),
        ] {
            let e = b.build().unwrap_err();
            assert_eq!(e, ConfigError::EmptySecret { index, origin });
            let message = e.to_string();
            assert!(message.starts_with("MissingSecret: "), "{message}");
            assert!(message.contains(origin), "{message}");
            assert!(message.contains("openssl rand -base64 33"), "{message}");
        }
        let e = builder()
            .env_defaults(&env(&[("AUTH_SECRET_1", "short")]))
            .build()
            .unwrap_err();
        assert_eq!(
            e,
            ConfigError::ShortSecret {
                index: 0,
                chars: 5,
                origin: "AUTH_SECRET_1"
            }
        );
        assert!(e.to_string().contains("(AUTH_SECRET_1)"), "{e}");
    }

    #[test]
    fn secrets_from_env_in_rotation_order() {
        let env = Env::from_pairs([("AUTH_SECRET", "0"), ("AUTH_SECRET_1", "1")]);
        let b = builder().apply_env_defaults(&env, false);
        assert_eq!(b.secrets.clone(), vec!["1".to_owned(), "0".to_owned()]);
        let env = Env::from_pairs([
            ("AUTH_SECRET", "0"),
            ("AUTH_SECRET_1", "1"),
            ("AUTH_SECRET_2", "2"),
            ("AUTH_SECRET_3", "3"),
        ]);
        let b = builder().apply_env_defaults(&env, false);
        assert_eq!(b.secrets.clone(), ["3", "2", "1", "0"]);
        let b = builder().secrets(["old"]).apply_env_defaults(&env, false);
        assert_eq!(b.secrets.clone(), ["old"]);
    }

    /// Typed settings from a file count where their variables are not set, with the
    /// variables' rules; a variable that is set wins even when blank.
    #[test]
    fn auth_js_settings_under_the_environment() {
        let file = crate::env::AuthJsSettings {
            secret: Some("file".into()),
            url: Some("http://file.example/api/auth".into()),
            trust_host: Some(false),
        };
        let apply = |env: &[(&str, &str)]| {
            builder()
                .auth_js_settings(file.clone())
                .apply_env_defaults(&Env::from_pairs(env.iter().copied()), false)
        };
        let b = apply(&[("AUTH_SECRET_1", "1")]);
        assert_eq!(b.secrets, ["1", "file"]);
        assert_eq!(
            b.secrets_from,
            SecretsFrom::Env(vec!["AUTH_SECRET_1", "AUTH_SECRET"])
        );
        assert_eq!(b.base_path.as_deref(), Some("/api/auth"));
        assert_eq!(b.url.as_deref(), Some("http://file.example/api/auth"));
        assert_eq!(b.trust_host, Some(true), "a URL trusts its host");
        let b = apply(&[("AUTH_URL", ""), ("AUTH_SECRET", "env")]);
        assert_eq!(b.secrets, ["env"]);
        assert_eq!((b.base_path, b.url), (None, None));
        assert_eq!(b.trust_host, Some(false));
        let no_url = crate::env::AuthJsSettings {
            url: None,
            ..file.clone()
        };
        let trust = |env: &[(&str, &str)]| {
            builder()
                .auth_js_settings(no_url.clone())
                .apply_env_defaults(&Env::from_pairs(env.iter().copied()), false)
                .trust_host
        };
        assert_eq!(trust(&[("VERCEL", "1")]), Some(false));
        assert_eq!(trust(&[("AUTH_TRUST_HOST", "1")]), Some(true));
        assert_eq!(trust(&[("AUTH_URL", "http://env.example")]), Some(true));
    }

    #[test]
    fn base_path_from_auth_url() {
        let env = Env::from_pairs([
            ("AUTH_URL", "http://n/api/auth"),
            ("AUTH_SECRET", "s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
        ]);
        let b = builder().apply_env_defaults(&env, false);
        assert_eq!(b.base_path.as_deref(), Some("/api/auth"));
        assert!(b.warnings.is_empty());
        let b = builder()
            .base_path("/custom")
            .apply_env_defaults(&env, false);
        assert_eq!(b.base_path.as_deref(), Some("/custom"));
        assert_eq!(b.warnings, [WarningCode::EnvUrlBasepathRedundant]);
        let b = builder()
            .base_path("/custom")
            .apply_env_defaults(&env, true);
        assert!(b.warnings.is_empty());
        let env = Env::from_pairs([("AUTH_URL", "not a url")]);
        let b = builder().apply_env_defaults(&env, false);
        assert_eq!(b.base_path.as_deref(), None);
        let config = builder()
            .secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
            .apply_env_defaults(&env, false)
            .build()
            .unwrap();
        assert_eq!(config.base_path(), "/auth");
    }

    #[test]
    fn trust_host_from_env() {
        for (k, v) in [
            ("AUTH_TRUST_HOST", "1"),
            ("VERCEL", "1"),
            ("NODE_ENV", "development"),
            ("NODE_ENV", "test"),
            ("AUTH_URL", "http://x"),
            ("AUTH_TRUST_HOST", "true"),
        ] {
            let b = builder().apply_env_defaults(&Env::from_pairs([(k, v)]), false);
            assert_eq!(b.trust_host, Some(true), "{k}={v}");
        }
        for (k, v) in [
            ("AUTH_TRUST_HOST", "false"),
            ("AUTH_TRUST_HOST", "0"),
            ("NODE_ENV", "production"),
        ] {
            let b = builder().apply_env_defaults(&Env::from_pairs([(k, v)]), false);
            assert_eq!(b.trust_host, Some(false), "{k}={v}");
        }
        let b = builder()
            .trust_host(false)
            .apply_env_defaults(&Env::from_pairs([("AUTH_TRUST_HOST", "1")]), false);
        assert_eq!(b.trust_host, Some(false));
    }

    #[test]
    fn assertions_say_what_to_fix() {
        let e = AuthConfig::builder().provider(creds()).build().unwrap_err();
        assert_eq!(e, ConfigError::MissingSecret);
        let e = AuthConfig::builder()
            .secrets(["a", ""])
            .provider(creds())
            .build()
            .unwrap_err();
        assert_eq!(
            e,
            ConfigError::EmptySecret {
                index: 1,
                origin: "AuthConfig::builder().secrets(..)"
            }
        );
        let e = AuthConfig::builder()
            .secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
            .provider(CredentialsProvider::new())
            .build()
            .unwrap_err();
        assert!(matches!(e, ConfigError::MissingAuthorize { .. }));
        assert!(e.to_string().contains("authorize"));
        let e = AuthConfig::builder()
            .secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
            .provider(creds())
            .session_strategy(SessionStrategy::Database)
            .build()
            .unwrap_err();
        assert_eq!(e, ConfigError::UnsupportedStrategy);
        let e = AuthConfig::builder()
            .secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
            .provider(creds())
            .provider(creds())
            .build()
            .unwrap_err();
        assert_eq!(
            e,
            ConfigError::DuplicateProviderId {
                id: "credentials".into()
            }
        );
        let e = AuthConfig::builder()
            .secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
            .build()
            .unwrap_err();
        assert_eq!(e, ConfigError::NoProviders);
        for bad in ["auth", "/auth/"] {
            let e = AuthConfig::builder()
                .secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
                .provider(creds())
                .base_path(bad)
                .build()
                .unwrap_err();
            assert!(matches!(e, ConfigError::InvalidBasePath { .. }), "{bad}");
        }
        let e = AuthConfig::builder()
            .secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
            .provider(creds().with_id("a/b"))
            .build()
            .unwrap_err();
        assert!(matches!(e, ConfigError::InvalidProviderId { .. }));
        let e = AuthConfig::builder()
            .secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
            .provider(creds())
            .url("ftp://x")
            .build()
            .unwrap_err();
        assert!(matches!(e, ConfigError::InvalidUrl { .. }));
        let e = AuthConfig::builder()
            .secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
            .provider(creds())
            .cookies(CookiesOverrides {
                session_token: crate::cookies::CookieOverride {
                    name: Some("bad name;".into()),
                    ..Default::default()
                },
                ..Default::default()
            })
            .build()
            .unwrap_err();
        assert!(matches!(e, ConfigError::InvalidCookieName { .. }));
        let e = AuthConfig::builder()
            .secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
            .provider(creds())
            .pages(PagesOptions {
                sign_in: Some("login".into()),
                ..Default::default()
            })
            .build()
            .unwrap_err();
        assert!(matches!(e, ConfigError::InvalidPagePath { .. }));
    }

    #[test]
    fn debug_output_redacts_the_secret() {
        let c = AuthConfig::builder()
            .secret("super-secret-value-xxxxxxxxxxxxx")
            .provider(creds())
            .build()
            .unwrap();
        let s = format!("{c:?}");
        assert!(!s.contains("super-secret-value"));
        assert!(s.contains("[redacted]"));
    }
}
