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

/// A fresh schema `schema` on the test server (dropped first if a past run left it),
/// reached through a [`FaultProxy`](super::fault_proxy::FaultProxy): the proxy, and the URL
/// whose connections go through it and land in the schema.
pub async fn schema_behind_fault_proxy(schema: &str) -> (super::fault_proxy::FaultProxy, String) {
    let mut target = url::Url::parse(&postgres_url()).unwrap();
    let upstream: std::net::SocketAddr = format!(
        "{}:{}",
        target.host_str().unwrap(),
        target.port().unwrap_or(5432)
    )
    .parse()
    .unwrap();
    let proxy = super::fault_proxy::FaultProxy::start(upstream).await;
    admin_sql(&format!(
        "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
    ))
    .await;
    target.set_ip_host(proxy.addr.ip()).unwrap();
    target.set_port(Some(proxy.addr.port())).unwrap();
    target
        .query_pairs_mut()
        .append_pair("options", &format!("-c search_path={schema}"));
    (proxy, target.into())
}
