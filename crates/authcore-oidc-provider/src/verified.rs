//! The access tokens whose signature this process has checked, or that it opened (opaque
//! ones) ([`VerifiedTokens`]), so that a token presented again (a client calls userinfo with
//! the same token until it expires) is not verified again.
//!
//! Only what cannot change is remembered: that these exact bytes carry a valid signature of
//! one of the provider's keys (fixed at start-up), or open under the auth secret (fixed at
//! start-up too), with the fixed issuer and audience, and the claims they say. The expiry
//! is compared at each use, and everything that can change — the revocation marks, the
//! user's access to the client, the client's allowed users — is read from the stores at
//! each use as before, so a revocation takes effect at once on every instance. A token that
//! fails verification is not remembered.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use crate::grant::AccessTokenClaims;

/// How many tokens a generation holds: at most twice as many are remembered, the older
/// generation dropped whole when the newer fills.
const GENERATION: usize = 1024;

/// The tokens verified lately, by their exact text (its `Debug` shows no token).
#[derive(Default)]
pub(crate) struct VerifiedTokens {
    generations: Mutex<Generations>,
}

impl std::fmt::Debug for VerifiedTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("VerifiedTokens([redacted])")
    }
}

#[derive(Default)]
struct Generations {
    current: HashMap<Box<str>, Arc<AccessTokenClaims>>,
    previous: HashMap<Box<str>, Arc<AccessTokenClaims>>,
}

impl VerifiedTokens {
    /// The claims of `token` when it was verified here and has not expired at `now` (as
    /// the verification holds it: valid up to and including its `exp`), shared with the
    /// memory rather than copied.
    pub(crate) fn get(&self, token: &str, now: i64) -> Option<Arc<AccessTokenClaims>> {
        let g = self
            .generations
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let claims = g.current.get(token).or_else(|| g.previous.get(token))?;
        (claims.exp >= now).then(|| Arc::clone(claims))
    }

    /// Remembers that `token`, with `claims`, passed verification.
    pub(crate) fn insert(&self, token: &str, claims: &Arc<AccessTokenClaims>) {
        let mut g = self
            .generations
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if g.current.len() >= GENERATION {
            g.previous = std::mem::take(&mut g.current);
        }
        g.current.insert(token.into(), Arc::clone(claims));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn claims(jti: &str, exp: i64) -> Arc<AccessTokenClaims> {
        Arc::new(AccessTokenClaims {
            iss: "https://op.example/oidc".into(),
            aud: "https://op.example/oidc/userinfo".into(),
            sub: "u1".into(),
            client_id: "c1".into(),
            scope: "openid".into(),
            iat: exp - 600,
            exp,
            jti: jti.into(),
            grant: Some("g1".into()),
            epoch: 0,
            cnf: None,
        })
    }

    #[test]
    fn a_token_is_known_by_its_exact_text_until_it_expires() {
        let tokens = VerifiedTokens::default();
        tokens.insert("a.b.c", &claims("j1", 1_000));
        assert_eq!(tokens.get("a.b.c", 999).unwrap().jti, "j1");
        assert_eq!(tokens.get("a.b.c", 1_000).unwrap().jti, "j1");
        // Expired: as the verification would say.
        assert!(tokens.get("a.b.c", 1_001).is_none());
        // Any other text, however close, is not known.
        for other in ["a.b.C", "a.b.c ", "a.b.", "", "a.b.c.d"] {
            assert!(tokens.get(other, 0).is_none(), "{other:?}");
        }
    }

    #[test]
    fn memory_is_bounded_and_the_latest_tokens_stay() {
        let tokens = VerifiedTokens::default();
        for i in 0..(3 * GENERATION) {
            tokens.insert(&format!("t{i}"), &claims(&format!("j{i}"), 1_000));
        }
        let g = tokens.generations.lock().unwrap();
        assert!(g.current.len() + g.previous.len() <= 2 * GENERATION);
        drop(g);
        let last = 3 * GENERATION - 1;
        assert_eq!(
            tokens.get(&format!("t{last}"), 0).unwrap().jti,
            format!("j{last}")
        );
        assert!(tokens.get("t0", 0).is_none());
    }
}
