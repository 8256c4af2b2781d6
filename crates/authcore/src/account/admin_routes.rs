//! The administrators' JSON routes, for a signed-in administrator (their session cookie,
//! and for every change the CSRF token of `GET <basePath>/csrf` in the body, `csrfToken`)
//! or an API key of the administrators' organization (`Authorization: Bearer ak_…`, no
//! CSRF token). The framework integrations mount them
//! (`authcore_axum::AuthRouterExt::admin_routes`); any other host hands a request to
//! [`Auth::handle_admin`].
//!
//! | route | body | answer |
//! |---|---|---|
//! | `GET /admin/users?q=&provider=&organizationId=&after=&limit=` | — | `{users, next}`: users whose email or name holds `q`, with an account of `provider`, in the organization; `next` is the `after` of the next page |
//! | `GET /admin/users/detail?id=` | — | the user ([`UserDetail`](super::UserDetail)) |
//! | `POST /admin/users/create` | `{csrfToken, email, name?}` | `{user, setupLink}`: the user, and the link that sets up their account (`{url, expires, method, mailed}`, `method` `password` or `signIn`; `null` when none can be made) |
//! | `POST /admin/users/setup-link` | `{csrfToken, userId}` | `{setupLink}`: a new set-up link (`501 PasswordsOff` without password accounts or magic links) |
//! | `POST /admin/users/sessions/end` | `{csrfToken, userId}` | `{ended}`: every session ended |
//! | `POST /admin/users/ban` | `{csrfToken, userId, reason, until?}` (`until`: RFC 3339) | the ban; the user's sessions end |
//! | `POST /admin/users/unban` | `{csrfToken, userId}` | `{}` |
//! | `POST /admin/users/two-factor/reset` | `{csrfToken, userId}` | `{}`: the authenticator app and recovery codes removed |
//! | `POST /admin/users/delete` | `{csrfToken, userId}` | `{}` |
//! | `POST /admin/users/impersonate` | `{csrfToken, userId}` | `{}` with the session cookie of the user (a browser session only) |
//! | `POST /admin/impersonation/end` | `{csrfToken}` | `{}`, the impersonated session signed out (for the impersonated session itself) |
//! | `GET /admin/audit?kind=&userId=&since=&until=&cursor=&limit=` | — | the audit records, newest first (`since`/`until`: RFC 3339) |
//! | `GET /admin/clients` | — | `{clients}`: the OpenID Provider's clients made here ([`ClientInfo`](super::ClientInfo): no secret, no hash) |
//! | `POST /admin/clients/create` | `{csrfToken, clientId, name, redirectUris, postLogoutRedirectUris?, grantTypes?, scopes?, tokenEndpointAuthMethod?, dpopBoundAccessTokens?, requirePushedAuthorizationRequests?, accessTokenFormat?}` | `{client, clientSecret}`: the secret shown this once (`null` for a public client) |
//! | `POST /admin/clients/rotate-secret` | `{csrfToken, clientId}` | `{clientSecret}`: the new secret, shown this once; the old one stops working |
//! | `POST /admin/clients/disable` | `{csrfToken, clientId}` | the client: its requests and tokens are refused |
//! | `POST /admin/clients/enable` | `{csrfToken, clientId}` | the client |
//!
//! Every change through a session is a sensitive change: it needs a recent sign-in that,
//! for an administrator with a second factor, proved it (`401 ReauthenticationRequired`).
//! Errors are JSON `{"error": <code>}` as on the account routes, and: `401
//! SessionRequired` (nobody signed in), `401 InvalidApiKey`, `403 Forbidden` (not an
//! administrator, or not an administrators' key), `403 Impersonating` (the session is an
//! impersonation), `403 TargetIsAdmin` (administrators are neither impersonated nor given
//! set-up links), `409 OwnAccount` (not on one's own account), `409 Banned` (a banned user
//! is not impersonated), `409 SetUpAlready` (a set-up link for a user who already signs in
//! is only mailed, and the server does not mail), `503 MailFailed`, `404 NotFound`, `400
//! InvalidValue`, `501 AdminOff` / `501 AuditOff` (not configured). Every answer is never
//! cached.

use bytes::Bytes;
use http::{Method, StatusCode, header};
use serde::de::DeserializeOwned;
use serde_json::json;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::routes::{Refusal, json_response, query_param, read_request, refuse};
use super::{AdminActor, ClientSecretOnce, NewClient, SetupLink};
use crate::adapter::{AuditQuery, UserQuery};
use crate::error::BoxError;
use crate::handler::Auth;
use crate::response::ResponseBody;

/// One of the administrators' routes (the table of this module).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AdminRoute {
    /// `GET /admin/users`.
    Users,
    /// `GET /admin/users/detail`.
    User,
    /// `POST /admin/users/create`.
    CreateUser,
    /// `POST /admin/users/setup-link`.
    SetupLink,
    /// `POST /admin/users/sessions/end`.
    EndSessions,
    /// `POST /admin/users/ban`.
    Ban,
    /// `POST /admin/users/unban`.
    Unban,
    /// `POST /admin/users/two-factor/reset`.
    ResetTwoFactor,
    /// `POST /admin/users/delete`.
    DeleteUser,
    /// `POST /admin/users/impersonate`.
    Impersonate,
    /// `POST /admin/impersonation/end`.
    EndImpersonation,
    /// `GET /admin/audit`.
    Audit,
    /// `GET /admin/clients`.
    Clients,
    /// `POST /admin/clients/create`.
    CreateClient,
    /// `POST /admin/clients/rotate-secret`.
    RotateClientSecret,
    /// `POST /admin/clients/disable`.
    DisableClient,
    /// `POST /admin/clients/enable`.
    EnableClient,
}

impl AdminRoute {
    /// Every route, for an integration to mount.
    pub const ALL: [AdminRoute; 17] = [
        AdminRoute::Users,
        AdminRoute::User,
        AdminRoute::CreateUser,
        AdminRoute::SetupLink,
        AdminRoute::EndSessions,
        AdminRoute::Ban,
        AdminRoute::Unban,
        AdminRoute::ResetTwoFactor,
        AdminRoute::DeleteUser,
        AdminRoute::Impersonate,
        AdminRoute::EndImpersonation,
        AdminRoute::Audit,
        AdminRoute::Clients,
        AdminRoute::CreateClient,
        AdminRoute::RotateClientSecret,
        AdminRoute::DisableClient,
        AdminRoute::EnableClient,
    ];

    /// The route's path.
    pub fn path(self) -> &'static str {
        match self {
            AdminRoute::Users => "/admin/users",
            AdminRoute::User => "/admin/users/detail",
            AdminRoute::CreateUser => "/admin/users/create",
            AdminRoute::SetupLink => "/admin/users/setup-link",
            AdminRoute::EndSessions => "/admin/users/sessions/end",
            AdminRoute::Ban => "/admin/users/ban",
            AdminRoute::Unban => "/admin/users/unban",
            AdminRoute::ResetTwoFactor => "/admin/users/two-factor/reset",
            AdminRoute::DeleteUser => "/admin/users/delete",
            AdminRoute::Impersonate => "/admin/users/impersonate",
            AdminRoute::EndImpersonation => "/admin/impersonation/end",
            AdminRoute::Audit => "/admin/audit",
            AdminRoute::Clients => "/admin/clients",
            AdminRoute::CreateClient => "/admin/clients/create",
            AdminRoute::RotateClientSecret => "/admin/clients/rotate-secret",
            AdminRoute::DisableClient => "/admin/clients/disable",
            AdminRoute::EnableClient => "/admin/clients/enable",
        }
    }

    /// The route's method: `GET` for the reads, `POST` for the changes.
    pub fn method(self) -> Method {
        match self {
            AdminRoute::Users | AdminRoute::User | AdminRoute::Audit | AdminRoute::Clients => {
                Method::GET
            }
            _ => Method::POST,
        }
    }
}

/// The body of a change: its fields and, through a session, the CSRF token.
#[derive(serde::Deserialize)]
struct Change<T> {
    #[serde(default, rename = "csrfToken")]
    csrf_token: String,
    #[serde(flatten)]
    fields: T,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct UserFields {
    user_id: String,
}

#[derive(serde::Deserialize)]
struct NewUserFields {
    email: String,
    #[serde(default)]
    name: Option<String>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct BanFields {
    user_id: String,
    reason: String,
    #[serde(default)]
    until: Option<String>,
}

#[derive(serde::Deserialize)]
struct NoFields {}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct ClientFields {
    client_id: String,
}

/// A request to an administrators' route, read once.
struct AdminRequest<'a> {
    auth: &'a Auth,
    parts: http::request::Parts,
    body: Bytes,
}

impl AdminRequest<'_> {
    /// The last value of query parameter `name`, when not empty.
    fn query(&self, name: &str) -> Option<String> {
        query_param(&self.parts.uri, name)
    }

    /// A query parameter that must be a number when given.
    fn number<T: std::str::FromStr>(&self, name: &str) -> Result<Option<T>, Refusal> {
        self.query(name)
            .map(|v| v.parse().map_err(|_| invalid(name)))
            .transpose()
    }

    /// A query parameter that must be an RFC 3339 time when given.
    fn time(&self, name: &str) -> Result<Option<OffsetDateTime>, Refusal> {
        self.query(name)
            .map(|v| OffsetDateTime::parse(&v, &Rfc3339).map_err(|_| invalid(name)))
            .transpose()
    }

    /// The administrator of a read.
    async fn reader(&self) -> Result<AdminActor, Refusal> {
        Ok(self.auth.admin_actor(&self.parts).await?)
    }

    /// The administrator of a change and its body, once the body parsed and, through a
    /// session, its CSRF token matched the request's cookie.
    async fn change<T: DeserializeOwned>(&self) -> Result<(T, AdminActor), Refusal> {
        // Who asks first: nobody learns what a body must hold.
        let actor = self.reader().await?;
        let body: Change<T> = serde_json::from_slice(&self.body)
            .map_err(|_| Refusal(StatusCode::BAD_REQUEST, "InvalidRequest", None))?;
        if actor.api_key().is_none() && !self.csrf_matches(&body.csrf_token).await {
            return Err(Refusal(StatusCode::FORBIDDEN, "MissingCSRF", None));
        }
        Ok((body.fields, actor))
    }

    async fn csrf_matches(&self, token: &str) -> bool {
        self.auth
            .verify_csrf(&self.parts.uri, &self.parts.headers, token)
            .await
    }

    async fn answer(&self, route: AdminRoute) -> Result<http::Response<ResponseBody>, Refusal> {
        let auth = self.auth;
        let ok = |value: &serde_json::Value| json_response(StatusCode::OK, value);
        match route {
            AdminRoute::Users => {
                let actor = self.reader().await?;
                let query = UserQuery {
                    text: self.query("q"),
                    provider: self.query("provider"),
                    organization_id: self.query("organizationId"),
                    after: self.query("after"),
                    limit: self.number("limit")?.unwrap_or(50),
                };
                let page = auth.admin_search_users(&actor, &query).await?;
                Ok(ok(&json!({ "users": page.users, "next": page.next })))
            }
            AdminRoute::User => {
                let actor = self.reader().await?;
                let id = self.query("id").ok_or_else(|| invalid("id"))?;
                let detail = auth.admin_user(&actor, &id).await?;
                Ok(json_response(StatusCode::OK, &detail))
            }
            AdminRoute::CreateUser => {
                let (f, actor) = self.change::<NewUserFields>().await?;
                let (user, link) = auth
                    .admin_create_user(&actor, &f.email, f.name.as_deref())
                    .await?;
                let link = link.as_ref().map(SetupLink::to_json);
                Ok(ok(&json!({ "user": user, "setupLink": link })))
            }
            AdminRoute::SetupLink => {
                let (f, actor) = self.change::<UserFields>().await?;
                let link = auth.admin_setup_link(&actor, &f.user_id).await?;
                Ok(ok(&json!({ "setupLink": link.to_json() })))
            }
            AdminRoute::EndSessions => {
                let (f, actor) = self.change::<UserFields>().await?;
                let ended = auth.admin_end_sessions(&actor, &f.user_id).await?;
                Ok(ok(&json!({ "ended": ended })))
            }
            AdminRoute::Ban => {
                let (f, actor) = self.change::<BanFields>().await?;
                let until = f
                    .until
                    .filter(|u| !u.is_empty())
                    .map(|u| OffsetDateTime::parse(&u, &Rfc3339).map_err(|_| invalid("until")))
                    .transpose()?;
                let ban = auth.admin_ban(&actor, &f.user_id, &f.reason, until).await?;
                Ok(json_response(StatusCode::OK, &ban))
            }
            AdminRoute::Unban => {
                let (f, actor) = self.change::<UserFields>().await?;
                auth.admin_unban(&actor, &f.user_id).await?;
                Ok(ok(&json!({})))
            }
            AdminRoute::ResetTwoFactor => {
                let (f, actor) = self.change::<UserFields>().await?;
                auth.admin_reset_two_factor(&actor, &f.user_id).await?;
                Ok(ok(&json!({})))
            }
            AdminRoute::DeleteUser => {
                let (f, actor) = self.change::<UserFields>().await?;
                auth.admin_delete_user(&actor, &f.user_id).await?;
                Ok(ok(&json!({})))
            }
            AdminRoute::Impersonate => {
                let (f, actor) = self.change::<UserFields>().await?;
                let cookies = auth
                    .admin_impersonate(&actor, &self.parts.uri, &self.parts.headers, &f.user_id)
                    .await?;
                let mut r = ok(&json!({}));
                for cookie in cookies {
                    r.headers_mut().append(header::SET_COOKIE, cookie);
                }
                Ok(r)
            }
            AdminRoute::EndImpersonation => {
                let body: Change<NoFields> = serde_json::from_slice(&self.body)
                    .map_err(|_| Refusal(StatusCode::BAD_REQUEST, "InvalidRequest", None))?;
                if !self.csrf_matches(&body.csrf_token).await {
                    return Err(Refusal(StatusCode::FORBIDDEN, "MissingCSRF", None));
                }
                let cookies = auth
                    .end_impersonation(&self.parts.uri, &self.parts.headers)
                    .await?;
                let mut r = ok(&json!({}));
                for cookie in cookies {
                    r.headers_mut().append(header::SET_COOKIE, cookie);
                }
                Ok(r)
            }
            AdminRoute::Audit => {
                let actor = self.reader().await?;
                let query = AuditQuery {
                    kind: self.query("kind"),
                    user: self.query("userId"),
                    since: self.time("since")?,
                    until: self.time("until")?,
                    cursor: self.number("cursor")?,
                    ascending: false,
                    limit: self.number("limit")?.unwrap_or(100),
                };
                let records = auth.admin_audit(&actor, &query).await?;
                Ok(json_response(StatusCode::OK, &records))
            }
            AdminRoute::Clients => {
                let actor = self.reader().await?;
                let clients = auth.admin_clients(&actor).await?;
                Ok(ok(&json!({ "clients": clients })))
            }
            AdminRoute::CreateClient => {
                let (new, actor) = self.change::<NewClient>().await?;
                let (client, secret) = auth.admin_create_client(&actor, &new).await?;
                let secret = secret.as_ref().map(ClientSecretOnce::expose);
                Ok(ok(&json!({ "client": client, "clientSecret": secret })))
            }
            AdminRoute::RotateClientSecret => {
                let (f, actor) = self.change::<ClientFields>().await?;
                let secret = auth
                    .admin_rotate_client_secret(&actor, &f.client_id)
                    .await?;
                Ok(ok(&json!({ "clientSecret": secret.expose() })))
            }
            AdminRoute::DisableClient | AdminRoute::EnableClient => {
                let (f, actor) = self.change::<ClientFields>().await?;
                let disable = route == AdminRoute::DisableClient;
                let client = auth
                    .admin_set_client_disabled(&actor, &f.client_id, disable)
                    .await?;
                Ok(json_response(StatusCode::OK, &client))
            }
        }
    }
}

/// A query or body value that is not valid.
fn invalid(name: &str) -> Refusal {
    tracing::info!(
        parameter = name,
        "administration refused: a value that is not valid"
    );
    Refusal(StatusCode::BAD_REQUEST, "InvalidValue", None)
}

impl Auth {
    /// Answers a request to the administrators' route `route` (the routes of this
    /// module's table): the administrator from the request's API key or session, a
    /// change's body read up to the configured body limit and, through a session, its CSRF
    /// token checked; the answer JSON. What the framework integrations mount.
    pub async fn handle_admin<B>(
        &self,
        route: AdminRoute,
        req: http::Request<B>,
    ) -> http::Response<ResponseBody>
    where
        B: http_body::Body,
        B::Error: Into<BoxError>,
    {
        let (parts, body, _client) = match read_request(self, route.method(), req).await {
            Ok(read) => read,
            Err(refused) => return refused,
        };
        let request = AdminRequest {
            auth: self,
            parts,
            body,
        };
        request.answer(route).await.unwrap_or_else(refuse)
    }
}

#[cfg(test)]
mod tests {
    use super::AdminRoute;

    #[test]
    fn every_route_has_its_own_path_under_admin() {
        let mut paths: Vec<_> = AdminRoute::ALL.iter().map(|r| r.path()).collect();
        assert!(paths.iter().all(|p| p.starts_with("/admin/")));
        paths.sort_unstable();
        paths.dedup();
        assert_eq!(paths.len(), AdminRoute::ALL.len());
    }
}
