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
