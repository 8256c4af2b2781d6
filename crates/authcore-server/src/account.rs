//! Account management as JSON endpoints, for the signed-in user of the request
//! (their session cookie) and, for every change, the CSRF token of `GET <basePath>/csrf` in
//! the JSON body (`csrfToken`), as Auth.js's own POSTs:
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
//!
//! Errors are JSON `{"error": <code>}`: `400 InvalidRequest` (a body that is not the JSON
//! above; `InvalidName`: a passkey name over 64 characters), `401 SessionRequired` (signed out), `403 MissingCSRF`,
//! `404 NotFound` (not the user's), `409 LastSignInMethod` (the only way in left),
//! `501 NoAdapter` / `501 NoDatabaseSessions` (the server runs without a database),
//! `503 AdapterError` (logged).

use authcore::Auth;
use authcore::account::{AccountError, CurrentSession, SignInMethods};
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;

/// The account routes (state: the [`Auth`]).
pub(crate) fn routes() -> Router<Auth> {
    Router::new()
        .route("/account", get(methods))
        .route("/account/unlink", post(unlink))
        .route("/account/passkeys/delete", post(delete_passkey))
        .route("/account/passkeys/rename", post(rename_passkey))
        .route("/account/delete", post(delete_user))
        .route("/account/sessions", get(sessions))
        .route("/account/sessions/revoke", post(revoke_session))
        .route(
            "/account/sessions/revoke-others",
            post(revoke_other_sessions),
        )
}

/// `value` as a JSON answer with `status`. Every answer is about one user: never cached
/// (the header of Auth.js's session answer).
fn json_response(status: StatusCode, value: &impl Serialize) -> Response {
    let (status, body) = match serde_json::to_vec(value) {
        Ok(body) => (status, body),
        Err(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            br#"{"error":"InternalError"}"#.to_vec(),
        ),
    };
    (
        status,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "private, no-cache, no-store"),
        ],
        body,
    )
        .into_response()
}

/// The JSON body of a change, or `400 InvalidRequest`.
fn body<T: DeserializeOwned>(bytes: &Bytes) -> Result<T, Refusal> {
    serde_json::from_slice(bytes).map_err(|_| Refusal(StatusCode::BAD_REQUEST, "InvalidRequest"))
}

/// The user's sign-in methods, as the answer of every successful call but the last.
async fn methods_of(auth: &Auth, user_id: &str) -> Result<Response, Refusal> {
    let methods: SignInMethods = auth.sign_in_methods(user_id).await?;
    Ok(json_response(StatusCode::OK, &methods))
}

impl From<AccountError> for Refusal {
    fn from(e: AccountError) -> Self {
        match e {
            AccountError::NotFound => Refusal(StatusCode::NOT_FOUND, "NotFound"),
            AccountError::LastSignInMethod => Refusal(StatusCode::CONFLICT, "LastSignInMethod"),
            AccountError::NoAdapter => Refusal(StatusCode::NOT_IMPLEMENTED, "NoAdapter"),
            AccountError::InvalidName => Refusal(StatusCode::BAD_REQUEST, "InvalidName"),
            AccountError::NoDatabaseSessions => {
                Refusal(StatusCode::NOT_IMPLEMENTED, "NoDatabaseSessions")
            }
            other => {
                tracing::error!(error = %other, "account management failed");
                Refusal(StatusCode::SERVICE_UNAVAILABLE, "AdapterError")
            }
        }
    }
}

/// An error answer of these routes: its status and error code.
struct Refusal(StatusCode, &'static str);

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        json_response(self.0, &json!({ "error": self.1 }))
    }
}

/// The signed-in user's id, after checking `csrf_token` when the call changes something.
async fn user_id(
    auth: &Auth,
    uri: &Uri,
    headers: &HeaderMap,
    csrf_token: Option<&str>,
) -> Result<String, Refusal> {
    Ok(current(auth, uri, headers, csrf_token).await?.user_id)
}

/// The request's signed-in user and session, after checking `csrf_token` when the call
/// changes something.
async fn current(
    auth: &Auth,
    uri: &Uri,
    headers: &HeaderMap,
    csrf_token: Option<&str>,
) -> Result<CurrentSession, Refusal> {
    let Some(id) = auth.current_session(uri, headers).await else {
        return Err(Refusal(StatusCode::UNAUTHORIZED, "SessionRequired"));
    };
    if let Some(token) = csrf_token
        && !auth.verify_csrf(uri, headers, token).await
    {
        return Err(Refusal(StatusCode::FORBIDDEN, "MissingCSRF"));
    }
    Ok(id)
}

async fn methods(
    State(auth): State<Auth>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, Refusal> {
    let id = user_id(&auth, &uri, &headers, None).await?;
    methods_of(&auth, &id).await
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct UnlinkBody {
    #[serde(default)]
    csrf_token: String,
    provider: String,
    provider_account_id: String,
}

async fn unlink(
    State(auth): State<Auth>,
    uri: Uri,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response, Refusal> {
    let body: UnlinkBody = body(&bytes)?;
    let id = user_id(&auth, &uri, &headers, Some(&body.csrf_token)).await?;
    auth.unlink_account(&id, &body.provider, &body.provider_account_id)
        .await?;
    methods_of(&auth, &id).await
}

#[derive(serde::Deserialize)]
struct PasskeyBody {
    #[serde(default, rename = "csrfToken")]
    csrf_token: String,
    #[serde(rename = "credentialID")]
    credential_id: String,
}

async fn delete_passkey(
    State(auth): State<Auth>,
    uri: Uri,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response, Refusal> {
    let body: PasskeyBody = body(&bytes)?;
    let id = user_id(&auth, &uri, &headers, Some(&body.csrf_token)).await?;
    auth.delete_passkey(&id, &body.credential_id).await?;
    methods_of(&auth, &id).await
}

#[derive(serde::Deserialize)]
struct RenameBody {
    #[serde(default, rename = "csrfToken")]
    csrf_token: String,
    #[serde(rename = "credentialID")]
    credential_id: String,
    name: String,
}

async fn rename_passkey(
    State(auth): State<Auth>,
    uri: Uri,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response, Refusal> {
    let body: RenameBody = body(&bytes)?;
    let id = user_id(&auth, &uri, &headers, Some(&body.csrf_token)).await?;
    auth.rename_passkey(&id, &body.credential_id, &body.name)
        .await?;
    methods_of(&auth, &id).await
}

#[derive(serde::Deserialize)]
struct CsrfBody {
    #[serde(default, rename = "csrfToken")]
    csrf_token: String,
}

async fn delete_user(
    State(auth): State<Auth>,
    uri: Uri,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response, Refusal> {
    let body: CsrfBody = body(&bytes)?;
    let id = user_id(&auth, &uri, &headers, Some(&body.csrf_token)).await?;
    auth.delete_user(&id).await?;
    Ok(json_response(StatusCode::OK, &json!({})))
}

/// The user's sessions, the request's marked.
async fn sessions_of(auth: &Auth, current: &CurrentSession) -> Result<Response, Refusal> {
    let list = auth
        .sessions(&current.user_id, current.session_id.as_deref())
        .await?;
    Ok(json_response(StatusCode::OK, &list))
}

async fn sessions(
    State(auth): State<Auth>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, Refusal> {
    let me = current(&auth, &uri, &headers, None).await?;
    sessions_of(&auth, &me).await
}

#[derive(serde::Deserialize)]
struct RevokeBody {
    #[serde(default, rename = "csrfToken")]
    csrf_token: String,
    id: String,
}

async fn revoke_session(
    State(auth): State<Auth>,
    uri: Uri,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response, Refusal> {
    let body: RevokeBody = body(&bytes)?;
    let me = current(&auth, &uri, &headers, Some(&body.csrf_token)).await?;
    auth.revoke_session(&me.user_id, &body.id).await?;
    sessions_of(&auth, &me).await
}

async fn revoke_other_sessions(
    State(auth): State<Auth>,
    uri: Uri,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response, Refusal> {
    let body: CsrfBody = body(&bytes)?;
    let me = current(&auth, &uri, &headers, Some(&body.csrf_token)).await?;
    auth.revoke_other_sessions(&me.user_id, me.session_id.as_deref())
        .await?;
    sessions_of(&auth, &me).await
}
