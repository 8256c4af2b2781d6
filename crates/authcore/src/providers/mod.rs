//! Providers: one module per provider type.

pub mod catalog;
pub mod credentials;
pub mod email;
pub mod oauth;
pub mod webauthn;

pub use crate::env::ProviderEnv;
pub use credentials::{AuthorizeError, AuthorizeRequest, CredentialField, CredentialsProvider};
pub use email::{EmailProvider, VerificationRequest};
pub use oauth::{
    Checks, ClientAuthMethod, ClientValue, OAuthProvider, ProviderStyle, TokenRequestParams,
    UserinfoContext, default_profile,
};
pub use webauthn::{
    Attestation, DEFAULT_ALGORITHMS, RelyingParty, UserVerification, WebAuthnField,
    WebAuthnProvider,
};

use crate::types::ProviderType;

/// A configured provider.
#[non_exhaustive]
#[derive(Clone)]
pub enum Provider {
    /// Credentials provider.
    Credentials(CredentialsProvider),
    /// Email (magic link) provider.
    Email(Box<EmailProvider>),
    /// OAuth 2 or OpenID Connect provider (boxed: it is much larger than the others).
    OAuth(Box<OAuthProvider>),
    /// WebAuthn / passkey provider.
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
            Provider::OAuth(p) => &p.id,
            Provider::Email(p) => &p.id,
            Provider::WebAuthn(p) => &p.id,
        }
    }

    /// Display name.
    pub fn name(&self) -> &str {
        match self {
            Provider::Credentials(p) => &p.name,
            Provider::OAuth(p) => &p.name,
            Provider::Email(p) => &p.name,
            Provider::WebAuthn(p) => &p.name,
        }
    }

    /// Provider type.
    pub fn kind(&self) -> ProviderType {
        match self {
            Provider::Credentials(_) => ProviderType::Credentials,
            Provider::OAuth(p) => p.kind,
            Provider::Email(_) => ProviderType::Email,
            Provider::WebAuthn(_) => ProviderType::Webauthn,
        }
    }

    /// Fills client id / secret / issuer / API key from `AUTH_<ID>_*` values (Auth.js
    /// `setEnvDefaults` in `lib/utils/env.ts`).
    pub(crate) fn apply_env(&mut self, env: &ProviderEnv) {
        match self {
            // Credentials providers have nothing to fill.
            Provider::Credentials(_) | Provider::WebAuthn(_) => {
                let _ = env;
            }
            Provider::OAuth(p) => p.apply_env(env),
            Provider::Email(p) => p.apply_env(env),
        }
    }
}

impl From<WebAuthnProvider> for Provider {
    fn from(p: WebAuthnProvider) -> Self {
        Provider::WebAuthn(Box::new(p))
    }
}

impl From<EmailProvider> for Provider {
    fn from(p: EmailProvider) -> Self {
        Provider::Email(Box::new(p))
    }
}

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
