//! JWE encode / decode of a typical session token, and a sealed struct (as the OpenID
//! Provider seals its codes and refresh tokens) read back through a map or straight into
//! its type (`cargo bench -p authcore --bench jwe`).
#![allow(missing_docs, clippy::unwrap_used)]

use authcore::jose::Enc;
use authcore::jwt::JwtCodec;
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

fn claims() -> authcore::jwt::JwtClaims {
    serde_json::json!({
        "name": "Demo User", "email": "demo@example.com",
        "picture": "https://example.com/demo.png", "sub": "1"
    })
    .as_object()
    .unwrap()
    .clone()
}

/// A value of the shape the provider seals: a grant's few strings and numbers.
#[derive(serde::Serialize, serde::Deserialize)]
struct Sealed {
    client_id: String,
    sub: String,
    scope: String,
    redirect_uri: String,
    nonce: Option<String>,
    auth_time: i64,
    epoch: u64,
}

fn sealed() -> Sealed {
    Sealed {
        client_id: "bench".into(),
        sub: "9f1c2a7e-3b4d-4e5f-8a6b-7c8d9e0f1a2b".into(),
        scope: "openid email profile offline_access".into(),
        redirect_uri: "https://app.example.com/api/auth/callback/authcore".into(),
        nonce: Some("n-0S6_WzA2Mj".into()),
        auth_time: 1_764_500_000,
        epoch: 3,
    }
}

fn bench(c: &mut Criterion) {
    let codec = JwtCodec::new(&["bench-secret-bench-secret-bench-secret"]).unwrap();
    let salt = "authjs.session-token";
    let claims = claims();
    let token = codec.encode(&claims, salt, 3600).unwrap();
    c.bench_function("jwe_encode", |b| {
        b.iter(|| codec.encode(black_box(&claims), salt, 3600).unwrap())
    });
    c.bench_function("jwe_decode", |b| {
        b.iter(|| codec.decode(black_box(&token), salt).unwrap())
    });
    c.bench_function("jwe_decode_encode", |b| {
        b.iter(|| {
            let c = codec.decode(black_box(&token), salt).unwrap().unwrap();
            codec.encode(&c, salt, 3600).unwrap()
        })
    });
    let sealed = codec
        .encode_serializable(&sealed(), "bench.code", 600, Enc::A256Gcm)
        .unwrap();
    c.bench_function("jwe_open_struct_through_map", |b| {
        b.iter(|| {
            let map = codec
                .decode(black_box(&sealed), "bench.code")
                .unwrap()
                .unwrap();
            serde_json::from_value::<Sealed>(serde_json::Value::Object(map)).unwrap()
        })
    });
    c.bench_function("jwe_open_struct", |b| {
        b.iter(|| {
            codec
                .decode_deserializable::<Sealed>(black_box(&sealed), "bench.code")
                .unwrap()
                .unwrap()
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
