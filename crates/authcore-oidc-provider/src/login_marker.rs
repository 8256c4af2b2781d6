//! The marker of a `prompt=login` request sent to sign in (OpenID Connect Core §3.1.2.1:
//! the user is authenticated again): the authorization endpoint adds it, sealed, to the
//! request's own URL, the sign-in page's way back. Pure: what it holds and when it lets a
//! code be issued; sealing it and spending its nonce are the caller's.
//!
//! A time alone would let any browser whose session signed in after it, at any time within
//! the seal's life and for any request, pass its old sign-in off as the fresh one asked for.
//! So the marker names its request (the client and a hash of all its parameters), the
//! sign-in present when it was made (which therefore does not count), and a nonce the caller
//! spends once.

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

/// A session's sign-in, as the session lookup tells it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SignIn {
    /// The database session's id (`None` for JWT sessions or without a session).
    pub session_id: Option<String>,
    /// When its user signed in (seconds since 1970), where the session records it.
    pub auth_time: Option<i64>,
}

/// The contents of a sealed marker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoginMarker {
    /// When the sign-in was asked for: a sign-in counts from then.
    #[serde(rename = "t")]
    since: i64,
    /// The client of the request.
    #[serde(rename = "c")]
    client_id: String,
    /// [`request_hash`] of the request's parameters.
    #[serde(rename = "h")]
    request: String,
    /// The session present when the marker was made, if any.
    #[serde(rename = "sid", default, skip_serializing_if = "Option::is_none")]
    before_session: Option<String>,
    /// That session's sign-in time, if any.
    #[serde(rename = "at", default, skip_serializing_if = "Option::is_none")]
    before_auth_time: Option<i64>,
    /// Spent on the marker's first acceptance.
    #[serde(rename = "n")]
    nonce: String,
}

impl LoginMarker {
    /// The marker of the request of `client_id` with `params` (the client's, without the
    /// marker), made at `now` while `before` is the browser's sign-in (the default when
    /// signed out).
    pub fn new(
        now: i64,
        client_id: &str,
        params: &[(String, String)],
        before: SignIn,
        nonce: String,
    ) -> Self {
        LoginMarker {
            since: now,
            client_id: client_id.to_owned(),
            request: request_hash(params),
            before_session: before.session_id,
            before_auth_time: before.auth_time,
            nonce,
        }
    }

    /// Whether `current`, the sign-in of the session that brought the marker back with the
    /// request of `client_id` with `params`, is the new sign-in it asked for: the same
    /// request, a sign-in at or after the marker's time, and not the sign-in present when
    /// it was made. The nonce is still to be spent.
    pub fn admits(&self, client_id: &str, params: &[(String, String)], current: &SignIn) -> bool {
        let same_request = self.client_id == client_id && self.request == request_hash(params);
        let after = current.auth_time.is_some_and(|t| t >= self.since);
        let new_sign_in = (&self.before_session, self.before_auth_time)
            != (&current.session_id, current.auth_time);
        same_request && after && new_sign_in
    }

    /// The nonce to spend.
    pub fn nonce(&self) -> &str {
        &self.nonce
    }
}

/// SHA-256 (base64url) of `params` in a canonical order (by name, then value), each pair
/// form-encoded, so that no two different sets of parameters share an encoding.
pub fn request_hash(params: &[(String, String)]) -> String {
    let mut sorted: Vec<&(String, String)> = params.iter().collect();
    sorted.sort();
    let mut encoded = url::form_urlencoded::Serializer::new(String::new());
    encoded.extend_pairs(sorted);
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(Sha256::digest(encoded.finish().as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    const REQUEST: &[(&str, &str)] = &[
        ("client_id", "rp"),
        ("redirect_uri", "https://rp.example/cb"),
        ("scope", "openid"),
        ("state", "st"),
        ("nonce", "n"),
        ("prompt", "login"),
    ];

    fn old_session() -> SignIn {
        SignIn {
            session_id: Some("old".into()),
            auth_time: Some(900),
        }
    }

    fn marker() -> LoginMarker {
        LoginMarker::new(1000, "rp", &params(REQUEST), old_session(), "nonce".into())
    }

    #[test]
    fn a_new_sign_in_for_the_same_request_is_admitted() {
        let new = SignIn {
            session_id: Some("new".into()),
            auth_time: Some(1000),
        };
        assert!(marker().admits("rp", &params(REQUEST), &new));
        // The order of the parameters is not the request's.
        let mut reordered = params(REQUEST);
        reordered.reverse();
        assert!(marker().admits("rp", &reordered, &new));
        // A new sign-in within the same session, or with JWT sessions (no id), counts.
        let same_session = SignIn {
            session_id: Some("old".into()),
            auth_time: Some(1001),
        };
        assert!(marker().admits("rp", &params(REQUEST), &same_session));
        let jwt = LoginMarker::new(
            1000,
            "rp",
            &params(REQUEST),
            SignIn {
                session_id: None,
                auth_time: Some(900),
            },
            "n".into(),
        );
        let later = SignIn {
            session_id: None,
            auth_time: Some(1005),
        };
        assert!(jwt.admits("rp", &params(REQUEST), &later));
        // Signed out when the marker was made: any sign-in since.
        let signed_out =
            LoginMarker::new(1000, "rp", &params(REQUEST), SignIn::default(), "n".into());
        assert!(signed_out.admits("rp", &params(REQUEST), &later));
    }

    #[test]
    fn the_old_sign_in_or_an_earlier_one_is_refused() {
        let m = marker();
        // The sign-in present when it was made, even if as recent as the marker.
        assert!(!m.admits("rp", &params(REQUEST), &old_session()));
        let same_second = LoginMarker::new(
            1000,
            "rp",
            &params(REQUEST),
            SignIn {
                session_id: Some("s".into()),
                auth_time: Some(1000),
            },
            "n".into(),
        );
        let unchanged = SignIn {
            session_id: Some("s".into()),
            auth_time: Some(1000),
        };
        assert!(!same_second.admits("rp", &params(REQUEST), &unchanged));
        // Another session signed in before the marker, or recording no time, or none.
        for current in [
            SignIn {
                session_id: Some("other".into()),
                auth_time: Some(999),
            },
            SignIn {
                session_id: Some("other".into()),
                auth_time: None,
            },
            SignIn::default(),
        ] {
            assert!(!m.admits("rp", &params(REQUEST), &current), "{current:?}");
        }
    }

    #[test]
    fn another_client_or_request_is_refused() {
        let m = marker();
        let new = SignIn {
            session_id: Some("new".into()),
            auth_time: Some(1000),
        };
        assert!(!m.admits("other", &params(REQUEST), &new));
        for (name, value) in [
            ("client_id", "other"),
            ("redirect_uri", "https://rp.example/other"),
            ("scope", "openid email"),
            ("state", "st2"),
            ("nonce", "n2"),
        ] {
            let changed: Vec<(String, String)> = params(REQUEST)
                .into_iter()
                .map(|(k, v)| {
                    if k == name {
                        (k, value.to_owned())
                    } else {
                        (k, v)
                    }
                })
                .collect();
            assert!(!m.admits("rp", &changed, &new), "{name}");
        }
        let mut added = params(REQUEST);
        added.push(("max_age".into(), "60".into()));
        assert!(!m.admits("rp", &added, &new));
        let removed: Vec<(String, String)> = params(REQUEST)
            .into_iter()
            .filter(|(k, _)| k != "state")
            .collect();
        assert!(!m.admits("rp", &removed, &new));
    }

    #[test]
    fn the_hash_encoding_is_unambiguous() {
        assert_ne!(
            request_hash(&params(&[("a", "1&b=2")])),
            request_hash(&params(&[("a", "1"), ("b", "2")]))
        );
        assert_ne!(
            request_hash(&params(&[("a=1", "")])),
            request_hash(&params(&[("a", "1")]))
        );
    }

    #[test]
    fn it_round_trips_through_json() {
        let m = marker();
        let json = serde_json::to_value(&m).unwrap();
        assert_eq!(json["c"], "rp");
        let back: LoginMarker = serde_json::from_value(json).unwrap();
        assert_eq!(back, m);
    }
}
