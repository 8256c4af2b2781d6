//! Sign-ins against the directory: users, groups (memberOf and group search), TLS, a
//! directory that is down or silent, and the credentials provider end to end.

use std::time::{Duration, Instant};

use authcore::adapter::{Adapter, MemoryAdapter};
use authcore::passwords::{SourceError, SourceUser, UserSource};
use tokio::io::AsyncReadExt;

use crate::support::slapd::{self, GROUPS_DN, STAR_UID, free_port};
use crate::support::*;

fn alice() -> SourceUser {
    SourceUser::new("alice")
        .name("Alice L.")
        .email("alice@example.org")
        .groups(["admins", "dev"])
}

#[tokio::test]
async fn users_sign_in_with_name_email_and_groups_in_both_group_modes() {
    let slapd = Slapd::start();
    let mut modes = vec![("group search", group_search_settings(&slapd))];
    if slapd.memberof {
        modes.push(("memberOf", settings(&slapd)));
    }
    for (mode, settings) in modes {
        let ldap = source(settings);
        let cases: Vec<(&str, &str, SourceUser)> = vec![
            ("alice", ALICE_PASSWORD, alice()),
            // By address (the default filter's `mail`), in another case.
            ("ALICE@example.org", ALICE_PASSWORD, alice()),
            // No displayName: the cn; no group.
            (
                "bob",
                BOB_PASSWORD,
                SourceUser::new("bob")
                    .name("Bob Builder")
                    .email("bob@example.org"),
            ),
            // Filter syntax in the uid is matched literally, and the DN in the group
            // filter is escaped.
            (
                STAR_UID,
                STAR_PASSWORD,
                SourceUser::new(STAR_UID)
                    .name("Star (One)")
                    .email("star@example.org")
                    .groups(["dev"]),
            ),
        ];
        for (username, password, expected) in cases {
            let found = ldap.authenticate(username, password).await.unwrap();
            assert_eq!(found, Some(expected), "{mode}: {username}");
        }
    }
}

#[tokio::test]
async fn a_wrong_password_or_an_unknown_user_signs_nobody_in() {
    let slapd = Slapd::start();
    let ldap = source(settings(&slapd));
    for (username, password) in [
        ("alice", "wrong"),
        ("alice", BOB_PASSWORD),
        ("alice", "alice-password "),
        ("nobody", ALICE_PASSWORD),
        ("bob", ""),
        // The service account is no person: the filter does not find it.
        ("authcore", "service-password"),
    ] {
        assert_eq!(
            ldap.authenticate(username, password).await.unwrap(),
            None,
            "{username}"
        );
    }
    // The pool keeps working after refusals.
    assert!(
        ldap.authenticate("alice", ALICE_PASSWORD)
            .await
            .unwrap()
            .is_some()
    );
}

#[tokio::test]
async fn ldaps_and_start_tls_with_a_private_ca() {
    let slapd = Slapd::start();
    let mut ldaps = settings(&slapd);
    ldaps.url = slapd.ldaps_url();
    ldaps.ca_file = Some(slapd.ca_file.clone());
    let mut start_tls = settings(&slapd);
    start_tls.start_tls = true;
    start_tls.ca_file = Some(slapd.ca_file.clone());
    let mut by_name = ldaps.clone();
    by_name.url = format!("ldaps://localhost:{}", slapd.tls_port);
    for (name, settings) in [
        ("ldaps", ldaps),
        ("start_tls", start_tls),
        ("localhost", by_name),
    ] {
        let ldap = source(settings);
        let found = ldap.authenticate("alice", ALICE_PASSWORD).await.unwrap();
        assert_eq!(found.map(|u| u.id), Some("alice".to_owned()), "{name}");
        assert_eq!(
            ldap.authenticate("alice", "wrong").await.unwrap(),
            None,
            "{name}"
        );
    }
}

#[tokio::test]
async fn a_certificate_from_another_ca_is_refused() {
    let slapd = Slapd::start();
    let other = Slapd::start();
    for start_tls in [false, true] {
        let mut settings = settings(&slapd);
        if start_tls {
            settings.start_tls = true;
        } else {
            settings.url = slapd.ldaps_url();
        }
        // The other directory's CA did not sign this one's certificate.
        settings.ca_file = Some(other.ca_file.clone());
        let ldap = source(settings);
        let err = ldap
            .authenticate("alice", ALICE_PASSWORD)
            .await
            .unwrap_err();
        assert!(matches!(err, SourceError::Unavailable(_)), "{err}");
    }
}

#[tokio::test]
async fn a_directory_that_is_down_or_silent_is_unavailable_within_the_timeouts() {
    // Nobody listens on the port.
    let mut down = support_settings(format!("ldap://127.0.0.1:{}", free_port()));
    down.connect_timeout = 1.0;
    // A listener that accepts and never answers: the bind waits for the operation timeout.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_url = format!("ldap://{}", silent.local_addr().unwrap());
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((mut stream, _)) = silent.accept().await {
            let mut buf = [0u8; 1024];
            let _ = tokio::time::timeout(Duration::from_millis(10), stream.read(&mut buf)).await;
            held.push(stream);
        }
    });
    let mut silent = support_settings(silent_url.clone());
    silent.operation_timeout = 0.5;
    let mut silent_start_tls = support_settings(silent_url);
    silent_start_tls.start_tls = true;
    silent_start_tls.connect_timeout = 0.5;
    for (name, settings) in [
        ("down", down),
        ("silent", silent),
        ("silent StartTLS", silent_start_tls),
    ] {
        let ldap = source(settings);
        let started = Instant::now();
        let err = ldap
            .authenticate("alice", ALICE_PASSWORD)
            .await
            .unwrap_err();
        assert!(matches!(err, SourceError::Unavailable(_)), "{name}: {err}");
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{name}: {:?}",
            started.elapsed()
        );
        assert!(!err.to_string().contains(ALICE_PASSWORD), "{err}");
    }
}

/// Settings for a directory at `url` that is not the test's slapd.
fn support_settings(url: String) -> authcore_ldap::LdapSettings {
    authcore_ldap::LdapSettings::new(
        url,
        "cn=authcore,dc=example,dc=org",
        "service-password",
        "dc=example,dc=org",
    )
}

#[tokio::test]
async fn a_pooled_connection_the_directory_closed_is_replaced() {
    let slapd = Slapd::start();
    let mut settings = settings(&slapd);
    settings.pool_size = 1;
    let ldap = source(settings);
    assert!(
        ldap.authenticate("alice", ALICE_PASSWORD)
            .await
            .unwrap()
            .is_some()
    );
    // slapd closes connections idle for longer than its idletimeout.
    tokio::time::sleep(Duration::from_millis(
        slapd::IDLE_TIMEOUT_SECONDS * 1000 + 1500,
    ))
    .await;
    assert!(
        ldap.authenticate("alice", ALICE_PASSWORD)
            .await
            .unwrap()
            .is_some()
    );
    // Gone for good: unavailable, not stuck.
    drop(slapd);
    let err = ldap
        .authenticate("alice", ALICE_PASSWORD)
        .await
        .unwrap_err();
    assert!(matches!(err, SourceError::Unavailable(_)), "{err}");
}

#[tokio::test]
async fn a_wrong_service_password_is_unavailable_and_says_what_to_check() {
    let slapd = Slapd::start();
    let mut settings = settings(&slapd);
    settings.bind_password = "not the service password".into();
    let err = source(settings)
        .authenticate("alice", ALICE_PASSWORD)
        .await
        .unwrap_err();
    let message = format!("{err}: {:?}", std::error::Error::source(&err));
    assert!(message.contains("bind_dn and bind_password"), "{message}");
    assert!(!message.contains("not the service password"), "{message}");
}

#[tokio::test]
async fn the_credentials_provider_records_the_user_and_groups() {
    let slapd = Slapd::start();
    let adapter = MemoryAdapter::new();
    let auth = auth(source(settings(&slapd)), adapter.clone());

    let wrong = sign_in(&auth, "alice", "wrong").await;
    assert_eq!(wrong.status, 302);
    assert!(
        wrong
            .location
            .as_deref()
            .is_some_and(|l| l.contains("error=CredentialsSignin")),
        "{:?}",
        wrong.location
    );
    assert!(!wrong.signed_in());
    assert!(
        adapter
            .get_user_by_account("ldap", "alice")
            .await
            .unwrap()
            .is_none()
    );

    let answer = sign_in(&auth, "alice", ALICE_PASSWORD).await;
    assert_eq!(answer.status, 302);
    assert_eq!(
        answer.location.as_deref(),
        Some("https://authjs.test/dashboard")
    );
    assert!(answer.signed_in(), "{:?}", answer.set_cookies);
    let user = adapter
        .get_user_by_account("ldap", "alice")
        .await
        .unwrap()
        .expect("alice recorded, linked by her uid");
    assert_eq!(user.name.as_deref(), Some("Alice L."));
    assert_eq!(user.email.as_deref(), Some("alice@example.org"));
    let groups = adapter
        .capabilities()
        .user_groups
        .expect("the memory adapter keeps groups")
        .get_user_groups(&user.id)
        .await
        .unwrap();
    assert_eq!(groups, ["admins", "dev"]);

    // Removed from a group in the directory: the next sign-in records it.
    slapd
        .ldap_tool(
            "ldapmodify",
            &[
                std::path::Path::new("-f"),
                &write(&slapd, "drop.ldif", &format!(
                    "dn: cn=admins,{GROUPS_DN}\nchangetype: modify\ndelete: member\nmember: uid=alice,ou=people,dc=example,dc=org\n"
                )),
            ],
        )
        .unwrap();
    assert!(sign_in(&auth, "alice", ALICE_PASSWORD).await.signed_in());
    let again = adapter
        .get_user_by_account("ldap", "alice")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(again.id, user.id);
    let groups = adapter
        .capabilities()
        .user_groups
        .unwrap()
        .get_user_groups(&user.id)
        .await
        .unwrap();
    assert_eq!(groups, ["dev"]);
}

fn write(slapd: &Slapd, name: &str, text: &str) -> std::path::PathBuf {
    let path = slapd.dir().join(name);
    std::fs::write(&path, text).unwrap();
    path
}
