//! One rule for sensitive changes, attacked as the holder of a stolen session cookie would:
//! every [`SensitiveOperation`] is tried on every entry point that makes it (the `Auth`
//! method, the JSON account and administrators' routes, the account and administrators'
//! pages, the WebAuthn action) with a session whose sign-in is two hours old, and with a
//! recent session that did not prove the user's second factor — on JWT and on database
//! sessions. Each attempt is refused as its entry
//! point refuses (`ReauthenticationRequired`) and leaves everything it would have changed as
//! it was; a recent session that proved both factors is not refused (so the test can fail).
//! Linking a provider while signed in is attacked in `oauth_adapter_linking` (it needs the
//! real OpenID provider).
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use crate::common::*;
use authcore::account::{AccountError, AccountRoute, SensitiveOperation};
use authcore::adapter::{Adapter, MemoryAdapter, PasswordStore};
use authcore::adapter::{AppAccessStore, LinkedAccountStore, TwoFactorStore};
use authcore::organizations::Organizations;
use authcore::passwords::{PasswordAccounts, PasswordHashing};
use authcore::providers::email::EmailProvider;
use authcore::providers::{OAuthProvider, WebAuthnProvider};
use authcore::two_factor::TwoFactorOptions;
use authcore::types::{Account, ProviderType};
use authcore::{Auth, AuthConfig, SessionStrategy};
use serde_json::{Value, json};

/// An app with GitHub, GitLab, passkeys, second factors and `strategy`; Ada has both OAuth
/// accounts, two passkeys and access granted to an app, and (with `totp`) an authenticator.
struct App {
    auth: Auth,
    db: MemoryAdapter,
    ada: String,
    /// The organization Ada owns.
    org: String,
    /// A user Ada administers.
    bob: String,
    /// Ada's TOTP secret (base32), when enrolled.
    secret: Option<String>,
}

async fn app(strategy: SessionStrategy, totp: bool) -> App {
    let oauth = |id: &str| {
        OAuthProvider::oauth(id, id)
            .authorization_url(format!("https://{id}.example/authorize"))
            .token_url(format!("https://{id}.example/token"))
            .userinfo_url(format!("https://{id}.example/userinfo"))
            .client_id("client")
            .client_secret("secret")
    };
    let db = MemoryAdapter::new();
    let ada = stored_user(&db, "ada@example.com", false).await;
    let bob = stored_user(&db, "bob@example.com", true).await;
    let auth = Auth::new(
        AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .provider(oauth("github"))
            .provider(oauth("gitlab"))
            .provider(WebAuthnProvider::passkey())
            .provider(
                EmailProvider::new("Auth <no-reply@example.com>")
                    .send_verification_request(|_| async { Ok(()) }),
            )
            .password_accounts(
                PasswordAccounts::new(
                    std::sync::Arc::new(db.clone()),
                    PasswordHashing::argon2id(64, 1, 1).unwrap(),
                )
                .unwrap(),
            )
            .adapter(db.clone())
            .session_strategy(strategy)
            .two_factor(TwoFactorOptions::default())
            .organizations(Organizations::new())
            .admins(authcore::admin::Admins::new().user(ada.clone()))
            .jwt_revocation(true)
            .build()
            .unwrap(),
    );
    let org = auth
        .create_organization_for(&ada, "Ada's", None)
        .await
        .unwrap()
        .id;
    for provider in ["github", "gitlab"] {
        let mut a = Account::new(ProviderType::Oauth, provider, format!("{provider}-ada"));
        a.user_id = Some(ada.clone());
        db.link_account(a).await.unwrap();
    }
    for id in ["cred-1", "cred-2"] {
        add_passkey(&db, &ada, "passkey", id).await;
    }
    db.grant_app_access(
        &ada,
        "app-1",
        "App One",
        &["openid".to_owned()],
        time::OffsetDateTime::now_utc(),
    )
    .await
    .unwrap();
    let secret = if totp {
        Some(auth.enrol_totp_for_user(&ada).await.unwrap().0.secret)
    } else {
        None
    };
    App {
        auth,
        db,
        ada,
        org,
        bob,
        secret,
    }
}

/// Everything of Ada's that a sensitive change would change.
async fn snapshot(app: &App) -> Value {
    let db = &app.db;
    let user = db.get_user(&app.ada).await.unwrap();
    let accounts: Vec<String> = db
        .list_accounts_by_user_id(&app.ada)
        .await
        .unwrap()
        .into_iter()
        .map(|a| format!("{}:{}", a.provider, a.provider_account_id))
        .collect();
    let passkeys = db
        .list_authenticators_by_user_id(&app.ada)
        .await
        .unwrap()
        .len();
    let two_factor = db
        .get_two_factor(&app.ada)
        .await
        .unwrap()
        .map(|t| (t.totp_secret, t.totp_confirmed_at.is_some()));
    let codes = db.count_recovery_codes(&app.ada).await.unwrap();
    let apps: Vec<String> = db
        .list_app_access(&app.ada)
        .await
        .unwrap()
        .into_iter()
        .map(|a| a.client_id)
        .collect();
    let password = db.get_password_hash(&app.ada).await.unwrap();
    let organizations = app.auth.organizations_of(&app.ada).await.unwrap().len();
    let keys = app.auth.api_keys(&app.ada, None).await.unwrap().len();
    let bob = authcore::adapter::UserDirectoryStore::get_user_ban(db, &app.bob)
        .await
        .unwrap();
    json!({
        "organizations": organizations,
        "apiKeys": keys,
        "user": user.is_some(),
        "email": user.and_then(|u| u.email),
        "password": password,
        "accounts": accounts,
        "passkeys": passkeys,
        "twoFactor": format!("{two_factor:?}"),
        "recoveryCodes": codes,
        "apps": apps,
        "bobBanned": bob.is_some(),
    })
}

/// Where a sensitive operation can be asked for.
#[derive(Debug, Clone, Copy)]
enum Entry {
    /// The `Auth` method, with the request's `CurrentSession`.
    Api,
    /// The JSON account route.
    Json(AccountRoute),
    /// The administrators' JSON route.
    Admin(authcore::account::AdminRoute),
    /// The account page's form, `op` and the fields.
    Page(&'static str),
    /// The administrators' page's form, `op` and the fields.
    AdminPage(&'static str),
    /// `GET <basePath>/webauthn-options/passkey?action=register`.
    PasskeyOptions,
}

/// The entry points of `op`. A new operation without its entry points fails here.
fn entry_points(op: SensitiveOperation) -> Vec<Entry> {
    use AccountRoute as R;
    use Entry::*;
    use SensitiveOperation as S;
    match op {
        S::AddPasskey => vec![PasskeyOptions],
        S::RemovePasskey => vec![Api, Json(R::DeletePasskey), Page("passkey-delete")],
        S::StartTotp => vec![Api, Json(R::StartTotp), Page("totp-start")],
        S::ConfirmTotp => vec![Api, Json(R::ConfirmTotp), Page("totp-confirm")],
        S::DisableTotp => vec![Api, Json(R::DisableTotp), Page("totp-disable")],
        S::RegenerateRecoveryCodes => vec![
            Api,
            Json(R::RegenerateRecoveryCodes),
            Page("recovery-codes"),
        ],
        // A sign-in with the provider while signed in: `oauth_adapter_linking`.
        S::LinkProvider => vec![],
        S::UnlinkProvider => vec![Api, Json(R::Unlink), Page("unlink")],
        S::RevokeAppAccess => vec![Api, Json(R::RevokeApp), Page("app-revoke")],
        S::DeleteAccount => vec![Api, Json(R::DeleteUser), Page("delete")],
        S::ChangePassword => vec![Api, Json(R::ChangePassword), Page("password")],
        // The link to the new address is the change; asking for it is the operation.
        S::ChangeEmail => vec![Api, Json(R::ChangeEmail), Page("email")],
        S::CreateApiKey => vec![Api, Json(R::CreateApiKey), Page("key-create")],
        S::DeleteOrganization => vec![Api, Json(R::DeleteOrganization)],
        S::Administer => vec![
            Admin(authcore::account::AdminRoute::Ban),
            Admin(authcore::account::AdminRoute::EndSessions),
            AdminPage("ban"),
            AdminPage("end-sessions"),
        ],
        other => panic!("no entry points listed for {other:?}"),
    }
}

/// The fields of `op`'s request: what it names, and a current code of Ada's authenticator
/// when she has one (a stolen session with a code still changes nothing).
fn fields(app: &App, op: SensitiveOperation) -> Vec<(&'static str, String)> {
    use SensitiveOperation as S;
    let code = || {
        app.secret
            .as_deref()
            .map_or_else(|| "123456".to_owned(), |s| totp_code_at(s, unix_now()))
    };
    match op {
        S::RemovePasskey => vec![("credentialID", "cred-1".into())],
        S::UnlinkProvider => vec![
            ("provider", "github".into()),
            ("providerAccountId", "github-ada".into()),
        ],
        S::RevokeAppAccess => vec![("clientId", "app-1".into())],
        S::DeleteAccount => vec![("confirm", "yes".into())],
        S::ChangePassword => vec![
            ("currentPassword", String::new()),
            ("newPassword", "violet umbrella under nine moons".into()),
        ],
        S::ChangeEmail => vec![("email", "ada.new@example.com".into())],
        S::CreateApiKey => vec![("name", "deploy".into())],
        S::DeleteOrganization => vec![("organizationId", app.org.clone())],
        S::Administer => vec![("userId", app.bob.clone()), ("reason", "spam".into())],
        S::ConfirmTotp | S::DisableTotp | S::RegenerateRecoveryCodes => vec![("code", code())],
        _ => vec![],
    }
}

fn field<'a>(fields: &'a [(&'static str, String)], name: &str) -> &'a str {
    fields
        .iter()
        .find(|(k, _)| *k == name)
        .map_or("", |(_, v)| v.as_str())
}

/// `op` through the `Auth` method: `Ok(())` or the error.
async fn through_api(
    app: &App,
    me: &authcore::account::CurrentSession,
    op: SensitiveOperation,
) -> Result<(), AccountError> {
    use SensitiveOperation as S;
    let f = fields(app, op);
    let auth = &app.auth;
    match op {
        S::RemovePasskey => auth.delete_passkey(me, field(&f, "credentialID")).await,
        S::UnlinkProvider => {
            auth.unlink_account(me, field(&f, "provider"), field(&f, "providerAccountId"))
                .await
        }
        S::RevokeAppAccess => auth.revoke_app_access(me, field(&f, "clientId")).await,
        S::DeleteAccount => auth.delete_user(me).await,
        S::ChangePassword => {
            auth.change_password(me, field(&f, "currentPassword"), field(&f, "newPassword"))
                .await
        }
        S::ChangeEmail => auth.change_email(me, field(&f, "email")).await,
        S::CreateApiKey => auth
            .create_api_key(me, None, field(&f, "name"), &[], None)
            .await
            .map(drop),
        S::DeleteOrganization => {
            auth.delete_organization(me, field(&f, "organizationId"))
                .await
        }
        S::StartTotp => auth.start_totp_enrolment(me).await.map(drop),
        S::ConfirmTotp => auth.confirm_totp(me, field(&f, "code")).await.map(drop),
        S::DisableTotp => auth.disable_totp(me, field(&f, "code")).await,
        S::RegenerateRecoveryCodes => auth
            .regenerate_recovery_codes(me, field(&f, "code"))
            .await
            .map(drop),
        other => panic!("{other:?} has no Auth method"),
    }
}

/// `op` through `entry` with the session `cookie`: whether it was refused for the sign-in's
/// age, as that entry point says it (and the answer, for the assertion's message).
async fn attempt(
    app: &App,
    cookie: &str,
    me: &authcore::account::CurrentSession,
    op: SensitiveOperation,
    entry: Entry,
) -> (bool, String) {
    let (csrf_cookie, csrf) = csrf_pair();
    let cookie = format!("{cookie}; {csrf_cookie}");
    let f = fields(app, op);
    match entry {
        Entry::Api => {
            let r = through_api(app, me, op).await;
            (
                matches!(r, Err(AccountError::ReauthenticationRequired)),
                format!("{r:?}"),
            )
        }
        Entry::Json(route) => {
            let req = json_request(route.method(), route.path(), &cookie, &csrf, &f);
            refused_as_json(app.auth.handle_account(route, req).await).await
        }
        Entry::Admin(route) => {
            let req = json_request(route.method(), route.path(), &cookie, &csrf, &f);
            refused_as_json(app.auth.handle_admin(route, req).await).await
        }
        Entry::Page(form_op) | Entry::AdminPage(form_op) => {
            let path = match entry {
                Entry::AdminPage(_) => "/auth/admin",
                _ => "/auth/account",
            };
            let mut pairs = vec![("csrfToken", csrf.as_str()), ("op", form_op)];
            pairs.extend(f.iter().map(|(k, v)| (*k, v.as_str())));
            let r = send(
                &app.auth,
                post(path)
                    .header("cookie", &cookie)
                    .body(form(&pairs))
                    .unwrap(),
            )
            .await;
            let html = r.text();
            let refused = r.status == 200
                && html.contains("This change needs a recent sign-in")
                && html.contains(">Sign in again</a>");
            (refused, format!("{} {:?} {html}", r.status, r.location()))
        }
        Entry::PasskeyOptions => {
            let r = send(
                &app.auth,
                get("/auth/webauthn-options/passkey?action=register")
                    .header("cookie", &cookie)
                    .body(empty())
                    .unwrap(),
            )
            .await;
            let v = r.json();
            let no_challenge = r
                .set_cookies()
                .iter()
                .all(|c| !c.contains("authjs.challenge"));
            (
                r.status == 401 && v["error"] == "ReauthenticationRequired" && no_challenge,
                format!("{} {v} {:?}", r.status, r.set_cookies()),
            )
        }
    }
}

/// A JSON route's request: the fields and the CSRF token in its body.
fn json_request(
    method: http::Method,
    path: &str,
    cookie: &str,
    csrf: &str,
    fields: &[(&'static str, String)],
) -> http::Request<http_body_util::Full<bytes::Bytes>> {
    let mut body = json!({ "csrfToken": csrf });
    for (k, v) in fields {
        body[*k] = json!(v);
    }
    http::Request::builder()
        .method(method)
        .uri(url(path))
        .header("cookie", cookie)
        .header("content-type", "application/json")
        .body(http_body_util::Full::new(bytes::Bytes::from(
            body.to_string(),
        )))
        .unwrap()
}

/// Whether a JSON route's answer refused for the sign-in's age (and the answer).
async fn refused_as_json(r: http::Response<authcore::ResponseBody>) -> (bool, String) {
    let status = r.status().as_u16();
    let body = http_body_util::BodyExt::collect(r.into_body())
        .await
        .unwrap()
        .to_bytes();
    let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    (
        status == 401 && v["error"] == "ReauthenticationRequired",
        format!("{status} {v}"),
    )
}

/// The sessions a thief might hold: `(name, second factor enrolled, age, amr)`.
const STALE: [(&str, bool, u64, &[&str]); 3] = [
    ("signed in two hours ago", false, 2 * 3600, &["pwd"]),
    (
        "signed in two hours ago with both factors",
        true,
        2 * 3600,
        &["pwd", "otp", "mfa"],
    ),
    ("recent, without the second factor", true, 0, &["pwd"]),
];

#[tokio::test]
async fn every_sensitive_operation_refuses_a_stale_session_on_every_entry_point() {
    for strategy in [SessionStrategy::Jwt, SessionStrategy::Database] {
        for op in SensitiveOperation::ALL {
            for entry in entry_points(op) {
                for (name, totp, age, amr) in STALE {
                    let app = app(strategy, totp).await;
                    let (cookie, me) =
                        session_of(&app.auth, &app.db, &app.ada, Duration::from_secs(age), amr)
                            .await;
                    let before = snapshot(&app).await;
                    let (refused, answer) = attempt(&app, &cookie, &me, op, entry).await;
                    let context = format!("{strategy:?} {op:?} {entry:?} {name}");
                    assert!(refused, "{context}: not refused: {answer}");
                    assert_eq!(snapshot(&app).await, before, "{context}: changed");
                }
                // The control: a session that signed in now with both factors is not refused.
                let app = app(strategy, true).await;
                let (cookie, me) = session_of(
                    &app.auth,
                    &app.db,
                    &app.ada,
                    Duration::ZERO,
                    &["pwd", "otp", "mfa"],
                )
                .await;
                let (refused, answer) = attempt(&app, &cookie, &me, op, entry).await;
                assert!(
                    !refused,
                    "{strategy:?} {op:?} {entry:?}: a recent two-factor session refused: {answer}"
                );
            }
        }
    }
}

#[tokio::test]
async fn a_session_whose_sign_in_time_is_unknown_or_in_the_future_is_stale() {
    let app = app(SessionStrategy::Jwt, false).await;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    // Made by Auth.js (no `auth_time`), or claiming a sign-in tomorrow.
    for claims in [
        json!({ "sub": app.ada }),
        json!({ "sub": app.ada, "auth_time": now + 86_400, "amr": ["pwd"] }),
        json!({ "sub": app.ada, "auth_time": "now", "amr": ["pwd"] }),
    ] {
        let cookie = session_cookie(&app.auth, claims.clone());
        let mut headers = http::HeaderMap::new();
        headers.insert("cookie", cookie.parse().unwrap());
        let me = app
            .auth
            .current_session(&url("/auth/session").parse().unwrap(), &headers)
            .await
            .unwrap();
        let before = snapshot(&app).await;
        let r = app.auth.delete_user(&me).await;
        assert!(
            matches!(r, Err(AccountError::ReauthenticationRequired)),
            "{claims}: {r:?}"
        );
        assert_eq!(snapshot(&app).await, before, "{claims}");
    }
}

#[tokio::test]
async fn the_window_is_the_configurations() {
    // One minute: a session of two minutes ago is stale, one of now is not.
    let db = MemoryAdapter::new();
    let auth = Auth::new(
        AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .provider(WebAuthnProvider::passkey())
            .adapter(db.clone())
            .recent_sign_in(Duration::from_secs(60))
            .build()
            .unwrap(),
    );
    let ada = stored_user(&db, "ada@example.com", false).await;
    let (_, old) = session_of(&auth, &db, &ada, Duration::from_secs(120), &["pwd"]).await;
    assert!(matches!(
        auth.delete_user(&old).await,
        Err(AccountError::ReauthenticationRequired)
    ));
    let (_, now) = session_of(&auth, &db, &ada, Duration::ZERO, &["pwd"]).await;
    auth.delete_user(&now).await.unwrap();
    assert!(db.get_user(&ada).await.unwrap().is_none());
}
