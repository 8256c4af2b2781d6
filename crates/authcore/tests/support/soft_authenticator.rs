//! Test harness: a software WebAuthn authenticator (ES256 / P-256 by default, EdDSA /
//! Ed25519 with [`SoftAuthenticator::ed25519`]; `none` attestation) that also plays the
//! browser's part of the ceremony.
//!
//! Include it from an integration test with
//! `#[path = "support/soft_authenticator.rs"] mod soft_authenticator;`.
//!
//! [`SoftAuthenticator::register`] and [`SoftAuthenticator::authenticate`] take
//! the options object the server hands to `@simplewebauthn/browser`
//! (`PublicKeyCredentialCreationOptionsJSON` / `PublicKeyCredentialRequestOptionsJSON`,
//! i.e. the `publicKey` member, not the wrapper) and return exactly the JSON that
//! `startRegistration()` / `startAuthentication()` (v9) post back
//! (`RegistrationResponseJSON` / `AuthenticationResponseJSON`): binary fields as
//! unpadded base64url strings, `clientExtensionResults: {}` and
//! `authenticatorAttachment: "platform"`.
//!
//! One authenticator holds one credential (key pair, 16-byte random id, signature
//! counter and the user handle learnt at registration). The public fields tweak
//! what it reports or let a test forge bad responses.
#![allow(dead_code)]

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::ecdsa::signature::Signer as _;
use p256::ecdsa::{Signature, SigningKey};
use serde_cbor_2::Value as Cbor;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

/// Authenticator data flag: user present.
const FLAG_UP: u8 = 0x01;
/// Authenticator data flag: user verified.
const FLAG_UV: u8 = 0x04;
/// Authenticator data flag: backup eligible.
const FLAG_BE: u8 = 0x08;
/// Authenticator data flag: backup state (backed up).
const FLAG_BS: u8 = 0x10;
/// Authenticator data flag: attested credential data included.
const FLAG_AT: u8 = 0x40;

/// A credential's private key.
#[derive(Clone)]
enum CredentialKey {
    /// ES256 (COSE -7).
    P256(SigningKey),
    /// EdDSA (COSE -8).
    Ed25519(ed25519_dalek::SigningKey),
}

/// A software passkey: one ES256 (or EdDSA) credential, answering registration and
/// authentication options as `@simplewebauthn/browser` v9 would.
#[derive(Clone)]
pub struct SoftAuthenticator {
    /// The credential's private key.
    key: CredentialKey,
    /// The credential id (16 random bytes).
    credential_id: Vec<u8>,
    /// The signature counter last reported.
    counter: u32,
    /// `user.id` of the registration options (base64url, kept verbatim), sent back
    /// as `userHandle`.
    user_handle: Option<String>,
    /// Set the UV flag (default `true`); UP is always set.
    pub user_verified: bool,
    /// Set the BE flag, and BS with it (default `true`, a synced passkey).
    pub backup_eligible: bool,
    /// Counter increment (default 1): the counter is set to it at registration and
    /// increased by it before each assertion; 0 keeps the counter at 0 like
    /// synced passkeys do.
    pub counter_step: u32,
    /// Hash this RP id into the authenticator data instead of the one in the options.
    pub rp_id_override: Option<String>,
    /// Corrupt the assertion signature (flips bits of its last byte; the DER stays well formed).
    pub tamper_signature: bool,
    /// Make ES256 assertions whose `r` and `s` both fill 32 bytes (default `false`): about
    /// one signature in 128 has a shorter one, which `@simplewebauthn/server` 9.0.3 (under
    /// Auth.js 0.41.3) fails to verify, so tests that compare with it set this. The
    /// signature stays deterministic: the client data gets Chrome's
    /// `other_keys_can_be_added_here` member until the signature is full length.
    pub full_length_ecdsa: bool,
}

impl Default for SoftAuthenticator {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for SoftAuthenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SoftAuthenticator")
            .field("credential_id", &self.credential_id_b64url())
            .field("counter", &self.counter)
            .field("user_handle", &self.user_handle)
            .field("user_verified", &self.user_verified)
            .field("backup_eligible", &self.backup_eligible)
            .field("counter_step", &self.counter_step)
            .field("rp_id_override", &self.rp_id_override)
            .field("tamper_signature", &self.tamper_signature)
            .finish_non_exhaustive()
    }
}

impl SoftAuthenticator {
    /// A fresh authenticator with a new random key and credential id, counter 0 and the
    /// default behaviour (UV, BE+BS, counter step 1, no tampering).
    pub fn new() -> Self {
        let key = loop {
            let mut seed = [0u8; 32];
            getrandom::fill(&mut seed).expect("getrandom failed");
            // Rejects 0 and values >= the curve order; try again then.
            if let Ok(key) = SigningKey::from_slice(&seed) {
                break key;
            }
        };
        Self::with_key(CredentialKey::P256(key))
    }

    /// A fresh authenticator whose credential is an Ed25519 key (COSE EdDSA, -8), as many
    /// security keys make when the server offers EdDSA first.
    pub fn ed25519() -> Self {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).expect("getrandom failed");
        Self::with_key(CredentialKey::Ed25519(
            ed25519_dalek::SigningKey::from_bytes(&seed),
        ))
    }

    fn with_key(key: CredentialKey) -> Self {
        let mut credential_id = vec![0u8; 16];
        getrandom::fill(&mut credential_id).expect("getrandom failed");
        SoftAuthenticator {
            key,
            credential_id,
            counter: 0,
            user_handle: None,
            user_verified: true,
            backup_eligible: true,
            counter_step: 1,
            rp_id_override: None,
            tamper_signature: false,
            full_length_ecdsa: false,
        }
    }

    /// The credential's COSE algorithm id (-7 ES256, -8 EdDSA).
    pub fn algorithm(&self) -> i64 {
        match self.key {
            CredentialKey::P256(_) => -7,
            CredentialKey::Ed25519(_) => -8,
        }
    }

    /// The raw credential id.
    pub fn credential_id(&self) -> &[u8] {
        &self.credential_id
    }

    /// The credential id as unpadded base64url (the `id`/`rawId` of the responses).
    pub fn credential_id_b64url(&self) -> String {
        URL_SAFE_NO_PAD.encode(&self.credential_id)
    }

    /// The signature counter last reported (0 before registration).
    pub fn counter(&self) -> u32 {
        self.counter
    }

    /// Overwrite the signature counter (e.g. to simulate a cloned authenticator);
    /// the next assertion reports `c + counter_step`.
    pub fn set_counter(&mut self, c: u32) {
        self.counter = c;
    }

    /// The user handle learnt at registration (`user.id` of the options, base64url verbatim).
    pub fn user_handle(&self) -> Option<&str> {
        self.user_handle.as_deref()
    }

    /// Replaces the `userHandle` sent with assertions.
    pub fn set_user_handle(&mut self, user_handle: impl Into<String>) {
        self.user_handle = Some(user_handle.into());
    }

    /// Answer registration options (`PublicKeyCredentialCreationOptionsJSON`) as
    /// `navigator.credentials.create()` + `@simplewebauthn/browser` would, returning
    /// `RegistrationResponseJSON`. Resets the counter to `counter_step` and remembers
    /// `user.id` as the user handle. Panics on malformed options.
    pub fn register(&mut self, options: &Value, origin: &str) -> Value {
        let challenge = str_field(options, "challenge");
        let rp_id = str_field(&options["rp"], "id");
        let user_id = str_field(&options["user"], "id");
        if let Some(params) = options.get("pubKeyCredParams") {
            let params = params
                .as_array()
                .expect("options.pubKeyCredParams must be an array");
            let alg = self.algorithm();
            assert!(
                params.iter().any(|p| p["alg"].as_i64() == Some(alg)),
                "options.pubKeyCredParams does not allow {alg}: {params:?}"
            );
        }

        self.user_handle = Some(user_id.to_owned());
        self.counter = self.counter_step;

        let client_data_json = client_data_json("webauthn.create", challenge, origin);
        let mut auth_data = self.authenticator_data(rp_id, FLAG_AT);
        auth_data.extend_from_slice(&[0u8; 16]); // AAGUID: none
        let id_len = u16::try_from(self.credential_id.len()).expect("credential id too long");
        auth_data.extend_from_slice(&id_len.to_be_bytes());
        auth_data.extend_from_slice(&self.credential_id);
        auth_data.extend_from_slice(&self.cose_public_key());

        let attestation_object = cbor_map([
            (Cbor::Text("fmt".into()), Cbor::Text("none".into())),
            (Cbor::Text("attStmt".into()), Cbor::Map(BTreeMap::new())),
            (Cbor::Text("authData".into()), Cbor::Bytes(auth_data)),
        ]);
        let attestation_object =
            serde_cbor_2::to_vec(&attestation_object).expect("CBOR encoding failed");

        let id = self.credential_id_b64url();
        json!({
            "id": id,
            "rawId": id,
            "type": "public-key",
            "response": {
                "clientDataJSON": URL_SAFE_NO_PAD.encode(client_data_json),
                "attestationObject": URL_SAFE_NO_PAD.encode(attestation_object),
                "transports": ["internal"],
            },
            "clientExtensionResults": {},
            "authenticatorAttachment": "platform",
        })
    }

    /// Answer authentication options (`PublicKeyCredentialRequestOptionsJSON`) as
    /// `navigator.credentials.get()` + `@simplewebauthn/browser` would, returning
    /// `AuthenticationResponseJSON`. Adds `counter_step` to the counter first. Does
    /// not check `allowCredentials` (so tests can offer an unexpected credential);
    /// `userHandle` is left out if this authenticator was never registered.
    /// Panics on malformed options.
    pub fn authenticate(&mut self, options: &Value, origin: &str) -> Value {
        let challenge = str_field(options, "challenge");
        let rp_id = str_field(options, "rpId");

        self.counter = self.counter.wrapping_add(self.counter_step);

        let auth_data = self.authenticator_data(rp_id, 0);
        let (client_data_json, mut signature) = (0u32..)
            .find_map(|attempt| {
                let mut client_data_json = client_data_json("webauthn.get", challenge, origin);
                if attempt > 0 {
                    client_data_json.pop();
                    client_data_json.extend_from_slice(
                        format!(r#","other_keys_can_be_added_here":"{attempt}"}}"#).as_bytes(),
                    );
                }
                let mut signed = auth_data.clone();
                signed.extend_from_slice(&Sha256::digest(&client_data_json));
                let signature = match &self.key {
                    CredentialKey::P256(key) => {
                        let signature: Signature = key.sign(&signed);
                        let short =
                            signature.r().to_bytes()[0] == 0 || signature.s().to_bytes()[0] == 0;
                        if short && self.full_length_ecdsa {
                            return None;
                        }
                        signature.to_der().as_bytes().to_vec()
                    }
                    CredentialKey::Ed25519(key) => {
                        use ed25519_dalek::Signer as _;
                        key.sign(&signed).to_bytes().to_vec()
                    }
                };
                Some((client_data_json, signature))
            })
            .expect("some attempt gives a full-length signature");
        if self.tamper_signature {
            *signature.last_mut().expect("empty signature") ^= 0x01;
        }

        let id = self.credential_id_b64url();
        let mut response = json!({
            "clientDataJSON": URL_SAFE_NO_PAD.encode(client_data_json),
            "authenticatorData": URL_SAFE_NO_PAD.encode(auth_data),
            "signature": URL_SAFE_NO_PAD.encode(signature),
        });
        if let Some(user_handle) = &self.user_handle {
            response["userHandle"] = Value::String(user_handle.clone());
        }
        json!({
            "id": id,
            "rawId": id,
            "type": "public-key",
            "response": response,
            "clientExtensionResults": {},
            "authenticatorAttachment": "platform",
        })
    }

    /// sha256(rpId) ‖ flags ‖ signCount (big-endian), with `extra_flags` or'ed in.
    fn authenticator_data(&self, rp_id: &str, extra_flags: u8) -> Vec<u8> {
        let rp_id = self.rp_id_override.as_deref().unwrap_or(rp_id);
        let mut flags = FLAG_UP | extra_flags;
        if self.user_verified {
            flags |= FLAG_UV;
        }
        if self.backup_eligible {
            flags |= FLAG_BE | FLAG_BS;
        }
        let mut data = Sha256::digest(rp_id.as_bytes()).to_vec();
        data.push(flags);
        data.extend_from_slice(&self.counter.to_be_bytes());
        data
    }

    /// The credential public key as a CBOR-encoded COSE_Key (EC2, ES256, P-256) with its
    /// entries in a non-canonical order (kty, alg, x, y, crv): legal CBOR, as some
    /// authenticators write it, and not what a CBOR library re-encoding the parsed key
    /// would produce — so a server that stores a re-encoding instead of these bytes is
    /// caught.
    fn cose_public_key(&self) -> Vec<u8> {
        let key = match &self.key {
            CredentialKey::P256(key) => key,
            CredentialKey::Ed25519(key) => {
                let mut cose = vec![
                    0xa4, // map(4)
                    0x01, 0x01, // kty: OKP
                    0x03, 0x27, // alg: EdDSA (-8)
                    0x20, 0x06, // crv (-1): Ed25519
                    0x21, 0x58, 0x20, // x (-2): bytes(32)
                ];
                cose.extend_from_slice(key.verifying_key().as_bytes());
                return cose;
            }
        };
        let point = key.verifying_key().to_sec1_point(false);
        let x = point.x().expect("uncompressed point has x");
        let y = point.y().expect("uncompressed point has y");
        let mut key = vec![
            0xa5, // map(5)
            0x01, 0x02, // kty: EC2
            0x03, 0x26, // alg: ES256 (-7)
            0x21, 0x58, 0x20, // x (-2): bytes(32)
        ];
        key.extend_from_slice(x);
        key.extend_from_slice(&[0x22, 0x58, 0x20]); // y (-3): bytes(32)
        key.extend_from_slice(y);
        key.extend_from_slice(&[0x20, 0x01]); // crv (-1): P-256
        key
    }
}

/// A CBOR map from its entries.
fn cbor_map<const N: usize>(entries: [(Cbor, Cbor); N]) -> Cbor {
    Cbor::Map(entries.into_iter().collect())
}

/// The clientDataJSON bytes a browser produces for this ceremony.
fn client_data_json(type_: &str, challenge: &str, origin: &str) -> Vec<u8> {
    // Written by hand to keep the browsers' field order whatever serde_json's features.
    let quote = |s: &str| Value::String(s.to_owned()).to_string();
    format!(
        r#"{{"type":{},"challenge":{},"origin":{},"crossOrigin":false}}"#,
        quote(type_),
        quote(challenge),
        quote(origin),
    )
    .into_bytes()
}

/// `value[name]` as a string, panicking with a useful message otherwise.
fn str_field<'a>(value: &'a Value, name: &str) -> &'a str {
    value
        .get(name)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("options: missing string field {name:?} in {value}"))
}
