//! The two primitives of the session token's `A256CBC-HS512`, RustCrypto against aws-lc-rs on
//! the machine at hand (`cargo bench -p authcore --bench jwe_primitives`): AES-256-CBC with
//! PKCS#7 over a session-sized plaintext (encrypt and decrypt, key already expanded where
//! the library allows it) and the HMAC-SHA-512 tag over AAD ‖ IV ‖ ciphertext ‖ AL with the
//! key already set up. `docs/performance.md` records the figures and which one
//! the JWE uses.
#![allow(missing_docs, clippy::unwrap_used)]

use std::hint::black_box;

use aes::Aes256;
use aes::cipher::{
    BlockModeDecrypt, BlockModeEncrypt, InnerIvInit, KeyIvInit, block_padding::Pkcs7,
};
use aws_lc_rs::cipher::{
    AES_256, DecryptionContext, EncryptionContext, PaddedBlockDecryptingKey,
    PaddedBlockEncryptingKey, UnboundCipherKey,
};
use aws_lc_rs::iv::FixedLength;
use criterion::{Criterion, criterion_group, criterion_main};
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha512;

/// A signed-in user's claims are ~200 bytes of JSON; the AAD is the base64url header.
const PLAINTEXT: usize = 200;
const AAD: usize = 100;

fn bench(c: &mut Criterion) {
    let key = [7u8; 32];
    let iv = [9u8; 16];
    let plaintext = vec![b'x'; PLAINTEXT];
    let aad = vec![b'e'; AAD];
    let padded = (PLAINTEXT / 16 + 1) * 16;

    let mut g = c.benchmark_group("aes256cbc_encrypt");
    // RustCrypto's CBC over a fresh key schedule, or over one expanded beforehand.
    let expanded = Aes256::new(&key.into());
    let rc_encrypt = |encryptor: cbc::Encryptor<Aes256>| {
        let mut buf = vec![0u8; padded];
        buf[..PLAINTEXT].copy_from_slice(black_box(&plaintext));
        encryptor
            .encrypt_padded::<Pkcs7>(&mut buf, PLAINTEXT)
            .unwrap();
        buf
    };
    g.bench_function("rustcrypto", |b| {
        b.iter(|| rc_encrypt(cbc::Encryptor::new(&key.into(), &iv.into())))
    });
    g.bench_function("rustcrypto_expanded_key", |b| {
        b.iter(|| rc_encrypt(cbc::Encryptor::inner_iv_init(expanded.clone(), &iv.into())))
    });
    let aws_enc =
        PaddedBlockEncryptingKey::cbc_pkcs7(UnboundCipherKey::new(&AES_256, &key).unwrap())
            .unwrap();
    g.bench_function("aws_lc_rs", |b| {
        b.iter(|| {
            let mut buf = Vec::with_capacity(padded);
            buf.extend_from_slice(black_box(&plaintext));
            aws_enc
                .less_safe_encrypt(&mut buf, EncryptionContext::Iv128(FixedLength::from(iv)))
                .unwrap();
            buf
        })
    });
    g.finish();

    let mut ciphertext = Vec::with_capacity(padded);
    ciphertext.extend_from_slice(&plaintext);
    aws_enc
        .less_safe_encrypt(
            &mut ciphertext,
            EncryptionContext::Iv128(FixedLength::from(iv)),
        )
        .unwrap();
    let mut g = c.benchmark_group("aes256cbc_decrypt");
    let rc_decrypt = |decryptor: cbc::Decryptor<Aes256>| {
        let mut buf = black_box(&ciphertext).clone();
        let n = decryptor.decrypt_padded::<Pkcs7>(&mut buf).unwrap().len();
        buf.truncate(n);
        buf
    };
    g.bench_function("rustcrypto", |b| {
        b.iter(|| rc_decrypt(cbc::Decryptor::new(&key.into(), &iv.into())))
    });
    g.bench_function("rustcrypto_expanded_key", |b| {
        b.iter(|| rc_decrypt(cbc::Decryptor::inner_iv_init(expanded.clone(), &iv.into())))
    });
    let aws_dec =
        PaddedBlockDecryptingKey::cbc_pkcs7(UnboundCipherKey::new(&AES_256, &key).unwrap())
            .unwrap();
    g.bench_function("aws_lc_rs", |b| {
        b.iter(|| {
            let mut buf = black_box(&ciphertext).clone();
            let n = aws_dec
                .decrypt(&mut buf, DecryptionContext::Iv128(FixedLength::from(iv)))
                .unwrap()
                .len();
            buf.truncate(n);
            buf
        })
    });
    g.finish();

    let al = ((AAD as u64) * 8).to_be_bytes();
    let mut g = c.benchmark_group("hmac_sha512_tag");
    let rc_mac = <Hmac<Sha512> as KeyInit>::new_from_slice(&key).unwrap();
    g.bench_function("rustcrypto", |b| {
        b.iter(|| {
            let mut m = rc_mac.clone();
            m.update(black_box(&aad));
            m.update(&iv);
            m.update(black_box(&ciphertext));
            m.update(&al);
            m.finalize().into_bytes()
        })
    });
    // The same input in one `update`, so that whole blocks reach the compression function
    // together (its AVX2 form schedules two blocks at once). `CbcHs512::tag` feeds four
    // pieces: this checks what feeding them whole would gain (docs/performance.md).
    g.bench_function("rustcrypto_one_update", |b| {
        let mut input = Vec::with_capacity(AAD + 16 + ciphertext.len() + 8);
        b.iter(|| {
            input.clear();
            input.extend_from_slice(black_box(&aad));
            input.extend_from_slice(&iv);
            input.extend_from_slice(black_box(&ciphertext));
            input.extend_from_slice(&al);
            let mut m = rc_mac.clone();
            m.update(&input);
            m.finalize().into_bytes()
        })
    });
    let aws_key = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA512, &key);
    g.bench_function("aws_lc_rs", |b| {
        b.iter(|| {
            let mut m = aws_lc_rs::hmac::Context::with_key(&aws_key);
            m.update(black_box(&aad));
            m.update(&iv);
            m.update(black_box(&ciphertext));
            m.update(&al);
            m.sign()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
