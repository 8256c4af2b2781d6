//! Database session strategy through the handler (Auth.js `lib/actions/session.ts`, its
//! database branch, including the cases Auth.js's own tests check there).
#![allow(clippy::unwrap_used)]
use std::sync::{Arc, Mutex};

use crate::common::*;
use authcore::adapter::SessionActivityStore;
use authcore::adapter::{Adapter, AdapterSession, MemoryAdapter, NewUser};
use authcore::callbacks::{Callbacks, SessionParams};
use authcore::{BoxError, ConfigError, ReadOptions, SessionStrategy};
use serde_json::Value;
use time::{Duration, OffsetDateTime};

#[derive(Clone, Default)]
struct SessionSpy(Arc<Mutex<Vec<Value>>>);

#[authcore::async_trait]
impl Callbacks for SessionSpy {
    async fn session(&self, p: SessionParams<'_>) -> Result<Value, BoxError> {
        self.0.lock().unwrap().push(serde_json::json!({
            "session": &p.session, "user": p.user, "newSession": p.new_session,
            "trigger": format!("{:?}", p.trigger), "token": p.token,
        }));
        Ok(serde_json::to_value(p.session)?)
    }
}

async fn setup(
    expires_in: Duration,
) -> (authcore::Auth, Recorder, MemoryAdapter, SessionSpy, String) {
    let db = MemoryAdapter::new();
    let user = db
        .create_user(NewUser {
            name: Some("Dee".into()),
            email: Some("dee@example.com".into()),
            image: Some("https://example.com/dee.png".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    db.create_session(AdapterSession {
        session_token: "tok-1".into(),
        user_id: user.id.clone(),
        expires: OffsetDateTime::now_utc() + expires_in,
    })
    .await
    .unwrap();
    let spy = SessionSpy::default();
    let (auth, rec) = auth_with(
        builder()
            .adapter(db.clone())
            .credentials_database_sessions(true)
            .callbacks(spy.clone()),
    );
    (auth, rec, db, spy, user.id)
}

#[tokio::test]
async fn adapter_makes_database_the_default_strategy() {
    let (auth, ..) = setup(Duration::days(1)).await;
    assert_eq!(auth.config().session_strategy(), SessionStrategy::Database);
}

#[tokio::test]
async fn session_near_expiry_is_extended_and_reports_the_old_expiry() {
    let (auth, rec, db, spy, user_id) = setup(Duration::days(1)).await;
    let old = db
        .get_session_and_user("tok-1")
        .await
        .unwrap()
        .unwrap()
        .0
        .expires;
    let r = get_session(&auth, format!("{SESSION_COOKIE}=tok-1")).await;
    assert_no_cache(&r);
    let body = r.json();
    assert_eq!(
        body["user"],
        serde_json::json!({"name": "Dee", "email": "dee@example.com", "image": "https://example.com/dee.png"})
    );
    let reported = OffsetDateTime::parse(
        body["expires"].as_str().unwrap(),
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap();
    assert!(
        (reported - old).abs() < Duration::seconds(1),
        "body keeps the pre-update expiry"
    );
    let new = db
        .get_session_and_user("tok-1")
        .await
        .unwrap()
        .unwrap()
        .0
        .expires;
    assert!(
        new - OffsetDateTime::now_utc() > Duration::days(29),
        "row pushed to now + 30 days"
    );
    // The cookie is the same token, re-set.
    assert_eq!(r.cookie(SESSION_COOKIE).as_deref(), Some("tok-1"));
    let call = spy.0.lock().unwrap()[0].clone();
    assert_eq!(call["user"]["id"], user_id.as_str());
    assert_eq!(call["newSession"], Value::Null);
    assert_eq!(call["trigger"], "None");
    assert_eq!(call["token"], Value::Null);
    assert_eq!(rec.event_names(), ["session"]);
}

#[tokio::test]
async fn empty_user_columns_are_null_in_the_session() {
    let db = MemoryAdapter::new();
    let user = db
        .create_user(NewUser {
            email: Some("nameless@example.com".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    db.create_session(AdapterSession {
        session_token: "tok-2".into(),
        user_id: user.id,
        expires: OffsetDateTime::now_utc() + Duration::days(30),
    })
    .await
    .unwrap();
    let (auth, _) = auth_with(builder().adapter(db).credentials_database_sessions(true));
    let r = get_session(&auth, format!("{SESSION_COOKIE}=tok-2")).await;
    // Auth.js's body carries the row's columns, nulls included, in this order.
    let text = r.text();
    assert!(
        text.starts_with(
            r#"{"user":{"name":null,"email":"nameless@example.com","image":null},"expires":""#
        ),
        "{text}"
    );
}

#[tokio::test]
async fn fresh_session_is_not_written() {
    let (auth, _, db, ..) = setup(Duration::days(30)).await;
    let before = db
        .get_session_and_user("tok-1")
        .await
        .unwrap()
        .unwrap()
        .0
        .expires;
    let r = get_session(&auth, format!("{SESSION_COOKIE}=tok-1")).await;
    assert_eq!(r.json()["user"]["name"], "Dee");
    assert_eq!(
        db.get_session_and_user("tok-1")
            .await
            .unwrap()
            .unwrap()
            .0
            .expires,
        before
    );
}

#[tokio::test]
async fn expired_session_is_deleted_and_cleared() {
    let (auth, rec, db, spy, _) = setup(-Duration::days(1)).await;
    let r = get_session(&auth, format!("{SESSION_COOKIE}=tok-1")).await;
    assert_eq!(r.text(), "null");
    assert!(
        r.set_cookie_header(SESSION_COOKIE)
            .unwrap()
            .contains("Max-Age=0")
    );
    assert!(db.get_session_and_user("tok-1").await.unwrap().is_none());
    assert!(spy.0.lock().unwrap().is_empty());
    assert!(rec.event_names().is_empty());
}

#[tokio::test]
async fn unknown_token_is_null_and_cleared() {
    let (auth, ..) = setup(Duration::days(1)).await;
    let r = get_session(&auth, format!("{SESSION_COOKIE}=nope")).await;
    assert_eq!(r.text(), "null");
    assert!(
        r.set_cookie_header(SESSION_COOKIE)
            .unwrap()
            .contains("Max-Age=0")
    );
}

#[tokio::test]
async fn post_passes_new_session_and_trigger() {
    let (auth, _, _, spy, _) = setup(Duration::days(1)).await;
    let (csrf, token) = csrf_pair();
    let body = serde_json::json!({"csrfToken": token, "data": {"theme": "dark"}}).to_string();
    let r = send(
        &auth,
        http::Request::post(url("/auth/session"))
            .header("content-type", "application/json")
            .header("cookie", format!("{SESSION_COOKIE}=tok-1; {csrf}"))
            .body(http_body_util::Full::new(body.into()))
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 200);
    let call = spy.0.lock().unwrap()[0].clone();
    assert_eq!(call["newSession"], serde_json::json!({"theme": "dark"}));
    assert_eq!(call["trigger"], "Some(Update)");
}

#[tokio::test]
async fn sign_out_deletes_the_row() {
    let (auth, rec, db, ..) = setup(Duration::days(1)).await;
    let (csrf, token) = csrf_pair();
    let r = send(
        &auth,
        post("/auth/signout")
            .header("cookie", format!("{SESSION_COOKIE}=tok-1; {csrf}"))
            .body(form(&[("csrfToken", &token)]))
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 302);
    assert!(db.get_session_and_user("tok-1").await.unwrap().is_none());
    assert_eq!(
        rec.event("signOut").unwrap()["session"]["sessionToken"],
        "tok-1"
    );
    assert!(
        r.set_cookie_header(SESSION_COOKIE)
            .unwrap()
            .contains("Max-Age=0")
    );
}

/// With database sessions, `authorize` must return the id of a stored user: another id
/// (the common helpers' provider returns "1", which this store does not know) is refused
/// as the programming error it is, with a log line that says what to return, and no
/// session row or cookie; the memory store itself refuses a session of an unknown user, as
/// the SQL stores' foreign key does.
#[tokio::test]
async fn credentials_database_sessions_need_the_adapters_user_id() {
    let db = MemoryAdapter::new();
    let (auth, rec) = auth_with(
        builder()
            .adapter(db.clone())
            .credentials_database_sessions(true),
    );
    let r = post_credentials(&auth, &[("username", "demo"), ("password", "pw")]).await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Configuration")
    );
    assert!(r.cookie(SESSION_COOKIE).is_none());
    assert_eq!(rec.error_types(), ["CallbackRouteError"]);
    let logged = format!("{:?}", rec.errors());
    assert!(
        logged.contains("authorize must return the adapter's user id"),
        "{logged}"
    );
    assert!(db.list_sessions_by_user_id("1").await.unwrap().is_empty());
    let e = db
        .create_session(AdapterSession {
            session_token: "tok".into(),
            user_id: "1".into(),
            expires: OffsetDateTime::now_utc() + Duration::days(1),
        })
        .await
        .unwrap_err();
    assert!(
        matches!(e, authcore::adapter::AdapterError::Backend(_)),
        "{e:?}"
    );

    // JWT sessions with the same adapter take any id `authorize` returns, as in Auth.js.
    let (auth, rec) = auth_with(
        builder()
            .adapter(db.clone())
            .session_strategy(SessionStrategy::Jwt),
    );
    let r = post_credentials(&auth, &[("username", "demo"), ("password", "pw")]).await;
    assert!(r.cookie(SESSION_COOKIE).is_some());
    assert!(rec.error_types().is_empty(), "{:?}", rec.error_types());
}

#[tokio::test]
async fn configuration_checks_with_adapters() {
    let e = authcore::AuthConfig::builder()
        .secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
        .provider(credentials())
        .adapter(MemoryAdapter::new())
        .build()
        .unwrap_err();
    assert_eq!(e, ConfigError::UnsupportedStrategy);
    // An adapter without a capability the configuration needs is refused, naming the
    // capability's methods.
    let e = authcore::AuthConfig::builder()
        .secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
        .provider(credentials())
        .adapter(LimitedAdapter::core_only())
        .session_strategy(SessionStrategy::Jwt)
        .jwt_revocation(true)
        .build()
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "MissingAdapterMethods: Required adapter methods were missing: revokeJwtSessions, getJwtRevocation"
    );
    // Administrators need the user directory and the users' accounts (a set-up link for a
    // user who signs in already is mailed only), each named when missing.
    let admins = |adapter: LimitedAdapter| {
        authcore::AuthConfig::builder()
            .secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
            .provider(credentials())
            .adapter(adapter.with_jwt_revocation())
            .session_strategy(SessionStrategy::Jwt)
            .jwt_revocation(true)
            .admins(authcore::admin::Admins::new().user("lou@example.com"))
            .build()
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    for (adapter, missing) in [
        (
            LimitedAdapter::core_only(),
            "searchUsers, setUserBan, getUserBan (UserDirectoryStore)",
        ),
        (
            LimitedAdapter::core_only().with_user_directory(),
            "listAccountsByUserId (LinkedAccountStore)",
        ),
    ] {
        assert_eq!(
            admins(adapter),
            Err(format!(
                "MissingAdapterMethods: Required adapter methods were missing: {missing}"
            ))
        );
    }
    // The calls of Auth.js's adapter are enough for database sessions, and JWT sessions
    // with an adapter are fine.
    assert!(
        authcore::AuthConfig::builder()
            .secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
            .provider(credentials())
            .adapter(LimitedAdapter::core_only())
            .credentials_database_sessions(true)
            .build()
            .is_ok()
    );
    assert!(
        authcore::AuthConfig::builder()
            .secret("s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
            .provider(credentials())
            .adapter(LimitedAdapter::core_only())
            .session_strategy(SessionStrategy::Jwt)
            .build()
            .is_ok()
    );
}

#[tokio::test]
async fn database_down_gives_clean_responses_and_log_lines() {
    let (auth, rec) = auth_with(
        builder()
            .adapter(LimitedAdapter::down("connection refused"))
            .credentials_database_sessions(true),
    );
    // Session read: null (signed out), logged with Auth.js's type for a database session.
    let r = get_session(&auth, format!("{SESSION_COOKIE}=tok")).await;
    assert_eq!((r.status.as_u16(), r.text().as_str()), (200, "null"));
    assert_eq!(rec.error_types(), ["SessionTokenError"]);
    // Sign-in: the Configuration error page, logged as an adapter error, no session cookie.
    let r = post_credentials(&auth, &[("username", "demo"), ("password", "pw")]).await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Configuration")
    );
    assert!(r.cookie(SESSION_COOKIE).is_none());
    assert!(
        rec.error_types().contains(&"AdapterError".to_owned()),
        "{:?}",
        rec.error_types()
    );
    // Sign-out still clears the cookie; the failure is logged.
    let r = sign_out_session(&auth, "tok").await;
    assert_eq!(r.status, 302);
    assert!(
        r.set_cookie_header(SESSION_COOKIE)
            .unwrap()
            .contains("Max-Age=0")
    );
    assert!(rec.error_types().contains(&"SignOutError".to_owned()));
}

/// A host's own lookup of a database session gets the session value (handed over as a
/// value, not as JSON bytes) and the re-set session cookie, as `GET /session` answers.
#[tokio::test]
async fn host_lookup_of_a_database_session() {
    let (auth, _, _, _, user_id) = setup(Duration::days(1)).await;
    let mut headers = http::HeaderMap::new();
    headers.insert("cookie", format!("{SESSION_COOKIE}=tok-1").parse().unwrap());
    let lookup = auth
        .read_session(
            &url("/app").parse().unwrap(),
            &headers,
            &ReadOptions::default(),
        )
        .await
        .unwrap();
    // The user id for the host's own queries: the database user's.
    let json = lookup.session.clone().unwrap();
    assert_eq!(json.user_id(), Some(user_id.as_str()));
    assert_eq!(json.user_name(), Some("Dee"));
    let session = json.into_json();
    assert_eq!(session["user"]["email"], "dee@example.com");
    assert_eq!(session["user"]["name"], "Dee");
    // The id is not added to the JSON the session action answers (Auth.js's shape).
    assert!(session["user"].get("id").is_none());
    assert!(
        lookup.set_cookie.iter().any(|c| c
            .to_str()
            .unwrap()
            .starts_with(&format!("{SESSION_COOKIE}=tok-1;"))),
        "{:?}",
        lookup.set_cookie
    );
}

/// `hash_session_tokens`: the row holds the token's SHA-256, the cookie the token. A
/// database reader's copy of the row signs nobody in; the cookie still does everything.
#[tokio::test]
async fn hashed_session_tokens_keep_no_usable_cookie_in_the_database() {
    use sha2::Digest as _;
    let db = MemoryAdapter::new();
    let outbox = Outbox::default();
    let (auth, _) = auth_with(
        builder()
            .adapter(db.clone())
            .provider(outbox_provider(&outbox))
            .hash_session_tokens(true),
    );
    let url = magic_link_url(&auth, &outbox, "hash@example.com").await;
    let r = send(&auth, http::Request::get(&url).body(empty()).unwrap()).await;
    let token = r.cookie(SESSION_COOKIE).unwrap();
    let stored = hex::encode(sha2::Sha256::digest(token.as_bytes()));
    assert!(db.get_session_and_user(&token).await.unwrap().is_none());
    let user = db
        .get_user_by_email("hash@example.com")
        .await
        .unwrap()
        .unwrap();
    let rows = db.list_sessions_by_user_id(&user.id).await.unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].session.session_token, stored);

    let session = |cookie: String| {
        let auth = auth.clone();
        async move {
            send(
                &auth,
                get("/auth/session")
                    .header("cookie", format!("{SESSION_COOKIE}={cookie}"))
                    .body(empty())
                    .unwrap(),
            )
            .await
        }
    };
    // The cookie reads the session (and the cookie set again is the token, not the hash).
    let r = session(token.clone()).await;
    assert_eq!(r.json()["user"]["email"], "hash@example.com");
    assert_eq!(r.cookie(SESSION_COOKIE).as_deref(), Some(token.as_str()));
    // The stored form, as a cookie, is no session.
    assert_eq!(session(stored.clone()).await.json(), Value::Null);
    // The account functions find it; sign-out deletes the row.
    let headers = {
        let mut h = http::HeaderMap::new();
        h.insert(
            "cookie",
            format!("{SESSION_COOKIE}={token}").parse().unwrap(),
        );
        h
    };
    let uri: http::Uri = "https://authjs.test/account".parse().unwrap();
    let current = auth.current_session(&uri, &headers).await.unwrap();
    assert_eq!(current.user_id, user.id);
    let listed = auth
        .sessions(&user.id, current.session_id.as_deref())
        .await
        .unwrap();
    assert!(listed[0].current);
    sign_out_session(&auth, &token).await;
    assert!(db.get_session_and_user(&stored).await.unwrap().is_none());
}

/// Credentials beside another provider under the database strategy, without
/// `credentials_database_sessions`: Auth.js signs in with a JWT its session read ignores (a
/// silent `null`); here the sign-in is refused with a log line that names the option, and
/// no cookie is set.
#[tokio::test]
async fn credentials_under_the_database_strategy_are_refused_loudly() {
    let outbox = Outbox::default();
    let (auth, rec) = auth_with(
        builder()
            .adapter(MemoryAdapter::new())
            .provider(outbox_provider(&outbox)),
    );
    assert_eq!(auth.config().session_strategy(), SessionStrategy::Database);
    let r = post_credentials(&auth, &[("username", "demo"), ("password", "pw")]).await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Configuration")
    );
    assert!(r.cookie(SESSION_COOKIE).is_none());
    assert!(
        rec.errors()
            .iter()
            .any(|m| m.contains("credentials_database_sessions")),
        "{:?}",
        rec.errors()
    );
}
