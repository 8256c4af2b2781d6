//! The conformance suites every authcore storage backend must pass: one per capability of
//! [`Adapter`] ([`core`] for the calls of Auth.js `adapters.ts`, [`two_factor`],
//! [`app_access`] …), and [`run_all`] for all of them; and [`guards`], the suite of the
//! route guards every framework integration passes.
//!
//! A backend crate adds `authcore-conformance` to its dev-dependencies and runs:
//!
//! ```ignore
//! #[tokio::test]
//! async fn conformance() {
//!     let adapter = MyAdapter::connect("…").await.unwrap();
//!     authcore_conformance::run_all(adapter).await;
//! }
//! ```
//!
//! Every check panics with `adapter conformance check '<name>' failed: …` on the first
//! failure. Checks use fresh random emails, ids, tokens and credential ids, so a database
//! shared between runs (or between parallel runs) can be reused; the audit log's checks
//! chain their records after whatever the log holds. [`admin::audit_prune`] is the one
//! check left out of [`run_all`]: it deletes audit records, so it runs on a store of its
//! own, called by itself. [`app_access::user_read_with_marks`] is left out too: it needs the
//! backend's rate-limit store as well, and a backend whose rate-limit store names its
//! database (`RateLimitStore::database`) calls it with both. The checks of a
//! capability the adapter does not have (its field of [`Adapter::capabilities`], such as
//! `two_factor`, is `None`) are skipped, and say so on stderr.
//!
//! Backends that do not store arbitrary extra account fields (the SQL schema of
//! `@auth/pg-adapter` has fixed columns) run [`run_all_with`] with
//! [`Options::account_extras`] `= false`: the extra fields must then come back dropped,
//! never garbled.

pub mod admin;
pub mod app_access;
pub mod core;
pub mod guards;
pub mod jwt_revocation;
pub mod linked_accounts;
pub mod oidc_clients;
pub mod organizations;
pub mod passkeys;
pub mod passwords;
pub mod rate_limit;
pub mod session_activity;
pub mod session_sign_in;
pub mod two_factor;
pub mod upstream_sessions;
pub mod user_groups;

use std::fmt::Debug;

use serde_json::json;
use time::{Duration, OffsetDateTime};

use authcore::adapter::{
    Adapter, AdapterError, AdapterSession, AdapterUser, AppAccess, AppAccessStore, JwtRevocation,
    NewUser, SessionActivity, TwoFactor, UpstreamSession, UserUpdate, VerificationToken,
};
use authcore::types::{Account, Authenticator, JsonObject, ProviderType, SignInInfo};

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
    core::run(&adapter, &options).await;
    linked_accounts::run(&adapter, &options).await;
    passkeys::run(&adapter).await;
    session_activity::run(&adapter).await;
    session_sign_in::run(&adapter).await;
    jwt_revocation::run(&adapter).await;
    two_factor::run(&adapter, &options).await;
    app_access::run(&adapter, &options).await;
    upstream_sessions::run(&adapter, &options).await;
    passwords::run(&adapter, &options).await;
    user_groups::run(&adapter, &options).await;
    organizations::run(&adapter, &options).await;
    admin::run(&adapter, &options).await;
    oidc_clients::run(&adapter).await;
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

/// `capability` (what an accessor of the adapter answered); `None`, with a skip of check
/// `check` reported, when the adapter lacks it (`name`, its trait).
fn capability<'a, T: ?Sized>(capability: Option<&'a T>, check: &str, name: &str) -> Option<&'a T> {
    if capability.is_none() {
        eprintln!("adapter conformance check '{check}' skipped: the adapter has no {name}");
    }
    capability
}

fn random_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

fn unique_email(tag: &str) -> String {
    format!("{tag}-{}@conformance.example", random_id())
}

/// Ids no backend has assigned: a UUID and a large number (for serial ids).
fn unknown_ids() -> [String; 2] {
    [uuid::Uuid::new_v4().to_string(), "2147480000".to_owned()]
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

/// Asserts an error of any kind (backends report a write for a missing user as a conflict
/// or as a backend error, e.g. a foreign key's).
#[track_caller]
fn expect_error<T: Debug>(check: &str, what: &str, r: Result<T, AdapterError>) {
    if let Ok(v) = r {
        fail(
            check,
            format_args!("{what}: got Ok({v:?}), expected an error"),
        )
    }
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
