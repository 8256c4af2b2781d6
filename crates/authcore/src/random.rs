//! Randomness from the OS CSPRNG.
//!
//! Small draws (tokens, IVs, nonces: the two or three a request makes) come from a
//! per-thread block of OS random bytes, refilled by one `getrandom` call every
//! 4 KiB instead of one system call per draw. Every byte still comes from
//! the OS CSPRNG and is handed out once: it is wiped from the block as it is taken. A forked
//! child (which inherits a copy of the block) refills before its first draw, so parent and
//! child never share a byte: a `pthread_atfork` handler (`forkguard`) counts forks, and a
//! block is used only while the count is the one it was filled under. (Comparing process
//! ids instead costs a `getpid` system call per draw.) Where the handler cannot be
//! registered, every draw goes to the OS.

use std::cell::RefCell;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// Size of a thread's block of OS random bytes.
const POOL_BYTES: usize = 4096;

/// Draws longer than this go straight to the OS.
const MAX_POOLED_DRAW: usize = 64;

struct Pool {
    bytes: [u8; POOL_BYTES],
    /// Bytes already handed out (wiped); `POOL_BYTES` when the block must be refilled.
    used: usize,
    /// Notices a fork since the block was filled; `None` before the first fill, or when
    /// forks cannot be noticed (then nothing is pooled).
    fork: Option<forkguard::Guard>,
}

thread_local! {
    static POOL: RefCell<Pool> = const {
        RefCell::new(Pool { bytes: [0; POOL_BYTES], used: POOL_BYTES, fork: None })
    };
}

/// The OS random number generator failed ([`fill`]); its own error is the
/// [`source`](std::error::Error::source).
#[derive(Debug, thiserror::Error)]
#[error("the OS random number generator failed")]
pub struct RandomError(#[source] getrandom::Error);

/// Fills `out` with bytes from the OS CSPRNG (see the module docs): what the OpenID
/// Provider's crate draws its tokens and codes from too, so that a request's draws share the
/// one pooled system call.
///
/// # Errors
/// [`RandomError`] when the OS random number generator failed.
pub fn fill(out: &mut [u8]) -> Result<(), RandomError> {
    draw(out).map_err(RandomError)
}

/// [`fill`], with the OS's own error.
fn draw(out: &mut [u8]) -> Result<(), getrandom::Error> {
    if out.len() > MAX_POOLED_DRAW {
        return getrandom::fill(out);
    }
    POOL.with_borrow_mut(|pool| {
        let forked = pool
            .fork
            .as_mut()
            .is_none_or(forkguard::Guard::detected_fork);
        if forked || pool.used + out.len() > POOL_BYTES {
            // The fork count is taken before the block is filled: a fork from here on is
            // noticed by the next draw.
            pool.fork = forkguard::Guard::try_new().ok();
            pool.used = POOL_BYTES;
            if pool.fork.is_none() {
                return getrandom::fill(out);
            }
            getrandom::fill(&mut pool.bytes)?;
            pool.used = 0;
        }
        let taken = &mut pool.bytes[pool.used..pool.used + out.len()];
        out.copy_from_slice(taken);
        taken.fill(0);
        pool.used += out.len();
        Ok(())
    })
}

/// `N` random bytes. The OS CSPRNG failing is unrecoverable for an auth server.
pub(crate) fn bytes<const N: usize>() -> [u8; N] {
    let mut buf = [0u8; N];
    #[allow(clippy::expect_used)]
    fill(&mut buf).expect("the OS random number generator failed");
    buf
}

/// `N` random bytes as lowercase hex (`2N` chars).
pub(crate) fn hex_token<const N: usize>() -> String {
    let mut out = String::with_capacity(2 * N);
    push_hex(&mut out, &bytes::<N>());
    out
}

/// Appends `bytes` as lowercase hex, through a stack buffer: two digits looked up per byte,
/// then one `push_str` per 32 bytes (`hex::encode_to_slice` walks two stepped index
/// iterators per byte, and `hex::encode` pushes character by character). A unit test
/// compares it with the `hex` crate.
pub(crate) fn push_hex(out: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut buf = [0u8; 64];
    for chunk in bytes.chunks(32) {
        let hex = &mut buf[..2 * chunk.len()];
        for (pair, &b) in hex.chunks_exact_mut(2).zip(chunk) {
            pair[0] = DIGITS[usize::from(b >> 4)];
            pair[1] = DIGITS[usize::from(b & 0x0f)];
        }
        // Only ASCII digits were written.
        if let Ok(hex) = std::str::from_utf8(hex) {
            out.push_str(hex);
        }
    }
}

/// `N` random bytes as unpadded base64url.
#[allow(dead_code)]
pub(crate) fn b64url_token<const N: usize>() -> String {
    URL_SAFE_NO_PAD.encode(bytes::<N>())
}

/// A random UUID v4 string.
pub(crate) fn uuid_v4() -> String {
    uuid::Builder::from_random_bytes(bytes::<16>())
        .into_uuid()
        .hyphenated()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_public_error_keeps_the_os_error_as_its_source() {
        use std::error::Error as _;
        let e = RandomError(getrandom::Error::UNSUPPORTED);
        assert_eq!(e.to_string(), "the OS random number generator failed");
        let source = e.source().map(ToString::to_string);
        assert_eq!(source, Some(getrandom::Error::UNSUPPORTED.to_string()));
    }

    #[test]
    fn draws_never_repeat_and_span_refills() {
        let mut seen = std::collections::HashSet::new();
        // Several refills of the block, with draws that straddle its end.
        for _ in 0..(4 * POOL_BYTES / 24) {
            let mut b = [0u8; 24];
            fill(&mut b).unwrap();
            assert!(seen.insert(b), "a draw repeated");
        }
        let mut big = [0u8; 200];
        fill(&mut big).unwrap();
        assert!(big.iter().any(|&b| b != 0));
        let t = hex_token::<32>();
        assert_eq!(t.len(), 64);
        assert!(
            t.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
    }

    #[test]
    fn push_hex_matches_the_hex_crate() {
        let bytes: Vec<u8> = (0..=255u8).rev().collect();
        for len in [0, 1, 31, 32, 33, 64, 100, 256] {
            let mut out = String::from("x");
            push_hex(&mut out, &bytes[..len]);
            assert_eq!(
                out,
                format!("x{}", hex::encode(&bytes[..len])),
                "{len} bytes"
            );
        }
    }

    /// Forks are noticed by the `pthread_atfork` handler (the crate's `atfork` feature),
    /// not by a `getpid` per draw; and a fill sets up the guard.
    #[cfg(unix)]
    #[test]
    fn forks_are_noticed_by_an_atfork_handler() {
        assert_eq!(forkguard::Guard::FLAVOR, forkguard::Flavor::Atfork);
        fill(&mut [0u8; 8]).unwrap();
        POOL.with_borrow(|pool| assert!(pool.fork.is_some()));
    }

    #[test]
    fn taken_bytes_are_wiped_from_the_block() {
        let mut b = [0u8; 32];
        fill(&mut b).unwrap();
        POOL.with_borrow(|pool| {
            assert!(pool.used >= 32);
            assert!(pool.bytes[..pool.used].iter().all(|&x| x == 0));
        });
    }
}
