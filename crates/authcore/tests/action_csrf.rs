//! GET /auth/csrf (Auth.js `lib/pages/index.ts` and `lib/actions/callback/oauth/csrf-token.ts`).
#![allow(clippy::unwrap_used)]
use crate::common::*;
use authcore::DangerousOptions;

#[tokio::test]
async fn returns_token_and_sets_cookie_once() {
    let (auth, _) = auth();
    let r = send(&auth, get("/auth/csrf").body(empty()).unwrap()).await;
    assert_eq!(r.status, 200);
    assert_no_cache(&r);
    let token = r.json()["csrfToken"].as_str().unwrap().to_owned();
    assert_eq!(token.len(), 64);
    assert!(
        token
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    );
    let set = r.set_cookie_header(CSRF_COOKIE).unwrap();
    assert!(
        set.ends_with("; Path=/; HttpOnly; Secure; SameSite=Lax"),
        "{set}"
    );
    let cookie = r.cookie(CSRF_COOKIE).unwrap();
    assert_eq!(
        cookie,
        authcore::csrf::csrf_cookie_value(&token, SECRET).replace('|', "%7C")
    );

    // With the cookie, the same token comes back and no new cookie is set.
    let r2 = send(
        &auth,
        get("/auth/csrf")
            .header("cookie", format!("{CSRF_COOKIE}={cookie}"))
            .body(empty())
            .unwrap(),
    )
    .await;
    assert_eq!(r2.json()["csrfToken"], token.as_str());
    assert!(r2.cookie(CSRF_COOKIE).is_none());
}

#[tokio::test]
async fn tampered_cookie_gets_a_new_token() {
    let (auth, _) = auth();
    let bad = format!("{CSRF_COOKIE}={}%7C{}", "a".repeat(64), "0".repeat(64));
    let r = send(
        &auth,
        get("/auth/csrf")
            .header("cookie", bad)
            .body(empty())
            .unwrap(),
    )
    .await;
    assert_ne!(r.json()["csrfToken"], "a".repeat(64));
    assert!(r.cookie(CSRF_COOKIE).is_some());
}

#[tokio::test]
async fn plain_http_uses_unprefixed_names() {
    let (auth, _) = auth();
    let r = send(
        &auth,
        http::Request::get("http://localhost:3000/auth/csrf")
            .body(empty())
            .unwrap(),
    )
    .await;
    let set = r.set_cookie_header("authjs.csrf-token").unwrap();
    assert!(!set.contains("Secure"), "{set}");
}

#[tokio::test]
async fn skip_csrf_check_answers_404_and_clears_the_cookie() {
    let (auth, rec) = auth_with(builder().dangerous(DangerousOptions {
        skip_csrf_check: true,
        ..Default::default()
    }));
    let r = send(&auth, get("/auth/csrf").body(empty()).unwrap()).await;
    assert_eq!(r.status, 404);
    assert!(r.body.is_empty());
    let set = r.set_cookie_header(CSRF_COOKIE).unwrap();
    assert!(
        set.starts_with(&format!("{CSRF_COOKIE}=; Max-Age=0")),
        "{set}"
    );
    assert!(
        rec.warnings
            .lock()
            .unwrap()
            .contains(&authcore::logger::WarningCode::CsrfDisabled)
    );
}
