//! The consent page ([`CONSENT_PATH`](crate::CONSENT_PATH)): a third-party client names
//! what it will see, and the user's answer is remembered per client and scope.

use askama::Template;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::Value;

use crate::clients::Client;
use crate::params::{Params, pairs};
use crate::request::AuthorizationRequest;
use crate::responses::{no_store, shown_error};
use crate::single_use::{CONSENT_SALT, CONSENT_TICKET_TTL_SECS};
use crate::{CONSENT_PATH, ProviderState};

/// The consent page's ticket: the authorization request it answers and for whom (sealed
/// into the page, a JWE under the auth secret with a salt of its own, ten minutes). Only
/// the same user in the same session can answer with it: it is the page's CSRF token too.
#[derive(Debug, Clone, serde::Serialize, Deserialize)]
pub(crate) struct ConsentTicket {
    pub(crate) sub: String,
    pub(crate) sid: Option<String>,
    pub(crate) params: Vec<(String, String)>,
}

#[derive(Template)]
#[template(path = "oidc_consent.html")]
pub(crate) struct ConsentPage<'a> {
    pub(crate) client: &'a str,
    pub(crate) who: Option<&'a str>,
    pub(crate) scopes: Vec<&'static str>,
    pub(crate) action: &'a str,
    pub(crate) ticket: &'a str,
    pub(crate) destination: &'a str,
}

/// What a scope lets the client see, as the consent page says it.
pub(crate) fn scope_description(scope: &str) -> &'static str {
    match scope {
        "openid" => "who you are here (an identifier for your account)",
        "profile" => "your name and picture",
        "email" => "your email address",
        "groups" => "the groups you are in",
        "organizations" => "your organizations and your roles in them",
        "offline_access" => "your account while you are away (it stays signed in)",
        _ => "something this provider does not describe",
    }
}

impl ProviderState {
    /// Whether the user must be asked before `request` is answered: the client asks for
    /// consent, and the user's access for it does not cover each scope (or
    /// `prompt=consent`).
    pub(crate) async fn consent_to_ask(
        &self,
        request: &AuthorizationRequest,
        client: &Client,
        sub: &str,
    ) -> Result<bool, Box<Response>> {
        if !client.asks_consent() {
            return Ok(false);
        }
        if request.prompt_consent {
            return Ok(true);
        }
        let access = self.app_access(sub, &request.client_id).await?;
        Ok(!access.is_some_and(|a| a.covers(&request.scopes)))
    }

    /// The consent page for `request` (framing refused, nothing cached).
    pub(crate) fn consent_page(
        &self,
        request: &AuthorizationRequest,
        client: &Client,
        ticket: ConsentTicket,
        session: Option<&Value>,
    ) -> Response {
        let Some(sealed) = self.seal(&ticket, CONSENT_SALT, CONSENT_TICKET_TTL_SECS) else {
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        };
        let destination = url::Url::parse(&request.redirect_uri)
            .map(|u| u.origin().ascii_serialization())
            .unwrap_or_default();
        let who = session
            .and_then(|s| s.get("user"))
            .and_then(|u| u.get("email").or_else(|| u.get("name")))
            .and_then(Value::as_str);
        let page = ConsentPage {
            client: client.name(),
            who,
            scopes: request
                .scopes
                .iter()
                .map(|s| scope_description(s))
                .collect(),
            action: CONSENT_PATH,
            ticket: &sealed,
            destination: &destination,
        };
        let Ok(body) = page.render() else {
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        };
        // The answer is a redirect to the client: form-action allows its origin.
        let csp = format!(
            "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' {destination}; frame-ancestors 'none'; base-uri 'none'"
        );
        let mut r = axum::response::Html(body).into_response();
        if let Ok(v) = HeaderValue::try_from(csp) {
            r.headers_mut().insert(header::CONTENT_SECURITY_POLICY, v);
        }
        r.headers_mut()
            .insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
        no_store(r)
    }
}

/// `POST /oidc/consent`: the consent page's answer (`ticket`, `decision=allow|deny`), from
/// the user and session the page was made for; on `allow` the consent is remembered and the
/// client gets its code, on `deny` `access_denied`.
pub(crate) async fn consent(
    State(s): State<ProviderState>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(params) = Params::unique(pairs(&body)) else {
        return shown_error("a parameter is given more than once");
    };
    let param = |name: &str| params.get(name);
    let Some(ticket) = param("ticket").and_then(|t| s.unseal::<ConsentTicket>(t, CONSENT_SALT))
    else {
        return shown_error("this consent form is not one of ours, or it expired");
    };
    let lookup = match s.read_session(&uri, &headers).await {
        Ok(l) => l,
        Err(answer) => return *answer,
    };
    // The page's own user, in the session it was shown in: another site cannot answer it.
    let same = lookup.session.is_some()
        && lookup.session.as_ref().and_then(|s| s.user_id()) == Some(ticket.sub.as_str())
        && lookup.session_id == ticket.sid;
    if !same {
        tracing::warn!("oidc provider: a consent answer from another session refused");
        return shown_error("this consent form was made for another session");
    }
    // The ticket's request passed the authorization endpoint, pushed when it had to be.
    let (request, client) = match s.authorization_request(&ticket.params, true).await {
        Ok(r) => r,
        Err(crate::request::RequestRefused::Unavailable) => {
            return crate::responses::clients_unavailable();
        }
        Err(_) => return shown_error("the request this form answers is no longer valid"),
    };
    let mut response = match param("decision") {
        // The user may have left the client's allowed users since the page was shown.
        Some("allow") => match s.admitted(&request, &client, &ticket.sub).await {
            Err(answer) => answer,
            Ok(()) => {
                // Remembered as the user's access for the client, which issuing the code
                // records.
                tracing::info!(client = %request.client_id, user = %ticket.sub, "oidc provider: consent given");
                let sign_in = lookup.session.as_ref().and_then(|s| s.sign_in());
                let auth_time = sign_in.and_then(|i| i.auth_time);
                let amr = sign_in.map(|i| i.amr.clone()).unwrap_or_default();
                s.issue_code(&request, &client, &ticket.sub, auth_time, amr, ticket.sid)
                    .await
            }
        },
        Some("deny") => s.provider.refuse(
            &request,
            "access_denied",
            "the user did not allow this client",
        ),
        _ => return shown_error("the answer is allow or deny"),
    };
    for c in lookup.set_cookie {
        response.headers_mut().append(header::SET_COOKIE, c);
    }
    no_store(response)
}
