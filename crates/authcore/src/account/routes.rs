//! Account management as JSON routes, for the signed-in user of the request (their session
//! cookie) and, for every change, the CSRF token of `GET <basePath>/csrf` in the JSON body
//! (`csrfToken`), as Auth.js's own POSTs. The framework integrations mount them
//! (`authcore_axum::AuthRouterExt::account_routes`, `authcore_actix::account_routes`); any
//! other host hands a request to [`Auth::handle_account`].
//!
//! | route | body | answer |
//! |---|---|---|
//! | `GET /account` | — | the user's sign-in methods (`accounts`, `passkeys`, `email`) |
//! | `POST /account/unlink` | `{csrfToken, provider, providerAccountId}` | the methods left |
//! | `POST /account/passkeys/delete` | `{csrfToken, credentialID}` | the methods left |
//! | `POST /account/passkeys/rename` | `{csrfToken, credentialID, name}` | the methods (an empty name clears it) |
//! | `POST /account/delete` | `{csrfToken}` | `{}`; the user, their accounts, sessions and passkeys are gone |
//! | `GET /account/sessions` | — | the user's sessions (`id`, `createdAt`, `lastSeenAt`, `userAgent`, `expires`, `current`) |
//! | `POST /account/sessions/revoke` | `{csrfToken, id}` | the sessions left |
//! | `POST /account/sessions/revoke-others` | `{csrfToken}` | the sessions left ("sign out everywhere else") |
//! | `GET /account/apps` | — | the applications with access (`clientId`, `name`, `scopes`, `grantedAt`, `lastGrantedAt`) |
//! | `POST /account/apps/revoke` | `{csrfToken, clientId}` | the applications left; the revoked one's tokens are void |
//! | `GET /account/two-factor` | — | the user's second factors (`totp`, `recoveryCodesLeft`, `passkeys`) |
//! | `POST /account/two-factor/totp` | `{csrfToken}` | a TOTP enrolment (`secret`, `uri`, `qrSvg`), bound to this session |
//! | `POST /account/two-factor/totp/confirm` | `{csrfToken, code}` | `{recoveryCodes}` (shown once): TOTP is on |
//! | `POST /account/two-factor/recovery-codes` | `{csrfToken, code}` | `{recoveryCodes}`: a new set, the old one void |
//! | `POST /account/two-factor/totp/disable` | `{csrfToken, code}` | the second factors left |
//! | `POST /account/password` | `{csrfToken, currentPassword, newPassword}` | the methods; every other session ends (password accounts) |
//! | `POST /account/email` | `{csrfToken, email}` | `{"status":"sent"}`: a link to the new address makes it the account's (password accounts) |
//! | `GET /account/organizations` | — | `{organizations, active, invitations}`: the memberships (`organization{id,slug,name,createdAt}`, `roles`, `teams`, `permissions`), the session's active organization's id (or `null`), the open invitations to the user's verified address (`id`, `organization{id,name}`, `roles`, `expires`) |
//! | `POST /account/organizations/create` | `{csrfToken, name, slug?}` | the organization; the user is its owner |
//! | `POST /account/organizations/active` | `{csrfToken, organizationId}` (an id or `null`) | `{active}`: the session's active organization (`null` clears it), with the session cookie it needs |
//! | `GET /account/organizations/members?organizationId=` | — | `{members, teams, invitations}` (`member:read`); invitations without their tokens |
//! | `POST /account/organizations/update` | `{csrfToken, organizationId, name?, slug?}` | the organization (`organization:update`) |
//! | `POST /account/organizations/delete` | `{csrfToken, organizationId}` | `{}`; everything in it is gone (`organization:delete`) |
//! | `POST /account/organizations/invite` | `{csrfToken, organizationId, email, roles?, teams?}` | the invitation (`id`, `email`, `roles`, `teams`, `createdAt`, `expires`, `status`) and `mailed`; its link goes by mail only (`member:invite`) |
//! | `POST /account/organizations/invitations/revoke` | `{csrfToken, invitationId}` | `{}` (`member:invite`) |
//! | `POST /account/organizations/invitations/accept` | `{csrfToken, invitationId}` | the membership: one of the user's listed invitations accepted |
//! | `POST /account/organizations/members/roles` | `{csrfToken, organizationId, userId, roles}` | `{}` (`member:update`) |
//! | `POST /account/organizations/members/remove` | `{csrfToken, organizationId, userId}` | `{}` (`member:remove`; the user's own id leaves) |
//! | `POST /account/organizations/members/teams` | `{csrfToken, organizationId, userId, teams}` | `{}` (`team:manage`) |
//! | `POST /account/organizations/teams/create` | `{csrfToken, organizationId, name}` | the team (`team:manage`) |
//! | `POST /account/organizations/teams/delete` | `{csrfToken, organizationId, teamId}` | `{}` (`team:manage`) |
//! | `GET /account/api-keys?organizationId=` | — | the user's own keys, or the organization's (`id`, `name`, `prefix`, `userId`, `organizationId`, `permissions`, `createdAt`, `expires`, `lastUsedAt`, `revokedAt`) |
//! | `POST /account/api-keys/create` | `{csrfToken, name, organizationId?, permissions?, expiresInDays?}` | the key as listed and `key`, its text: shown this once |
//! | `POST /account/api-keys/revoke` | `{csrfToken, id}` | `{}` |
//!
//! The sensitive changes ([`SensitiveOperation`](super::SensitiveOperation): unlink, delete
//! a passkey, delete the account, revoke an app, every two-factor change, make an API key,
//! delete an organization) need a recent sign-in that, for a user with a second factor,
//! proved it; else `401 ReauthenticationRequired`. The two-factor changes after enrolment also ask for a current
//! code (`code`: TOTP or recovery code). Every code is counted against the user's and the
//! client's second-step attempts, and every change against the per-client request limit.
//!
//! Errors are JSON `{"error": <code>}`: `400 InvalidRequest` (a body that is not the JSON
//! above; `InvalidName`: a passkey name over 64 characters), `401 SessionRequired` (signed
//! out), `403 MissingCSRF`, `404 NotFound` (not the user's), `405 MethodNotAllowed`,
//! `409 LastSignInMethod` (the only way in left), `413 BodyTooLarge` (over the configured
//! body limit), `501 NoAdapter` / `501 NoDatabaseSessions` (no database),
//! `503 AdapterError` (logged); for second factors `400 InvalidCode`, `401
//! ReauthenticationRequired` (sign in again first), `409 AlreadyEnrolled` / `409
//! NotEnrolled`, `429 TooManyAttempts`, `501 TwoFactorOff` (not configured); for
//! passwords `400 WrongPassword` (the current password), `400 PasswordPolicy` with a
//! `code` (see [`PolicyViolation::code`](crate::passwords::PolicyViolation::code)), `400
//! InvalidEmail`, `501 PasswordsOff` (no password accounts, or no email provider); for
//! organizations (see [`crate::organizations`]) `403 Forbidden` (the member lacks the
//! permission, or would grant above their own), `404 NotFound` also for another
//! organization's ids (as for ids that do not exist), `409 LastOwner`, `409 SlugTaken`, `400
//! InvalidValue` (a name, slug, role, team or permission that is not valid), `400
//! InvalidInvitation` (used, expired, revoked or unknown), `403 WrongAddress` (another
//! address's invitation), `503 MailFailed`, `501 OrganizationsOff` (not configured). Every
//! answer is about one user and is never cached.

use bytes::Bytes;
use http::{HeaderValue, Method, StatusCode, header};
use http_body_util::{BodyExt as _, Full, Limited};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;
use time::OffsetDateTime;

use super::{AccountError, CurrentSession, InvitationSpec};
use crate::adapter::{ApiKey, Invitation, InvitationStatus};
use crate::error::BoxError;
use crate::handler::Auth;
use crate::organizations::API_KEY_PREFIX;
use crate::response::ResponseBody;

/// One of the account-management routes (the table of [`crate::account`]'s routes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AccountRoute {
    /// `GET /account`: the sign-in methods.
    Methods,
    /// `POST /account/unlink`.
    Unlink,
    /// `POST /account/passkeys/delete`.
    DeletePasskey,
    /// `POST /account/passkeys/rename`.
    RenamePasskey,
    /// `POST /account/delete`.
    DeleteUser,
    /// `GET /account/sessions`.
    Sessions,
    /// `POST /account/sessions/revoke`.
    RevokeSession,
    /// `POST /account/sessions/revoke-others`.
    RevokeOtherSessions,
    /// `GET /account/apps`.
    Apps,
    /// `POST /account/apps/revoke`.
    RevokeApp,
    /// `GET /account/two-factor`.
    TwoFactor,
    /// `POST /account/two-factor/totp`.
    StartTotp,
    /// `POST /account/two-factor/totp/confirm`.
    ConfirmTotp,
    /// `POST /account/two-factor/recovery-codes`.
    RegenerateRecoveryCodes,
    /// `POST /account/two-factor/totp/disable`.
    DisableTotp,
    /// `POST /account/password`.
    ChangePassword,
    /// `POST /account/email`.
    ChangeEmail,
    /// `GET /account/organizations`.
    Organizations,
    /// `POST /account/organizations/create`.
    CreateOrganization,
    /// `POST /account/organizations/active`.
    SetActiveOrganization,
    /// `GET /account/organizations/members`.
    Members,
    /// `POST /account/organizations/update`.
    UpdateOrganization,
    /// `POST /account/organizations/delete`.
    DeleteOrganization,
    /// `POST /account/organizations/invite`.
    Invite,
    /// `POST /account/organizations/invitations/revoke`.
    RevokeInvitation,
    /// `POST /account/organizations/invitations/accept`.
    AcceptInvitation,
    /// `POST /account/organizations/members/roles`.
    SetMemberRoles,
    /// `POST /account/organizations/members/remove`.
    RemoveMember,
    /// `POST /account/organizations/members/teams`.
    SetMemberTeams,
    /// `POST /account/organizations/teams/create`.
    CreateTeam,
    /// `POST /account/organizations/teams/delete`.
    DeleteTeam,
    /// `GET /account/api-keys`.
    ApiKeys,
    /// `POST /account/api-keys/create`.
    CreateApiKey,
    /// `POST /account/api-keys/revoke`.
    RevokeApiKey,
}

impl AccountRoute {
    /// Every route, for an integration to mount.
    pub const ALL: [AccountRoute; 34] = [
        AccountRoute::Methods,
        AccountRoute::Unlink,
        AccountRoute::DeletePasskey,
        AccountRoute::RenamePasskey,
        AccountRoute::DeleteUser,
        AccountRoute::Sessions,
        AccountRoute::RevokeSession,
        AccountRoute::RevokeOtherSessions,
        AccountRoute::Apps,
        AccountRoute::RevokeApp,
        AccountRoute::TwoFactor,
        AccountRoute::StartTotp,
        AccountRoute::ConfirmTotp,
        AccountRoute::RegenerateRecoveryCodes,
        AccountRoute::DisableTotp,
        AccountRoute::ChangePassword,
        AccountRoute::ChangeEmail,
        AccountRoute::Organizations,
        AccountRoute::CreateOrganization,
        AccountRoute::SetActiveOrganization,
        AccountRoute::Members,
        AccountRoute::UpdateOrganization,
        AccountRoute::DeleteOrganization,
        AccountRoute::Invite,
        AccountRoute::RevokeInvitation,
        AccountRoute::AcceptInvitation,
        AccountRoute::SetMemberRoles,
        AccountRoute::RemoveMember,
        AccountRoute::SetMemberTeams,
        AccountRoute::CreateTeam,
        AccountRoute::DeleteTeam,
        AccountRoute::ApiKeys,
        AccountRoute::CreateApiKey,
        AccountRoute::RevokeApiKey,
    ];

    /// The route's path.
    pub fn path(self) -> &'static str {
        match self {
            AccountRoute::Methods => "/account",
            AccountRoute::Unlink => "/account/unlink",
            AccountRoute::DeletePasskey => "/account/passkeys/delete",
            AccountRoute::RenamePasskey => "/account/passkeys/rename",
            AccountRoute::DeleteUser => "/account/delete",
            AccountRoute::Sessions => "/account/sessions",
            AccountRoute::RevokeSession => "/account/sessions/revoke",
            AccountRoute::RevokeOtherSessions => "/account/sessions/revoke-others",
            AccountRoute::Apps => "/account/apps",
            AccountRoute::RevokeApp => "/account/apps/revoke",
            AccountRoute::TwoFactor => "/account/two-factor",
            AccountRoute::StartTotp => "/account/two-factor/totp",
            AccountRoute::ConfirmTotp => "/account/two-factor/totp/confirm",
            AccountRoute::RegenerateRecoveryCodes => "/account/two-factor/recovery-codes",
            AccountRoute::DisableTotp => "/account/two-factor/totp/disable",
            AccountRoute::ChangePassword => "/account/password",
            AccountRoute::ChangeEmail => "/account/email",
            AccountRoute::Organizations => "/account/organizations",
            AccountRoute::CreateOrganization => "/account/organizations/create",
            AccountRoute::SetActiveOrganization => "/account/organizations/active",
            AccountRoute::Members => "/account/organizations/members",
            AccountRoute::UpdateOrganization => "/account/organizations/update",
            AccountRoute::DeleteOrganization => "/account/organizations/delete",
            AccountRoute::Invite => "/account/organizations/invite",
            AccountRoute::RevokeInvitation => "/account/organizations/invitations/revoke",
            AccountRoute::AcceptInvitation => "/account/organizations/invitations/accept",
            AccountRoute::SetMemberRoles => "/account/organizations/members/roles",
            AccountRoute::RemoveMember => "/account/organizations/members/remove",
            AccountRoute::SetMemberTeams => "/account/organizations/members/teams",
            AccountRoute::CreateTeam => "/account/organizations/teams/create",
            AccountRoute::DeleteTeam => "/account/organizations/teams/delete",
            AccountRoute::ApiKeys => "/account/api-keys",
            AccountRoute::CreateApiKey => "/account/api-keys/create",
            AccountRoute::RevokeApiKey => "/account/api-keys/revoke",
        }
    }

    /// The route's method: `GET` for the reads, `POST` for the changes.
    pub fn method(self) -> Method {
        match self {
            AccountRoute::Methods
            | AccountRoute::Sessions
            | AccountRoute::Apps
            | AccountRoute::TwoFactor
            | AccountRoute::Organizations
            | AccountRoute::Members
            | AccountRoute::ApiKeys => Method::GET,
            _ => Method::POST,
        }
    }
}

/// An error answer of these routes: its status, error code and, for a password the policy
/// refuses, the rule's code.
pub(crate) struct Refusal(
    pub(crate) StatusCode,
    pub(crate) &'static str,
    pub(crate) Option<&'static str>,
);

impl From<AccountError> for Refusal {
    fn from(e: AccountError) -> Self {
        match e {
            AccountError::NotFound => Refusal(StatusCode::NOT_FOUND, "NotFound", None),
            AccountError::LastSignInMethod => {
                Refusal(StatusCode::CONFLICT, "LastSignInMethod", None)
            }
            AccountError::NoAdapter => Refusal(StatusCode::NOT_IMPLEMENTED, "NoAdapter", None),
            AccountError::InvalidName => Refusal(StatusCode::BAD_REQUEST, "InvalidName", None),
            AccountError::NoDatabaseSessions => {
                Refusal(StatusCode::NOT_IMPLEMENTED, "NoDatabaseSessions", None)
            }
            AccountError::TwoFactorOff => {
                Refusal(StatusCode::NOT_IMPLEMENTED, "TwoFactorOff", None)
            }
            AccountError::AlreadyEnrolled => Refusal(StatusCode::CONFLICT, "AlreadyEnrolled", None),
            AccountError::NotEnrolled => Refusal(StatusCode::CONFLICT, "NotEnrolled", None),
            AccountError::InvalidCode => Refusal(StatusCode::BAD_REQUEST, "InvalidCode", None),
            AccountError::TooManyAttempts { .. } => {
                Refusal(StatusCode::TOO_MANY_REQUESTS, "TooManyAttempts", None)
            }
            AccountError::ReauthenticationRequired => {
                Refusal(StatusCode::UNAUTHORIZED, "ReauthenticationRequired", None)
            }
            AccountError::PasswordsOff => {
                Refusal(StatusCode::NOT_IMPLEMENTED, "PasswordsOff", None)
            }
            AccountError::WrongPassword => Refusal(StatusCode::BAD_REQUEST, "WrongPassword", None),
            #[cfg(feature = "passwords")]
            AccountError::WeakPassword(v) => {
                Refusal(StatusCode::BAD_REQUEST, "PasswordPolicy", Some(v.code()))
            }
            AccountError::InvalidEmail => Refusal(StatusCode::BAD_REQUEST, "InvalidEmail", None),
            AccountError::OrganizationsOff => {
                Refusal(StatusCode::NOT_IMPLEMENTED, "OrganizationsOff", None)
            }
            AccountError::Forbidden => Refusal(StatusCode::FORBIDDEN, "Forbidden", None),
            AccountError::LastOwner => Refusal(StatusCode::CONFLICT, "LastOwner", None),
            AccountError::SlugTaken => Refusal(StatusCode::CONFLICT, "SlugTaken", None),
            AccountError::ClientIdTaken => Refusal(StatusCode::CONFLICT, "ClientIdTaken", None),
            AccountError::InvalidValue(_) => Refusal(StatusCode::BAD_REQUEST, "InvalidValue", None),
            AccountError::InvalidInvitation => {
                Refusal(StatusCode::BAD_REQUEST, "InvalidInvitation", None)
            }
            AccountError::WrongAddress => Refusal(StatusCode::FORBIDDEN, "WrongAddress", None),
            AccountError::MailFailed => {
                Refusal(StatusCode::SERVICE_UNAVAILABLE, "MailFailed", None)
            }
            AccountError::AdminOff => Refusal(StatusCode::NOT_IMPLEMENTED, "AdminOff", None),
            AccountError::AuditOff => Refusal(StatusCode::NOT_IMPLEMENTED, "AuditOff", None),
            AccountError::SessionRequired => {
                Refusal(StatusCode::UNAUTHORIZED, "SessionRequired", None)
            }
            AccountError::InvalidApiKey => Refusal(StatusCode::UNAUTHORIZED, "InvalidApiKey", None),
            AccountError::Impersonating => Refusal(StatusCode::FORBIDDEN, "Impersonating", None),
            AccountError::TargetIsAdmin => Refusal(StatusCode::FORBIDDEN, "TargetIsAdmin", None),
            AccountError::OwnAccount => Refusal(StatusCode::CONFLICT, "OwnAccount", None),
            AccountError::SetUpAlready => Refusal(StatusCode::CONFLICT, "SetUpAlready", None),
            AccountError::Banned => Refusal(StatusCode::CONFLICT, "Banned", None),
            other => {
                tracing::error!(error = %other, "account management failed");
                Refusal(StatusCode::SERVICE_UNAVAILABLE, "AdapterError", None)
            }
        }
    }
}

/// `value` as a JSON answer with `status`, never cached (the header of Auth.js's session
/// answer).
pub(crate) fn json_response(
    status: StatusCode,
    value: &impl Serialize,
) -> http::Response<ResponseBody> {
    let (status, body) = match serde_json::to_vec(value) {
        Ok(body) => (status, body),
        Err(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            br#"{"error":"InternalError"}"#.to_vec(),
        ),
    };
    let mut response = http::Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, no-cache, no-store"),
    );
    response
}

/// The body of a change: the fields of its route and the CSRF token.
#[derive(serde::Deserialize)]
struct Change<T> {
    #[serde(default, rename = "csrfToken")]
    csrf_token: String,
    #[serde(flatten)]
    fields: T,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct UnlinkFields {
    provider: String,
    provider_account_id: String,
}

#[derive(serde::Deserialize)]
struct PasskeyFields {
    #[serde(rename = "credentialID")]
    credential_id: String,
}

#[derive(serde::Deserialize)]
struct RenameFields {
    #[serde(rename = "credentialID")]
    credential_id: String,
    name: String,
}

#[derive(serde::Deserialize)]
struct RevokeFields {
    id: String,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct AppFields {
    client_id: String,
}

#[derive(serde::Deserialize)]
struct NoFields {}

#[cfg(feature = "passwords")]
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct PasswordFields {
    #[serde(default)]
    current_password: String,
    new_password: String,
}

#[cfg(feature = "passwords")]
#[derive(serde::Deserialize)]
struct EmailFields {
    email: String,
}

#[derive(serde::Deserialize)]
struct CodeFields {
    code: String,
}

#[derive(serde::Deserialize)]
struct CreateOrganizationFields {
    name: String,
    #[serde(default)]
    slug: Option<String>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct ActiveFields {
    organization_id: Option<String>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct OrganizationFields {
    organization_id: String,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct UpdateOrganizationFields {
    organization_id: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    slug: Option<String>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct InviteFields {
    organization_id: String,
    email: String,
    #[serde(default)]
    roles: Vec<String>,
    #[serde(default)]
    teams: Vec<String>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct InvitationFields {
    invitation_id: String,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct MemberFields {
    organization_id: String,
    user_id: String,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct MemberRolesFields {
    organization_id: String,
    user_id: String,
    roles: Vec<String>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct MemberTeamsFields {
    organization_id: String,
    user_id: String,
    teams: Vec<String>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct NewTeamFields {
    organization_id: String,
    name: String,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct TeamFields {
    organization_id: String,
    team_id: String,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct NewApiKeyFields {
    name: String,
    #[serde(default)]
    organization_id: Option<String>,
    #[serde(default)]
    permissions: Vec<String>,
    #[serde(default)]
    expires_in_days: Option<u32>,
}

/// An organization's invitation as its members see it: no token, no hash of one.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct InvitationView<'a> {
    id: &'a str,
    email: &'a str,
    roles: &'a [String],
    teams: &'a [String],
    #[serde(with = "time::serde::rfc3339")]
    created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    expires: OffsetDateTime,
    /// `pending`, `expired`, `accepted` or `revoked`.
    status: &'static str,
}

impl<'a> InvitationView<'a> {
    fn of(i: &'a Invitation, now: OffsetDateTime) -> Self {
        InvitationView {
            id: &i.id,
            email: &i.email,
            roles: &i.roles,
            teams: &i.teams,
            created_at: i.created_at,
            expires: i.expires,
            status: match i.status {
                InvitationStatus::Pending if i.is_open(now) => "pending",
                InvitationStatus::Pending => "expired",
                InvitationStatus::Accepted { .. } => "accepted",
                InvitationStatus::Revoked { .. } => "revoked",
            },
        }
    }
}

/// An invitation just made, and whether its link was mailed.
#[derive(Serialize)]
struct SentView<'a> {
    #[serde(flatten)]
    invitation: InvitationView<'a>,
    mailed: bool,
}

/// An organization named in an invitation to the user.
#[derive(Serialize)]
struct OrganizationName<'a> {
    id: &'a str,
    name: &'a str,
}

/// An open invitation to the user's address.
#[derive(Serialize)]
struct OwnInvitationView<'a> {
    id: &'a str,
    organization: OrganizationName<'a>,
    roles: &'a [String],
    #[serde(with = "time::serde::rfc3339")]
    expires: OffsetDateTime,
}

/// An API key as listed: its visible part, never its hash.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ApiKeyView<'a> {
    id: &'a str,
    name: &'a str,
    /// `ak_<id>`: how the key's text starts.
    prefix: String,
    user_id: &'a str,
    organization_id: Option<&'a str>,
    permissions: &'a [String],
    #[serde(with = "time::serde::rfc3339")]
    created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    expires: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339::option")]
    last_used_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339::option")]
    revoked_at: Option<OffsetDateTime>,
}

impl<'a> ApiKeyView<'a> {
    fn of(k: &'a ApiKey) -> Self {
        ApiKeyView {
            id: &k.id,
            name: &k.name,
            prefix: format!("{API_KEY_PREFIX}{}", k.id),
            user_id: &k.user_id,
            organization_id: k.organization_id.as_deref(),
            permissions: &k.permissions,
            created_at: k.created_at,
            expires: k.expires,
            last_used_at: k.last_used_at,
            revoked_at: k.revoked_at,
        }
    }
}

/// An API key just made, with its text (shown this once).
#[derive(Serialize)]
struct NewApiKeyView<'a> {
    #[serde(flatten)]
    listed: ApiKeyView<'a>,
    key: &'a str,
}

/// A request to an account route, read once: the URI and headers that name the session, and
/// the body of a change.
struct AccountRequest<'a> {
    auth: &'a Auth,
    uri: http::Uri,
    headers: http::HeaderMap,
    body: Bytes,
    /// The client as the per-client limits count it
    /// ([`client_subject`](crate::ratelimit::client_subject)).
    client: Option<String>,
}

impl AccountRequest<'_> {
    /// Runs a code check as one attempt of the client under the second step's per-client
    /// limit (the per-user one is counted by the check): given back when it succeeds.
    #[cfg(feature = "two-factor")]
    async fn per_client<T>(
        &self,
        check: impl Future<Output = Result<T, AccountError>>,
    ) -> Result<T, AccountError> {
        use crate::actions::limits::{self, Limit};
        let c = &*self.auth.config().inner;
        if let Some(client) = &self.client {
            limits::count(c, Limit::SecondFactorPerClient, client)
                .await
                .map_err(|retry_after| AccountError::TooManyAttempts { retry_after })?;
        }
        let result = check.await;
        // A success, or a refusal before any code was checked, is no guess.
        if matches!(result, Ok(_) | Err(AccountError::ReauthenticationRequired))
            && let Some(client) = &self.client
        {
            limits::give_back(c, Limit::SecondFactorPerClient, client).await;
        }
        result
    }

    /// The signed-in user and session of a read.
    async fn reader(&self) -> Result<CurrentSession, Refusal> {
        self.auth
            .current_session(&self.uri, &self.headers)
            .await
            .ok_or(Refusal(StatusCode::UNAUTHORIZED, "SessionRequired", None))
    }

    /// The body of a change and its signed-in user and session, once the body parsed and
    /// its CSRF token matched the request's cookie: the one check every change passes.
    async fn change<T: DeserializeOwned>(&self) -> Result<(T, CurrentSession), Refusal> {
        let body: Change<T> = serde_json::from_slice(&self.body)
            .map_err(|_| Refusal(StatusCode::BAD_REQUEST, "InvalidRequest", None))?;
        let me = self.reader().await?;
        if !self
            .auth
            .verify_csrf(&self.uri, &self.headers, &body.csrf_token)
            .await
        {
            return Err(Refusal(StatusCode::FORBIDDEN, "MissingCSRF", None));
        }
        Ok((body.fields, me))
    }

    /// The last value of query parameter `name`, when not empty.
    fn query(&self, name: &str) -> Option<String> {
        query_param(&self.uri, name)
    }

    /// The user's sign-in methods, the answer of the calls that change them.
    async fn methods_of(&self, user_id: &str) -> Result<http::Response<ResponseBody>, Refusal> {
        let methods = self.auth.sign_in_methods(user_id).await?;
        Ok(json_response(StatusCode::OK, &methods))
    }

    /// The user's sessions, the request's marked.
    async fn sessions_of(
        &self,
        me: &CurrentSession,
    ) -> Result<http::Response<ResponseBody>, Refusal> {
        let list = self
            .auth
            .sessions(&me.user_id, me.session_id.as_deref())
            .await?;
        Ok(json_response(StatusCode::OK, &list))
    }

    /// The user's organizations, the session's active one and the open invitations to the
    /// user's address.
    async fn organizations_of(
        &self,
        me: &CurrentSession,
    ) -> Result<http::Response<ResponseBody>, Refusal> {
        let auth = self.auth;
        let organizations = auth.organizations_of(&me.user_id).await?;
        let active = auth
            .active_organization(&self.uri, &self.headers)
            .await?
            .map(|m| m.organization.id);
        let open = crate::actions::organizations::invitations_for_user_with_organizations(
            &auth.config().inner,
            &me.user_id,
        )
        .await?;
        let invitations: Vec<OwnInvitationView<'_>> = open
            .iter()
            .map(|(i, org)| OwnInvitationView {
                id: &i.id,
                organization: OrganizationName {
                    id: &org.id,
                    name: &org.name,
                },
                roles: &i.roles,
                expires: i.expires,
            })
            .collect();
        let answer = json!({
            "organizations": organizations,
            "active": active,
            "invitations": invitations,
        });
        Ok(json_response(StatusCode::OK, &answer))
    }

    /// Makes `organization_id` the session's active organization: `{active}` with the
    /// cookies that carry it.
    async fn set_active(
        &self,
        organization_id: Option<&str>,
    ) -> Result<http::Response<ResponseBody>, Refusal> {
        let cookies = self
            .auth
            .set_active_organization(&self.uri, &self.headers, organization_id)
            .await?;
        let mut r = json_response(StatusCode::OK, &json!({ "active": organization_id }));
        for cookie in cookies {
            r.headers_mut().append(header::SET_COOKIE, cookie);
        }
        Ok(r)
    }

    /// The members, teams and invitations of the organization of the query's
    /// `organizationId`.
    async fn members_of(
        &self,
        me: &CurrentSession,
    ) -> Result<http::Response<ResponseBody>, Refusal> {
        let auth = self.auth;
        let org = self.query("organizationId").ok_or(Refusal(
            StatusCode::BAD_REQUEST,
            "InvalidRequest",
            None,
        ))?;
        let members = auth.members(&me.user_id, &org).await?;
        let teams = auth.teams(&me.user_id, &org).await?;
        let invitations = auth.invitations(Some(&me.user_id), Some(&org)).await?;
        let now = OffsetDateTime::now_utc();
        let invitations: Vec<InvitationView<'_>> = invitations
            .iter()
            .map(|i| InvitationView::of(i, now))
            .collect();
        Ok(json_response(
            StatusCode::OK,
            &json!({ "members": members, "teams": teams, "invitations": invitations }),
        ))
    }

    /// Makes an API key: the answer holds its text, this once.
    async fn create_api_key(
        &self,
        me: &CurrentSession,
        f: NewApiKeyFields,
    ) -> Result<http::Response<ResponseBody>, Refusal> {
        let lifetime = match f.expires_in_days {
            None => None,
            Some(0) => {
                let e = AccountError::InvalidValue("an API key lives at least a day".into());
                return Err(e.into());
            }
            Some(days) => Some(std::time::Duration::from_secs(u64::from(days) * 86_400)),
        };
        let made = self
            .auth
            .create_api_key(
                me,
                f.organization_id.as_deref(),
                &f.name,
                &f.permissions,
                lifetime,
            )
            .await?;
        let view = NewApiKeyView {
            listed: ApiKeyView::of(&made.key),
            key: made.secret.expose(),
        };
        Ok(json_response(StatusCode::OK, &view))
    }

    async fn answer(&self, route: AccountRoute) -> Result<http::Response<ResponseBody>, Refusal> {
        let auth = self.auth;
        match route {
            AccountRoute::Methods => self.methods_of(&self.reader().await?.user_id).await,
            AccountRoute::Unlink => {
                let (f, me) = self.change::<UnlinkFields>().await?;
                auth.unlink_account(&me, &f.provider, &f.provider_account_id)
                    .await?;
                self.methods_of(&me.user_id).await
            }
            AccountRoute::DeletePasskey => {
                let (f, me) = self.change::<PasskeyFields>().await?;
                auth.delete_passkey(&me, &f.credential_id).await?;
                self.methods_of(&me.user_id).await
            }
            AccountRoute::RenamePasskey => {
                let (f, me) = self.change::<RenameFields>().await?;
                auth.rename_passkey(&me.user_id, &f.credential_id, &f.name)
                    .await?;
                self.methods_of(&me.user_id).await
            }
            AccountRoute::DeleteUser => {
                let (NoFields {}, me) = self.change().await?;
                auth.delete_user(&me).await?;
                Ok(json_response(StatusCode::OK, &json!({})))
            }
            AccountRoute::Sessions => self.sessions_of(&self.reader().await?).await,
            AccountRoute::RevokeSession => {
                let (f, me) = self.change::<RevokeFields>().await?;
                auth.revoke_session(&me.user_id, &f.id).await?;
                self.sessions_of(&me).await
            }
            AccountRoute::RevokeOtherSessions => {
                let (NoFields {}, me) = self.change().await?;
                auth.revoke_other_sessions(&me.user_id, me.session_id.as_deref())
                    .await?;
                self.sessions_of(&me).await
            }
            AccountRoute::Apps => {
                let me = self.reader().await?;
                let apps = auth.apps_with_access(&me.user_id).await?;
                Ok(json_response(StatusCode::OK, &apps))
            }
            AccountRoute::RevokeApp => {
                let (f, me) = self.change::<AppFields>().await?;
                auth.revoke_app_access(&me, &f.client_id).await?;
                let apps = auth.apps_with_access(&me.user_id).await?;
                Ok(json_response(StatusCode::OK, &apps))
            }
            #[cfg(feature = "two-factor")]
            AccountRoute::TwoFactor => {
                let me = self.reader().await?;
                let status = auth.two_factor_status(&me.user_id).await?;
                Ok(json_response(StatusCode::OK, &status))
            }
            #[cfg(feature = "two-factor")]
            AccountRoute::StartTotp => {
                let (NoFields {}, me) = self.change().await?;
                let e = auth.start_totp_enrolment(&me).await?;
                Ok(json_response(
                    StatusCode::OK,
                    &json!({ "secret": e.secret, "uri": e.uri, "qrSvg": e.qr_svg }),
                ))
            }
            #[cfg(feature = "two-factor")]
            AccountRoute::ConfirmTotp => {
                let (f, me) = self.change::<CodeFields>().await?;
                let codes = self.per_client(auth.confirm_totp(&me, &f.code)).await?;
                Ok(json_response(
                    StatusCode::OK,
                    &json!({ "recoveryCodes": codes }),
                ))
            }
            #[cfg(feature = "two-factor")]
            AccountRoute::RegenerateRecoveryCodes => {
                let (f, me) = self.change::<CodeFields>().await?;
                let codes = self
                    .per_client(auth.regenerate_recovery_codes(&me, &f.code))
                    .await?;
                Ok(json_response(
                    StatusCode::OK,
                    &json!({ "recoveryCodes": codes }),
                ))
            }
            #[cfg(feature = "two-factor")]
            AccountRoute::DisableTotp => {
                let (f, me) = self.change::<CodeFields>().await?;
                self.per_client(auth.disable_totp(&me, &f.code)).await?;
                let status = auth.two_factor_status(&me.user_id).await?;
                Ok(json_response(StatusCode::OK, &status))
            }
            #[cfg(feature = "passwords")]
            AccountRoute::ChangePassword => {
                let (f, me) = self.change::<PasswordFields>().await?;
                auth.change_password(&me, &f.current_password, &f.new_password)
                    .await?;
                self.methods_of(&me.user_id).await
            }
            #[cfg(feature = "passwords")]
            AccountRoute::ChangeEmail => {
                let (f, me) = self.change::<EmailFields>().await?;
                auth.change_email(&me, &f.email).await?;
                Ok(json_response(StatusCode::OK, &json!({ "status": "sent" })))
            }
            AccountRoute::Organizations => self.organizations_of(&self.reader().await?).await,
            AccountRoute::CreateOrganization => {
                let (f, me) = self.change::<CreateOrganizationFields>().await?;
                let org = auth
                    .create_organization(&me, &f.name, f.slug.as_deref())
                    .await?;
                Ok(json_response(StatusCode::OK, &org))
            }
            AccountRoute::SetActiveOrganization => {
                let (f, _) = self.change::<ActiveFields>().await?;
                self.set_active(f.organization_id.as_deref()).await
            }
            AccountRoute::Members => self.members_of(&self.reader().await?).await,
            AccountRoute::UpdateOrganization => {
                let (f, me) = self.change::<UpdateOrganizationFields>().await?;
                let org = auth
                    .update_organization(
                        &me.user_id,
                        &f.organization_id,
                        f.name.as_deref(),
                        f.slug.as_deref(),
                    )
                    .await?;
                Ok(json_response(StatusCode::OK, &org))
            }
            AccountRoute::DeleteOrganization => {
                let (f, me) = self.change::<OrganizationFields>().await?;
                auth.delete_organization(&me, &f.organization_id).await?;
                Ok(json_response(StatusCode::OK, &json!({})))
            }
            AccountRoute::Invite => {
                let (f, me) = self.change::<InviteFields>().await?;
                let spec = InvitationSpec::to_organization(f.organization_id, f.email)
                    .roles(f.roles)
                    .teams(f.teams);
                let sent = auth
                    .invite(Some(&me.user_id), &spec, me.origin.as_deref())
                    .await?;
                let view = SentView {
                    invitation: InvitationView::of(&sent.invitation, OffsetDateTime::now_utc()),
                    mailed: sent.mailed,
                };
                Ok(json_response(StatusCode::OK, &view))
            }
            AccountRoute::RevokeInvitation => {
                let (f, me) = self.change::<InvitationFields>().await?;
                auth.revoke_invitation(Some(&me.user_id), &f.invitation_id)
                    .await?;
                Ok(json_response(StatusCode::OK, &json!({})))
            }
            AccountRoute::AcceptInvitation => {
                let (f, me) = self.change::<InvitationFields>().await?;
                let invitation = auth
                    .accept_invitation_by_id(&me.user_id, &f.invitation_id)
                    .await?;
                let org = invitation
                    .organization_id
                    .ok_or(AccountError::InvalidInvitation)?;
                let membership = auth.membership(&me.user_id, &org).await?;
                Ok(json_response(StatusCode::OK, &membership))
            }
            AccountRoute::SetMemberRoles => {
                let (f, me) = self.change::<MemberRolesFields>().await?;
                auth.set_member_roles(&me.user_id, &f.organization_id, &f.user_id, &f.roles)
                    .await?;
                Ok(json_response(StatusCode::OK, &json!({})))
            }
            AccountRoute::RemoveMember => {
                let (f, me) = self.change::<MemberFields>().await?;
                auth.remove_member(&me.user_id, &f.organization_id, &f.user_id)
                    .await?;
                Ok(json_response(StatusCode::OK, &json!({})))
            }
            AccountRoute::SetMemberTeams => {
                let (f, me) = self.change::<MemberTeamsFields>().await?;
                auth.set_member_teams(&me.user_id, &f.organization_id, &f.user_id, &f.teams)
                    .await?;
                Ok(json_response(StatusCode::OK, &json!({})))
            }
            AccountRoute::CreateTeam => {
                let (f, me) = self.change::<NewTeamFields>().await?;
                let team = auth
                    .create_team(&me.user_id, &f.organization_id, &f.name)
                    .await?;
                Ok(json_response(StatusCode::OK, &team))
            }
            AccountRoute::DeleteTeam => {
                let (f, me) = self.change::<TeamFields>().await?;
                auth.delete_team(&me.user_id, &f.organization_id, &f.team_id)
                    .await?;
                Ok(json_response(StatusCode::OK, &json!({})))
            }
            AccountRoute::ApiKeys => {
                let me = self.reader().await?;
                let keys = auth
                    .api_keys(&me.user_id, self.query("organizationId").as_deref())
                    .await?;
                let listed: Vec<ApiKeyView<'_>> = keys.iter().map(ApiKeyView::of).collect();
                Ok(json_response(StatusCode::OK, &listed))
            }
            AccountRoute::CreateApiKey => {
                let (f, me) = self.change::<NewApiKeyFields>().await?;
                self.create_api_key(&me, f).await
            }
            AccountRoute::RevokeApiKey => {
                let (f, me) = self.change::<RevokeFields>().await?;
                auth.revoke_api_key(&me.user_id, &f.id).await?;
                Ok(json_response(StatusCode::OK, &json!({})))
            }
            #[cfg(not(feature = "passwords"))]
            AccountRoute::ChangePassword | AccountRoute::ChangeEmail => {
                Err(AccountError::PasswordsOff.into())
            }
            #[cfg(not(feature = "two-factor"))]
            AccountRoute::TwoFactor
            | AccountRoute::StartTotp
            | AccountRoute::ConfirmTotp
            | AccountRoute::RegenerateRecoveryCodes
            | AccountRoute::DisableTotp => Err(AccountError::TwoFactorOff.into()),
        }
    }
}

impl Auth {
    /// Answers a request to the account route `route` (the routes of
    /// [`crate::account`]'s table): the session from the request's cookies, a change's body
    /// read up to the configured body limit and its CSRF token checked, the answer JSON.
    /// What the framework integrations mount; a host on another framework routes
    /// [`AccountRoute::path`] and [`AccountRoute::method`] here.
    pub async fn handle_account<B>(
        &self,
        route: AccountRoute,
        req: http::Request<B>,
    ) -> http::Response<ResponseBody>
    where
        B: http_body::Body,
        B::Error: Into<BoxError>,
    {
        let (parts, body, client) = match read_request(self, route.method(), req).await {
            Ok(read) => read,
            Err(refused) => return refused,
        };
        let request = AccountRequest {
            auth: self,
            uri: parts.uri,
            headers: parts.headers,
            body,
            client,
        };
        request.answer(route).await.unwrap_or_else(refuse)
    }
}

/// The last value of query parameter `name` of `uri`, when not empty.
pub(crate) fn query_param(uri: &http::Uri, name: &str) -> Option<String> {
    url::form_urlencoded::parse(uri.query()?.as_bytes())
        .filter(|(k, _)| k == name)
        .last()
        .map(|(_, v)| v.into_owned())
        .filter(|v| !v.is_empty())
}

/// A refusal as its JSON answer: `{"error": <code>}` (and the rule's `code`).
pub(crate) fn refuse(r: Refusal) -> http::Response<ResponseBody> {
    match r.2 {
        Some(code) => json_response(r.0, &json!({ "error": r.1, "code": code })),
        None => json_response(r.0, &json!({ "error": r.1 })),
    }
}

/// A request to a JSON route whose method is `method`, read once: refused in a wrong
/// method (`405`), over the per-client request limit for a change (`429`), or with a
/// change's body over the configured limit (`413`); else its parts, its body (empty for a
/// read) and the client as the per-client limits count it
/// ([`client_subject`](crate::ratelimit::client_subject) of its address through the
/// trusted proxies).
pub(crate) async fn read_request<B>(
    auth: &Auth,
    method: Method,
    req: http::Request<B>,
) -> Result<(http::request::Parts, Bytes, Option<String>), http::Response<ResponseBody>>
where
    B: http_body::Body,
    B::Error: Into<BoxError>,
{
    if req.method() != method {
        return Err(refuse(Refusal(
            StatusCode::METHOD_NOT_ALLOWED,
            "MethodNotAllowed",
            None,
        )));
    }
    let (parts, body) = req.into_parts();
    let c = &*auth.config().inner;
    let client = crate::request::client_addr(c, &parts).map(crate::ratelimit::client_subject);
    // Changes count under the per-client request limit, as the actions' POSTs do.
    if method == Method::POST
        && let Some(client) = &client
        && let Err(retry_after) = crate::actions::limits::count(
            c,
            crate::actions::limits::Limit::RequestsPerClient,
            client,
        )
        .await
    {
        let mut r = refuse(Refusal(StatusCode::TOO_MANY_REQUESTS, "RateLimited", None));
        if let Ok(v) = HeaderValue::from_str(&retry_after.as_secs().max(1).to_string()) {
            r.headers_mut().insert(header::RETRY_AFTER, v);
        }
        return Err(r);
    }
    let body = if method == Method::POST {
        match Limited::new(body, c.max_body_bytes).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(e) if e.is::<http_body_util::LengthLimitError>() => {
                return Err(refuse(Refusal(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "BodyTooLarge",
                    None,
                )));
            }
            Err(_) => {
                return Err(refuse(Refusal(
                    StatusCode::BAD_REQUEST,
                    "InvalidRequest",
                    None,
                )));
            }
        }
    } else {
        Bytes::new()
    };
    Ok((parts, body, client))
}

#[cfg(test)]
mod tests {
    use super::AccountRoute;

    #[test]
    fn every_route_has_its_own_path_under_account() {
        let mut paths: Vec<_> = AccountRoute::ALL.iter().map(|r| r.path()).collect();
        assert!(paths.iter().all(|p| p.starts_with("/account")));
        paths.sort_unstable();
        paths.dedup();
        assert_eq!(paths.len(), AccountRoute::ALL.len());
    }
}
