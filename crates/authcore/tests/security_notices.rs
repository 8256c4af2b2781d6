//! Security notices: every change to how a user signs in that the `Auth` methods make tells
//! the `securityChange` event and mails the user's verified address, with a link to the
//! account page on the request's origin; an address that is not verified gets no mail, and
//! a failing sender never fails the change.
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::*;
use crate::totp::{totp_code_at, unix_now};
use authcore::account::CurrentSession;
use authcore::adapter::{Adapter, MemoryAdapter};
use authcore::callbacks::SecurityChange;
use authcore::providers::{
    WebAuthnProvider,
    email::{EmailProvider, SecurityNotice},
};
use authcore::two_factor::TwoFactorOptions;
use authcore::{Auth, AuthConfig};

const ACCOUNT_URL: &str = "https://authjs.test/auth/account";

type Notices = Arc<Mutex<Vec<SecurityNotice>>>;

struct App {
    auth: Auth,
    db: MemoryAdapter,
    rec: Recorder,
    notices: Notices,
    user_id: String,
}

/// An app with magic links (whose notices land in `notices`), passkeys and second factors,
/// and user `ada@example.com` (her address verified when `verified`) with two passkeys.
async fn app(verified: bool, failing_sender: bool) -> App {
    let db = MemoryAdapter::new();
    let user_id = stored_user(&db, "ada@example.com", verified).await;
    for id in ["cred-1", "cred-2"] {
        add_passkey(&db, &user_id, "webauthn", id).await;
    }
    let notices = Notices::default();
    let sink = notices.clone();
    let email = EmailProvider::new("Auth <no-reply@example.com>")
        .send_verification_request(|_| async { Ok(()) })
        .send_security_notice(move |notice| {
            let sink = sink.clone();
            async move {
                let to = notice.to.clone();
                sink.lock().unwrap().push(notice);
                if failing_sender {
                    return Err(format!("Email ({to}) could not be sent").into());
                }
                Ok(())
            }
        });
    let (auth, rec) = auth_with(
        AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .provider(email)
            .provider(WebAuthnProvider::new())
            .adapter(db.clone())
            .two_factor(TwoFactorOptions::default()),
    );
    App {
        auth,
        db,
        rec,
        notices,
        user_id,
    }
}

/// A session of the user that signed in just now, with both factors when `mfa`.
async fn session(app: &App, mfa: bool) -> CurrentSession {
    let amr: &[&str] = if mfa {
        &["pwd", "otp", "mfa"]
    } else {
        &["pwd"]
    };
    session_of(&app.auth, &app.db, &app.user_id, Duration::ZERO, amr)
        .await
        .1
}

/// Enrols TOTP through a session; the recovery codes.
async fn enrol(app: &App) -> Vec<String> {
    let me = session(app, false).await;
    let e = app.auth.start_totp_enrolment(&me).await.unwrap();
    app.auth
        .confirm_totp(&me, &totp_code_at(&e.secret, unix_now() - 30))
        .await
        .unwrap()
}

/// The changes the `Auth` methods make (a passkey is added and a provider linked only
/// through a sign-in ceremony).
#[derive(Debug, Clone, Copy)]
enum Act {
    DeletePasskey,
    EnrolTotp,
    EnrolTotpByOperator,
    RenewRecoveryCodes,
    DisableTotp,
    DeleteUser,
}

impl Act {
    async fn run(self, app: &App) {
        let auth = &app.auth;
        match self {
            Act::DeletePasskey => {
                let me = session(app, false).await;
                auth.delete_passkey(&me, "cred-1").await.unwrap();
            }
            Act::EnrolTotp => {
                enrol(app).await;
            }
            Act::EnrolTotpByOperator => {
                auth.enrol_totp_for_user(&app.user_id).await.unwrap();
            }
            Act::RenewRecoveryCodes | Act::DisableTotp | Act::DeleteUser => {
                let codes = enrol(app).await;
                app.notices.lock().unwrap().clear();
                app.rec.events.lock().unwrap().clear();
                let me = session(app, true).await;
                match self {
                    Act::RenewRecoveryCodes => {
                        auth.regenerate_recovery_codes(&me, &codes[0])
                            .await
                            .unwrap();
                    }
                    Act::DisableTotp => auth.disable_totp(&me, &codes[0]).await.unwrap(),
                    _ => auth.delete_user(&me).await.unwrap(),
                }
            }
        }
    }
}

/// The `securityChange` events the recorder saw, as `(userId, change)`.
fn security_events(rec: &Recorder) -> Vec<(String, String)> {
    rec.events
        .lock()
        .unwrap()
        .iter()
        .filter(|(name, _)| name == "securityChange")
        .map(|(_, v)| {
            (
                v["userId"].as_str().unwrap().to_owned(),
                v["change"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn each_change_is_an_event_and_a_mail_to_the_verified_address() {
    // The operator's enrolment has no request and no URL is configured: no link.
    let table = [
        (
            Act::DeletePasskey,
            SecurityChange::PasskeyRemoved,
            Some(ACCOUNT_URL),
        ),
        (
            Act::EnrolTotp,
            SecurityChange::TotpEnrolled,
            Some(ACCOUNT_URL),
        ),
        (Act::EnrolTotpByOperator, SecurityChange::TotpEnrolled, None),
        (
            Act::RenewRecoveryCodes,
            SecurityChange::RecoveryCodesRenewed,
            Some(ACCOUNT_URL),
        ),
        (
            Act::DisableTotp,
            SecurityChange::TotpDisabled,
            Some(ACCOUNT_URL),
        ),
        (
            Act::DeleteUser,
            SecurityChange::AccountDeleted,
            Some(ACCOUNT_URL),
        ),
    ];
    let covered: Vec<SecurityChange> = table.iter().map(|(_, c, _)| *c).collect();
    let through_a_ceremony = [SecurityChange::PasskeyAdded, SecurityChange::ProviderLinked];
    // Password accounts' changes: `password_self_service`.
    let through_password_accounts = [
        SecurityChange::PasswordChanged,
        SecurityChange::EmailChanged,
    ];
    for change in SecurityChange::ALL {
        let elsewhere =
            through_a_ceremony.contains(&change) || through_password_accounts.contains(&change);
        assert!(covered.contains(&change) != elsewhere, "{change:?}");
    }

    for (act, change, link) in table {
        let app = app(true, false).await;
        act.run(&app).await;
        assert_eq!(
            security_events(&app.rec),
            [(app.user_id.clone(), change.name().to_owned())],
            "{act:?}"
        );
        let notices = app.notices.lock().unwrap().clone();
        assert_eq!(notices.len(), 1, "{act:?}: {notices:?}");
        let n = &notices[0];
        assert_eq!(n.to, "ada@example.com", "{act:?}");
        assert_eq!(n.from, "Auth <no-reply@example.com>");
        assert_eq!(
            (n.change, n.user_id.as_str()),
            (change, app.user_id.as_str())
        );
        assert!(n.subject.starts_with("Security alert: "), "{act:?}: {n:?}");
        assert!(
            n.text.starts_with(change.description()),
            "{act:?}: {}",
            n.text
        );
        assert_eq!(n.account_url.as_deref(), link, "{act:?}");
        match link {
            Some(url) => {
                assert!(
                    n.text.contains(&format!("\n{url}\n")),
                    "{act:?}: {}",
                    n.text
                );
                assert!(n.html.contains(&format!("href=\"{url}\"")), "{act:?}");
            }
            None => assert!(!n.text.contains("http") && !n.html.contains("href")),
        }
        // `Debug` shows the address masked.
        let debug = format!("{n:?}");
        assert!(!debug.contains("ada@example.com") && debug.contains("a***@example.com"));
    }
}

#[tokio::test]
async fn an_unverified_address_gets_the_event_but_no_mail() {
    let app = app(false, false).await;
    Act::DeletePasskey.run(&app).await;
    assert_eq!(
        security_events(&app.rec),
        [(app.user_id.clone(), "passkeyRemoved".to_owned())]
    );
    assert!(app.notices.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_failing_sender_does_not_fail_the_change() {
    let app = app(true, true).await;
    Act::DeleteUser.run(&app).await;
    assert!(app.db.get_user(&app.user_id).await.unwrap().is_none());
    assert_eq!(app.notices.lock().unwrap().len(), 1);
    assert_eq!(
        security_events(&app.rec),
        [(app.user_id.clone(), "accountDeleted".to_owned())]
    );
}
