//! The mailed link of an invitation to an organization (beyond Auth.js), with
//! [`organizations`](crate::AuthConfigBuilder::organizations) configured:
//!
//! | route | body | answer |
//! |---|---|---|
//! | `GET /invitation?token` | — | the organization's name and the roles offered, with a form that accepts them |
//! | `POST /invitation` | `csrfToken, token` | the invitation accepted, its organization made the session's active one; a redirect to the account page |
//!
//! A signed-out visitor is sent to sign in (or sign up) and back to the link. Only the user
//! whose address was invited accepts (`WrongAddress` for any other, and nothing changes);
//! a link used, expired, revoked or unknown answers `InvalidInvitation`. A request that
//! sends or asks for JSON gets JSON answers: `{"organization": {id, name}, "roles",
//! "expires"}` for the `GET`, `{"status": "accepted", "organizationId", "url"}` for the
//! `POST`, `{"error": …}` with `401 SessionRequired`, `400 InvalidInvitation` or `403
//! WrongAddress`; a post without the CSRF token is refused as every action's is. The token
//! is never shown on a page (only posted back by the form) nor logged.

use http::StatusCode;
use serde_json::json;

use super::Ctx;
use super::account::{self as account_ops, AccountError, CurrentSession};
use super::organizations::{self as ops, InvitationRef};
use super::pages::InvitationPage;
use crate::adapter::{Invitation, Organization};
use crate::cookies::encode_uri_component;
use crate::error::AuthError;
use crate::response::RawResponse;

/// `<basePath>/invitation`.
pub(crate) async fn invitation(ctx: &Ctx<'_>) -> Result<RawResponse, AuthError> {
    let post = ctx.req.is_post();
    if post {
        ctx.require_csrf("invitation")?;
    }
    let token = if post {
        ctx.req.body_str("token")
    } else {
        ctx.req.query.get("token")
    }
    .unwrap_or_default();
    let Some(me) = account_ops::current_session(ctx.config, &ctx.req.url, &ctx.req.cookies).await
    else {
        return Ok(sign_in_first(ctx, token));
    };
    let answer = if post {
        accept(ctx, &me, token).await
    } else {
        match ops::linked_invitation(ctx.config, &me.user_id, token).await {
            Ok(Some((invitation, organization))) => {
                return offer(ctx, &invitation, &organization, token);
            }
            // Signed in with the invited address: the invitation to sign up is done.
            Ok(None) => Ok(RawResponse::redirect(next(ctx))),
            Err(e) => Err(e),
        }
    };
    match answer {
        Ok(r) => Ok(r),
        Err(e @ (AccountError::InvalidInvitation | AccountError::WrongAddress)) => refused(ctx, &e),
        Err(e) => Err(super::account::account_failure(e)),
    }
}

/// Where the user goes once the invitation is accepted (or put off): the built-in account
/// page, or without built-in pages the site's home.
fn next(ctx: &Ctx<'_>) -> String {
    if cfg!(feature = "pages") {
        ctx.auth_url("/account")
    } else {
        format!("{}/", ctx.req.origin())
    }
}

/// Signed out: to sign in (or up) and back to the link; `401` for JSON.
fn sign_in_first(ctx: &Ctx<'_>, token: &str) -> RawResponse {
    if ctx.wants_json() {
        return json_answer(
            StatusCode::UNAUTHORIZED,
            json!({ "error": "SessionRequired" }),
        );
    }
    let query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("token", token)
        .finish();
    let back = ctx.auth_url(&format!("/invitation?{query}"));
    RawResponse::redirect(format!(
        "{}?callbackUrl={}",
        ctx.auth_url("/signin"),
        encode_uri_component(&back)
    ))
}

/// `GET`: what the link invites to, and the form that accepts it.
fn offer(
    ctx: &Ctx<'_>,
    invitation: &Invitation,
    organization: &Organization,
    token: &str,
) -> Result<RawResponse, AuthError> {
    if ctx.wants_json() {
        let expires = invitation
            .expires
            .format(&time::format_description::well_known::Rfc3339)
            .ok();
        return Ok(json_answer(
            StatusCode::OK,
            json!({
                "organization": { "id": organization.id, "name": organization.name },
                "roles": invitation.roles,
                "expires": expires,
            }),
        ));
    }
    let page = InvitationPage::Offer {
        organization: &organization.name,
        roles: &invitation.roles,
        token,
    };
    super::pages::render_invitation_page(ctx, &page, next(ctx))
}

/// `POST`: accepts the invitation and makes its organization the session's active one.
async fn accept(
    ctx: &Ctx<'_>,
    me: &CurrentSession,
    token: &str,
) -> Result<RawResponse, AccountError> {
    let invitation =
        ops::accept_invitation(ctx.config, &me.user_id, InvitationRef::Token(token)).await?;
    let mut cookies = Vec::new();
    if let Some(org) = invitation.organization_id.as_deref() {
        match ops::set_active_organization(
            ctx.config,
            me,
            &ctx.req.url,
            &ctx.req.cookies,
            Some(org),
        )
        .await
        {
            Ok(set) => cookies = set,
            // The membership is made: the active organization is a convenience.
            Err(e) => tracing::warn!(
                user = %me.user_id,
                organization = %org,
                error = %e,
                "invitation accepted, but its organization could not be made the active one"
            ),
        }
    }
    let next = next(ctx);
    let mut r = if ctx.wants_json() {
        json_answer(
            StatusCode::OK,
            json!({
                "status": "accepted",
                "organizationId": invitation.organization_id,
                "url": next,
            }),
        )
    } else {
        RawResponse::redirect(next)
    };
    r.cookies = cookies;
    Ok(r)
}

/// A refused link: an error page, or JSON `{"error": …}`.
fn refused(ctx: &Ctx<'_>, e: &AccountError) -> Result<RawResponse, AuthError> {
    let (status, error, title, line) = match e {
        AccountError::WrongAddress => (
            StatusCode::FORBIDDEN,
            "WrongAddress",
            "This invitation is for someone else",
            "It was sent to another email address than your account's. Sign in with the \
             invited address to accept it, or ask for an invitation to yours.",
        ),
        _ => (
            StatusCode::BAD_REQUEST,
            "InvalidInvitation",
            "This invitation is not valid",
            "It was accepted already, it expired or was withdrawn, or the link was cut short. \
             Ask for a new invitation.",
        ),
    };
    if ctx.wants_json() {
        return Ok(json_answer(status, json!({ "error": error })));
    }
    let page = InvitationPage::Refused {
        status,
        title,
        line,
    };
    super::pages::render_invitation_page(ctx, &page, next(ctx))
}

fn json_answer(status: StatusCode, body: serde_json::Value) -> RawResponse {
    let mut r = RawResponse::json(body);
    r.status = Some(status);
    r.with_no_cache()
}
