//! The administrators' page (beyond Auth.js; with administrators): `GET <basePath>/admin`
//! finds users (`q`, `provider`, `organization`, `after`), shows one (`?user=<id>`) or the
//! stored audit log (`?view=audit&kind=&user=&since=&until=&cursor=`, newest first);
//! `POST <basePath>/admin` (`csrfToken`, `op` and the change's fields, a form post) makes
//! one change and redirects back to the page. The reads and changes are the operations the
//! JSON routes call ([`super::admin`]), so the page and the routes cannot differ. A
//! signed-out visitor is sent to sign in and back; anyone else but an administrator, and an
//! impersonated session, gets a 403 page. Answers are never cached.

use http::StatusCode;
use time::OffsetDateTime;

use super::Ctx;
use super::account::account_failure;
use super::account::{self, AccountError, CurrentSession};
use super::admin::{self as ops, Actor};
use super::pages::{
    AdminView, AuditRow, AuditView, BanView, RefusalForm, RefusalPage, SetupLinkView, UserRow,
    UserView, UsersView,
};
use crate::adapter::{AuditQuery, UserQuery};
use crate::cookies::encode_uri_component;
use crate::error::AuthError;
use crate::response::RawResponse;

/// How many users a page of the search lists.
const USERS_PER_PAGE: u32 = 25;

/// How many audit records a page of the audit view lists.
const RECORDS_PER_PAGE: u32 = 50;

/// What the page shows above its view after a change (fixed texts by key: nothing from the
/// request is echoed).
fn notice_text(key: &str) -> Option<&'static str> {
    Some(match key {
        "created" => "The user was created, with the set-up link below.",
        "created-without-link" => {
            "The user was created, without a set-up link (there are no password accounts nor \
             magic links): they sign in with a provider that knows their address."
        }
        "setup-link" => "A set-up link was made: the user's earlier ones still work until used.",
        "sessions-ended" => "Every session of the user was ended.",
        "banned" => "The user is banned: their sessions ended and they cannot sign in.",
        "unbanned" => "The ban was lifted.",
        "two-factor-reset" => "The user's authenticator app and recovery codes were removed.",
        "deleted" => "The user was deleted.",
        _ => return None,
    })
}

/// The message of a refused change or read.
fn error_text(e: &AccountError) -> String {
    let text = match e {
        // authcore's own fixed texts, which say what was wrong.
        AccountError::InvalidValue(why) => return format!("That value is not valid: {why}."),
        AccountError::ReauthenticationRequired => {
            "This change needs a recent sign-in: sign in again, then make it."
        }
        AccountError::NotFound => "There is no such user, or nothing of that kind to undo.",
        AccountError::OwnAccount => "That is your own account: change it on your account page.",
        AccountError::TargetIsAdmin => {
            "Administrators are neither impersonated nor given set-up links."
        }
        AccountError::SetUpAlready => {
            "The user already signs in: their set-up link is only mailed to them, and this \
             server does not mail."
        }
        AccountError::MailFailed => "The mail could not be sent. Please try again later.",
        AccountError::Banned => "A banned user is not impersonated: lift the ban first.",
        AccountError::NotEnrolled => "The user has no authenticator app.",
        AccountError::InvalidEmail => "That is not an email address.",
        AccountError::LastOwner => {
            "The user is the last owner of an organization with other members: make another \
             member owner first."
        }
        AccountError::Forbidden => "Only administrators may do that.",
        AccountError::AuditOff => "The audit log is not stored.",
        AccountError::PasswordsOff => {
            "No set-up link can be made: there are no password accounts nor magic links."
        }
        _ => "That did not work. Please try again later.",
    };
    text.to_owned()
}

/// What the page shows: the search, one user, or the audit log.
enum Focus {
    Users,
    User(String),
    Audit,
}

/// What the page shows besides its view.
#[derive(Default)]
struct State {
    notice: Option<&'static str>,
    error: Option<String>,
    reauthenticate: Option<String>,
    status: Option<StatusCode>,
    /// A set-up link just made (shown on the answer to the post, never in a URL).
    setup_link: Option<SetupLinkView>,
}

/// How the page shows a set-up link.
fn setup_link_view(link: &ops::SetupLink) -> SetupLinkView {
    SetupLinkView {
        url: link.url().map(str::to_owned),
        expires: crate::types::iso_string(link.expires()),
        does: match link.method() {
            ops::SetupMethod::Password => "With it the user chooses their password.",
            ops::SetupMethod::SignIn => {
                "It signs the user in, once; they add a passkey or a password on their account page."
            }
        },
        mailed: link.mailed(),
    }
}

/// The administrator of the request, or the answer for anyone else: signed out, the
/// redirect to sign in and come back; a user who is not an administrator, or an
/// impersonated session, a 403 page.
async fn administrator(ctx: &Ctx<'_>) -> Result<Result<Actor, RawResponse>, AuthError> {
    let c = ctx.config;
    let session = account::current_session(c, &ctx.req.url, &ctx.req.cookies).await;
    let refusal = match ops::actor(c, None, session).await {
        Ok(actor) => return Ok(Ok(actor)),
        Err(AccountError::SessionRequired) => {
            let mut back = ctx.auth_url("/admin");
            if let Some(q) = ctx.req.url.query().filter(|_| !ctx.req.is_post()) {
                back.push('?');
                back.push_str(q);
            }
            return Ok(Err(RawResponse::redirect(format!(
                "{}?callbackUrl={}",
                ctx.auth_url("/signin"),
                encode_uri_component(&back)
            ))));
        }
        Err(AccountError::Impersonating) => RefusalPage {
            status: StatusCode::FORBIDDEN,
            title: "Not while impersonating",
            line: "You are signed in as another user by an administrator: end the \
                   impersonation to come back to the administrators' page.",
            form: Some(RefusalForm {
                action: ctx.auth_url("/account"),
                hidden: vec![("op", END_IMPERSONATION)],
                submit: "End impersonation",
            }),
            link: (ctx.auth_url("/account"), "Back to the account page"),
        },
        Err(AccountError::Forbidden) => RefusalPage {
            status: StatusCode::FORBIDDEN,
            title: "Not allowed",
            line: "This page is for administrators.",
            form: None,
            link: (ctx.auth_url("/account"), "Go to your account page"),
        },
        Err(e) => return Err(account_failure(e)),
    };
    let r = super::pages::render_refusal_page(ctx, &refusal)?;
    Ok(Err(r.with_no_cache()))
}

/// The account page's `op` that ends an impersonation (its banner's button).
pub(crate) const END_IMPERSONATION: &str = "impersonation-end";

/// `GET <basePath>/admin`.
pub(crate) async fn page(ctx: &Ctx<'_>) -> Result<RawResponse, AuthError> {
    let actor = match administrator(ctx).await? {
        Ok(actor) => actor,
        Err(answer) => return Ok(answer),
    };
    let q = &ctx.req.query;
    let focus = match (q.get("view"), q.get("user").filter(|u| !u.is_empty())) {
        (Some("audit"), _) => Focus::Audit,
        (_, Some(user)) => Focus::User(user.to_owned()),
        _ => Focus::Users,
    };
    let state = State {
        notice: q.get("notice").and_then(notice_text),
        ..State::default()
    };
    render(ctx, &actor, focus, state).await
}

/// After a change: back to a user's page or to the search with a notice, the page again
/// with why it was refused, or another answer (an impersonation's cookies).
enum Next {
    User(String, &'static str),
    Users(&'static str),
    Refused(&'static str),
    Answer(RawResponse),
    /// A user's page with a set-up link, answered to the post itself: the link is a
    /// credential, never put in a redirect's URL.
    SetupLink(String, &'static str, Option<ops::SetupLink>),
}

/// `POST <basePath>/admin`: one change, then a redirect back to the page.
pub(crate) async fn change(ctx: &Ctx<'_>) -> Result<RawResponse, AuthError> {
    ctx.require_csrf("admin")?;
    let actor = match administrator(ctx).await? {
        Ok(actor) => actor,
        Err(answer) => return Ok(answer),
    };
    let c = ctx.config;
    let field = |name: &str| ctx.req.body_str(name).unwrap_or_default();
    let user = field("userId");
    let outcome: Result<Next, AccountError> = async {
        Ok(match field("op") {
            "create" => {
                let name = Some(field("name")).filter(|n| !n.trim().is_empty());
                let (made, link) = ops::create_user(c, &actor, field("email"), name).await?;
                let notice = match link {
                    Some(_) => "created",
                    None => "created-without-link",
                };
                Next::SetupLink(made.id, notice, link)
            }
            "setup-link" => {
                let link = ops::setup_link(c, &actor, user).await?;
                Next::SetupLink(user.to_owned(), "setup-link", Some(link))
            }
            "end-sessions" => {
                ops::end_sessions(c, &actor, user).await?;
                Next::User(user.to_owned(), "sessions-ended")
            }
            "ban" => {
                let until = match field("until") {
                    "" => None,
                    v => Some(day_or_time(v, false).ok_or_else(|| {
                        AccountError::InvalidValue("a ban's end is a date (YYYY-MM-DD)".into())
                    })?),
                };
                ops::ban(c, &actor, user, field("reason"), until).await?;
                Next::User(user.to_owned(), "banned")
            }
            "unban" => {
                ops::unban(c, &actor, user).await?;
                Next::User(user.to_owned(), "unbanned")
            }
            "reset-two-factor" => {
                ops::reset_two_factor(c, &actor, user).await?;
                Next::User(user.to_owned(), "two-factor-reset")
            }
            "delete" if field("confirm") != "yes" => {
                Next::Refused("Tick the box to confirm that the user goes.")
            }
            "delete" => {
                ops::delete_user(c, &actor, user).await?;
                Next::Users("deleted")
            }
            "impersonate" => {
                let cookies =
                    ops::impersonate(c, &actor, &ctx.req.url, &ctx.req.cookies, user).await?;
                let mut r = RawResponse::redirect(ctx.auth_url("/account"));
                r.cookies = cookies;
                Next::Answer(r)
            }
            _ => Next::Refused("That change is not known."),
        })
    }
    .await;
    let focus = || match user {
        "" => Focus::Users,
        id => Focus::User(id.to_owned()),
    };
    let state = match outcome {
        Ok(Next::User(id, notice)) => {
            return Ok(RawResponse::redirect(format!(
                "{}?user={}&notice={notice}",
                ctx.auth_url("/admin"),
                encode_uri_component(&id)
            )));
        }
        Ok(Next::Users(notice)) => {
            return Ok(RawResponse::redirect(format!(
                "{}?notice={notice}",
                ctx.auth_url("/admin")
            )));
        }
        Ok(Next::Answer(r)) => return Ok(r),
        Ok(Next::SetupLink(id, notice, link)) => {
            let state = State {
                notice: notice_text(notice),
                setup_link: link.as_ref().map(setup_link_view),
                ..State::default()
            };
            return render(ctx, &actor, Focus::User(id), state).await;
        }
        Ok(Next::Refused(why)) => State {
            error: Some(why.to_owned()),
            ..State::default()
        },
        Err(e @ AccountError::Adapter(_)) => return Err(account_failure(e)),
        Err(e) => {
            tracing::warn!(admin = %actor.user_id, user = %user, error = %e, "administrators' page: change refused");
            // A way to sign in again (with the second factor) and come back here.
            let reauthenticate = matches!(e, AccountError::ReauthenticationRequired).then(|| {
                let back = match user {
                    "" => ctx.auth_url("/admin"),
                    id => format!(
                        "{}?user={}",
                        ctx.auth_url("/admin"),
                        encode_uri_component(id)
                    ),
                };
                format!(
                    "{}?callbackUrl={}",
                    ctx.auth_url("/signin"),
                    encode_uri_component(&back)
                )
            });
            State {
                error: Some(error_text(&e)),
                reauthenticate,
                ..State::default()
            }
        }
    };
    render(ctx, &actor, focus(), state).await
}

/// The page for administrator `actor`, showing `focus`, with what `state` adds.
async fn render(
    ctx: &Ctx<'_>,
    actor: &Actor,
    focus: Focus,
    mut state: State,
) -> Result<RawResponse, AuthError> {
    let c = ctx.config;
    let mut view = AdminView {
        who: account::display_name(c, &actor.user_id).await,
        action: ctx.auth_url("/admin"),
        account: ctx.auth_url("/account"),
        csrf_token: &ctx.csrf_token,
        audit_stored: c.auditor.stores(),
        notice: None,
        error: None,
        reauthenticate: None,
        users: None,
        user: None,
        audit: None,
        setup_link: None,
    };
    match focus {
        Focus::User(id) => match ops::user_detail(c, actor, &id).await {
            Ok(detail) => {
                let database = c.session_strategy == crate::config::SessionStrategy::Database;
                // Who banned the user, by name.
                let banned_by = match detail.ban.as_ref().and_then(|b| b.by.as_deref()) {
                    Some(admin) => Some(account::display_name(c, admin).await),
                    None => None,
                };
                view.user = Some(user_view(actor, detail, database, banned_by));
            }
            Err(AccountError::NotFound) => {
                state
                    .error
                    .get_or_insert_with(|| error_text(&AccountError::NotFound));
                state.status.get_or_insert(StatusCode::NOT_FOUND);
                view.users = Some(users_view(ctx, actor).await?);
            }
            Err(e) => return Err(account_failure(e)),
        },
        Focus::Audit if view.audit_stored => match audit_view(ctx, actor).await {
            Ok(audit) => view.audit = Some(audit),
            Err(e @ AccountError::Adapter(_)) => return Err(account_failure(e)),
            Err(e) => {
                state.error.get_or_insert_with(|| error_text(&e));
                state.status.get_or_insert(StatusCode::BAD_REQUEST);
                view.audit = Some(audit_filters(ctx));
            }
        },
        Focus::Audit => {
            state
                .error
                .get_or_insert_with(|| error_text(&AccountError::AuditOff));
            view.users = Some(users_view(ctx, actor).await?);
        }
        Focus::Users => view.users = Some(users_view(ctx, actor).await?),
    }
    view.notice = state.notice;
    view.error = state.error;
    view.reauthenticate = state.reauthenticate;
    view.setup_link = state.setup_link;
    super::pages::render_admin_page(ctx, &view, state.status.unwrap_or(StatusCode::OK))
}

/// The last value of query parameter `name` (empty when there is none).
fn param<'r>(ctx: &'r Ctx<'_>, name: &str) -> &'r str {
    ctx.req.query.get(name).unwrap_or_default()
}

/// `<basePath>/admin` with `pairs` (those with a value) as its query.
fn admin_url(ctx: &Ctx<'_>, pairs: &[(&str, &str)]) -> String {
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs.iter().filter(|(_, v)| !v.is_empty()) {
        query.append_pair(k, v);
    }
    let query = query.finish();
    let base = ctx.auth_url("/admin");
    if query.is_empty() {
        base
    } else {
        format!("{base}?{query}")
    }
}

/// The search of the request's query (`q`, `provider`, `organization`: an organization's
/// slug or id, `after`).
async fn users_view(ctx: &Ctx<'_>, actor: &Actor) -> Result<UsersView, AuthError> {
    let c = ctx.config;
    let (q, provider, organization) = (
        param(ctx, "q"),
        param(ctx, "provider"),
        param(ctx, "organization"),
    );
    let organization_id = organization_id(c, organization)
        .await
        .map_err(account_failure)?;
    let query = UserQuery {
        text: Some(q.trim().to_owned()).filter(|t| !t.is_empty()),
        provider: Some(provider.to_owned()).filter(|p| !p.is_empty()),
        organization_id,
        after: Some(param(ctx, "after").to_owned()).filter(|a| !a.is_empty()),
        limit: USERS_PER_PAGE,
    };
    let found = ops::search_users(c, actor, &query)
        .await
        .map_err(account_failure)?;
    let rows = found
        .users
        .into_iter()
        .map(|u| {
            let detail = match (&u.email, &u.name) {
                (Some(_), Some(name)) => format!("{name} · {}", u.id),
                _ => u.id.clone(),
            };
            UserRow {
                href: admin_url(ctx, &[("user", &u.id)]),
                label: u.email.or(u.name).unwrap_or_else(|| u.id.clone()),
                detail,
            }
        })
        .collect();
    let next = found.next.map(|after| {
        admin_url(
            ctx,
            &[
                ("q", q),
                ("provider", provider),
                ("organization", organization),
                ("after", &after),
            ],
        )
    });
    Ok(UsersView {
        q: q.to_owned(),
        organization: organization.to_owned(),
        providers: c
            .providers
            .iter()
            .map(|p| (p.id().to_owned(), p.id() == provider))
            .collect(),
        organizations: c.organizations.is_some(),
        rows,
        next,
    })
}

/// The id of the organization with slug (or id) `given`; `None` for no filter.
async fn organization_id(
    c: &crate::config::ConfigInner,
    given: &str,
) -> Result<Option<String>, AccountError> {
    let given = given.trim();
    if given.is_empty() {
        return Ok(None);
    }
    let by_slug = match c.adapter.as_deref().and_then(|a| a.organizations()) {
        Some(store) => store.get_organization_by_slug(given).await?,
        None => None,
    };
    Ok(Some(by_slug.map_or_else(|| given.to_owned(), |o| o.id)))
}

/// The audit view's filters as given, without records.
fn audit_filters(ctx: &Ctx<'_>) -> AuditView {
    AuditView {
        kind: param(ctx, "kind").to_owned(),
        user: param(ctx, "user").to_owned(),
        since: param(ctx, "since").to_owned(),
        until: param(ctx, "until").to_owned(),
        ..AuditView::default()
    }
}

/// The audit records of the request's query, newest first: `kind`, `user` (actor or
/// target), `since` and `until` (dates, `until` inclusive, or RFC 3339 times), `cursor` (the
/// `seq` the page starts before).
async fn audit_view(ctx: &Ctx<'_>, actor: &Actor) -> Result<AuditView, AccountError> {
    let mut view = audit_filters(ctx);
    let time = |value: &str, end: bool| match value {
        "" => Ok(None),
        v => day_or_time(v, end)
            .map(Some)
            .ok_or_else(|| AccountError::InvalidValue("a date is YYYY-MM-DD".into())),
    };
    let cursor = match param(ctx, "cursor") {
        "" => None,
        v => Some(
            v.parse::<u64>()
                .map_err(|_| AccountError::InvalidValue("a page's cursor is a number".into()))?,
        ),
    };
    let query = AuditQuery {
        kind: Some(view.kind.trim().to_owned()).filter(|k| !k.is_empty()),
        user: Some(view.user.trim().to_owned()).filter(|u| !u.is_empty()),
        since: time(&view.since, false)?,
        until: time(&view.until, true)?,
        cursor,
        ascending: false,
        limit: RECORDS_PER_PAGE,
    };
    let records = ops::audit_records(ctx.config, actor, &query).await?;
    if records.len() == RECORDS_PER_PAGE as usize
        && let Some(last) = records.last()
    {
        let cursor = last.seq.to_string();
        view.next = Some(admin_url(
            ctx,
            &[
                ("view", "audit"),
                ("kind", &view.kind),
                ("user", &view.user),
                ("since", &view.since),
                ("until", &view.until),
                ("cursor", &cursor),
            ],
        ));
    }
    view.rows = records
        .into_iter()
        .map(|r| AuditRow {
            seq: r.seq,
            at: when(r.at),
            kind: r.kind,
            target_href: r.target.as_ref().map(|t| admin_url(ctx, &[("user", t)])),
            actor: r.actor,
            target: r.target,
            data: r.data,
        })
        .collect();
    Ok(view)
}

/// What the page shows of a user (their sessions with `database` sessions only: JWT
/// sessions are not stored; `banned_by` names who banned them).
fn user_view(
    actor: &Actor,
    d: ops::UserDetail,
    database: bool,
    banned_by: Option<String>,
) -> UserView {
    let now = OffsetDateTime::now_utc();
    let own = d.user.id == actor.user_id;
    let mut methods: Vec<String> = d
        .methods
        .accounts
        .iter()
        .map(|a| format!("{} ({})", a.provider, a.kind))
        .collect();
    if let Some(e) = &d.methods.email {
        methods.push(format!("Email links to {e}"));
    }
    if d.methods.password {
        methods.push("Password".to_owned());
    }
    let passkeys = d
        .methods
        .passkeys
        .iter()
        .map(|p| match &p.name {
            Some(name) => format!("{name} ({})", p.credential_device_type),
            None => p.credential_device_type.clone(),
        })
        .collect();
    let tomorrow = now.date().next_day().unwrap_or(now.date());
    let label = d
        .user
        .email
        .clone()
        .or_else(|| d.user.name.clone())
        .unwrap_or_else(|| d.user.id.clone());
    UserView {
        can_impersonate: !d.admin && !d.banned && !own,
        label,
        id: d.user.id,
        email: d.user.email,
        verified: d.user.email_verified.is_some(),
        name: d.user.name,
        admin: d.admin,
        own,
        ban: d.ban.map(|b| BanView {
            holds: b.holds_at(now),
            reason: b.reason,
            at: when(b.at),
            until: b.until.map(when),
            by: banned_by,
        }),
        methods,
        passkeys,
        sessions: database.then_some(d.sessions),
        totp: d.totp,
        recovery_codes_left: d.recovery_codes_left,
        organizations: d
            .organizations
            .into_iter()
            .map(|m| (m.organization.name, m.roles.join(", ")))
            .collect(),
        apps: d
            .apps
            .into_iter()
            .map(|a| (a.name, a.scopes.join(" ")))
            .collect(),
        groups: d.groups,
        min_until: tomorrow.to_string(),
    }
}

/// A time as the pages show it: `2026-01-31 14:05 UTC`.
pub(crate) fn when(t: OffsetDateTime) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    format!("{} {:02}:{:02} UTC", t.date(), t.hour(), t.minute())
}

/// A date `YYYY-MM-DD` as the start of that day in UTC (with `end`, the start of the next
/// day: the date included), or an RFC 3339 time; `None` for anything else.
fn day_or_time(value: &str, end: bool) -> Option<OffsetDateTime> {
    let value = value.trim();
    if let Ok(t) = OffsetDateTime::parse(value, &time::format_description::well_known::Rfc3339) {
        return Some(t);
    }
    let mut parts = value.splitn(3, '-');
    let year: i32 = parts.next()?.parse().ok()?;
    let month: u8 = parts.next()?.parse().ok()?;
    let day: u8 = parts.next()?.parse().ok()?;
    let date =
        time::Date::from_calendar_date(year, time::Month::try_from(month).ok()?, day).ok()?;
    let date = if end { date.next_day()? } else { date };
    Some(date.midnight().assume_utc())
}

/// Ends the impersonation that `me` is (the account page's banner): the session signed
/// out, then to sign in again, back to the impersonated user's page.
pub(crate) async fn end_impersonation(
    ctx: &Ctx<'_>,
    me: &CurrentSession,
) -> Result<RawResponse, AccountError> {
    let cookies = ops::end_impersonation(ctx.config, me, &ctx.req.url, &ctx.req.cookies).await?;
    let back = admin_url(ctx, &[("user", &me.user_id)]);
    let mut r = RawResponse::redirect(format!(
        "{}?callbackUrl={}",
        ctx.auth_url("/signin"),
        encode_uri_component(&back)
    ));
    r.cookies = cookies;
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_times_of_the_forms() {
        let cases = [
            ("2026-03-01", false, Some("2026-03-01 00:00 UTC")),
            ("2026-03-01", true, Some("2026-03-02 00:00 UTC")),
            (" 2026-12-31 ", true, Some("2027-01-01 00:00 UTC")),
            (
                "2026-03-01T10:30:00+02:00",
                false,
                Some("2026-03-01 08:30 UTC"),
            ),
            ("2026-02-30", false, None),
            ("2026-13-01", false, None),
            ("2026-03", false, None),
            ("03/01/2026", false, None),
            ("", false, None),
            ("-1-1-1", false, None),
        ];
        for (value, end, want) in cases {
            assert_eq!(
                day_or_time(value, end).map(when).as_deref(),
                want,
                "{value:?} {end}"
            );
        }
    }

    #[test]
    fn every_notice_has_a_text() {
        for key in [
            "created",
            "created-without-link",
            "setup-link",
            "sessions-ended",
            "banned",
            "unbanned",
            "two-factor-reset",
            "deleted",
        ] {
            assert!(notice_text(key).is_some(), "{key}");
        }
        assert_eq!(notice_text("<script>"), None);
    }
}
