//! ID tokens signed under the fully specified name `Ed25519` (RFC 9864) for a client that
//! asks for it: discovery offers it beside `EdDSA`, the JWK Set's Ed25519 key names no single
//! algorithm, and jose (npm) verifies the token with `algorithms: ['Ed25519']` (and refuses
//! it for `EdDSA` alone), while the other clients' `EdDSA` tokens verify with the same keys.

use std::time::Duration;

use base64::Engine as _;
use serde_json::Value;

use crate::openid_provider::{
    CB, LOGGED_OUT, Op, RP_SECRET, VERIFIER, code, grant, oidc_rp_dir, start_with, token,
};
use crate::support::browser;

/// The ID token `client` (secret [`RP_SECRET`]) gets for the signed-in user.
async fn id_token(op: &Op, client: &str) -> String {
    let code = code(op, client, true).await;
    let (s, body) = token(op, Some((client, RP_SECRET)), &grant(&code, Some(VERIFIER))).await;
    assert_eq!(s, 200, "{body}");
    body["id_token"].as_str().unwrap().to_owned()
}

/// jose's verdict on `token` for `client`, accepting `alg` alone.
async fn verified(op: &Op, client: &str, alg: &str, token: &str) -> Value {
    let jwks = format!("{}/jwks", op.issuer);
    let steps = browser::run_in(
        &oidc_rp_dir(),
        "node",
        "verify-id-token.mjs",
        &[&jwks, &op.issuer, client, alg, token],
        Duration::from_secs(30),
    )
    .await;
    steps.into_iter().next().unwrap()
}

fn header_alg(token: &str) -> String {
    let header = token.split('.').next().unwrap();
    let header: Value = serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(header)
            .unwrap(),
    )
    .unwrap();
    header["alg"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jose_verifies_id_tokens_signed_as_ed25519() {
    let op = start_with(&format!(
        r#"
[[oidc_provider.clients]]
id = "fully"
secret = "{RP_SECRET}"
redirect_uris = ["{CB}"]
post_logout_redirect_uris = ["{LOGGED_OUT}"]
id_token_signed_response_alg = "Ed25519"
"#
    ))
    .await;
    let meta: Value = reqwest::get(format!("{}/.well-known/openid-configuration", op.issuer))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let algs = &meta["id_token_signing_alg_values_supported"];
    assert_eq!(
        algs,
        &serde_json::json!(["EdDSA", "Ed25519", "RS256"]),
        "{meta}"
    );
    let jwks: Value = reqwest::get(format!("{}/jwks", op.issuer))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let okp = jwks["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kty"] == "OKP")
        .unwrap();
    assert!(okp.get("alg").is_none(), "{jwks}");

    let fully = id_token(&op, "fully").await;
    assert_eq!(header_alg(&fully), "Ed25519");
    let v = verified(&op, "fully", "Ed25519", &fully).await;
    assert_eq!(v["alg"], "Ed25519", "{v}");
    assert_eq!(v["claims"]["aud"], "fully", "{v}");
    assert_eq!(v["claims"]["iss"], op.issuer, "{v}");
    let v = verified(&op, "fully", "EdDSA", &fully).await;
    assert!(v["refused"].is_string(), "only Ed25519 was asked for: {v}");
    // For another client it is refused (its audience).
    let v = verified(&op, "rp", "Ed25519", &fully).await;
    assert!(v["refused"].is_string(), "{v}");

    // RP-initiated logout takes it as id_token_hint (its signature checked): on to the
    // sign-out page; altered, it is refused on a page of authcore's.
    let logout = |hint: String| {
        let mut url = url::Url::parse(&format!("{}/logout", op.issuer)).unwrap();
        url.query_pairs_mut()
            .append_pair("id_token_hint", &hint)
            .append_pair("post_logout_redirect_uri", LOGGED_OUT);
        op.signed_in.get(url).send()
    };
    let r = logout(fully.clone()).await.unwrap();
    assert_eq!(r.status(), 302);
    assert!(
        r.headers()["location"]
            .to_str()
            .unwrap()
            .starts_with("/auth/signout?"),
        "{r:?}"
    );
    let mut altered = fully.into_bytes();
    let at = altered.iter().position(|b| *b == b'.').unwrap() + 5;
    altered[at] = if altered[at] == b'A' { b'B' } else { b'A' };
    let r = logout(String::from_utf8(altered).unwrap()).await.unwrap();
    assert_eq!(r.status(), 400);
    assert!(r.headers().get("location").is_none());

    // A client without the setting still gets EdDSA tokens, which the same keys verify.
    let plain = id_token(&op, "rp").await;
    assert_eq!(header_alg(&plain), "EdDSA");
    let v = verified(&op, "rp", "EdDSA", &plain).await;
    assert_eq!(v["claims"]["aud"], "rp", "{v}");
}
