//! Attacks on the sign-in: filter injection in the username, unauthenticated binds, huge
//! and malformed input. Each must answer `Ok(None)` (or an error), create no session and
//! record no user; the user an injected filter would find is never bound.

use authcore::adapter::{Adapter, MemoryAdapter};
use authcore::passwords::UserSource;

use crate::support::slapd::PEOPLE_DN;
use crate::support::*;

/// Usernames that would widen or rewrite an unescaped filter. Each is tried with the
/// password of `victim`, the only entry `vict*` would match: were the username pasted
/// into the filter, the search would find victim and the bind with victim's password
/// would succeed.
const INJECTIONS: &[&str] = &[
    "*",
    "vict*",
    "*)(uid=*",
    "*)(uid=victim",
    "victim)(uid=*",
    "admin)(|(uid=*",
    "alice)(objectClass=*",
    "victim)(|(objectClass=*)",
    "*))(|(uid=victim",
    r"\2a",
    r"vict\2a",
    "vict\0",
    "victim\0",
    "\0",
    "(uid=victim)",
    "victim))%00",
    "*victim*",
    "v*m",
];

#[tokio::test]
async fn injected_filters_find_nobody() {
    let slapd = Slapd::start();
    let ldap = source(group_search_settings(&slapd));
    for username in INJECTIONS {
        for password in [VICTIM_PASSWORD, ALICE_PASSWORD] {
            let answer = ldap.authenticate(username, password).await;
            assert!(
                matches!(answer, Ok(None) | Err(_)),
                "{username:?} signed in as {answer:?}"
            );
        }
    }
    // Victim's own sign-in works: the refusals above came from the escaping.
    assert!(
        ldap.authenticate("victim", VICTIM_PASSWORD)
            .await
            .unwrap()
            .is_some()
    );
}

#[tokio::test]
async fn an_empty_password_never_signs_in_although_the_directory_accepts_the_bind() {
    let slapd = Slapd::start();
    // slapd takes a bind with a DN and an empty password as an unauthenticated bind.
    let mut raw = ldap3::LdapConnAsync::new(&slapd.ldap_url()).await.unwrap();
    ldap3::drive!(raw.0);
    let dn = format!("uid=alice,{PEOPLE_DN}");
    assert_eq!(raw.1.simple_bind(&dn, "").await.unwrap().rc, 0);

    let ldap = source(settings(&slapd));
    for username in ["alice", "bob", "victim", "*", ""] {
        assert_eq!(
            ldap.authenticate(username, "").await.unwrap(),
            None,
            "{username}"
        );
    }
}

#[tokio::test]
async fn oversized_and_malformed_input_is_refused_before_the_directory() {
    let slapd = Slapd::start();
    let ldap = source(settings(&slapd));
    let megabyte = "p".repeat(1 << 20);
    let long_name = "a".repeat(10_000);
    for (username, password) in [
        ("alice", megabyte.as_str()),
        (long_name.as_str(), ALICE_PASSWORD),
        ("alice", "alice-password\0"),
        ("alice\0", ALICE_PASSWORD),
        ("   ", ALICE_PASSWORD),
        // The control: the same user with the right input.
        ("alice", ALICE_PASSWORD),
    ] {
        let answer = ldap.authenticate(username, password).await.unwrap();
        // Only the unmodified pair signs in.
        assert_eq!(
            answer.is_some(),
            username == "alice" && password == ALICE_PASSWORD,
            "{:?}",
            &username[..username.len().min(20)]
        );
    }
}

#[tokio::test]
async fn attacks_through_the_handler_leave_no_session_and_no_user() {
    let slapd = Slapd::start();
    let adapter = MemoryAdapter::new();
    let auth = auth(source(settings(&slapd)), adapter.clone());
    let megabyte = "p".repeat(1 << 20);
    let mut attempts: Vec<(&str, &str)> =
        INJECTIONS.iter().map(|u| (*u, VICTIM_PASSWORD)).collect();
    attempts.extend([("alice", ""), ("victim", ""), ("alice", megabyte.as_str())]);
    for (username, password) in attempts {
        let answer = sign_in(&auth, username, password).await;
        assert!(
            !answer.signed_in(),
            "{username:?}: {:?}",
            answer.set_cookies
        );
        // A refused sign-in redirects to the sign-in page; a body over the handler's
        // limit (the 1 MB password) is refused before any provider runs.
        assert!(
            answer.status == 302 || answer.status == 413,
            "{username:?}: {}",
            answer.status
        );
        if answer.status == 302 {
            let location = answer.location.unwrap_or_default();
            assert!(location.contains("error="), "{username:?}: {location}");
        }
    }
    for uid in ["victim", "alice", "bob", "*"] {
        assert!(
            adapter
                .get_user_by_account("ldap", uid)
                .await
                .unwrap()
                .is_none(),
            "{uid} was recorded"
        );
    }
}
