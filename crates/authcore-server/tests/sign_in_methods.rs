//! Every way to sign in that the server offers with a database can be turned off: email
//! sign-in (`AUTHCORE_EMAIL_SIGN_IN=off`, `[email] sign_in = false`) and passkeys
//! (`AUTHCORE_PASSKEYS=off`, `[passkeys] enabled = false`). One that is off is not listed,
//! not on the sign-in page, and its routes answer as for an unknown provider.
#![allow(clippy::unwrap_used)]

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use serde_json::Value;

use crate::support::in_memory::{self, CookieJar, ORIGIN};

/// The server on an SQLite database of its own in `dir`, with `vars` set.
async fn server(dir: &std::path::Path, vars: &[(&str, &str)]) -> axum::Router {
    let file = authcore_server::ConfigFile::parse(&format!(
        "[server]\ndatabase_url = \"sqlite://{}?mode=rwc\"\n[auth]\nsecret = \"a sign-in methods test secret, long enough\"\n",
        dir.join("methods.db").display()
    ))
    .unwrap();
    authcore_server::ServerConfig::resolve(
        file,
        authcore::env::Env::from_pairs(vars.iter().copied()),
    )
    .unwrap()
    .build()
    .await
    .unwrap()
    .router()
}

/// Asks for a magic link to `email`: where the answer redirects.
pub(crate) async fn ask_for_link(app: &axum::Router, jar: &mut CookieJar, email: &str) -> String {
    let res = in_memory::get(app, "/auth/csrf", jar).await;
    let csrf: Value = serde_json::from_str(&in_memory::text(res).await).unwrap();
    let body = format!(
        "csrfToken={}&email={}",
        in_memory::encode(csrf["csrfToken"].as_str().unwrap()),
        in_memory::encode(email)
    );
    let req = Request::post(format!("{ORIGIN}/auth/signin/email"))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::COOKIE, jar.header())
        .body(Body::from(body))
        .unwrap();
    let res = in_memory::send(app, req, jar).await;
    assert_eq!(res.status(), StatusCode::FOUND);
    res.headers()[header::LOCATION].to_str().unwrap().to_owned()
}

#[tokio::test]
async fn email_sign_in_and_passkeys_can_each_be_turned_off() {
    for (vars, email, passkeys) in [
        (vec![], true, true),
        (vec![("AUTHCORE_EMAIL_SIGN_IN", "off")], false, true),
        (vec![("AUTHCORE_PASSKEYS", "off")], true, false),
        (
            vec![
                ("AUTHCORE_EMAIL_SIGN_IN", "off"),
                ("AUTHCORE_PASSKEYS", "off"),
            ],
            false,
            false,
        ),
    ] {
        let dir = std::env::temp_dir().join(format!(
            "authcore-methods-{}-{email}-{passkeys}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let app = server(&dir, &vars).await;
        let mut jar = CookieJar::default();
        let case = format!("{vars:?}");

        let res = in_memory::get(&app, "/auth/providers", &mut jar).await;
        let listed: Value = serde_json::from_str(&in_memory::text(res).await).unwrap();
        let ids: Vec<&str> = listed
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut expected = vec!["credentials"];
        expected.extend(email.then_some("email"));
        expected.extend(passkeys.then_some("passkey"));
        assert_eq!(ids, expected, "{case}");

        let page = in_memory::text(in_memory::get(&app, "/auth/signin", &mut jar).await).await;
        assert_eq!(page.contains("/auth/signin/email"), email, "{case}");
        assert_eq!(page.contains("data-webauthn-provider"), passkeys, "{case}");

        let to = ask_for_link(&app, &mut jar, "demo@example.com").await;
        let expected = if email {
            "/auth/verify-request?provider=email&type=email"
        } else {
            "/auth/error?error=Configuration"
        };
        assert!(to.ends_with(expected), "{case}: {to}");

        let res = in_memory::get(&app, "/auth/webauthn-options/passkey", &mut jar).await;
        assert_eq!(res.status() == StatusCode::OK, passkeys, "{case}");
        let _ = std::fs::remove_dir_all(dir);
    }
}
