//! The device authorization grant (RFC 8628), pure: the user code (its alphabet, making and
//! normalising), the device authorization request's checks, what is sealed into the device
//! code and kept while the user decides, and the answer to each poll of the token
//! endpoint. The sealing, the single-use store and the pages are the endpoint's
//! (`device_endpoint`).
//!
//! A device authorization is named by a random id: the device code is that id sealed with
//! the client and scopes (a JWE under the auth secret, as codes are), and the single-use
//! store keeps, under the user code, the request the user is shown and, under the id, the
//! user's decision, until the request expires.

use std::time::Duration;

use authcore::ratelimit::RateLimit;
use serde::{Deserialize, Serialize};

use crate::grant::Grant;

/// The user code's alphabet: consonants only, no vowel (no word is spelled) and none that
/// reads as a digit or another letter (RFC 8628 §6.1).
pub const USER_CODE_ALPHABET: &[u8; 20] = b"BCDFGHJKLMNPQRSTVWXZ";

/// Characters in a user code: 20^8 codes (about 34.5 bits), guessed only at the rate the
/// lookup limits allow (RFC 8628 §5.1).
pub const USER_CODE_LEN: usize = 8;

/// How long a device authorization may be completed (seconds, `expires_in`).
pub const DEVICE_CODE_TTL_SECS: u64 = 600;

/// The least time between two polls of the token endpoint (seconds, `interval`).
pub const POLL_INTERVAL_SECS: u64 = 5;

/// What a poll sooner than the interval adds to it (seconds, RFC 8628 §3.5 `slow_down`).
pub const SLOW_DOWN_SECS: u64 = 5;

/// A user code from random bytes: each byte under the largest multiple of the alphabet's
/// size picks a character (so that each is equally likely); `None` when the bytes run out
/// first (the caller draws again).
pub fn user_code(random: &[u8]) -> Option<String> {
    let n = USER_CODE_ALPHABET.len();
    let below = 256 - 256 % n;
    let code: String = random
        .iter()
        .filter(|b| usize::from(**b) < below)
        .take(USER_CODE_LEN)
        .map(|b| char::from(USER_CODE_ALPHABET[usize::from(*b) % n]))
        .collect();
    (code.len() == USER_CODE_LEN).then_some(code)
}

/// A user code as typed, normalised (RFC 8628 §6.1): case, dashes and spaces do not count;
/// `None` when what is left is not a code of the alphabet's [`USER_CODE_LEN`] characters
/// (no lookup is made for it).
pub fn normalise(typed: &str) -> Option<String> {
    if typed.len() > 64 {
        return None;
    }
    let code: String = typed
        .chars()
        .filter(|c| !(c.is_whitespace() || *c == '-'))
        .map(|c| c.to_ascii_uppercase())
        .collect();
    let valid =
        code.len() == USER_CODE_LEN && code.bytes().all(|b| USER_CODE_ALPHABET.contains(&b));
    valid.then_some(code)
}

/// A normalised user code as shown: `XXXX-XXXX`.
pub fn display(code: &str) -> String {
    match (code.get(..USER_CODE_LEN / 2), code.get(USER_CODE_LEN / 2..)) {
        (Some(a), Some(b)) => format!("{a}-{b}"),
        _ => code.to_owned(),
    }
}

/// Why a device authorization request is refused (RFC 8628 §3.2, RFC 6749 §5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestError {
    /// A scope the client may not ask for (`invalid_scope`).
    Scope,
}

/// The scopes of a device authorization request (RFC 8628 §3.1) for a client that may ask
/// for the scopes `allowed` says yes to: those of `scope`, each once, in order; `openid`
/// alone when it names none (RFC 6749 §3.3, the default); `organizations` dropped when
/// `organizations_on` is false.
pub fn requested_scopes(
    scope: Option<&str>,
    allowed: impl Fn(&str) -> bool,
    organizations_on: bool,
) -> Result<Vec<String>, RequestError> {
    let mut scopes: Vec<String> = Vec::new();
    for s in scope
        .unwrap_or_default()
        .split(' ')
        .filter(|s| !s.is_empty())
    {
        if !allowed(s) {
            return Err(RequestError::Scope);
        }
        if !scopes.iter().any(|k| k == s) {
            scopes.push(s.to_owned());
        }
    }
    if scopes.is_empty() {
        if !allowed("openid") {
            return Err(RequestError::Scope);
        }
        scopes.push("openid".to_owned());
    }
    if !organizations_on {
        scopes.retain(|s| s != "organizations");
    }
    Ok(scopes)
}

/// A device authorization as the client and the user's page know it: sealed into the
/// device code, and kept under the user code while the user decides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceRequest {
    /// The authorization's random id (what the decision is kept under, and the name of
    /// the grant it starts).
    pub id: String,
    /// The client it was made for: only it may redeem the device code.
    pub client_id: String,
    /// The scopes asked for.
    pub scopes: Vec<String>,
    /// When it expires (seconds since 1970).
    pub expires_at: i64,
}

/// What the user decided for a device authorization (kept under its id).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    /// Allowed: the grant the tokens stand for.
    Approved {
        /// The grant.
        grant: Grant,
    },
    /// Denied.
    Denied,
    /// Allowed, and its tokens issued: the device code is spent.
    Redeemed,
}

/// The answer to a poll of the token endpoint for a device code (RFC 8628 §3.5), before
/// the code's single use is spent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Poll {
    /// The tokens of this grant, to issue once.
    Redeem(Grant),
    /// An error: its `error` code and description.
    Refused(&'static str, &'static str),
    /// The device code was redeemed already: `invalid_grant`, and what its redemption
    /// gave is revoked (as a replayed code's, RFC 9700 §4.5.3.1).
    Replayed,
}

/// The answer to a poll by client `client_id` at `now` of the device authorization
/// `request` (from its device code), with whether the poll came sooner than the interval
/// allows (`too_soon`) and the user's `decision` so far.
pub fn poll(
    request: &DeviceRequest,
    client_id: &str,
    now: i64,
    too_soon: bool,
    decision: Option<Decision>,
) -> Poll {
    if request.client_id != client_id {
        return Poll::Refused(
            "invalid_grant",
            "the device code was issued to another client",
        );
    }
    if now >= request.expires_at {
        return Poll::Refused("expired_token", "the device code expired");
    }
    if decision == Some(Decision::Redeemed) {
        return Poll::Replayed;
    }
    if too_soon {
        return Poll::Refused(
            "slow_down",
            "polled sooner than the interval: add 5 seconds to it",
        );
    }
    match decision {
        None => Poll::Refused("authorization_pending", "the user has not decided yet"),
        Some(Decision::Denied) => Poll::Refused("access_denied", "the user denied the request"),
        Some(Decision::Redeemed) => Poll::Replayed,
        Some(Decision::Approved { grant }) if grant.client_id == client_id => Poll::Redeem(grant),
        Some(Decision::Approved { .. }) => Poll::Refused(
            "invalid_grant",
            "the device code was issued to another client",
        ),
    }
}

/// The limit on polls of one device code: one per interval; one sooner locks the code's
/// polls for the interval and [`SLOW_DOWN_SECS`] more, each poll meanwhile is `slow_down`
/// (RFC 8628 §3.5: a client that slowed down by 5 seconds polls again after the lock).
pub fn poll_limit() -> RateLimit {
    RateLimit::new(1, Duration::from_secs(POLL_INTERVAL_SECS))
        .lockout(Duration::from_secs(POLL_INTERVAL_SECS + SLOW_DOWN_SECS))
}

/// The limits on device authorizations started: per client address, and per client (a
/// public client authenticates with its id alone, and each start keeps a pending request
/// in the shared store for the code's lifetime).
pub fn start_limits() -> [(&'static str, RateLimit); 2] {
    let quarter = Duration::from_secs(900);
    [
        ("address", RateLimit::new(30, quarter)),
        ("client", RateLimit::new(2_000, quarter)),
    ]
}

/// The limits on user code lookups (RFC 8628 §5.1): per client address, per signed-in
/// user, and over all lookups, so that a distributed guess gains nothing either.
pub fn lookup_limits() -> [(&'static str, RateLimit); 3] {
    let quarter = Duration::from_secs(900);
    [
        ("client", RateLimit::new(20, quarter)),
        ("user", RateLimit::new(20, quarter)),
        ("all", RateLimit::new(2_000, quarter)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use authcore::ratelimit::Counter;

    #[test]
    fn user_codes_are_of_the_alphabet_and_unbiased() {
        let bytes: Vec<u8> = (0..=255).collect();
        let code = user_code(&bytes).unwrap();
        assert_eq!(code, "BCDFGHJK");
        // Bytes at or over 240 (12 × 20) are skipped, not folded onto the first letters.
        let high = [250, 245, 240, 0, 1, 2, 3, 4, 5, 6, 7];
        assert_eq!(user_code(&high).unwrap(), "BCDFGHJK");
        assert_eq!(user_code(&[239; 8]).unwrap(), "ZZZZZZZZ");
        assert_eq!(user_code(&[250; 40]), None);
        assert_eq!(user_code(&[1; 7]), None);
        let mut seen = [0u32; 20];
        for b in 0u8..240 {
            let c = user_code(&[b; 8]).unwrap();
            let i = USER_CODE_ALPHABET
                .iter()
                .position(|a| *a == c.as_bytes()[0])
                .unwrap();
            seen[i] += 1;
        }
        assert!(seen.iter().all(|n| *n == 12), "{seen:?}");
    }

    #[test]
    fn typed_codes_are_normalised_and_others_refused() {
        for (typed, expected) in [
            ("BCDF-GHJK", Some("BCDFGHJK")),
            ("bcdf-ghjk", Some("BCDFGHJK")),
            (" bcdf ghjk ", Some("BCDFGHJK")),
            ("BCDFGHJK", Some("BCDFGHJK")),
            ("B-C-D-F-G-H-J-K", Some("BCDFGHJK")),
            ("BCDF-GHJ", None),
            ("BCDF-GHJKL", None),
            // Vowels and digits are none of the alphabet's.
            ("BCDF-GHJA", None),
            ("BCDF-GHJ1", None),
            ("", None),
            ("BCDF_GHJK", None),
            ("ＢCDF-GHJK", None),
        ] {
            assert_eq!(normalise(typed).as_deref(), expected, "{typed:?}");
        }
        assert_eq!(normalise(&"-".repeat(10_000)), None);
        assert_eq!(display("BCDFGHJK"), "BCDF-GHJK");
    }

    #[test]
    fn scopes_are_checked_against_the_clients() {
        let allowed = |s: &str| ["openid", "email", "offline_access", "organizations"].contains(&s);
        assert_eq!(
            requested_scopes(Some("openid email openid"), allowed, true),
            Ok(vec!["openid".to_owned(), "email".to_owned()])
        );
        assert_eq!(
            requested_scopes(None, allowed, true),
            Ok(vec!["openid".to_owned()])
        );
        assert_eq!(
            requested_scopes(Some("  "), allowed, true),
            Ok(vec!["openid".to_owned()])
        );
        assert_eq!(
            requested_scopes(Some("openid profile"), allowed, true),
            Err(RequestError::Scope)
        );
        assert_eq!(
            requested_scopes(Some("openid organizations"), allowed, false),
            Ok(vec!["openid".to_owned()])
        );
        assert_eq!(
            requested_scopes(None, |s| s == "email", true),
            Err(RequestError::Scope)
        );
    }

    fn request() -> DeviceRequest {
        DeviceRequest {
            id: "d1".into(),
            client_id: "tv".into(),
            scopes: vec!["openid".into()],
            expires_at: 1_000,
        }
    }

    fn grant(client: &str) -> Grant {
        Grant {
            client_id: client.into(),
            sub: "u1".into(),
            scopes: vec!["openid".into()],
            auth_time: Some(900),
            amr: vec!["pwd".into()],
            sid: None,
            epoch: 1,
        }
    }

    #[test]
    fn each_poll_gets_its_answer() {
        let r = request();
        let approved = || Some(Decision::Approved { grant: grant("tv") });
        let refused = |p: Poll| match p {
            Poll::Refused(e, _) => e,
            Poll::Redeem(_) => "redeem",
            Poll::Replayed => "replayed",
        };
        let cases: [(&str, i64, bool, Option<Decision>, &str); 11] = [
            // Redeemed already: refused (and revoked) however soon it comes.
            ("tv", 500, true, Some(Decision::Redeemed), "replayed"),
            ("tv", 500, false, Some(Decision::Redeemed), "replayed"),
            (
                "radio",
                500,
                false,
                Some(Decision::Redeemed),
                "invalid_grant",
            ),
            ("tv", 500, false, None, "authorization_pending"),
            ("tv", 500, true, None, "slow_down"),
            ("tv", 500, false, Some(Decision::Denied), "access_denied"),
            ("tv", 500, false, approved(), "redeem"),
            // Another client's poll learns nothing of the decision.
            ("radio", 500, false, approved(), "invalid_grant"),
            ("radio", 500, true, None, "invalid_grant"),
            // Expired: whatever was decided.
            ("tv", 1_000, false, approved(), "expired_token"),
            ("tv", 500, true, approved(), "slow_down"),
        ];
        for (client, now, soon, decision, expected) in cases {
            assert_eq!(
                refused(poll(&r, client, now, soon, decision)),
                expected,
                "{client} {now} {soon}"
            );
        }
        // A decision for another client's grant is never redeemed by this one.
        let other = Some(Decision::Approved {
            grant: grant("radio"),
        });
        assert_eq!(refused(poll(&r, "tv", 500, false, other)), "invalid_grant");
        assert_eq!(
            poll(&r, "tv", 500, false, approved()),
            Poll::Redeem(grant("tv"))
        );
    }

    #[test]
    fn polling_sooner_than_the_interval_slows_the_client_down_by_five_seconds() {
        let limit = poll_limit();
        let s = 1_000u64;
        let (c, refused) = Counter::default().count(&limit, 1);
        assert_eq!(refused, None, "the first poll");
        let (c, refused) = c.count(&limit, 1 + 5 * s);
        assert_eq!(refused, None, "a poll after the interval");
        // Two seconds later: slow_down, and the code's polls wait 10 s (5 + 5).
        let (c, refused) = c.count(&limit, 1 + 7 * s);
        assert_eq!(refused, Some(Duration::from_secs(10)));
        // Still at the old interval: slow_down again.
        let (c, refused) = c.count(&limit, 1 + 12 * s);
        assert!(refused.is_some());
        // At the interval plus five seconds after the slow_down: answered.
        let (_, refused) = c.count(&limit, 1 + 17 * s);
        assert_eq!(refused, None);
    }

    #[test]
    fn decisions_are_kept_as_json() {
        let d = Decision::Approved { grant: grant("tv") };
        let json = serde_json::to_string(&d).unwrap();
        assert!(json.contains("\"decision\":\"approved\""), "{json}");
        assert_eq!(serde_json::from_str::<Decision>(&json).unwrap(), d);
        assert_eq!(
            serde_json::from_str::<Decision>(r#"{"decision":"denied"}"#).unwrap(),
            Decision::Denied
        );
    }
}
