//! Ed25519 credentials (COSE `EdDSA`, -8), which Auth.js offers first and
//! `webauthn-rs-core` 0.6 parses but cannot verify. For these keys the ceremony checks that
//! `webauthn-rs-core` makes for the other algorithms (WebAuthn §7.1 / §7.2: type, challenge,
//! origin, RP id hash, user presence and verification, counter) are made here over its
//! parsers, and the signature is checked by `ed25519-dalek` (`verify_strict`).

use ed25519_dalek::{Signature, VerifyingKey};
use serde_cbor_2::Value as Cbor;
use webauthn_rs_core::internals::AuthenticatorData;
use webauthn_rs_core::proto::{
    Authentication, Ceremony, CollectedClientData, PublicKeyCredential,
    RegisterPublicKeyCredential, Registration,
};

use super::{CeremonyError, RelyingPartyOf};

/// COSE algorithm id of EdDSA.
pub(crate) const EDDSA: i64 = -8;

/// What a response must match.
pub(crate) struct Expected<'a> {
    pub challenge: &'a [u8],
    pub rp: &'a RelyingPartyOf,
    pub require_user_verification: bool,
}

fn refused(reason: impl Into<String>) -> CeremonyError {
    CeremonyError::Verification(reason.into())
}

/// The Ed25519 key of a COSE_Key map; `None` when it is not an OKP key (another algorithm,
/// left to `webauthn-rs-core`).
pub(crate) fn key_of(cose: &Cbor) -> Option<Result<VerifyingKey, CeremonyError>> {
    let Cbor::Map(map) = cose else { return None };
    let get = |label: i128| map.get(&Cbor::Integer(label));
    // kty 1: OKP (RFC 9053 §7.2).
    if get(1) != Some(&Cbor::Integer(1)) {
        return None;
    }
    let key = || {
        if get(3) != Some(&Cbor::Integer(i128::from(EDDSA))) {
            return Err(refused("OKP credential key without alg EdDSA"));
        }
        // crv 6: Ed25519.
        if get(-1) != Some(&Cbor::Integer(6)) {
            return Err(refused("OKP credential key on a curve other than Ed25519"));
        }
        let Some(Cbor::Bytes(x)) = get(-2) else {
            return Err(refused("Ed25519 credential key without x"));
        };
        let x: &[u8; 32] = x
            .as_slice()
            .try_into()
            .map_err(|_| refused("Ed25519 credential key of the wrong length"))?;
        VerifyingKey::from_bytes(x).map_err(|_| refused("Ed25519 credential key is not a point"))
    };
    Some(key())
}

/// Client data checks (WebAuthn §7.1 steps 7–10, §7.2 steps 11–14).
fn check_client_data(json: &[u8], type_: &str, e: &Expected<'_>) -> Result<(), CeremonyError> {
    let c: CollectedClientData =
        serde_json::from_slice(json).map_err(|err| refused(format!("clientDataJSON: {err}")))?;
    if c.type_ != type_ {
        return Err(refused(format!("client data type {:?}", c.type_)));
    }
    if c.challenge != e.challenge {
        return Err(refused("challenge mismatch"));
    }
    // The origin parsed once, when the relying party was built.
    let allowed = e.rp.core.get_allowed_origins();
    if !allowed.iter().any(|o| o.origin() == c.origin.origin()) {
        return Err(refused(format!("origin {} not allowed", c.origin)));
    }
    if c.cross_origin == Some(true) {
        return Err(refused("cross-origin ceremony"));
    }
    Ok(())
}

/// Authenticator data checks (RP id hash, UP, UV by policy).
fn check_authenticator_data<T: Ceremony>(
    bytes: &[u8],
    e: &Expected<'_>,
) -> Result<AuthenticatorData<T>, CeremonyError> {
    if bytes.get(..32) != Some(crate::crypto::sha256(e.rp.id.as_bytes()).as_slice()) {
        return Err(refused("RP id hash mismatch"));
    }
    let data = AuthenticatorData::<T>::try_from(bytes)
        .map_err(|err| refused(format!("authenticator data: {err:?}")))?;
    if !data.user_present {
        return Err(refused("user not present"));
    }
    if e.require_user_verification && !data.user_verified {
        return Err(refused("user not verified"));
    }
    Ok(data)
}

/// `authData ‖ SHA-256(clientDataJSON)`, what the credential signs.
fn signed_bytes(auth_data: &[u8], client_data_json: &[u8]) -> Vec<u8> {
    let mut signed = Vec::with_capacity(auth_data.len() + 32);
    signed.extend_from_slice(auth_data);
    signed.extend_from_slice(&crate::crypto::sha256(client_data_json));
    signed
}

fn verify_signature(key: &VerifyingKey, signed: &[u8], signature: &[u8]) -> bool {
    Signature::from_slice(signature).is_ok_and(|sig| key.verify_strict(signed, &sig).is_ok())
}

/// A verified Ed25519 registration.
#[derive(Debug)]
pub(crate) struct Registered {
    pub credential_id: Vec<u8>,
    pub counter: u32,
    pub backup_eligible: bool,
    pub backup_state: bool,
}

/// Verifies a registration whose credential key is Ed25519; `Ok(None)` for any other key.
/// Attestation: `none` (what Auth.js asks for by default) and `packed` self-attestation are
/// verified; other statements cannot be, and are refused.
pub(crate) fn verify_registration(
    response: &RegisterPublicKeyCredential,
    e: &Expected<'_>,
    supported_algorithms: &[i64],
) -> Result<Option<Registered>, CeremonyError> {
    let object: Cbor = serde_cbor_2::from_slice(&response.response.attestation_object)
        .map_err(|err| refused(format!("attestation object: {err}")))?;
    let Cbor::Map(object) = object else {
        return Err(refused("attestation object is not a map"));
    };
    let field = |name: &str| object.get(&Cbor::Text(name.into()));
    let Some(Cbor::Bytes(auth_data)) = field("authData") else {
        return Err(refused("attestation object without authData"));
    };
    let data = check_authenticator_data::<Registration>(auth_data, e)?;
    let Some(acd) = &data.acd else {
        return Err(refused("registration without attested credential data"));
    };
    let key = match key_of(&acd.credential_pk) {
        None => return Ok(None),
        Some(key) => key?,
    };
    check_client_data(&response.response.client_data_json, "webauthn.create", e)?;
    if !supported_algorithms.contains(&EDDSA) {
        return Err(refused("EdDSA is not among the supported algorithms"));
    }
    let statement = match field("attStmt") {
        Some(Cbor::Map(m)) => m,
        _ => return Err(refused("attestation object without attStmt")),
    };
    match field("fmt") {
        Some(Cbor::Text(fmt)) if fmt == "none" && statement.is_empty() => {}
        Some(Cbor::Text(fmt))
            if fmt == "packed" && !statement.contains_key(&Cbor::Text("x5c".into())) =>
        {
            let alg = statement.get(&Cbor::Text("alg".into()));
            let Some(Cbor::Bytes(sig)) = statement.get(&Cbor::Text("sig".into())) else {
                return Err(refused("packed attestation without sig"));
            };
            let signed = signed_bytes(auth_data, &response.response.client_data_json);
            if alg != Some(&Cbor::Integer(i128::from(EDDSA)))
                || !verify_signature(&key, &signed, sig)
            {
                return Err(refused("packed self-attestation does not verify"));
            }
        }
        Some(Cbor::Text(fmt)) => {
            return Err(refused(format!(
                "attestation format {fmt:?} cannot be verified for an Ed25519 credential"
            )));
        }
        _ => return Err(refused("attestation object without fmt")),
    }
    Ok(Some(Registered {
        credential_id: acd.credential_id.to_vec(),
        counter: data.counter,
        backup_eligible: data.backup_eligible,
        backup_state: data.backup_state,
    }))
}

/// Verifies an assertion of an Ed25519 credential; returns the new signature counter.
pub(crate) fn verify_authentication(
    response: &PublicKeyCredential,
    e: &Expected<'_>,
    key: &VerifyingKey,
    stored_counter: u64,
) -> Result<u32, CeremonyError> {
    let r = &response.response;
    check_client_data(&r.client_data_json, "webauthn.get", e)?;
    let data = check_authenticator_data::<Authentication>(&r.authenticator_data, e)?;
    let signed = signed_bytes(&r.authenticator_data, &r.client_data_json);
    if !verify_signature(key, &signed, &r.signature) {
        return Err(refused("signature does not verify"));
    }
    // WebAuthn §7.2 step 22, as SimpleWebAuthn: a counter that does not grow means a cloned key,
    // unless both are 0 (authenticators without a counter).
    let counter = u64::from(data.counter);
    if (counter > 0 || stored_counter > 0) && counter <= stored_counter {
        return Err(refused("signature counter did not increase"));
    }
    Ok(data.counter)
}
