//! The GET actions of the pages: a redirect to the host's own page where one is configured
//! (Auth.js `pages`), else the built-in page (Auth.js `renderPage` in `lib/pages/index.ts`);
//! without the `pages` feature, a short plain-text answer that says which page to configure.

use super::Ctx;
use crate::cookies::encode_uri_component;
use crate::error::AuthError;
use crate::response::RawResponse;

#[cfg(feature = "pages")]
mod builtin;
#[cfg(feature = "pages")]
pub(crate) use builtin::error_page_response;
#[cfg(feature = "pages")]
pub(crate) use builtin::render_account_page;
#[cfg(feature = "pages")]
pub(crate) use builtin::render_invitation_page;
#[cfg(all(feature = "pages", feature = "passwords"))]
pub(crate) use builtin::render_password_page;
#[cfg(feature = "pages")]
pub(crate) use builtin::{render_admin_page, render_refusal_page};
#[cfg(all(feature = "pages", feature = "two-factor"))]
pub(crate) use builtin::{render_recovery_codes_page, render_two_factor_page};
#[cfg(feature = "pages")]
use builtin::{render_signin_page, render_signout_page, render_verify_request_page};
#[cfg(not(feature = "pages"))]
pub(crate) use plain::render_account_page;
#[cfg(not(feature = "pages"))]
pub(crate) use plain::render_invitation_page;
#[cfg(all(not(feature = "pages"), feature = "passwords"))]
pub(crate) use plain::render_password_page;
#[cfg(not(feature = "pages"))]
pub(crate) use plain::{
    error_page_response, render_signin_page, render_signout_page, render_verify_request_page,
};
#[cfg(not(feature = "pages"))]
pub(crate) use plain::{render_admin_page, render_refusal_page};
#[cfg(all(not(feature = "pages"), feature = "two-factor"))]
pub(crate) use plain::{render_recovery_codes_page, render_two_factor_page};

/// A provider the account page offers to link.
pub(crate) struct LinkView {
    /// `<basePath>/signin/<id>`.
    pub action: String,
    pub name: String,
}

/// What the account page shows besides the account's state (after a change).
#[derive(Default)]
pub(crate) struct PageState {
    pub notice: Option<&'static str>,
    pub error: Option<&'static str>,
    /// Where to sign in again and come back, when a change needs a recent sign-in.
    pub reauthenticate: Option<String>,
    #[cfg(feature = "two-factor")]
    pub enrolment: Option<crate::two_factor::TotpEnrolment>,
    pub recovery_codes: Option<Vec<String>>,
    /// A new API key's text, shown once.
    pub new_key: Option<String>,
}

/// What the account page shows (see `account_page.rs`).
pub(crate) struct AccountView<'a> {
    pub who: String,
    /// `<basePath>/account`.
    pub action: String,
    pub csrf_token: &'a str,
    pub accounts: &'a [super::account::LinkedAccount],
    pub email: Option<&'a str>,
    pub passkeys: &'a [super::account::Passkey],
    pub show_passkeys: bool,
    /// Whether removing a method is allowed (more than one left).
    pub can_unlink: bool,
    pub link: Vec<LinkView>,
    /// Database sessions (`None` with JWT sessions).
    pub sessions: Option<Vec<super::account::SessionInfo>>,
    /// Applications with access (authcore as an OpenID Provider).
    pub apps: Vec<super::account::AppInfo>,
    #[cfg(feature = "two-factor")]
    pub two_factor: Option<crate::two_factor::TwoFactorStatus>,
    /// With password accounts: the password section.
    pub password: Option<PasswordView>,
    /// The account's address (shown where it can be changed).
    pub address: Option<&'a str>,
    /// With organizations: the organizations section.
    pub organizations: Option<OrganizationsView>,
    /// The banner of an impersonated session.
    pub impersonation: Option<ImpersonationView>,
    pub state: PageState,
}

/// The account page's organizations section: the user's organizations (with their members
/// where the user may remove members, and an invitation form where they may invite), the
/// open invitations to their address, and their API keys.
#[derive(Debug, Clone, Default)]
pub(crate) struct OrganizationsView {
    pub memberships: Vec<MembershipRow>,
    pub invitations: Vec<InvitationRow>,
    pub keys: Vec<KeyRow>,
    /// Whether the user may make an organization.
    pub can_create: bool,
    /// The id of this rendering's key form, which makes one key at most.
    pub key_form: String,
}

/// One of the user's organizations.
#[derive(Debug, Clone)]
pub(crate) struct MembershipRow {
    pub id: String,
    pub name: String,
    pub roles: String,
    pub active: bool,
    pub can_invite: bool,
    /// The members, where the user may remove members.
    pub members: Option<Vec<MemberRow>>,
}

/// A member, as an administrator sees them.
#[derive(Debug, Clone)]
pub(crate) struct MemberRow {
    pub user_id: String,
    pub label: String,
    pub roles: String,
}

/// An open invitation to the user's address.
#[derive(Debug, Clone)]
pub(crate) struct InvitationRow {
    pub id: String,
    pub organization: String,
    pub roles: String,
}

/// One of the user's API keys.
#[derive(Debug, Clone)]
pub(crate) struct KeyRow {
    pub id: String,
    pub name: String,
    pub scope: String,
    pub permissions: String,
    pub state: String,
}

/// The account page's password section.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PasswordView {
    /// Whether the user has a password (else they may set a first).
    pub has: bool,
    /// The policy's shortest password.
    pub min_length: usize,
}

/// A form of password accounts' self-service pages.
#[cfg(feature = "passwords")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PasswordForm {
    SignUp,
    Forgot,
    /// A new password, by the reset link's token for the user.
    Reset {
        token: String,
        user: String,
    },
}

/// A page of password accounts' self-service (see `password.rs`).
#[cfg(feature = "passwords")]
pub(crate) enum PasswordPage {
    /// A form: sign-up, forgotten password, new password.
    Form {
        form: PasswordForm,
        /// What was wrong with the last post.
        error: Option<String>,
        status: http::StatusCode,
        /// The policy's shortest password.
        min_length: usize,
    },
    /// A message with one link on.
    Message {
        title: &'static str,
        lines: &'static [&'static str],
        link: (String, &'static str),
    },
}

/// The page of an invitation's link (see `invitation.rs`).
pub(crate) enum InvitationPage<'a> {
    /// The organization's name and the roles offered, with the form that accepts them
    /// (posting `token`).
    Offer {
        organization: &'a str,
        roles: &'a [String],
        token: &'a str,
    },
    /// Why it cannot be accepted (fixed texts: nothing from the request is echoed).
    Refused {
        status: http::StatusCode,
        title: &'static str,
        line: &'static str,
    },
}

/// What the administrators' page shows (see `admin_page.rs`): one of its views, with the
/// notice or error of the last change. Every text is escaped by the template.
pub(crate) struct AdminView<'a> {
    /// The administrator's name (email, else name, else id).
    pub who: String,
    /// `<basePath>/admin`.
    pub action: String,
    /// `<basePath>/account`.
    pub account: String,
    pub csrf_token: &'a str,
    /// Whether the audit log is stored (its view is linked).
    pub audit_stored: bool,
    pub notice: Option<&'static str>,
    /// A refused change's message (fixed texts of authcore's own).
    pub error: Option<String>,
    /// Where to sign in again and come back, when a change needs a recent sign-in.
    pub reauthenticate: Option<String>,
    pub users: Option<UsersView>,
    pub user: Option<UserView>,
    pub audit: Option<AuditView>,
    /// A set-up link just made, shown this once.
    pub setup_link: Option<SetupLinkView>,
}

/// A set-up link as the administrators' page shows it, once: the link, its end, how it
/// sets up the account and whether it was mailed.
#[derive(Clone)]
pub(crate) struct SetupLinkView {
    /// `None` when it was only mailed (to a user who already signs in).
    pub url: Option<String>,
    pub expires: String,
    /// What the link does, in a sentence.
    pub does: &'static str,
    pub mailed: bool,
}

impl std::fmt::Debug for SetupLinkView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SetupLinkView")
            .field("url", &self.url.as_ref().map(|_| "[redacted]"))
            .field("expires", &self.expires)
            .field("mailed", &self.mailed)
            .finish_non_exhaustive()
    }
}

/// The administrators' user search: its filters as given, the page of users, the next
/// page's link.
#[derive(Debug, Clone, Default)]
pub(crate) struct UsersView {
    pub q: String,
    pub organization: String,
    /// The providers to filter by: their ids, and whether the filter is the provider.
    pub providers: Vec<(String, bool)>,
    /// Whether organizations are on (their filter is shown).
    pub organizations: bool,
    pub rows: Vec<UserRow>,
    /// The next page's URL.
    pub next: Option<String>,
}

/// A user in the search's list.
#[derive(Debug, Clone)]
pub(crate) struct UserRow {
    /// `<basePath>/admin?user=<id>`.
    pub href: String,
    /// The email, else the name, else the id.
    pub label: String,
    /// The name (when the label is the email) and the id.
    pub detail: String,
}

/// One user, as an administrator sees them.
#[derive(Debug, Clone)]
pub(crate) struct UserView {
    pub id: String,
    /// The email, else the name, else the id.
    pub label: String,
    pub email: Option<String>,
    pub verified: bool,
    pub name: Option<String>,
    pub admin: bool,
    /// The administrator's own account (no change here: their account page makes them).
    pub own: bool,
    pub ban: Option<BanView>,
    /// Linked accounts (`github (oauth)`), magic links, a password.
    pub methods: Vec<String>,
    /// Passkeys: their names (or device types).
    pub passkeys: Vec<String>,
    /// Database sessions (`None` with JWT sessions).
    pub sessions: Option<Vec<super::account::SessionInfo>>,
    pub totp: bool,
    pub recovery_codes_left: u64,
    /// Organizations: name and roles.
    pub organizations: Vec<(String, String)>,
    /// Applications with access: name and scopes.
    pub apps: Vec<(String, String)>,
    pub groups: Vec<String>,
    /// Whether the impersonation button is offered (not an administrator, not banned, not
    /// oneself, a browser session).
    pub can_impersonate: bool,
    /// The ban form's earliest end date (`YYYY-MM-DD`, tomorrow).
    pub min_until: String,
}

impl UserView {
    /// Whether a ban holds on the user now.
    pub fn banned(&self) -> bool {
        self.ban.as_ref().is_some_and(|b| b.holds)
    }
}

/// A user's ban as the page shows it.
#[derive(Debug, Clone)]
pub(crate) struct BanView {
    pub reason: String,
    pub at: String,
    pub until: Option<String>,
    /// Who made it (their email, else name, else id).
    pub by: Option<String>,
    /// Whether it holds now (else it ended by itself).
    pub holds: bool,
}

/// The audit view: its filters as given, the records (newest first), the next page's link.
#[derive(Debug, Clone, Default)]
pub(crate) struct AuditView {
    pub kind: String,
    pub user: String,
    pub since: String,
    pub until: String,
    pub rows: Vec<AuditRow>,
    pub next: Option<String>,
}

/// One audit record as the page shows it.
#[derive(Debug, Clone)]
pub(crate) struct AuditRow {
    pub seq: u64,
    pub at: String,
    pub kind: String,
    pub actor: Option<String>,
    pub target: Option<String>,
    /// `<basePath>/admin?user=<target>`, when there is a target.
    pub target_href: Option<String>,
    pub data: String,
}

/// The banner of an impersonated session's account page: who is signed in as whom, until
/// when.
#[derive(Debug, Clone)]
pub(crate) struct ImpersonationView {
    pub user: String,
    pub admin: String,
    pub until: String,
}

/// A page that refuses the request (a 403 for the administrators' page): a title, a line,
/// at most one form (hidden fields and a button) and a link.
pub(crate) struct RefusalPage {
    pub status: http::StatusCode,
    pub title: &'static str,
    pub line: &'static str,
    pub form: Option<RefusalForm>,
    pub link: (String, &'static str),
}

/// The form of a [`RefusalPage`]: where it posts, its hidden fields (besides the CSRF
/// token) and its button.
pub(crate) struct RefusalForm {
    pub action: String,
    pub hidden: Vec<(&'static str, &'static str)>,
    pub submit: &'static str,
}

/// `?` or `&` to append a query to `url`.
fn query_sep(url: &str) -> char {
    if url.contains('?') { '&' } else { '?' }
}

pub(crate) fn signin_page(ctx: &Ctx<'_>) -> Result<RawResponse, AuthError> {
    if ctx.req.provider_id.is_some() {
        return Err(AuthError::unknown_action("Unsupported action"));
    }
    let q = &ctx.req.query;
    if let Some(page) = &ctx.config.pages.sign_in {
        let mut url = format!(
            "{page}{}callbackUrl={}",
            query_sep(page),
            encode_uri_component(&ctx.callback_url)
        );
        if let Some(e) = q.get("error") {
            url.push_str("&error=");
            url.push_str(&encode_uri_component(e));
        }
        return Ok(RawResponse::redirect(url));
    }
    render_signin_page(ctx)
}

pub(crate) fn signout_page(ctx: &Ctx<'_>) -> Result<RawResponse, AuthError> {
    if let Some(page) = &ctx.config.pages.sign_out {
        return Ok(RawResponse::redirect(page.clone()));
    }
    render_signout_page(ctx)
}

pub(crate) fn error_page(ctx: &Ctx<'_>) -> Result<RawResponse, AuthError> {
    let error = ctx.req.query.get("error");
    if let Some(page) = &ctx.config.pages.error {
        // Deviation (docs/architecture.md, deviations: `GET /error` redirect to `pages.error`):
        // the value is URL-encoded; a missing one stays `undefined`.
        let value = error.map_or_else(|| "undefined".into(), encode_uri_component);
        return Ok(RawResponse::redirect(format!(
            "{page}{}error={value}",
            query_sep(page)
        )));
    }
    error_page_response(
        &ctx.config.theme,
        ctx.req.origin(),
        ctx.auth_url("/signin"),
        error.unwrap_or(""),
    )
}

pub(crate) fn verify_request_page(ctx: &Ctx<'_>) -> Result<RawResponse, AuthError> {
    if let Some(page) = &ctx.config.pages.verify_request {
        let search = ctx
            .req
            .url
            .query()
            .map(|q| format!("?{q}"))
            .unwrap_or_default();
        return Ok(RawResponse::redirect(format!("{page}{search}")));
    }
    render_verify_request_page(ctx)
}

/// Without built-in pages: the page's status and one line of text naming the setting that
/// replaces it.
#[cfg(not(feature = "pages"))]
mod plain {
    use http::StatusCode;

    use super::Ctx;
    use crate::error::AuthError;
    use crate::response::RawResponse;
    use crate::types::Theme;

    /// A page of one fixed line (nothing from the request is echoed).
    fn text(status: StatusCode, line: &str) -> RawResponse {
        RawResponse::html(status, format!("<!DOCTYPE html><p>{line}</p>"))
    }

    fn missing(page: &str) -> Result<RawResponse, AuthError> {
        Ok(text(
            StatusCode::NOT_FOUND,
            &format!(
                "No {page} page: authcore is built without its `pages` feature; set `pages` in the configuration."
            ),
        ))
    }

    pub(crate) fn render_signin_page(_: &Ctx<'_>) -> Result<RawResponse, AuthError> {
        missing("sign-in")
    }

    pub(crate) fn render_signout_page(_: &Ctx<'_>) -> Result<RawResponse, AuthError> {
        missing("sign-out")
    }

    pub(crate) fn render_verify_request_page(_: &Ctx<'_>) -> Result<RawResponse, AuthError> {
        missing("verify-request")
    }

    pub(crate) fn render_account_page(
        _: &Ctx<'_>,
        _: &super::AccountView<'_>,
    ) -> Result<RawResponse, AuthError> {
        missing("account")
    }

    pub(crate) fn render_admin_page(
        _: &Ctx<'_>,
        _: &super::AdminView<'_>,
        _: StatusCode,
    ) -> Result<RawResponse, AuthError> {
        missing("administrators'")
    }

    /// The refusal's line with its status.
    pub(crate) fn render_refusal_page(
        _: &Ctx<'_>,
        page: &super::RefusalPage,
    ) -> Result<RawResponse, AuthError> {
        Ok(text(page.status, page.line))
    }

    #[cfg(feature = "passwords")]
    pub(crate) fn render_password_page(
        _: &Ctx<'_>,
        _: &super::PasswordPage,
    ) -> Result<RawResponse, AuthError> {
        missing("password")
    }

    /// A refusal's line with its status; the offer's page is the built-in pages' (JSON
    /// clients accept with a post of their own).
    pub(crate) fn render_invitation_page(
        _: &Ctx<'_>,
        page: &super::InvitationPage<'_>,
        _: String,
    ) -> Result<RawResponse, AuthError> {
        match page {
            super::InvitationPage::Offer { .. } => missing("invitation"),
            super::InvitationPage::Refused { status, line, .. } => Ok(text(*status, line)),
        }
    }

    #[cfg(feature = "two-factor")]
    pub(crate) fn render_two_factor_page(
        _: &Ctx<'_>,
        _: Option<&crate::two_factor::TotpEnrolment>,
        _: Option<&str>,
        _: Option<&str>,
    ) -> Result<RawResponse, AuthError> {
        missing("two-factor")
    }

    /// Where a redirect response goes (HTML-escaped, for a link), or `/`.
    #[cfg(feature = "two-factor")]
    fn redirect_target(r: &RawResponse) -> String {
        let location = r.redirect.as_deref().unwrap_or("/");
        location
            .replace('&', "&amp;")
            .replace('"', "&quot;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    }

    /// Without pages, the codes cannot be shown on a built-in page: a plain list (the codes
    /// are the user's own, shown once), with the session cookies and a link on.
    #[cfg(feature = "two-factor")]
    pub(crate) fn render_recovery_codes_page(
        _: &Ctx<'_>,
        codes: &[String],
        signed_in: RawResponse,
    ) -> Result<RawResponse, AuthError> {
        let next = redirect_target(&signed_in);
        let list: String = codes.iter().map(|c| format!("<li>{c}</li>")).collect();
        let mut r = text(
            StatusCode::OK,
            &format!("Recovery codes, shown once:<ul>{list}</ul><a href=\"{next}\">Continue</a>"),
        );
        r.cookies = signed_in.cookies;
        Ok(r)
    }

    /// The error type's status (as the built-in page's) and its name.
    pub(crate) fn error_page_response(
        _: &Theme,
        _: &str,
        _: String,
        error: &str,
    ) -> Result<RawResponse, AuthError> {
        let status = match error {
            "Configuration" => StatusCode::INTERNAL_SERVER_ERROR,
            "AccessDenied" | "Verification" => StatusCode::FORBIDDEN,
            _ => StatusCode::OK,
        };
        Ok(text(status, "Error"))
    }
}
