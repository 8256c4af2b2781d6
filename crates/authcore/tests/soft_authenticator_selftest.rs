//! Self-test of `support/soft_authenticator.rs`: its registration and
//! authentication responses are accepted (or, when told to misbehave, rejected)
//! by an independent relying party, `webauthn-rs-core`.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use crate::soft_authenticator::SoftAuthenticator;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;
use url::Url;
use webauthn_rs_core::WebauthnCore;
use webauthn_rs_core::error::WebauthnError;
use webauthn_rs_core::proto::{
    Credential, PublicKeyCredential, RegisterPublicKeyCredential, UserVerificationPolicy,
};

const RP_ID: &str = "localhost";
const ORIGIN: &str = "http://localhost:3000";
const USER_ID: &[u8] = b"user-1234";

fn rp() -> WebauthnCore {
    WebauthnCore::new_unsafe_experts_only(
        "Soft authenticator self-test",
        RP_ID,
        vec![Url::parse(ORIGIN).unwrap()],
        Duration::from_secs(60),
        None,
        None,
    )
}

/// The `publicKey` member of a serialised challenge response.
fn public_key_options(challenge_response: &impl serde::Serialize) -> Value {
    let mut json = serde_json::to_value(challenge_response).unwrap();
    json["publicKey"].take()
}

/// Registers `authenticator` with `rp` (UV policy `Required`).
fn register_with(
    rp: &WebauthnCore,
    authenticator: &mut SoftAuthenticator,
) -> Result<Credential, WebauthnError> {
    let builder = rp
        .new_challenge_register_builder(USER_ID, "alice@example.com", "Alice")
        .unwrap()
        .user_verification_policy(UserVerificationPolicy::Required);
    let (challenge, state) = rp.generate_challenge_register(builder).unwrap();
    let options = public_key_options(&challenge);
    let response = authenticator.register(&options, ORIGIN);
    let response: RegisterPublicKeyCredential = serde_json::from_value(response).unwrap();
    rp.register_credential(&response, &state, None)
}

fn register(rp: &WebauthnCore, authenticator: &mut SoftAuthenticator) -> Credential {
    register_with(rp, authenticator).unwrap()
}

/// One assertion of `authenticator` for `credential`; on success the stored counter is updated.
fn authenticate(
    rp: &WebauthnCore,
    authenticator: &mut SoftAuthenticator,
    credential: &mut Credential,
    policy: UserVerificationPolicy,
) -> Result<webauthn_rs_core::proto::AuthenticationResult, WebauthnError> {
    let builder = rp
        .new_challenge_authenticate_builder(vec![credential.clone()], Some(policy))
        .unwrap();
    let (challenge, state) = rp.generate_challenge_authenticate(builder).unwrap();
    let options = public_key_options(&challenge);
    let response = authenticator.authenticate(&options, ORIGIN);
    let response: PublicKeyCredential = serde_json::from_value(response).unwrap();
    let result = rp.authenticate_credential(&response, &state)?;
    if result.needs_update() {
        credential.counter = result.counter();
        credential.backup_state = result.backup_state();
    }
    Ok(result)
}

/// The error of an authentication that must fail.
fn refused(
    rp: &WebauthnCore,
    authenticator: &mut SoftAuthenticator,
    credential: &mut Credential,
    policy: UserVerificationPolicy,
) -> WebauthnError {
    authenticate(rp, authenticator, credential, policy).unwrap_err()
}

#[test]
fn registration_response_has_the_simplewebauthn_shape() {
    let rp = rp();
    let mut authenticator = SoftAuthenticator::new();
    let builder = rp
        .new_challenge_register_builder(USER_ID, "alice@example.com", "Alice")
        .unwrap();
    let (challenge, _state) = rp.generate_challenge_register(builder).unwrap();
    let options = public_key_options(&challenge);
    let response = authenticator.register(&options, ORIGIN);

    let id = authenticator.credential_id_b64url();
    assert_eq!(authenticator.credential_id().len(), 16);
    assert_eq!(response["id"], id.as_str());
    assert_eq!(response["rawId"], id.as_str());
    assert_eq!(response["type"], "public-key");
    assert_eq!(response["authenticatorAttachment"], "platform");
    assert_eq!(response["clientExtensionResults"], serde_json::json!({}));
    assert_eq!(
        response["response"]["transports"],
        serde_json::json!(["internal"])
    );

    let client_data = URL_SAFE_NO_PAD
        .decode(response["response"]["clientDataJSON"].as_str().unwrap())
        .unwrap();
    assert_eq!(
        String::from_utf8(client_data).unwrap(),
        format!(
            r#"{{"type":"webauthn.create","challenge":{},"origin":"{ORIGIN}","crossOrigin":false}}"#,
            options["challenge"]
        )
    );
    assert_eq!(
        authenticator.user_handle(),
        Some(URL_SAFE_NO_PAD.encode(USER_ID).as_str())
    );
    assert_eq!(authenticator.counter(), 1);
}

#[test]
fn register_then_authenticate_round_trip() {
    let rp = rp();
    let mut authenticator = SoftAuthenticator::new();
    let mut credential = register(&rp, &mut authenticator);
    assert_eq!(credential.cred_id, authenticator.credential_id());
    assert_eq!(credential.counter, 1);
    assert!(credential.user_verified);
    assert!(credential.backup_eligible);
    assert!(credential.backup_state);

    for expected in 2..=4 {
        let result = authenticate(
            &rp,
            &mut authenticator,
            &mut credential,
            UserVerificationPolicy::Required,
        )
        .unwrap();
        assert_eq!(result.cred_id(), &credential.cred_id);
        assert_eq!(result.counter(), expected);
        assert_eq!(authenticator.counter(), expected);
        assert!(result.needs_update());
        assert!(result.user_verified());
        assert!(result.backup_eligible());
        assert!(result.backup_state());
    }
    assert_eq!(credential.counter, 4);
}

#[test]
fn assertion_carries_the_user_handle_and_the_challenge() {
    let rp = rp();
    let mut authenticator = SoftAuthenticator::new();
    let credential = register(&rp, &mut authenticator);
    let builder = rp
        .new_challenge_authenticate_builder(
            vec![credential],
            Some(UserVerificationPolicy::Required),
        )
        .unwrap();
    let (challenge, _state) = rp.generate_challenge_authenticate(builder).unwrap();
    let options = public_key_options(&challenge);
    assert_eq!(options["rpId"], RP_ID);
    let response = authenticator.authenticate(&options, ORIGIN);

    assert_eq!(
        response["response"]["userHandle"],
        URL_SAFE_NO_PAD.encode(USER_ID).as_str()
    );
    let client_data = URL_SAFE_NO_PAD
        .decode(response["response"]["clientDataJSON"].as_str().unwrap())
        .unwrap();
    let client_data: Value = serde_json::from_slice(&client_data).unwrap();
    assert_eq!(client_data["type"], "webauthn.get");
    assert_eq!(client_data["challenge"], options["challenge"]);
    assert_eq!(client_data["origin"], ORIGIN);
    assert_eq!(client_data["crossOrigin"], false);
    let parsed: PublicKeyCredential = serde_json::from_value(response).unwrap();
    assert_eq!(parsed.get_user_unique_id(), Some(USER_ID));
}

#[test]
fn tampered_signature_is_rejected() {
    let rp = rp();
    let mut authenticator = SoftAuthenticator::new();
    let mut credential = register(&rp, &mut authenticator);
    authenticator.tamper_signature = true;
    let err = refused(
        &rp,
        &mut authenticator,
        &mut credential,
        UserVerificationPolicy::Required,
    );
    assert!(
        matches!(err, WebauthnError::AuthenticationFailure),
        "{err:?}"
    );
    // The genuine authenticator still works afterwards.
    authenticator.tamper_signature = false;
    authenticate(
        &rp,
        &mut authenticator,
        &mut credential,
        UserVerificationPolicy::Required,
    )
    .unwrap();
}

#[test]
fn wrong_rp_id_is_rejected() {
    let rp = rp();
    let mut authenticator = SoftAuthenticator::new();
    let mut credential = register(&rp, &mut authenticator);
    authenticator.rp_id_override = Some("evil.example".into());
    let err = refused(
        &rp,
        &mut authenticator,
        &mut credential,
        UserVerificationPolicy::Required,
    );
    assert!(matches!(err, WebauthnError::InvalidRPIDHash), "{err:?}");

    let mut other = SoftAuthenticator::new();
    other.rp_id_override = Some("evil.example".into());
    let err = register_with(&rp, &mut other).unwrap_err();
    assert!(matches!(err, WebauthnError::InvalidRPIDHash), "{err:?}");
}

#[test]
fn wrong_origin_is_rejected() {
    let rp = rp();
    let mut authenticator = SoftAuthenticator::new();
    let mut credential = register(&rp, &mut authenticator);
    let builder = rp
        .new_challenge_authenticate_builder(
            vec![credential.clone()],
            Some(UserVerificationPolicy::Required),
        )
        .unwrap();
    let (challenge, state) = rp.generate_challenge_authenticate(builder).unwrap();
    let response =
        authenticator.authenticate(&public_key_options(&challenge), "http://evil.example");
    let response: PublicKeyCredential = serde_json::from_value(response).unwrap();
    let err = rp.authenticate_credential(&response, &state).unwrap_err();
    assert!(matches!(err, WebauthnError::InvalidRPOrigin), "{err:?}");
    // A valid one afterwards.
    authenticate(
        &rp,
        &mut authenticator,
        &mut credential,
        UserVerificationPolicy::Required,
    )
    .unwrap();
}

#[test]
fn counter_going_backwards_is_rejected() {
    let rp = rp();
    let mut authenticator = SoftAuthenticator::new();
    let mut credential = register(&rp, &mut authenticator);
    authenticate(
        &rp,
        &mut authenticator,
        &mut credential,
        UserVerificationPolicy::Required,
    )
    .unwrap();
    assert_eq!(credential.counter, 2);
    // A clone replaying an older counter value (1 + 1 = 2, not above the stored 2).
    authenticator.set_counter(1);
    let err = refused(
        &rp,
        &mut authenticator,
        &mut credential,
        UserVerificationPolicy::Required,
    );
    assert!(
        matches!(err, WebauthnError::CredentialPossibleCompromise),
        "{err:?}"
    );
}

#[test]
fn zero_counter_step_keeps_the_counter_at_zero_and_is_accepted() {
    let rp = rp();
    let mut authenticator = SoftAuthenticator::new();
    authenticator.counter_step = 0;
    let mut credential = register(&rp, &mut authenticator);
    assert_eq!(credential.counter, 0);
    for _ in 0..2 {
        let result = authenticate(
            &rp,
            &mut authenticator,
            &mut credential,
            UserVerificationPolicy::Required,
        )
        .unwrap();
        assert_eq!(result.counter(), 0);
        assert!(!result.needs_update());
    }
}

#[test]
fn missing_user_verification_is_rejected_when_required() {
    let rp = rp();
    let mut authenticator = SoftAuthenticator::new();
    authenticator.user_verified = false;
    let err = register_with(&rp, &mut authenticator).unwrap_err();
    assert!(matches!(err, WebauthnError::UserNotVerified), "{err:?}");

    // Registered with UV, later assertions without UV fail even under a Preferred policy.
    let mut authenticator = SoftAuthenticator::new();
    let mut credential = register(&rp, &mut authenticator);
    authenticator.user_verified = false;
    let err = refused(
        &rp,
        &mut authenticator,
        &mut credential,
        UserVerificationPolicy::Preferred,
    );
    assert!(matches!(err, WebauthnError::UserNotVerified), "{err:?}");
}

#[test]
fn backup_flags_are_reported_and_eligibility_must_not_change() {
    let rp = rp();
    let mut authenticator = SoftAuthenticator::new();
    authenticator.backup_eligible = false;
    let mut credential = register(&rp, &mut authenticator);
    assert!(!credential.backup_eligible);
    assert!(!credential.backup_state);
    let result = authenticate(
        &rp,
        &mut authenticator,
        &mut credential,
        UserVerificationPolicy::Required,
    )
    .unwrap();
    assert!(!result.backup_eligible());
    assert!(!result.backup_state());

    // A device-bound credential that suddenly claims to be syncable.
    authenticator.backup_eligible = true;
    let err = refused(
        &rp,
        &mut authenticator,
        &mut credential,
        UserVerificationPolicy::Required,
    );
    assert!(
        matches!(err, WebauthnError::CredentialBackupEligibilityInconsistent),
        "{err:?}"
    );
}

#[test]
fn another_authenticator_is_not_the_registered_credential() {
    let rp = rp();
    let mut authenticator = SoftAuthenticator::new();
    let mut credential = register(&rp, &mut authenticator);
    let mut stranger = SoftAuthenticator::new();
    assert_ne!(stranger.credential_id(), authenticator.credential_id());
    let err = refused(
        &rp,
        &mut stranger,
        &mut credential,
        UserVerificationPolicy::Required,
    );
    assert!(matches!(err, WebauthnError::CredentialNotFound), "{err:?}");
    // No userHandle before registration.
    let builder = rp
        .new_challenge_authenticate_builder(
            vec![credential],
            Some(UserVerificationPolicy::Required),
        )
        .unwrap();
    let (challenge, _state) = rp.generate_challenge_authenticate(builder).unwrap();
    let response = stranger.authenticate(&public_key_options(&challenge), ORIGIN);
    assert!(response["response"].get("userHandle").is_none());
}
