//! The cost of second factors, in memory (`cargo bench -p authcore --bench two_factor`):
//! one TOTP check (`totp-rs`, a code compared against three steps), a password sign-in of an
//! enrolled user up to the sealed second-step state, and a second step answered with a
//! wrong code (the state opened, the attempt counted, the sealed secret opened, the TOTP
//! and recovery-code checks). A right code cannot be benchmarked in a loop: each 30-second
//! step is accepted once.
#![allow(missing_docs, clippy::unwrap_used)]

use std::time::Duration;

use authcore::adapter::{Adapter, MemoryAdapter, NewUser};
use authcore::providers::{CredentialField, CredentialsProvider};
use authcore::ratelimit::RateLimit;
use authcore::two_factor::TwoFactorOptions;
use authcore::{Auth, AuthConfig, SessionStrategy, User};
use bytes::Bytes;
use criterion::{Criterion, criterion_group, criterion_main};
use http_body_util::Full;

const SECRET: &str = "bench-secret-bench-secret-bench-secret";

fn bench(c: &mut Criterion) {
    let secret = totp_rs::Secret::try_from_base32("JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP").unwrap();
    let totp = totp_rs::Builder::new().with_secret(secret).build().unwrap();
    let now = 1_800_000_000;
    let code = totp.generate(now - 30).to_string();
    c.bench_function("totp_check", |b| {
        b.iter(|| totp.check(std::hint::black_box(&code), now))
    });

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let db = MemoryAdapter::new();
    let user = rt
        .block_on(db.create_user(NewUser {
            email: Some("ada@example.com".into()),
            ..NewUser::default()
        }))
        .unwrap();
    let id = user.id.clone();
    let many = RateLimit::new(u32::MAX, Duration::from_secs(60));
    let auth = Auth::new(
        AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .provider(
                CredentialsProvider::new()
                    .field("password", CredentialField::new("Password"))
                    .authorize(move |_, _| {
                        let id = id.clone();
                        async move { Ok(Some(User::with_id(id))) }
                    }),
            )
            .adapter(db)
            .session_strategy(SessionStrategy::Jwt)
            .two_factor(TwoFactorOptions::default().attempts(many, many))
            .build()
            .unwrap(),
    );
    let (_, _) = rt.block_on(auth.enrol_totp_for_user(&user.id)).unwrap();

    let token = "a".repeat(64);
    let csrf = authcore::csrf::csrf_cookie_value(&token, SECRET).replace('|', "%7C");
    let post = |path: &str, cookie: &str, body: String| {
        http::Request::post(format!("http://127.0.0.1:3000{path}"))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("cookie", cookie)
            .body(Full::new(Bytes::from(body)))
            .unwrap()
    };
    let csrf_cookie = format!("authjs.csrf-token={csrf}");
    let sign_in = || {
        let r = rt.block_on(auth.handle(post(
            "/auth/callback/credentials",
            &csrf_cookie,
            format!("csrfToken={token}&password=pw"),
        )));
        assert_eq!(
            r.headers()["location"],
            "http://127.0.0.1:3000/auth/two-factor"
        );
        r
    };
    c.bench_function("password_sign_in_to_second_step", |b| b.iter(sign_in));

    let state = sign_in()
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().split(';').next().unwrap().to_owned())
        .find(|c| c.starts_with("authjs.two-factor="))
        .unwrap();
    let cookie = format!("{csrf_cookie}; {state}");
    c.bench_function("second_step_wrong_code", |b| {
        b.iter(|| {
            let r = rt.block_on(auth.handle(post(
                "/auth/two-factor",
                &cookie,
                format!("csrfToken={token}&code=000000"),
            )));
            assert_eq!(r.status(), 302);
            r
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
