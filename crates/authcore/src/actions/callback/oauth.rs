//! OAuth / OIDC callback (Auth.js `handleOAuth` in `lib/actions/callback/oauth/callback.ts`):
//! checks, token exchange, ID token verification against the provider's JWKS (which Auth.js
//! skips), userinfo, profile mapping, JWT session.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{login, run_sign_in_callback};
use crate::actions::Ctx;
use crate::actions::completion::SignedIn;
use crate::callbacks::SignInParams;
use crate::checks::{self, CheckKind, CheckVerb};
use crate::cookies::SetCookie;
use crate::error::AuthError;
use crate::http_client::HttpClient;
use crate::oauth::id_token::{self, IdTokenChecks, IdTokenError};
use crate::oauth::{OAuthError, jwks};
use crate::providers::OAuthProvider;
use crate::providers::oauth::flow::{self, Endpoints};
use crate::random;
use crate::response::RawResponse;
use crate::types::{Account, JsonObject, Profile, ProviderType, TokenSet};

/// How long a used authorization code is remembered: the lifetime of the check cookies
/// a callback needs (codes themselves live minutes at most).
const CODE_REPLAY_WINDOW: std::time::Duration =
    std::time::Duration::from_secs(checks::CHECK_MAX_AGE);

/// Clock tolerance for ID tokens (oauth4webapi: 30 s).
pub(crate) const ID_TOKEN_CLOCK_TOLERANCE: i64 = 30;

fn route_error(provider: &str, e: impl Into<OAuthError>) -> AuthError {
    let e = e.into();
    match e {
        // The provider refused the code (invalid_grant …): shown on the sign-in page.
        OAuthError::Provider { error } => AuthError::OAuthCallbackError {
            provider: provider.to_owned(),
            error,
        },
        other => AuthError::CallbackRouteError {
            provider: provider.to_owned(),
            source: Box::new(other),
        },
    }
}

fn check_failed(message: &str) -> AuthError {
    AuthError::InvalidCheck {
        message: message.to_owned(),
    }
}

/// The callback's steps, in Auth.js's order: read the parameters, relay to the deployment a
/// redirect proxy named, check the response (state, `iss`, errors, code, PKCE, nonce), refuse
/// a code seen before, exchange the code, verify the ID token, build the user and account,
/// then sign in.
pub(crate) async fn callback(ctx: &Ctx<'_>, p: &OAuthProvider) -> Result<RawResponse, AuthError> {
    let id = p.id.as_str();
    let params = Params::read(ctx, p);
    let plan = flow::redirect_plan(
        p,
        ctx.config.redirect_proxy_url.as_deref(),
        ctx.req.origin(),
        ctx.auth_url(&format!("/callback/{id}")),
    );
    if let Some(relay) = relay_to_proxied_deployment(ctx, &params, &plan)? {
        return Ok(relay);
    }
    let client: Arc<dyn HttpClient> = p.client();
    let endpoints = flow::resolve_endpoints(p, &*client)
        .await
        .map_err(|e| route_error(id, e))?;
    let mut cookies: Vec<SetCookie> = Vec::new();
    let checked = check_response(ctx, p, &params, &plan, &endpoints, &mut cookies)?;
    refuse_used_code(ctx, id, checked.code).await?;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let tokens = exchange_code(ctx, p, &client, &endpoints, &plan, &checked, now).await?;
    // Only `oidc` providers use (and therefore verify) the ID token; `oauth` ones keep it as
    // an opaque token, like Auth.js's OAuth 2 response processing.
    let id_claims = match &tokens.id_token {
        Some(t) if p.kind == ProviderType::Oidc => Some(
            verify_id_token(p, &*client, &endpoints, t, checked.nonce.as_deref(), now)
                .await
                .map_err(|e| route_error(id, e))?,
        ),
        _ => None,
    };
    let Some(signing_in) =
        user_and_account(ctx, p, &*client, &endpoints, &params, tokens, id_claims).await?
    else {
        // Deviation (docs/architecture.md, deviations: OAuth `profile()` failure): back to
        // `<basePath>/signin`, not `<request URL>/signin`.
        return Ok(RawResponse::redirect(ctx.auth_url("/signin")));
    };
    sign_in(ctx, p, signing_in, cookies).await
}

/// The callback's parameters: from the form body for `response_mode=form_post`, else the
/// query.
struct Params(Vec<(String, String)>);

impl Params {
    fn read(ctx: &Ctx<'_>, p: &OAuthProvider) -> Self {
        Params(if p.is_form_post() && ctx.req.is_post() {
            ctx.req
                .body
                .iter()
                .flatten()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
                .collect()
        } else {
            ctx.req.query.pairs().to_vec()
        })
    }

    /// The last value of `name`.
    fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Redirect proxy hop (Auth.js `lib/actions/callback/index.ts`): on the proxy, a callback
/// whose `state` names another deployment's origin is relayed there with its parameters.
fn relay_to_proxied_deployment(
    ctx: &Ctx<'_>,
    params: &Params,
    plan: &flow::RedirectPlan,
) -> Result<Option<RawResponse>, AuthError> {
    let Some(state) = params.get("state").filter(|_| plan.on_proxy) else {
        return Ok(None);
    };
    ctx.debug("DECODE_STATE", || json!({ "proxied": true }));
    let claims = ctx
        .config
        .codec
        .decode(state, "encodedState")
        .ok()
        .flatten()
        .ok_or_else(|| check_failed("State could not be decoded"))?;
    let Some(origin) = claims.get("origin").and_then(Value::as_str) else {
        return Ok(None);
    };
    let target = url::Url::parse(origin).map_err(|_| check_failed("State could not be decoded"))?;
    if target.origin().ascii_serialization() == ctx.req.origin() {
        return Ok(None);
    }
    ctx.debug("Proxy redirecting to", || json!({ "origin": origin }));
    let query = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(&params.0)
        .finish();
    Ok(Some(RawResponse::redirect(format!("{origin}?{query}"))))
}

/// What a checked authorization response gives the token request.
struct Checked<'a> {
    code: &'a str,
    verifier: Option<String>,
    nonce: Option<String>,
}

/// Checks the authorization response against the check cookies and the issuer, as
/// oauth4webapi's `validateAuthResponse` does, and queues the cookies' clearing in
/// `cookies`: state (before the `error` check, as upstream), RFC 9207 `iss`, no JARM, the
/// provider's `error`, no implicit or hybrid tokens, the code, then the PKCE verifier and
/// the nonce.
fn check_response<'a>(
    ctx: &Ctx<'_>,
    p: &OAuthProvider,
    params: &'a Params,
    plan: &flow::RedirectPlan,
    endpoints: &Endpoints,
    cookies: &mut Vec<SetCookie>,
) -> Result<Checked<'a>, AuthError> {
    let id = p.id.as_str();
    let form_post = p.is_form_post();
    // Reads a check cookie and queues its clearing, with Auth.js's debug messages.
    let mut consume = |cookie: &crate::cookies::ResolvedCookie, kind: CheckKind| {
        let name = || json!({ "name": cookie.name.as_ref() });
        ctx.debug(kind.debug_message(CheckVerb::Parse), name);
        let (value, clear) =
            checks::consume(&ctx.config.codec, cookie, &ctx.req.cookies, kind, id)?;
        ctx.debug(kind.debug_message(CheckVerb::Use), name);
        ctx.debug(kind.debug_message(CheckVerb::Clear), name);
        cookies.push(clear);
        Ok::<_, AuthError>(value)
    };
    if p.checks.state || plan.proxied {
        let cookie = checks::cookie_for(&ctx.cookies.state, CheckKind::State, form_post);
        let expected = consume(&cookie, CheckKind::State)?;
        match params.get("state") {
            Some(s) if constant_time_eq(s, &expected) => {}
            Some(_) => return Err(check_failed("state mismatch")),
            None => return Err(check_failed("state missing from the response")),
        }
    }
    let issuer = endpoints.issuer.as_deref();
    let templated = issuer.is_some_and(|i| i.contains(crate::oauth::TENANT_PLACEHOLDER));
    match (params.get("iss"), issuer) {
        // A multi-tenant issuer is checked per tenant, on the ID token.
        _ if templated => {}
        (Some(iss), Some(expected)) if iss != expected => {
            return Err(check_failed(
                "response parameter \"iss\" does not match the issuer",
            ));
        }
        (None, Some(_)) if endpoints.iss_param_supported => {
            return Err(check_failed("response parameter \"iss\" missing"));
        }
        _ => {}
    }
    if params.get("response").is_some() {
        return Err(check_failed("JARM responses are not supported"));
    }
    if let Some(error) = params.get("error") {
        ctx.debug("OAuthCallbackError", || {
            json!({ "providerId": id, "error": error, "error_description": params.get("error_description") })
        });
        return Err(AuthError::OAuthCallbackError {
            provider: id.to_owned(),
            error: error.to_owned(),
        });
    }
    if params.get("id_token").is_some() || params.get("access_token").is_some() {
        return Err(check_failed("implicit and hybrid flows are not supported"));
    }
    let code = params
        .get("code")
        .filter(|c| !c.is_empty())
        .ok_or_else(|| check_failed("response parameter \"code\" missing"))?;
    let verifier = if p.checks.pkce {
        Some(consume(&ctx.cookies.pkce_code_verifier, CheckKind::Pkce)?)
    } else {
        None
    };
    let nonce = if p.checks.nonce {
        let cookie = checks::cookie_for(&ctx.cookies.nonce, CheckKind::Nonce, form_post);
        Some(consume(&cookie, CheckKind::Nonce)?)
    } else {
        None
    };
    Ok(Checked {
        code,
        verifier,
        nonce,
    })
}

/// An authorization code is exchanged once (RFC 6749 §4.1.2 asks providers to refuse a
/// second use; not every provider does, nor atomically): a replay, concurrent or not, gets
/// the answer the provider gives a used code, without a token request.
async fn refuse_used_code(ctx: &Ctx<'_>, id: &str, code: &str) -> Result<(), AuthError> {
    if ctx
        .first_use(&format!("oauth_code:{id}"), code, CODE_REPLAY_WINDOW)
        .await
    {
        return Ok(());
    }
    Err(AuthError::OAuthCallbackError {
        provider: id.to_owned(),
        error: "invalid_grant".to_owned(),
    })
}

/// The token request for the code (the standard one, or the provider's custom one) and its
/// processed answer.
async fn exchange_code(
    ctx: &Ctx<'_>,
    p: &OAuthProvider,
    client: &Arc<dyn HttpClient>,
    endpoints: &Endpoints,
    plan: &flow::RedirectPlan,
    checked: &Checked<'_>,
    now: i64,
) -> Result<TokenSet, AuthError> {
    let id = p.id.as_str();
    let token_http_error = |reason: String| {
        route_error(
            id,
            OAuthError::Http {
                step: "token",
                reason,
            },
        )
    };
    let (status, body) = if let Some(custom) = &p.token_request {
        let params = crate::providers::TokenRequestParams {
            code: checked.code.to_owned(),
            redirect_uri: plan.redirect_uri.clone(),
            code_verifier: checked.verifier.clone(),
            token_endpoint: endpoints.token.clone(),
            client_id: p.client_id.clone(),
            client_secret: p.client_secret.clone(),
        };
        let (status, json) = custom(params, client.clone())
            .await
            .map_err(|e| token_http_error(e.to_string()))?;
        (
            status,
            bytes::Bytes::from(serde_json::to_vec(&json).unwrap_or_default()),
        )
    } else {
        let token_endpoint = endpoints
            .token
            .as_deref()
            .ok_or_else(|| route_error(id, missing("token_endpoint")))?;
        let grant = flow::Grant::Code {
            code: checked.code,
            redirect_uri: &plan.redirect_uri,
            code_verifier: checked.verifier.as_deref(),
        };
        let req = flow::token_request(p, endpoints.issuer.as_deref(), token_endpoint, grant)
            .map_err(|e| route_error(id, e))?;
        let resp = client
            .send(req)
            .await
            .map_err(|e| token_http_error(e.to_string()))?;
        (resp.status().as_u16(), resp.into_body())
    };
    let tokens =
        flow::process_token_response(p, status, &body, now).map_err(|e| route_error(id, e))?;
    // Which tokens came back, never their values.
    ctx.debug("authorization result", || {
        json!({
            "provider": id,
            "token_type": tokens.token_type,
            "scope": tokens.scope,
            "expires_at": tokens.expires_at,
            "access_token": tokens.access_token.is_some(),
            "refresh_token": tokens.refresh_token.is_some(),
            "id_token": tokens.id_token.is_some(),
        })
    });
    Ok(tokens)
}

/// Who is signing in: the mapped user, the account and the profile.
struct SigningIn {
    user: crate::types::User,
    account: Account,
    profile: Profile,
    /// Whether the provider is trusted for its own MFA and its verified ID token says it
    /// asked for several factors (`mfa` in `amr`).
    upstream_mfa: bool,
}

/// The profile (ID token claims and userinfo) mapped to a user and an account; `None` when
/// the provider's `profile` mapping failed (logged).
async fn user_and_account(
    ctx: &Ctx<'_>,
    p: &OAuthProvider,
    client: &dyn HttpClient,
    endpoints: &Endpoints,
    params: &Params,
    tokens: TokenSet,
    id_claims: Option<JsonObject>,
) -> Result<Option<SigningIn>, AuthError> {
    let id = p.id.as_str();
    let upstream_mfa = p.trust_upstream_mfa
        && id_claims
            .as_ref()
            .and_then(|c| c.get("amr"))
            .and_then(Value::as_array)
            .is_some_and(|amr| amr.iter().any(|m| m == "mfa"));
    let mut profile = profile(p, client, endpoints, &tokens, id_claims)
        .await
        .map_err(|e| {
            ctx.debug(
                "getProfile error details",
                || json!({ "provider": id, "error": e.to_string() }),
            );
            route_error(id, e)
        })?;
    // Apple posts the user's name once, as a JSON `user` form field (Auth.js
    // `lib/actions/callback/oauth/callback.ts`).
    if let Some(Ok(user @ Value::Object(_))) = params.get("user").map(serde_json::from_str::<Value>)
    {
        profile.insert("user".into(), user);
    }
    let mut user = match p.map_profile(&profile, &tokens) {
        Ok(u) => u,
        Err(source) => {
            ctx.log_error(&AuthError::OAuthProfileParseError {
                provider: id.to_owned(),
                source,
            });
            return Ok(None);
        }
    };
    let provider_account_id = user.id.clone().unwrap_or_else(random::uuid_v4);
    // Without an adapter the user id is random per sign-in, as in Auth.js
    // (`getUserAndAccount` in `lib/actions/callback/oauth/callback.ts`).
    user.id = Some(random::uuid_v4());
    // Auth.js lower-cases the profile's address; it is normalised here as magic-link
    // addresses are, so that one address is one account whichever way it arrives. An
    // address the normaliser refuses is dropped (the sign-in goes on without one).
    user.email = user.email.and_then(|e| match crate::email_address::normalize_email(&e) {
        Ok(email) => Some(email),
        Err(error) => {
            tracing::warn!(provider = %id, %error, "OAuth profile email refused; signing in without it");
            None
        }
    });
    let tokens = match &p.account {
        Some(f) => f(&tokens),
        None => tokens,
    };
    Ok(Some(SigningIn {
        user,
        account: account_from_tokens(p, provider_account_id, tokens),
        profile: Profile::from_claims(profile),
        upstream_mfa,
    }))
}

/// The `signIn` callback, then with an adapter the user found or created and the account
/// linked (Auth.js `handleLoginOrRegister` in `lib/actions/callback/handle-login.ts`), then
/// the session.
async fn sign_in(
    ctx: &Ctx<'_>,
    p: &OAuthProvider,
    signing_in: SigningIn,
    cookies: Vec<SetCookie>,
) -> Result<RawResponse, AuthError> {
    let SigningIn {
        user,
        mut account,
        profile,
        upstream_mfa,
    } = signing_in;
    let known_user = match &ctx.config.adapter {
        Some(adapter) => adapter
            .get_user_by_account(&account.provider, &account.provider_account_id)
            .await?
            .map(|u| crate::types::User::from(&u)),
        None => None,
    };
    if let Some(url) = run_sign_in_callback(
        ctx,
        SignInParams {
            user: known_user.as_ref().unwrap_or(&user),
            account: Some(&account),
            profile: Some(&profile),
            email_verification_request: false,
            credentials: None,
        },
    )
    .await?
    {
        return Ok(RawResponse::redirect(url));
    }
    let (user, is_new_user, db_session) = match &ctx.config.adapter {
        Some(adapter) => {
            let login = login::account_login(
                ctx,
                &**adapter,
                &user,
                &mut account,
                Some(&profile),
                login::AccountRules::OAuth {
                    allow_email_linking: p.allow_dangerous_email_account_linking,
                },
            )
            .await?;
            (login.user, Some(login.is_new_user), login.session)
        }
        None => (user, None, None),
    };
    super::finish_sign_in(
        ctx,
        SignedIn {
            user: &user,
            account: &account,
            profile: Some(&profile),
            is_new_user,
        },
        db_session.as_ref(),
        cookies,
        crate::actions::completion::FirstFactor::External { upstream_mfa },
    )
    .await
}

fn missing(what: &str) -> OAuthError {
    OAuthError::InvalidResponse {
        step: "discovery",
        reason: format!("no {what}"),
    }
}

fn constant_time_eq(a: &str, b: &str) -> bool {
    crate::crypto::ct_eq(a.as_bytes(), b.as_bytes())
}

/// Verifies the ID token with the provider's JWKS, refetching it once for an unknown `kid`.
async fn verify_id_token(
    p: &OAuthProvider,
    client: &dyn HttpClient,
    endpoints: &Endpoints,
    token: &str,
    nonce: Option<&str>,
    now: i64,
) -> Result<JsonObject, OAuthError> {
    let (issuer, algs) = expected_signer(p, endpoints, token)?;
    let checks = IdTokenChecks {
        issuer: &issuer,
        client_id: &p.client_id,
        expected_nonce: nonce,
        allowed_algs: &algs,
        now,
        clock_tolerance: ID_TOKEN_CLOCK_TOLERANCE,
    };
    // A client configured for HS* (LINE) gets tokens signed with its secret.
    if p.id_token_signed_response_alg
        .as_deref()
        .is_some_and(|a| a.starts_with("HS"))
    {
        let secret = p.client_secret.as_deref().unwrap_or_default();
        return Ok(id_token::verify_id_token_with_secret(
            token, secret, &checks,
        )?);
    }
    with_provider_keys(p, client, endpoints, |set| {
        id_token::verify_id_token(token, set, &checks)
    })
    .await
}

/// Who must have signed a token of the provider (an ID token, a logout token): the issuer
/// (a multi-tenant issuer's template filled from the token's own `tid`; the signature and
/// the exact `iss` are still verified) and the acceptable algorithms.
pub(crate) fn expected_signer(
    p: &OAuthProvider,
    endpoints: &Endpoints,
    token: &str,
) -> Result<(String, Vec<String>), OAuthError> {
    let issuer = endpoints
        .issuer
        .as_deref()
        .ok_or_else(|| missing("issuer to check the ID token against"))?;
    let issuer = if issuer.contains(crate::oauth::TENANT_PLACEHOLDER) {
        let tid = id_token::unverified_claims(token)?
            .get("tid")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
            .map(str::to_owned)
            .ok_or(IdTokenError::MissingClaim { claim: "tid" })?;
        issuer.replace(crate::oauth::TENANT_PLACEHOLDER, &tid)
    } else {
        issuer.to_owned()
    };
    let algs: Vec<String> = match (&p.id_token_signed_response_alg, &endpoints.id_token_algs) {
        (Some(a), _) => vec![a.clone()],
        (None, Some(list)) if !list.is_empty() => list.clone(),
        _ => vec!["RS256".to_owned()],
    };
    Ok((issuer, algs))
}

/// `verify` with the provider's JWK Set, fetched again once when it knows no key of the
/// token's `kid` (a key rotation at the provider).
pub(crate) async fn with_provider_keys<T>(
    p: &OAuthProvider,
    client: &dyn HttpClient,
    endpoints: &Endpoints,
    verify: impl Fn(&id_token::Jwks) -> Result<T, IdTokenError>,
) -> Result<T, OAuthError> {
    let jwks_uri = endpoints
        .jwks_uri
        .as_deref()
        .ok_or_else(|| missing("jwks_uri (configure .jwks_uri(..) or an issuer with discovery)"))?;
    let set = jwks(client, &p.caches, jwks_uri, false).await?;
    match verify(&set) {
        Err(IdTokenError::UnknownKey { .. }) => {
            let set = jwks(client, &p.caches, jwks_uri, true).await?;
            Ok(verify(&set)?)
        }
        other => Ok(other?),
    }
}

/// The profile: ID token claims (OIDC), or userinfo (OAuth, or OIDC with `id_token: false`,
/// whose `sub` must match the ID token's).
async fn profile(
    p: &OAuthProvider,
    client: &dyn HttpClient,
    endpoints: &Endpoints,
    tokens: &TokenSet,
    id_claims: Option<JsonObject>,
) -> Result<JsonObject, OAuthError> {
    if p.kind == ProviderType::Oidc
        && p.id_token
        && let Some(claims) = id_claims
    {
        return Ok(claims);
    }
    let info = if let Some(f) = &p.userinfo_request {
        let client: Arc<dyn HttpClient> = p.client();
        let cx = crate::providers::UserinfoContext {
            tokens: tokens.clone(),
            http: client,
            client_id: p.client_id.clone(),
            userinfo_endpoint: endpoints.userinfo.clone(),
        };
        f(cx).await.map_err(|e| OAuthError::Http {
            step: "userinfo",
            reason: e.to_string(),
        })?
    } else {
        let endpoint = endpoints
            .userinfo
            .as_deref()
            .ok_or_else(|| missing("userinfo endpoint configured"))?;
        let access_token = tokens.access_token.as_deref().unwrap_or_default();
        match &p.userinfo_signed_response_alg {
            None => flow::userinfo(client, endpoint, access_token).await?,
            Some(alg) => signed_userinfo(p, client, endpoints, endpoint, access_token, alg).await?,
        }
    };
    if let Some(claims) = &id_claims
        && claims.get("sub") != info.get("sub")
    {
        return Err(OAuthError::InvalidResponse {
            step: "userinfo",
            reason: "\"sub\" does not match the ID token".into(),
        });
    }
    Ok(info)
}

/// A signed userinfo response (`application/jwt`), verified with the provider's JWK Set.
async fn signed_userinfo(
    p: &OAuthProvider,
    client: &dyn HttpClient,
    endpoints: &Endpoints,
    endpoint: &str,
    access_token: &str,
    alg: &str,
) -> Result<JsonObject, OAuthError> {
    let jwt = flow::signed_userinfo(client, endpoint, access_token).await?;
    let jwks_uri = endpoints
        .jwks_uri
        .as_deref()
        .ok_or_else(|| missing("jwks_uri to verify the signed userinfo"))?;
    let issuer = endpoints
        .issuer
        .as_deref()
        .ok_or_else(|| missing("issuer to check the signed userinfo against"))?;
    let algs = [alg.to_owned()];
    let set = jwks(client, &p.caches, jwks_uri, false).await?;
    Ok(id_token::verify_signed_userinfo(
        &jwt,
        &set,
        issuer,
        &p.client_id,
        &algs,
    )?)
}

/// `{...tokens, provider, type, providerAccountId}` (what callbacks and events receive).
fn account_from_tokens(p: &OAuthProvider, provider_account_id: String, t: TokenSet) -> Account {
    let mut a = Account::new(p.kind, p.id.clone(), provider_account_id);
    a.access_token = t.access_token;
    a.token_type = t.token_type;
    a.id_token = t.id_token;
    a.refresh_token = t.refresh_token;
    a.scope = t.scope;
    a.expires_at = t.expires_at;
    a.authorization_details = t.authorization_details;
    let mut extra = t.extra;
    a.session_state = match extra.remove("session_state") {
        Some(Value::String(s)) => Some(s),
        _ => None,
    };
    a.extra = extra;
    if let Some(e) = t.expires_in {
        a.extra.insert("expires_in".into(), e.into());
    }
    a
}
