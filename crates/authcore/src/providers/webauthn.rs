//! WebAuthn providers: [`WebAuthnProvider::new`] (Auth.js `WebAuthn`, `providers/webauthn.ts`)
//! and [`WebAuthnProvider::passkey`] (Auth.js `Passkey`, `providers/passkey.ts`: resident key
//! and user verification required). Ceremonies are verified with `webauthn-rs-core`;
//! authenticators are stored in the Auth.js row format, so credentials registered by an
//! Auth.js app keep working.
//!
//! ```
//! use authcore::AuthConfig;
//! use authcore::adapter::MemoryAdapter;
//! use authcore::providers::WebAuthnProvider;
//!
//! let config = AuthConfig::builder()
//!     .secret("a long random secret-xxxxxxxxxxx")
//!     .adapter(MemoryAdapter::new())
//!     .provider(WebAuthnProvider::passkey())
//!     .build()
//!     .unwrap();
//! # let _ = config;
//! ```

use std::sync::{Arc, RwLock};
use std::time::Duration;

use webauthn_rs_core::WebauthnCore;

use crate::types::SemverString;

/// The relying party: by default taken from the request URL (`hostname`, `host`, `origin`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct RelyingParty {
    /// RP id (a registrable domain, e.g. `example.com`).
    pub id: Option<String>,
    /// Display name.
    pub name: Option<String>,
    /// The exact origin the browser reports (`https://example.com`).
    pub origin: Option<String>,
}

impl RelyingParty {
    /// A relying party with all three values fixed.
    pub fn new(id: impl Into<String>, name: impl Into<String>, origin: impl Into<String>) -> Self {
        RelyingParty {
            id: Some(id.into()),
            name: Some(name.into()),
            origin: Some(origin.into()),
        }
    }
}

/// The relying party of a request, resolved from the configuration and the request URL,
/// with its `webauthn-rs-core` verifier.
#[derive(Debug)]
pub(crate) struct RelyingPartyOf {
    pub id: String,
    pub name: String,
    pub origin: String,
    pub core: WebauthnCore,
}

/// How many request-derived relying parties (one per host) a provider keeps built.
const MAX_KEPT_RELYING_PARTIES: usize = 16;

/// The relying parties a provider has met, each built once: the configured one, or one
/// per host when it comes from the request (a bounded number, so hostile `Host` headers
/// cannot grow it).
#[derive(Debug, Default)]
pub(crate) struct RelyingParties(RwLock<Vec<Arc<RelyingPartyOf>>>);

impl RelyingParties {
    /// How many are kept.
    #[cfg(test)]
    pub(crate) fn kept(&self) -> usize {
        self.0.read().map_or(0, |kept| kept.len())
    }
}

/// User verification requirement (WebAuthn `userVerification`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserVerification {
    /// Ask for it; accept assertions without it (SimpleWebAuthn's default options).
    Preferred,
    /// Refuse assertions and registrations without it (the passkey preset).
    Required,
    /// Do not ask for it.
    Discouraged,
}

/// Attestation conveyance asked for at registration (WebAuthn `attestation`, SimpleWebAuthn
/// `attestationType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attestation {
    /// No attestation (the default, as in Auth.js).
    None,
    /// The client may anonymise the statement.
    Indirect,
    /// The authenticator's statement as made.
    Direct,
    /// An enterprise statement that can identify the device.
    Enterprise,
}

impl Attestation {
    /// The WebAuthn value.
    pub fn as_str(self) -> &'static str {
        match self {
            Attestation::None => "none",
            Attestation::Indirect => "indirect",
            Attestation::Direct => "direct",
            Attestation::Enterprise => "enterprise",
        }
    }
}

/// Auth.js's (SimpleWebAuthn's) default `supportedAlgorithmIDs`: EdDSA, ES256, RS256.
pub const DEFAULT_ALGORITHMS: [i64; 3] = [-8, -7, -257];

/// The COSE algorithms authcore verifies: EdDSA (Ed25519), ES256, ES384, RS256 (what
/// `webauthn-rs-core` 0.6 and `ed25519-dalek` check; SimpleWebAuthn also lists ES512 and
/// the other RSA variants).
const VERIFIABLE_ALGORITHMS: [i64; 4] = [-8, -7, -35, -257];

/// A form field of the WebAuthn sign-in form (Auth.js `formFields`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct WebAuthnField {
    /// Input name (`email`).
    pub name: String,
    /// Label.
    pub label: String,
    /// Whether the field must be filled.
    pub required: bool,
    /// `autocomplete` attribute; conditional UI needs one containing `webauthn`.
    pub autocomplete: Option<String>,
}

/// A WebAuthn provider.
#[derive(Debug, Clone)]
pub struct WebAuthnProvider {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) relying_party: RelyingParty,
    pub(crate) enable_conditional_ui: bool,
    pub(crate) form_fields: Vec<WebAuthnField>,
    pub(crate) user_verification: UserVerification,
    pub(crate) resident_key_required: bool,
    pub(crate) timeout: Duration,
    pub(crate) simple_webauthn_browser_version: Option<SemverString>,
    pub(crate) supported_algorithms: Vec<i64>,
    pub(crate) attestation: Attestation,
    pub(crate) registration_extensions: serde_json::Map<String, serde_json::Value>,
    pub(crate) authentication_extensions: Option<serde_json::Map<String, serde_json::Value>>,
    pub(crate) require_user_verification: bool,
    pub(crate) hide_accounts: bool,
    /// Shared by clones of the provider (the configuration keeps one).
    pub(crate) relying_parties: Arc<RelyingParties>,
}

impl Default for WebAuthnProvider {
    fn default() -> Self {
        Self::new()
    }
}

impl WebAuthnProvider {
    /// Auth.js `WebAuthn()`: id `webauthn`, conditional UI on, 5-minute ceremonies, user
    /// verification preferred, one `email` field (`autocomplete="username webauthn"`).
    pub fn new() -> Self {
        WebAuthnProvider {
            id: "webauthn".into(),
            name: "WebAuthn".into(),
            relying_party: RelyingParty::default(),
            enable_conditional_ui: true,
            form_fields: vec![WebAuthnField {
                name: "email".into(),
                label: "Email".into(),
                required: true,
                autocomplete: Some("username webauthn".into()),
            }],
            user_verification: UserVerification::Preferred,
            resident_key_required: false,
            timeout: Duration::from_secs(300),
            simple_webauthn_browser_version: None,
            supported_algorithms: DEFAULT_ALGORITHMS.to_vec(),
            attestation: Attestation::None,
            registration_extensions: serde_json::Map::new(),
            authentication_extensions: None,
            // SimpleWebAuthn's verify functions default to `requireUserVerification: true`,
            // and Auth.js passes nothing else, so both presets insist on it.
            require_user_verification: true,
            hide_accounts: false,
            relying_parties: Arc::default(),
        }
    }

    /// Auth.js `Passkey()`: id `passkey`, resident key and user verification required.
    pub fn passkey() -> Self {
        WebAuthnProvider {
            id: "passkey".into(),
            name: "Passkey".into(),
            user_verification: UserVerification::Required,
            resident_key_required: true,
            ..Self::new()
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
    /// Sets the display name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }
    /// Fixes the relying party instead of deriving it from each request's URL.
    pub fn relying_party(mut self, rp: RelyingParty) -> Self {
        self.relying_party = rp;
        self
    }
    /// Conditional UI (passkey autofill) on the built-in sign-in page; at most one provider
    /// may enable it.
    pub fn enable_conditional_ui(mut self, on: bool) -> Self {
        self.enable_conditional_ui = on;
        self
    }
    /// Replaces the form fields.
    pub fn form_fields(mut self, fields: Vec<WebAuthnField>) -> Self {
        self.form_fields = fields;
        self
    }
    /// User verification asked for in the registration and authentication options
    /// (`authenticatorSelection.userVerification`, `userVerification`). Whether a response
    /// without it is accepted is [`WebAuthnProvider::require_user_verification`].
    pub fn user_verification(mut self, uv: UserVerification) -> Self {
        self.user_verification = uv;
        self
    }
    /// Whether registrations must create a discoverable (resident) credential.
    pub fn resident_key_required(mut self, required: bool) -> Self {
        self.resident_key_required = required;
        self
    }
    /// Ceremony timeout (default 5 minutes; at most `u32::MAX` milliseconds, as WebAuthn
    /// options carry it).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout.min(Duration::from_millis(u64::from(u32::MAX)));
        self
    }
    /// Auth.js `simpleWebAuthnBrowserVersion`: accepted and validated for compatibility; the
    /// built-in page uses authcore's own script and loads nothing from a CDN.
    pub fn simple_webauthn_browser_version(mut self, version: SemverString) -> Self {
        self.simple_webauthn_browser_version = Some(version);
        self
    }
    /// The credential algorithms offered at registration and accepted, as COSE ids in order
    /// of preference (Auth.js `registrationOptions.supportedAlgorithmIDs`; default
    /// [`DEFAULT_ALGORITHMS`]: EdDSA -8, ES256 -7, RS256 -257). ES384 -35 is also
    /// verified; another id (or an empty list) fails the configuration build.
    pub fn supported_algorithms(mut self, ids: impl IntoIterator<Item = i64>) -> Self {
        self.supported_algorithms = ids.into_iter().collect();
        self
    }
    /// Attestation asked for at registration (default [`Attestation::None`]).
    pub fn attestation(mut self, attestation: Attestation) -> Self {
        self.attestation = attestation;
        self
    }
    /// Client extensions for registration (`registrationOptions.extensions`); `credProps`
    /// is always added, as SimpleWebAuthn does.
    pub fn registration_extensions(
        mut self,
        extensions: serde_json::Map<String, serde_json::Value>,
    ) -> Self {
        self.registration_extensions = extensions;
        self
    }
    /// Client extensions for authentication (`authenticationOptions.extensions`).
    pub fn authentication_extensions(
        mut self,
        extensions: serde_json::Map<String, serde_json::Value>,
    ) -> Self {
        self.authentication_extensions = Some(extensions);
        self
    }
    /// Whether registrations and assertions without the UV flag are refused
    /// (`verifyRegistrationOptions` / `verifyAuthenticationOptions.requireUserVerification`;
    /// default `true`, as SimpleWebAuthn under Auth.js, whatever the options asked for).
    pub fn require_user_verification(mut self, required: bool) -> Self {
        self.require_user_verification = required;
        self
    }
    /// Auth.js `getRelayingParty`: the configured id, name and origin, else the request
    /// URL's `hostname`, `host` and `origin`; built once per relying party. Fails when the
    /// origin is no URL.
    pub(crate) fn relying_party_for(&self, url: &url::Url) -> Result<Arc<RelyingPartyOf>, String> {
        let rp = &self.relying_party;
        let id = rp
            .id
            .as_deref()
            .unwrap_or_else(|| url.host_str().unwrap_or_default());
        // `url.host`: host and non-default port, as the URL serialises them.
        let name = rp
            .name
            .as_deref()
            .unwrap_or(&url[url::Position::BeforeHost..url::Position::AfterPort]);
        let request_origin;
        let origin = match &rp.origin {
            Some(o) => o.as_str(),
            None => {
                request_origin = url.origin().ascii_serialization();
                &request_origin
            }
        };
        let same = |r: &&Arc<RelyingPartyOf>| r.id == id && r.name == name && r.origin == origin;
        if let Ok(kept) = self.relying_parties.0.read()
            && let Some(r) = kept.iter().find(same)
        {
            return Ok(r.clone());
        }
        let origin_url =
            url::Url::parse(origin).map_err(|e| format!("relying party origin {origin:?}: {e}"))?;
        let built = Arc::new(RelyingPartyOf {
            id: id.to_owned(),
            name: name.to_owned(),
            origin: origin.to_owned(),
            core: WebauthnCore::new_unsafe_experts_only(
                name,
                id,
                vec![origin_url],
                self.timeout,
                None,
                None,
            ),
        });
        if let Ok(mut kept) = self.relying_parties.0.write()
            && kept.len() < MAX_KEPT_RELYING_PARTIES
            && !kept.iter().any(|r| same(&r))
        {
            kept.push(built.clone());
        }
        Ok(built)
    }
    /// Whether the algorithm list is non-empty and every id in it can be verified
    /// (checked when the configuration is built).
    pub(crate) fn algorithms_supported(&self) -> bool {
        !self.supported_algorithms.is_empty()
            && self
                .supported_algorithms
                .iter()
                .all(|id| VERIFIABLE_ALGORITHMS.contains(id))
    }
    /// Answer `webauthn-options` alike for every email address (beyond Auth.js, off by
    /// default): without a session the options never list the credential ids of a known
    /// address (Auth.js's `allowCredentials`), so they no longer tell who has an account.
    /// The trade-off: the browser is then offered only discoverable credentials (passkeys,
    /// which conditional UI uses anyway); a security key registered without a resident
    /// key cannot sign in, as it needs its id in the list.
    pub fn hide_accounts(mut self, on: bool) -> Self {
        self.hide_accounts = on;
        self
    }
    /// Whether conditional UI is on.
    pub fn conditional_ui(&self) -> bool {
        self.enable_conditional_ui
    }
    /// The form fields.
    pub fn fields(&self) -> &[WebAuthnField] {
        &self.form_fields
    }
}
