//! The authorization request (OpenID Connect Core §3.1.2.1, RFC 6749 §4.1.1, RFC 7636),
//! validated into [`AuthorizationRequest`] or refused ([`Refusal`]). Pure: parameters in,
//! a decision out.
//!
//! Until the client and its redirect URI are known to be registered, nothing is sent to the
//! redirect URI (RFC 6749 §4.1.2.1, RFC 9700 §4.11.2: no open redirect through error
//! responses); after that, errors go back to the client with `state` and `iss`.

#[cfg(test)]
use super::clients::Clients;
use super::clients::{Client, GrantType};

/// The longest parameter value accepted (bytes); longer is an `invalid_request`.
pub const MAX_PARAM_LEN: usize = 2048;

/// The parameters of an authorization request this provider reads; any other is ignored
/// (RFC 6749 §3.1), and a pushed request keeps only these (RFC 9126 §2.1).
pub const PARAMETERS: [&str; 13] = [
    "client_id",
    "redirect_uri",
    "response_type",
    "scope",
    "state",
    "nonce",
    "code_challenge",
    "code_challenge_method",
    "response_mode",
    "prompt",
    "max_age",
    "login_hint",
    "dpop_jkt",
];

/// How the answer reaches the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseMode {
    /// In the redirect URI's query.
    Query,
    /// In a form the browser posts to the redirect URI (OAuth 2.0 Form Post Response Mode).
    FormPost,
}

/// The `prompt` the client asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Prompt {
    /// None given: sign in if needed.
    #[default]
    Default,
    /// `none`: no page may be shown; without a session, `login_required`.
    None,
    /// `login`: sign in again, whatever the session.
    Login,
}

/// A valid authorization request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorizationRequest {
    /// The client.
    pub client_id: String,
    /// The registered redirect URI it asked to be sent back to.
    pub redirect_uri: String,
    /// The scopes granted: those asked for that the client may have, `openid` among them.
    pub scopes: Vec<String>,
    /// `state`, returned as it came.
    pub state: Option<String>,
    /// `nonce`, put into the ID token.
    pub nonce: Option<String>,
    /// The PKCE S256 `code_challenge`, if any (required of public clients).
    pub code_challenge: Option<String>,
    /// How to answer.
    pub response_mode: ResponseMode,
    /// `prompt`.
    pub prompt: Prompt,
    /// `prompt` included `consent`: ask the user even if they allowed the client before
    /// (for clients that ask at all).
    pub prompt_consent: bool,
    /// `max_age`: the oldest sign-in accepted, in seconds.
    pub max_age: Option<u64>,
    /// `login_hint` when it is an email address (normalised): offered on the sign-in page
    /// (OpenID Connect Core §3.1.2.1). Any other hint is ignored, as a hint may be.
    pub login_hint: Option<String>,
    /// `dpop_jkt` (RFC 9449 §10): the SHA-256 thumbprint of the DPoP key the code is bound
    /// to; its redemption needs a proof of that key.
    pub dpop_jkt: Option<String>,
}

/// Why a request is refused, and where that is said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Shown to the user, never sent to the redirect URI: the client or the redirect URI is
    /// not (exactly) registered, or one of them is malformed or repeated.
    Shown(String),
    /// Sent back to the client's redirect URI (RFC 6749 §4.1.2.1).
    Redirected {
        /// The registered redirect URI.
        redirect_uri: String,
        /// How to send it.
        response_mode: ResponseMode,
        /// The error code.
        error: &'static str,
        /// A sentence for the developer.
        description: String,
        /// `state`, when it was valid.
        state: Option<String>,
    },
}

/// Why an authorization request is not answered: a [`Refusal`] of the request, or the
/// clients' store that cannot be read (`503`: the client is not known to be unknown).
#[derive(Debug)]
pub(crate) enum RequestRefused {
    Refusal(Refusal),
    Unavailable,
}

impl From<Refusal> for RequestRefused {
    fn from(r: Refusal) -> Self {
        RequestRefused::Refusal(r)
    }
}

/// The request in `params` (the query of a `GET`, or the form of a `POST`), for `clients`.
#[cfg(test)]
pub fn validate(
    params: &[(String, String)],
    clients: &Clients,
) -> Result<AuthorizationRequest, Refusal> {
    validate_for(
        params,
        clients.get(client_id(params).unwrap_or_default()),
        false,
    )
}

/// The `client_id` of `params` when given once (the client to look up before
/// [`validate_for`]).
pub fn client_id(params: &[(String, String)]) -> Option<&str> {
    one(params, "client_id").ok().flatten()
}

/// The request in `params`, for `found`: the client its [`client_id`] names, if there is
/// one. `pushed`: the parameters came through a pushed request (RFC 9126), the only way
/// for a client that requires it.
pub fn validate_for(
    params: &[(String, String)],
    found: Option<&Client>,
    pushed: bool,
) -> Result<AuthorizationRequest, Refusal> {
    let one = |name: &str| one(params, name);
    let (client, redirect_uri) = client_and_redirect_uri(params, found)?;
    if !pushed && client.requires_pushed_requests() {
        // Shown, not sent back: the request is not the client's way to ask (RFC 9126 §6).
        return Err(Refusal::Shown(format!(
            "the client {:?} pushes its authorization requests first (PAR, RFC 9126): a request_uri is expected",
            client.id()
        )));
    }
    // From here on, the client hears about errors.
    let response_mode = match one("response_mode") {
        Ok(None | Some("query")) => ResponseMode::Query,
        Ok(Some("form_post")) => ResponseMode::FormPost,
        _ => ResponseMode::Query,
    };
    let state = match one("state") {
        Ok(s) if s.is_none_or(|s| s.len() <= MAX_PARAM_LEN) => s.map(str::to_owned),
        _ => None,
    };
    let refuse = |error: &'static str, description: String| Refusal::Redirected {
        redirect_uri: redirect_uri.clone(),
        response_mode,
        error,
        description,
        state: state.clone(),
    };
    let mut seen = std::collections::HashSet::new();
    for (name, value) in params {
        if value.len() > MAX_PARAM_LEN {
            return Err(refuse(
                "invalid_request",
                format!("{name} is longer than {MAX_PARAM_LEN} bytes"),
            ));
        }
        if !seen.insert(name.as_str()) {
            return Err(refuse(
                "invalid_request",
                format!("{name} is given more than once"),
            ));
        }
    }
    if !matches!(one("response_mode"), Ok(None | Some("query" | "form_post"))) {
        return Err(refuse(
            "invalid_request",
            "response_mode: query or form_post".into(),
        ));
    }
    match one("response_type") {
        Ok(Some("code")) => {}
        Ok(None) => return Err(refuse("invalid_request", "response_type is missing".into())),
        _ => {
            return Err(refuse(
                "unsupported_response_type",
                "only the authorization code flow (response_type=code)".into(),
            ));
        }
    }
    let asked: Vec<&str> = one("scope")
        .ok()
        .flatten()
        .unwrap_or_default()
        .split(' ')
        .filter(|s| !s.is_empty())
        .collect();
    if !asked.contains(&"openid") {
        return Err(refuse(
            "invalid_scope",
            "the scope must include openid".into(),
        ));
    }
    // Scopes the client may not have, or that are not known here, are left out (RFC 6749
    // §3.3: the grant may be narrower than the request).
    let mut scopes: Vec<String> = Vec::new();
    for s in asked {
        if client.allows_scope(s) && !scopes.iter().any(|g| g == s) {
            scopes.push(s.to_owned());
        }
    }
    let code_challenge = pkce(
        client,
        one("code_challenge").ok().flatten(),
        one("code_challenge_method").ok().flatten(),
    )
    .map_err(|d| refuse("invalid_request", d.into()))?;
    let prompts: Vec<&str> = one("prompt")
        .ok()
        .flatten()
        .map(|p| p.split(' ').filter(|s| !s.is_empty()).collect())
        .unwrap_or_default();
    let (prompt, prompt_consent) =
        prompt(&prompts).map_err(|d| refuse("invalid_request", d.into()))?;
    let max_age = match one("max_age").ok().flatten() {
        None => None,
        Some(v) => Some(
            v.parse::<u64>()
                .map_err(|_| refuse("invalid_request", "max_age is a number of seconds".into()))?,
        ),
    };
    let nonce = one("nonce").ok().flatten().map(str::to_owned);
    // A binding is never dropped: a repeated or malformed one is refused.
    let dpop_jkt = match one("dpop_jkt") {
        Ok(None) => None,
        Ok(Some(jkt)) if is_thumbprint(jkt) => Some(jkt.to_owned()),
        _ => {
            return Err(refuse(
                "invalid_request",
                "dpop_jkt is one JWK SHA-256 thumbprint, base64url (RFC 9449 §10)".into(),
            ));
        }
    };
    let login_hint = one("login_hint")
        .ok()
        .flatten()
        .and_then(|h| authcore::providers::email::normalize_email(h).ok());
    Ok(AuthorizationRequest {
        client_id: client.id().to_owned(),
        redirect_uri,
        scopes,
        state,
        nonce,
        code_challenge,
        response_mode,
        prompt,
        prompt_consent,
        max_age,
        login_hint,
        dpop_jkt,
    })
}

/// Whether `value` is a JWK SHA-256 thumbprint as RFC 7638 writes it: 32 bytes, base64url
/// without padding.
fn is_thumbprint(value: &str) -> bool {
    use base64::Engine as _;
    value.len() == 43
        && base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(value)
            .is_ok_and(|bytes| bytes.len() == 32)
}

/// The one value of parameter `name`: each parameter at most once (RFC 6749 §3.1), and a
/// repeated one is not picked from (`Err`).
pub(crate) fn one<'a>(params: &'a [(String, String)], name: &str) -> Result<Option<&'a str>, ()> {
    let mut values = params
        .iter()
        .filter(|(k, _)| k == name)
        .map(|(_, v)| v.as_str());
    let first = values.next();
    if values.next().is_some() {
        Err(())
    } else {
        Ok(first)
    }
}

/// The client the request names and its registered redirect URI the request gives: until
/// both are known, errors are shown to the user, never sent anywhere.
fn client_and_redirect_uri<'c>(
    params: &[(String, String)],
    found: Option<&'c Client>,
) -> Result<(&'c Client, String), Refusal> {
    let client_id = match one(params, "client_id") {
        Ok(Some(id)) if !id.is_empty() && id.len() <= MAX_PARAM_LEN => id,
        Ok(_) => {
            return Err(Refusal::Shown(
                "the request names no client (client_id)".into(),
            ));
        }
        Err(()) => return Err(Refusal::Shown("client_id is given more than once".into())),
    };
    let Some(client) = found.filter(|c| c.id() == client_id) else {
        return Err(Refusal::Shown(format!(
            "there is no client {client_id:?} here"
        )));
    };
    if !client.allows_grant(GrantType::AuthorizationCode) {
        return Err(Refusal::Shown(format!(
            "the client {client_id:?} does not sign users in (its grant_types have no authorization_code)"
        )));
    }
    match one(params, "redirect_uri") {
        Ok(Some(uri)) if client.has_redirect_uri(uri) => Ok((client, uri.to_owned())),
        Ok(Some(_)) => Err(Refusal::Shown(format!(
            "the redirect_uri is not one registered for the client {client_id:?} (they are compared exactly)"
        ))),
        Ok(None) => Err(Refusal::Shown("the request has no redirect_uri".into())),
        Err(()) => Err(Refusal::Shown(
            "redirect_uri is given more than once".into(),
        )),
    }
}

/// The `prompt` values (OpenID Connect Core §3.1.2.1) as what to do, and whether
/// `consent` is among them; `Err` describes a combination that is refused.
fn prompt(prompts: &[&str]) -> Result<(Prompt, bool), &'static str> {
    let consent = prompts.contains(&"consent");
    let prompt = if prompts.is_empty() {
        Prompt::Default
    } else if prompts == ["none"] {
        Prompt::None
    } else if prompts.contains(&"none") {
        return Err("prompt=none goes with no other value");
    } else if prompts.contains(&"login") {
        Prompt::Login
    } else {
        // `consent` is the second answer; `select_account`: the sign-in page is where an
        // account is chosen.
        Prompt::Default
    };
    Ok((prompt, consent))
}

/// The PKCE challenge (RFC 7636 §4.3): S256 only (`plain` would let a stolen code be
/// redeemed with the challenge itself, RFC 9700 §2.1.1); required of public clients.
fn pkce(
    client: &Client,
    challenge: Option<&str>,
    method: Option<&str>,
) -> Result<Option<String>, &'static str> {
    match (challenge, method) {
        (None, None) if client.is_public() => {
            Err("a public client must use PKCE (code_challenge, S256)")
        }
        (None, None) => Ok(None),
        (None, Some(_)) => Err("code_challenge_method without code_challenge"),
        (Some(_), None | Some("plain")) => Err("code_challenge_method must be S256"),
        (Some(c), Some("S256")) => {
            // BASE64URL(SHA-256(verifier)): 43 characters of the base64url alphabet.
            let well_formed = c.len() == 43
                && c.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
            if well_formed {
                Ok(Some(c.to_owned()))
            } else {
                Err("code_challenge is not an S256 challenge")
            }
        }
        (Some(_), Some(_)) => Err("code_challenge_method must be S256"),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::clients::ClientConfig;

    const CB: &str = "https://app.example.com/cb";
    const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

    fn clients() -> Clients {
        let app = ClientConfig {
            id: "app".into(),
            secret: Some("s".repeat(32).into()),
            redirect_uris: vec![CB.into()],
            ..ClientConfig::default()
        };
        let mut spa = app.clone();
        spa.id = "spa".into();
        spa.secret = None;
        let mut narrow = app.clone();
        narrow.id = "narrow".into();
        narrow.scopes = vec!["openid".into()];
        Clients::new(vec![app, spa, narrow]).unwrap()
    }

    fn params(extra: &[(&str, &str)], without: &[&str]) -> Vec<(String, String)> {
        let mut p: Vec<(String, String)> = [
            ("client_id", "app"),
            ("redirect_uri", CB),
            ("response_type", "code"),
            ("scope", "openid email"),
            ("state", "st"),
            ("nonce", "n"),
        ]
        .iter()
        .filter(|(k, _)| !without.contains(k))
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
        p.extend(
            extra
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        );
        p
    }

    #[test]
    fn a_valid_request() {
        let r = validate(
            &params(
                &[
                    ("code_challenge", CHALLENGE),
                    ("code_challenge_method", "S256"),
                ],
                &[],
            ),
            &clients(),
        )
        .unwrap();
        assert_eq!(r.scopes, ["openid", "email"]);
        assert_eq!(r.code_challenge.as_deref(), Some(CHALLENGE));
        assert_eq!(
            (r.state.as_deref(), r.nonce.as_deref()),
            (Some("st"), Some("n"))
        );
        let r = validate(
            &params(&[("scope", "openid profile email")], &["scope"]),
            &clients(),
        )
        .unwrap();
        assert_eq!(r.scopes, ["openid", "profile", "email"]);
        // A client's narrower scopes: the rest is left out.
        let r = validate(
            &params(&[("client_id", "narrow")], &["client_id"]),
            &clients(),
        )
        .unwrap();
        assert_eq!(r.scopes, ["openid"]);
        let r = validate(
            &params(
                &[
                    ("prompt", "none"),
                    ("max_age", "60"),
                    ("response_mode", "form_post"),
                ],
                &[],
            ),
            &clients(),
        )
        .unwrap();
        assert_eq!(
            (r.prompt, r.max_age, r.response_mode),
            (Prompt::None, Some(60), ResponseMode::FormPost)
        );
    }

    /// A client that requires pushed requests (RFC 9126 §6) gets the error page for any
    /// other, even a valid one; pushed, the same request passes.
    #[test]
    fn a_client_that_must_push_is_refused_unpushed_requests() {
        let pushing = ClientConfig {
            id: "app".into(),
            secret: Some("s".repeat(32).into()),
            redirect_uris: vec![CB.into()],
            require_pushed_authorization_requests: true,
            ..ClientConfig::default()
        };
        let pushing = Clients::new(vec![pushing]).unwrap();
        let p = params(&[], &[]);
        let client = pushing.get("app");
        assert!(matches!(
            validate_for(&p, client, false),
            Err(Refusal::Shown(m)) if m.contains("pushes its authorization requests")
        ));
        assert!(validate_for(&p, client, true).is_ok());
        // Others are not concerned.
        assert!(validate_for(&p, clients().get("app"), false).is_ok());
    }

    /// `login_hint`: an email address is kept (normalised) for the sign-in page; anything
    /// else is dropped, never refused.
    #[test]
    fn a_login_hint_is_an_address_or_nothing() {
        let long = format!("{}@example.com", "a".repeat(300));
        for (hint, kept) in [
            (" Demo@Example.COM ", Some("demo@example.com")),
            ("demo", None),
            ("", None),
            ("\"><script>alert(1)</script>@example.com", None),
            ("a@b@example.com", None),
            ("a\r\nb@example.com", None),
            (long.as_str(), None),
        ] {
            let r = validate(&params(&[("login_hint", hint)], &[]), &clients()).unwrap();
            assert_eq!(r.login_hint.as_deref(), kept, "{hint:?}");
        }
    }

    /// Nothing goes to a redirect URI that is not exactly registered, or for an unknown or
    /// repeated client: the user sees the error instead.
    #[test]
    fn unregistered_redirects_are_never_followed() {
        let long = "x".repeat(MAX_PARAM_LEN + 1);
        for (extra, without) in [
            (vec![("client_id", "nobody")], vec!["client_id"]),
            (vec![], vec!["client_id"]),
            (vec![("client_id", "app")], vec![]),
            (vec![("client_id", long.as_str())], vec!["client_id"]),
            (vec![], vec!["redirect_uri"]),
            (vec![("redirect_uri", CB)], vec![]),
            (
                vec![("redirect_uri", "https://app.example.com/cb/")],
                vec!["redirect_uri"],
            ),
            (
                vec![("redirect_uri", "https://app.example.com/cb?x=1")],
                vec!["redirect_uri"],
            ),
            (
                vec![("redirect_uri", "https://APP.example.com/cb")],
                vec!["redirect_uri"],
            ),
            (
                vec![("redirect_uri", "https://app.example.com:443/cb")],
                vec!["redirect_uri"],
            ),
            (
                vec![("redirect_uri", "https://app.example.com/cb#frag")],
                vec!["redirect_uri"],
            ),
            (
                vec![("redirect_uri", "https://evil@app.example.com/cb")],
                vec!["redirect_uri"],
            ),
            (
                vec![("redirect_uri", "https://app.example.com.evil.com/cb")],
                vec!["redirect_uri"],
            ),
            (
                vec![("redirect_uri", "https://app.example.com/cb/../evil")],
                vec!["redirect_uri"],
            ),
            (
                vec![("redirect_uri", "https://app.example.com/%63b")],
                vec!["redirect_uri"],
            ),
        ] {
            let p = params(&extra, &without);
            assert!(
                matches!(validate(&p, &clients()), Err(Refusal::Shown(_))),
                "{p:?}"
            );
        }
    }

    #[test]
    fn other_errors_go_back_to_the_client_with_state() {
        let long = "x".repeat(MAX_PARAM_LEN + 1);
        for (extra, without, error) in [
            (vec![], vec!["response_type"], "invalid_request"),
            (
                vec![("response_type", "token")],
                vec!["response_type"],
                "unsupported_response_type",
            ),
            (
                vec![("response_type", "code id_token")],
                vec!["response_type"],
                "unsupported_response_type",
            ),
            (vec![("scope", "email")], vec!["scope"], "invalid_scope"),
            (
                vec![("code_challenge", CHALLENGE)],
                vec![],
                "invalid_request",
            ),
            (
                vec![
                    ("code_challenge", CHALLENGE),
                    ("code_challenge_method", "plain"),
                ],
                vec![],
                "invalid_request",
            ),
            (
                vec![
                    ("code_challenge", "short"),
                    ("code_challenge_method", "S256"),
                ],
                vec![],
                "invalid_request",
            ),
            (
                vec![("code_challenge_method", "S256")],
                vec![],
                "invalid_request",
            ),
            (vec![("prompt", "none login")], vec![], "invalid_request"),
            (vec![("max_age", "-1")], vec![], "invalid_request"),
            (
                vec![("response_mode", "fragment")],
                vec![],
                "invalid_request",
            ),
            (
                vec![("nonce", long.as_str())],
                vec!["nonce"],
                "invalid_request",
            ),
            (vec![("scope", "openid")], vec![], "invalid_request"),
        ] {
            let p = params(&extra, &without);
            match validate(&p, &clients()) {
                Err(Refusal::Redirected {
                    redirect_uri,
                    error: e,
                    state,
                    ..
                }) => {
                    assert_eq!(
                        (redirect_uri.as_str(), e, state.as_deref()),
                        (CB, error, Some("st")),
                        "{p:?}"
                    );
                }
                other => panic!("{p:?}: {other:?}"),
            }
        }
        // A public client without PKCE.
        let p = params(&[("client_id", "spa")], &["client_id"]);
        assert!(matches!(
            validate(&p, &clients()),
            Err(Refusal::Redirected {
                error: "invalid_request",
                ..
            })
        ));
    }
}
