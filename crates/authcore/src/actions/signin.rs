//! `POST /signin[/:provider]` (Auth.js `lib/actions/signin/index.ts`).

#[cfg(feature = "oauth")]
use serde_json::json;

use super::Ctx;
#[cfg(feature = "oauth")]
use crate::checks::{self, CHECK_MAX_AGE, CheckKind, CheckVerb};
use crate::error::AuthError;
#[cfg(feature = "oauth")]
use crate::oauth::OAuthError;
#[cfg(feature = "oauth")]
use crate::providers::OAuthProvider;
use crate::providers::Provider;
#[cfg(feature = "oauth")]
use crate::providers::oauth::flow::{self, CheckValues};
use crate::response::RawResponse;

pub(crate) async fn signin(ctx: &Ctx<'_>) -> Result<RawResponse, AuthError> {
    ctx.require_csrf("signin")?;
    match ctx.provider {
        // Credentials (and WebAuthn) sign in through their callback; go to the built-in page.
        None | Some(Provider::Credentials(_)) => Ok(RawResponse::redirect(ctx.auth_url("/signin"))),
        #[cfg(feature = "webauthn")]
        Some(Provider::WebAuthn(_)) => Ok(RawResponse::redirect(ctx.auth_url("/signin"))),
        #[cfg(feature = "oauth")]
        Some(Provider::OAuth(p)) => oauth_signin(ctx, p).await,
        #[cfg(feature = "email")]
        Some(Provider::Email(p)) => super::callback::email::send_link(ctx, p).await,
    }
}

#[cfg(feature = "oauth")]
fn route_error(p: &OAuthProvider) -> impl Fn(OAuthError) -> AuthError + '_ {
    move |e| AuthError::CallbackRouteError {
        provider: p.id.clone(),
        source: Box::new(e),
    }
}

#[cfg(feature = "oauth")]
/// Redirects to the provider's authorization endpoint with the check cookies (Auth.js
/// `lib/actions/signin/authorization-url.ts`).
async fn oauth_signin(ctx: &Ctx<'_>, p: &OAuthProvider) -> Result<RawResponse, AuthError> {
    let client = p.client();
    let endpoints = flow::resolve_endpoints(p, &*client)
        .await
        .map_err(route_error(p))?;
    let endpoint = endpoints.authorization.ok_or_else(|| {
        route_error(p)(OAuthError::InvalidResponse {
            step: "discovery",
            reason: "no authorization_endpoint".into(),
        })
    })?;
    let own_callback = ctx.auth_url(&format!("/callback/{}", p.id));
    let plan = flow::redirect_plan(
        p,
        ctx.config.redirect_proxy_url.as_deref(),
        ctx.req.origin(),
        own_callback.clone(),
    );
    if plan.proxied {
        ctx.debug(
            "using redirect proxy",
            || json!({ "redirect_uri": plan.redirect_uri, "origin": own_callback }),
        );
    }
    let redirect_uri = plan.redirect_uri;
    let codec = &ctx.config.codec;
    let form_post = p.is_form_post();
    let mut cookies = Vec::new();
    let seal = |kind: CheckKind, cookie, value: &str| {
        let cookie = checks::cookie_for(cookie, kind, form_post);
        let sealed = checks::seal(codec, &cookie, value, &p.id)?;
        ctx.debug(
            kind.debug_message(CheckVerb::Create),
            || json!({ "name": sealed.name.as_ref(), "maxAge": CHECK_MAX_AGE }),
        );
        Ok::<_, AuthError>(sealed)
    };

    // state: the parameter is itself a JWE (salt "encodedState"); the cookie seals it.
    // A redirect proxy needs `state` to carry this deployment's callback URL (Auth.js
    // `state.create` in `lib/actions/callback/oauth/checks.ts`).
    let state = if p.checks.state || plan.proxied {
        let random = crate::random::b64url_token::<32>();
        let inner = if plan.proxied && !plan.on_proxy {
            json!({ "origin": own_callback, "random": random })
        } else {
            json!({ "random": random })
        };
        let inner = codec
            .encode(
                inner.as_object().unwrap_or(&Default::default()),
                "encodedState",
                CHECK_MAX_AGE,
            )
            .map_err(|e| AuthError::InvalidCheck {
                message: format!("could not create state: {e}"),
            })?;
        cookies.push(seal(CheckKind::State, &ctx.cookies.state, &inner)?);
        Some(inner)
    } else {
        None
    };
    let code_challenge = if p.checks.pkce {
        let (verifier, challenge) = flow::pkce_pair();
        cookies.push(seal(
            CheckKind::Pkce,
            &ctx.cookies.pkce_code_verifier,
            &verifier,
        )?);
        Some(challenge)
    } else {
        None
    };
    let nonce = if p.checks.nonce {
        let nonce = crate::random::b64url_token::<32>();
        cookies.push(seal(CheckKind::Nonce, &ctx.cookies.nonce, &nonce)?);
        Some(nonce)
    } else {
        None
    };
    let url = flow::authorization_url(
        p,
        &endpoint,
        &redirect_uri,
        ctx.req.query.pairs(),
        &CheckValues {
            state: state.as_deref(),
            code_challenge,
            nonce: nonce.as_deref(),
        },
    )
    .map_err(route_error(p))?;
    ctx.debug(
        "authorization url is ready",
        || json!({ "provider": p.id, "url": url.origin().ascii_serialization() }),
    );
    let url: String = url.into();
    let url = match &p.authorization_hook {
        Some(f) => f(url),
        None => url,
    };
    let mut resp = RawResponse::redirect(url);
    resp.cookies = cookies;
    Ok(resp)
}
