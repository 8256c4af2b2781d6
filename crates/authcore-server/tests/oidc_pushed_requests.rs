//! Pushed authorization requests (RFC 9126) at authcore's OpenID Provider: openid-client
//! (npm, `buildAuthorizationUrlWithPAR`) signs in through them with the client of
//! `docs/identity-provider.md`, which requires them; then the attacks, as raw requests, each
//! checked to issue no code and to send nothing to a URI the attacker chose: a
//! `request_uri` replayed, expired, used by another client, made up or altered, a plain
//! request of a client that must push, a pushed request with a `request_uri` inside,
//! oversize pushes; and a `request_uri` pushed at one instance, used once at any.

use std::time::Duration;

use serde_json::{Value, json};

use crate::openid_provider::{
    CB, CHALLENGE, LOGGED_OUT, Op, RP_SECRET, VERIFIER, authorize_as, fresh_dir, fresh_session,
    grant, listener, location, oidc_rp_dir, openid_client_steps_hold, post_form, query,
    rand_suffix, start_instances, start_with, token,
};
use crate::support::{self, browser, pg};

const PREFIX: &str = "urn:ietf:params:oauth:request_uri:";

/// The client the documentation shows, its placeholders filled.
fn documented_client() -> String {
    support::documented("identity-provider.md", "oidc-provider-test: pushed")
        .replace("\"…\"", &format!("\"{RP_SECRET}\""))
        .replace("https://app.example.com/callback", CB)
        .replace("https://app.example.com/logged-out", LOGGED_OUT)
}

/// An authorization request's parameters (PKCE, `state` `st`), without `client_id`.
fn request() -> Vec<(&'static str, &'static str)> {
    vec![
        ("response_type", "code"),
        ("redirect_uri", CB),
        ("scope", "openid email"),
        ("state", "st"),
        ("nonce", "n"),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
    ]
}

/// [`request`] with `extra` parameters in place of its own.
fn with<'a>(extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut f: Vec<(&'a str, &'a str)> = request();
    f.retain(|(k, _)| !extra.iter().any(|(e, _)| e == k));
    f.extend(extra);
    f
}

/// `POST /oidc/par`.
async fn push(op: &Op, basic: Option<(&str, &str)>, form: &[(&str, &str)]) -> (u16, Value) {
    post_form(op, "/oidc/par", basic, form).await
}

/// The `request_uri` of [`request`] pushed by `client` (its secret [`RP_SECRET`], HTTP
/// Basic).
async fn pushed(op: &Op, client: &str) -> String {
    let (status, body) = push(op, Some((client, RP_SECRET)), &request()).await;
    assert_eq!(status, 201, "{body}");
    let expires = body["expires_in"].as_i64().unwrap();
    assert!((60..=90).contains(&expires), "{body}");
    let uri = body["request_uri"].as_str().unwrap().to_owned();
    assert!(uri.starts_with(PREFIX), "{body}");
    uri
}

/// The authorization request `params` by the signed-in user.
async fn authorize(op: &Op, params: &[(&str, &str)]) -> reqwest::Response {
    authorize_as(op, &op.signed_in, params).await
}

/// The code of an answer sent to the registered redirect URI with `state` `st` (the pushed
/// request's), which the token endpoint redeems once.
async fn redeemed(op: &Op, client: &str, r: reqwest::Response) {
    assert_eq!(r.status(), 302);
    let to = location(&r).unwrap();
    assert!(to.as_str().starts_with(CB), "{to}");
    assert_eq!(query(&to, "state").as_deref(), Some("st"), "{to}");
    let code = query(&to, "code").unwrap_or_else(|| panic!("no code: {to}"));
    let (s, body) = token(op, Some((client, RP_SECRET)), &grant(&code, Some(VERIFIER))).await;
    assert_eq!(s, 200, "{body}");
    assert!(body["id_token"].is_string(), "{body}");
}

/// The error page, with no redirect at all and no code.
async fn refused(case: &str, r: reqwest::Response) {
    assert_eq!(r.status(), 400, "{case}");
    assert!(r.headers().get("location").is_none(), "{case}");
    let body = r.text().await.unwrap();
    assert!(
        body.starts_with("This request cannot be answered"),
        "{case}: {body}"
    );
    assert!(!body.contains("code="), "{case}: {body}");
}

/// A `request_uri` as the provider seals it (the salt is the provider's), made at `at`.
fn sealed_at(op: &Op, client: &str, at: i64) -> String {
    let params: Vec<(&str, &str)> = [("client_id", client)]
        .into_iter()
        .chain(request())
        .collect();
    let claims = json!({"client_id": client, "params": params, "jti": format!("crafted-{at}")});
    let claims = claims.as_object().unwrap().clone();
    let sealed = op
        .auth
        .config()
        .jwt()
        .encode_at(&claims, "authcore.oidc-provider.pushed-request", 90, at)
        .unwrap();
    format!("{PREFIX}{sealed}")
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        .try_into()
        .unwrap()
}

/// openid-client pushes each authorization request (the browser's URL has `client_id` and
/// `request_uri` alone), signs in, gets its tokens, refreshes them, reads userinfo, and
/// meets the refusals the plain flow gives; discovery names the endpoint.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openid_client_pushes_its_authorization_requests() {
    let op = start_with(&documented_client()).await;
    let metadata: Value = reqwest::get(format!("{}/.well-known/openid-configuration", op.issuer))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        metadata["pushed_authorization_request_endpoint"],
        format!("{}/par", op.issuer)
    );
    assert_eq!(metadata["require_pushed_authorization_requests"], false);
    let (_browser, cookie) = fresh_session(&op).await;
    let steps = browser::run_in(
        &oidc_rp_dir(),
        "node",
        "openid-client.mjs",
        &[
            &op.issuer,
            "pushing-app",
            RP_SECRET,
            CB,
            &cookie,
            LOGGED_OUT,
            "--par",
        ],
        Duration::from_secs(60),
    )
    .await;
    openid_client_steps_hold(&op, "pushing-app", "EdDSA", &steps);
    let pushes: Vec<&Value> = steps.iter().filter(|s| s["step"] == "pushed").collect();
    assert_eq!(pushes.len(), 2, "the sign-in and prompt=none: {steps:?}");
    for p in pushes {
        assert_eq!(p["query"], json!(["client_id", "request_uri"]), "{p}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pushed_request_attacks_issue_no_code() {
    let op = start_with(&documented_client()).await;

    // What works, and what the attacks below are measured against: a pushed request used
    // once gives a code; its parameters replace the query's, so a redirect_uri and state
    // an attacker adds beside the request_uri are not followed.
    let uri = pushed(&op, "rp").await;
    let r = authorize(
        &op,
        &[
            ("client_id", "rp"),
            ("request_uri", &uri),
            ("redirect_uri", "https://evil.example/cb"),
            ("state", "evil"),
        ],
    )
    .await;
    redeemed(&op, "rp", r).await;
    let own = pushed(&op, "pushing-app").await;
    redeemed(
        &op,
        "pushing-app",
        authorize(&op, &[("client_id", "pushing-app"), ("request_uri", &own)]).await,
    )
    .await;
    let crafted = sealed_at(&op, "rp", now());
    redeemed(
        &op,
        "rp",
        authorize(&op, &[("client_id", "rp"), ("request_uri", &crafted)]).await,
    )
    .await;
    // A public client pushes without authentication (PKCE is its proof).
    let mut form = request();
    form.push(("client_id", "spa"));
    let (status, body) = push(&op, None, &form).await;
    assert_eq!(status, 201, "{body}");

    // The authorization endpoint: the error page, never a redirect, never a code.
    let stolen = pushed(&op, "rp").await;
    let twice = pushed(&op, "rp").await;
    let expired = sealed_at(&op, "rp", now() - 200);
    let mut tampered = uri.clone().into_bytes();
    let at = tampered.len() - 10;
    tampered[at] = if tampered[at] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    let garbage = format!("{PREFIX}garbage");
    let long = format!("{PREFIX}{}", "x".repeat(3000));
    let mut plain = vec![("client_id", "pushing-app")];
    plain.extend(request());
    let cases: Vec<(&str, Vec<(&str, &str)>)> = vec![
        ("replayed", vec![("client_id", "rp"), ("request_uri", &uri)]),
        (
            "expired",
            vec![("client_id", "rp"), ("request_uri", &expired)],
        ),
        (
            "another client",
            vec![("client_id", "other"), ("request_uri", &stolen)],
        ),
        (
            "another client that must push",
            vec![("client_id", "pushing-app"), ("request_uri", &stolen)],
        ),
        ("no client_id", vec![("request_uri", &stolen)]),
        (
            "made up",
            vec![("client_id", "rp"), ("request_uri", &garbage)],
        ),
        (
            "altered",
            vec![("client_id", "rp"), ("request_uri", &tampered)],
        ),
        (
            "oversize",
            vec![("client_id", "rp"), ("request_uri", &long)],
        ),
        (
            "not this provider's",
            vec![
                ("client_id", "rp"),
                ("request_uri", "https://evil.example/request.jwt"),
            ],
        ),
        ("empty", vec![("client_id", "rp"), ("request_uri", PREFIX)]),
        (
            "given twice",
            vec![
                ("client_id", "rp"),
                ("request_uri", &twice),
                ("request_uri", &twice),
            ],
        ),
        ("a client that must push, unpushed", plain.clone()),
    ];
    for (case, params) in cases {
        refused(case, authorize(&op, &params).await).await;
    }
    // Another client did not spend it: the client that pushed it still gets its code.
    redeemed(
        &op,
        "rp",
        authorize(&op, &[("client_id", "rp"), ("request_uri", &stolen)]).await,
    )
    .await;

    // The push: a JSON error to the client (RFC 9126 §2.3), no request_uri.
    let long = "x".repeat(3000);
    let big = "y".repeat(2000);
    let wrong = "wrong-secret-0123456789abcdef0123456";
    let rp = Some(("rp", RP_SECRET));
    let long = long.as_str();
    let big = big.as_str();
    for (case, basic, form, status, error) in [
        (
            "a request_uri inside",
            rp,
            with(&[("request_uri", "urn:ietf:params:oauth:request_uri:x")]),
            400,
            "invalid_request",
        ),
        (
            "a request object",
            rp,
            with(&[("request", "eyJhbGciOiJub25lIn0.e30.")]),
            400,
            "invalid_request",
        ),
        (
            "a parameter too long",
            rp,
            with(&[("nonce", long)]),
            400,
            "invalid_request",
        ),
        (
            "too large",
            rp,
            with(&[
                ("state", big),
                ("nonce", big),
                ("login_hint", big),
                ("prompt", big),
                ("max_age", big),
            ]),
            400,
            "invalid_request",
        ),
        (
            "an unregistered redirect_uri",
            rp,
            with(&[("redirect_uri", "https://evil.example/cb")]),
            400,
            "invalid_request",
        ),
        (
            "no openid",
            rp,
            with(&[("scope", "email")]),
            400,
            "invalid_scope",
        ),
        (
            "a public client without PKCE",
            None,
            vec![
                ("client_id", "spa"),
                ("response_type", "code"),
                ("redirect_uri", CB),
                ("scope", "openid"),
            ],
            400,
            "invalid_request",
        ),
        (
            "a wrong secret",
            Some(("rp", wrong)),
            request(),
            401,
            "invalid_client",
        ),
        (
            "an unknown client",
            Some(("nobody", RP_SECRET)),
            request(),
            401,
            "invalid_client",
        ),
        (
            "no client authentication",
            None,
            with(&[("client_id", "rp")]),
            401,
            "invalid_client",
        ),
    ] {
        let (s, body) = push(&op, basic, &form).await;
        assert_eq!(
            (s, body["error"].as_str()),
            (status, Some(error)),
            "{case}: {body}"
        );
        assert!(body.get("request_uri").is_none(), "{case}: {body}");
    }
    // A body over the form limit.
    let huge = "z".repeat(authcore_oidc_provider::MAX_FORM_BYTES + 1);
    let r = reqwest::Client::new()
        .post(format!("{}/oidc/par", op.base))
        .basic_auth("rp", Some(RP_SECRET))
        .form(&[("state", huge.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 413);
    assert!(!r.text().await.unwrap().contains("request_uri"));
}

/// A user without a session is sent to sign in and brought back by a new `request_uri` of
/// the same request (the first is spent), which gives the code once signed in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_way_back_from_signing_in_is_a_new_request_uri() {
    let op = start_with("").await;
    let uri = pushed(&op, "rp").await;
    let anonymous = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let r = authorize_as(
        &op,
        &anonymous,
        &[("client_id", "rp"), ("request_uri", &uri)],
    )
    .await;
    assert_eq!(r.status(), 302);
    let to = r.headers()["location"].to_str().unwrap().to_owned();
    assert!(to.starts_with("/auth/signin?callbackUrl="), "{to}");
    let sign_in = url::Url::parse(&format!("{}{to}", op.base)).unwrap();
    let back = query(&sign_in, "callbackUrl").unwrap();
    let back = url::Url::parse(&format!("{}{back}", op.base)).unwrap();
    assert_eq!(back.path(), "/oidc/authorize");
    let again = query(&back, "request_uri").unwrap();
    assert!(again.starts_with(PREFIX) && again != uri, "{back}");
    assert_eq!(
        back.query_pairs()
            .map(|(k, _)| k.into_owned())
            .collect::<Vec<_>>(),
        ["client_id", "request_uri"],
        "the request stays sealed: {back}"
    );
    refused(
        "the first, spent",
        authorize(&op, &[("client_id", "rp"), ("request_uri", &uri)]).await,
    )
    .await;
    refused(
        "the new one, for another client",
        authorize(&op, &[("client_id", "other"), ("request_uri", &again)]).await,
    )
    .await;
    redeemed(
        &op,
        "rp",
        authorize(&op, &[("client_id", "rp"), ("request_uri", &again)]).await,
    )
    .await;
    refused(
        "the new one, again",
        authorize(&op, &[("client_id", "rp"), ("request_uri", &again)]).await,
    )
    .await;
}

/// Two instances on one database: a request pushed at one is used at the other, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_uri_pushed_at_one_instance_is_used_once_at_any() {
    let schema = format!("op_par_{}_{}", std::process::id(), rand_suffix());
    pg::admin_sql(&format!("CREATE SCHEMA {schema}")).await;
    let url = format!("{}?options=-c%20search_path%3D{schema}", pg::postgres_url());
    let ops = start_instances(
        fresh_dir(),
        &url,
        "",
        "",
        vec![listener().await, listener().await],
    )
    .await;
    let (a, b) = (&ops[0], &ops[1]);
    let uri = pushed(a, "rp").await;
    redeemed(
        b,
        "rp",
        authorize(b, &[("client_id", "rp"), ("request_uri", &uri)]).await,
    )
    .await;
    for op in [a, b] {
        refused(
            "replayed",
            authorize(op, &[("client_id", "rp"), ("request_uri", &uri)]).await,
        )
        .await;
    }
}
