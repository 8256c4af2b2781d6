//! WebAuthn providers (spec §9): [`WebAuthnProvider::new`] (Auth.js `WebAuthn`) and
//! [`WebAuthnProvider::passkey`] (Auth.js `Passkey`: resident key and user verification
//! required). Ceremonies are verified with `webauthn-rs-core`; authenticators are stored in
//! the Auth.js row format, so credentials registered by an Auth.js app keep working.
//!
//! ```
//! use authcore::AuthConfig;
//! use authcore::adapter::MemoryAdapter;
//! use authcore::providers::WebAuthnProvider;
//!
//! let config = AuthConfig::builder()
//!     .secret("a long random secret")
//!     .adapter(MemoryAdapter::new())
//!     .provider(WebAuthnProvider::passkey())
//!     .build()
//!     .unwrap();
//! # let _ = config;
//! ```

use std::time::Duration;

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
    /// User verification for registration and authentication.
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
    /// Whether conditional UI is on.
    pub fn conditional_ui(&self) -> bool {
        self.enable_conditional_ui
    }
    /// The form fields.
    pub fn fields(&self) -> &[WebAuthnField] {
        &self.form_fields
    }
}
