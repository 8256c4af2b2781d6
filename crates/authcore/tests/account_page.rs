//! The built-in account page (`<basePath>/account`): signed out it sends to sign in and
//! back; signed in it lists the ways to sign in, passkeys, second factors and sessions, and
//! each change (a CSRF-checked form post) does what the account API does; a refused change
//! shows why; nothing from the request is echoed unescaped; deleting the account needs a
//! recent sign-in.
#![allow(clippy::unwrap_used)]

use crate::common::{self, *};
use authcore::adapter::{Adapter, MemoryAdapter, NewUser};
use authcore::providers::{CredentialField, CredentialsProvider};
use authcore::two_factor::TwoFactorOptions;
use authcore::{Account, Auth, Authenticator, ProviderType, SessionStrategy, User};
use serde_json::{Value, json};

struct App {
    auth: Auth,
    db: MemoryAdapter,
    user_id: String,
}

/// Ada (password `pw`), with a GitHub and a GitLab account, database sessions and second
/// factors; `more` adjusts the configuration.
async fn app_with(
    more: impl FnOnce(authcore::AuthConfigBuilder) -> authcore::AuthConfigBuilder,
) -> App {
    let db = MemoryAdapter::new();
    let user = db
        .create_user(NewUser {
            email: Some("ada@example.com".into()),
            ..NewUser::default()
        })
        .await
        .unwrap();
    for (provider, id) in [("github", "gh-1"), ("gitlab", "gl-1")] {
        let mut a = Account::new(ProviderType::Oauth, provider, id);
        a.user_id = Some(user.id.clone());
        db.link_account(a).await.unwrap();
    }
    let id = user.id.clone();
    let password = CredentialsProvider::new()
        .field("password", CredentialField::new("Password"))
        .authorize(move |c, _| {
            let id = id.clone();
            async move {
                Ok((c.get("password").and_then(Value::as_str) == Some("pw"))
                    .then(|| User::with_id(id).email("ada@example.com")))
            }
        });
    let (auth, _) = auth_with(more(
        authcore::AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .provider(password)
            .adapter(db.clone())
            .credentials_database_sessions(true)
            .two_factor(TwoFactorOptions::default()),
    ));
    App {
        auth,
        db,
        user_id: user.id,
    }
}

async fn default_app() -> App {
    app_with(|b| b).await
}

/// A signed-in browser's `Cookie` header (the session and the CSRF pair's cookie).
async fn sign_in(app: &App) -> String {
    let r = post_credentials(&app.auth, &[("password", "pw")]).await;
    let session = r.cookie(SESSION_COOKIE).unwrap();
    let (csrf, _) = csrf_pair();
    format!("{SESSION_COOKIE}={session}; {csrf}")
}

async fn page(app: &App, cookie: &str) -> TestResponse {
    page_at(app, cookie, "/auth/account").await
}

/// The page a change redirected to.
async fn follow(app: &App, cookie: &str, r: &TestResponse) -> TestResponse {
    common::follow(&app.auth, cookie, r).await
}

async fn page_at(app: &App, cookie: &str, path: &str) -> TestResponse {
    common::page_at(&app.auth, cookie, path).await
}

/// A change: `op` and `fields`, with the CSRF token.
async fn change(app: &App, cookie: &str, op: &str, fields: &[(&str, &str)]) -> TestResponse {
    post_op(&app.auth, cookie, "/auth/account", op, fields).await
}

#[tokio::test]
async fn signed_out_visitors_are_sent_to_sign_in_and_back() {
    let app = default_app().await;
    let r = page(&app, "").await;
    assert_eq!(
        r.location(),
        Some(
            "https://authjs.test/auth/signin?callbackUrl=https%3A%2F%2Fauthjs.test%2Fauth%2Faccount"
        )
    );
    // A change without a session changes nothing (and needs the CSRF token first).
    let (csrf, _) = csrf_pair();
    let r = change(&app, &csrf, "delete", &[("confirm", "yes")]).await;
    assert!(r.location().unwrap().contains("/auth/signin"));
    assert!(app.db.get_user(&app.user_id).await.unwrap().is_some());
    // Without an adapter there is no account page.
    let (auth, _) = auth();
    let r = send(&auth, get("/auth/account").body(empty()).unwrap()).await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/error?error=Configuration")
    );
}

#[tokio::test]
async fn the_page_lists_the_account() {
    let app = default_app().await;
    let cookie = sign_in(&app).await;
    let r = page(&app, &cookie).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.headers["cache-control"], "private, no-cache, no-store");
    assert!(
        r.headers["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("frame-ancestors 'none'")
    );
    let html = r.text();
    for text in [
        "Your account",
        "Signed in as ada@example.com",
        "github",
        "gitlab",
        "Two-factor authentication",
        "Set up an authenticator app",
        "Where you are signed in",
        "This browser",
        "Delete your account",
    ] {
        assert!(html.contains(text), "{text}: {html}");
    }
}

#[tokio::test]
async fn changes_need_the_csrf_token() {
    let app = default_app().await;
    let cookie = sign_in(&app).await;
    let session_only = cookie.split("; ").next().unwrap().to_owned();
    for (cookie, token) in [
        (session_only.as_str(), "a".repeat(64)),
        (cookie.as_str(), "b".repeat(64)),
    ] {
        let r = send(
            &app.auth,
            post("/auth/account")
                .header("cookie", cookie)
                .body(form(&[
                    ("csrfToken", &token),
                    ("op", "unlink"),
                    ("provider", "github"),
                    ("providerAccountId", "gh-1"),
                ]))
                .unwrap(),
        )
        .await;
        assert!(
            r.location().unwrap().contains("error=MissingCSRF"),
            "{:?}",
            r.location()
        );
    }
    let methods = app.auth.sign_in_methods(&app.user_id).await.unwrap();
    assert_eq!(methods.accounts.len(), 2);
}

#[tokio::test]
async fn unlinking_keeps_the_last_way_in() {
    let app = default_app().await;
    let cookie = sign_in(&app).await;
    let r = change(
        &app,
        &cookie,
        "unlink",
        &[("provider", "github"), ("providerAccountId", "gh-1")],
    )
    .await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/account?notice=unlinked")
    );
    let html = follow(&app, &cookie, &r).await.text();
    assert!(html.contains("The sign-in method was removed."));
    assert!(!html.contains(">github<"));
    // The last one stays, and the page says why.
    let r = change(
        &app,
        &cookie,
        "unlink",
        &[("provider", "gitlab"), ("providerAccountId", "gl-1")],
    )
    .await;
    assert_eq!(r.status, 200);
    assert!(r.text().contains("That is your last way to sign in"));
    assert_eq!(
        app.auth
            .sign_in_methods(&app.user_id)
            .await
            .unwrap()
            .accounts
            .len(),
        1
    );
}

#[tokio::test]
async fn passkeys_are_renamed_and_deleted_and_names_are_escaped() {
    let app = app_with(|b| b.provider(authcore::providers::WebAuthnProvider::passkey())).await;
    for (credential, user) in [
        ("Y3JlZC0x", app.user_id.clone()),
        ("b3RoZXI=", "someone-else".to_owned()),
    ] {
        app.db
            .create_authenticator(Authenticator {
                credential_id: credential.into(),
                user_id: Some(user),
                provider_account_id: format!("pa-{credential}"),
                counter: 0,
                credential_backed_up: false,
                credential_public_key: "pQ==".into(),
                transports: None,
                credential_device_type: "singleDevice".into(),
                name: None,
            })
            .await
            .unwrap();
    }
    let cookie = sign_in(&app).await;
    let r = change(
        &app,
        &cookie,
        "passkey-rename",
        &[("credentialID", "Y3JlZC0x"), ("name", "<script>x</script>")],
    )
    .await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/account?notice=passkey-renamed")
    );
    let html = page(&app, &cookie).await.text();
    assert!(
        html.contains("&#60;script&#62;x&#60;/script&#62;"),
        "{html}"
    );
    assert!(!html.contains("<script>x</script>"));
    // Another user's passkey: not found, untouched.
    let r = change(
        &app,
        &cookie,
        "passkey-delete",
        &[("credentialID", "b3RoZXI=")],
    )
    .await;
    assert!(r.text().contains("That is not one of yours."));
    assert!(
        app.db
            .get_authenticator("b3RoZXI=")
            .await
            .unwrap()
            .is_some()
    );
    let r = change(
        &app,
        &cookie,
        "passkey-delete",
        &[("credentialID", "Y3JlZC0x")],
    )
    .await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/account?notice=passkey-deleted")
    );
    assert!(
        app.db
            .get_authenticator("Y3JlZC0x")
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn other_sessions_are_signed_out() {
    let app = default_app().await;
    let other = sign_in(&app).await;
    let third = sign_in(&app).await;
    let cookie = sign_in(&app).await;
    let list = app.auth.sessions(&app.user_id, None).await.unwrap();
    assert_eq!(list.len(), 3);
    let other_token = other
        .split("; ")
        .next()
        .unwrap()
        .split_once('=')
        .unwrap()
        .1
        .to_owned();
    let id = list
        .iter()
        .find(|s| {
            use sha2::Digest as _;
            s.id == hex::encode(&sha2::Sha256::digest(other_token.as_bytes())[..16])
        })
        .unwrap()
        .id
        .clone();
    let r = change(&app, &cookie, "session-revoke", &[("id", &id)]).await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/account?notice=session-revoked")
    );
    assert_eq!(get_session(&app.auth, &other).await.text(), "null");
    let r = change(&app, &cookie, "sessions-revoke-others", &[]).await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/account?notice=others-revoked")
    );
    assert_eq!(get_session(&app.auth, &third).await.text(), "null");
    assert_ne!(get_session(&app.auth, &cookie).await.text(), "null");
}

#[tokio::test]
async fn two_factor_from_the_page() {
    let app = default_app().await;
    let cookie = sign_in(&app).await;
    let r = change(&app, &cookie, "totp-start", &[]).await;
    assert_eq!(r.status, 200);
    let html = r.text();
    assert!(html.contains("<svg"), "a QR code");
    let secret = totp_secret_in_page(&html);
    let r = change(&app, &cookie, "totp-confirm", &[("code", "000000")]).await;
    assert!(r.text().contains("That code did not work."));
    let r = change(
        &app,
        &cookie,
        "totp-confirm",
        &[("code", &totp_code_at(&secret, unix_now() - 30))],
    )
    .await;
    let html = r.text();
    assert_eq!(html.matches("<li><code>").count(), 10, "{html}");
    assert!(app.auth.two_factor_status(&app.user_id).await.unwrap().totp);
    // Enrolled, the password's session changes no more, and the page says how to go on.
    let r = change(
        &app,
        &cookie,
        "recovery-codes",
        &[("code", &totp_code_at(&secret, unix_now()))],
    )
    .await;
    let html = r.text();
    assert!(
        html.contains("This change needs a recent sign-in"),
        "{html}"
    );
    assert!(
        html.contains(r#"<a href="https://authjs.test/auth/signin?callbackUrl=https%3A%2F%2Fauthjs.test%2Fauth%2Faccount">Sign in again</a>"#),
        "{html}"
    );
    assert_eq!(html.matches("<li><code>").count(), 0, "{html}");
    // Signed in again with both factors: new recovery codes and turning it off ask for a
    // current code.
    let (session, _) = session_of(
        &app.auth,
        &app.db,
        &app.user_id,
        std::time::Duration::ZERO,
        &["pwd", "otp", "mfa"],
    )
    .await;
    let (csrf, _) = csrf_pair();
    let cookie = format!("{session}; {csrf}");
    let r = change(&app, &cookie, "recovery-codes", &[("code", "nope")]).await;
    assert!(r.text().contains("That code did not work."));
    let r = change(
        &app,
        &cookie,
        "recovery-codes",
        &[("code", &totp_code_at(&secret, unix_now()))],
    )
    .await;
    assert_eq!(r.text().matches("<li><code>").count(), 10);
    let r = change(&app, &cookie, "totp-disable", &[("code", "123456")]).await;
    assert!(r.text().contains("That code did not work."));
    assert!(app.auth.two_factor_status(&app.user_id).await.unwrap().totp);
    let r = change(
        &app,
        &cookie,
        "totp-disable",
        &[("code", &totp_code_at(&secret, unix_now() + 30))],
    )
    .await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/auth/account?notice=totp-off")
    );
    assert!(!app.auth.two_factor_status(&app.user_id).await.unwrap().totp);
}

#[tokio::test]
async fn deleting_the_account_needs_a_recent_sign_in() {
    // JWT sessions without a sign-in time (second factors off): the age is unknown.
    let app = app_with(|b| b.session_strategy(SessionStrategy::Jwt)).await;
    let old = session_cookie(
        &app.auth,
        json!({ "sub": app.user_id, "email": "ada@example.com" }),
    );
    let (csrf, _) = csrf_pair();
    let stale = format!("{old}; {csrf}");
    let r = change(&app, &stale, "delete", &[("confirm", "yes")]).await;
    assert!(r.text().contains("This change needs a recent sign-in"));
    assert!(app.db.get_user(&app.user_id).await.unwrap().is_some());

    // A database session made now: deleted, signed out, sent home.
    let app = default_app().await;
    let cookie = sign_in(&app).await;
    let r = change(&app, &cookie, "delete", &[]).await;
    assert!(r.text().contains("Tick the box to confirm"));
    assert!(app.db.get_user(&app.user_id).await.unwrap().is_some());
    let r = change(&app, &cookie, "no-such-change", &[]).await;
    assert!(r.text().contains("That change is not known."));
    let r = change(&app, &cookie, "delete", &[("confirm", "yes")]).await;
    assert_eq!(r.location(), Some("https://authjs.test"));
    assert!(
        r.set_cookie_header(SESSION_COOKIE)
            .unwrap()
            .contains("Max-Age=0")
    );
    assert!(app.db.get_user(&app.user_id).await.unwrap().is_none());
}
