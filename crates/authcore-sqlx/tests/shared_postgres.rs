//! Two authcore instances sharing one PostgreSQL database see each other's sessions: a
//! session created through one handler is read, and ended, through the other.

#![cfg(feature = "postgres")]
#![allow(clippy::unwrap_used)]

use crate::common;

use authcore::adapter::{Adapter, NewUser};
use authcore::providers::CredentialsProvider;
use authcore::{Auth, AuthConfig, User};
use authcore_sqlx::SqlxAdapter;
use bytes::Bytes;
use common::pg::with_pg_schema;
use http_body_util::{BodyExt, Full};
use sqlx::postgres::PgPoolOptions;

const SECRET: &str = "shared-postgres-test-secret-xxxx";

async fn instance(
    options: sqlx::postgres::PgConnectOptions,
    user_id: String,
) -> (Auth, SqlxAdapter) {
    let pool = PgPoolOptions::new()
        .max_connections(3)
        .connect_with(options)
        .await
        .unwrap();
    let db = SqlxAdapter::from_postgres_pool(pool);
    db.migrate().await.unwrap();
    let provider = CredentialsProvider::new().authorize(move |c, _| {
        let id = user_id.clone();
        async move {
            Ok((c.get("username").and_then(|v| v.as_str()) == Some("dana"))
                .then(|| User::with_id(id)))
        }
    });
    let auth = Auth::new(
        AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .provider(provider)
            .adapter(db.clone())
            .credentials_database_sessions(true)
            .build()
            .unwrap(),
    );
    (auth, db)
}

async fn call(auth: &Auth, req: http::Request<Full<Bytes>>) -> (u16, Vec<String>, String) {
    let r = auth.handle(req).await;
    let status = r.status().as_u16();
    let cookies = r
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .collect();
    let body =
        String::from_utf8(r.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap();
    (status, cookies, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_share_sessions() {
    with_pg_schema(|options, _| async move {
        // The user exists once, in the shared database.
        let (seed, seed_db) = instance(options.clone(), String::new()).await;
        drop(seed);
        let user = seed_db
            .create_user(NewUser {
                name: Some("Dana".into()),
                email: Some("dana@example.com".into()),
                ..Default::default()
            })
            .await
            .unwrap();
        let (a, db_a) = instance(options.clone(), user.id.clone()).await;
        let (b, db_b) = instance(options, user.id.clone()).await;

        let csrf = authcore::csrf::csrf_cookie_value(&"c".repeat(64), SECRET).replace('|', "%7C");
        let body = format!("csrfToken={}&username=dana", "c".repeat(64));
        let (status, cookies, _) = call(
            &a,
            http::Request::post("http://localhost:3000/auth/callback/credentials")
                .header("content-type", "application/x-www-form-urlencoded")
                .header("cookie", format!("authjs.csrf-token={csrf}"))
                .body(Full::new(body.into()))
                .unwrap(),
        )
        .await;
        assert_eq!(status, 302);
        let session = cookies
            .iter()
            .find(|c| c.starts_with("authjs.session-token="))
            .unwrap();
        let token = session
            .split(';')
            .next()
            .unwrap()
            .trim_start_matches("authjs.session-token=")
            .to_owned();

        // Instance B reads the session created by A.
        let get = |token: &str| {
            http::Request::get("http://localhost:3000/auth/session")
                .header("cookie", format!("authjs.session-token={token}"))
                .body(Full::default())
                .unwrap()
        };
        let (_, _, body) = call(&b, get(&token)).await;
        let json: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(json["user"]["name"], "Dana");
        assert_eq!(json["user"]["email"], "dana@example.com");

        // Signing out on B ends it for A too.
        let body = format!("csrfToken={}", "c".repeat(64));
        let (status, _, _) = call(
            &b,
            http::Request::post("http://localhost:3000/auth/signout")
                .header("content-type", "application/x-www-form-urlencoded")
                .header(
                    "cookie",
                    format!("authjs.csrf-token={csrf}; authjs.session-token={token}"),
                )
                .body(Full::new(body.into()))
                .unwrap(),
        )
        .await;
        assert_eq!(status, 302);
        let (_, _, body) = call(&a, get(&token)).await;
        assert_eq!(body, "null");
        db_a.close().await;
        db_b.close().await;
        seed_db.close().await;
    })
    .await;
}
