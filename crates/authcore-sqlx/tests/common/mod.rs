//! Test fixtures: a SQLite file in a fresh temporary directory, and a fresh PostgreSQL
//! schema per test (so parallel runs on one server never collide).

#![allow(dead_code)]

use std::path::{Path, PathBuf};

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
