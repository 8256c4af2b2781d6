//! Secret rotation across instances: a rolling deploy of a new `AUTH_SECRET` over
//! two instances signs nobody out before the old secret is dropped.
//!
//! The first secret of the list encrypts, every one decrypts (Auth.js). An instance that
//! does not have the new secret cannot read a token encrypted with it, so the rolling
//! procedure (docs/security.md, "Rotating the secret") adds the new secret *second* first:
//!
//! 1. `[old, new]` on one instance after the other (tokens still written with `old`);
//! 2. `[new, old]` on one instance after the other (tokens move to `new` as they refresh);
//! 3. `[new]` once sessions had the time to refresh (or `session.maxAge` has passed).
//!
//! Every user below reads their session on both instances, alternately, at every step, and
//! keeps whatever cookie the instance sends back, as a browser does.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use authcore::Auth;

const OLD: &str = "old-secret-4f1c0d3a9b8e7f6a5d4c3b2a1f0e9d8c";
const NEW: &str = "new-secret-7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d";

fn instance(secrets: &[&str]) -> Auth {
    auth_with(builder().secrets(secrets.iter().copied())).0
}

/// A browser of one user: its session cookie (`name=value`, empty once cleared).
struct Browser {
    cookie: String,
}

impl Browser {
    /// Signs in with the credentials provider on `auth` (whose secrets are `secrets`).
    async fn sign_in(auth: &Auth, secrets: &[&str]) -> Browser {
        let token = "c".repeat(64);
        let csrf = authcore::csrf::csrf_cookie_value(&token, &secrets.join(","));
        let r = send(
            auth,
            post("/auth/callback/credentials")
                .header(
                    "cookie",
                    format!("{CSRF_COOKIE}={}", csrf.replace('|', "%7C")),
                )
                .body(form(&[
                    ("csrfToken", &token),
                    ("username", "demo"),
                    ("password", "pw"),
                ]))
                .unwrap(),
        )
        .await;
        let value = r.cookie(SESSION_COOKIE).expect("signed in");
        Browser {
            cookie: format!("{SESSION_COOKIE}={value}"),
        }
    }

    /// `GET /auth/session` on `auth`: whether it is signed in; keeps the refreshed (or
    /// cleared) cookie.
    async fn signed_in_at(&mut self, auth: &Auth) -> bool {
        let r = get_session(auth, &self.cookie).await;
        if let Some(v) = r.cookie(SESSION_COOKIE) {
            self.cookie = format!("{SESSION_COOKIE}={v}");
        }
        r.json()["user"]["email"] == "demo@example.com"
    }
}

/// Every browser reads its session on each instance in turn, `rounds` times.
async fn all_signed_in(browsers: &mut [Browser], instances: &[&Auth], rounds: usize, step: &str) {
    for round in 0..rounds {
        for (i, b) in browsers.iter_mut().enumerate() {
            // Start on a different instance per browser, so both orders are exercised.
            for k in 0..instances.len() {
                let auth = instances[(i + k + round) % instances.len()];
                assert!(
                    b.signed_in_at(auth).await,
                    "{step}: browser {i} signed out (round {round}, instance {})",
                    (i + k + round) % instances.len()
                );
            }
        }
    }
}

#[tokio::test]
async fn a_rolling_rotation_signs_nobody_out_before_the_old_secret_is_dropped() {
    // Before: both instances on `[old]`, users signed in on either.
    let before = instance(&[OLD]);
    let mut browsers = Vec::new();
    for _ in 0..6 {
        browsers.push(Browser::sign_in(&before, &[OLD]).await);
    }
    // One user comes back once during the rotation, one never does.
    let mut idle = Browser::sign_in(&before, &[OLD]).await;
    let mut gone = Browser::sign_in(&before, &[OLD]).await;

    // Step 1, rolling: A gets `[old, new]` while B is still `[old]`.
    let (a, b) = (instance(&[OLD, NEW]), instance(&[OLD]));
    browsers.push(Browser::sign_in(&a, &[OLD, NEW]).await);
    browsers.push(Browser::sign_in(&b, &[OLD]).await);
    all_signed_in(&mut browsers, &[&a, &b], 2, "A [old, new], B [old]").await;
    let b = instance(&[OLD, NEW]);
    all_signed_in(&mut browsers, &[&a, &b], 1, "both [old, new]").await;

    // Step 2, rolling: A gets `[new, old]` while B is still `[old, new]`.
    let a = instance(&[NEW, OLD]);
    browsers.push(Browser::sign_in(&a, &[NEW, OLD]).await);
    browsers.push(Browser::sign_in(&b, &[OLD, NEW]).await);
    all_signed_in(&mut browsers, &[&a, &b], 2, "A [new, old], B [old, new]").await;
    let b = instance(&[NEW, OLD]);
    all_signed_in(&mut browsers, &[&a, &b], 1, "both [new, old]").await;
    // A token from before the rotation is still good here, and is now rewritten.
    assert!(idle.signed_in_at(&a).await, "idle user, both [new, old]");

    // Step 3, rolling: A drops the old secret while B still has it; then B too.
    let a = instance(&[NEW]);
    all_signed_in(&mut browsers, &[&a, &b], 2, "A [new], B [new, old]").await;
    let b = instance(&[NEW]);
    all_signed_in(&mut browsers, &[&a, &b], 2, "both [new]").await;
    assert_eq!(browsers.len(), 10);

    assert!(idle.signed_in_at(&b).await, "idle user, both [new]");

    // Only a token nobody refreshed since before step 2 is lost, when the old secret is
    // dropped: no session, and the cookie is cleared. (Drop the old secret `maxAge` after
    // step 2 to lose none.)
    assert!(!gone.signed_in_at(&a).await);
    assert_eq!(gone.cookie, format!("{SESSION_COOKIE}="));
}

/// Why step 1 adds the new secret second: an instance that writes with a secret another
/// instance lacks signs its users out there (Auth.js behaves the same: nothing can decrypt
/// without the key). Kept as a test so that the documented procedure stays necessary.
#[tokio::test]
async fn promoting_a_secret_before_every_instance_has_it_loses_sessions() {
    let (a, b) = (instance(&[NEW, OLD]), instance(&[OLD]));
    let mut user = Browser::sign_in(&instance(&[OLD]), &[OLD]).await;
    assert!(user.signed_in_at(&b).await);
    assert!(user.signed_in_at(&a).await, "A reads the old token...");
    assert!(
        !user.signed_in_at(&b).await,
        "...and rewrites it with a key B lacks"
    );
}
