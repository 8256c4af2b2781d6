//! WebAuthn protocol pieces over `webauthn-rs-core` (Auth.js `lib/utils/webauthn-utils.ts`),
//! as plain functions: the relying party of a request, ceremony options, verification, and
//! the mapping between `webauthn-rs` credentials and Auth.js `Authenticator` rows (credential
//! id and COSE public key as standard padded base64, `singleDevice` / `multiDevice`,
//! comma-joined transports).

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_cbor_2::Value as Cbor;
use serde_json::{Value, json};
use webauthn_rs_core::proto::{
    AttestationConveyancePreference, AttestationFormat, AuthenticationState,
    AuthenticatorTransport, COSEAlgorithm, COSEKey, COSEKeyType, Credential, ParsedAttestation,
    PublicKeyCredential, RegisterPublicKeyCredential, RegisteredExtensions, RegistrationState,
    UserVerificationPolicy,
};

use crate::providers::webauthn::{Attestation, RelyingPartyOf, UserVerification, WebAuthnProvider};
use crate::types::Authenticator;

mod eddsa;

/// The relying party of a request (built once per relying party by the provider).
pub(crate) fn relying_party(
    p: &WebAuthnProvider,
    url: &url::Url,
) -> Result<Arc<RelyingPartyOf>, CeremonyError> {
    p.relying_party_for(url).map_err(CeremonyError::Setup)
}

/// Why a ceremony step failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CeremonyError {
    /// The response did not verify (origin, RP id, challenge, signature, UV, counter …).
    #[error("{0}")]
    Verification(String),
    /// The configuration or stored data cannot be used (bad origin, unreadable row …).
    #[error("{0}")]
    Setup(String),
}

impl CeremonyError {
    /// The request error: a response that did not verify is the client-safe
    /// `WebAuthnVerificationError`; a setup problem is a `Configuration` error of `provider`.
    pub(crate) fn into_auth_error(self, provider: &str) -> crate::error::AuthError {
        match self {
            CeremonyError::Verification(reason) => {
                crate::error::AuthError::WebAuthnVerificationError { reason }
            }
            CeremonyError::Setup(_) => crate::error::AuthError::CallbackRouteError {
                provider: provider.to_owned(),
                source: self.into(),
            },
        }
    }
}

fn uv_str(uv: UserVerification) -> &'static str {
    match uv {
        UserVerification::Required => "required",
        UserVerification::Preferred => "preferred",
        UserVerification::Discouraged => "discouraged",
    }
}

/// What `webauthn-rs-core` checks when it verifies: the provider's verification requirement
/// (`requireUserVerification`), not what the options asked for.
fn verify_policy(p: &WebAuthnProvider) -> UserVerificationPolicy {
    if p.require_user_verification {
        UserVerificationPolicy::Required
    } else {
        UserVerificationPolicy::Preferred
    }
}

/// The `webauthn-rs-core` algorithms of a COSE id list (validated when the configuration
/// is built); `None` when one is unknown.
fn cose_algorithms(ids: &[i64]) -> Option<Vec<COSEAlgorithm>> {
    ids.iter()
        .map(|&id| match COSEAlgorithm::try_from(i128::from(id)) {
            Ok(COSEAlgorithm::PinUvProtocol | COSEAlgorithm::INSECURE_RS1) | Err(_) => None,
            Ok(alg) => Some(alg),
        })
        .collect()
}

/// The user a registration is for (Auth.js `registerData`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct RegisterUser {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub email: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Registration options (`PublicKeyCredentialCreationOptionsJSON`) as SimpleWebAuthn's
/// `generateRegistrationOptions` writes them under Auth.js (same keys, defaults and
/// `pubKeyCredParams` order), and the state to keep.
pub(crate) fn registration_options(
    p: &WebAuthnProvider,
    rp: &RelyingPartyOf,
    user: &RegisterUser,
    user_handle: &[u8],
    exclude: &[Authenticator],
) -> Result<(Value, RegistrationState), CeremonyError> {
    let core = &rp.core;
    let display = user
        .name
        .as_deref()
        .filter(|n| !n.is_empty())
        .unwrap_or(&user.email);
    // Rows whose id does not decode are skipped, and each id stays paired with its row so
    // the transports below go to the right entry.
    let excluded: Vec<(Vec<u8>, &Authenticator)> = exclude
        .iter()
        .filter_map(|a| Some((STANDARD.decode(&a.credential_id).ok()?, a)))
        .collect();
    let exclude_ids: Vec<_> = excluded.iter().map(|(id, _)| id.clone()).collect();
    let algorithms = cose_algorithms(&p.supported_algorithms).ok_or_else(|| {
        CeremonyError::Setup(format!(
            "unsupported algorithms {:?}",
            p.supported_algorithms
        ))
    })?;
    let builder = core
        .new_challenge_register_builder(user_handle, &user.email, display)
        .map_err(|e| CeremonyError::Setup(format!("registration options: {e:?}")))?
        .user_verification_policy(verify_policy(p))
        .require_resident_key(p.resident_key_required)
        .credential_algorithms(algorithms)
        .attestation(match p.attestation {
            Attestation::None => AttestationConveyancePreference::None,
            Attestation::Indirect => AttestationConveyancePreference::Indirect,
            Attestation::Direct | Attestation::Enterprise => {
                AttestationConveyancePreference::Direct
            }
        })
        .exclude_credentials((!exclude_ids.is_empty()).then_some(exclude_ids));
    let (challenge, state) = core
        .generate_challenge_register(builder)
        .map_err(|e| CeremonyError::Setup(format!("registration options: {e:?}")))?;
    let generated = serde_json::to_value(challenge)
        .map_err(|e| CeremonyError::Setup(e.to_string()))?
        .get_mut("publicKey")
        .map(Value::take)
        .unwrap_or(Value::Null);
    let exclude_credentials: Vec<Value> = excluded
        .iter()
        .map(|(id, row)| credential_descriptor(id, row))
        .collect();
    let resident_key = if p.resident_key_required {
        "required"
    } else {
        "preferred"
    };
    let mut extensions = p.registration_extensions.clone();
    extensions.insert("credProps".into(), Value::Bool(true));
    let options = json!({
        "challenge": generated["challenge"],
        "rp": generated["rp"],
        "user": generated["user"],
        "pubKeyCredParams": p.supported_algorithms.iter()
            .map(|alg| json!({ "alg": alg, "type": "public-key" }))
            .collect::<Vec<_>>(),
        "timeout": generated["timeout"],
        "attestation": p.attestation.as_str(),
        "excludeCredentials": exclude_credentials,
        "authenticatorSelection": {
            "residentKey": resident_key,
            "userVerification": uv_str(p.user_verification),
            "requireResidentKey": p.resident_key_required,
        },
        "extensions": extensions,
    });
    Ok((options, state))
}

/// A `PublicKeyCredentialDescriptorJSON` for a stored authenticator.
fn credential_descriptor(id: &[u8], row: &Authenticator) -> Value {
    let mut entry = json!({ "id": URL_SAFE_NO_PAD.encode(id), "type": "public-key" });
    if let Some(t) = transports_list(row.transports.as_deref()) {
        entry["transports"] = json!(t);
    }
    entry
}

/// Authentication options (`PublicKeyCredentialRequestOptionsJSON`, the keys of
/// SimpleWebAuthn's `generateAuthenticationOptions`) offering the known user's credentials
/// (`allow`; no user: no `allowCredentials` key, as Auth.js, and a discoverable credential is
/// asked for), and the state to keep (without credentials: the one used is looked up by id
/// when the response comes back).
pub(crate) fn authentication_options(
    p: &WebAuthnProvider,
    rp: &RelyingPartyOf,
    allow: Option<&[Authenticator]>,
) -> Result<(Value, AuthenticationState), CeremonyError> {
    let core = &rp.core;
    let builder = core
        .new_challenge_authenticate_builder(Vec::new(), Some(verify_policy(p)))
        .map_err(|e| CeremonyError::Setup(format!("authentication options: {e:?}")))?;
    let (challenge, state) = core
        .generate_challenge_authenticate(builder)
        .map_err(|e| CeremonyError::Setup(format!("authentication options: {e:?}")))?;
    let generated = serde_json::to_value(challenge)
        .map_err(|e| CeremonyError::Setup(e.to_string()))?
        .get_mut("publicKey")
        .map(Value::take)
        .unwrap_or(Value::Null);
    let mut options = json!({ "challenge": generated["challenge"] });
    if let Some(allow) = allow {
        let allow: Vec<Value> = allow
            .iter()
            .filter_map(|a| {
                Some(credential_descriptor(
                    &STANDARD.decode(&a.credential_id).ok()?,
                    a,
                ))
            })
            .collect();
        options["allowCredentials"] = Value::Array(allow);
    }
    options["timeout"] = generated["timeout"].clone();
    options["userVerification"] = json!(uv_str(p.user_verification));
    if let Some(extensions) = &p.authentication_extensions {
        options["extensions"] = Value::Object(extensions.clone());
    }
    options["rpId"] = json!(rp.id);
    Ok((options, state))
}

/// Verifies a registration response against the challenge sent; returns the Auth.js
/// authenticator row (without `userId`). Ed25519 keys are verified by [`eddsa`], every other
/// algorithm by `webauthn-rs-core`.
pub(crate) fn verify_registration(
    p: &WebAuthnProvider,
    rp: &RelyingPartyOf,
    response: &RegisterPublicKeyCredential,
    state: &RegistrationState,
    challenge: &[u8],
    transports: Option<String>,
) -> Result<Authenticator, CeremonyError> {
    let expected = eddsa::Expected {
        challenge,
        rp,
        require_user_verification: p.require_user_verification,
    };
    let (cred_id, counter, backup_eligible, backup_state, parsed_key) =
        match eddsa::verify_registration(response, &expected, &p.supported_algorithms)? {
            Some(r) => (
                r.credential_id,
                r.counter,
                r.backup_eligible,
                r.backup_state,
                None,
            ),
            None => {
                let c = rp
                    .core
                    .register_credential(response, state, None)
                    .map_err(|e| CeremonyError::Verification(format!("{e:?}")))?;
                (
                    c.cred_id.to_vec(),
                    c.counter,
                    c.backup_eligible,
                    c.backup_state,
                    Some(c.cred),
                )
            }
        };
    let credential_id = STANDARD.encode(&cred_id);
    // The key bytes as the authenticator sent them (what Auth.js stores); the COSE encoding
    // of the parsed key only if they cannot be found.
    let key_bytes = match (
        raw_cose_key(&response.response.attestation_object),
        parsed_key,
    ) {
        (Some(bytes), _) => bytes,
        (None, Some(key)) => cose_key_bytes(&key)?,
        (None, None) => return Err(CeremonyError::Verification("no credential key".into())),
    };
    Ok(Authenticator {
        provider_account_id: credential_id.clone(),
        credential_id,
        user_id: None,
        counter: u64::from(counter),
        credential_backed_up: backup_state,
        credential_public_key: STANDARD.encode(key_bytes),
        transports,
        credential_device_type: if backup_eligible {
            "multiDevice"
        } else {
            "singleDevice"
        }
        .to_owned(),
        name: None,
    })
}

/// Verifies an authentication response against the stored row; returns the new signature
/// counter.
pub(crate) fn verify_authentication(
    p: &WebAuthnProvider,
    rp: &RelyingPartyOf,
    response: &PublicKeyCredential,
    state: &AuthenticationState,
    challenge: &[u8],
    row: &Authenticator,
) -> Result<u32, CeremonyError> {
    let key = stored_key(row)?;
    if let Some(ed25519) = eddsa::key_of(&key) {
        let expected = eddsa::Expected {
            challenge,
            rp,
            require_user_verification: p.require_user_verification,
        };
        return eddsa::verify_authentication(response, &expected, &ed25519?, row.counter);
    }
    let credential = credential_from_row(row, verify_policy(p))?;
    rp.core
        .authenticate_single_credential(response, state, &credential)
        .map(|result| result.counter())
        .map_err(|e| CeremonyError::Verification(format!("{e:?}")))
}

/// The CBOR of a row's `credentialPublicKey`.
fn stored_key(row: &Authenticator) -> Result<Cbor, CeremonyError> {
    let bad =
        || CeremonyError::Setup("stored authenticator: unreadable credentialPublicKey".into());
    let bytes = STANDARD
        .decode(&row.credential_public_key)
        .map_err(|_| bad())?;
    serde_cbor_2::from_slice(&bytes).map_err(|_| bad())
}

/// A `webauthn-rs` credential from an Auth.js authenticator row.
pub(crate) fn credential_from_row(
    row: &Authenticator,
    registration_policy: UserVerificationPolicy,
) -> Result<Credential, CeremonyError> {
    let bad = |what: &str| CeremonyError::Setup(format!("stored authenticator: unreadable {what}"));
    let cred_id = STANDARD
        .decode(&row.credential_id)
        .map_err(|_| bad("credentialID"))?;
    let cred = COSEKey::try_from(&stored_key(row)?).map_err(|_| bad("credentialPublicKey"))?;
    let counter = u32::try_from(row.counter).map_err(|_| bad("counter"))?;
    let transports = transports_list(row.transports.as_deref()).map(|list| {
        list.iter()
            .filter_map(|t| serde_json::from_value::<AuthenticatorTransport>(json!(t)).ok())
            .collect()
    });
    Ok(Credential {
        cred_id,
        cred,
        counter,
        transports,
        // Auth.js rows do not record it; the provider's policy decides at each sign-in.
        user_verified: false,
        backup_eligible: row.credential_device_type == "multiDevice",
        backup_state: row.credential_backed_up,
        registration_policy,
        extensions: RegisteredExtensions::none(),
        attestation: ParsedAttestation::default(),
        attestation_format: AttestationFormat::None,
    })
}

/// Auth.js `stringToTransports`: `"usb,ble"` → `["usb","ble"]`; empty → none.
pub(crate) fn transports_list(s: Option<&str>) -> Option<Vec<&str>> {
    let list: Vec<&str> = s?.split(',').filter(|t| !t.is_empty()).collect();
    (!list.is_empty()).then_some(list)
}

/// The credential public key bytes inside a (verified) attestation object: `authData` is
/// rpIdHash (32) ‖ flags (1) ‖ signCount (4) ‖ AAGUID (16) ‖ idLen (2) ‖ id ‖ COSE key ‖
/// extensions (WebAuthn §6.1); the key's end is where its CBOR item ends.
fn raw_cose_key(attestation_object: &[u8]) -> Option<Vec<u8>> {
    let object: Cbor = serde_cbor_2::from_slice(attestation_object).ok()?;
    let Cbor::Map(map) = object else { return None };
    let Cbor::Bytes(auth_data) = map.get(&Cbor::Text("authData".into()))? else {
        return None;
    };
    let id_len_at = 32 + 1 + 4 + 16;
    let id_len = u16::from_be_bytes([*auth_data.get(id_len_at)?, *auth_data.get(id_len_at + 1)?]);
    let key_at = id_len_at + 2 + usize::from(id_len);
    let rest = auth_data.get(key_at..)?;
    let mut de = serde_cbor_2::Deserializer::from_slice(rest);
    let _: Cbor = serde::Deserialize::deserialize(&mut de).ok()?;
    Some(rest[..de.byte_offset()].to_vec())
}

/// The COSE_Key (RFC 9052) CBOR of a public key, as stored in `credentialPublicKey`.
pub(crate) fn cose_key_bytes(key: &COSEKey) -> Result<Vec<u8>, CeremonyError> {
    let int = |i: i64| Cbor::Integer(i128::from(i));
    let mut map = BTreeMap::new();
    map.insert(int(3), int(key.type_ as i64));
    match &key.key {
        COSEKeyType::EC_EC2(k) => {
            map.insert(int(1), int(2));
            map.insert(int(-1), int(k.curve.clone() as i64));
            map.insert(int(-2), Cbor::Bytes(k.x.clone()));
            map.insert(int(-3), Cbor::Bytes(k.y.clone()));
        }
        COSEKeyType::EC_OKP(k) => {
            map.insert(int(1), int(1));
            map.insert(int(-1), int(k.curve.clone() as i64));
            map.insert(int(-2), Cbor::Bytes(k.x.clone()));
        }
        COSEKeyType::RSA(k) => {
            map.insert(int(1), int(3));
            map.insert(int(-1), Cbor::Bytes(k.n.clone()));
            map.insert(int(-2), Cbor::Bytes(k.e.to_vec()));
        }
        #[allow(unreachable_patterns)]
        _ => return Err(CeremonyError::Setup("unsupported public key type".into())),
    }
    serde_cbor_2::to_vec(&Cbor::Map(map)).map_err(|e| CeremonyError::Setup(e.to_string()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use webauthn_rs_core::proto::{COSEAlgorithm, COSEEC2Key, ECDSACurve};

    #[test]
    fn transports_follow_authjs() {
        assert_eq!(
            transports_list(Some("usb,ble,nfc")),
            Some(vec!["usb", "ble", "nfc"])
        );
        assert_eq!(transports_list(Some("")), None);
        assert_eq!(transports_list(None), None);
    }

    #[test]
    fn cose_key_round_trips_through_a_row() {
        let signing = p256::ecdsa::SigningKey::from_slice(&[7u8; 32]).unwrap();
        let point = signing.verifying_key().to_sec1_point(false);
        let key = COSEKey {
            type_: COSEAlgorithm::ES256,
            key: COSEKeyType::EC_EC2(COSEEC2Key {
                curve: ECDSACurve::SECP256R1,
                x: point.x().unwrap().to_vec(),
                y: point.y().unwrap().to_vec(),
            }),
        };
        let row = Authenticator {
            credential_id: STANDARD.encode([1, 2, 3, 4, 5]),
            user_id: None,
            provider_account_id: STANDARD.encode([1, 2, 3, 4, 5]),
            counter: 7,
            credential_backed_up: true,
            credential_public_key: STANDARD.encode(cose_key_bytes(&key).unwrap()),
            transports: Some("internal,hybrid".into()),
            credential_device_type: "multiDevice".into(),
            name: None,
        };
        assert_eq!(row.credential_id, "AQIDBAU=");
        let cred = credential_from_row(&row, UserVerificationPolicy::Required).unwrap();
        assert_eq!(cred.cred, key);
        assert_eq!(cred.cred_id, vec![1, 2, 3, 4, 5]);
        assert_eq!(cred.counter, 7);
        assert!(cred.backup_eligible && cred.backup_state);
        assert_eq!(cred.transports.unwrap().len(), 2);
        let mut bad = row.clone();
        bad.credential_public_key = "not base64!".into();
        assert!(credential_from_row(&bad, UserVerificationPolicy::Required).is_err());
    }

    #[test]
    fn excluded_credentials_keep_their_own_transports() {
        let p = WebAuthnProvider::new();
        let rp = relying_party(&p, &url::Url::parse("http://localhost:3000/").unwrap()).unwrap();
        let row = |id: &str, transports: Option<&str>| Authenticator {
            credential_id: id.into(),
            user_id: None,
            provider_account_id: id.into(),
            counter: 0,
            credential_backed_up: false,
            credential_public_key: String::new(),
            transports: transports.map(Into::into),
            credential_device_type: "singleDevice".into(),
            name: None,
        };
        // The first row's id does not decode: it is skipped, and the second row keeps
        // its own transports instead of inheriting the first's.
        let rows = [
            row("not base64!", Some("ble")),
            row(&STANDARD.encode([9, 9]), Some("usb")),
        ];
        let user = RegisterUser {
            id: None,
            email: "ada@example.com".into(),
            name: None,
        };
        let (options, _) = registration_options(&p, &rp, &user, b"handle", &rows).unwrap();
        let excluded = options["excludeCredentials"].as_array().unwrap();
        assert_eq!(excluded.len(), 1);
        assert_eq!(excluded[0]["transports"], json!(["usb"]));
    }

    #[test]
    fn relying_party_defaults_to_the_request_url() {
        let p = WebAuthnProvider::new();
        let rp = relying_party(
            &p,
            &url::Url::parse("http://localhost:3000/auth/x").unwrap(),
        )
        .unwrap();
        assert_eq!(rp.id, "localhost");
        assert_eq!(rp.name, "localhost:3000");
        assert_eq!(rp.origin, "http://localhost:3000");
        let p = WebAuthnProvider::new().relying_party(crate::providers::RelyingParty::new(
            "example.com",
            "Example",
            "https://login.example.com",
        ));
        let rp = relying_party(&p, &url::Url::parse("http://localhost:3000/").unwrap()).unwrap();
        assert_eq!(
            (rp.id.as_str(), rp.name.as_str(), rp.origin.as_str()),
            ("example.com", "Example", "https://login.example.com")
        );
        // Built once: every request gets the same relying party.
        let again = relying_party(&p, &url::Url::parse("http://other:1/").unwrap()).unwrap();
        assert!(Arc::ptr_eq(&rp, &again));
        // From the request: one per host, and no more than the bound however many hosts.
        let p = WebAuthnProvider::new();
        let a = relying_party(&p, &url::Url::parse("https://a.example/x").unwrap()).unwrap();
        let a2 = relying_party(&p, &url::Url::parse("https://a.example/y").unwrap()).unwrap();
        assert!(Arc::ptr_eq(&a, &a2));
        for i in 0..100 {
            let url = url::Url::parse(&format!("https://h{i}.example/")).unwrap();
            assert_eq!(relying_party(&p, &url).unwrap().id, format!("h{i}.example"));
        }
        assert_eq!(p.relying_parties.kept(), 16);
        // A configured origin that is no URL is a setup error, not a panic.
        let p = WebAuthnProvider::new().relying_party(crate::providers::RelyingParty::new(
            "example.com",
            "Example",
            "not a url",
        ));
        assert!(relying_party(&p, &url::Url::parse("https://x/").unwrap()).is_err());
    }
}
