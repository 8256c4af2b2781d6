//! Password accounts' self-service (beyond Auth.js, which has no password accounts): the
//! routes under `<basePath>/password/` of a config with
//! [`password_accounts`](crate::AuthConfigBuilder::password_accounts), each a page for a
//! browser's form post and a JSON answer for a request that sends JSON:
//!
//! | route | body | answer |
//! |---|---|---|
//! | `GET /password/signup` | — | the sign-up page (when sign-up is allowed) |
//! | `POST /password/signup` | `csrfToken, email, password[, name]` | `{"status":"sent"}` (`"created"` without address confirmation) |
//! | `GET /password/forgot` | — | the forgotten-password page |
//! | `POST /password/forgot` | `csrfToken, email` | `{"status":"sent"}` |
//! | `GET /password/reset?token&user` | — | the new-password page |
//! | `POST /password/reset` | `csrfToken, token, user, password` | `{"status":"reset"}`; every session of the user ends |
//! | `GET /password/verify?token&user` | — | the address is confirmed: `{"status":"verified"}` |
//! | `GET /password/confirm-email?token&user&email` | — | the new address is the account's: `{"status":"emailChanged"}` |
//!
//! No answer tells whether an address has an account: a sign-up with a known address and a
//! reset for an unknown one answer as the others do, and mail the address instead (that it
//! has an account already; that it has none), so that each answer costs one password hash
//! and one mail either way. Links are single use (the adapter's verification tokens, under
//! identifiers of their own, hashed with the secret), a reset link lives 30 minutes, the
//! others a day. Errors: `400 InvalidRequest` (a malformed address), `400 PasswordPolicy`
//! with `code` (a [`PolicyViolation`]), `400 Verification` (a link that is unknown, used,
//! expired or another user's), `403 MissingCSRF`, `403 SignUpClosed`, `409 AccountExists` (only where accounts need no
//! address confirmation), `429 RateLimited`.

use http::StatusCode;
use serde_json::json;
use time::{Duration, OffsetDateTime};

use super::Ctx;
use super::account::{AccountError, CurrentSession};
use super::limits::Limit;
use super::mail_link::{MailFailure, mail};
use super::notify::{Recipient, SecurityChange};
use super::pages::PasswordForm as Form;
use super::sensitive::{SensitiveOperation, require_recent_sign_in};
use crate::adapter::{Adapter, AdapterError, NewUser, UserUpdate, VerificationToken};
use crate::config::ConfigInner;
use crate::email_address::normalize_email;
use crate::error::AuthError;
use crate::passwords::{PasswordAccounts, PolicyViolation, SourceError};
use crate::providers::email::LinkPurpose;
use crate::response::RawResponse;

/// A single-use link of password accounts, stored as a verification token under
/// `<kind>:<user id>[:<new address>]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LinkKind {
    /// Confirms a new account's address.
    Verify,
    /// Resets a forgotten password.
    Reset,
    /// Makes a new address the account's.
    ChangeEmail,
    /// Sets the first password of an account an administrator made (the reset page's
    /// form; it lives as long as [`Admins::setup_link_lifetime`](crate::admin::Admins::setup_link_lifetime) says).
    Setup,
}

impl LinkKind {
    fn name(self) -> &'static str {
        match self {
            LinkKind::Verify => "verify-email",
            LinkKind::Reset => "password-reset",
            LinkKind::ChangeEmail => "email-change",
            LinkKind::Setup => "account-setup",
        }
    }

    /// How long a link lives (a set-up link: as the administrators' settings say).
    fn lifetime(self, c: &ConfigInner) -> Duration {
        match self {
            LinkKind::Reset => Duration::minutes(30),
            LinkKind::Verify | LinkKind::ChangeEmail => Duration::days(1),
            LinkKind::Setup => c
                .admins
                .as_ref()
                .map_or(crate::admin::DEFAULT_SETUP_LINK_LIFETIME, |a| {
                    a.setup_link_lifetime
                })
                .try_into()
                .unwrap_or(Duration::days(3)),
        }
    }

    fn purpose(self) -> LinkPurpose {
        match self {
            LinkKind::Verify => LinkPurpose::VerifyAddress,
            LinkKind::Reset => LinkPurpose::ResetPassword,
            LinkKind::ChangeEmail => LinkPurpose::ConfirmNewAddress,
            LinkKind::Setup => LinkPurpose::AccountSetup,
        }
    }

    /// The route the link opens.
    fn route(self) -> &'static str {
        match self {
            LinkKind::Verify => "/password/verify",
            LinkKind::Reset | LinkKind::Setup => "/password/reset",
            LinkKind::ChangeEmail => "/password/confirm-email",
        }
    }

    fn identifier(self, user_id: &str, new_email: Option<&str>) -> String {
        match new_email {
            Some(email) => format!("{}:{user_id}:{email}", self.name()),
            None => format!("{}:{user_id}", self.name()),
        }
    }

    /// The stored form of `token`: a hash with the secret, in a domain of its own (a magic
    /// link's hash is of the token and the secret alone, so neither is ever the other).
    fn hash(self, c: &ConfigInner, token: &str) -> String {
        crate::crypto::hash_token(
            &format!("authcore-password-link:{}:{token}", self.name()),
            &c.secret_string,
        )
    }
}

/// A single-use link stored for a user: its URL (a credential), the token in it, its
/// stored form and when it expires.
pub(crate) struct StoredLink {
    pub url: String,
    pub token: String,
    identifier: String,
    hashed: String,
    pub expires: OffsetDateTime,
}

impl StoredLink {
    /// Withdraws the link (used up unused), for one that could not be handed over.
    pub(crate) async fn withdraw(&self, db: &dyn Adapter) {
        if let Err(e) = db
            .use_verification_token(&self.identifier, &self.hashed)
            .await
        {
            tracing::error!(error = %e, "could not withdraw an unsent single-use link");
        }
    }
}

/// Stores a new link of `kind` for `user_id` on `origin` (else the configured URL).
pub(crate) async fn store_link(
    c: &ConfigInner,
    db: &dyn Adapter,
    origin: Option<&str>,
    kind: LinkKind,
    user_id: &str,
    new_email: Option<&str>,
) -> Result<StoredLink, MailFailure> {
    let token = crate::random::hex_token::<32>();
    let query = {
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        query
            .append_pair("token", &token)
            .append_pair("user", user_id);
        if let Some(email) = new_email {
            query.append_pair("email", email);
        }
        query.finish()
    };
    let url = c
        .url_on(origin, &format!("{}?{query}", kind.route()))
        .ok_or(MailFailure::NoUrl)?;
    let identifier = kind.identifier(user_id, new_email);
    let hashed = kind.hash(c, &token);
    let expires = OffsetDateTime::now_utc() + kind.lifetime(c);
    db.create_verification_token(VerificationToken {
        identifier: identifier.clone(),
        token: hashed.clone(),
        expires,
    })
    .await?;
    Ok(StoredLink {
        url,
        token,
        identifier,
        hashed,
        expires,
    })
}

/// Stores a new link of `kind` for `user_id` and mails it to `to`; the token is withdrawn
/// again when the mail cannot be sent, so no usable link exists that was never mailed.
pub(crate) async fn send_link(
    c: &ConfigInner,
    db: &dyn Adapter,
    origin: Option<&str>,
    kind: LinkKind,
    user_id: &str,
    to: &str,
    new_email: Option<&str>,
) -> Result<(), MailFailure> {
    if c.mailer().is_none() {
        return Err(MailFailure::NoMailer);
    }
    let link = store_link(c, db, origin, kind, user_id, new_email).await?;
    let sent = mail(
        c,
        to,
        link.url.clone(),
        kind.purpose(),
        link.token.clone(),
        link.expires,
    )
    .await;
    if sent.is_err() {
        link.withdraw(db).await;
    }
    sent
}

/// Uses the link `token` of `kind` for `user_id`: `true` when it was valid (now used up).
pub(crate) async fn use_link(
    c: &ConfigInner,
    db: &dyn Adapter,
    kind: LinkKind,
    user_id: &str,
    new_email: Option<&str>,
    token: &str,
) -> Result<bool, AdapterError> {
    if token.is_empty() || user_id.is_empty() {
        return Ok(false);
    }
    let identifier = kind.identifier(user_id, new_email);
    let used = db
        .use_verification_token(&identifier, &kind.hash(c, token))
        .await?;
    Ok(used.is_some_and(|t| t.identifier == identifier && t.expires >= OffsetDateTime::now_utc()))
}

/// What a self-service request ended in.
enum Outcome {
    /// A form page (GET), or the form again with what was wrong.
    Form(Form, Option<Refusal>),
    /// "Check your email" (sign-up, forgotten password).
    Sent,
    /// A new account that needs no confirmation: sign in.
    Created,
    /// The password was reset.
    Reset,
    /// The address is confirmed.
    Verified,
    /// The new address is the account's.
    EmailChanged,
}

/// Why a self-service request was refused (answered on the form, or as JSON).
#[derive(Debug)]
enum Refusal {
    InvalidEmail,
    /// A name over 256 characters or with a control character.
    InvalidName,
    Policy(PolicyViolation),
    SignUpClosed,
    /// The address has an account (answered only where accounts need no confirmation, so
    /// a sign-up would otherwise sign in at once).
    AccountExists,
    /// The link is unknown, used up, expired or another user's.
    InvalidLink,
}

impl Refusal {
    fn status(&self) -> StatusCode {
        match self {
            Refusal::SignUpClosed => StatusCode::FORBIDDEN,
            Refusal::AccountExists => StatusCode::CONFLICT,
            _ => StatusCode::BAD_REQUEST,
        }
    }

    fn error(&self) -> &'static str {
        match self {
            Refusal::InvalidEmail | Refusal::InvalidName => "InvalidRequest",
            Refusal::Policy(_) => "PasswordPolicy",
            Refusal::SignUpClosed => "SignUpClosed",
            Refusal::AccountExists => "AccountExists",
            Refusal::InvalidLink => "Verification",
        }
    }

    /// What the page says (fixed texts: nothing from the request is echoed).
    pub(crate) fn message(&self) -> String {
        match self {
            Refusal::InvalidEmail => "That is not an email address.".to_owned(),
            Refusal::InvalidName => {
                "A name has at most 256 characters and no control characters.".to_owned()
            }
            Refusal::Policy(v) => {
                let mut m = v.to_string();
                if let Some(first) = m.get_mut(0..1) {
                    first.make_ascii_uppercase();
                }
                format!("{m}.")
            }
            Refusal::SignUpClosed => "Sign-up is not open for this address.".to_owned(),
            Refusal::AccountExists => {
                "This address has an account already: sign in, or reset its password.".to_owned()
            }
            Refusal::InvalidLink => {
                "This link is not valid: it was used already, it expired, or it was cut short. \
                 Ask for a new one."
                    .to_owned()
            }
        }
    }
}

/// The step of `<basePath>/password/<step>`.
fn step<'a>(ctx: &'a Ctx<'_>) -> Option<&'a str> {
    ctx.req.provider_id.as_deref()
}

fn field<'a>(ctx: &'a Ctx<'_>, name: &str) -> &'a str {
    ctx.req
        .body_str(name)
        .or_else(|| {
            (!ctx.req.is_post())
                .then(|| ctx.req.query.get(name))
                .flatten()
        })
        .unwrap_or_default()
}

/// `<basePath>/password/<step>`.
pub(crate) async fn password(ctx: &Ctx<'_>) -> Result<RawResponse, AuthError> {
    let unknown = || AuthError::unknown_action("Cannot handle action: password".to_owned());
    let (Some(accounts), Some(db)) = (
        ctx.config.password_accounts.as_ref(),
        ctx.config.adapter.as_deref(),
    ) else {
        return Err(unknown());
    };
    let post = ctx.req.is_post();
    if post {
        ctx.require_csrf("password")?;
    }
    let mails = ctx.config.mailer().is_some();
    let outcome = match (post, step(ctx)) {
        (false, Some("signup")) if accounts.sign_up_allowed() => Outcome::Form(Form::SignUp, None),
        (true, Some("signup")) if accounts.sign_up_allowed() => sign_up(ctx, accounts, db).await?,
        (false, Some("forgot")) if mails => Outcome::Form(Form::Forgot, None),
        (true, Some("forgot")) if mails => forgot(ctx, accounts, db).await?,
        (false, Some("reset")) => Outcome::Form(
            Form::Reset {
                token: field(ctx, "token").to_owned(),
                user: field(ctx, "user").to_owned(),
            },
            None,
        ),
        (true, Some("reset")) => reset(ctx, accounts, db).await?,
        (false, Some("verify")) => verify(ctx, db).await?,
        (false, Some("confirm-email")) => confirm_email(ctx, db).await?,
        _ => return Err(unknown()),
    };
    if ctx.wants_json() {
        return Ok(json_answer(outcome));
    }
    page(ctx, accounts, outcome)
}

fn json_answer(outcome: Outcome) -> RawResponse {
    let with = |status: StatusCode, body| {
        let mut r = RawResponse::json(body);
        r.status = Some(status);
        r
    };
    let status = |s: &str| with(StatusCode::OK, json!({ "status": s }));
    let r = match outcome {
        Outcome::Form(_, None) => with(
            StatusCode::BAD_REQUEST,
            json!({ "error": "InvalidRequest" }),
        ),
        Outcome::Form(_, Some(refusal)) => {
            let mut body = json!({ "error": refusal.error(), "message": refusal.message() });
            if let Refusal::Policy(v) = &refusal {
                body["code"] = json!(v.code());
            }
            with(refusal.status(), body)
        }
        Outcome::Sent => status("sent"),
        Outcome::Created => status("created"),
        Outcome::Reset => status("reset"),
        Outcome::Verified => status("verified"),
        Outcome::EmailChanged => status("emailChanged"),
    };
    r.with_no_cache()
}

fn page(
    ctx: &Ctx<'_>,
    accounts: &PasswordAccounts,
    outcome: Outcome,
) -> Result<RawResponse, AuthError> {
    use super::pages::PasswordPage as P;
    let signin = ctx.auth_url("/signin");
    let view = match outcome {
        Outcome::Form(form, refusal) => {
            let status = refusal
                .as_ref()
                .map_or(StatusCode::OK, |r: &Refusal| r.status());
            let error = refusal.map(|r| r.message());
            P::Form {
                form,
                error,
                status,
                min_length: accounts.min_length(),
            }
        }
        Outcome::Sent => P::Message {
            title: "Check your email",
            lines: &[
                "If the address can be used, a link is on its way to it. It may take a minute \
                 to arrive: check your spam folder too.",
            ],
            link: (signin, "Back to sign in"),
        },
        Outcome::Created => P::Message {
            title: "Account created",
            lines: &["Your account is ready: sign in with your email address and password."],
            link: (signin, "Sign in"),
        },
        Outcome::Reset => P::Message {
            title: "Password changed",
            lines: &["Your new password is set, and every session of your account was signed out."],
            link: (signin, "Sign in"),
        },
        Outcome::Verified => P::Message {
            title: "Address confirmed",
            lines: &["Your email address is confirmed: you can sign in now."],
            link: (signin, "Sign in"),
        },
        Outcome::EmailChanged => P::Message {
            title: "Address changed",
            lines: &["This is now your account's email address: sign in with it from now on."],
            link: (ctx.auth_url("/account"), "Your account"),
        },
    };
    Ok(super::pages::render_password_page(ctx, &view)?.with_no_cache())
}

/// The normalised address of the form, or the form again.
fn address(ctx: &Ctx<'_>) -> Result<String, Refusal> {
    normalize_email(field(ctx, "email")).map_err(|_| Refusal::InvalidEmail)
}

fn source_failure(e: SourceError) -> AuthError {
    AuthError::CallbackRouteError {
        provider: crate::passwords::PASSWORD_ACCOUNTS_ID.to_owned(),
        source: e.into(),
    }
}

fn mail_failure(e: MailFailure) -> AuthError {
    match e {
        MailFailure::Adapter(source) => AuthError::AdapterError { source },
        e => AuthError::CallbackRouteError {
            provider: crate::passwords::PASSWORD_ACCOUNTS_ID.to_owned(),
            source: e.into(),
        },
    }
}

/// Counts a mail to `email` against the per-address and per-client limits of magic links.
async fn count_mail(ctx: &Ctx<'_>, email: &str) -> Result<(), AuthError> {
    ctx.count_attempt(Limit::EmailsPerAddress, Some(email))
        .await?;
    ctx.count_attempt(Limit::EmailsPerClient, None).await
}

/// `POST /password/signup`.
async fn sign_up(
    ctx: &Ctx<'_>,
    accounts: &PasswordAccounts,
    db: &dyn Adapter,
) -> Result<Outcome, AuthError> {
    let again = |r| Ok(Outcome::Form(Form::SignUp, Some(r)));
    let email = match address(ctx) {
        Ok(e) => e,
        Err(r) => return again(r),
    };
    let name = Some(field(ctx, "name").trim()).filter(|n| !n.is_empty());
    if name.is_some_and(|n| n.chars().count() > 256 || n.chars().any(char::is_control)) {
        return again(Refusal::InvalidName);
    }
    if !super::organizations::may_sign_up(ctx.config, Some(&email)).await? {
        return again(Refusal::SignUpClosed);
    }
    let password = field(ctx, "password");
    if let Err(v) = accounts.check_password(password, Some(&email), name).await {
        return again(Refusal::Policy(v));
    }
    count_mail(ctx, &email).await?;
    // One hash either way: a known address's answer costs what a new account's does.
    let hash = accounts.hash(password).await.map_err(source_failure)?;
    let origin = Some(ctx.req.origin());
    if db.get_user_by_email(&email).await?.is_some() {
        if !accounts.verifies_email() {
            // Without confirmation a new account signs in at once: the answer cannot hide
            // a known address, so it says so.
            return Ok(Outcome::Form(Form::SignUp, Some(Refusal::AccountExists)));
        }
        tracing::info!("password sign-up with an address that has an account: mailed a notice");
        mail(
            ctx.config,
            &email,
            ctx.auth_url("/signin"),
            LinkPurpose::AccountExists,
            String::new(),
            OffsetDateTime::now_utc(),
        )
        .await
        .map_err(mail_failure)?;
        return Ok(Outcome::Sent);
    }
    let verified = (!accounts.verifies_email()).then(OffsetDateTime::now_utc);
    let user = match db
        .create_user(NewUser {
            name: name.map(str::to_owned),
            email: Some(email.clone()),
            email_verified: verified,
            ..NewUser::default()
        })
        .await
    {
        Ok(user) => user,
        // Made meanwhile by a sign-up of the same address: the same answer.
        Err(_) if db.get_user_by_email(&email).await?.is_some() => return Ok(Outcome::Sent),
        Err(e) => return Err(e.into()),
    };
    let stored = accounts.store_hash(&user.id, &hash).await;
    let sent = match (&stored, accounts.verifies_email()) {
        (Ok(()), true) => send_link(
            ctx.config,
            db,
            origin,
            LinkKind::Verify,
            &user.id,
            &email,
            None,
        )
        .await
        .map_err(mail_failure),
        (Ok(()), false) => Ok(()),
        (Err(_), _) => Ok(()),
    };
    if let Err(e) = stored.map_err(source_failure).and(sent) {
        // No half-made account stays behind: the address can sign up again.
        if let Err(d) = db.delete_user(&user.id).await {
            tracing::error!(error = %d, "could not remove a sign-up that failed");
        }
        return Err(e);
    }
    if verified.is_some() {
        // Else at the address's confirmation: an invitation is used by its address's owner.
        super::organizations::after_sign_up(ctx.config, &user).await;
    }
    tracing::info!(user = %user.id, "password account signed up");
    Ok(if accounts.verifies_email() {
        Outcome::Sent
    } else {
        Outcome::Created
    })
}

/// `POST /password/forgot`.
async fn forgot(
    ctx: &Ctx<'_>,
    accounts: &PasswordAccounts,
    db: &dyn Adapter,
) -> Result<Outcome, AuthError> {
    let email = match address(ctx) {
        Ok(e) => e,
        Err(r) => return Ok(Outcome::Form(Form::Forgot, Some(r))),
    };
    count_mail(ctx, &email).await?;
    // The hash work of a sign-up, so that the answer's time is alike for every address.
    accounts
        .spend_hash_work(field(ctx, "email"))
        .await
        .map_err(source_failure)?;
    let origin = Some(ctx.req.origin());
    match db.get_user_by_email(&email).await? {
        Some(user) => {
            tracing::info!(user = %user.id, "password reset link asked for");
            send_link(
                ctx.config,
                db,
                origin,
                LinkKind::Reset,
                &user.id,
                &email,
                None,
            )
            .await
            .map_err(mail_failure)?;
        }
        None => {
            tracing::info!(
                "password reset asked for an address without an account: mailed a notice"
            );
            let next = if accounts.sign_up_allowed()
                && super::organizations::may_sign_up(ctx.config, Some(&email)).await?
            {
                ctx.auth_url("/password/signup")
            } else {
                ctx.auth_url("/signin")
            };
            mail(
                ctx.config,
                &email,
                next,
                LinkPurpose::NoAccount,
                String::new(),
                OffsetDateTime::now_utc(),
            )
            .await
            .map_err(mail_failure)?;
        }
    }
    Ok(Outcome::Sent)
}

/// `POST /password/reset`: a new password by a reset link; every session of the user ends.
async fn reset(
    ctx: &Ctx<'_>,
    accounts: &PasswordAccounts,
    db: &dyn Adapter,
) -> Result<Outcome, AuthError> {
    let (token, user_id) = (field(ctx, "token"), field(ctx, "user"));
    let form = Form::Reset {
        token: token.to_owned(),
        user: user_id.to_owned(),
    };
    let user = match user_id {
        "" => None,
        id => db.get_user(id).await?,
    };
    let Some(user) = user else {
        return Ok(Outcome::Form(form, Some(Refusal::InvalidLink)));
    };
    // The policy first: a refused password leaves the link usable for a better one.
    let password = field(ctx, "password");
    if let Err(v) = accounts
        .check_password(password, user.email.as_deref(), user.name.as_deref())
        .await
    {
        return Ok(Outcome::Form(form, Some(Refusal::Policy(v))));
    }
    // A reset link, or the set-up link of an account an administrator made (whose address
    // the administrator vouched for).
    if !use_link(ctx.config, db, LinkKind::Reset, &user.id, None, token).await?
        && !use_link(ctx.config, db, LinkKind::Setup, &user.id, None, token).await?
    {
        tracing::warn!(user = %user.id, "password reset refused: the link is not valid");
        return Ok(Outcome::Form(form, Some(Refusal::InvalidLink)));
    }
    let recipient = Recipient::look_up(ctx.config, &user.id, Some(ctx.req.origin())).await;
    let hash = accounts.hash(password).await.map_err(source_failure)?;
    accounts
        .store_hash(&user.id, &hash)
        .await
        .map_err(source_failure)?;
    // The link proved the mailbox: the address is confirmed too.
    if user.email_verified.is_none() {
        confirm_address(db, &user.id).await?;
    }
    end_sessions(ctx.config, &user.id, None).await;
    recipient
        .notify(ctx.config, SecurityChange::PasswordChanged)
        .await;
    tracing::info!(user = %user.id, "password reset");
    Ok(Outcome::Reset)
}

async fn confirm_address(db: &dyn Adapter, user_id: &str) -> Result<(), AdapterError> {
    db.update_user(UserUpdate {
        id: user_id.to_owned(),
        email_verified: Some(Some(OffsetDateTime::now_utc())),
        ..UserUpdate::default()
    })
    .await?;
    Ok(())
}

/// Ends the user's sessions but `keep` (a [`CurrentSession::session_id`]); where sessions
/// cannot be ended (JWT sessions without the revocation list), says so in the log.
async fn end_sessions(c: &ConfigInner, user_id: &str, keep: Option<&str>) {
    match super::account::revoke_other_sessions(c, user_id, keep).await {
        Ok(_) => {}
        Err(AccountError::NoDatabaseSessions | AccountError::NoAdapter) => tracing::warn!(
            user = %user_id,
            "password changed: other JWT sessions stay valid until they expire (turn on jwt_revocation to end them)"
        ),
        Err(e) => {
            tracing::error!(user = %user_id, error = %e, "password changed: could not end the other sessions")
        }
    }
}

/// `GET /password/verify`: confirms a new account's address.
async fn verify(ctx: &Ctx<'_>, db: &dyn Adapter) -> Result<Outcome, AuthError> {
    let user = field(ctx, "user");
    if !use_link(
        ctx.config,
        db,
        LinkKind::Verify,
        user,
        None,
        field(ctx, "token"),
    )
    .await?
    {
        tracing::warn!("address confirmation refused: the link is not valid");
        return Ok(Outcome::Form(Form::Forgot, Some(Refusal::InvalidLink)));
    }
    confirm_address(db, user).await?;
    if let Some(confirmed) = db.get_user(user).await? {
        super::organizations::after_sign_up(ctx.config, &confirmed).await;
    }
    tracing::info!(user = %user, "password account's address confirmed");
    Ok(Outcome::Verified)
}

/// `GET /password/confirm-email`: the new address becomes the account's; the old one hears
/// of it.
async fn confirm_email(ctx: &Ctx<'_>, db: &dyn Adapter) -> Result<Outcome, AuthError> {
    let (user, email) = (field(ctx, "user"), field(ctx, "email"));
    let refused = || Ok(Outcome::Form(Form::Forgot, Some(Refusal::InvalidLink)));
    let Ok(email) = normalize_email(email) else {
        return refused();
    };
    if !use_link(
        ctx.config,
        db,
        LinkKind::ChangeEmail,
        user,
        Some(&email),
        field(ctx, "token"),
    )
    .await?
    {
        tracing::warn!("address change refused: the link is not valid");
        return refused();
    }
    // The old address, read before the change, hears of it.
    let recipient = Recipient::look_up(ctx.config, user, Some(ctx.req.origin())).await;
    let updated = db
        .update_user(UserUpdate {
            id: user.to_owned(),
            email: Some(Some(email)),
            email_verified: Some(Some(OffsetDateTime::now_utc())),
            ..UserUpdate::default()
        })
        .await;
    match updated {
        Ok(Some(_)) => {}
        // The address became another user's since the link was sent.
        Ok(None) | Err(_) => {
            tracing::warn!(user = %user, "address change refused: the address is taken");
            return refused();
        }
    }
    recipient
        .notify(ctx.config, SecurityChange::EmailChanged)
        .await;
    tracing::info!(user = %user, "account's address changed");
    Ok(Outcome::EmailChanged)
}

/// The password accounts of `c`, for the account operations.
fn accounts(c: &ConfigInner) -> Result<(&PasswordAccounts, &dyn Adapter), AccountError> {
    match (c.password_accounts.as_ref(), c.adapter.as_deref()) {
        (Some(a), Some(db)) => Ok((a, db)),
        (_, None) => Err(AccountError::NoAdapter),
        (None, _) => Err(AccountError::PasswordsOff),
    }
}

/// Changes the signed-in user's password (a sensitive change): `current` must be their
/// password when they have one; a user without one sets a first. Every other session ends.
pub(crate) async fn change_password(
    c: &ConfigInner,
    me: &CurrentSession,
    current: &str,
    new: &str,
) -> Result<(), AccountError> {
    let (accounts, db) = accounts(c)?;
    require_recent_sign_in(c, me, SensitiveOperation::ChangePassword).await?;
    let user = db
        .get_user(&me.user_id)
        .await?
        .ok_or(AccountError::NotFound)?;
    if let Err(retry_after) =
        super::limits::count(c, Limit::CredentialsPerIdentifier, &me.user_id).await
    {
        return Err(AccountError::TooManyAttempts { retry_after });
    }
    match accounts
        .verify_current(&me.user_id, current)
        .await
        .map_err(source_error)?
    {
        Some(false) => {
            tracing::warn!(user = %me.user_id, "password change refused: the current password is wrong");
            return Err(AccountError::WrongPassword);
        }
        Some(true) | None => {
            super::limits::give_back(c, Limit::CredentialsPerIdentifier, &me.user_id).await;
        }
    }
    accounts
        .check_password(new, user.email.as_deref(), user.name.as_deref())
        .await
        .map_err(AccountError::WeakPassword)?;
    let hash = accounts.hash(new).await.map_err(source_error)?;
    let recipient = Recipient::look_up(c, &me.user_id, me.origin.as_deref()).await;
    accounts
        .store_hash(&me.user_id, &hash)
        .await
        .map_err(source_error)?;
    end_sessions(c, &me.user_id, me.session_id.as_deref()).await;
    recipient.notify(c, SecurityChange::PasswordChanged).await;
    Ok(())
}

/// Starts a change of the signed-in user's address (a sensitive change): a link to the new
/// address makes it the account's. An address that is another account's gets a notice
/// instead, and the answer is the same.
pub(crate) async fn request_email_change(
    c: &ConfigInner,
    me: &CurrentSession,
    new_email: &str,
) -> Result<(), AccountError> {
    let (_, db) = accounts(c)?;
    let email = normalize_email(new_email).map_err(|_| AccountError::InvalidEmail)?;
    require_recent_sign_in(c, me, SensitiveOperation::ChangeEmail).await?;
    if let Err(retry_after) = super::limits::count(c, Limit::EmailsPerAddress, &email).await {
        return Err(AccountError::TooManyAttempts { retry_after });
    }
    let origin = me.origin.as_deref();
    let sent = match db.get_user_by_email(&email).await? {
        Some(owner) if owner.id == me.user_id => return Err(AccountError::InvalidEmail),
        Some(_) => {
            let url = c.url_on(origin, "/signin").ok_or(MailFailure::NoUrl);
            match url {
                Ok(url) => {
                    mail(
                        c,
                        &email,
                        url,
                        LinkPurpose::AccountExists,
                        String::new(),
                        OffsetDateTime::now_utc(),
                    )
                    .await
                }
                Err(e) => Err(e),
            }
        }
        None => {
            send_link(
                c,
                db,
                origin,
                LinkKind::ChangeEmail,
                &me.user_id,
                &email,
                Some(&email),
            )
            .await
        }
    };
    match sent {
        Ok(()) => {
            tracing::info!(user = %me.user_id, "address change: confirmation link mailed");
            Ok(())
        }
        Err(MailFailure::Adapter(e)) => Err(e.into()),
        Err(MailFailure::NoMailer) => Err(AccountError::PasswordsOff),
        Err(e) => {
            tracing::error!(user = %me.user_id, error = %e, "address change: could not mail the link");
            Err(AccountError::Adapter(AdapterError::Backend(
                e.to_string().into(),
            )))
        }
    }
}

fn source_error(e: SourceError) -> AccountError {
    AccountError::Adapter(AdapterError::Backend(e.to_string().into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_identifiers_and_hashes_never_meet() {
        let c = crate::AuthConfig::builder()
            .secret("secret-xxxxxxxxxxxxxxxxxxxxxxxxx")
            .sessions_only()
            .build()
            .unwrap();
        let c = &*c.inner;
        let kinds = [
            LinkKind::Verify,
            LinkKind::Reset,
            LinkKind::ChangeEmail,
            LinkKind::Setup,
        ];
        let mut seen = std::collections::HashSet::new();
        for kind in kinds {
            assert!(seen.insert(kind.identifier("u1", None)));
            assert!(seen.insert(kind.hash(c, "t")));
            // An identifier holds no `@` unless it carries the new address: never a magic
            // link's (an address).
            assert!(!kind.identifier("u1", None).contains('@'));
        }
        assert_eq!(
            LinkKind::ChangeEmail.identifier("u1", Some("a@b.c")),
            "email-change:u1:a@b.c"
        );
        assert_eq!(LinkKind::Reset.lifetime(c), Duration::minutes(30));
        // Without administrators, the default set-up link's lifetime.
        assert_eq!(LinkKind::Setup.lifetime(c), Duration::days(3));
    }
}
