//! JWE encode / decode of a typical session token (`cargo bench -p authcore --bench jwe`).
#![allow(missing_docs, clippy::unwrap_used)]

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
}

criterion_group!(benches, bench);
criterion_main!(benches);
