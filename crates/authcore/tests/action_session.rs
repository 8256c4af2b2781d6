//! GET / POST /auth/session with the JWT strategy (Auth.js `lib/actions/session.ts`,
//! including the cases Auth.js's own tests check).
#![allow(clippy::unwrap_used)]
use std::sync::{Arc, Mutex};

use crate::common::*;
use authcore::BoxError;
use authcore::callbacks::{Callbacks, JwtParams, JwtTrigger, SessionParams};
use authcore::jwt::JwtClaims;
use serde_json::{Value, json};

fn alice() -> Value {
    json!({"name": "Alice", "email": "alice@example.com", "picture": "https://example.com/a.png", "sub": "1"})
}

#[tokio::test]
async fn valid_cookie_returns_session_and_refreshes_cookie() {
    let (auth, rec) = auth();
    let before = time::OffsetDateTime::now_utc();
    let r = get_session(&auth, session_cookie(&auth, alice())).await;
    assert_eq!(r.status, 200);
    assert_no_cache(&r);
    let body = r.json();
    assert_eq!(
        body["user"],
        json!({"name": "Alice", "email": "alice@example.com", "image": "https://example.com/a.png"})
    );
    let expires = time::OffsetDateTime::parse(
        body["expires"].as_str().unwrap(),
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap();
    let days = (expires - before).whole_days();
    assert!((29..=30).contains(&days), "{days}");
    // A fresh token decodes to the same user with new iat/exp/jti.
    let new = r.cookie(SESSION_COOKIE).unwrap();
    let claims = auth
        .config()
        .jwt()
        .decode(&new, SESSION_COOKIE)
        .unwrap()
        .unwrap();
    assert_eq!(claims["name"], "Alice");
    assert_eq!(claims["sub"], "1");
    assert!(claims.contains_key("iat") && claims.contains_key("exp") && claims.contains_key("jti"));
    let set = r.set_cookie_header(SESSION_COOKIE).unwrap();
    assert!(
        set.contains("; Expires=") && set.contains("HttpOnly; Secure; SameSite=Lax"),
        "{set}"
    );
    assert_eq!(rec.event_names(), ["session"]);
    let ev = rec.event("session").unwrap();
    assert_eq!(ev["session"], body);
    assert_eq!(ev["token"]["sub"], "1");
}

#[tokio::test]
async fn no_cookie_is_null() {
    let (auth, rec) = auth();
    let r = send(&auth, get("/auth/session").body(empty()).unwrap()).await;
    assert_eq!(r.text(), "null");
    assert_no_cache(&r);
    assert!(r.cookie(SESSION_COOKIE).is_none());
    assert!(rec.errors.lock().unwrap().is_empty());
}

#[tokio::test]
async fn invalid_tokens_are_null_logged_and_cleared() {
    let (auth, rec) = auth();
    let wrong_salt = auth
        .config()
        .jwt()
        .encode(
            alice().as_object().unwrap(),
            "__Secure-authjs.session-token-invalid",
            60,
        )
        .unwrap();
    let other_secret = authcore::jwt::JwtCodec::new(&["other"])
        .unwrap()
        .encode(alice().as_object().unwrap(), SESSION_COOKIE, 60)
        .unwrap();
    for bad in [
        "invalid".to_owned(),
        wrong_salt,
        other_secret,
        "a.b.c.d.e".into(),
        "%ZZ".into(),
    ] {
        rec.errors.lock().unwrap().clear();
        let r = get_session(&auth, format!("{SESSION_COOKIE}={bad}")).await;
        assert_eq!(r.status, 200);
        assert_eq!(r.text(), "null");
        assert_eq!(rec.error_types(), ["JWTSessionError"], "{bad}");
        let set = r.set_cookie_header(SESSION_COOKIE).unwrap();
        assert!(
            set.starts_with(&format!("{SESSION_COOKIE}=; Max-Age=0")),
            "{set}"
        );
        // The log line carries no token material.
        let msg = &rec.errors.lock().unwrap()[0].1;
        assert!(!msg.contains(&bad) || bad.len() < 8, "{msg}");
    }
}

#[tokio::test]
async fn expired_token_is_null() {
    let (auth, rec) = auth();
    let old = time::OffsetDateTime::now_utc().unix_timestamp() - 3600;
    let token = auth
        .config()
        .jwt()
        .encode_at(alice().as_object().unwrap(), SESSION_COOKIE, 60, old)
        .unwrap();
    let r = get_session(&auth, format!("{SESSION_COOKIE}={token}")).await;
    assert_eq!(r.text(), "null");
    assert_eq!(rec.error_types(), ["JWTSessionError"]);
}

#[tokio::test]
async fn chunked_session_cookies_are_reassembled() {
    let (auth, _) = auth();
    let mut claims = alice();
    claims["blob"] = json!("x".repeat(6000));
    let token = auth
        .config()
        .jwt()
        .encode(claims.as_object().unwrap(), SESSION_COOKIE, 3600)
        .unwrap();
    assert!(token.len() > 3936);
    let (a, b) = token.split_at(3936);
    let cookie = format!("{SESSION_COOKIE}.1={b}; {SESSION_COOKIE}.0={a}");
    let r = get_session(&auth, cookie).await;
    assert_eq!(r.json()["user"]["name"], "Alice");
    assert!(r.cookie(&format!("{SESSION_COOKIE}.0")).is_some());
    assert!(r.cookie(&format!("{SESSION_COOKIE}.1")).is_some());
}

type JwtCalls = Arc<Mutex<Vec<(Option<JwtTrigger>, Option<Value>)>>>;

#[derive(Default, Clone)]
struct Spy {
    jwt_calls: JwtCalls,
    sign_out_on_read: bool,
}

#[authcore::async_trait]
impl Callbacks for Spy {
    async fn jwt(&self, mut p: JwtParams<'_>) -> Result<Option<JwtClaims>, BoxError> {
        self.jwt_calls
            .lock()
            .unwrap()
            .push((p.trigger, p.session.cloned()));
        if self.sign_out_on_read {
            return Ok(None);
        }
        if let Some(Value::Object(data)) = p.session
            && let Some(name) = data.get("name")
        {
            p.token.insert("name".into(), name.clone());
        }
        Ok(Some(p.token))
    }
    async fn session(&self, p: SessionParams<'_>) -> Result<Value, BoxError> {
        let mut v = serde_json::to_value(p.session)?;
        v["sub"] = p
            .token
            .and_then(|t| t.get("sub"))
            .cloned()
            .unwrap_or(Value::Null);
        Ok(v)
    }
}

#[tokio::test]
async fn callbacks_get_authjs_params() {
    let spy = Spy::default();
    let (auth, _) = auth_with(builder().callbacks(spy.clone()));
    let r = get_session(&auth, session_cookie(&auth, alice())).await;
    assert_eq!(r.json()["sub"], "1");
    assert_eq!(*spy.jwt_calls.lock().unwrap(), [(None, None)]);
}

#[tokio::test]
async fn post_updates_with_csrf_and_trigger_update() {
    let spy = Spy::default();
    let (auth, _) = auth_with(builder().callbacks(spy.clone()));
    let (csrf, token) = csrf_pair();
    let cookie = format!("{}; {csrf}", session_cookie(&auth, alice()));
    let body =
        serde_json::to_vec(&json!({"csrfToken": token, "data": {"name": "Alicia"}})).unwrap();
    let r = send(
        &auth,
        http::Request::post(url("/auth/session"))
            .header("content-type", "application/json")
            .header("cookie", &cookie)
            .body(http_body_util::Full::new(body.into()))
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["user"]["name"], "Alicia");
    assert!(
        r.headers.get("cache-control").is_none(),
        "POST has no no-cache headers"
    );
    assert_eq!(
        *spy.jwt_calls.lock().unwrap(),
        [(Some(JwtTrigger::Update), Some(json!({"name": "Alicia"})))]
    );
    let claims = auth
        .config()
        .jwt()
        .decode(&r.cookie(SESSION_COOKIE).unwrap(), SESSION_COOKIE)
        .unwrap()
        .unwrap();
    assert_eq!(claims["name"], "Alicia");

    // Without the CSRF token: 400 null.
    let r = send(
        &auth,
        http::Request::post(url("/auth/session"))
            .header("content-type", "application/json")
            .header("cookie", &cookie)
            .body(http_body_util::Full::new(
                b"{\"data\":{}}".as_slice().into(),
            ))
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.text(), "null");
    assert!(r.set_cookies().is_empty());
}

#[tokio::test]
async fn jwt_callback_returning_none_signs_out() {
    let spy = Spy {
        sign_out_on_read: true,
        ..Default::default()
    };
    let (auth, _) = auth_with(builder().callbacks(spy));
    let r = get_session(&auth, session_cookie(&auth, alice())).await;
    assert_eq!(r.text(), "null");
    assert!(
        r.set_cookie_header(SESSION_COOKIE)
            .unwrap()
            .contains("Max-Age=0")
    );
}

#[tokio::test]
async fn rotated_secret_still_reads_old_sessions() {
    let (old_auth, _) = auth();
    let cookie = session_cookie(&old_auth, alice());
    let (auth, _) = auth_with(builder().secrets(["new-secret-xxxxxxxxxxxxxxxxxxxxx", SECRET]));
    let r = get_session(&auth, cookie).await;
    assert_eq!(r.json()["user"]["name"], "Alice");
    // Re-encoded with the new secret.
    let new = r.cookie(SESSION_COOKIE).unwrap();
    assert!(
        authcore::jwt::JwtCodec::new(&["new-secret-xxxxxxxxxxxxxxxxxxxxx"])
            .unwrap()
            .decode(&new, SESSION_COOKIE)
            .unwrap()
            .is_some()
    );
}

/// Concurrent updates of one chunked session (a token over 4 KB): every answer's cookies
/// are a whole chunk set of its own update — chunks `.0`…`.n-1` that reassemble and decode,
/// the request's other chunks cleared — whatever order the updates ran in.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_updates_of_a_chunked_session_each_answer_a_whole_cookie_set() {
    let (auth, _) = auth_with(builder().callbacks(Spy::default()));
    let mut claims = alice();
    claims["blob"] = json!("x".repeat(9000));
    let token = auth
        .config()
        .jwt()
        .encode(claims.as_object().unwrap(), SESSION_COOKIE, 3600)
        .unwrap();
    // The browser's chunked cookie, as authcore writes it.
    let chunks: Vec<String> = token
        .as_bytes()
        .chunks(authcore::cookies::CHUNK_SIZE)
        .enumerate()
        .map(|(i, c)| format!("{SESSION_COOKIE}.{i}={}", std::str::from_utf8(c).unwrap()))
        .collect();
    assert!(chunks.len() >= 3);
    let (csrf, csrf_token) = csrf_pair();
    let cookie = format!("{}; {csrf}", chunks.join("; "));
    let tasks: Vec<_> = (0..20)
        .map(|i| {
            let (auth, cookie, csrf_token) = (auth.clone(), cookie.clone(), csrf_token.clone());
            tokio::spawn(async move {
                let name = format!("Alice {i}");
                let body = json!({"csrfToken": csrf_token, "data": {"name": name}});
                let r = send(
                    &auth,
                    http::Request::post(url("/auth/session"))
                        .header("content-type", "application/json")
                        .header("cookie", &cookie)
                        .body(http_body_util::Full::new(body.to_string().into()))
                        .unwrap(),
                )
                .await;
                (name, r)
            })
        })
        .collect();
    for t in tasks {
        let (name, r) = t.await.unwrap();
        assert_eq!(r.status, 200);
        assert_eq!(r.json()["user"]["name"], name.as_str());
        // Set chunks: consecutive from 0; every request chunk either rewritten or cleared.
        let mut set = Vec::new();
        let mut cleared = Vec::new();
        for c in r.set_cookies() {
            let (nv, attrs) = c.split_once(';').unwrap();
            let (n, v) = nv.split_once('=').unwrap();
            let Some(i) = n.strip_prefix(&format!("{SESSION_COOKIE}.")) else {
                continue;
            };
            let i: usize = i.parse().unwrap();
            if attrs.contains("Max-Age=0") {
                cleared.push(i);
            } else {
                set.push((i, v.to_owned()));
            }
        }
        set.sort();
        assert!(set.iter().enumerate().all(|(k, (i, _))| k == *i), "{set:?}");
        for i in 0..chunks.len() {
            assert!(
                i < set.len() || cleared.contains(&i),
                "chunk {i} left stale"
            );
        }
        let token: String = set.iter().map(|(_, v)| v.as_str()).collect();
        let decoded = auth
            .config()
            .jwt()
            .decode(&token, SESSION_COOKIE)
            .unwrap()
            .unwrap();
        assert_eq!(decoded["name"], name.as_str());
        assert_eq!(decoded["blob"].as_str().map(str::len), Some(9000));
    }
}

/// A `jwt` callback that changes the token on every read.
struct CountsReads;

#[authcore::async_trait]
impl Callbacks for CountsReads {
    async fn jwt(&self, mut p: JwtParams<'_>) -> Result<Option<JwtClaims>, BoxError> {
        let reads = p.token.get("reads").and_then(Value::as_u64).unwrap_or(0);
        p.token.insert("reads".into(), (reads + 1).into());
        Ok(Some(p.token))
    }
}

/// `read_session` with `refresh_jwt_after`: the cookie of a token younger than the age is
/// left as it is (no `Set-Cookie`; the session's `expires` is the token's), unless the
/// `jwt` callback changed the token; otherwise it is re-issued as a default read does.
#[tokio::test]
async fn lookup_leaves_a_young_cookie_as_it_is_unless_the_token_changed() {
    use authcore::ReadOptions;
    use std::time::Duration;
    let hour = Duration::from_secs(3600);
    let refresh_after = |age| ReadOptions::default().refresh_jwt_after(age);
    for (case, config, options, reissued) in [
        ("default", builder(), ReadOptions::default(), true),
        (
            "younger than the age",
            builder(),
            refresh_after(hour),
            false,
        ),
        ("age zero", builder(), refresh_after(Duration::ZERO), true),
        (
            "age capped at half of a 1 s max age",
            builder().session_max_age(Duration::from_secs(1)),
            refresh_after(hour),
            true,
        ),
        (
            "the callback changed the token",
            builder().callbacks(CountsReads),
            refresh_after(hour),
            true,
        ),
    ] {
        let (auth, _) = auth_with(config);
        let cookie = session_cookie(&auth, alice());
        let mut headers = http::HeaderMap::new();
        headers.insert("cookie", cookie.parse().unwrap());
        let lookup = auth
            .read_session(&url("/app").parse().unwrap(), &headers, &options)
            .await
            .unwrap();
        let session = lookup.session.expect(case).into_json();
        assert_eq!(session["user"]["email"], "alice@example.com", "{case}");
        assert_eq!(!lookup.set_cookie.is_empty(), reissued, "{case}");
        if !reissued {
            // The token's own expiry (an hour, as session_cookie made it), not 30 days.
            let expires = time::OffsetDateTime::parse(
                session["expires"].as_str().unwrap(),
                &time::format_description::well_known::Rfc3339,
            )
            .unwrap();
            let left = expires - time::OffsetDateTime::now_utc();
            assert!(left <= time::Duration::hours(1), "{case}: {left}");
        }
    }
}
