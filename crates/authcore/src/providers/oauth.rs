//! OAuth 2 and OpenID Connect providers: configuration and Auth.js defaults (Auth.js
//! `providers/oauth.ts`, `lib/utils/providers.ts`).
//!
//! ```
//! use authcore::providers::OAuthProvider;
//! // Everything discovered from the issuer, PKCE + nonce, ID token verified against the JWKS.
//! let google = OAuthProvider::oidc("google", "Google")
//!     .issuer("https://accounts.google.com")
//!     .client_id("id")
//!     .client_secret("secret");
//! assert_eq!(google.id(), "google");
//! ```

pub(crate) mod flow;
pub(crate) mod refresh;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use crate::error::BoxError;
use crate::http_client::HttpClient;
use crate::oauth::ProviderCaches;
use crate::types::{JsonObject, ProviderType, TokenSet, User};

/// How the client authenticates at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClientAuthMethod {
    /// HTTP Basic with form-encoded id and secret (default).
    #[default]
    ClientSecretBasic,
    /// `client_id` and `client_secret` in the form body.
    ClientSecretPost,
    /// Public client: only `client_id` in the body (use PKCE).
    None,
    /// A short-lived HS256 JWT signed with the client secret (RFC 7523 client assertion).
    ClientSecretJwt,
    /// A short-lived JWT signed with the client's private key
    /// ([`OAuthProvider::client_private_key_pem`]).
    PrivateKeyJwt,
}

/// The client's private key for `private_key_jwt`. `Debug` never prints the key.
#[derive(Clone)]
pub(crate) struct ClientPrivateKey {
    pub key: Arc<jsonwebtoken::EncodingKey>,
    pub alg: jsonwebtoken::Algorithm,
    pub kid: Option<String>,
}

/// Which checks protect the authorization response (Auth.js `checks`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checks {
    /// PKCE with S256.
    pub pkce: bool,
    /// `state` parameter bound to a cookie.
    pub state: bool,
    /// OIDC `nonce` bound to a cookie.
    pub nonce: bool,
}

impl Default for Checks {
    /// Auth.js default: `["pkce"]`.
    fn default() -> Self {
        Checks {
            pkce: true,
            state: false,
            nonce: false,
        }
    }
}

impl Checks {
    /// No checks (`["none"]`): only for providers that support neither PKCE nor state.
    pub fn none() -> Self {
        Checks {
            pkce: false,
            state: false,
            nonce: false,
        }
    }
}

/// An endpoint: a URL plus extra query parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Endpoint {
    /// The URL (`None`: discovered from the issuer).
    pub url: Option<String>,
    /// Extra query parameters, in order.
    pub params: Vec<(String, String)>,
}

/// Button style on the built-in sign-in page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProviderStyle {
    /// Logo URL.
    pub logo: Option<String>,
    /// Button background / brand colour.
    pub brand_color: Option<String>,
    /// Button text colour.
    pub text: Option<String>,
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;
/// Maps the provider's profile and tokens to a user; `id` becomes `providerAccountId`.
pub type ProfileFn = dyn Fn(&JsonObject, &TokenSet) -> Result<User, BoxError> + Send + Sync;
/// Maps the token set to the fields stored for the account (Auth.js `account()`); the result
/// replaces the token fields of the account passed to callbacks (identifying fields are kept).
pub type AccountFn = dyn Fn(&TokenSet) -> TokenSet + Send + Sync;
/// Custom userinfo request: given the tokens, returns the profile JSON.
pub type UserinfoFn =
    dyn Fn(UserinfoContext) -> BoxFuture<Result<JsonObject, BoxError>> + Send + Sync;

/// What a custom userinfo request receives (Auth.js `userinfo.request({ tokens, provider })`).
#[derive(Clone)]
#[non_exhaustive]
pub struct UserinfoContext {
    /// The validated token response, with any non-standard fields in `extra`.
    pub tokens: TokenSet,
    /// The provider's HTTP client.
    pub http: Arc<dyn HttpClient>,
    /// The provider's client id (some APIs want it in a header).
    pub client_id: String,
    /// The configured or discovered userinfo endpoint.
    pub userinfo_endpoint: Option<String>,
}

impl fmt::Debug for UserinfoContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UserinfoContext")
            .field("client_id", &self.client_id)
            .field("userinfo_endpoint", &self.userinfo_endpoint)
            .finish_non_exhaustive()
    }
}

impl UserinfoContext {
    /// The access token (empty when the response had none, which validation prevents).
    pub fn access_token(&self) -> &str {
        self.tokens.access_token.as_deref().unwrap_or_default()
    }
}

/// A value the provider fills in when it sends a request: some brands want the client id
/// or secret under their own parameter name (TikTok's `client_key`, WeChat's `appid` and
/// `secret`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientValue {
    /// The client id.
    ClientId,
    /// The client secret.
    ClientSecret,
}
/// What a custom token request receives. `Debug` prints neither the code nor the secret.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TokenRequestParams {
    /// The authorization code.
    pub code: String,
    /// The `redirect_uri` used in the authorization request.
    pub redirect_uri: String,
    /// The PKCE verifier, when PKCE is in the checks.
    pub code_verifier: Option<String>,
    /// The configured or discovered token endpoint.
    pub token_endpoint: Option<String>,
    /// The client id.
    pub client_id: String,
    /// The client secret, when one is configured.
    pub client_secret: Option<String>,
}

impl fmt::Debug for TokenRequestParams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenRequestParams")
            .field("redirect_uri", &self.redirect_uri)
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}
/// Custom token request: returns the raw response `(status, JSON body)`, which is then
/// conformed and validated like any token response.
pub type TokenRequestFn = dyn Fn(TokenRequestParams, Arc<dyn HttpClient>) -> BoxFuture<Result<(u16, Value), BoxError>>
    + Send
    + Sync;
/// Rewrites the authorization URL just before the redirect (custom authorization handler).
pub type AuthorizationFn = dyn Fn(String) -> String + Send + Sync;
/// Rewrites a non-compliant token response (status, body) before it is validated.
pub type ConformFn = dyn Fn(u16, Value) -> (u16, Value) + Send + Sync;

/// An OAuth 2 (`type: "oauth"`) or OpenID Connect (`type: "oidc"`) provider.
#[derive(Clone)]
pub struct OAuthProvider {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) kind: ProviderType,
    pub(crate) issuer: Option<String>,
    pub(crate) client_id: String,
    pub(crate) client_secret: Option<String>,
    pub(crate) authorization: Endpoint,
    pub(crate) token: Endpoint,
    pub(crate) userinfo: Endpoint,
    pub(crate) jwks_uri: Option<String>,
    pub(crate) well_known: Option<String>,
    pub(crate) checks: Checks,
    pub(crate) client_auth: ClientAuthMethod,
    pub(crate) id_token: bool,
    /// RP-initiated logout at sign-out ([`OAuthProvider::sign_out_at_provider`]).
    pub(crate) sign_out_at_provider: bool,
    pub(crate) id_token_signed_response_alg: Option<String>,
    pub(crate) userinfo_signed_response_alg: Option<String>,
    pub(crate) profile: Option<Arc<ProfileFn>>,
    pub(crate) account: Option<Arc<AccountFn>>,
    pub(crate) userinfo_request: Option<Arc<UserinfoFn>>,
    pub(crate) conform: Option<Arc<ConformFn>>,
    pub(crate) token_request: Option<Arc<TokenRequestFn>>,
    pub(crate) authorization_client_params: Vec<(String, ClientValue)>,
    pub(crate) token_client_params: Vec<(String, ClientValue)>,
    pub(crate) token_url_client_params: Vec<(String, ClientValue)>,
    pub(crate) default_scope: bool,
    pub(crate) client_private_key: Option<ClientPrivateKey>,
    pub(crate) authorization_hook: Option<Arc<AuthorizationFn>>,
    pub(crate) allow_dangerous_email_account_linking: bool,
    pub(crate) trust_upstream_mfa: bool,
    pub(crate) redirect_proxy_url: Option<String>,
    pub(crate) tenant_issuer: bool,
    pub(crate) style: ProviderStyle,
    pub(crate) http: Option<Arc<dyn HttpClient>>,
    pub(crate) refresh: Option<refresh::RefreshSettings>,
    pub(crate) caches: Arc<ProviderCaches>,
}

impl fmt::Debug for OAuthProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthProvider")
            .field("id", &self.id)
            .field("type", &self.kind)
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[redacted]"),
            )
            .field("checks", &self.checks)
            .finish_non_exhaustive()
    }
}

impl OAuthProvider {
    fn new(kind: ProviderType, id: &str, name: &str) -> Self {
        OAuthProvider {
            id: id.to_owned(),
            name: name.to_owned(),
            kind,
            issuer: None,
            client_id: String::new(),
            client_secret: None,
            authorization: Endpoint::default(),
            token: Endpoint::default(),
            userinfo: Endpoint::default(),
            jwks_uri: None,
            well_known: None,
            checks: Checks::default(),
            client_auth: ClientAuthMethod::default(),
            id_token: kind == ProviderType::Oidc,
            sign_out_at_provider: false,
            id_token_signed_response_alg: None,
            userinfo_signed_response_alg: None,
            profile: None,
            account: None,
            userinfo_request: None,
            conform: None,
            token_request: None,
            authorization_client_params: Vec::new(),
            token_client_params: Vec::new(),
            token_url_client_params: Vec::new(),
            default_scope: true,
            client_private_key: None,
            authorization_hook: None,
            allow_dangerous_email_account_linking: false,
            trust_upstream_mfa: false,
            redirect_proxy_url: None,
            tenant_issuer: false,
            style: ProviderStyle::default(),
            http: None,
            refresh: None,
            caches: Arc::default(),
        }
    }

    /// An OAuth 2 provider: set the three endpoints (or an issuer that supports discovery).
    pub fn oauth(id: &str, name: &str) -> Self {
        Self::new(ProviderType::Oauth, id, name)
    }

    /// An OpenID Connect provider: endpoints and keys are discovered from the issuer.
    pub fn oidc(id: &str, name: &str) -> Self {
        Self::new(ProviderType::Oidc, id, name)
    }

    /// Provider id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Display name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `oauth` or `oidc`.
    pub fn kind(&self) -> ProviderType {
        self.kind
    }

    /// Sign-in button style.
    pub fn button_style(&self) -> &ProviderStyle {
        &self.style
    }

    /// Sets the id (`/auth/signin/<id>`, `/auth/callback/<id>`).
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = id.into();
        self
    }
    /// Sets the display name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }
    /// Issuer identifier (discovery base, `iss` checks).
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }
    /// Client id.
    pub fn client_id(mut self, id: impl Into<String>) -> Self {
        self.client_id = id.into();
        self
    }
    /// Client secret.
    pub fn client_secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(secret.into());
        self
    }
    /// Authorization endpoint URL (its query parameters are kept).
    pub fn authorization_url(mut self, url: impl Into<String>) -> Self {
        self.authorization.url = Some(url.into());
        self
    }
    /// Adds an authorization request parameter (`scope`, `prompt`, `response_mode` …).
    pub fn authorization_param(
        mut self,
        name: impl Into<String>,
        value: impl Into<String>,
    ) -> Self {
        let name = name.into();
        self.authorization.params.retain(|(n, _)| *n != name);
        self.authorization.params.push((name, value.into()));
        self
    }
    /// Adds an authorization parameter holding the client id or secret under a brand's own
    /// name (TikTok's `client_key`), filled in when the request is made, so it follows a
    /// client id set later (by `AUTH_<ID>_ID` too).
    pub fn authorization_client_param(
        mut self,
        name: impl Into<String>,
        value: ClientValue,
    ) -> Self {
        self.authorization_client_params.push((name.into(), value));
        self
    }
    /// Adds a token request body field holding the client id or secret (TikTok's
    /// `client_key`, WeChat's `appid` / `secret`), next to the standard client
    /// authentication.
    pub fn token_client_param(mut self, name: impl Into<String>, value: ClientValue) -> Self {
        self.token_client_params.push((name.into(), value));
        self
    }
    /// Adds a token endpoint query parameter holding the client id or secret (WeChat's
    /// `appid` / `secret`): Auth.js writes a token endpoint's `params` into its URL.
    pub fn token_url_client_param(mut self, name: impl Into<String>, value: ClientValue) -> Self {
        self.token_url_client_params.push((name.into(), value));
        self
    }
    /// Whether an authorization URL configured without a `scope` gets
    /// `scope=openid profile email`, as Auth.js's provider normalisation does for every
    /// provider with an authorization endpoint (`normalizeOAuth` in
    /// `@auth/core/lib/utils/providers`). On by default; a brand that refuses scopes it
    /// does not know turns it off.
    pub fn default_scope(mut self, on: bool) -> Self {
        self.default_scope = on;
        self
    }
    /// Token endpoint URL.
    pub fn token_url(mut self, url: impl Into<String>) -> Self {
        self.token.url = Some(url.into());
        self
    }
    /// Userinfo endpoint URL.
    pub fn userinfo_url(mut self, url: impl Into<String>) -> Self {
        self.userinfo.url = Some(url.into());
        self
    }
    /// Discovery document URL (Auth.js `wellKnown`), when it is not
    /// `<issuer>/.well-known/openid-configuration`. Unlike Auth.js, which only records it,
    /// authcore fetches discovery from it; the document's issuer must still match.
    pub fn well_known(mut self, url: impl Into<String>) -> Self {
        self.well_known = Some(url.into());
        self
    }
    /// JWK Set URL, when not discovered from the issuer.
    pub fn jwks_uri(mut self, url: impl Into<String>) -> Self {
        self.jwks_uri = Some(url.into());
        self
    }
    /// Checks protecting the callback (default: PKCE).
    pub fn checks(mut self, checks: Checks) -> Self {
        self.checks = checks;
        self
    }
    /// Token endpoint client authentication (default: `client_secret_basic`).
    pub fn client_auth(mut self, method: ClientAuthMethod) -> Self {
        self.client_auth = method;
        self
    }
    /// OIDC only: `false` takes the profile from the userinfo endpoint instead of the ID token
    /// (its `sub` must match the ID token's).
    pub fn id_token(mut self, use_id_token: bool) -> Self {
        self.id_token = use_id_token;
        self
    }
    /// OIDC only: signing out also signs the user out at the provider (OpenID Connect
    /// RP-Initiated Logout 1.0, beyond Auth.js). With database sessions, a sign-out of a
    /// user whose account at this provider holds an ID token goes on to the provider's
    /// `end_session_endpoint` (from discovery) with that token as `id_token_hint`, this
    /// client's id and the sign-out's callback URL as `post_logout_redirect_uri` — which
    /// the provider must have registered for the client — instead of to the callback URL
    /// itself. Off by default.
    pub fn sign_out_at_provider(mut self, on: bool) -> Self {
        self.sign_out_at_provider = on;
        self
    }
    /// Expected ID token signing algorithm.
    pub fn id_token_signed_response_alg(mut self, alg: impl Into<String>) -> Self {
        self.id_token_signed_response_alg = Some(alg.into());
        self
    }
    /// OIDC: the userinfo response is a JWT signed with this algorithm (`RS256` …) by a key
    /// of the provider's JWK Set (BankID Norge), verified before its claims are used.
    pub fn userinfo_signed_response_alg(mut self, alg: impl Into<String>) -> Self {
        self.userinfo_signed_response_alg = Some(alg.into());
        self
    }
    /// Maps the profile to a user (default: [`default_profile`]).
    pub fn profile<F>(mut self, f: F) -> Self
    where
        F: Fn(&JsonObject, &TokenSet) -> Result<User, BoxError> + Send + Sync + 'static,
    {
        self.profile = Some(Arc::new(f));
        self
    }
    /// Chooses which token fields are kept for the account (default: all of
    /// `access_token, id_token, refresh_token, expires_at, scope, token_type, session_state`).
    pub fn account<F>(mut self, f: F) -> Self
    where
        F: Fn(&TokenSet) -> TokenSet + Send + Sync + 'static,
    {
        self.account = Some(Arc::new(f));
        self
    }
    /// Custom userinfo request (e.g. GitHub's `/user/emails` fallback).
    pub fn userinfo_request<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(UserinfoContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<JsonObject, BoxError>> + Send + 'static,
    {
        self.userinfo_request = Some(Arc::new(move |cx| Box::pin(f(cx))));
        self
    }
    /// The client's private key (PKCS#8 or PKCS#1 PEM, RSA for `RS256` or EC P-256 for
    /// `ES256`) for `private_key_jwt`, with the `kid` registered at the provider; selects
    /// [`ClientAuthMethod::PrivateKeyJwt`].
    ///
    /// # Errors
    /// A PEM that is not such a key (the message never contains key material).
    pub fn client_private_key_pem(
        mut self,
        pem: &str,
        kid: Option<&str>,
    ) -> Result<Self, crate::error::ConfigError> {
        let (key, alg) = if let Ok(k) = jsonwebtoken::EncodingKey::from_rsa_pem(pem.as_bytes()) {
            (k, jsonwebtoken::Algorithm::RS256)
        } else if let Ok(k) = jsonwebtoken::EncodingKey::from_ec_pem(pem.as_bytes()) {
            (k, jsonwebtoken::Algorithm::ES256)
        } else {
            return Err(crate::error::ConfigError::InvalidClientKey {
                provider: self.id.clone(),
            });
        };
        self.client_private_key = Some(ClientPrivateKey {
            key: Arc::new(key),
            alg,
            kid: kid.map(str::to_owned),
        });
        self.client_auth = ClientAuthMethod::PrivateKeyJwt;
        Ok(self)
    }
    /// Replaces the token request (e.g. a provider with a non-standard exchange).
    pub fn token_request<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(TokenRequestParams, Arc<dyn HttpClient>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(u16, Value), BoxError>> + Send + 'static,
    {
        self.token_request = Some(Arc::new(move |p, c| Box::pin(f(p, c))));
        self
    }
    /// Rewrites the final authorization URL (custom authorization handler).
    pub fn authorization<F>(mut self, f: F) -> Self
    where
        F: Fn(String) -> String + Send + Sync + 'static,
    {
        self.authorization_hook = Some(Arc::new(f));
        self
    }
    /// Rewrites a non-compliant token response (status, JSON body) before validation.
    pub fn conform<F>(mut self, f: F) -> Self
    where
        F: Fn(u16, Value) -> (u16, Value) + Send + Sync + 'static,
    {
        self.conform = Some(Arc::new(f));
        self
    }
    /// Links accounts with the same email automatically (adapters only). Dangerous: only
    /// for providers that verify emails.
    pub fn danger_allow_email_account_linking(mut self, allow: bool) -> Self {
        self.allow_dangerous_email_account_linking = allow;
        self
    }
    /// With second factors on ([`crate::two_factor`]): a sign-in whose verified ID token
    /// says the provider itself asked for several factors (`mfa` in its `amr`, OIDC Core §2,
    /// RFC 8176) counts as two factors: no second step here, and `mfa` in the session's
    /// `amr`. Off by default; turn it on only for a provider you trust to enforce its MFA
    /// (your own IdP), never for one where users choose. Without an ID token, or without
    /// `mfa` in it, the sign-in is one factor as before.
    pub fn trust_upstream_mfa(mut self, trust: bool) -> Self {
        self.trust_upstream_mfa = trust;
        self
    }
    /// Multi-tenant issuers (Microsoft Entra ID `common` / `organizations` / `consumers`):
    /// the discovery document's issuer may contain `{tenantid}`, and each ID token must then
    /// carry that issuer with its own `tid` filled in.
    pub fn tenant_templated_issuer(mut self, enabled: bool) -> Self {
        self.tenant_issuer = enabled;
        self
    }
    /// Per-provider redirect proxy (overrides the config's `redirect_proxy_url`).
    pub fn redirect_proxy_url(mut self, url: impl Into<String>) -> Self {
        self.redirect_proxy_url = Some(url.into().trim_end_matches('/').to_owned());
        self
    }
    /// Sign-in button style.
    pub fn style(mut self, style: ProviderStyle) -> Self {
        self.style = style;
        self
    }
    /// Keeps the access token fresh (refresh-token rotation; Auth.js only documents a recipe):
    /// a session read finding the account's access token within `margin` of its
    /// `expires_at` asks the token endpoint for new tokens with the refresh token
    /// (`grant_type=refresh_token`, the provider's client authentication) and keeps them —
    /// in the JWT (claims `access_token`, `expires_at`, `refresh_token`, `provider`, set at
    /// sign-in) or in the `accounts` row. A failed refresh leaves the session valid with
    /// `"error": "RefreshTokenError"` in it and logs; a later read tries again. Concurrent
    /// reads share one token request, and instances sharing a rate-limit store (Redis)
    /// never send one rotating refresh token twice.
    ///
    /// ```
    /// use std::time::Duration;
    /// let google = authcore::providers::OAuthProvider::oidc("google", "Google")
    ///     .issuer("https://accounts.google.com")
    ///     .refresh_access_token(Duration::from_secs(60));
    /// # let _ = google;
    /// ```
    pub fn refresh_access_token(mut self, margin: std::time::Duration) -> Self {
        self.refresh = Some(refresh::RefreshSettings { margin });
        self
    }

    /// Replaces the HTTP client for this provider (Auth.js `customFetch`).
    pub fn http_client(mut self, client: impl HttpClient) -> Self {
        self.http = Some(Arc::new(client));
        self
    }

    /// Sets the shared default client where none was given (done once by `build()`); false
    /// when there is none (authcore built without its `reqwest` feature).
    pub(crate) fn resolve_http_client(&mut self) -> bool {
        if self.http.is_none() {
            self.http = crate::http_client::default_client();
        }
        self.http.is_some()
    }

    /// The HTTP client of every request to the provider: the one given, else the shared
    /// default (`build()` has resolved it and refuses a provider without one; the fallback
    /// serves a provider used unbuilt).
    pub(crate) fn client(&self) -> Arc<dyn HttpClient> {
        self.http
            .clone()
            .or_else(crate::http_client::default_client)
            .unwrap_or_else(|| Arc::new(crate::http_client::NoClient))
    }

    pub(crate) fn apply_env(&mut self, env: &super::ProviderEnv) {
        if self.client_id.is_empty()
            && let Some(v) = &env.client_id
        {
            self.client_id.clone_from(v);
        }
        if self.client_secret.is_none() {
            self.client_secret.clone_from(&env.client_secret);
        }
        if self.issuer.is_none() {
            self.issuer.clone_from(&env.issuer);
        }
    }

    /// Whether the authorization response comes as a form POST.
    pub(crate) fn is_form_post(&self) -> bool {
        let in_params = self
            .authorization
            .params
            .iter()
            .any(|(n, v)| n == "response_mode" && v == "form_post");
        let in_url = self.authorization.url.as_deref().is_some_and(|u| {
            url::Url::parse(u).is_ok_and(|u| {
                u.query_pairs()
                    .any(|(n, v)| n == "response_mode" && v == "form_post")
            })
        });
        in_params || in_url
    }

    /// The redirect proxy in effect: the provider's, else the config's; never for
    /// `form_post` providers (Auth.js `parseProviders` in `lib/utils/providers.ts`).
    pub(crate) fn effective_redirect_proxy<'a>(
        &'a self,
        config: Option<&'a str>,
    ) -> Option<&'a str> {
        if self.is_form_post() {
            return None;
        }
        self.redirect_proxy_url.as_deref().or(config)
    }

    /// The first endpoint that is neither configured nor discoverable (Auth.js
    /// `InvalidEndpoints` check in `lib/utils/assert.ts`).
    pub(crate) fn missing_endpoint(&self) -> Option<&'static str> {
        if self.issuer.is_some() {
            return None;
        }
        [
            ("authorization", &self.authorization),
            ("token", &self.token),
            ("userinfo", &self.userinfo),
        ]
        .into_iter()
        .find(|(key, e)| {
            e.url.is_none()
                && !(*key == "userinfo" && self.userinfo_request.is_some())
                && !(*key == "token" && self.token_request.is_some())
        })
        .map(|(k, _)| k)
    }

    /// The value of a [`ClientValue`] for this provider.
    pub(crate) fn client_value(&self, v: &ClientValue) -> &str {
        match v {
            ClientValue::ClientId => &self.client_id,
            ClientValue::ClientSecret => self.client_secret.as_deref().unwrap_or_default(),
        }
    }

    pub(crate) fn map_profile(
        &self,
        profile: &JsonObject,
        tokens: &TokenSet,
    ) -> Result<User, BoxError> {
        match &self.profile {
            Some(f) => f(profile, tokens),
            None => Ok(default_profile(profile)),
        }
    }
}

fn string_claim(p: &JsonObject, key: &str) -> Option<String> {
    match p.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Auth.js default profile mapping (`defaultProfile` in `lib/utils/providers.ts`):
/// `id = sub ?? id`, `name = name ?? nickname ?? preferred_username`, `email`,
/// `image = picture`.
pub fn default_profile(p: &JsonObject) -> User {
    User {
        id: string_claim(p, "sub").or_else(|| string_claim(p, "id")),
        name: string_claim(p, "name")
            .or_else(|| string_claim(p, "nickname"))
            .or_else(|| string_claim(p, "preferred_username")),
        email: string_claim(p, "email"),
        image: string_claim(p, "picture"),
        ..User::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn default_profile_follows_authjs() {
        let p = json!({"sub": "s1", "nickname": "nick", "email": "A@B.c", "picture": "p"});
        let u = default_profile(p.as_object().unwrap());
        assert_eq!(u.id.as_deref(), Some("s1"));
        assert_eq!(u.name.as_deref(), Some("nick"));
        assert_eq!(u.image.as_deref(), Some("p"));
        let p = json!({"id": 42, "preferred_username": "pu"});
        let u = default_profile(p.as_object().unwrap());
        assert_eq!(u.id.as_deref(), Some("42"));
        assert_eq!(u.name.as_deref(), Some("pu"));
    }

    #[test]
    fn endpoint_requirements() {
        let p = OAuthProvider::oidc("x", "X");
        assert_eq!(p.missing_endpoint(), Some("authorization"));
        let p = OAuthProvider::oauth("x", "X").authorization_url("https://a");
        assert_eq!(p.missing_endpoint(), Some("token"));
        let p = p.token_url("https://t");
        assert_eq!(p.missing_endpoint(), Some("userinfo"));
        assert_eq!(p.userinfo_url("https://u").missing_endpoint(), None);
        assert_eq!(
            OAuthProvider::oidc("x", "X")
                .issuer("https://i")
                .missing_endpoint(),
            None
        );
        assert!(
            OAuthProvider::oidc("x", "X")
                .authorization_param("response_mode", "form_post")
                .is_form_post()
        );
    }

    #[test]
    fn debug_redacts_the_client_secret() {
        let p = OAuthProvider::oidc("x", "X").client_secret("very-secret");
        assert!(!format!("{p:?}").contains("very-secret"));
    }
}
