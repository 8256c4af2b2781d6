//! Cookie parsing (`authcore::cookies::RequestCookies`, `encode_uri_component`) and the
//! reassembly of chunked session cookies (through `Auth::get_raw_token`, `Auth::get_token`
//! and `Auth::read_session`: the chunk store itself is crate-private).
//!
//! Input: 16 parameter bytes, then text. The text's lines are `Cookie` header values; the
//! whole text is also the value of the round trip. Parameters: `[0]` flags (bit 0: run the
//! chunk test, bit 1: the ~5.6 KB token (two chunks), bit 2: `__Secure-` names, bit 3: also look the
//! session up), `[1]` order seed, `[2]` cookies per header, `[3..11]` cut points (eighths of
//! 256ths of the token), `[11..15]` index gaps, `[15]` number of unrelated cookies.
//! The text lines also go to `get_token`, so a seed holding a real session cookie decodes.
//!
//! Properties:
//! - parsed cookies have unique, non-empty names, and `get(name)` gives the first value;
//! - `name=<encode_uri_component(v)>` parses back to `v`;
//! - a real session token (made by authcore's encoder) cut into arbitrary chunks
//!   `<name>.<i>` with increasing (possibly sparse) indices, sent in any order, spread over
//!   several `Cookie` headers and mixed with other cookies, reassembles to the token and
//!   decodes to its claims; the session lookup then rewrites it into chunks no longer than
//!   `CHUNK_SIZE` that reassemble to a token with the same claims, and clears every request
//!   chunk it does not rewrite.

use std::sync::OnceLock;

use crate::{block_on, request_auth};
use authcore::cookies::{CHUNK_SIZE, RequestCookies, encode_uri_component};
use authcore::http;
use authcore::jwt::JwtClaims;
use authcore::serde_json::{Value, json};
use authcore::{Auth, GetTokenOptions};

struct Chunking {
    big: bool,
    secure: bool,
    refresh: bool,
    order: u8,
    per_header: u8,
    cuts: [u8; 8],
    gaps: [u8; 4],
    junk: u8,
}

struct Tokens {
    small: (String, JwtClaims),
    big: (String, JwtClaims),
    small_secure: String,
    big_secure: String,
}

fn tokens(auth: &Auth) -> &'static Tokens {
    static T: OnceLock<Tokens> = OnceLock::new();
    T.get_or_init(|| {
        let small = json!({"name": "Ada Lovelace", "email": "ada@example.com", "sub": "1"});
        let big = json!({"name": "Ada Lovelace", "email": "ada@example.com", "sub": "1",
                         "pad": "x".repeat(4000)});
        let (small, big) = (
            small.as_object().cloned().unwrap_or_default(),
            big.as_object().cloned().unwrap_or_default(),
        );
        // Valid for ten years: the decode side uses the real clock.
        let ttl = 10 * 365 * 24 * 3600;
        let enc = |c: &JwtClaims, salt: &str| {
            auth.config().jwt().encode(c, salt, ttl).expect("RNG works")
        };
        Tokens {
            small_secure: enc(&small, "__Secure-authjs.session-token"),
            big_secure: enc(&big, "__Secure-authjs.session-token"),
            small: (enc(&small, "authjs.session-token"), small),
            big: (enc(&big, "authjs.session-token"), big),
        }
    })
}

/// `(name, value)` of a `Set-Cookie` value.
fn set_cookie_pair(v: &http::HeaderValue) -> (String, String) {
    let s = v.to_str().expect("Set-Cookie is ASCII");
    let first = s.split(';').next().unwrap_or_default();
    let (n, v) = first.split_once('=').expect("name=value");
    (n.to_owned(), v.to_owned())
}

fn index_of(name: &str, base: &str) -> Option<u64> {
    name.strip_prefix(base)?.strip_prefix('.')?.parse().ok()
}

fn check_parse(auth: &Auth, lines: &[&str]) {
    let parsed = RequestCookies::parse(lines.iter().copied());
    let mut seen = std::collections::HashSet::new();
    for (name, value) in parsed.iter() {
        assert!(!name.is_empty(), "empty cookie name");
        assert!(seen.insert(name), "duplicate cookie name {name:?}");
        assert_eq!(parsed.get(name), Some(value));
    }
    let mut headers = http::HeaderMap::new();
    for line in lines {
        if let Ok(v) = http::HeaderValue::from_str(line) {
            headers.append(http::header::COOKIE, v);
        }
    }
    for secure in [false, true] {
        let options = GetTokenOptions::new().secure_cookie(secure);
        let raw = auth.get_raw_token(&headers, &options);
        let decoded = auth.get_token(&headers, &options);
        assert!(
            decoded.is_none() || raw.is_some(),
            "decoded a token that is not there"
        );
    }
}

fn check_chunks(auth: &Auth, c: &Chunking) {
    let t = tokens(auth);
    let base = if c.secure {
        "__Secure-authjs.session-token"
    } else {
        "authjs.session-token"
    };
    let (token, claims) = match (c.big, c.secure) {
        (false, false) => (t.small.0.as_str(), &t.small.1),
        (true, false) => (t.big.0.as_str(), &t.big.1),
        (false, true) => (t.small_secure.as_str(), &t.small.1),
        (true, true) => (t.big_secure.as_str(), &t.big.1),
    };
    // Cut the token at the (sorted, deduplicated) cut points.
    let mut cuts: Vec<usize> = c
        .cuts
        .iter()
        .map(|&x| usize::from(x) * token.len() / 256)
        .collect();
    cuts.push(0);
    cuts.push(token.len());
    cuts.sort_unstable();
    cuts.dedup();
    let mut chunks: Vec<(String, &str)> = Vec::new();
    let mut index = 0u64;
    for (i, w) in cuts.windows(2).enumerate() {
        if i > 0 {
            index += 1 + u64::from(c.gaps[i % 4] % 4) * u64::from(c.gaps[(i + 1) % 4]);
        }
        chunks.push((format!("{base}.{index}"), &token[w[0]..w[1]]));
    }
    // Fisher–Yates with a small LCG: the order the chunks are sent in.
    let mut seed = u64::from(c.order) | 1;
    for i in (1..chunks.len()).rev() {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        chunks.swap(i, (seed >> 33) as usize % (i + 1));
    }
    let mut cookies: Vec<String> = chunks.iter().map(|(n, v)| format!("{n}={v}")).collect();
    for k in 0..usize::from(c.junk % 8) {
        cookies.insert((k * 3) % (cookies.len() + 1), format!("junk{k}=v{k}"));
    }
    let per = 1 + usize::from(c.per_header % 4);
    let mut headers = http::HeaderMap::new();
    for group in cookies.chunks(per) {
        let line = group.join("; ");
        headers.append(
            http::header::COOKIE,
            line.parse().expect("ASCII cookie line"),
        );
    }

    let options = GetTokenOptions::new().secure_cookie(c.secure);
    assert_eq!(
        auth.get_raw_token(&headers, &options).as_deref(),
        Some(token),
        "chunks {chunks:?} did not reassemble"
    );
    let decoded = auth
        .get_token(&headers, &options)
        .expect("reassembled token decodes");
    for (k, v) in claims {
        assert_eq!(decoded.get(k), Some(v), "claim {k}");
    }

    if !c.refresh {
        return;
    }
    let uri: http::Uri = if c.secure {
        "https://localhost:3000/"
    } else {
        "http://localhost:3000/"
    }
    .parse()
    .expect("valid URI");
    let lookup =
        block_on(auth.read_session(&uri, &headers, &Default::default())).expect("session read");
    let session = lookup
        .session
        .expect("a valid session token gives a session");
    assert_eq!(session.json()["user"]["name"], Value::from("Ada Lovelace"));
    let written: Vec<(String, String)> = lookup.set_cookie.iter().map(set_cookie_pair).collect();
    // Every chunk of the request is either rewritten or cleared.
    for (name, _) in &chunks {
        assert!(
            written.iter().any(|(n, _)| n == name),
            "request chunk {name} left behind"
        );
    }
    // The non-empty cookies written reassemble (by index) into a token with the same claims.
    let mut parts: Vec<(u64, &str)> = written
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(n, v)| {
            assert!(v.len() <= CHUNK_SIZE, "chunk {n} is {} bytes", v.len());
            (
                if n == base {
                    0
                } else {
                    index_of(n, base).expect("chunk name")
                },
                v.as_str(),
            )
        })
        .collect();
    assert!(!parts.is_empty(), "the session cookie was not refreshed");
    parts.sort_by_key(|p| p.0);
    let new_token: String = parts.iter().map(|p| p.1).collect();
    let new_claims = auth
        .config()
        .jwt()
        .decode(&new_token, base)
        .expect("the rewritten token decodes")
        .expect("non-empty");
    for (k, v) in claims {
        assert_eq!(new_claims.get(k), Some(v), "claim {k} after refresh");
    }
}

/// One fuzz input (the `fuzz_targets/cookies.rs` target and the regression test).
pub fn run(data: &[u8]) {
    let mut params = [0u8; 16];
    let n = data.len().min(16);
    params[..n].copy_from_slice(&data[..n]);
    let text = String::from_utf8_lossy(&data[n..]);
    let auth = request_auth();

    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    check_parse(auth, &lines);

    let line = format!("x={}", encode_uri_component(&text));
    let parsed = RequestCookies::parse([line.as_str()]);
    assert_eq!(parsed.get("x"), Some(&*text), "encode/parse round trip");

    if params[0] & 1 != 0 {
        let c = Chunking {
            big: params[0] & 2 != 0,
            secure: params[0] & 4 != 0,
            refresh: params[0] & 8 != 0,
            order: params[1],
            per_header: params[2],
            cuts: params[3..11].try_into().expect("8 bytes"),
            gaps: params[11..15].try_into().expect("4 bytes"),
            junk: params[15],
        };
        check_chunks(auth, &c);
    }
}
