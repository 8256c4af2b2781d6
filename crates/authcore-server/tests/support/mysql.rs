//! The test MySQL / MariaDB server of the server tests.

/// The test server's URL (as authcore-sqlx's tests: `AUTHCORE_TEST_MYSQL_URL`).
pub fn mysql_url() -> String {
    std::env::var("AUTHCORE_TEST_MYSQL_URL")
        .unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/test".to_owned())
}

/// The URL of database `name` on the test server.
pub fn mysql_database_url(name: &str) -> String {
    let url = mysql_url();
    let server = url
        .rsplit_once('/')
        .map_or(url.as_str(), |(server, _)| server);
    format!("{server}/{name}")
}

/// Runs `sql` on a connection of its own (databases of a test).
pub async fn mysql_admin_sql(sql: &str) {
    use sqlx::Connection as _;
    let mut admin = sqlx::MySqlConnection::connect(&mysql_url()).await.unwrap();
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()))
        .execute(&mut admin)
        .await
        .unwrap();
}
