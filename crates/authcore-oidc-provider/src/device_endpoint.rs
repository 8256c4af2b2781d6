//! The device authorization grant's I/O (RFC 8628; its checks are `device`'s): the device
//! authorization endpoint ([`DEVICE_AUTHORIZATION_PATH`](crate::DEVICE_AUTHORIZATION_PATH)), the user's page
//! ([`DEVICE_VERIFICATION_PATH`]: a code entered, checked and allowed or denied by a
//! signed-in user) and the token endpoint's `device_code` grant.
//!
//! The device code is sealed (it names the authorization, its client and scopes); the
//! single-use store keeps the request under its user code and the user's decision under
//! its id, for every instance sharing the store to see, and marks each user code decided
//! once and each device code redeemed once.

use askama::Template;
use authcore_keys::unix_time;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::client_auth::{ClientForm, authenticated_client};
use crate::clients::{Client, GrantType};
use crate::consent::scope_description;
use crate::device::{self, Decision, DeviceRequest, Poll};
use crate::grant::Grant;
use crate::params::{Params, pairs};
use crate::responses::{
    clients_unavailable, invalid_grant, json_response, no_randomness, no_signature, no_store,
    redirect, refused, token_error, unavailable,
};
use crate::single_use::{
    DEVICE_DECISION, DEVICE_EXPIRED_GRACE_SECS, DEVICE_LOOKUP, DEVICE_POLL, DEVICE_REQUEST,
    DEVICE_SALT, DEVICE_START, DEVICE_TICKET_SALT, USED_DEVICE_CODE, USED_USER_CODE, secs,
};
use crate::token::{Answer, random_token};
use crate::{DEVICE_VERIFICATION_PATH, ProviderState};

/// Whether a user may use a client now: admitted, or refused with the page to show.
enum Admission {
    Admitted,
    Refused(Response),
}

/// `POST /oidc/device` (RFC 8628 §3.1–3.2): a client that may use the grant asks for a
/// device code and a user code.
pub(crate) async fn device_authorization(
    State(s): State<ProviderState>,
    parts: Parts,
    body: Bytes,
) -> Response {
    let form = match authenticated_client(&s, &parts.headers, &body).await {
        Ok(f) => f,
        Err(answer) => return *answer,
    };
    if let Err(answer) = s.start_allowed(&parts, form.client.id()).await {
        return no_store(*answer);
    }
    let answer = s
        .start_device_authorization(&form)
        .await
        .unwrap_or_else(|refused| *refused);
    no_store(answer)
}

impl ProviderState {
    async fn start_device_authorization(&self, form: &ClientForm) -> Answer {
        let client = &*form.client;
        if !client.allows_grant(GrantType::DeviceCode) {
            return Err(refused(
                StatusCode::BAD_REQUEST,
                "unauthorized_client",
                "the client may not use the device_code grant (its grant_types)",
            ));
        }
        let scopes = device::requested_scopes(
            form.param("scope"),
            |s| client.allows_scope(s),
            self.organizations_on(),
        )
        .map_err(|device::RequestError::Scope| {
            refused(
                StatusCode::BAD_REQUEST,
                "invalid_scope",
                "a scope the client may not ask for",
            )
        })?;
        let store = self.auth.config().single_use();
        let now = unix_time();
        let ttl = device::DEVICE_CODE_TTL_SECS;
        let request = DeviceRequest {
            id: random_token().ok_or_else(no_randomness)?,
            client_id: client.id().to_owned(),
            scopes,
            expires_at: now + i64::try_from(ttl).unwrap_or(i64::MAX),
        };
        let kept = serde_json::to_string(&request).map_err(|_| no_signature())?;
        // A new code, not one pending (drawn again on the rare meeting): kept only if no
        // authorization holds it, in one step of the store, so that two devices never share
        // a code however they race.
        let mut user_code = None;
        for _ in 0..3 {
            let code = new_user_code().ok_or_else(no_randomness)?;
            let free = store
                .put_new(
                    DEVICE_REQUEST,
                    &code,
                    &kept,
                    std::time::Duration::from_secs(ttl),
                )
                .await
                .map_err(|e| store_failed(&e))?;
            if free {
                user_code = Some(code);
                break;
            }
        }
        let Some(user_code) = user_code else {
            return Err(no_randomness());
        };
        let device_code = self
            .seal(&request, DEVICE_SALT, ttl + DEVICE_EXPIRED_GRACE_SECS)
            .ok_or_else(no_signature)?;
        let shown = device::display(&user_code);
        let verification_uri = self.provider.url(DEVICE_VERIFICATION_PATH);
        let mut complete = url::Url::parse(&verification_uri).map_err(|_| no_signature())?;
        complete.query_pairs_mut().append_pair("user_code", &shown);
        tracing::info!(client = %client.id(), "oidc provider: device authorization started");
        Ok(json_response(
            StatusCode::OK,
            &json!({
                "device_code": device_code,
                "user_code": shown,
                "verification_uri": verification_uri,
                "verification_uri_complete": complete.as_str(),
                "expires_in": ttl,
                "interval": device::POLL_INTERVAL_SECS,
            }),
        ))
    }

    /// The `urn:ietf:params:oauth:grant-type:device_code` grant (RFC 8628 §3.4–3.5): each
    /// poll is answered as [`device::poll`] says; an allowed authorization's tokens are
    /// issued once, as the code flow issues them.
    pub(crate) async fn device_grant(&self, form: &ClientForm) -> Answer {
        let client = &*form.client;
        let Some(code) = form.param("device_code") else {
            return Err(refused(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "device_code is missing",
            ));
        };
        let request: DeviceRequest = self
            .unseal(code, DEVICE_SALT)
            .ok_or_else(|| invalid_grant("the device code is invalid"))?;
        let now = unix_time();
        let store = self.auth.config().single_use();
        // Only the client's own polls of a live code count (another's learn nothing).
        let live = request.client_id == client.id() && now < request.expires_at;
        let (too_soon, decision) = if live {
            let too_soon = store
                .attempt(DEVICE_POLL, &request.id, &device::poll_limit())
                .await
                .map_err(|e| store_failed(&e))?
                .is_some();
            let decision = match store.get(DEVICE_DECISION, &request.id).await {
                Ok(d) => d.and_then(|d| serde_json::from_str::<Decision>(&d).ok()),
                Err(e) => return Err(store_failed(&e)),
            };
            (too_soon, decision)
        } else {
            (false, None)
        };
        let grant = match device::poll(&request, client.id(), now, too_soon, decision) {
            Poll::Redeem(grant) => grant,
            Poll::Replayed => {
                tracing::warn!(client = %client.id(), "oidc provider: a device code was redeemed again; its grant is revoked");
                self.revoke_grant(&request.id).await;
                return Err(invalid_grant("the device code was used already"));
            }
            Poll::Refused(error, description) => {
                return Err(Box::new(token_error(
                    StatusCode::BAD_REQUEST,
                    error,
                    description,
                )));
            }
        };
        let window = std::time::Duration::from_secs(
            device::DEVICE_CODE_TTL_SECS + DEVICE_EXPIRED_GRACE_SECS,
        );
        if !self
            .first_use(USED_DEVICE_CODE, &request.id, window)
            .await?
        {
            // Redeemed again (a poll that raced the first): what the first redemption gave
            // is revoked too (as a replayed code's, RFC 9700 §4.5.3.1).
            self.revoke_grant(&request.id).await;
            return Err(invalid_grant("the device code was used already"));
        }
        // Later polls hear that it was used (and revoke it), however soon they come.
        let left = secs(request.expires_at - now + 60);
        if let Err(answer) = self
            .keep_decision(&request.id, &Decision::Redeemed, left)
            .await
        {
            tracing::error!(status = %answer.status(), "oidc provider: a redeemed device code is not recorded as such");
        }
        self.redeemed_grant_tokens(form, &grant, &request.id, None)
            .await
    }
}

/// A new user code (normalised form).
fn new_user_code() -> Option<String> {
    let mut bytes = [0u8; 32];
    for _ in 0..4 {
        authcore::random::fill(&mut bytes).ok()?;
        if let Some(code) = device::user_code(&bytes) {
            return Some(code);
        }
    }
    None
}

fn store_failed(e: &authcore::BoxError) -> Box<Response> {
    tracing::error!(error = %e, "oidc provider: the single-use store failed");
    unavailable("the single-use store failed")
}

/// The device page's ticket: the authorization it answers, for whom (sealed into the page
/// as the consent page's is, ten minutes at most; its CSRF token too).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct DeviceTicket {
    sub: String,
    sid: Option<String>,
    /// The user code (normalised).
    code: String,
    /// The authorization's id.
    id: String,
}

/// What the confirmation asks about.
struct Confirm<'a> {
    client: &'a str,
    code: String,
    scopes: Vec<&'static str>,
    ticket: String,
}

#[derive(Template)]
#[template(path = "oidc_device.html")]
struct DevicePage<'a> {
    heading: &'a str,
    message: Option<&'a str>,
    /// Whether the code entry form is shown.
    entry: bool,
    who: Option<&'a str>,
    confirm: Option<Confirm<'a>>,
    action: &'a str,
}

impl DevicePage<'_> {
    /// The page, framing refused, nothing cached; forms post to this origin only.
    fn answer(&self, status: StatusCode) -> Response {
        let Ok(body) = self.render() else {
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        };
        let mut r = (status, axum::response::Html(body)).into_response();
        r.headers_mut().insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(
                "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
            ),
        );
        r.headers_mut()
            .insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
        no_store(r)
    }
}

/// The entry page with `message` (the code to type again).
fn entry(status: StatusCode, message: Option<&str>) -> Response {
    DevicePage {
        heading: "Connect a device",
        message,
        entry: true,
        who: None,
        confirm: None,
        action: DEVICE_VERIFICATION_PATH,
    }
    .answer(status)
}

/// A page that ends the exchange with `message`.
fn done(status: StatusCode, heading: &str, message: &str) -> Response {
    DevicePage {
        heading,
        message: Some(message),
        entry: false,
        who: None,
        confirm: None,
        action: DEVICE_VERIFICATION_PATH,
    }
    .answer(status)
}

/// The page of a code answered already.
fn already_answered() -> Response {
    done(
        StatusCode::CONFLICT,
        "Already answered",
        "This code was answered already. Start again on your device for a new one.",
    )
}

const UNKNOWN_CODE: &str =
    "That code is not one we know, or it expired. Check the code on your device and try again.";

/// `GET /oidc/device/verify[?user_code=…]` (RFC 8628 §3.3): for a signed-in user, the code
/// entry page or, with a code, what the device asks for and the choice to allow or deny
/// it (a code in the link, `verification_uri_complete`, is only prefilled: §5.4); the
/// sign-in page first and back otherwise.
pub(crate) async fn verify(State(s): State<ProviderState>, parts: Parts) -> Response {
    let typed = pairs(parts.uri.query().unwrap_or_default().as_bytes())
        .into_iter()
        .find(|(k, _)| k == "user_code")
        .map(|(_, v)| v);
    let code = typed.as_deref().and_then(device::normalise);
    let lookup = match s.read_session(&parts.uri, &parts.headers).await {
        Ok(l) => l,
        Err(answer) => return *answer,
    };
    let session = lookup.session.as_ref();
    let Some(sub) = session.and_then(authcore::SessionJson::user_id) else {
        // Back to this page, with the code as it would be shown (nothing else reflected).
        let target = match &code {
            Some(c) => format!(
                "{DEVICE_VERIFICATION_PATH}?user_code={}",
                device::display(c)
            ),
            None => DEVICE_VERIFICATION_PATH.to_owned(),
        };
        return no_store(redirect(&s.auth.sign_in_location(&target)));
    };
    let mut response = match (typed, code) {
        (None, _) => entry(StatusCode::OK, None),
        (Some(_), None) => entry(StatusCode::BAD_REQUEST, Some(UNKNOWN_CODE)),
        (Some(_), Some(code)) => {
            s.confirmation(&parts, sub, lookup.session_id.clone(), code, session)
                .await
        }
    };
    for c in lookup.set_cookie {
        response.headers_mut().append(header::SET_COOKIE, c);
    }
    no_store(response)
}

impl ProviderState {
    /// Whether `client` may start another device authorization from the request's address
    /// ([`device::start_limits`]); `429 slow_down` when not.
    async fn start_allowed(&self, parts: &Parts, client: &str) -> Result<(), Box<Response>> {
        let store = self.auth.config().single_use();
        let address = self
            .auth
            .client_address(parts)
            .map(authcore::ratelimit::client_subject);
        for (scope, limit) in device::start_limits() {
            let subject = match (scope, &address) {
                ("address", Some(a)) => format!("address\n{a}"),
                ("address", None) => continue,
                _ => format!("client\n{client}"),
            };
            match store.attempt(DEVICE_START, &subject, &limit).await {
                Ok(None) => {}
                Ok(Some(_)) => {
                    tracing::warn!(
                        limit = scope,
                        client,
                        "oidc provider: device authorizations limited"
                    );
                    return Err(refused(
                        StatusCode::TOO_MANY_REQUESTS,
                        "slow_down",
                        "too many device authorizations were started; wait a few minutes",
                    ));
                }
                Err(e) => return Err(store_failed(&e)),
            }
        }
        Ok(())
    }

    /// Whether a lookup of a user code by `sub` from the request `parts` is within the
    /// limits ([`device::lookup_limits`]), counted as one attempt under each; `Err` with
    /// the page to show when not. The subjects counted are returned: a code that was right
    /// is no guess, and its attempts are given back ([`ProviderState::no_guess`]), so
    /// that the limits, the one over all lookups included, count wrong codes only.
    async fn lookup_allowed(&self, parts: &Parts, sub: &str) -> Result<Vec<String>, Response> {
        let store = self.auth.config().single_use();
        let mut counted = Vec::with_capacity(3);
        let address = self
            .auth
            .client_address(parts)
            .map(authcore::ratelimit::client_subject);
        for (scope, limit) in device::lookup_limits() {
            let subject = match scope {
                "client" => match &address {
                    Some(a) => format!("client\n{a}"),
                    None => continue,
                },
                "user" => format!("user\n{sub}"),
                _ => "all".to_owned(),
            };
            match store.attempt(DEVICE_LOOKUP, &subject, &limit).await {
                Ok(None) => counted.push(subject),
                Ok(Some(_)) => {
                    tracing::warn!(limit = scope, user = %sub, "oidc provider: user code lookups limited");
                    return Err(entry(
                        StatusCode::TOO_MANY_REQUESTS,
                        Some("Too many codes were tried. Wait a few minutes, then try again."),
                    ));
                }
                Err(e) => {
                    tracing::error!(error = %e, "oidc provider: the single-use store failed");
                    return Err(StatusCode::SERVICE_UNAVAILABLE.into_response());
                }
            }
        }
        Ok(counted)
    }

    /// Gives back the lookup attempts `counted` by [`ProviderState::lookup_allowed`] for a
    /// code that was right. A store that fails leaves them counted (and logs).
    async fn no_guess(&self, counted: &[String]) {
        let store = self.auth.config().single_use();
        for subject in counted {
            if let Err(e) = store.give_back_attempt(DEVICE_LOOKUP, subject).await {
                tracing::error!(error = %e, "oidc provider: the single-use store failed");
            }
        }
    }

    /// The pending request under user code `code`, unexpired; `Ok(None)` when there is
    /// none.
    async fn pending(&self, code: &str) -> Result<Option<DeviceRequest>, Response> {
        match self
            .auth
            .config()
            .single_use()
            .get(DEVICE_REQUEST, code)
            .await
        {
            Ok(kept) => Ok(kept
                .and_then(|k| serde_json::from_str::<DeviceRequest>(&k).ok())
                .filter(|r| unix_time() < r.expires_at)),
            Err(e) => {
                tracing::error!(error = %e, "oidc provider: the single-use store failed");
                Err(StatusCode::SERVICE_UNAVAILABLE.into_response())
            }
        }
    }

    /// Whether user `sub` may use `client` now (its allowed users, bans); `Err` with the
    /// `503` when the user or the rules cannot be read, which says nothing of the user.
    async fn device_user_admitted(
        &self,
        client: &Client,
        sub: &str,
    ) -> Result<Admission, Response> {
        let refused = || {
            Admission::Refused(done(
                StatusCode::FORBIDDEN,
                "Not allowed",
                "You may not use this app.",
            ))
        };
        let user = match self.users.get_user(sub).await {
            Ok(Some(u)) => u,
            Ok(None) => return Ok(refused()),
            Err(e) => {
                tracing::error!(error = %e, "oidc provider: user read failed");
                return Err(StatusCode::SERVICE_UNAVAILABLE.into_response());
            }
        };
        match self.admits(client, &user).await {
            Ok(true) => Ok(Admission::Admitted),
            Ok(false) => Ok(refused()),
            Err(_) => Err(StatusCode::SERVICE_UNAVAILABLE.into_response()),
        }
    }

    /// The confirmation of user code `code` for `sub` (within the lookup limits).
    async fn confirmation(
        &self,
        parts: &Parts,
        sub: &str,
        sid: Option<String>,
        code: String,
        session: Option<&authcore::SessionJson>,
    ) -> Response {
        let counted = match self.lookup_allowed(parts, sub).await {
            Ok(counted) => counted,
            Err(page) => return page,
        };
        let request = match self.pending(&code).await {
            Ok(Some(r)) => {
                self.no_guess(&counted).await;
                r
            }
            Ok(None) => return entry(StatusCode::NOT_FOUND, Some(UNKNOWN_CODE)),
            Err(answer) => return answer,
        };
        match self
            .auth
            .config()
            .single_use()
            .get(DEVICE_DECISION, &request.id)
            .await
        {
            Ok(None) => {}
            Ok(Some(_)) => return already_answered(),
            Err(e) => {
                tracing::error!(error = %e, "oidc provider: the single-use store failed");
                return StatusCode::SERVICE_UNAVAILABLE.into_response();
            }
        }
        let client = match self.client(&request.client_id).await {
            Ok(Some(client)) => client,
            Ok(None) => return entry(StatusCode::NOT_FOUND, Some(UNKNOWN_CODE)),
            Err(_) => return clients_unavailable(),
        };
        match self.device_user_admitted(&client, sub).await {
            Ok(Admission::Admitted) => {}
            Ok(Admission::Refused(page)) | Err(page) => return page,
        }
        let ticket = DeviceTicket {
            sub: sub.to_owned(),
            sid,
            code: code.clone(),
            id: request.id.clone(),
        };
        let left = u64::try_from(request.expires_at - unix_time()).unwrap_or(0);
        let Some(sealed) = self.seal(&ticket, DEVICE_TICKET_SALT, left.max(1)) else {
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        };
        let who = session
            .map(authcore::SessionJson::json)
            .and_then(|s| s.get("user"))
            .and_then(|u| u.get("email").or_else(|| u.get("name")))
            .and_then(Value::as_str);
        DevicePage {
            heading: "",
            message: None,
            entry: false,
            who,
            confirm: Some(Confirm {
                client: client.name(),
                code: device::display(&code),
                scopes: request
                    .scopes
                    .iter()
                    .map(|s| scope_description(s))
                    .collect(),
                ticket: sealed,
            }),
            action: DEVICE_VERIFICATION_PATH,
        }
        .answer(StatusCode::OK)
    }
}

/// `POST /oidc/device/verify`: the confirmation's answer (`ticket`, `decision=allow|deny`)
/// from the user and session it was shown to; each user code is decided once, and the
/// decision is kept for the device's next poll.
pub(crate) async fn decide(
    State(s): State<ProviderState>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(params) = Params::unique(pairs(&body)) else {
        return entry(StatusCode::BAD_REQUEST, Some(UNKNOWN_CODE));
    };
    let Some(ticket) = params
        .get("ticket")
        .and_then(|t| s.unseal::<DeviceTicket>(t, DEVICE_TICKET_SALT))
    else {
        return entry(StatusCode::BAD_REQUEST, Some(UNKNOWN_CODE));
    };
    let lookup = match s.read_session(&uri, &headers).await {
        Ok(l) => l,
        Err(answer) => return *answer,
    };
    // The page's own user, in the session it was shown in: another site cannot answer it.
    let same = lookup.session.as_ref().and_then(|s| s.user_id()) == Some(ticket.sub.as_str())
        && lookup.session_id == ticket.sid;
    if !same {
        tracing::warn!("oidc provider: a device answer from another session refused");
        return done(
            StatusCode::FORBIDDEN,
            "Not allowed",
            "This form was made for another session.",
        );
    }
    let allow = match params.get("decision") {
        Some("allow") => true,
        Some("deny") => false,
        _ => return entry(StatusCode::BAD_REQUEST, None),
    };
    let sign_in = lookup.session.as_ref().and_then(|s| s.sign_in());
    let mut response = s
        .record_decision(&ticket, allow, sign_in)
        .await
        .unwrap_or_else(|page| page);
    for c in lookup.set_cookie {
        response.headers_mut().append(header::SET_COOKIE, c);
    }
    no_store(response)
}

impl ProviderState {
    /// Records the user's answer to the authorization of `ticket`, once.
    async fn record_decision(
        &self,
        ticket: &DeviceTicket,
        allow: bool,
        sign_in: Option<&authcore::SignInInfo>,
    ) -> Result<Response, Response> {
        let request = match self.pending(&ticket.code).await? {
            Some(r) if r.id == ticket.id => r,
            _ => return Ok(entry(StatusCode::NOT_FOUND, Some(UNKNOWN_CODE))),
        };
        let client = match self.client(&request.client_id).await {
            Ok(Some(client)) => client,
            Ok(None) => return Err(entry(StatusCode::NOT_FOUND, Some(UNKNOWN_CODE))),
            Err(_) => return Err(clients_unavailable()),
        };
        // The user may have been banned, or left the client's allowed users, since. A store
        // that cannot say answers `503` here, before the user code is spent, so the user may
        // allow again once it is back.
        let admitted = match allow {
            true => self.device_user_admitted(&client, &ticket.sub).await?,
            false => Admission::Admitted,
        };
        let store = self.auth.config().single_use();
        let left = request.expires_at - unix_time();
        let ttl = secs(left.max(1) + 60);
        let store_down = |e: authcore::BoxError| {
            tracing::error!(error = %e, "oidc provider: the single-use store failed");
            StatusCode::SERVICE_UNAVAILABLE.into_response()
        };
        if !store
            .first_use_checked(USED_USER_CODE, &request.id, ttl)
            .await
            .map_err(store_down)?
        {
            return Ok(already_answered());
        }
        let decision = match (allow, admitted) {
            (true, Admission::Admitted) => {
                match self
                    .device_grant_of(&request, &client, ticket, sign_in)
                    .await
                {
                    Ok(grant) => Decision::Approved { grant },
                    Err(answer) => {
                        // The user code is spent: the device hears `access_denied` (and may
                        // start again) rather than waiting out the code.
                        let _ = self
                            .keep_decision(&request.id, &Decision::Denied, ttl)
                            .await;
                        return Err(answer);
                    }
                }
            }
            (true, Admission::Refused(page)) => {
                // Refused for good: the device hears `access_denied`.
                self.keep_decision(&request.id, &Decision::Denied, ttl)
                    .await?;
                return Ok(page);
            }
            (false, _) => Decision::Denied,
        };
        self.keep_decision(&request.id, &decision, ttl).await?;
        Ok(match decision {
            Decision::Approved { .. } => {
                tracing::info!(client = %client.id(), user = %ticket.sub, "oidc provider: device authorization allowed");
                done(
                    StatusCode::OK,
                    "Device connected",
                    "You may close this page and go back to your device.",
                )
            }
            Decision::Denied | Decision::Redeemed => {
                tracing::info!(client = %client.id(), user = %ticket.sub, "oidc provider: device authorization denied");
                done(
                    StatusCode::OK,
                    "Request denied",
                    "The device was not signed in. You may close this page.",
                )
            }
        })
    }

    /// The grant of an allowed device authorization: the user's access for the client is
    /// recorded (or renewed) first, as a code's is, and audited.
    async fn device_grant_of(
        &self,
        request: &DeviceRequest,
        client: &Client,
        ticket: &DeviceTicket,
        sign_in: Option<&authcore::SignInInfo>,
    ) -> Result<Grant, Response> {
        let access = self
            .record_grant(
                client,
                &ticket.sub,
                &request.scopes,
                Some(crate::clients::DEVICE_CODE_GRANT),
            )
            .await?;
        Ok(Grant {
            client_id: client.id().to_owned(),
            sub: ticket.sub.clone(),
            scopes: request.scopes.clone(),
            auth_time: sign_in.and_then(|i| i.auth_time),
            amr: sign_in.map(|i| i.amr.clone()).unwrap_or_default(),
            sid: ticket.sid.clone(),
            epoch: access.epoch,
        })
    }

    async fn keep_decision(
        &self,
        id: &str,
        decision: &Decision,
        ttl: std::time::Duration,
    ) -> Result<(), Response> {
        let kept = serde_json::to_string(decision)
            .map_err(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())?;
        self.auth
            .config()
            .single_use()
            .put(DEVICE_DECISION, id, &kept, ttl)
            .await
            .map_err(|e| {
                tracing::error!(error = %e, "oidc provider: the single-use store failed");
                StatusCode::SERVICE_UNAVAILABLE.into_response()
            })
    }
}
