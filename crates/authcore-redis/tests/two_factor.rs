//! Second factors across two instances sharing Redis (the adapter for users and second
//! factors, the rate-limit store for attempts and single-use marks): wrong codes are
//! counted per user across both, so guessing on alternate instances locks the user as on
//! one; a code used on one instance is refused on the other.
#![allow(clippy::unwrap_used)]

use crate::common::with_db;

use std::time::Duration;

use authcore::adapter::{Adapter, NewUser};
use authcore::providers::{CredentialField, CredentialsProvider};
use authcore::ratelimit::RateLimit;
use authcore::two_factor::TwoFactorOptions;
use authcore::{Auth, AuthConfig, SessionStrategy, User};
use http_body_util::{BodyExt, Full};

const SECRET: &str = "a redis two-factor test secret, long enough";
const ORIGIN: &str = "https://app.example";

use crate::totp::{totp_code_at as code_at, unix_now as now};

/// An instance: the password `pw` signs in `user_id`.
fn instance(db: &authcore_redis::RedisAdapter, user_id: &str) -> Auth {
    let id = user_id.to_owned();
    let minute = Duration::from_secs(60);
    Auth::new(
        AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .provider(
                CredentialsProvider::new()
                    .field("password", CredentialField::new("Password"))
                    .authorize(move |c, _| {
                        let id = id.clone();
                        async move {
                            Ok((c.get("password").and_then(|v| v.as_str()) == Some("pw"))
                                .then(|| User::with_id(id)))
                        }
                    }),
            )
            .adapter(db.clone())
            .session_strategy(SessionStrategy::Jwt)
            .rate_limit_store(db.rate_limit_store())
            .two_factor(TwoFactorOptions::default().attempts(
                RateLimit::new(4, minute).lockout(10 * minute),
                RateLimit::new(100, minute),
            ))
            .build()
            .unwrap(),
    )
}

/// A POST with the browser's cookies; the answer's `Location` and `Set-Cookie` pairs.
async fn post(auth: &Auth, path: &str, cookie: &str, body: &str) -> (String, Vec<String>) {
    let r = auth
        .handle(
            http::Request::post(format!("{ORIGIN}{path}"))
                .header("content-type", "application/x-www-form-urlencoded")
                .header("cookie", cookie)
                .body(Full::new(bytes::Bytes::from(body.to_owned())))
                .unwrap(),
        )
        .await;
    let location = r
        .headers()
        .get("location")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let cookies = r
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().split(';').next().unwrap().to_owned())
        .collect();
    let _ = r.into_body().collect().await;
    (location, cookies)
}

#[tokio::test]
async fn guessing_and_replays_are_counted_across_instances() {
    with_db(|db| async move {
        let user = db
            .adapter
            .create_user(NewUser {
                email: Some("ada@example.com".into()),
                ..NewUser::default()
            })
            .await
            .unwrap();
        let a = instance(&db.adapter, &user.id);
        let b = instance(&db.adapter, &user.id);
        let (e, _) = a.enrol_totp_for_user(&user.id).await.unwrap();
        let token = "c".repeat(64);
        let csrf = authcore::csrf::csrf_cookie_value(&token, SECRET).replace('|', "%7C");
        let csrf_cookie = format!("__Host-authjs.csrf-token={csrf}");
        // The first factor on `a`; the state works on either instance (same secret).
        let first = |auth: Auth| {
            let csrf_cookie = csrf_cookie.clone();
            let token = token.clone();
            async move {
                let (location, cookies) = post(
                    &auth,
                    "/auth/callback/credentials",
                    &csrf_cookie,
                    &format!("csrfToken={token}&password=pw"),
                )
                .await;
                assert_eq!(location, format!("{ORIGIN}/auth/two-factor"));
                let state = cookies
                    .into_iter()
                    .find(|c| c.starts_with("__Secure-authjs.two-factor="))
                    .unwrap();
                format!("{csrf_cookie}; {state}")
            }
        };
        let code = |auth: &Auth, cookie: &str, code: &str| {
            let (auth, cookie, body) = (
                auth.clone(),
                cookie.to_owned(),
                format!("csrfToken={token}&code={code}"),
            );
            async move { post(&auth, "/auth/two-factor", &cookie, &body).await }
        };

        // A code used on `a` is refused on `b`.
        let cookie = first(a.clone()).await;
        let used = code_at(&e.secret, now());
        let (_, cookies) = code(&a, &cookie, &used).await;
        assert!(
            cookies
                .iter()
                .any(|c| c.starts_with("__Secure-authjs.session-token="))
        );
        let cookie = first(a.clone()).await;
        let (location, cookies) = code(&b, &cookie, &used).await;
        assert!(location.ends_with("error=TwoFactorError"), "{location}");
        assert!(
            !cookies
                .iter()
                .any(|c| c.starts_with("__Secure-authjs.session-token="))
        );

        // With the refused replay, three wrong codes on alternate instances make four
        // failures (the limit); the next attempt is refused on either, right code or not.
        for (i, auth) in [&a, &b, &a].into_iter().enumerate() {
            let (location, _) = code(auth, &cookie, &format!("{:06}", 100_000 + i)).await;
            assert!(location.ends_with("error=TwoFactorError"), "{location}");
        }
        let (location, _) = code(&b, &cookie, "123456").await;
        assert!(location.contains("error=RateLimited"), "{location}");
        for auth in [&a, &b] {
            let (location, cookies) = code(auth, &cookie, &code_at(&e.secret, now() + 30)).await;
            assert!(location.contains("error=RateLimited"), "{location}");
            assert!(
                !cookies
                    .iter()
                    .any(|c| c.starts_with("__Secure-authjs.session-token="))
            );
        }
    })
    .await;
}
