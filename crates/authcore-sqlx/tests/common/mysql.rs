//! A fresh MySQL / MariaDB database per test.

use std::future::Future;
use std::str::FromStr;

use sqlx::Connection;
use sqlx::mysql::{MySqlConnectOptions, MySqlConnection};

/// The server the MySQL tests use (MariaDB on this machine kind).
pub fn mysql_url() -> String {
    std::env::var("AUTHCORE_TEST_MYSQL_URL")
        .unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/test".to_owned())
}

const START_HINT: &str = "start it with: start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd \
     (or point AUTHCORE_TEST_MYSQL_URL at a server whose user may create databases)";

/// A connection to the server (no database selected). Panics with instructions when the
/// server is not running.
pub async fn admin_connection() -> MySqlConnection {
    let url = mysql_url();
    let options = MySqlConnectOptions::from_str(&url).expect("valid AUTHCORE_TEST_MYSQL_URL");
    MySqlConnection::connect_with(&options)
        .await
        .unwrap_or_else(|e| panic!("MySQL/MariaDB is not reachable at {url}: {e}\n{START_HINT}"))
}

async fn admin_sql(admin: &mut MySqlConnection, sql: String) -> Result<(), sqlx::Error> {
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
        .execute(admin)
        .await
        .map(drop)
}

/// Runs `test` with connect options for a database created for it alone (its name given
/// too), and drops the database afterwards, also when the test panics.
pub async fn with_mysql_database<F, Fut>(test: F)
where
    F: FnOnce(MySqlConnectOptions, String) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let mut admin = admin_connection().await;
    let now = super::now_secs();
    drop_stale_databases(&mut admin, now).await;
    let name = super::test_store_name(now);
    admin_sql(&mut admin, format!("CREATE DATABASE {name}"))
        .await
        .expect("create test database");
    let options = MySqlConnectOptions::from_str(&mysql_url())
        .expect("valid URL")
        .database(&name);

    let result = tokio::spawn(test(options, name.clone())).await;

    admin_sql(&mut admin, format!("DROP DATABASE {name}"))
        .await
        .expect("drop test database");
    let _ = admin.close().await;
    super::resume_panic(result);
}

/// Databases left behind by test processes that were killed (older than an hour).
async fn drop_stale_databases(admin: &mut MySqlConnection, now: u64) {
    let names: Vec<String> = sqlx::query_scalar(
        "SELECT schema_name FROM information_schema.schemata WHERE schema_name LIKE 'authcore\\_test\\_%'",
    )
    .fetch_all(&mut *admin)
    .await
    .unwrap_or_default();
    for name in names {
        if super::is_stale_test_store(&name, now) {
            let _ = admin_sql(admin, format!("DROP DATABASE IF EXISTS {name}")).await;
        }
    }
}
