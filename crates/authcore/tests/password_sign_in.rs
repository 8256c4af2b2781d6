//! Password sign-in without an `authorize`: `CredentialsProvider::from_source` with a user
//! source (a fixed directory here, and the adapter's password accounts), with JWT and
//! database sessions, and the attempts that must open no session.
#![allow(clippy::unwrap_used)]
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::common::*;
use authcore::adapter::{Adapter, MemoryAdapter};
use authcore::async_trait;
use authcore::passwords::{PasswordAccounts, PasswordHashing, SourceError, SourceUser, UserSource};
use authcore::providers::CredentialsProvider;
use authcore::{AuthConfigBuilder, SessionStrategy};

/// A directory of one user, `ada` / `right password`, in groups `admins` and `dev`; it
/// counts the times it was asked.
#[derive(Debug, Default)]
struct Directory {
    asked: AtomicUsize,
    /// Whether its addresses are its operator's word.
    vouches: bool,
}

#[async_trait]
impl UserSource for Directory {
    fn id(&self) -> &str {
        "directory"
    }

    fn vouches_for_addresses(&self) -> bool {
        self.vouches
    }

    async fn authenticate(
        &self,
        username: &str,
        password: &str,
    ) -> Result<Option<SourceUser>, SourceError> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        Ok(
            (username == "ada" && password == "right password").then(|| {
                SourceUser::new("ada")
                    .name("Ada Lovelace")
                    .email("Ada@Example.com")
                    .groups(["admins", "dev"])
            }),
        )
    }
}

fn with_source(source: Arc<dyn UserSource>) -> AuthConfigBuilder {
    authcore::AuthConfig::builder()
        .secret(SECRET)
        .trust_host(true)
        .provider(CredentialsProvider::from_source(source))
}

fn database(b: AuthConfigBuilder, db: &MemoryAdapter) -> AuthConfigBuilder {
    b.adapter(db.clone())
        .session_strategy(SessionStrategy::Database)
}

/// Cheap argon2id parameters: the formats, not the cost, are tested here.
fn hashing() -> PasswordHashing {
    PasswordHashing::argon2id(64, 1, 1).unwrap()
}

#[tokio::test]
async fn jwt_sessions_carry_a_stable_id_and_the_groups() {
    let (auth, rec) = auth_with(with_source(Arc::new(Directory::default())));
    let r = post_credentials_to(
        &auth,
        "directory",
        &[("username", "ada"), ("password", "right password")],
    )
    .await;
    assert_eq!(r.status, 302, "{:?}", rec.errors());
    let claims = auth
        .config()
        .jwt()
        .decode(&r.cookie(SESSION_COOKIE).unwrap(), SESSION_COOKIE)
        .unwrap()
        .unwrap();
    assert_eq!(claims["sub"], "directory:ada");
    assert_eq!(claims["name"], "Ada Lovelace");
    assert_eq!(
        rec.event("signIn").unwrap()["account"]["provider"],
        "directory"
    );
}

#[tokio::test]
async fn database_sessions_record_and_link_the_user_once_with_its_groups() {
    let db = MemoryAdapter::new();
    let (auth, rec) = auth_with(database(with_source(Arc::new(Directory::default())), &db));
    let mut ids = Vec::new();
    for _ in 0..2 {
        let r = post_credentials_to(
            &auth,
            "directory",
            &[("username", "ada"), ("password", "right password")],
        )
        .await;
        assert_eq!(r.status, 302, "{:?}", rec.errors());
        let token = r.cookie(SESSION_COOKIE).unwrap();
        let session = db.get_session_and_user(&token).await.unwrap().unwrap();
        ids.push(session.1.id);
    }
    assert_eq!(ids[0], ids[1], "the second sign-in finds the linked user");
    let user = db
        .get_user_by_account("directory", "ada")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(user.id, ids[0]);
    assert_eq!(user.email.as_deref(), Some("ada@example.com"));
    assert_eq!(
        db.capabilities()
            .user_groups
            .unwrap()
            .get_user_groups(&user.id)
            .await
            .unwrap(),
        ["admins", "dev"]
    );
}

/// A first sign-in whose address is another stored user's: linked to that user when the
/// source vouches for its addresses (a users file), refused otherwise (a directory whose
/// users may write their own `mail`), with no session and no link.
#[tokio::test]
async fn an_existing_address_is_linked_only_when_the_source_vouches_for_it() {
    for vouches in [true, false] {
        let db = MemoryAdapter::new();
        let existing = stored_user(&db, "ada@example.com", true).await;
        let directory = Directory {
            vouches,
            ..Directory::default()
        };
        let (auth, _) = auth_with(database(with_source(Arc::new(directory)), &db));
        let r = post_credentials_to(
            &auth,
            "directory",
            &[("username", "ada"), ("password", "right password")],
        )
        .await;
        assert_eq!(r.cookie(SESSION_COOKIE).is_some(), vouches);
        let linked = db.get_user_by_account("directory", "ada").await.unwrap();
        assert_eq!(linked.map(|u| u.id), vouches.then(|| existing.clone()));
    }
}

/// Attempts that never reach the source, and ones it refuses: no session, the standard
/// `CredentialsSignin` answer, nothing stored.
#[tokio::test]
async fn refused_attempts_open_no_session_and_store_nothing() {
    let directory = Arc::new(Directory::default());
    let db = MemoryAdapter::new();
    let (auth, _) = auth_with(database(with_source(directory.clone()), &db));
    let long_name = "a".repeat(257);
    let long_password = "x".repeat(600);
    for (case, fields, reaches_source) in [
        (
            "empty password",
            vec![("username", "ada"), ("password", "")],
            false,
        ),
        (
            "empty username",
            vec![("username", ""), ("password", "right password")],
            false,
        ),
        (
            "blank username",
            vec![("username", "   "), ("password", "right password")],
            false,
        ),
        ("no username", vec![("password", "right password")], false),
        (
            "long username",
            vec![("username", long_name.as_str()), ("password", "x")],
            false,
        ),
        (
            "wrong password",
            vec![("username", "ada"), ("password", "wrong")],
            true,
        ),
        (
            "wildcard",
            vec![("username", "*"), ("password", "right password")],
            true,
        ),
        (
            "long password",
            vec![("username", "ada"), ("password", long_password.as_str())],
            true,
        ),
    ] {
        let before = directory.asked.load(Ordering::SeqCst);
        let r = post_credentials_to(&auth, "directory", &fields).await;
        assert_eq!(
            r.location(),
            Some("https://authjs.test/auth/signin?error=CredentialsSignin&code=credentials"),
            "{case}"
        );
        assert!(r.cookie(SESSION_COOKIE).is_none(), "{case}");
        let asked = directory.asked.load(Ordering::SeqCst) - before;
        assert_eq!(asked, usize::from(reaches_source), "{case}");
    }
    // A body of a megabyte is refused before anything reads it.
    let huge = "x".repeat(1 << 20);
    let before = directory.asked.load(Ordering::SeqCst);
    let r = post_credentials_to(
        &auth,
        "directory",
        &[("username", "ada"), ("password", &huge)],
    )
    .await;
    assert_eq!(r.status, 413);
    assert!(r.cookie(SESSION_COOKIE).is_none());
    assert_eq!(directory.asked.load(Ordering::SeqCst), before);
    assert!(
        db.get_user_by_account("directory", "ada")
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn password_accounts_sign_in_by_address() {
    let db = MemoryAdapter::new();
    let accounts = PasswordAccounts::new(Arc::new(db.clone()), hashing()).unwrap();
    let id = stored_user(&db, "grace@example.com", true).await;
    accounts
        .set_password(&id, "a long enough passphrase")
        .await
        .unwrap();
    let (auth, rec) = auth_with(database(with_source(Arc::new(accounts)), &db));
    for (username, password, signs_in) in [
        ("grace@example.com", "a long enough passphrase", true),
        ("GRACE@example.com ", "a long enough passphrase", true),
        ("grace@example.com", "a long enough passphras", false),
        ("nobody@example.com", "a long enough passphrase", false),
        ("not an address", "a long enough passphrase", false),
    ] {
        let r = post_credentials_to(
            &auth,
            "password",
            &[("username", username), ("password", password)],
        )
        .await;
        let token = r.cookie(SESSION_COOKIE);
        assert_eq!(
            token.is_some(),
            signs_in,
            "{username} {password}: {:?}",
            rec.errors()
        );
        if let Some(token) = token {
            let (_, user) = db.get_session_and_user(&token).await.unwrap().unwrap();
            assert_eq!(user.id, id);
        }
    }
    // Its own users are not linked again.
    assert!(
        db.capabilities()
            .linked_accounts
            .unwrap()
            .list_accounts_by_user_id(&id)
            .await
            .unwrap()
            .is_empty()
    );
}

/// An imported bcrypt hash (pyca/bcrypt, of `password`) signs in and is replaced by an
/// argon2id hash of the current parameters; a hash changed meanwhile is left alone.
#[tokio::test]
async fn imported_hashes_are_rehashed_at_sign_in() {
    let db = MemoryAdapter::new();
    let store = db.clone();
    let accounts = PasswordAccounts::new(Arc::new(db.clone()), hashing()).unwrap();
    let id = stored_user(&db, "imported@example.com", true).await;
    let bcrypt = "$2b$04$b/LcjGM9OmyQFGwit63qlespAOcaiuwiMLDGW8bMk90qMLcChkMoW";
    store
        .capabilities()
        .passwords
        .unwrap()
        .set_password_hash(&id, bcrypt)
        .await
        .unwrap();
    let found = accounts
        .authenticate("imported@example.com", "password")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.id, id);
    let now = store
        .capabilities()
        .passwords
        .unwrap()
        .get_password_hash(&id)
        .await
        .unwrap()
        .unwrap();
    assert!(now.starts_with("$argon2id$v=19$m=64,t=1,p=1$"), "{now}");
    assert_eq!(
        hashing().verify(&now, "password"),
        Ok(authcore::passwords::Verification::Match { rehash: false })
    );
    // The next sign-in leaves it as it is.
    accounts
        .authenticate("imported@example.com", "password")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        store
            .capabilities()
            .passwords
            .unwrap()
            .get_password_hash(&id)
            .await
            .unwrap()
            .as_deref(),
        Some(now.as_str())
    );
    // A rehash never undoes a change made since the hash was read.
    assert!(
        !store
            .capabilities()
            .passwords
            .unwrap()
            .replace_password_hash(&id, bcrypt, "$argon2id$stale")
            .await
            .unwrap()
    );
}

#[test]
fn a_source_provider_needs_no_authorize_and_a_password_store() {
    let db = MemoryAdapter::new();
    assert!(with_source(Arc::new(Directory::default())).build().is_ok());
    assert!(PasswordAccounts::new(Arc::new(db), hashing()).is_ok());
}
