//! Test fixtures: a SQLite file in a fresh temporary directory, a fresh PostgreSQL schema
//! and a fresh MySQL/MariaDB database per test (so parallel runs on one server never
//! collide).

#![allow(dead_code)]

use std::path::{Path, PathBuf};

#[cfg(feature = "mysql")]
pub mod mysql;
#[cfg(feature = "postgres")]
pub mod pg;

/// A temporary directory removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new() -> Self {
        let dir = std::env::temp_dir().join(format!("authcore-sqlx-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Unused verification tokens a day past their expiry are deleted when another token is
/// created; recently expired ones stay (the email callback reports them as expired).
#[allow(clippy::unwrap_used, dead_code)]
pub async fn stale_tokens_are_dropped(adapter: &authcore_sqlx::SqlxAdapter) {
    use authcore::adapter::{Adapter, VerificationToken};
    let now = time::OffsetDateTime::now_utc();
    let token = |t: &str, expires| VerificationToken {
        identifier: "stale@example.com".into(),
        token: t.into(),
        expires,
    };
    adapter
        .create_verification_token(token("two-days", now - time::Duration::days(2)))
        .await
        .unwrap();
    adapter
        .create_verification_token(token("one-hour", now - time::Duration::hours(1)))
        .await
        .unwrap();
    adapter
        .create_verification_token(token("fresh", now + time::Duration::hours(1)))
        .await
        .unwrap();
    let used = |t: &'static str| adapter.use_verification_token("stale@example.com", t);
    assert!(
        used("two-days").await.unwrap().is_none(),
        "stale token kept"
    );
    assert!(used("one-hour").await.unwrap().is_some());
    assert!(used("fresh").await.unwrap().is_some());
}

/// Two concurrent `link_account` of one account (to two users), 20 rounds: one `Ok` and one
/// `Conflict` each time, the account linked once, and no bound value in the conflict's
/// message.
#[allow(clippy::unwrap_used, dead_code)]
pub async fn concurrent_link_account_gives_one_conflict(adapter: &authcore_sqlx::SqlxAdapter) {
    use authcore::adapter::{Adapter, AdapterError, NewUser};
    use authcore::types::{Account, ProviderType};
    let mut users = Vec::new();
    for email in ["race-a@example.com", "race-b@example.com"] {
        let u = adapter
            .create_user(NewUser {
                email: Some(email.into()),
                ..NewUser::default()
            })
            .await
            .unwrap();
        users.push(u);
    }
    for round in 0..20 {
        let pa_id = format!("race-{round}");
        let mut acc_a = Account::new(ProviderType::Oauth, "github", &pa_id);
        acc_a.user_id = Some(users[0].id.clone());
        let mut acc_b = acc_a.clone();
        acc_b.user_id = Some(users[1].id.clone());
        let (x, y) = (adapter.clone(), adapter.clone());
        let ta = tokio::spawn(async move { x.link_account(acc_a).await });
        let tb = tokio::spawn(async move { y.link_account(acc_b).await });
        let (ra, rb) = (ta.await.unwrap(), tb.await.unwrap());
        let oks = [&ra, &rb].iter().filter(|r| r.is_ok()).count();
        let conflicts = [&ra, &rb]
            .iter()
            .filter(|r| matches!(r, Err(AdapterError::Conflict(_))))
            .count();
        assert_eq!((oks, conflicts), (1, 1), "round {round}: {ra:?} {rb:?}");
        let conflict = [ra, rb].into_iter().find_map(Result::err).unwrap();
        assert!(
            !conflict.to_string().contains(&pa_id),
            "no values in messages: {conflict}"
        );
        assert!(
            adapter
                .get_user_by_account("github", &pa_id)
                .await
                .unwrap()
                .is_some()
        );
    }
}

/// The conformance suite twice on one database (it uses fresh ids, so the second run
/// passes too), the audit log's pruning (the database is this test's own), the user read
/// with the rate-limit store's marks, the rate-limit store's suite twice at once (as two instances would share the database), stale tokens
/// dropped, then `ping` answering while open and failing once closed.
#[allow(clippy::unwrap_used, dead_code)]
pub async fn conformance_then_close(adapter: authcore_sqlx::SqlxAdapter) {
    use authcore_conformance::{self as conformance, Options};
    for _ in 0..2 {
        conformance::run_all_with(adapter.clone(), Options::default().account_extras(false)).await;
    }
    conformance::admin::audit_prune(&adapter).await;
    let (a, b) = (adapter.rate_limit_store(), adapter.rate_limit_store());
    conformance::app_access::user_read_with_marks(&adapter, &a).await;
    tokio::join!(
        authcore_conformance::rate_limit::run_all(&a),
        authcore_conformance::rate_limit::run_all(&b)
    );
    stale_tokens_are_dropped(&adapter).await;
    adapter.ping().await.expect("an open database answers");
    adapter.close().await;
    assert!(adapter.ping().await.is_err(), "a closed pool does not");
}

/// Seconds since 1970.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs()
}

/// A name for a test's own schema or database: `authcore_test_<seconds>_<random>`.
pub fn test_store_name(now: u64) -> String {
    let random = uuid::Uuid::new_v4().simple().to_string();
    format!("authcore_test_{now}_{}", random.get(..12).unwrap_or("x"))
}

/// Whether `name` (from [`test_store_name`]) was made over an hour before `now`: left
/// behind by a test process that was killed.
pub fn is_stale_test_store(name: &str, now: u64) -> bool {
    name.strip_prefix("authcore_test_")
        .and_then(|rest| rest.split('_').next())
        .and_then(|secs| secs.parse::<u64>().ok())
        .is_some_and(|t| t + 3600 < now)
}

/// Re-raises the panic of a test's task (after its schema or database was dropped).
pub fn resume_panic(result: Result<(), tokio::task::JoinError>) {
    if let Err(e) = result {
        match e.try_into_panic() {
            Ok(panic) => std::panic::resume_unwind(panic),
            Err(e) => panic!("test task failed: {e}"),
        }
    }
}

/// [`authcore_sqlx::PoolSettings::direct_session_reads`]: `direct` (direct reads on) and
/// `pooled` (off) are two adapters on one migrated database, each with a pool of one
/// connection and a short time bound. With that connection held by `hold`, `direct` still
/// answers the session read (a session, and `None` for an unknown token) and `pooled`
/// times out (which opens its circuit breaker until its probe answers); once it is
/// released, both answer alike.
#[allow(clippy::unwrap_used, dead_code)]
pub async fn session_reads_answer_while_the_pool_is_taken<Held>(
    direct: &authcore_sqlx::SqlxAdapter,
    pooled: &authcore_sqlx::SqlxAdapter,
    hold: impl AsyncFn(&authcore_sqlx::SqlxAdapter) -> Held,
) {
    use authcore::adapter::{Adapter, AdapterError, AdapterSession, NewUser};
    let user = direct
        .create_user(NewUser {
            email: Some("direct@example.com".into()),
            name: Some("Direct".into()),
            ..NewUser::default()
        })
        .await
        .unwrap();
    // Whole seconds: what every database stores exactly.
    let expires = time::OffsetDateTime::from_unix_timestamp(
        time::OffsetDateTime::now_utc().unix_timestamp() + 86_400,
    )
    .unwrap();
    let session = direct
        .create_session(AdapterSession {
            session_token: "direct-read-token".into(),
            user_id: user.id.clone(),
            expires,
        })
        .await
        .unwrap();
    let read = async |adapter: &authcore_sqlx::SqlxAdapter, token: &str| {
        adapter.get_session_and_user(token).await
    };

    let both_held = (hold(direct).await, hold(pooled).await);
    let (got_session, got_user) = read(direct, "direct-read-token")
        .await
        .expect("the direct path answers without the pool")
        .expect("the session exists");
    assert_eq!(got_session, session);
    assert_eq!(got_user, user);
    assert_eq!(read(direct, "no-such-token").await.unwrap(), None);
    let err = read(pooled, "direct-read-token")
        .await
        .expect_err("without direct reads the read waits for the held connection");
    assert!(matches!(err, AdapterError::Backend(_)), "{err:?}");
    drop(both_held);
    // The timeout opened `pooled`'s circuit breaker; its probe (a connection of its own)
    // closes it within a round trip.
    let started = std::time::Instant::now();
    while !pooled.available() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "the probe closes the breaker"
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }

    let through_pool = read(pooled, "direct-read-token").await.unwrap();
    assert_eq!(
        read(direct, "direct-read-token").await.unwrap(),
        through_pool
    );
    assert_eq!(through_pool.map(|(_, u)| u), Some(user));
}
