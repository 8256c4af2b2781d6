//! The test PostgreSQL database of the server tests.

/// The test database's URL (as authcore-sqlx's tests: `AUTHCORE_TEST_POSTGRES_URL`).
pub fn postgres_url() -> String {
    std::env::var("AUTHCORE_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

/// Runs `sql` on a connection of its own (schemas of a test).
pub async fn admin_sql(sql: &str) {
    use sqlx::Connection as _;
    let mut admin = sqlx::PgConnection::connect(&postgres_url()).await.unwrap();
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()))
        .execute(&mut admin)
        .await
        .unwrap();
}
