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
//!
//! The sensitive changes ([`SensitiveOperation`](super::SensitiveOperation): unlink, delete
//! a passkey, delete the account, revoke an app, every two-factor change) need a recent
//! sign-in that, for a user with a second factor, proved it; else `401
//! ReauthenticationRequired`. The two-factor changes after enrolment also ask for a current
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
//! InvalidEmail`, `501 PasswordsOff` (no password accounts, or no email provider). Every answer is about one user and is never cached.

use bytes::Bytes;
use http::{HeaderValue, Method, StatusCode, header};
use http_body_util::{BodyExt as _, Full, Limited};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;

use super::{AccountError, CurrentSession};
use crate::error::BoxError;
use crate::handler::Auth;
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
}

impl AccountRoute {
    /// Every route, for an integration to mount.
    pub const ALL: [AccountRoute; 17] = [
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
        }
    }

    /// The route's method: `GET` for the reads, `POST` for the changes.
    pub fn method(self) -> Method {
        match self {
            AccountRoute::Methods
            | AccountRoute::Sessions
            | AccountRoute::Apps
            | AccountRoute::TwoFactor => Method::GET,
            _ => Method::POST,
        }
    }
}

/// An error answer of these routes: its status, error code and, for a password the policy
/// refuses, the rule's code.
struct Refusal(StatusCode, &'static str, Option<&'static str>);

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
            AccountError::InvalidValue(_) => Refusal(StatusCode::BAD_REQUEST, "InvalidValue", None),
            AccountError::InvalidInvitation => {
                Refusal(StatusCode::BAD_REQUEST, "InvalidInvitation", None)
            }
            AccountError::WrongAddress => Refusal(StatusCode::FORBIDDEN, "WrongAddress", None),
            AccountError::MailFailed => {
                Refusal(StatusCode::SERVICE_UNAVAILABLE, "MailFailed", None)
            }
            other => {
                tracing::error!(error = %other, "account management failed");
                Refusal(StatusCode::SERVICE_UNAVAILABLE, "AdapterError", None)
            }
        }
    }
}

/// `value` as a JSON answer with `status`, never cached (the header of Auth.js's session
/// answer).
fn json_response(status: StatusCode, value: &impl Serialize) -> http::Response<ResponseBody> {
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

/// A request to an account route, read once: the URI and headers that name the session, and
/// the body of a change.
struct AccountRequest<'a> {
    auth: &'a Auth,
    uri: http::Uri,
    headers: http::HeaderMap,
    body: Bytes,
    /// The client's address (through trusted proxies), for the per-client limits.
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
        let refuse = |r: Refusal| match r.2 {
            Some(code) => json_response(r.0, &json!({ "error": r.1, "code": code })),
            None => json_response(r.0, &json!({ "error": r.1 })),
        };
        if req.method() != route.method() {
            return refuse(Refusal(
                StatusCode::METHOD_NOT_ALLOWED,
                "MethodNotAllowed",
                None,
            ));
        }
        let (parts, body) = req.into_parts();
        let c = &*self.config().inner;
        let client = crate::request::client_addr(c, &parts).map(|ip| ip.to_string());
        // Changes count under the per-client request limit, as the actions' POSTs do.
        if route.method() == Method::POST
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
            return r;
        }
        let body = if route.method() == Method::POST {
            let limit = self.config().inner.max_body_bytes;
            match Limited::new(body, limit).collect().await {
                Ok(collected) => collected.to_bytes(),
                Err(e) if e.is::<http_body_util::LengthLimitError>() => {
                    return refuse(Refusal(StatusCode::PAYLOAD_TOO_LARGE, "BodyTooLarge", None));
                }
                Err(_) => return refuse(Refusal(StatusCode::BAD_REQUEST, "InvalidRequest", None)),
            }
        } else {
            Bytes::new()
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
