//! authcore-sqlx's integration tests, in one binary: a module per database (each compiled
//! only with its feature), the races between databases, and the fixtures in `common/`.
#![allow(clippy::unwrap_used)]

mod common;

mod mysql;
mod postgres;
mod races;
mod shared_postgres;
mod sqlite;
