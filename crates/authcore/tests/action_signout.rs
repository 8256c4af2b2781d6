//! GET (page) and POST /auth/signout (Auth.js `lib/pages/signout.tsx` and
//! `lib/actions/signout.ts`).
#![allow(clippy::unwrap_used)]
use crate::common::*;
use authcore::PagesOptions;
use serde_json::json;

#[tokio::test]
async fn page_posts_to_current_url_with_csrf() {
    let (auth, _) = auth();
    let r = send(
        &auth,
        http::Request::get("http://localhost:3000/auth/signout")
            .body(empty())
            .unwrap(),
    )
    .await;
    let html = r.text();
    assert!(html.contains("<title>Sign Out</title>"));
    assert!(html.contains(r#"action="http://localhost:3000/auth/signout""#));
    assert!(html.contains("Are you sure you want to sign out?"));
    assert!(html.contains(r#"name="csrfToken" value=""#));
}

#[tokio::test]
async fn custom_sign_out_page_redirects() {
    let (auth, _) = auth_with(builder().pages(PagesOptions {
        sign_out: Some("/bye".into()),
        ..Default::default()
    }));
    let r = send(&auth, get("/auth/signout").body(empty()).unwrap()).await;
    assert_eq!(r.location(), Some("/bye"));
}

#[tokio::test]
async fn post_clears_every_chunk_fires_event_and_redirects() {
    let (auth, rec) = auth();
    let (csrf, token) = csrf_pair();
    let session = session_cookie(&auth, json!({"name": "A", "sub": "1"}));
    let value = session.split_once('=').unwrap().1;
    let cookie = format!("{SESSION_COOKIE}.0={value}; {SESSION_COOKIE}.1=; {csrf}");
    let r = send(
        &auth,
        post("/auth/signout")
            .header("cookie", &cookie)
            .body(form(&[("csrfToken", &token), ("callbackUrl", "/bye")]))
            .unwrap(),
    )
    .await;
    assert_eq!(r.location(), Some("https://authjs.test/bye"));
    let cleared = r.set_cookie_header(&format!("{SESSION_COOKIE}.0")).unwrap();
    assert!(cleared.contains("Max-Age=0"));
    assert_eq!(rec.event("signOut").unwrap()["token"]["name"], "A");
}

#[tokio::test]
async fn post_without_session_just_redirects() {
    let (auth, rec) = auth();
    let (csrf, token) = csrf_pair();
    let r = send(
        &auth,
        post("/auth/signout")
            .header("cookie", &csrf)
            .body(form(&[("csrfToken", &token)]))
            .unwrap(),
    )
    .await;
    assert_eq!(r.location(), Some("https://authjs.test"));
    assert!(r.cookie(SESSION_COOKIE).is_none());
    assert!(rec.event_names().is_empty());
}

#[tokio::test]
async fn post_with_bad_token_logs_and_still_clears() {
    let (auth, rec) = auth();
    let (csrf, token) = csrf_pair();
    let r = send(
        &auth,
        post("/auth/signout")
            .header("cookie", format!("{SESSION_COOKIE}=garbage; {csrf}"))
            .body(form(&[("csrfToken", &token)]))
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 302);
    assert!(
        r.set_cookie_header(SESSION_COOKIE)
            .unwrap()
            .contains("Max-Age=0")
    );
    assert_eq!(rec.error_types(), ["SignOutError"]);
}

#[tokio::test]
async fn post_requires_csrf() {
    let (auth, _) = auth();
    let r = send(
        &auth,
        post("/auth/signout")
            .header("cookie", session_cookie(&auth, json!({"sub": "1"})))
            .body(form(&[]))
            .unwrap(),
    )
    .await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/signin?error=MissingCSRF")
    );
    assert!(r.set_cookies().is_empty());
}

/// Adds a claim big enough to split the session cookie into several chunks.
struct BigClaim;

#[authcore::async_trait]
impl authcore::callbacks::Callbacks for BigClaim {
    async fn jwt(
        &self,
        mut p: authcore::callbacks::JwtParams<'_>,
    ) -> Result<Option<authcore::jwt::JwtClaims>, authcore::BoxError> {
        if p.user.is_some() {
            p.token.insert("blob".into(), "b".repeat(9000).into());
        }
        Ok(Some(p.token))
    }
}

#[tokio::test]
async fn post_clears_every_chunk_of_a_real_multi_chunk_session() {
    let (auth, rec) = auth_with(builder().callbacks(BigClaim));
    let (csrf, token) = csrf_pair();
    let r = send(
        &auth,
        post("/auth/callback/credentials")
            .header("cookie", &csrf)
            .body(form(&[
                ("csrfToken", &token),
                ("username", "demo"),
                ("password", "pw"),
            ]))
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 302);
    assert!(r.cookie(SESSION_COOKIE).is_none(), "too big for one cookie");
    let chunks: Vec<(String, String)> = (0..)
        .map_while(|i| {
            let name = format!("{SESSION_COOKIE}.{i}");
            r.cookie(&name).map(|v| (name, v))
        })
        .collect();
    assert!(chunks.len() >= 3, "{} chunks", chunks.len());
    assert!(
        chunks
            .iter()
            .all(|(_, v)| v.len() <= authcore::cookies::CHUNK_SIZE && !v.is_empty())
    );
    // The chunks reassemble (sent in reverse order) into the session.
    let jar: Vec<String> = chunks
        .iter()
        .rev()
        .map(|(n, v)| format!("{n}={v}"))
        .collect();
    let jar = jar.join("; ");
    let s = get_session(&auth, &jar).await;
    assert_eq!(s.json()["user"]["name"], "Demo User");

    let r = send(
        &auth,
        post("/auth/signout")
            .header("cookie", format!("{jar}; {csrf}"))
            .body(form(&[("csrfToken", &token)]))
            .unwrap(),
    )
    .await;
    assert_eq!(r.location(), Some("https://authjs.test"));
    let mut cleared: Vec<String> = r
        .set_cookies()
        .into_iter()
        .filter(|c| c.starts_with(SESSION_COOKIE))
        .collect();
    cleared.sort();
    let expected: Vec<String> = chunks
        .iter()
        .map(|(n, _)| format!("{n}=; Max-Age=0; Path=/; HttpOnly; Secure; SameSite=Lax"))
        .collect();
    assert_eq!(cleared, expected, "every chunk cleared, nothing else");
    let event = rec.event("signOut").unwrap();
    assert_eq!(event["token"]["blob"].as_str().unwrap().len(), 9000);
}
