//! OAuth sign-in with an adapter (spec §10.3) against the real OpenID provider: users are
//! created once, accounts linked, email collisions refused unless dangerous linking is on,
//! accounts linked to the signed-in user, the `newUser` page, database session cookies.
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};

use crate::oauth_flow::*;
use crate::oidc_provider::OidcProvider;
use authcore::adapter::SessionSignInStore;
use authcore::adapter::{Adapter, MemoryAdapter, NewUser};
use authcore::callbacks::Events;
use authcore::providers::OAuthProvider;
use authcore::{Auth, AuthConfig, BoxError, PagesOptions, User};

#[derive(Clone, Default)]
struct EventLog(Arc<Mutex<Vec<String>>>);

#[authcore::async_trait]
impl Events for EventLog {
    async fn create_user(&self, u: &User) -> Result<(), BoxError> {
        self.0.lock().unwrap().push(format!(
            "createUser:{}",
            u.email.clone().unwrap_or_default()
        ));
        Ok(())
    }
    async fn link_account(
        &self,
        _u: &User,
        a: &authcore::Account,
        _p: Option<&authcore::Profile>,
    ) -> Result<(), BoxError> {
        self.0
            .lock()
            .unwrap()
            .push(format!("linkAccount:{}", a.provider_account_id));
        Ok(())
    }
    async fn security_change(
        &self,
        m: authcore::callbacks::SecurityChangeEvent<'_>,
    ) -> Result<(), BoxError> {
        self.0
            .lock()
            .unwrap()
            .push(format!("securityChange:{}", m.change.name()));
        Ok(())
    }
}

fn provider(op: &OidcProvider, id: &str, login_hint: Option<&'static str>) -> OAuthProvider {
    let p = OAuthProvider::oidc(id, id)
        .issuer(op.issuer.clone())
        .client_id("client-basic")
        .client_secret("secret-basic");
    match login_hint {
        Some(h) => p.authorization(move |url| format!("{url}&login_hint={h}")),
        None => p,
    }
}

fn auth(
    db: &MemoryAdapter,
    providers: Vec<OAuthProvider>,
    events: &EventLog,
    pages: PagesOptions,
) -> Auth {
    let mut b = AuthConfig::builder()
        .secret("linking-secret-xxxxxxxxxxxxxxxxx")
        .trust_host(true)
        .adapter(db.clone())
        .events(events.clone())
        .pages(pages);
    for p in providers {
        b = b.provider(p);
    }
    Auth::new(b.build().unwrap())
}

#[tokio::test]
async fn new_user_then_returning_user_with_database_sessions() {
    let op = OidcProvider::start().await;
    let db = MemoryAdapter::new();
    let events = EventLog::default();
    let auth = auth(
        &db,
        vec![provider(&op, "oidc", None)],
        &events,
        PagesOptions {
            new_user: Some("/welcome".into()),
            ..Default::default()
        },
    );
    let mut jar = Jar::default();
    let r = sign_in(&auth, &op, "oidc", &mut jar).await;
    // First sign-in: the newUser page, with the callback URL.
    assert_eq!(
        r.location.as_deref(),
        Some("/welcome?callbackUrl=http%3A%2F%2Flocalhost%3A3000%2Fdashboard")
    );
    let token = jar.0.get("authjs.session-token").unwrap().clone();
    assert_eq!(token.len(), 36, "a database session token");
    let user = db
        .get_user_by_email("user-1@example.com")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        db.get_user_by_account("oidc", "user-1")
            .await
            .unwrap()
            .unwrap()
            .id,
        user.id
    );
    let s = session(&auth, &jar).await;
    assert_eq!(s["user"]["name"], "Test User");
    assert_eq!(
        *events.0.lock().unwrap(),
        ["createUser:user-1@example.com", "linkAccount:user-1"]
    );

    // Signing in again: same user, no new user, normal redirect, a new session.
    let mut jar2 = Jar::default();
    let r = sign_in(&auth, &op, "oidc", &mut jar2).await;
    assert_eq!(
        r.location.as_deref(),
        Some("http://localhost:3000/dashboard")
    );
    assert_ne!(jar2.0.get("authjs.session-token").unwrap(), &token);
    assert_eq!(
        events.0.lock().unwrap().len(),
        2,
        "no new createUser/linkAccount"
    );
    assert_eq!(
        db.get_session_and_user(jar2.0.get("authjs.session-token").unwrap())
            .await
            .unwrap()
            .unwrap()
            .1
            .id,
        user.id
    );
}

#[tokio::test]
async fn email_collision_is_refused_unless_dangerous_linking() {
    let op = OidcProvider::start().await;
    let db = MemoryAdapter::new();
    let existing = db
        .create_user(NewUser {
            email: Some("user-1@example.com".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let events = EventLog::default();
    let auth1 = auth(
        &db,
        vec![provider(&op, "oidc", None)],
        &events,
        PagesOptions::default(),
    );
    let mut jar = Jar::default();
    let r = sign_in(&auth1, &op, "oidc", &mut jar).await;
    assert_refused(&r, &jar, "OAuthAccountNotLinked");
    assert!(
        r.location
            .as_deref()
            .unwrap()
            .contains("/auth/signin?error=OAuthAccountNotLinked")
    );
    assert!(
        db.get_user_by_account("oidc", "user-1")
            .await
            .unwrap()
            .is_none()
    );

    let auth2 = auth(
        &db,
        vec![provider(&op, "oidc", None).danger_allow_email_account_linking(true)],
        &events,
        PagesOptions::default(),
    );
    let mut jar = Jar::default();
    let r = sign_in(&auth2, &op, "oidc", &mut jar).await;
    assert_eq!(r.status, 302);
    assert_eq!(
        db.get_user_by_account("oidc", "user-1")
            .await
            .unwrap()
            .unwrap()
            .id,
        existing.id
    );
}

#[tokio::test]
async fn signed_in_user_links_a_second_account_and_conflicts_are_refused() {
    let op = OidcProvider::start_with_redirect_uris(&[
        "http://localhost:3000/auth/callback/first",
        "http://localhost:3000/auth/callback/second",
    ])
    .await;
    let db = MemoryAdapter::new();
    let events = EventLog::default();
    let auth = auth(
        &db,
        vec![
            provider(&op, "first", None),
            provider(&op, "second", Some("alice")),
        ],
        &events,
        PagesOptions::default(),
    );
    let mut jar = Jar::default();
    assert_eq!(sign_in(&auth, &op, "first", &mut jar).await.status, 302);
    let session_token = jar.0.get("authjs.session-token").unwrap().clone();
    let owner = db
        .get_user_by_account("first", "user-1")
        .await
        .unwrap()
        .unwrap();
    // While signed in, the `second` account (alice) is linked to the same user.
    let r = sign_in(&auth, &op, "second", &mut jar).await;
    assert_eq!(
        r.location.as_deref(),
        Some("http://localhost:3000/dashboard")
    );
    assert_eq!(
        db.get_user_by_account("second", "alice")
            .await
            .unwrap()
            .unwrap()
            .id,
        owner.id
    );
    assert_eq!(
        jar.0.get("authjs.session-token"),
        Some(&session_token),
        "the session stays"
    );
    // ... and its cookie is set again, as Auth.js does (the differential suite compares it).
    assert!(
        r.set_cookies
            .iter()
            .any(|c| c.starts_with(&format!("authjs.session-token={session_token};"))),
        "{:?}",
        r.set_cookies
    );
    assert!(
        db.get_user_by_email("alice@example.com")
            .await
            .unwrap()
            .is_none(),
        "no second user"
    );
    assert!(
        events
            .0
            .lock()
            .unwrap()
            .iter()
            .any(|e| e == "securityChange:providerLinked"),
        "the user hears of the link: {:?}",
        events.0.lock().unwrap()
    );

    // Another user signed in trying the same `second` account: refused.
    let mut other = Jar::default();
    let mut op_other = OAuthProvider::oidc("first", "first");
    op_other = op_other
        .issuer(op.issuer.clone())
        .client_id("client-basic")
        .client_secret("secret-basic")
        .authorization(|u| format!("{u}&login_hint=bob"));
    let auth_b = auth_with_db(
        &db,
        vec![op_other, provider(&op, "second", Some("alice"))],
        &events,
    );
    assert_eq!(sign_in(&auth_b, &op, "first", &mut other).await.status, 302);
    let r = sign_in(&auth_b, &op, "second", &mut other).await;
    assert!(
        r.location
            .as_deref()
            .unwrap()
            .contains("error=OAuthAccountNotLinked"),
        "{r:?}"
    );
}

fn auth_with_db(db: &MemoryAdapter, providers: Vec<OAuthProvider>, events: &EventLog) -> Auth {
    auth(db, providers, events, PagesOptions::default())
}

#[tokio::test]
async fn a_stale_session_links_no_provider() {
    let op = OidcProvider::start_with_redirect_uris(&[
        "http://localhost:3000/auth/callback/first",
        "http://localhost:3000/auth/callback/second",
    ])
    .await;
    let db = MemoryAdapter::new();
    let events = EventLog::default();
    let auth = auth(
        &db,
        vec![
            provider(&op, "first", None),
            provider(&op, "second", Some("alice")),
        ],
        &events,
        PagesOptions::default(),
    );
    let mut jar = Jar::default();
    assert_eq!(sign_in(&auth, &op, "first", &mut jar).await.status, 302);
    // The session's sign-in aged to two hours ago: a stolen cookie.
    let token = jar.0.get("authjs.session-token").unwrap().clone();
    let two_hours_ago = time::OffsetDateTime::now_utc().unix_timestamp() - 7200;
    db.record_session_sign_in(
        &token,
        &authcore::SignInInfo::new(Vec::new(), Some(two_hours_ago)),
    )
    .await
    .unwrap();
    let r = sign_in(&auth, &op, "second", &mut jar).await;
    assert!(
        r.location
            .as_deref()
            .is_some_and(|l| l.contains("error=ReauthenticationRequired")),
        "{r:?}"
    );
    assert!(
        db.get_user_by_account("second", "alice")
            .await
            .unwrap()
            .is_none(),
        "nothing linked"
    );
    assert!(
        !events
            .0
            .lock()
            .unwrap()
            .iter()
            .any(|e| e == "linkAccount:alice" || e.starts_with("securityChange")),
        "{:?}",
        events.0.lock().unwrap()
    );
}
