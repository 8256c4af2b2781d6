//! Providers: one module per provider type.

// Each item has one public path: the credentials, OAuth and WebAuthn providers' items are
// here (their modules are private); the email provider's, with its message and the HTTP
// mail services, in `email`; the presets in `catalog`.
#[cfg(feature = "oauth")]
pub mod catalog;
pub(crate) mod credentials;
#[cfg(feature = "email")]
pub mod email;
#[cfg(feature = "oauth")]
pub(crate) mod oauth;
#[cfg(feature = "webauthn")]
pub(crate) mod webauthn;

pub use crate::env::ProviderEnv;
pub use credentials::{AuthorizeError, AuthorizeRequest, CredentialField, CredentialsProvider};
#[cfg(feature = "oauth")]
pub use oauth::{
    AccountFn, AuthorizationFn, Checks, ClientAuthMethod, ClientValue, ConformFn, Endpoint,
    OAuthProvider, ProfileFn, ProviderStyle, TokenRequestFn, TokenRequestParams, UserinfoContext,
    UserinfoFn, default_profile,
};
#[cfg(feature = "webauthn")]
pub use webauthn::{
    Attestation, DEFAULT_ALGORITHMS, RelyingParty, UserVerification, WebAuthnField,
    WebAuthnProvider,
};

use crate::types::ProviderType;
#[cfg(feature = "email")]
use email::EmailProvider;

/// A configured provider.
#[non_exhaustive]
#[derive(Clone)]
pub enum Provider {
    /// Credentials provider.
    Credentials(CredentialsProvider),
    /// Email (magic link) provider.
    #[cfg(feature = "email")]
    Email(Box<EmailProvider>),
    /// OAuth 2 or OpenID Connect provider (boxed: it is much larger than the others).
    #[cfg(feature = "oauth")]
    OAuth(Box<OAuthProvider>),
    /// WebAuthn / passkey provider.
    #[cfg(feature = "webauthn")]
    WebAuthn(Box<WebAuthnProvider>),
}

impl std::fmt::Debug for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Provider")
            .field("id", &self.id())
            .field("type", &self.kind())
            .finish()
    }
}

impl Provider {
    /// Provider id (path segment of its routes).
    pub fn id(&self) -> &str {
        match self {
            Provider::Credentials(p) => &p.id,
            #[cfg(feature = "oauth")]
            Provider::OAuth(p) => &p.id,
            #[cfg(feature = "email")]
            Provider::Email(p) => &p.id,
            #[cfg(feature = "webauthn")]
            Provider::WebAuthn(p) => &p.id,
        }
    }

    /// Display name.
    pub fn name(&self) -> &str {
        match self {
            Provider::Credentials(p) => &p.name,
            #[cfg(feature = "oauth")]
            Provider::OAuth(p) => &p.name,
            #[cfg(feature = "email")]
            Provider::Email(p) => &p.name,
            #[cfg(feature = "webauthn")]
            Provider::WebAuthn(p) => &p.name,
        }
    }

    /// Provider type.
    pub fn kind(&self) -> ProviderType {
        match self {
            Provider::Credentials(_) => ProviderType::Credentials,
            #[cfg(feature = "oauth")]
            Provider::OAuth(p) => p.kind,
            #[cfg(feature = "email")]
            Provider::Email(_) => ProviderType::Email,
            #[cfg(feature = "webauthn")]
            Provider::WebAuthn(_) => ProviderType::Webauthn,
        }
    }

    /// Whether the provider is a way to sign in: every provider but an email provider with
    /// magic links off ([`EmailProvider::magic_links`]), which only mails.
    pub(crate) fn signs_in(&self) -> bool {
        match self {
            #[cfg(feature = "email")]
            Provider::Email(p) => p.magic_links,
            _ => true,
        }
    }

    /// Whether sign-ins keep the account's tokens to refresh its access token
    /// ([`OAuthProvider::refresh_access_token`]).
    pub(crate) fn refreshes_tokens(&self) -> bool {
        #[cfg(feature = "oauth")]
        if let Provider::OAuth(o) = self {
            return o.refresh.is_some();
        }
        false
    }

    /// Whether a sign-in through this provider proves that the user owns an address: an
    /// email provider with magic links, or an OAuth provider that links accounts by email.
    pub(crate) fn proves_email(&self) -> bool {
        match self {
            #[cfg(feature = "email")]
            Provider::Email(p) => p.magic_links,
            #[cfg(feature = "oauth")]
            Provider::OAuth(o) => o.allow_dangerous_email_account_linking,
            _ => false,
        }
    }

    /// Fills client id / secret / issuer / API key from `AUTH_<ID>_*` values (Auth.js
    /// `setEnvDefaults` in `lib/utils/env.ts`).
    pub(crate) fn apply_env(&mut self, env: &ProviderEnv) {
        match self {
            // Credentials providers have nothing to fill.
            Provider::Credentials(_) => {
                let _ = env;
            }
            #[cfg(feature = "webauthn")]
            Provider::WebAuthn(_) => {}
            #[cfg(feature = "oauth")]
            Provider::OAuth(p) => p.apply_env(env),
            #[cfg(feature = "email")]
            Provider::Email(p) => p.apply_env(env),
        }
    }
}

#[cfg(feature = "webauthn")]
impl From<WebAuthnProvider> for Provider {
    fn from(p: WebAuthnProvider) -> Self {
        Provider::WebAuthn(Box::new(p))
    }
}

#[cfg(feature = "email")]
impl From<EmailProvider> for Provider {
    fn from(p: EmailProvider) -> Self {
        Provider::Email(Box::new(p))
    }
}

#[cfg(feature = "oauth")]
impl From<OAuthProvider> for Provider {
    fn from(p: OAuthProvider) -> Self {
        Provider::OAuth(Box::new(p))
    }
}

impl From<CredentialsProvider> for Provider {
    fn from(p: CredentialsProvider) -> Self {
        Provider::Credentials(p)
    }
}
