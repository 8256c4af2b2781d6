//! One full `GET /auth/session` with a valid cookie through `Auth::handle`, in memory
//! (`cargo bench -p authcore --bench session`). Also `GET /auth/csrf` and `/auth/providers`,
//! and the session read with the JWT revocation list (`jwt_revocation`, on the memory
//! adapter: the list's own cost, without a database round trip).
#![allow(missing_docs, clippy::unwrap_used)]

use authcore::providers::CredentialsProvider;
use authcore::{Auth, AuthConfig};
use bytes::Bytes;
use criterion::{Criterion, criterion_group, criterion_main};
use http_body_util::{BodyExt, Full};

fn bench(c: &mut Criterion) {
    let auth = Auth::new(
        AuthConfig::builder()
            .secret("bench-secret-bench-secret-bench-secret")
            .trust_host(true)
            .provider(CredentialsProvider::new().authorize(|_, _| async { Ok(None) }))
            .build()
            .unwrap(),
    );
    let claims = serde_json::json!({"name": "Demo User", "email": "demo@example.com", "sub": "1"});
    let token = auth
        .config()
        .jwt()
        .encode(claims.as_object().unwrap(), "authjs.session-token", 3600)
        .unwrap();
    let csrf = authcore::csrf::csrf_cookie_value(
        &"a".repeat(64),
        "bench-secret-bench-secret-bench-secret",
    )
    .replace('|', "%7C");
    let cookie = format!(
        "authjs.session-token={token}; authjs.csrf-token={csrf}; authjs.callback-url=http%3A%2F%2F127.0.0.1%3A3000"
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let rt = &rt;
    let run = |auth: &Auth, path: &'static str, cookie: String| {
        let auth = auth.clone();
        move || {
            let req = http::Request::get(path)
                .header("host", "127.0.0.1:3000")
                .header("cookie", cookie.as_str())
                .body(Full::new(Bytes::new()))
                .unwrap();
            rt.block_on(async {
                let r = auth.handle(req).await;
                assert_eq!(r.status(), 200);
                r.into_body().collect().await.unwrap().to_bytes()
            })
        }
    };
    let mut session = run(&auth, "/auth/session", cookie.clone());
    assert!(session().starts_with(b"{\"user\""));
    c.bench_function("get_session_valid_cookie", |b| b.iter(&mut session));
    let mut csrf_req = run(&auth, "/auth/csrf", cookie.clone());
    c.bench_function("get_csrf", |b| b.iter(&mut csrf_req));
    let mut providers = run(&auth, "/auth/providers", cookie.clone());
    c.bench_function("get_providers", |b| b.iter(&mut providers));

    let revocable_auth = Auth::new(
        AuthConfig::builder()
            .secret("bench-secret-bench-secret-bench-secret")
            .trust_host(true)
            .provider(CredentialsProvider::new().authorize(|_, _| async { Ok(None) }))
            .adapter(authcore::adapter::MemoryAdapter::new())
            .session_strategy(authcore::SessionStrategy::Jwt)
            .jwt_revocation(true)
            .build()
            .unwrap(),
    );
    let mut revocable = run(&revocable_auth, "/auth/session", cookie);
    assert!(revocable().starts_with(b"{\"user\""));
    c.bench_function("get_session_valid_cookie_jwt_revocation", |b| {
        b.iter(&mut revocable)
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
