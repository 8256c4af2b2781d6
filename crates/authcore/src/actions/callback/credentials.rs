//! Credentials callback (Auth.js `lib/actions/callback/index.ts`): `authorize`, `signIn`
//! callback, JWT session cookie.

use bytes::Bytes;

use super::{finish_sign_in, run_sign_in_callback};
use crate::actions::Ctx;
use crate::actions::completion::{FirstFactor, SignedIn};
use crate::actions::limits::Limit;
use crate::callbacks::SignInParams;
use crate::error::AuthError;
use crate::providers::{AuthorizeError, CredentialsProvider};
use crate::random;
use crate::response::RawResponse;
use crate::types::{Account, JsonObject, ProviderType, User};

/// The request given to `authorize`: current URL, original headers and method, body as JSON.
fn authorize_request(ctx: &Ctx<'_>, credentials: &JsonObject) -> http::Request<Bytes> {
    // Room for the form's fields as JSON, so the buffer is not grown on the way.
    let mut json = Vec::with_capacity(256);
    let body = match serde_json::to_writer(&mut json, credentials) {
        Ok(()) => Bytes::from(json),
        Err(_) => Bytes::new(),
    };
    let mut builder = http::Request::builder().method(ctx.req.method.clone());
    if let Some(uri) = ctx.req.url.to_uri() {
        builder = builder.uri(uri);
    }
    if let Some(h) = builder.headers_mut() {
        h.clone_from(&ctx.req.headers);
        let json = http::HeaderValue::from_static("application/json");
        // A form post has a `Content-Type` to replace in place; an insert would first grow
        // the clone, which has no spare room.
        match h.get_mut(http::header::CONTENT_TYPE) {
            Some(value) => *value = json,
            None => {
                h.insert(http::header::CONTENT_TYPE, json);
            }
        }
    }
    builder
        .body(body.clone())
        .unwrap_or_else(|_| http::Request::new(body))
}

pub(crate) async fn callback(
    ctx: &Ctx<'_>,
    provider: &CredentialsProvider,
) -> Result<RawResponse, AuthError> {
    let config = ctx.config;
    if config.session_strategy == crate::config::SessionStrategy::Database
        && !config.credentials_database_sessions
        && !provider.has_source()
    {
        // Auth.js signs in with a JWT the database strategy never reads: a silent `null`
        // session. Refused here, loudly, before any password is checked.
        return Err(AuthError::CallbackRouteError {
            provider: provider.id.clone(),
            source: "credentials sign-in under the database session strategy: set \
                     credentials_database_sessions(true) (authorize returning the adapter's \
                     user id) or session_strategy(SessionStrategy::Jwt)"
                .into(),
        });
    }
    let credentials = match ctx.req.body.as_ref() {
        Some(body) => body,
        None => &NO_BODY,
    };
    // Two halves, each its own future: the parent holds one at a time, so a sign-in's
    // future stays small (see `actions::dispatch`).
    let user = authorize(ctx, provider, credentials).await?;
    signed_in(ctx, provider, credentials, user).await
}

/// The credentials of a request without a body.
static NO_BODY: std::sync::LazyLock<JsonObject> = std::sync::LazyLock::new(JsonObject::new);

/// Runs `authorize` on `credentials`: the user it returned, or the refusal. Failures are
/// counted per identifier (the `username` or `email` field) and per client.
async fn authorize(
    ctx: &Ctx<'_>,
    provider: &CredentialsProvider,
    credentials: &JsonObject,
) -> Result<User, AuthError> {
    let config = ctx.config;
    let identifier = ["username", "email"]
        .iter()
        .find_map(|k| credentials.get(*k).and_then(|v| v.as_str()))
        .filter(|v| !v.trim().is_empty());
    // Each attempt is reserved before `authorize` runs, so parallel guesses are counted
    // one by one whatever `authorize` costs; the limits are on failures, so a success
    // clears the identifier's count and gives the client's attempt back.
    ctx.count_attempt(Limit::CredentialsPerClient, None).await?;
    if let Err(e) = ctx
        .count_attempt(Limit::CredentialsPerIdentifier, identifier)
        .await
    {
        ctx.give_back(Limit::CredentialsPerClient, None).await;
        return Err(e);
    }
    let request = authorize_request(ctx, credentials);
    // Boxed, as `finish_sign_in` in `signed_in`.
    let outcome =
        Box::pin(provider.call_authorize(credentials.clone(), request, config.adapter.as_deref()))
            .await
            .map_err(|e| match e {
                AuthorizeError::CredentialsSignin { code } => AuthError::CredentialsSignin { code },
                AuthorizeError::Other(source) => AuthError::CallbackRouteError {
                    provider: provider.id.clone(),
                    source,
                },
            });
    let user = match outcome {
        Ok(Some(user)) => user,
        // An error of `authorize` itself is no wrong password: not counted.
        Err(e @ AuthError::CallbackRouteError { .. }) => {
            ctx.give_back(Limit::CredentialsPerIdentifier, identifier)
                .await;
            ctx.give_back(Limit::CredentialsPerClient, None).await;
            return Err(e);
        }
        // A failure: the reserved attempts stay counted.
        failed => {
            tracing::warn!(
                provider = %provider.id,
                identifier = %shown_identifier(identifier),
                client = ?ctx.req.client,
                "sign-in failed: the credentials were refused"
            );
            ctx.audit(|| {
                crate::audit::AuditEvent::new("signInFailed")
                    .with("provider", provider.id.clone())
                    .with("identifier", shown_identifier(identifier))
                    .with("error", "CredentialsSignin")
            })
            .await;
            return Err(failed
                .err()
                .unwrap_or_else(|| AuthError::CredentialsSignin {
                    code: "credentials".to_owned(),
                }));
        }
    };
    ctx.reset_limit(Limit::CredentialsPerIdentifier, identifier)
        .await;
    ctx.give_back(Limit::CredentialsPerClient, None).await;
    Ok(user)
}

/// The sign-in of `user`, whom `authorize` returned for `credentials`: the `signIn`
/// callback, then the session.
async fn signed_in(
    ctx: &Ctx<'_>,
    provider: &CredentialsProvider,
    credentials: &JsonObject,
    mut user: User,
) -> Result<RawResponse, AuthError> {
    let id = user.id.get_or_insert_with(random::uuid_v4).clone();
    if ctx.config.session_strategy == crate::config::SessionStrategy::Database {
        require_stored_user(ctx, provider, &id).await?;
    }
    let account = Account::new(ProviderType::Credentials, provider.id.clone(), id);

    if let Some(url) = run_sign_in_callback(
        ctx,
        SignInParams {
            user: &user,
            account: Some(&account),
            profile: None,
            email_verification_request: false,
            credentials: Some(credentials),
        },
    )
    .await?
    {
        return Ok(RawResponse::redirect(url));
    }

    // With the database strategy (`credentials_database_sessions`, checked in `callback`),
    // `finish_sign_in` opens a database session for the user. Boxed, as the other
    // providers' callbacks are (see `actions::dispatch`): its future is large, and every
    // future around this one would carry its size through each move.
    Box::pin(finish_sign_in(
        ctx,
        SignedIn {
            user: &user,
            account: &account,
            profile: None,
            is_new_user: None,
        },
        None,
        Vec::new(),
        FirstFactor::Password,
    ))
    .await
}

/// With database sessions (`credentials_database_sessions`) the session row names its user,
/// so `authorize` must return the id of a user stored in the adapter. Another id would fail
/// later with the store's own words (`FOREIGN KEY constraint failed`) or leave a session
/// nobody can read: refused here, as the programming error it is (`CallbackRouteError`,
/// as Auth.js calls any other failure of the credentials callback).
async fn require_stored_user(
    ctx: &Ctx<'_>,
    provider: &CredentialsProvider,
    id: &str,
) -> Result<(), AuthError> {
    let Some(adapter) = ctx.config.adapter.as_deref() else {
        return Ok(());
    };
    if adapter.get_user(id).await?.is_some() {
        return Ok(());
    }
    Err(AuthError::CallbackRouteError {
        provider: provider.id.clone(),
        source: format!(
            "authorize returned the user id {id:?}, which is no user of the adapter: with \
             database sessions (credentials_database_sessions) authorize must return the \
             adapter's user id, the id of a user stored in the adapter (look the user up \
             there, by email say, and return its id)"
        )
        .into(),
    })
}

/// The identifier of a failed sign-in as a log line shows it: an address or a username
/// (at most 64 characters, no spaces or control characters), else a placeholder, since what
/// a user types into the username field is sometimes their password.
fn shown_identifier(identifier: Option<&str>) -> &str {
    match identifier.map(str::trim) {
        Some(id)
            if id.chars().count() <= 64
                && !id.chars().any(|c| c.is_whitespace() || c.is_control()) =>
        {
            id
        }
        Some(_) => "[not shown: not a username or an address]",
        None => "[none]",
    }
}
