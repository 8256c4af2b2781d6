//! The conformance suite every [`Adapter`] backend must pass (the interface of Auth.js
//! `adapters.ts`).
//!
//! Enabled by the `conformance` cargo feature (and always in authcore's own unit tests).
//! A backend crate adds `authcore = { path = "…", features = ["conformance"] }` to its
//! dev-dependencies and runs:
//!
//! ```ignore
//! #[tokio::test]
//! async fn conformance() {
//!     let adapter = MyAdapter::connect("…").await.unwrap();
//!     authcore::adapter::conformance::run_all(adapter).await;
//! }
//! ```
//!
//! Every check panics with `adapter conformance check '<name>' failed: …` on the first
//! failure. Checks use fresh random emails, ids, tokens and credential ids, so a database
//! shared between runs (or between parallel runs) can be reused. A check that needs a method
//! the adapter reports as unsupported ([`Adapter::supports`]) is skipped (and says so on
//! stderr); a method that is reported supported but answers
//! [`AdapterError::Unsupported`] fails the check.
//!
//! Backends that do not store arbitrary extra account fields (the SQL schema of
//! `@auth/pg-adapter` has fixed columns) run [`run_all_with`] with
//! [`Options::account_extras`] `= false`: the extra fields must then come back dropped,
//! never garbled.

use std::fmt::Debug;

use serde_json::json;
use time::{Duration, OffsetDateTime};

use super::{
    Adapter, AdapterError, AdapterMethod, AdapterSession, AdapterUser, AppAccess, JwtRevocation,
    NewUser, SessionActivity, TwoFactor, UpstreamSession, UserUpdate, VerificationToken,
};
use crate::types::SignInInfo;
use crate::types::{Account, Authenticator, JsonObject, ProviderType};

/// What the suite may expect of a backend beyond the trait contract.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Options {
    /// Whether [`Account::extra`] and [`Account::authorization_details`] round-trip
    /// (default `true`). When `false` they must come back empty.
    pub account_extras: bool,
    /// How many times the racing checks repeat their race (default 8).
    pub race_rounds: usize,
    /// Whether `delete_user` also deletes unused verification tokens of the user's email
    /// (default `true`; an adapter that cannot find tokens by address turns it off).
    pub deletes_user_tokens: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            account_extras: true,
            race_rounds: 8,
            deletes_user_tokens: true,
        }
    }
}

impl Options {
    /// Sets [`Options::account_extras`].
    pub fn account_extras(mut self, stored: bool) -> Self {
        self.account_extras = stored;
        self
    }

    /// Sets [`Options::deletes_user_tokens`].
    pub fn deletes_user_tokens(mut self, deletes: bool) -> Self {
        self.deletes_user_tokens = deletes;
        self
    }

    /// Sets [`Options::race_rounds`].
    pub fn race_rounds(mut self, rounds: usize) -> Self {
        self.race_rounds = rounds;
        self
    }
}

/// Runs every conformance check against `adapter` with the default [`Options`]; panics with
/// a clear message naming the check on the first failure.
pub async fn run_all<A: Adapter + Clone>(adapter: A) {
    run_all_with(adapter, Options::default()).await;
}

/// Runs every conformance check against `adapter` with `options`.
pub async fn run_all_with<A: Adapter + Clone>(adapter: A, options: Options) {
    supports_agrees_with_methods(&adapter).await;
    users(&adapter).await;
    update_user(&adapter).await;
    accounts(&adapter, &options).await;
    account_tokens(&adapter, &options).await;
    account_link_race(&adapter, &options).await;
    sessions(&adapter).await;
    verification_tokens(&adapter).await;
    verification_token_race(&adapter, &options).await;
    authenticators(&adapter).await;
    authenticator_deletion(&adapter).await;
    session_activity(&adapter).await;
    session_sign_in(&adapter).await;
    jwt_revocation(&adapter).await;
    two_factor(&adapter).await;
    recovery_code_race(&adapter, &options).await;
    app_access(&adapter).await;
    app_access_race(&adapter, &options).await;
    upstream_sessions(&adapter).await;
    upstream_session_race(&adapter, &options).await;
    delete_user(&adapter).await;
    if options.deletes_user_tokens {
        delete_user_tokens(&adapter).await;
    }
}

// ---------------------------------------------------------------------------------------
// Helpers

/// Fails check `check` with `msg`.
#[track_caller]
fn fail(check: &str, msg: impl std::fmt::Display) -> ! {
    panic!("adapter conformance check '{check}' failed: {msg}")
}

/// Unwraps an adapter result, failing `check` with `what` and the error otherwise.
#[track_caller]
fn ok<T>(check: &str, what: &str, r: Result<T, AdapterError>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => fail(check, format_args!("{what} returned an error: {e} ({e:?})")),
    }
}

/// Unwraps `Ok(Some(_))`.
#[track_caller]
fn some<T>(check: &str, what: &str, r: Result<Option<T>, AdapterError>) -> T {
    match ok(check, what, r) {
        Some(v) => v,
        None => fail(
            check,
            format_args!("{what} returned None, expected a value"),
        ),
    }
}

/// Asserts `Ok(None)`.
#[track_caller]
fn none<T: Debug>(check: &str, what: &str, r: Result<Option<T>, AdapterError>) {
    if let Some(v) = ok(check, what, r) {
        fail(check, format_args!("{what} returned {v:?}, expected None"))
    }
}

#[track_caller]
fn eq<T: PartialEq + Debug>(check: &str, what: &str, got: &T, want: &T) {
    if got != want {
        fail(
            check,
            format_args!("{what}: got {got:?}, expected {want:?}"),
        )
    }
}

/// Whether every method in `needed` is supported; reports a skip otherwise.
fn supported<A: Adapter>(adapter: &A, check: &str, needed: &[AdapterMethod]) -> bool {
    let missing: Vec<&str> = needed
        .iter()
        .filter(|m| !adapter.supports(**m))
        .map(|m| m.name())
        .collect();
    if missing.is_empty() {
        true
    } else {
        eprintln!(
            "adapter conformance check '{check}' skipped: unsupported {}",
            missing.join(", ")
        );
        false
    }
}

fn random_id() -> String {
    crate::random::uuid_v4().replace('-', "")
}

fn unique_email(tag: &str) -> String {
    format!("{tag}-{}@conformance.example", random_id())
}

/// Ids no backend has assigned: a UUID and a large number (for serial ids).
fn unknown_ids() -> [String; 2] {
    [crate::random::uuid_v4(), "2147480000".to_owned()]
}

/// A whole-second-plus-milliseconds instant `secs` from now; backends must keep the second.
fn instant(secs: i64) -> OffsetDateTime {
    let now = OffsetDateTime::now_utc().unix_timestamp();
    match OffsetDateTime::from_unix_timestamp(now + secs) {
        Ok(t) => t + Duration::milliseconds(123),
        Err(e) => fail("setup", e),
    }
}

#[track_caller]
fn same_second(check: &str, what: &str, got: OffsetDateTime, want: OffsetDateTime) {
    if got.unix_timestamp() != want.unix_timestamp() {
        fail(
            check,
            format_args!("{what}: got {got}, expected {want} (to the second)"),
        )
    }
}

#[track_caller]
fn same_opt_second(
    check: &str,
    what: &str,
    got: Option<OffsetDateTime>,
    want: Option<OffsetDateTime>,
) {
    match (got, want) {
        (None, None) => {}
        (Some(g), Some(w)) => same_second(check, what, g, w),
        _ => fail(
            check,
            format_args!("{what}: got {got:?}, expected {want:?}"),
        ),
    }
}

#[track_caller]
fn same_access(check: &str, what: &str, got: &AppAccess, want: &AppAccess) {
    eq(
        check,
        &format!("{what}: user_id"),
        &got.user_id,
        &want.user_id,
    );
    eq(
        check,
        &format!("{what}: client_id"),
        &got.client_id,
        &want.client_id,
    );
    eq(
        check,
        &format!("{what}: client_name"),
        &got.client_name,
        &want.client_name,
    );
    eq(check, &format!("{what}: scopes"), &got.scopes, &want.scopes);
    eq(check, &format!("{what}: epoch"), &got.epoch, &want.epoch);
    same_second(
        check,
        &format!("{what}: created_at"),
        got.created_at,
        want.created_at,
    );
    same_second(
        check,
        &format!("{what}: updated_at"),
        got.updated_at,
        want.updated_at,
    );
}

fn scopes(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

#[track_caller]
fn same_user(check: &str, what: &str, got: &AdapterUser, want: &AdapterUser) {
    eq(check, &format!("{what}: id"), &got.id, &want.id);
    eq(check, &format!("{what}: name"), &got.name, &want.name);
    eq(check, &format!("{what}: email"), &got.email, &want.email);
    eq(check, &format!("{what}: image"), &got.image, &want.image);
    same_opt_second(
        check,
        &format!("{what}: emailVerified"),
        got.email_verified,
        want.email_verified,
    );
}

#[track_caller]
fn same_session(check: &str, what: &str, got: &AdapterSession, want: &AdapterSession) {
    eq(
        check,
        &format!("{what}: sessionToken"),
        &got.session_token,
        &want.session_token,
    );
    eq(
        check,
        &format!("{what}: userId"),
        &got.user_id,
        &want.user_id,
    );
    same_second(
        check,
        &format!("{what}: expires"),
        got.expires,
        want.expires,
    );
}

#[track_caller]
fn same_token(check: &str, what: &str, got: &VerificationToken, want: &VerificationToken) {
    eq(
        check,
        &format!("{what}: identifier"),
        &got.identifier,
        &want.identifier,
    );
    eq(check, &format!("{what}: token"), &got.token, &want.token);
    same_second(
        check,
        &format!("{what}: expires"),
        got.expires,
        want.expires,
    );
}

#[track_caller]
fn expect_conflict<T: Debug>(check: &str, what: &str, r: Result<T, AdapterError>) {
    match r {
        Err(AdapterError::Conflict(_)) => {}
        other => fail(
            check,
            format_args!("{what}: got {other:?}, expected Err(AdapterError::Conflict)"),
        ),
    }
}

async fn new_user<A: Adapter>(adapter: &A, check: &str, tag: &str) -> AdapterUser {
    let want = NewUser {
        name: Some(format!("{tag} user")),
        email: Some(unique_email(tag)),
        email_verified: None,
        image: None,
    };
    let got = ok(
        check,
        "create_user",
        adapter.create_user(want.clone()).await,
    );
    eq(check, "create_user: email", &got.email, &want.email);
    got
}

/// An OAuth account with every column of the Auth.js schema set.
fn full_account(user_id: &str, kind: ProviderType, provider: &str) -> Account {
    let mut a = Account::new(kind, provider, random_id());
    a.user_id = Some(user_id.to_owned());
    a.access_token = Some(format!("at-{}", random_id()));
    a.refresh_token = Some(format!("rt-{}", random_id()));
    // Past 2^31: catches 32-bit columns.
    a.expires_at = Some(4_102_444_800);
    a.token_type = Some("bearer".to_owned());
    a.scope = Some("openid email profile".to_owned());
    a.id_token = Some(format!("eyJhbGciOiJSUzI1NiJ9.{}.sig", random_id()));
    a.session_state = Some(format!("ss-{}", random_id()));
    a
}

/// What a backend must give back for `sent`: everything, or everything but the extras.
fn expected_account(sent: &Account, options: &Options) -> Account {
    let mut want = sent.clone();
    if !options.account_extras {
        want.extra = JsonObject::new();
        want.authorization_details = None;
    }
    want
}

fn authenticator(user_id: &str, provider_account_id: &str, credential_id: String) -> Authenticator {
    Authenticator {
        credential_id,
        user_id: Some(user_id.to_owned()),
        provider_account_id: provider_account_id.to_owned(),
        counter: 0,
        credential_backed_up: false,
        credential_public_key: format!("pQECAyYgASFYI{}+/A==", random_id()),
        transports: Some("usb,nfc".to_owned()),
        credential_device_type: "singleDevice".to_owned(),
        name: None,
    }
}

// ---------------------------------------------------------------------------------------
// Checks

/// `supports` agrees with the methods: every method is called once (with a user of its
/// own where the adapter can make one, else unknown ids), and each one the adapter reports
/// as unsupported must answer `Unsupported`, each one it reports as supported must not (an
/// error for the unknown ids is fine). The configuration's start-up checks trust
/// `supports`: a method claimed but missing would fail at the first sign-in instead.
pub async fn supports_agrees_with_methods<A: Adapter>(adapter: &A) {
    use AdapterMethod as M;
    const CHECK: &str = "supports_agrees_with_methods";
    fn refused<T>(r: Result<T, AdapterError>) -> bool {
        matches!(r, Err(AdapterError::Unsupported(_)))
    }
    let created = adapter
        .create_user(NewUser {
            email: Some(unique_email("supports")),
            ..NewUser::default()
        })
        .await;
    let user_id = match &created {
        Ok(u) => u.id.clone(),
        Err(_) => random_id(),
    };
    let created_refused = matches!(created, Err(AdapterError::Unsupported(_)));
    let [unknown, _] = unknown_ids();
    let token = random_id();
    let credential = random_id();
    let mut account = full_account(&user_id, ProviderType::Oauth, "supports-probe");
    account.provider_account_id = random_id();
    // `delete_user` last: it removes the probe user and what hangs on it.
    let order = AdapterMethod::ALL
        .into_iter()
        .filter(|m| *m != M::DeleteUser)
        .chain([M::DeleteUser]);
    for m in order {
        let answered_unsupported = match m {
            M::CreateUser => created_refused,
            M::GetUser => refused(adapter.get_user(&unknown).await),
            M::GetUserByEmail => refused(adapter.get_user_by_email(&unique_email("none")).await),
            M::GetUserByAccount => refused(
                adapter
                    .get_user_by_account("supports-probe", &random_id())
                    .await,
            ),
            M::UpdateUser => refused(
                adapter
                    .update_user(UserUpdate {
                        id: unknown.clone(),
                        ..UserUpdate::default()
                    })
                    .await,
            ),
            M::LinkAccount => refused(adapter.link_account(account.clone()).await),
            M::GetAccount => refused(
                adapter
                    .get_account(&account.provider_account_id, "supports-probe")
                    .await,
            ),
            M::ListAccountsByUserId => refused(adapter.list_accounts_by_user_id(&user_id).await),
            M::UpdateAccount => refused(adapter.update_account(&account).await),
            M::UnlinkAccount => refused(
                adapter
                    .unlink_account("supports-probe", &account.provider_account_id)
                    .await,
            ),
            M::CreateSession => refused(
                adapter
                    .create_session(AdapterSession {
                        session_token: token.clone(),
                        user_id: user_id.clone(),
                        expires: instant(3600),
                    })
                    .await,
            ),
            M::GetSessionAndUser => refused(adapter.get_session_and_user(&token).await),
            M::UpdateSession => refused(adapter.update_session(&token, instant(7200)).await),
            M::RecordSessionActivity => refused(
                adapter
                    .record_session_activity(&token, instant(0), Some("probe"))
                    .await,
            ),
            M::ListSessionsByUserId => refused(adapter.list_sessions_by_user_id(&user_id).await),
            M::DeleteSession => refused(adapter.delete_session(&token).await),
            M::DeleteSessionsByUserId => {
                refused(adapter.delete_sessions_by_user_id(&user_id, None).await)
            }
            M::CreateVerificationToken => refused(
                adapter
                    .create_verification_token(VerificationToken {
                        identifier: unique_email("supports"),
                        token: random_id(),
                        expires: instant(3600),
                    })
                    .await,
            ),
            M::UseVerificationToken => refused(
                adapter
                    .use_verification_token(&unique_email("none"), &random_id())
                    .await,
            ),
            M::CreateAuthenticator => refused(
                adapter
                    .create_authenticator(authenticator(
                        &user_id,
                        &account.provider_account_id,
                        credential.clone(),
                    ))
                    .await,
            ),
            M::GetAuthenticator => refused(adapter.get_authenticator(&credential).await),
            M::ListAuthenticatorsByUserId => {
                refused(adapter.list_authenticators_by_user_id(&user_id).await)
            }
            M::UpdateAuthenticatorCounter => {
                refused(adapter.update_authenticator_counter(&credential, 1).await)
            }
            M::RenameAuthenticator => refused(
                adapter
                    .rename_authenticator(&credential, Some("probe"))
                    .await,
            ),
            M::DeleteAuthenticator => refused(adapter.delete_authenticator(&credential).await),
            M::RevokeJwtSessions => refused(
                adapter
                    .revoke_jwt_sessions(&user_id, instant(0), None)
                    .await,
            ),
            M::GetJwtRevocation => refused(adapter.get_jwt_revocation(&user_id).await),
            M::GetTwoFactor => refused(adapter.get_two_factor(&user_id).await),
            M::SetTwoFactor => refused(
                adapter
                    .set_two_factor(TwoFactor {
                        user_id: user_id.clone(),
                        totp_secret: "sealed-probe".to_owned(),
                        totp_confirmed_at: None,
                    })
                    .await,
            ),
            M::ReplaceRecoveryCodes => refused(
                adapter
                    .replace_recovery_codes(&user_id, &[random_id()])
                    .await,
            ),
            M::UseRecoveryCode => refused(adapter.use_recovery_code(&user_id, &random_id()).await),
            M::CountRecoveryCodes => refused(adapter.count_recovery_codes(&user_id).await),
            M::DeleteTwoFactor => refused(adapter.delete_two_factor(&user_id).await),
            M::RecordSessionSignIn => refused(
                adapter
                    .record_session_sign_in(&token, &SignInInfo::new(vec!["pwd".into()], Some(0)))
                    .await,
            ),
            M::GetSessionSignIn => refused(adapter.get_session_sign_in(&token).await),
            M::GrantAppAccess => refused(
                adapter
                    .grant_app_access(&user_id, "probe", "Probe", &["openid".into()], instant(0))
                    .await,
            ),
            M::GetAppAccess => refused(adapter.get_app_access(&user_id, "probe").await),
            M::ListAppAccess => refused(adapter.list_app_access(&user_id).await),
            M::RevokeAppAccess => refused(
                adapter
                    .revoke_app_access(&user_id, "probe", instant(0))
                    .await,
            ),
            M::RecordUpstreamSession => refused(
                adapter
                    .record_upstream_session(&UpstreamSession {
                        provider: "probe".into(),
                        sid: random_id(),
                        user_id: user_id.clone(),
                        session_token: None,
                        expires: instant(60),
                    })
                    .await,
            ),
            M::TakeUpstreamSessions => refused(
                adapter
                    .take_upstream_sessions("probe", &random_id(), instant(0))
                    .await,
            ),
            M::DeleteUser => refused(adapter.delete_user(&user_id).await),
        };
        if answered_unsupported == adapter.supports(m) {
            fail(
                CHECK,
                format_args!(
                    "supports({}) is {} but the method {}",
                    m.name(),
                    adapter.supports(m),
                    if answered_unsupported {
                        "answered Unsupported"
                    } else {
                        "did not answer Unsupported"
                    }
                ),
            );
        }
    }
}

/// create_user assigns distinct ids; get_user / get_user_by_email round-trip every field;
/// unknown ids and emails give `Ok(None)`.
pub async fn users<A: Adapter>(adapter: &A) {
    const CHECK: &str = "users";
    use AdapterMethod::*;
    if !supported(adapter, CHECK, &[CreateUser, GetUser, GetUserByEmail]) {
        return;
    }
    let verified = instant(-3600);
    let full = NewUser {
        name: Some("Ada Lovelace".to_owned()),
        email: Some(unique_email("users")),
        email_verified: Some(verified),
        image: Some("https://example.com/ada.png".to_owned()),
    };
    let a = ok(
        CHECK,
        "create_user",
        adapter.create_user(full.clone()).await,
    );
    eq(CHECK, "created name", &a.name, &full.name);
    eq(CHECK, "created email", &a.email, &full.email);
    eq(CHECK, "created image", &a.image, &full.image);
    same_opt_second(
        CHECK,
        "created emailVerified",
        a.email_verified,
        Some(verified),
    );
    if a.id.is_empty() {
        fail(CHECK, "create_user assigned an empty id");
    }

    let bare = NewUser {
        email: Some(unique_email("users-bare")),
        ..NewUser::default()
    };
    let b = ok(
        CHECK,
        "create_user",
        adapter.create_user(bare.clone()).await,
    );
    if a.id == b.id {
        fail(CHECK, format_args!("two users got the same id {:?}", a.id));
    }
    eq(CHECK, "bare user name", &b.name, &None);
    eq(CHECK, "bare user image", &b.image, &None);
    eq(CHECK, "bare user emailVerified", &b.email_verified, &None);

    let got = some(CHECK, "get_user", adapter.get_user(&a.id).await);
    same_user(CHECK, "get_user", &got, &a);
    let got = some(CHECK, "get_user", adapter.get_user(&b.id).await);
    same_user(CHECK, "get_user", &got, &b);

    let email = full.email.clone().unwrap_or_default();
    let got = some(
        CHECK,
        "get_user_by_email",
        adapter.get_user_by_email(&email).await,
    );
    same_user(CHECK, "get_user_by_email", &got, &a);

    for id in unknown_ids() {
        none(CHECK, "get_user(unknown id)", adapter.get_user(&id).await);
    }
    none(
        CHECK,
        "get_user_by_email(unknown email)",
        adapter.get_user_by_email(&unique_email("nobody")).await,
    );
}

/// update_user changes only the fields given; `Some(None)` clears; unknown id → `Ok(None)`.
pub async fn update_user<A: Adapter>(adapter: &A) {
    const CHECK: &str = "update_user";
    use AdapterMethod::*;
    if !supported(adapter, CHECK, &[CreateUser, GetUser, UpdateUser]) {
        return;
    }
    let original = ok(
        CHECK,
        "create_user",
        adapter
            .create_user(NewUser {
                name: Some("Before".to_owned()),
                email: Some(unique_email("update")),
                email_verified: None,
                image: Some("https://example.com/before.png".to_owned()),
            })
            .await,
    );

    // Only the name.
    let up = UserUpdate {
        id: original.id.clone(),
        name: Some(Some("After".to_owned())),
        ..UserUpdate::default()
    };
    let got = some(CHECK, "update_user(name)", adapter.update_user(up).await);
    let mut want = original.clone();
    want.name = Some("After".to_owned());
    same_user(CHECK, "update_user(name) result", &got, &want);
    let stored = some(CHECK, "get_user", adapter.get_user(&original.id).await);
    same_user(CHECK, "get_user after update_user(name)", &stored, &want);

    // Set emailVerified, clear the image, change the email.
    let verified = instant(0);
    let new_email = unique_email("update-new");
    let up = UserUpdate {
        id: original.id.clone(),
        email: Some(Some(new_email.clone())),
        email_verified: Some(Some(verified)),
        image: Some(None),
        ..UserUpdate::default()
    };
    let got = some(CHECK, "update_user(email…)", adapter.update_user(up).await);
    want.email = Some(new_email.clone());
    want.email_verified = Some(verified);
    want.image = None;
    same_user(
        CHECK,
        "update_user(email, emailVerified, image) result",
        &got,
        &want,
    );
    let stored = some(CHECK, "get_user", adapter.get_user(&original.id).await);
    same_user(CHECK, "get_user after second update_user", &stored, &want);
    if adapter.supports(GetUserByEmail) {
        let by_email = some(
            CHECK,
            "get_user_by_email(new email)",
            adapter.get_user_by_email(&new_email).await,
        );
        eq(
            CHECK,
            "get_user_by_email(new email).id",
            &by_email.id,
            &original.id,
        );
    }

    // Clear emailVerified; an empty update changes nothing.
    let up = UserUpdate {
        id: original.id.clone(),
        email_verified: Some(None),
        ..UserUpdate::default()
    };
    let got = some(CHECK, "update_user(clear)", adapter.update_user(up).await);
    want.email_verified = None;
    same_user(
        CHECK,
        "update_user(emailVerified: None) result",
        &got,
        &want,
    );
    let up = UserUpdate {
        id: original.id.clone(),
        ..UserUpdate::default()
    };
    let got = some(CHECK, "update_user(empty)", adapter.update_user(up).await);
    same_user(CHECK, "update_user(no fields) result", &got, &want);

    for id in unknown_ids() {
        let up = UserUpdate {
            id,
            name: Some(Some("ghost".to_owned())),
            ..UserUpdate::default()
        };
        none(
            CHECK,
            "update_user(unknown id)",
            adapter.update_user(up).await,
        );
    }
}

/// `list_accounts_by_user_id` lists a user's accounts (ordered by provider and provider
/// account id, no one else's) and `update_account` replaces an account's tokens, keeping
/// its owner and type; both are authcore extensions, skipped when unsupported.
pub async fn account_tokens<A: Adapter>(adapter: &A, options: &Options) {
    const CHECK: &str = "account_tokens";
    use AdapterMethod::*;
    if !supported(
        adapter,
        CHECK,
        &[
            CreateUser,
            LinkAccount,
            GetAccount,
            ListAccountsByUserId,
            UpdateAccount,
        ],
    ) {
        return;
    }
    let user = new_user(adapter, CHECK, "account-tokens").await;
    let other = new_user(adapter, CHECK, "account-tokens-other").await;
    let none_yet = ok(
        CHECK,
        "list_accounts_by_user_id",
        adapter.list_accounts_by_user_id(&user.id).await,
    );
    eq(CHECK, "accounts of a new user", &none_yet, &Vec::new());
    let github = full_account(&user.id, ProviderType::Oauth, "github");
    let google = full_account(&user.id, ProviderType::Oidc, "google");
    let elsewhere = full_account(&other.id, ProviderType::Oauth, "github");
    for a in [&google, &github, &elsewhere] {
        ok(CHECK, "link_account", adapter.link_account(a.clone()).await);
    }
    let listed = ok(
        CHECK,
        "list_accounts_by_user_id",
        adapter.list_accounts_by_user_id(&user.id).await,
    );
    let want = vec![
        expected_account(&github, options),
        expected_account(&google, options),
    ];
    eq(CHECK, "the user's accounts, ordered", &listed, &want);

    let mut refreshed = github.clone();
    refreshed.access_token = Some(format!("at-{}", random_id()));
    refreshed.refresh_token = Some(format!("rt-{}", random_id()));
    refreshed.expires_at = Some(4_102_444_900);
    refreshed.id_token = None;
    // Owner and type are not the method's to change.
    refreshed.user_id = Some(other.id.clone());
    let updated = ok(
        CHECK,
        "update_account",
        adapter.update_account(&refreshed).await,
    );
    eq(CHECK, "update_account of a linked account", &updated, &true);
    let got = some(
        CHECK,
        "get_account after update_account",
        adapter
            .get_account(&github.provider_account_id, &github.provider)
            .await,
    );
    let mut want = expected_account(&github, options);
    want.access_token.clone_from(&refreshed.access_token);
    want.refresh_token.clone_from(&refreshed.refresh_token);
    want.expires_at = refreshed.expires_at;
    want.id_token = None;
    eq(CHECK, "account after update_account", &got, &want);
    let untouched = some(
        CHECK,
        "get_account(other user's) after update_account",
        adapter
            .get_account(&elsewhere.provider_account_id, &elsewhere.provider)
            .await,
    );
    eq(
        CHECK,
        "another user's account",
        &untouched,
        &expected_account(&elsewhere, options),
    );
    let unknown = Account::new(ProviderType::Oauth, "github", random_id());
    let updated = ok(
        CHECK,
        "update_account(unknown)",
        adapter.update_account(&unknown).await,
    );
    eq(
        CHECK,
        "update_account of an unknown account",
        &updated,
        &false,
    );
}

/// link_account then get_user_by_account / get_account round-trip every field; a second
/// link of the same (provider, providerAccountId) is a Conflict and leaves the first;
/// unlink_account removes the link.
pub async fn accounts<A: Adapter>(adapter: &A, options: &Options) {
    const CHECK: &str = "accounts";
    use AdapterMethod::*;
    if !supported(
        adapter,
        CHECK,
        &[CreateUser, LinkAccount, GetUserByAccount, GetAccount],
    ) {
        return;
    }
    let user = new_user(adapter, CHECK, "accounts").await;
    let other = new_user(adapter, CHECK, "accounts-other").await;

    let mut oauth = full_account(&user.id, ProviderType::Oauth, "github");
    oauth
        .extra
        .insert("refresh_token_expires_in".to_owned(), json!(15_897_600));
    oauth.authorization_details = Some(vec![json!({"type": "account_information"})]);
    ok(
        CHECK,
        "link_account(oauth)",
        adapter.link_account(oauth.clone()).await,
    );

    // An OIDC account with only the required fields, same provider account id on another
    // provider: uniqueness is per (provider, providerAccountId).
    let mut bare = Account::new(
        ProviderType::Oidc,
        "google",
        oauth.provider_account_id.clone(),
    );
    bare.user_id = Some(user.id.clone());
    ok(
        CHECK,
        "link_account(oidc)",
        adapter.link_account(bare.clone()).await,
    );

    let email_acc = {
        let mut a = Account::new(
            ProviderType::Email,
            "email",
            user.email.clone().unwrap_or_default(),
        );
        a.user_id = Some(other.id.clone());
        a
    };
    ok(
        CHECK,
        "link_account(email)",
        adapter.link_account(email_acc.clone()).await,
    );

    let owner = some(
        CHECK,
        "get_user_by_account",
        adapter
            .get_user_by_account(&oauth.provider, &oauth.provider_account_id)
            .await,
    );
    same_user(CHECK, "get_user_by_account(oauth)", &owner, &user);
    let owner = some(
        CHECK,
        "get_user_by_account",
        adapter
            .get_user_by_account(&email_acc.provider, &email_acc.provider_account_id)
            .await,
    );
    same_user(CHECK, "get_user_by_account(email)", &owner, &other);

    let got = some(
        CHECK,
        "get_account(oauth)",
        adapter
            .get_account(&oauth.provider_account_id, &oauth.provider)
            .await,
    );
    let want = expected_account(&oauth, options);
    if !options.account_extras && got.extra != want.extra {
        fail(
            CHECK,
            format_args!(
                "get_account returned extra fields {:?} although the backend does not store them",
                got.extra
            ),
        );
    }
    eq(CHECK, "get_account(oauth) round trip", &got, &want);
    let got = some(
        CHECK,
        "get_account(oidc)",
        adapter
            .get_account(&bare.provider_account_id, &bare.provider)
            .await,
    );
    eq(CHECK, "get_account(oidc) round trip", &got, &bare);
    let got = some(
        CHECK,
        "get_account(email)",
        adapter
            .get_account(&email_acc.provider_account_id, &email_acc.provider)
            .await,
    );
    eq(CHECK, "get_account(email) round trip", &got, &email_acc);

    // Same (provider, providerAccountId) again, for another user: Conflict, first link kept.
    let mut dup = full_account(&other.id, ProviderType::Oauth, "github");
    dup.provider_account_id = oauth.provider_account_id.clone();
    expect_conflict(
        CHECK,
        "second link_account of the same account",
        adapter.link_account(dup).await,
    );
    let owner = some(
        CHECK,
        "get_user_by_account after conflict",
        adapter
            .get_user_by_account(&oauth.provider, &oauth.provider_account_id)
            .await,
    );
    eq(CHECK, "owner after conflicting link", &owner.id, &user.id);
    let got = some(
        CHECK,
        "get_account after conflict",
        adapter
            .get_account(&oauth.provider_account_id, &oauth.provider)
            .await,
    );
    eq(CHECK, "account after conflicting link", &got, &want);

    // Unknown accounts.
    none(
        CHECK,
        "get_user_by_account(unknown)",
        adapter.get_user_by_account("github", &random_id()).await,
    );
    none(
        CHECK,
        "get_account(unknown)",
        adapter.get_account(&random_id(), "github").await,
    );
    none(
        CHECK,
        "get_account(known id, other provider)",
        adapter
            .get_account(&oauth.provider_account_id, "gitlab")
            .await,
    );

    if adapter.supports(UnlinkAccount) {
        ok(
            CHECK,
            "unlink_account",
            adapter
                .unlink_account(&oauth.provider, &oauth.provider_account_id)
                .await,
        );
        none(
            CHECK,
            "get_user_by_account after unlink",
            adapter
                .get_user_by_account(&oauth.provider, &oauth.provider_account_id)
                .await,
        );
        none(
            CHECK,
            "get_account after unlink",
            adapter
                .get_account(&oauth.provider_account_id, &oauth.provider)
                .await,
        );
        // The other provider's account with the same id is untouched.
        some(
            CHECK,
            "get_account(oidc) after unlinking the oauth one",
            adapter
                .get_account(&bare.provider_account_id, &bare.provider)
                .await,
        );
        ok(
            CHECK,
            "unlink_account(unknown)",
            adapter.unlink_account("github", &random_id()).await,
        );
        // Once unlinked, the account can be linked again (to the other user).
        let mut again = oauth.clone();
        again.user_id = Some(other.id.clone());
        ok(
            CHECK,
            "link_account after unlink",
            adapter.link_account(again).await,
        );
        let owner = some(
            CHECK,
            "get_user_by_account after relink",
            adapter
                .get_user_by_account(&oauth.provider, &oauth.provider_account_id)
                .await,
        );
        eq(CHECK, "owner after relink", &owner.id, &other.id);
    } else {
        eprintln!("adapter conformance check '{CHECK}': unlink_account part skipped (unsupported)");
    }
}

/// Two concurrent link_account of the same account: exactly one Ok, one Conflict.
pub async fn account_link_race<A: Adapter + Clone>(adapter: &A, options: &Options) {
    const CHECK: &str = "account_link_race";
    use AdapterMethod::*;
    if !supported(adapter, CHECK, &[CreateUser, LinkAccount, GetUserByAccount]) {
        return;
    }
    let a = new_user(adapter, CHECK, "race-a").await;
    let b = new_user(adapter, CHECK, "race-b").await;
    for round in 0..options.race_rounds.max(1) {
        let acc_a = full_account(&a.id, ProviderType::Oauth, "race");
        let mut acc_b = full_account(&b.id, ProviderType::Oauth, "race");
        acc_b.provider_account_id = acc_a.provider_account_id.clone();
        let (x, y) = (adapter.clone(), adapter.clone());
        let (rx, ry) =
            futures_util::future::join(x.link_account(acc_a.clone()), y.link_account(acc_b)).await;
        let winner = match (&rx, &ry) {
            (Ok(()), Err(AdapterError::Conflict(_))) => &a.id,
            (Err(AdapterError::Conflict(_)), Ok(())) => &b.id,
            _ => fail(
                CHECK,
                format_args!(
                    "round {round}: concurrent links gave {rx:?} and {ry:?}, expected one Ok and one Conflict"
                ),
            ),
        };
        let owner = some(
            CHECK,
            "get_user_by_account after race",
            adapter
                .get_user_by_account(&acc_a.provider, &acc_a.provider_account_id)
                .await,
        );
        eq(CHECK, "owner after race", &owner.id, winner);
    }
}

/// Second factors (authcore extensions, skipped when unsupported): a TOTP record
/// round-trips and is replaced by the next `set_two_factor`; recovery codes are replaced as
/// a set, each used once, counted; `delete_two_factor` and `delete_user` remove both; one
/// user's codes are not another's.
pub async fn two_factor<A: Adapter>(adapter: &A) {
    const CHECK: &str = "two_factor";
    use AdapterMethod::*;
    if !supported(adapter, CHECK, &[CreateUser, DeleteUser])
        || !supported(adapter, CHECK, AdapterMethod::TWO_FACTOR)
    {
        return;
    }
    let user = new_user(adapter, CHECK, "two-factor").await;
    let other = new_user(adapter, CHECK, "two-factor-other").await;
    none(
        CHECK,
        "get_two_factor before any",
        adapter.get_two_factor(&user.id).await,
    );
    let pending = TwoFactor {
        user_id: user.id.clone(),
        totp_secret: format!("eyJhbGciOiJkaXIifQ..{}", random_id()),
        totp_confirmed_at: None,
    };
    ok(
        CHECK,
        "set_two_factor",
        adapter.set_two_factor(pending.clone()).await,
    );
    let got = some(
        CHECK,
        "get_two_factor",
        adapter.get_two_factor(&user.id).await,
    );
    eq(CHECK, "an unconfirmed TOTP record", &got, &pending);
    let confirmed = TwoFactor {
        totp_confirmed_at: Some(instant(0)),
        ..pending
    };
    ok(
        CHECK,
        "set_two_factor again",
        adapter.set_two_factor(confirmed.clone()).await,
    );
    let got = some(
        CHECK,
        "get_two_factor",
        adapter.get_two_factor(&user.id).await,
    );
    eq(CHECK, "the confirmed record replacing it", &got, &confirmed);
    none(
        CHECK,
        "another user's record",
        adapter.get_two_factor(&other.id).await,
    );

    let first: Vec<String> = (0..10).map(|_| random_id()).collect();
    ok(
        CHECK,
        "replace_recovery_codes",
        adapter.replace_recovery_codes(&user.id, &first).await,
    );
    ok(
        CHECK,
        "another user's codes",
        adapter.replace_recovery_codes(&other.id, &first[..2]).await,
    );
    eq(
        CHECK,
        "count_recovery_codes",
        &ok(CHECK, "count", adapter.count_recovery_codes(&user.id).await),
        &10,
    );
    eq(
        CHECK,
        "use_recovery_code",
        &ok(
            CHECK,
            "use",
            adapter.use_recovery_code(&user.id, &first[3]).await,
        ),
        &true,
    );
    eq(
        CHECK,
        "a used code again",
        &ok(
            CHECK,
            "use",
            adapter.use_recovery_code(&user.id, &first[3]).await,
        ),
        &false,
    );
    eq(
        CHECK,
        "an unknown code",
        &ok(
            CHECK,
            "use",
            adapter.use_recovery_code(&user.id, &random_id()).await,
        ),
        &false,
    );
    eq(
        CHECK,
        "count after one use",
        &ok(CHECK, "count", adapter.count_recovery_codes(&user.id).await),
        &9,
    );
    eq(
        CHECK,
        "the other user's code is theirs",
        &ok(
            CHECK,
            "use",
            adapter.use_recovery_code(&other.id, &first[0]).await,
        ),
        &true,
    );
    let second: Vec<String> = (0..10).map(|_| random_id()).collect();
    ok(
        CHECK,
        "replace_recovery_codes again",
        adapter.replace_recovery_codes(&user.id, &second).await,
    );
    eq(
        CHECK,
        "an old code after replacing",
        &ok(
            CHECK,
            "use",
            adapter.use_recovery_code(&user.id, &first[5]).await,
        ),
        &false,
    );
    eq(
        CHECK,
        "a new code",
        &ok(
            CHECK,
            "use",
            adapter.use_recovery_code(&user.id, &second[5]).await,
        ),
        &true,
    );

    ok(
        CHECK,
        "delete_two_factor",
        adapter.delete_two_factor(&user.id).await,
    );
    none(
        CHECK,
        "get_two_factor after delete",
        adapter.get_two_factor(&user.id).await,
    );
    eq(
        CHECK,
        "codes after delete_two_factor",
        &ok(CHECK, "count", adapter.count_recovery_codes(&user.id).await),
        &0,
    );
    eq(
        CHECK,
        "the other user's codes stay",
        &ok(
            CHECK,
            "count",
            adapter.count_recovery_codes(&other.id).await,
        ),
        &1,
    );

    ok(
        CHECK,
        "set_two_factor",
        adapter
            .set_two_factor(TwoFactor {
                user_id: other.id.clone(),
                ..confirmed
            })
            .await,
    );
    ok(CHECK, "delete_user", adapter.delete_user(&other.id).await);
    none(
        CHECK,
        "get_two_factor of a deleted user",
        adapter.get_two_factor(&other.id).await,
    );
    eq(
        CHECK,
        "codes of a deleted user",
        &ok(
            CHECK,
            "count",
            adapter.count_recovery_codes(&other.id).await,
        ),
        &0,
    );
}

/// Two concurrent uses of one recovery code: exactly one succeeds.
pub async fn recovery_code_race<A: Adapter + Clone>(adapter: &A, options: &Options) {
    const CHECK: &str = "recovery_code_race";
    use AdapterMethod::*;
    if !supported(
        adapter,
        CHECK,
        &[CreateUser, ReplaceRecoveryCodes, UseRecoveryCode],
    ) {
        return;
    }
    let user = new_user(adapter, CHECK, "recovery-race").await;
    for round in 0..options.race_rounds.max(1) {
        let code = random_id();
        ok(
            CHECK,
            "replace_recovery_codes",
            adapter
                .replace_recovery_codes(&user.id, std::slice::from_ref(&code))
                .await,
        );
        let (x, y) = (adapter.clone(), adapter.clone());
        let (rx, ry) = futures_util::future::join(
            x.use_recovery_code(&user.id, &code),
            y.use_recovery_code(&user.id, &code),
        )
        .await;
        let used = [ok(CHECK, "use", rx), ok(CHECK, "use", ry)];
        if used.iter().filter(|u| **u).count() != 1 {
            fail(
                CHECK,
                format_args!("round {round}: concurrent uses answered {used:?}, expected one true"),
            );
        }
    }
}

/// Access granted to applications: grants add scopes and keep the first grant's time, get
/// answers revoked access too, the list holds the user's unrevoked access by client id,
/// revocation clears the scopes and moves the epoch on once, a grant after it starts afresh
/// in the new epoch; other users and unknown ids see nothing (authcore extension, skipped
/// when unsupported).
pub async fn app_access<A: Adapter>(adapter: &A) {
    const CHECK: &str = "app_access";
    use AdapterMethod::*;
    let mut needed = vec![CreateUser];
    needed.extend_from_slice(AdapterMethod::APP_ACCESS);
    if !supported(adapter, CHECK, &needed) {
        return;
    }
    let user = new_user(adapter, CHECK, "app-access").await;
    let other = new_user(adapter, CHECK, "app-access-other").await;
    let (a, b) = (format!("a-{}", random_id()), format!("b-{}", random_id()));
    none(
        CHECK,
        "get_app_access before any",
        adapter.get_app_access(&user.id, &a).await,
    );
    let list = ok(
        CHECK,
        "list_app_access before any",
        adapter.list_app_access(&user.id).await,
    );
    eq(CHECK, "access before any", &list, &vec![]);

    let (t0, t1, t2, t3) = (instant(-300), instant(-200), instant(-100), instant(0));
    let first = ok(
        CHECK,
        "grant_app_access",
        adapter
            .grant_app_access(&user.id, &a, "App A", &scopes(&["openid", "email"]), t0)
            .await,
    );
    let want = AppAccess {
        user_id: user.id.clone(),
        client_id: a.clone(),
        client_name: "App A".into(),
        scopes: scopes(&["email", "openid"]),
        created_at: t0,
        updated_at: t0,
        epoch: 0,
    };
    same_access(CHECK, "a first grant (scopes sorted)", &first, &want);
    let again = ok(
        CHECK,
        "grant_app_access again",
        adapter
            .grant_app_access(&user.id, &a, "App A2", &scopes(&["profile", "openid"]), t1)
            .await,
    );
    let want = AppAccess {
        client_name: "App A2".into(),
        scopes: scopes(&["email", "openid", "profile"]),
        updated_at: t1,
        ..want
    };
    same_access(
        CHECK,
        "a second grant (scopes added, name updated)",
        &again,
        &want,
    );
    let got = some(
        CHECK,
        "get_app_access",
        adapter.get_app_access(&user.id, &a).await,
    );
    same_access(CHECK, "the stored access", &got, &want);
    let got_b = ok(
        CHECK,
        "grant_app_access to another client",
        adapter
            .grant_app_access(&user.id, &b, "App B", &scopes(&["openid"]), t1)
            .await,
    );
    let list = ok(
        CHECK,
        "list_app_access",
        adapter.list_app_access(&user.id).await,
    );
    eq(
        CHECK,
        "listed clients, by client id",
        &list.iter().map(|x| x.client_id.clone()).collect::<Vec<_>>(),
        &vec![a.clone(), b.clone()],
    );
    same_access(CHECK, "the listed access", &list[0], &want);
    same_access(CHECK, "the listed access", &list[1], &got_b);
    let list = ok(
        CHECK,
        "list_app_access of another user",
        adapter.list_app_access(&other.id).await,
    );
    eq(CHECK, "another user's access", &list, &vec![]);
    none(
        CHECK,
        "get_app_access of another user",
        adapter.get_app_access(&other.id, &a).await,
    );

    let revoked = ok(
        CHECK,
        "revoke_app_access",
        adapter.revoke_app_access(&user.id, &a, t2).await,
    );
    eq(CHECK, "revoke_app_access answer", &revoked, &true);
    let got = some(
        CHECK,
        "get_app_access after revocation",
        adapter.get_app_access(&user.id, &a).await,
    );
    let want = AppAccess {
        scopes: Vec::new(),
        updated_at: t2,
        epoch: 1,
        ..want
    };
    same_access(CHECK, "revoked access", &got, &want);
    let list = ok(
        CHECK,
        "list_app_access after revocation",
        adapter.list_app_access(&user.id).await,
    );
    eq(
        CHECK,
        "listed after revocation",
        &list.iter().map(|x| x.client_id.clone()).collect::<Vec<_>>(),
        &vec![b.clone()],
    );
    let twice = ok(
        CHECK,
        "revoke_app_access again",
        adapter.revoke_app_access(&user.id, &a, t3).await,
    );
    eq(CHECK, "revoking revoked access", &twice, &false);
    let got = some(
        CHECK,
        "get_app_access after a second revocation",
        adapter.get_app_access(&user.id, &a).await,
    );
    eq(CHECK, "the epoch after a second revocation", &got.epoch, &1);
    let unknown = ok(
        CHECK,
        "revoke_app_access of an unknown client",
        adapter.revoke_app_access(&user.id, &random_id(), t3).await,
    );
    eq(CHECK, "revoking what was never granted", &unknown, &false);

    let fresh = ok(
        CHECK,
        "grant_app_access after revocation",
        adapter
            .grant_app_access(&user.id, &a, "App A", &scopes(&["openid"]), t3)
            .await,
    );
    let want = AppAccess {
        client_name: "App A".into(),
        scopes: scopes(&["openid"]),
        created_at: t3,
        updated_at: t3,
        epoch: 1,
        ..want
    };
    same_access(
        CHECK,
        "a grant after revocation (afresh, same epoch)",
        &fresh,
        &want,
    );

    for id in unknown_ids() {
        none(
            CHECK,
            "get_app_access(unknown user)",
            adapter.get_app_access(&id, &a).await,
        );
        let list = ok(
            CHECK,
            "list_app_access(unknown user)",
            adapter.list_app_access(&id).await,
        );
        eq(CHECK, "an unknown user's access", &list, &vec![]);
        let r = ok(
            CHECK,
            "revoke_app_access(unknown user)",
            adapter.revoke_app_access(&id, &a, t3).await,
        );
        eq(CHECK, "revoking an unknown user's access", &r, &false);
    }
}

/// Concurrent grants of different scopes lose none; of two concurrent revocations one
/// answers `true` and the epoch moves on once.
pub async fn app_access_race<A: Adapter + Clone>(adapter: &A, options: &Options) {
    const CHECK: &str = "app_access_race";
    use AdapterMethod::*;
    let mut needed = vec![CreateUser];
    needed.extend_from_slice(AdapterMethod::APP_ACCESS);
    if !supported(adapter, CHECK, &needed) {
        return;
    }
    let user = new_user(adapter, CHECK, "app-access-race").await;
    let client = random_id();
    for round in 0..options.race_rounds.max(1) {
        let (x, y) = (adapter.clone(), adapter.clone());
        let (sx, sy) = (scopes(&["openid"]), scopes(&["email"]));
        let (rx, ry) = futures_util::future::join(
            x.grant_app_access(&user.id, &client, "Race", &sx, instant(0)),
            y.grant_app_access(&user.id, &client, "Race", &sy, instant(0)),
        )
        .await;
        ok(CHECK, "grant", rx);
        ok(CHECK, "grant", ry);
        let got = some(
            CHECK,
            "get_app_access",
            adapter.get_app_access(&user.id, &client).await,
        );
        if got.scopes != scopes(&["email", "openid"]) {
            fail(
                CHECK,
                format_args!("round {round}: concurrent grants left {:?}", got.scopes),
            );
        }
        let (x, y) = (adapter.clone(), adapter.clone());
        let (rx, ry) = futures_util::future::join(
            x.revoke_app_access(&user.id, &client, instant(0)),
            y.revoke_app_access(&user.id, &client, instant(0)),
        )
        .await;
        let revoked = [ok(CHECK, "revoke", rx), ok(CHECK, "revoke", ry)];
        if revoked.iter().filter(|r| **r).count() != 1 {
            fail(
                CHECK,
                format_args!(
                    "round {round}: concurrent revocations answered {revoked:?}, expected one true"
                ),
            );
        }
        let after = some(
            CHECK,
            "get_app_access",
            adapter.get_app_access(&user.id, &client).await,
        );
        if after.epoch != got.epoch + 1 {
            fail(
                CHECK,
                format_args!(
                    "round {round}: the epoch went from {} to {}",
                    got.epoch, after.epoch
                ),
            );
        }
    }
}

/// `record_upstream_session` / `take_upstream_sessions`: a take answers the unexpired
/// records of one provider session (database and JWT sessions, of that provider and `sid`
/// only, expiry to the second) and removes them; a second take finds nothing.
pub async fn upstream_sessions<A: Adapter>(adapter: &A) {
    const CHECK: &str = "upstream_sessions";
    use AdapterMethod::*;
    let mut needed = vec![CreateUser];
    needed.extend_from_slice(AdapterMethod::UPSTREAM_SESSIONS);
    if !supported(adapter, CHECK, &needed) {
        return;
    }
    let (u, v) = (
        new_user(adapter, CHECK, "upstream-u").await,
        new_user(adapter, CHECK, "upstream-v").await,
    );
    let (sid, other_sid) = (random_id(), random_id());
    let record = |provider: &str, sid: &str, user: &AdapterUser, token: Option<&str>, secs| {
        UpstreamSession {
            provider: provider.to_owned(),
            sid: sid.to_owned(),
            user_id: user.id.clone(),
            session_token: token.map(str::to_owned),
            expires: instant(secs),
        }
    };
    let database = record("oidc", &sid, &u, Some(&random_id()), 3600);
    let jwt = record("oidc", &sid, &u, None, 7200);
    for r in [
        &database,
        &jwt,
        &record("oidc", &sid, &u, Some(&random_id()), -5),
        &record("oidc", &other_sid, &u, Some(&random_id()), 3600),
        &record("other", &sid, &v, Some(&random_id()), 3600),
    ] {
        ok(
            CHECK,
            "record_upstream_session",
            adapter.record_upstream_session(r).await,
        );
    }
    let now = OffsetDateTime::now_utc();
    let mut taken = ok(
        CHECK,
        "take_upstream_sessions",
        adapter.take_upstream_sessions("oidc", &sid, now).await,
    );
    taken.sort_by_key(|r| r.session_token.is_none());
    if taken.len() != 2 {
        fail(
            CHECK,
            format_args!(
                "took {} records of the sid, expected the 2 unexpired: {taken:?}",
                taken.len()
            ),
        );
    }
    for (got, want) in taken.iter().zip([&database, &jwt]) {
        if (&got.provider, &got.sid, &got.user_id, &got.session_token)
            != (
                &want.provider,
                &want.sid,
                &want.user_id,
                &want.session_token,
            )
        {
            fail(CHECK, format_args!("took {got:?}, expected {want:?}"));
        }
        same_second(CHECK, "expires", got.expires, want.expires);
    }
    let again = ok(
        CHECK,
        "take_upstream_sessions again",
        adapter.take_upstream_sessions("oidc", &sid, now).await,
    );
    if !again.is_empty() {
        fail(CHECK, format_args!("a second take found {again:?}"));
    }
    for (provider, sid, user) in [("oidc", &other_sid, &u), ("other", &sid, &v)] {
        let left = ok(
            CHECK,
            "take_upstream_sessions",
            adapter.take_upstream_sessions(provider, sid, now).await,
        );
        if left.len() != 1 || left[0].user_id != user.id {
            fail(
                CHECK,
                format_args!("another provider session's records were touched: {left:?}"),
            );
        }
    }
    let none = ok(
        CHECK,
        "take_upstream_sessions of an unknown sid",
        adapter
            .take_upstream_sessions("oidc", &random_id(), now)
            .await,
    );
    if !none.is_empty() {
        fail(CHECK, format_args!("an unknown sid gave {none:?}"));
    }
}

/// Concurrent takes of one provider session's records: each record goes to one take.
pub async fn upstream_session_race<A: Adapter + Clone>(adapter: &A, options: &Options) {
    const CHECK: &str = "upstream_session_race";
    use AdapterMethod::*;
    let mut needed = vec![CreateUser];
    needed.extend_from_slice(AdapterMethod::UPSTREAM_SESSIONS);
    if !supported(adapter, CHECK, &needed) {
        return;
    }
    let user = new_user(adapter, CHECK, "upstream-race").await;
    for round in 0..options.race_rounds.max(1) {
        let sid = random_id();
        for _ in 0..3 {
            let r = UpstreamSession {
                provider: "oidc".into(),
                sid: sid.clone(),
                user_id: user.id.clone(),
                session_token: Some(random_id()),
                expires: instant(3600),
            };
            ok(
                CHECK,
                "record_upstream_session",
                adapter.record_upstream_session(&r).await,
            );
        }
        let (x, y) = (adapter.clone(), adapter.clone());
        let now = OffsetDateTime::now_utc();
        let (rx, ry) = futures_util::future::join(
            x.take_upstream_sessions("oidc", &sid, now),
            y.take_upstream_sessions("oidc", &sid, now),
        )
        .await;
        let mut tokens: Vec<Option<String>> = ok(CHECK, "take", rx)
            .into_iter()
            .chain(ok(CHECK, "take", ry))
            .map(|r| r.session_token)
            .collect();
        let all = tokens.len();
        tokens.sort();
        tokens.dedup();
        if all != 3 || tokens.len() != 3 {
            fail(
                CHECK,
                format_args!(
                    "round {round}: concurrent takes shared out {tokens:?}, expected 3 records once each"
                ),
            );
        }
    }
}

/// Sessions: create / get_session_and_user / update_session / delete_session, expiry to the
/// second, unknown tokens give `Ok(None)`.
pub async fn sessions<A: Adapter>(adapter: &A) {
    const CHECK: &str = "sessions";
    use AdapterMethod::*;
    if !supported(
        adapter,
        CHECK,
        &[
            CreateUser,
            CreateSession,
            GetSessionAndUser,
            UpdateSession,
            DeleteSession,
        ],
    ) {
        return;
    }
    let user = new_user(adapter, CHECK, "sessions").await;
    let session = AdapterSession {
        session_token: random_id(),
        user_id: user.id.clone(),
        expires: instant(30 * 24 * 3600),
    };
    let created = ok(
        CHECK,
        "create_session",
        adapter.create_session(session.clone()).await,
    );
    same_session(CHECK, "create_session result", &created, &session);

    let (s, u) = some(
        CHECK,
        "get_session_and_user",
        adapter.get_session_and_user(&session.session_token).await,
    );
    same_session(CHECK, "get_session_and_user session", &s, &session);
    same_user(CHECK, "get_session_and_user user", &u, &user);

    // A second session of the same user is independent.
    let second = AdapterSession {
        session_token: random_id(),
        user_id: user.id.clone(),
        expires: instant(3600),
    };
    ok(
        CHECK,
        "create_session(second)",
        adapter.create_session(second.clone()).await,
    );

    let later = instant(60 * 24 * 3600);
    let updated = some(
        CHECK,
        "update_session",
        adapter.update_session(&session.session_token, later).await,
    );
    let mut want = session.clone();
    want.expires = later;
    same_session(CHECK, "update_session result", &updated, &want);
    let (s, _) = some(
        CHECK,
        "get_session_and_user after update",
        adapter.get_session_and_user(&session.session_token).await,
    );
    same_session(CHECK, "session after update_session", &s, &want);
    let (s, _) = some(
        CHECK,
        "get_session_and_user(second)",
        adapter.get_session_and_user(&second.session_token).await,
    );
    same_session(
        CHECK,
        "second session after updating the first",
        &s,
        &second,
    );

    // Sessions see user updates.
    if adapter.supports(UpdateUser) {
        let up = UserUpdate {
            id: user.id.clone(),
            name: Some(Some("Renamed".to_owned())),
            ..UserUpdate::default()
        };
        some(CHECK, "update_user", adapter.update_user(up).await);
        let (_, u) = some(
            CHECK,
            "get_session_and_user after update_user",
            adapter.get_session_and_user(&session.session_token).await,
        );
        eq(
            CHECK,
            "session user name after update_user",
            &u.name,
            &Some("Renamed".to_owned()),
        );
    }

    let deleted = some(
        CHECK,
        "delete_session",
        adapter.delete_session(&session.session_token).await,
    );
    same_session(CHECK, "delete_session result", &deleted, &want);
    none(
        CHECK,
        "second delete_session",
        adapter.delete_session(&session.session_token).await,
    );
    none(
        CHECK,
        "get_session_and_user after delete",
        adapter.get_session_and_user(&session.session_token).await,
    );
    none(
        CHECK,
        "update_session after delete",
        adapter.update_session(&session.session_token, later).await,
    );
    some(
        CHECK,
        "get_session_and_user(second) after deleting the first",
        adapter.get_session_and_user(&second.session_token).await,
    );

    let unknown = random_id();
    none(
        CHECK,
        "get_session_and_user(unknown)",
        adapter.get_session_and_user(&unknown).await,
    );
    none(
        CHECK,
        "update_session(unknown)",
        adapter.update_session(&unknown, later).await,
    );
    none(
        CHECK,
        "delete_session(unknown)",
        adapter.delete_session(&unknown).await,
    );
}

/// Verification tokens: used exactly once, matched on (identifier, token).
pub async fn verification_tokens<A: Adapter>(adapter: &A) {
    const CHECK: &str = "verification_tokens";
    use AdapterMethod::*;
    if !supported(
        adapter,
        CHECK,
        &[CreateVerificationToken, UseVerificationToken],
    ) {
        return;
    }
    let identifier = unique_email("vt");
    let token = VerificationToken {
        identifier: identifier.clone(),
        token: format!("{}{}", random_id(), random_id()),
        expires: instant(24 * 3600),
    };
    ok(
        CHECK,
        "create_verification_token",
        adapter.create_verification_token(token.clone()).await,
    );
    // A second token for the same identifier is independent.
    let other = VerificationToken {
        identifier: identifier.clone(),
        token: format!("{}{}", random_id(), random_id()),
        expires: instant(600),
    };
    ok(
        CHECK,
        "create_verification_token(second)",
        adapter.create_verification_token(other.clone()).await,
    );

    none(
        CHECK,
        "use_verification_token(other identifier, right token)",
        adapter
            .use_verification_token(&unique_email("vt-wrong"), &token.token)
            .await,
    );
    none(
        CHECK,
        "use_verification_token(right identifier, unknown token)",
        adapter
            .use_verification_token(&identifier, &random_id())
            .await,
    );

    let used = some(
        CHECK,
        "use_verification_token",
        adapter
            .use_verification_token(&identifier, &token.token)
            .await,
    );
    same_token(CHECK, "use_verification_token result", &used, &token);
    none(
        CHECK,
        "second use_verification_token",
        adapter
            .use_verification_token(&identifier, &token.token)
            .await,
    );

    let used = some(
        CHECK,
        "use_verification_token(second token)",
        adapter
            .use_verification_token(&identifier, &other.token)
            .await,
    );
    same_token(
        CHECK,
        "use_verification_token(second token) result",
        &used,
        &other,
    );
}

/// Two concurrent use_verification_token of the same token: exactly one gets it.
pub async fn verification_token_race<A: Adapter + Clone>(adapter: &A, options: &Options) {
    const CHECK: &str = "verification_token_race";
    use AdapterMethod::*;
    if !supported(
        adapter,
        CHECK,
        &[CreateVerificationToken, UseVerificationToken],
    ) {
        return;
    }
    for round in 0..options.race_rounds.max(1) {
        let token = VerificationToken {
            identifier: unique_email("vt-race"),
            token: random_id(),
            expires: instant(600),
        };
        ok(
            CHECK,
            "create_verification_token",
            adapter.create_verification_token(token.clone()).await,
        );
        let (x, y) = (adapter.clone(), adapter.clone());
        let (rx, ry) = futures_util::future::join(
            x.use_verification_token(&token.identifier, &token.token),
            y.use_verification_token(&token.identifier, &token.token),
        )
        .await;
        let rx = ok(CHECK, "racing use_verification_token", rx);
        let ry = ok(CHECK, "racing use_verification_token", ry);
        match (rx, ry) {
            (Some(t), None) | (None, Some(t)) => {
                same_token(CHECK, "racing use_verification_token result", &t, &token)
            }
            (x, y) => fail(
                CHECK,
                format_args!(
                    "round {round}: two concurrent uses returned {x:?} and {y:?}, expected exactly one Some"
                ),
            ),
        }
    }
}

/// Authenticators: create / get / list (sorted by credential id) / update counter;
/// a duplicate credential id is a Conflict.
pub async fn authenticators<A: Adapter>(adapter: &A) {
    const CHECK: &str = "authenticators";
    use AdapterMethod::*;
    if !supported(
        adapter,
        CHECK,
        &[
            CreateUser,
            CreateAuthenticator,
            GetAuthenticator,
            ListAuthenticatorsByUserId,
            UpdateAuthenticatorCounter,
        ],
    ) {
        return;
    }
    let user = new_user(adapter, CHECK, "authn").await;
    let other = new_user(adapter, CHECK, "authn-other").await;
    let pa_id = random_id();
    if adapter.supports(LinkAccount) {
        let mut acc = Account::new(ProviderType::Webauthn, "passkey", pa_id.clone());
        acc.user_id = Some(user.id.clone());
        ok(
            CHECK,
            "link_account(webauthn)",
            adapter.link_account(acc).await,
        );
    }

    // Byte order (what Rust and `COLLATE "C"` sort by) differs from case-insensitive order
    // here: "A…" < "Z…" < "b…".
    let stem = random_id();
    let mut z = authenticator(&user.id, &pa_id, format!("Z{stem}+/w=="));
    z.counter = u64::from(u32::MAX);
    z.credential_backed_up = true;
    z.credential_device_type = "multiDevice".to_owned();
    let mut b = authenticator(&user.id, &pa_id, format!("b{stem}"));
    b.transports = None;
    let a = authenticator(&user.id, &pa_id, format!("A{stem}"));
    for x in [&z, &b, &a] {
        let created = ok(
            CHECK,
            "create_authenticator",
            adapter.create_authenticator(x.clone()).await,
        );
        eq(CHECK, "create_authenticator result", &created, x);
    }
    let foreign = authenticator(&other.id, &random_id(), format!("B{stem}"));
    ok(
        CHECK,
        "create_authenticator(other user)",
        adapter.create_authenticator(foreign.clone()).await,
    );

    for x in [&z, &b, &a, &foreign] {
        let got = some(
            CHECK,
            "get_authenticator",
            adapter.get_authenticator(&x.credential_id).await,
        );
        eq(CHECK, "get_authenticator round trip", &got, x);
    }
    none(
        CHECK,
        "get_authenticator(unknown)",
        adapter.get_authenticator(&random_id()).await,
    );
    none(
        CHECK,
        "get_authenticator(other case)",
        adapter
            .get_authenticator(&a.credential_id.to_lowercase())
            .await,
    );

    let list = ok(
        CHECK,
        "list_authenticators_by_user_id",
        adapter.list_authenticators_by_user_id(&user.id).await,
    );
    eq(
        CHECK,
        "list_authenticators_by_user_id (sorted by credential id, bytewise)",
        &list,
        &vec![a.clone(), z.clone(), b.clone()],
    );
    for id in unknown_ids() {
        let list = ok(
            CHECK,
            "list_authenticators_by_user_id(unknown)",
            adapter.list_authenticators_by_user_id(&id).await,
        );
        eq(
            CHECK,
            "list_authenticators_by_user_id(unknown user)",
            &list,
            &vec![],
        );
    }

    let updated = some(
        CHECK,
        "update_authenticator_counter",
        adapter
            .update_authenticator_counter(&b.credential_id, 42)
            .await,
    );
    let mut want_b = b.clone();
    want_b.counter = 42;
    eq(
        CHECK,
        "update_authenticator_counter result",
        &updated,
        &want_b,
    );
    let got = some(
        CHECK,
        "get_authenticator after counter update",
        adapter.get_authenticator(&b.credential_id).await,
    );
    eq(CHECK, "authenticator after counter update", &got, &want_b);
    let got = some(
        CHECK,
        "get_authenticator(untouched)",
        adapter.get_authenticator(&a.credential_id).await,
    );
    eq(CHECK, "other authenticator after counter update", &got, &a);
    none(
        CHECK,
        "update_authenticator_counter(unknown)",
        adapter.update_authenticator_counter(&random_id(), 1).await,
    );

    let mut dup = authenticator(&other.id, &random_id(), a.credential_id.clone());
    dup.counter = 7;
    expect_conflict(
        CHECK,
        "create_authenticator with an existing credential id",
        adapter.create_authenticator(dup).await,
    );
    let got = some(
        CHECK,
        "get_authenticator after conflict",
        adapter.get_authenticator(&a.credential_id).await,
    );
    eq(CHECK, "authenticator after conflicting create", &got, &a);
}

/// `delete_user` also deletes the unused verification tokens of the user's email, and no
/// one else's.
pub async fn delete_user_tokens<A: Adapter>(adapter: &A) {
    const CHECK: &str = "delete_user_tokens";
    use AdapterMethod::*;
    if !supported(
        adapter,
        CHECK,
        &[
            CreateUser,
            DeleteUser,
            CreateVerificationToken,
            UseVerificationToken,
        ],
    ) {
        return;
    }
    let victim = new_user(adapter, CHECK, "delete-tokens").await;
    let bystander = new_user(adapter, CHECK, "delete-tokens-bystander").await;
    let token = |u: &AdapterUser| VerificationToken {
        identifier: u.email.clone().unwrap_or_default(),
        token: random_id(),
        expires: instant(3600),
    };
    let (gone, kept) = (token(&victim), token(&bystander));
    for t in [&gone, &kept] {
        ok(
            CHECK,
            "create_verification_token",
            adapter.create_verification_token(t.clone()).await,
        );
    }
    ok(CHECK, "delete_user", adapter.delete_user(&victim.id).await);
    none(
        CHECK,
        "use_verification_token of the deleted user's address",
        adapter
            .use_verification_token(&gone.identifier, &gone.token)
            .await,
    );
    some(
        CHECK,
        "use_verification_token of another address",
        adapter
            .use_verification_token(&kept.identifier, &kept.token)
            .await,
    );
}

/// `record_session_sign_in` records how the user of a session signed in (methods in order,
/// and the time), `get_session_sign_in` reads it back, a second record replaces the first;
/// nothing for a session without one or an unknown token; deleting the session (alone, or
/// with its user) deletes it. Authcore extensions, skipped when unsupported.
pub async fn session_sign_in<A: Adapter>(adapter: &A) {
    const CHECK: &str = "session_sign_in";
    use AdapterMethod::*;
    if !supported(
        adapter,
        CHECK,
        &[
            CreateUser,
            CreateSession,
            DeleteSession,
            DeleteUser,
            RecordSessionSignIn,
            GetSessionSignIn,
        ],
    ) {
        return;
    }
    let user = new_user(adapter, CHECK, "session-sign-in").await;
    let session = || AdapterSession {
        session_token: random_id(),
        user_id: user.id.clone(),
        expires: instant(3600),
    };
    let [signed, bare, gone] = [session(), session(), session()];
    for s in [&signed, &bare, &gone] {
        ok(
            CHECK,
            "create_session",
            adapter.create_session(s.clone()).await,
        );
    }
    let at = instant(-30).unix_timestamp();
    let password = SignInInfo::new(vec!["pwd".into()], Some(at));
    let two = SignInInfo::new(
        vec!["pwd".into(), "otp".into(), "mfa".into()],
        Some(at + 20),
    );
    for (token, sign_in) in [
        (&signed.session_token, &password),
        (&signed.session_token, &two),
        (&gone.session_token, &password),
    ] {
        ok(
            CHECK,
            "record_session_sign_in",
            adapter.record_session_sign_in(token, sign_in).await,
        );
    }
    let read = some(
        CHECK,
        "get_session_sign_in after two records",
        adapter.get_session_sign_in(&signed.session_token).await,
    );
    eq(CHECK, "the last record, methods in order", &read, &two);
    none(
        CHECK,
        "get_session_sign_in of a session without one",
        adapter.get_session_sign_in(&bare.session_token).await,
    );
    let unknown = random_id();
    ok(
        CHECK,
        "record_session_sign_in of an unknown token",
        adapter.record_session_sign_in(&unknown, &password).await,
    );
    none(
        CHECK,
        "get_session_sign_in of an unknown token",
        adapter.get_session_sign_in(&unknown).await,
    );
    ok(
        CHECK,
        "delete_session",
        adapter.delete_session(&gone.session_token).await,
    );
    none(
        CHECK,
        "get_session_sign_in of a deleted session",
        adapter.get_session_sign_in(&gone.session_token).await,
    );
    ok(CHECK, "delete_user", adapter.delete_user(&user.id).await);
    none(
        CHECK,
        "get_session_sign_in after delete_user",
        adapter.get_session_sign_in(&signed.session_token).await,
    );
}

/// `record_session_activity` records a session's first and last use and user agent,
/// `list_sessions_by_user_id` lists them (the user's only), `delete_sessions_by_user_id`
/// deletes the user's sessions but the one kept; authcore extensions, skipped when
/// unsupported.
pub async fn session_activity<A: Adapter>(adapter: &A) {
    const CHECK: &str = "session_activity";
    use AdapterMethod::*;
    if !supported(
        adapter,
        CHECK,
        &[
            CreateUser,
            CreateSession,
            GetSessionAndUser,
            ListSessionsByUserId,
            RecordSessionActivity,
            DeleteSessionsByUserId,
        ],
    ) {
        return;
    }
    let user = new_user(adapter, CHECK, "session-activity").await;
    let other = new_user(adapter, CHECK, "session-activity-other").await;
    let session = |u: &AdapterUser| AdapterSession {
        session_token: random_id(),
        user_id: u.id.clone(),
        expires: instant(3600),
    };
    let mut mine = [session(&user), session(&user)];
    mine.sort_by(|a, b| a.session_token.cmp(&b.session_token));
    let theirs = session(&other);
    for s in mine.iter().chain([&theirs]) {
        ok(
            CHECK,
            "create_session",
            adapter.create_session(s.clone()).await,
        );
    }
    let (first, later) = (instant(-60), instant(0));
    let token = &mine[0].session_token;
    ok(
        CHECK,
        "record_session_activity",
        adapter
            .record_session_activity(token, first, Some("Agent/1"))
            .await,
    );
    ok(
        CHECK,
        "record_session_activity again",
        adapter.record_session_activity(token, later, None).await,
    );
    let listed = ok(
        CHECK,
        "list_sessions_by_user_id",
        adapter.list_sessions_by_user_id(&user.id).await,
    );
    let want = vec![
        SessionActivity {
            session: mine[0].clone(),
            created_at: Some(first),
            last_seen_at: Some(later),
            user_agent: Some("Agent/1".to_owned()),
        },
        SessionActivity {
            session: mine[1].clone(),
            created_at: None,
            last_seen_at: None,
            user_agent: None,
        },
    ];
    eq(
        CHECK,
        "the user's sessions with their activity",
        &listed,
        &want,
    );
    let deleted = ok(
        CHECK,
        "delete_sessions_by_user_id (keeping one)",
        adapter
            .delete_sessions_by_user_id(&user.id, Some(token))
            .await,
    );
    eq(CHECK, "sessions deleted but the one kept", &deleted, &1);
    some(
        CHECK,
        "the kept session",
        adapter.get_session_and_user(token).await,
    );
    none(
        CHECK,
        "a deleted session",
        adapter.get_session_and_user(&mine[1].session_token).await,
    );
    some(
        CHECK,
        "another user's session",
        adapter.get_session_and_user(&theirs.session_token).await,
    );
    let deleted = ok(
        CHECK,
        "delete_sessions_by_user_id (all)",
        adapter.delete_sessions_by_user_id(&user.id, None).await,
    );
    eq(CHECK, "the last session deleted", &deleted, &1);
    let listed = ok(
        CHECK,
        "list_sessions_by_user_id",
        adapter.list_sessions_by_user_id(&user.id).await,
    );
    eq(CHECK, "no sessions left", &listed, &Vec::new());
}

/// `revoke_jwt_sessions` stores one revocation per user (a later one replaces it) that
/// `get_jwt_revocation` reads back; other users have none; an authcore extension, skipped
/// when unsupported.
pub async fn jwt_revocation<A: Adapter>(adapter: &A) {
    const CHECK: &str = "jwt_revocation";
    use AdapterMethod::*;
    if !supported(
        adapter,
        CHECK,
        &[CreateUser, RevokeJwtSessions, GetJwtRevocation],
    ) {
        return;
    }
    let user = new_user(adapter, CHECK, "jwt-revocation").await;
    let other = new_user(adapter, CHECK, "jwt-revocation-other").await;
    none(
        CHECK,
        "get_jwt_revocation before any",
        adapter.get_jwt_revocation(&user.id).await,
    );
    let (first, second) = (instant(-60), instant(0));
    ok(
        CHECK,
        "revoke_jwt_sessions",
        adapter
            .revoke_jwt_sessions(&user.id, first, Some("sid-1"))
            .await,
    );
    ok(
        CHECK,
        "revoke_jwt_sessions again",
        adapter.revoke_jwt_sessions(&user.id, second, None).await,
    );
    let got = some(
        CHECK,
        "get_jwt_revocation",
        adapter.get_jwt_revocation(&user.id).await,
    );
    eq(
        CHECK,
        "the latest revocation",
        &got,
        &JwtRevocation {
            before: second,
            keep: None,
        },
    );
    ok(
        CHECK,
        "revoke_jwt_sessions keeping one",
        adapter
            .revoke_jwt_sessions(&user.id, first, Some("sid-2"))
            .await,
    );
    let got = some(
        CHECK,
        "get_jwt_revocation",
        adapter.get_jwt_revocation(&user.id).await,
    );
    eq(
        CHECK,
        "a revocation keeping a session",
        &got,
        &JwtRevocation {
            before: first,
            keep: Some("sid-2".to_owned()),
        },
    );
    none(
        CHECK,
        "another user's revocation",
        adapter.get_jwt_revocation(&other.id).await,
    );
}

/// `rename_authenticator` names a passkey (and clears the name), `delete_authenticator`
/// removes one (from `get_authenticator` and the user's list); both report whether it
/// existed; authcore extensions, skipped when unsupported.
pub async fn authenticator_deletion<A: Adapter>(adapter: &A) {
    const CHECK: &str = "authenticator_deletion";
    use AdapterMethod::*;
    if !supported(
        adapter,
        CHECK,
        &[
            CreateUser,
            CreateAuthenticator,
            GetAuthenticator,
            ListAuthenticatorsByUserId,
            DeleteAuthenticator,
        ],
    ) {
        return;
    }
    let user = new_user(adapter, CHECK, "authenticator-deletion").await;
    let (gone, kept) = (random_id(), random_id());
    for id in [&gone, &kept] {
        ok(
            CHECK,
            "create_authenticator",
            adapter
                .create_authenticator(authenticator(&user.id, id, id.clone()))
                .await,
        );
    }
    let deleted = ok(
        CHECK,
        "delete_authenticator",
        adapter.delete_authenticator(&gone).await,
    );
    eq(
        CHECK,
        "delete_authenticator of a stored one",
        &deleted,
        &true,
    );
    none(
        CHECK,
        "get_authenticator(deleted)",
        adapter.get_authenticator(&gone).await,
    );
    let left: Vec<String> = ok(
        CHECK,
        "list_authenticators_by_user_id",
        adapter.list_authenticators_by_user_id(&user.id).await,
    )
    .into_iter()
    .map(|a| a.credential_id)
    .collect();
    eq(
        CHECK,
        "the user's authenticators after a deletion",
        &left,
        &vec![kept],
    );
    let again = ok(
        CHECK,
        "delete_authenticator again",
        adapter.delete_authenticator(&gone).await,
    );
    eq(
        CHECK,
        "delete_authenticator of an unknown one",
        &again,
        &false,
    );
}

/// delete_user removes the user with its accounts, sessions and authenticators, and
/// nothing of another user.
pub async fn delete_user<A: Adapter>(adapter: &A) {
    const CHECK: &str = "delete_user";
    use AdapterMethod::*;
    if !supported(adapter, CHECK, &[CreateUser, GetUser, DeleteUser]) {
        return;
    }
    let victim = new_user(adapter, CHECK, "delete").await;
    let bystander = new_user(adapter, CHECK, "delete-bystander").await;

    let has_accounts = adapter.supports(LinkAccount) && adapter.supports(GetUserByAccount);
    let has_sessions = adapter.supports(CreateSession) && adapter.supports(GetSessionAndUser);
    let has_authenticators = adapter.supports(CreateAuthenticator)
        && adapter.supports(GetAuthenticator)
        && adapter.supports(ListAuthenticatorsByUserId);
    let has_app_access = AdapterMethod::APP_ACCESS
        .iter()
        .all(|m| adapter.supports(*m));

    let mut accounts = Vec::new();
    let mut sessions = Vec::new();
    let mut authns = Vec::new();
    for u in [&victim, &bystander] {
        let acc = full_account(&u.id, ProviderType::Oauth, "github");
        let session = AdapterSession {
            session_token: random_id(),
            user_id: u.id.clone(),
            expires: instant(3600),
        };
        let authn = authenticator(&u.id, &acc.provider_account_id, random_id());
        if has_accounts {
            ok(
                CHECK,
                "link_account",
                adapter.link_account(acc.clone()).await,
            );
        }
        if has_sessions {
            ok(
                CHECK,
                "create_session",
                adapter.create_session(session.clone()).await,
            );
        }
        if has_authenticators {
            ok(
                CHECK,
                "create_authenticator",
                adapter.create_authenticator(authn.clone()).await,
            );
        }
        if has_app_access {
            ok(
                CHECK,
                "grant_app_access",
                adapter
                    .grant_app_access(&u.id, "app", "App", &scopes(&["openid"]), instant(0))
                    .await,
            );
        }
        accounts.push(acc);
        sessions.push(session);
        authns.push(authn);
    }

    ok(CHECK, "delete_user", adapter.delete_user(&victim.id).await);
    none(
        CHECK,
        "get_user after delete_user",
        adapter.get_user(&victim.id).await,
    );
    if adapter.supports(GetUserByEmail) {
        let email = victim.email.clone().unwrap_or_default();
        none(
            CHECK,
            "get_user_by_email after delete_user",
            adapter.get_user_by_email(&email).await,
        );
    }
    if has_accounts {
        none(
            CHECK,
            "get_user_by_account after delete_user",
            adapter
                .get_user_by_account(&accounts[0].provider, &accounts[0].provider_account_id)
                .await,
        );
        if adapter.supports(GetAccount) {
            none(
                CHECK,
                "get_account after delete_user",
                adapter
                    .get_account(&accounts[0].provider_account_id, &accounts[0].provider)
                    .await,
            );
        }
        some(
            CHECK,
            "get_user_by_account(other user) after delete_user",
            adapter
                .get_user_by_account(&accounts[1].provider, &accounts[1].provider_account_id)
                .await,
        );
    }
    if has_sessions {
        none(
            CHECK,
            "get_session_and_user after delete_user",
            adapter
                .get_session_and_user(&sessions[0].session_token)
                .await,
        );
        some(
            CHECK,
            "get_session_and_user(other user) after delete_user",
            adapter
                .get_session_and_user(&sessions[1].session_token)
                .await,
        );
        if adapter.supports(DeleteSession) {
            none(
                CHECK,
                "delete_session of a deleted user's session",
                adapter.delete_session(&sessions[0].session_token).await,
            );
        }
    }
    if has_authenticators {
        none(
            CHECK,
            "get_authenticator after delete_user",
            adapter.get_authenticator(&authns[0].credential_id).await,
        );
        let list = ok(
            CHECK,
            "list_authenticators_by_user_id after delete_user",
            adapter.list_authenticators_by_user_id(&victim.id).await,
        );
        eq(CHECK, "authenticators of a deleted user", &list, &vec![]);
        some(
            CHECK,
            "get_authenticator(other user) after delete_user",
            adapter.get_authenticator(&authns[1].credential_id).await,
        );
    }
    if has_app_access {
        none(
            CHECK,
            "get_app_access after delete_user",
            adapter.get_app_access(&victim.id, "app").await,
        );
        some(
            CHECK,
            "get_app_access(other user) after delete_user",
            adapter.get_app_access(&bystander.id, "app").await,
        );
    }
    some(
        CHECK,
        "get_user(other user) after delete_user",
        adapter.get_user(&bystander.id).await,
    );

    // Deleting an unknown user is not an error.
    for id in unknown_ids() {
        ok(
            CHECK,
            "delete_user(unknown id)",
            adapter.delete_user(&id).await,
        );
    }
    ok(
        CHECK,
        "delete_user(already deleted)",
        adapter.delete_user(&victim.id).await,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::MemoryAdapter;

    #[tokio::test]
    async fn memory_adapter_passes_conformance() {
        run_all(MemoryAdapter::new()).await;
    }

    /// An adapter that supports nothing: every check must skip, none may call it.
    #[derive(Clone)]
    struct Nothing;

    #[async_trait::async_trait]
    impl Adapter for Nothing {
        fn supports(&self, _: AdapterMethod) -> bool {
            false
        }
    }

    #[tokio::test]
    async fn unsupported_methods_are_skipped() {
        run_all(Nothing).await;
    }

    /// An adapter that keeps the default `supports` (everything) but implements nothing:
    /// the suite must refuse it at its first check.
    #[derive(Clone)]
    struct ClaimsEverything;

    #[async_trait::async_trait]
    impl Adapter for ClaimsEverything {}

    #[tokio::test]
    #[should_panic(
        expected = "'supports_agrees_with_methods' failed: supports(createUser) is true"
    )]
    async fn a_claimed_but_missing_method_fails_the_suite() {
        run_all(ClaimsEverything).await;
    }

    /// The reverse: a method implemented but reported unsupported.
    #[derive(Clone, Default)]
    struct Understates(MemoryAdapter);

    #[async_trait::async_trait]
    impl Adapter for Understates {
        fn supports(&self, _: AdapterMethod) -> bool {
            false
        }
        async fn get_user(&self, id: &str) -> Result<Option<AdapterUser>, AdapterError> {
            self.0.get_user(id).await
        }
    }

    #[tokio::test]
    #[should_panic(
        expected = "supports(getUser) is false but the method did not answer Unsupported"
    )]
    async fn an_understated_method_fails_the_suite() {
        run_all(Understates::default()).await;
    }

    /// An adapter whose tokens can be used twice must fail the suite, naming the check.
    #[derive(Clone, Default)]
    struct ReusableTokens(MemoryAdapter);

    #[async_trait::async_trait]
    impl Adapter for ReusableTokens {
        fn supports(&self, m: AdapterMethod) -> bool {
            matches!(
                m,
                AdapterMethod::CreateVerificationToken | AdapterMethod::UseVerificationToken
            )
        }
        async fn create_verification_token(
            &self,
            token: VerificationToken,
        ) -> Result<(), AdapterError> {
            self.0.create_verification_token(token).await
        }
        async fn use_verification_token(
            &self,
            identifier: &str,
            token: &str,
        ) -> Result<Option<VerificationToken>, AdapterError> {
            let t = self.0.use_verification_token(identifier, token).await?;
            if let Some(t) = &t {
                self.0.create_verification_token(t.clone()).await?;
            }
            Ok(t)
        }
    }

    #[tokio::test]
    #[should_panic(expected = "adapter conformance check 'verification_tokens' failed")]
    async fn a_reusable_token_fails() {
        run_all(ReusableTokens::default()).await;
    }
}
