//! Every OAuth / OIDC preset of the catalogue, one table row per provider id of
//! `@auth/core` 0.41.3, signs in end to end through `Auth::handle` against a local HTTP
//! stand-in of the brand (the brand APIs cannot be reached from here): the stand-in answers
//! at the brand's URLs (the provider's HTTP client sends every request to it, keeping the
//! original URL) in the shape the brand documents, and records what it received.
//!
//! Each row states, from the Auth.js preset: the authorization URL for a fixed config
//! (every parameter), the token request (URL, client authentication, body fields), the
//! userinfo request(s) (method, URL, headers) with their answers, and the `User` the
//! profile maps to; OIDC rows state the discovery URL, the ID token claims and the user.
//! The session must end with that user, linked to an account under the mapped id.
//!
//! A second test holds the full id list of the installed `@auth/core` (read from its
//! `providers/provider-types.d.ts` at test time) against the catalogue.
#![allow(clippy::unwrap_used, clippy::too_many_lines)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use crate::oauth_flow::{APP, Jar, send, session, start};
use authcore::adapter::{Adapter, MemoryAdapter};
use authcore::env::Env;
use authcore::http_client::HttpClient;
use authcore::providers::catalog;
use authcore::{Auth, AuthConfig, BoxError};
use aws_lc_rs::encoding::AsDer as _;
use aws_lc_rs::rsa::{KeyPair as RsaKeyPair, KeySize, PublicKeyComponents};
use aws_lc_rs::signature::KeyPair as _;
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use bytes::Bytes;
use http::{HeaderMap, Method, Request, Uri};
use http_body_util::Full;
use serde_json::{Value, json};

const CLIENT_ID: &str = "client-id";
const CLIENT_SECRET: &str = "client-secret";
const ACCESS_TOKEN: &str = "at-123";
const CODE: &str = "code-xyz";

// ---------------------------------------------------------------------------------------
// The stand-in: one local HTTP server for every brand.

/// One request the stand-in received, by its original URL.
#[derive(Debug, Clone)]
struct Received {
    method: Method,
    url: String,
    headers: HeaderMap,
    body: Bytes,
}

impl Received {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(|v| v.to_str().unwrap())
    }
    /// The form body as sorted pairs.
    fn form(&self) -> BTreeSet<(String, String)> {
        form_urlencoded::parse(&self.body).into_owned().collect()
    }
}

#[derive(Default)]
struct StandInState {
    /// `"<METHOD> <url without query>"` → (status, body).
    answers: BTreeMap<String, (u16, String)>,
    received: Vec<Received>,
}

#[derive(Clone)]
struct StandIn {
    origin: String,
    state: Arc<Mutex<StandInState>>,
}

impl StandIn {
    async fn start() -> StandIn {
        let state = Arc::new(Mutex::new(StandInState::default()));
        let shared = state.clone();
        let app = axum::Router::new().fallback(
            move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
                let state = shared.clone();
                async move {
                    // /<scheme>/<host>/<path>?<query> → <scheme>://<host>/<path>?<query>
                    let path = uri.path().trim_start_matches('/');
                    let (scheme, rest) = path.split_once('/').unwrap_or((path, ""));
                    let (host, rest) = rest.split_once('/').unwrap_or((rest, ""));
                    let base = format!("{scheme}://{host}/{rest}");
                    let url = match uri.query() {
                        Some(q) => format!("{base}?{q}"),
                        None => base.clone(),
                    };
                    let mut s = state.lock().unwrap();
                    s.received.push(Received {
                        method: method.clone(),
                        url,
                        headers,
                        body,
                    });
                    let (status, body) = s
                        .answers
                        .get(&format!("{method} {base}"))
                        .cloned()
                        .unwrap_or((404, r#"{"error":"not_found"}"#.to_owned()));
                    axum::http::Response::builder()
                        .status(status)
                        .header("content-type", "application/json")
                        .body(axum::body::Body::from(body))
                        .unwrap()
                }
            },
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        StandIn { origin, state }
    }

    fn answer(&self, method: &str, url: &str, status: u16, body: impl Into<String>) {
        let url = url.split('?').next().unwrap();
        self.state
            .lock()
            .unwrap()
            .answers
            .insert(format!("{method} {url}"), (status, body.into()));
    }

    fn reset(&self) {
        *self.state.lock().unwrap() = StandInState::default();
    }

    fn received(&self) -> Vec<Received> {
        self.state.lock().unwrap().received.clone()
    }
}

/// The provider's HTTP client: every request goes to the stand-in, with the original
/// scheme and host as the first path segments.
struct ToStandIn {
    origin: String,
    inner: Arc<dyn HttpClient>,
}

#[authcore::async_trait]
impl HttpClient for ToStandIn {
    async fn send(&self, request: Request<Bytes>) -> Result<http::Response<Bytes>, BoxError> {
        let (mut parts, body) = request.into_parts();
        let uri = &parts.uri;
        let rewritten = format!(
            "{}/{}/{}{}",
            self.origin,
            uri.scheme_str().unwrap_or("https"),
            uri.authority().map(|a| a.as_str()).unwrap_or_default(),
            uri.path_and_query().map(|p| p.as_str()).unwrap_or("/"),
        );
        parts.uri = rewritten.parse()?;
        self.inner.send(Request::from_parts(parts, body)).await
    }
}

// ---------------------------------------------------------------------------------------
// Rows.

/// Token endpoint client authentication.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ClientAuth {
    /// `Authorization: Basic base64(id:secret)`.
    Basic,
    /// `client_id` and `client_secret` in the body.
    Post,
    /// A brand's own exchange: exactly these body fields, no `Authorization` header.
    Custom(&'static [(&'static str, &'static str)]),
}
use ClientAuth::{Basic, Custom, Post};

/// A userinfo request and its answer.
#[derive(Debug, Clone, Copy)]
struct Call {
    method: &'static str,
    /// The full URL (with the query) the preset must request.
    url: &'static str,
    /// Whether the access token is sent as `Authorization: Bearer` (else: no such header).
    bearer: bool,
    /// Other headers it must send.
    headers: &'static [(&'static str, &'static str)],
    /// A JSON body it must send.
    body: Option<&'static str>,
    /// The stand-in's answer.
    answer: &'static str,
}

const fn get(url: &'static str, answer: &'static str) -> Call {
    Call {
        method: "GET",
        url,
        bearer: true,
        headers: &[],
        body: None,
        answer,
    }
}

/// The mapped user: account id, name, email, image.
type Expected = (
    &'static str,
    Option<&'static str>,
    Option<&'static str>,
    Option<&'static str>,
);

/// Checks: which of `state`, PKCE and `nonce` the authorization request carries.
#[derive(Debug, Clone, Copy)]
struct Checks {
    pkce: bool,
    state: bool,
    nonce: bool,
}
const fn checks(pkce: bool, state: bool, nonce: bool) -> Checks {
    Checks { pkce, state, nonce }
}
const PKCE: Checks = checks(true, false, false);
const STATE: Checks = checks(false, true, false);
const PKCE_STATE: Checks = checks(true, true, false);
const ALL: Checks = checks(true, true, true);
const NONCE: Checks = checks(false, false, true);
const NONCE_STATE: Checks = checks(false, true, true);

/// An OAuth 2 preset.
struct OAuthRow {
    id: &'static str,
    /// Settings by key (`issuer` …).
    settings: &'static [(&'static str, &'static str)],
    /// The authorization endpoint with the preset's own parameters (decoded);
    /// `response_type=code`, `client_id` and `redirect_uri` are expected as well unless
    /// given here.
    authorize: &'static str,
    checks: Checks,
    /// The token endpoint (with its query).
    token: &'static str,
    auth: ClientAuth,
    /// Body fields besides the standard ones (`client_key` …).
    token_extra: &'static [(&'static str, &'static str)],
    /// The token answer (`None`: a plain bearer token).
    token_answer: Option<&'static str>,
    userinfo: Vec<Call>,
    user: Expected,
}

const BEARER: &str = r#"{"access_token":"at-123","token_type":"bearer","expires_in":3600}"#;

fn oauth_rows() -> Vec<OAuthRow> {
    vec![
        OAuthRow {
            id: "42-school",
            settings: &[],
            authorize: "https://api.intra.42.fr/oauth/authorize?scope=public",
            checks: PKCE,
            token: "https://api.intra.42.fr/oauth/token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://api.intra.42.fr/v2/me",
                r#"{"id":4242,"login":"ada","usual_full_name":"Ada Lovelace","email":"ada@student.42.fr","image":{"link":"https://cdn.intra.42.fr/users/ada.jpg"}}"#,
            )],
            user: (
                "4242",
                Some("Ada Lovelace"),
                Some("ada@student.42.fr"),
                Some("https://cdn.intra.42.fr/users/ada.jpg"),
            ),
        },
        OAuthRow {
            id: "atlassian",
            settings: &[],
            authorize: "https://auth.atlassian.com/authorize?audience=api.atlassian.com&scope=read:me",
            checks: STATE,
            token: "https://auth.atlassian.com/oauth/token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://api.atlassian.com/me",
                r#"{"account_id":"5b10a2844c20165700ede21g","name":"Ada","email":"ada@example.com","picture":"https://avatar.atl/ada.png","account_status":"active"}"#,
            )],
            user: (
                "5b10a2844c20165700ede21g",
                Some("Ada"),
                Some("ada@example.com"),
                Some("https://avatar.atl/ada.png"),
            ),
        },
        OAuthRow {
            id: "azure-devops",
            settings: &[],
            authorize: "https://app.vssps.visualstudio.com/oauth2/authorize?response_type=Assertion&scope=vso.profile",
            checks: PKCE,
            token: "https://app.vssps.visualstudio.com/oauth2/token",
            auth: Custom(&[
                (
                    "client_assertion_type",
                    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
                ),
                ("client_assertion", CLIENT_SECRET),
                ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
                ("assertion", CODE),
                (
                    "redirect_uri",
                    "http://localhost:3000/auth/callback/azure-devops",
                ),
            ]),
            token_extra: &[],
            token_answer: Some(
                r#"{"access_token":"at-123","token_type":"jwt-bearer","expires_in":"3599","refresh_token":"rt","scope":"vso.profile"}"#,
            ),
            userinfo: vec![get(
                "https://app.vssps.visualstudio.com/_apis/profile/profiles/me?details=true&coreAttributes=Avatar&api-version=6.0",
                r#"{"displayName":"Ada Lovelace","publicAlias":"d6245f20","emailAddress":"ada@example.com","coreRevision":1,"id":"d6245f20-2af8-44f4-9451-8107cb2767db","coreAttributes":{"Avatar":{"descriptor":{"id":"Core.Avatar"},"value":{"contentType":"image/png","value":"iVBORw0KGgo="}}}}"#,
            )],
            user: (
                "d6245f20-2af8-44f4-9451-8107cb2767db",
                Some("Ada Lovelace"),
                Some("ada@example.com"),
                Some("data:image/jpeg;base64,iVBORw0KGgo="),
            ),
        },
        OAuthRow {
            id: "bitbucket",
            settings: &[],
            authorize: "https://bitbucket.org/site/oauth2/authorize?scope=account",
            checks: PKCE,
            token: "https://bitbucket.org/site/oauth2/access_token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://api.bitbucket.org/2.0/user",
                r#"{"account_id":"557058:abc","username":"ada","display_name":null,"links":{"avatar":{"href":"https://bitbucket.org/account/ada/avatar/"}}}"#,
            )],
            user: (
                "557058:abc",
                Some("ada"),
                None,
                Some("https://bitbucket.org/account/ada/avatar/"),
            ),
        },
        OAuthRow {
            id: "box",
            settings: &[],
            authorize: "https://account.box.com/api/oauth2/authorize",
            checks: PKCE,
            token: "https://api.box.com/oauth2/token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://api.box.com/2.0/users/me",
                r#"{"type":"user","id":"11446498","name":"Ada Lovelace","login":"ada@example.com","avatar_url":"https://www.box.com/api/avatar/large/11446498"}"#,
            )],
            user: (
                "11446498",
                Some("Ada Lovelace"),
                Some("ada@example.com"),
                Some("https://www.box.com/api/avatar/large/11446498"),
            ),
        },
        OAuthRow {
            id: "boxyhq-saml",
            settings: &[("issuer", "https://jackson.example.com")],
            authorize: "https://jackson.example.com/api/oauth/authorize?provider=saml&scope=openid profile email",
            checks: PKCE,
            token: "https://jackson.example.com/api/oauth/token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://jackson.example.com/api/oauth/userinfo",
                r#"{"id":"saml-1","email":"ada@example.com","firstName":"Ada","lastName":"Lovelace","requested":{}}"#,
            )],
            user: (
                "saml-1",
                Some("Ada Lovelace"),
                Some("ada@example.com"),
                None,
            ),
        },
        OAuthRow {
            id: "bungie",
            settings: &[("api_key", "bungie-api-key")],
            authorize: "https://www.bungie.net/en/OAuth/Authorize?reauth=true&scope=openid profile email",
            checks: PKCE,
            token: "https://www.bungie.net/platform/app/oauth/token/",
            auth: Basic,
            token_extra: &[],
            token_answer: Some(
                r#"{"access_token":"at-123","token_type":"Bearer","expires_in":3600,"refresh_token":"rt","refresh_expires_in":7776000,"membership_id":"4611686018429783292"}"#,
            ),
            userinfo: vec![Call {
                headers: &[("x-api-key", "bungie-api-key")],
                ..get(
                    "https://www.bungie.net/platform/User/GetBungieAccount/4611686018429783292/254/",
                    r#"{"Response":{"bungieNetUser":{"membershipId":"4611686018429783292","displayName":"Ada","profilePicturePath":"/img/profile/avatars/default_avatar.gif"}},"ErrorCode":1}"#,
                )
            }],
            user: (
                "4611686018429783292",
                Some("Ada"),
                None,
                Some("https://www.bungie.net/img/profile/avatars/default_avatar.gif"),
            ),
        },
        OAuthRow {
            id: "click-up",
            settings: &[],
            authorize: "https://app.clickup.com/api?scope=openid profile email",
            checks: STATE,
            token: "https://api.clickup.com/api/v2/oauth/token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://api.clickup.com/api/v2/user",
                r##"{"user":{"id":123,"username":"ada","email":"ada@example.com","color":"#000000","profilePicture":"https://attachments.clickup.com/ada.jpg"}}"##,
            )],
            user: (
                "123",
                Some("ada"),
                Some("ada@example.com"),
                Some("https://attachments.clickup.com/ada.jpg"),
            ),
        },
        OAuthRow {
            id: "coinbase",
            settings: &[],
            authorize: "https://login.coinbase.com/oauth2/auth?scope=wallet:user:email wallet:user:read",
            checks: PKCE,
            token: "https://login.coinbase.com/oauth2/token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://api.coinbase.com/v2/user",
                r#"{"data":{"id":"9da7a204-544e-5fd1-9a12-61176c5d4cd8","name":"Ada","email":"ada@example.com","avatar_url":"https://images.coinbase.com/avatar?h=ada"}}"#,
            )],
            user: (
                "9da7a204-544e-5fd1-9a12-61176c5d4cd8",
                Some("Ada"),
                Some("ada@example.com"),
                Some("https://images.coinbase.com/avatar?h=ada"),
            ),
        },
        OAuthRow {
            id: "concept2",
            settings: &[],
            authorize: "https://log.concept2.com/oauth/authorize?scope=user:read,results:write",
            checks: PKCE,
            token: "https://log.concept2.com/oauth/access_token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://log.concept2.com/api/users/me",
                r#"{"data":{"id":1,"username":"ada","email":"ada@example.com","profile_image":"https://log.concept2.com/ada.png"}}"#,
            )],
            user: (
                "1",
                Some("ada"),
                Some("ada@example.com"),
                Some("https://log.concept2.com/ada.png"),
            ),
        },
        OAuthRow {
            id: "discord",
            settings: &[],
            authorize: "https://discord.com/api/oauth2/authorize?scope=identify email",
            checks: PKCE,
            token: "https://discord.com/api/oauth2/token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://discord.com/api/users/@me",
                r#"{"id":"80351110224678912","username":"ada","global_name":"Ada","discriminator":"0","avatar":"a_8342729096ea3675442027381ff50dfe","email":"ada@example.com"}"#,
            )],
            user: (
                "80351110224678912",
                Some("Ada"),
                Some("ada@example.com"),
                Some(
                    "https://cdn.discordapp.com/avatars/80351110224678912/a_8342729096ea3675442027381ff50dfe.gif",
                ),
            ),
        },
        OAuthRow {
            id: "dribbble",
            settings: &[],
            authorize: "https://dribbble.com/oauth/authorize?scope=public",
            checks: PKCE,
            token: "https://dribbble.com/oauth/token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://api.dribbble.com/v2/user",
                r#"{"id":1,"name":"Ada","login":"ada","email":"ada@example.com","avatar_url":"https://cdn.dribbble.com/ada.png"}"#,
            )],
            user: (
                "1",
                Some("Ada"),
                Some("ada@example.com"),
                Some("https://cdn.dribbble.com/ada.png"),
            ),
        },
        OAuthRow {
            id: "dropbox",
            settings: &[],
            authorize: "https://www.dropbox.com/oauth2/authorize?token_access_type=offline&scope=account_info.read",
            checks: PKCE,
            token: "https://api.dropboxapi.com/oauth2/token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![Call {
                method: "POST",
                ..get(
                    "https://api.dropboxapi.com/2/users/get_current_account",
                    r#"{"account_id":"dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc","name":{"display_name":"Ada Lovelace","given_name":"Ada"},"email":"ada@example.com","profile_photo_url":"https://dl-web.dropbox.com/account_photo/ada"}"#,
                )
            }],
            user: (
                "dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc",
                Some("Ada Lovelace"),
                Some("ada@example.com"),
                Some("https://dl-web.dropbox.com/account_photo/ada"),
            ),
        },
        OAuthRow {
            id: "eventbrite",
            settings: &[],
            authorize: "https://www.eventbrite.com/oauth/authorize?scope=user.profile",
            checks: PKCE,
            token: "https://www.eventbrite.com/oauth/token",
            auth: Post,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://www.eventbriteapi.com/v3/users/me/",
                r#"{"id":"1234","name":"Ada","emails":[{"email":"old@example.com","primary":false},{"email":"ada@example.com","primary":true}],"image_id":"987"}"#,
            )],
            user: (
                "1234",
                Some("Ada"),
                Some("ada@example.com"),
                Some(
                    "https://img.evbuc.com/https%3A%2F%2Fcdn.evbuc.com%2Fimages%2F987%2F1%2Foriginal.jpg",
                ),
            ),
        },
        OAuthRow {
            id: "eveonline",
            settings: &[],
            authorize: "https://login.eveonline.com/v2/oauth/authorize?scope=publicData",
            checks: STATE,
            token: "https://login.eveonline.com/v2/oauth/token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://login.eveonline.com/oauth/verify",
                r#"{"CharacterID":95465499,"CharacterName":"Ada Capsuleer","ExpiresOn":"2026-01-01T00:00:00","Scopes":"publicData","TokenType":"Character"}"#,
            )],
            user: (
                "95465499",
                Some("Ada Capsuleer"),
                None,
                Some("https://image.eveonline.com/Character/95465499_128.jpg"),
            ),
        },
        OAuthRow {
            id: "facebook",
            settings: &[],
            authorize: "https://www.facebook.com/v19.0/dialog/oauth?scope=email",
            checks: PKCE,
            token: "https://graph.facebook.com/oauth/access_token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://graph.facebook.com/me?fields=id,name,email,picture",
                r#"{"id":"10158","name":"Ada Lovelace","email":"ada@example.com","picture":{"data":{"height":50,"is_silhouette":false,"url":"https://platform-lookaside.fbsbx.com/ada","width":50}}}"#,
            )],
            user: (
                "10158",
                Some("Ada Lovelace"),
                Some("ada@example.com"),
                Some("https://platform-lookaside.fbsbx.com/ada"),
            ),
        },
        OAuthRow {
            id: "faceit",
            settings: &[],
            authorize: "https://accounts.faceit.com/accounts?redirect_popup=true&scope=openid profile email",
            checks: PKCE,
            token: "https://api.faceit.com/auth/v1/oauth/token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://api.faceit.com/auth/v1/resources/userinfo",
                r#"{"guid":"a1b2","nickname":"ada","name":"Ada","email":"ada@example.com","picture":"https://assets.faceit-cdn.net/ada.jpg"}"#,
            )],
            user: (
                "a1b2",
                Some("Ada"),
                Some("ada@example.com"),
                Some("https://assets.faceit-cdn.net/ada.jpg"),
            ),
        },
        OAuthRow {
            id: "figma",
            settings: &[],
            authorize: "https://www.figma.com/oauth?scope=files:read",
            checks: STATE,
            token: "https://api.figma.com/v1/oauth/token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://api.figma.com/v1/me",
                r#"{"id":"813845097374247","handle":"Ada","email":"ada@example.com","img_url":"https://s3-alpha.figma.com/profile/ada"}"#,
            )],
            user: (
                "813845097374247",
                Some("Ada"),
                Some("ada@example.com"),
                Some("https://s3-alpha.figma.com/profile/ada"),
            ),
        },
        OAuthRow {
            id: "foursquare",
            settings: &[],
            authorize: "https://foursquare.com/oauth2/authenticate?scope=openid profile email",
            checks: PKCE,
            token: "https://foursquare.com/oauth2/access_token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![Call {
                bearer: false,
                ..get(
                    "https://api.foursquare.com/v2/users/self?v=20230131&oauth_token=at-123",
                    r#"{"meta":{"code":200},"response":{"user":{"id":"1234","firstName":"Ada","lastName":"Lovelace","contact":{"email":"ada@example.com"},"photo":{"prefix":"https://fastly.4sqi.net/img/user/","suffix":"/ada.jpg"}}}}"#,
                )
            }],
            user: (
                "1234",
                Some("Ada Lovelace"),
                Some("ada@example.com"),
                Some("https://fastly.4sqi.net/img/user/original/ada.jpg"),
            ),
        },
        OAuthRow {
            id: "freshbooks",
            settings: &[],
            authorize: "https://auth.freshbooks.com/service/auth/oauth/authorize?scope=openid profile email",
            checks: PKCE,
            token: "https://api.freshbooks.com/auth/oauth/token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://api.freshbooks.com/auth/api/v1/users/me",
                r#"{"response":{"id":2192788,"first_name":"Ada","last_name":"Lovelace","email":"ada@example.com"}}"#,
            )],
            user: (
                "2192788",
                Some("Ada Lovelace"),
                Some("ada@example.com"),
                None,
            ),
        },
        OAuthRow {
            id: "github",
            settings: &[],
            authorize: "https://github.com/login/oauth/authorize?scope=read:user user:email",
            checks: PKCE,
            token: "https://github.com/login/oauth/access_token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![
                Call {
                    headers: &[("user-agent", "authjs")],
                    ..get(
                        "https://api.github.com/user",
                        r#"{"login":"octocat","id":583231,"avatar_url":"https://avatars.githubusercontent.com/u/583231","name":null,"email":null}"#,
                    )
                },
                Call {
                    headers: &[("user-agent", "authjs")],
                    ..get(
                        "https://api.github.com/user/emails",
                        r#"[{"email":"other@example.com","primary":false,"verified":true},{"email":"octocat@github.com","primary":true,"verified":true}]"#,
                    )
                },
            ],
            user: (
                "583231",
                Some("octocat"),
                Some("octocat@github.com"),
                Some("https://avatars.githubusercontent.com/u/583231"),
            ),
        },
        OAuthRow {
            id: "gitlab",
            settings: &[],
            authorize: "https://gitlab.com/oauth/authorize?scope=read_user",
            checks: PKCE,
            token: "https://gitlab.com/oauth/token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://gitlab.com/api/v4/user",
                r#"{"id":1,"username":"ada","name":"Ada Lovelace","email":"ada@example.com","avatar_url":"https://gitlab.com/uploads/ada.png"}"#,
            )],
            user: (
                "1",
                Some("Ada Lovelace"),
                Some("ada@example.com"),
                Some("https://gitlab.com/uploads/ada.png"),
            ),
        },
        OAuthRow {
            id: "hubspot",
            settings: &[],
            authorize: "https://app.hubspot.com/oauth/authorize?scope=oauth",
            checks: PKCE,
            token: "https://api.hubapi.com/oauth/v1/token",
            auth: Post,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![Call {
                bearer: false,
                ..get(
                    "https://api.hubapi.com/oauth/v1/access-tokens/at-123",
                    r#"{"token":"at-123","user":"ada@example.com","hub_domain":"example.com","scopes":["oauth"],"hub_id":62515,"app_id":456,"expires_in":21588,"user_id":123,"token_type":"access"}"#,
                )
            }],
            user: (
                "123",
                Some("ada@example.com"),
                Some("ada@example.com"),
                None,
            ),
        },
        OAuthRow {
            id: "instagram",
            settings: &[],
            authorize: "https://api.instagram.com/oauth/authorize?scope=user_profile",
            checks: PKCE,
            token: "https://api.instagram.com/oauth/access_token",
            auth: Post,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://graph.instagram.com/me?fields=id,username,account_type,name",
                r#"{"id":"17841405793187218","username":"ada","account_type":"PERSONAL"}"#,
            )],
            user: ("17841405793187218", Some("ada"), None, None),
        },
        OAuthRow {
            id: "kakao",
            settings: &[],
            authorize: "https://kauth.kakao.com/oauth/authorize?scope=",
            checks: PKCE,
            token: "https://kauth.kakao.com/oauth/token",
            auth: Post,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://kapi.kakao.com/v2/user/me",
                r#"{"id":123456789,"kakao_account":{"profile":{"nickname":"Ada","profile_image_url":"http://k.kakaocdn.net/ada.jpg"},"email":"ada@example.com"}}"#,
            )],
            user: (
                "123456789",
                Some("Ada"),
                Some("ada@example.com"),
                Some("http://k.kakaocdn.net/ada.jpg"),
            ),
        },
        OAuthRow {
            id: "mailchimp",
            settings: &[],
            authorize: "https://login.mailchimp.com/oauth2/authorize?scope=openid profile email",
            checks: PKCE,
            token: "https://login.mailchimp.com/oauth2/token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://login.mailchimp.com/oauth2/metadata",
                r#"{"dc":"us1","accountname":"Ada's Shop","login":{"email":"ada@example.com","login_id":31,"login_name":"ada"}}"#,
            )],
            user: ("31", Some("Ada's Shop"), Some("ada@example.com"), None),
        },
        OAuthRow {
            id: "mailru",
            settings: &[],
            authorize: "https://oauth.mail.ru/login?scope=userinfo",
            checks: PKCE,
            token: "https://oauth.mail.ru/token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://oauth.mail.ru/userinfo",
                r#"{"id":"1234567890","name":"Ada Lovelace","email":"ada@mail.ru","image":"https://filin.mail.ru/pic?ada"}"#,
            )],
            user: (
                "1234567890",
                Some("Ada Lovelace"),
                Some("ada@mail.ru"),
                None,
            ),
        },
        OAuthRow {
            id: "mastodon",
            settings: &[("issuer", "https://mastodon.social")],
            authorize: "https://mastodon.social/oauth/authorize?scope=read",
            checks: PKCE,
            token: "https://mastodon.social/oauth/token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://mastodon.social/api/v1/accounts/verify_credentials",
                r#"{"id":"14715","username":"ada","acct":"ada","display_name":"Ada","avatar_static":"https://files.mastodon.social/ada.png"}"#,
            )],
            user: (
                "14715",
                Some("ada"),
                None,
                Some("https://files.mastodon.social/ada.png"),
            ),
        },
        OAuthRow {
            id: "mattermost",
            settings: &[("issuer", "https://chat.example.com")],
            authorize: "https://chat.example.com/oauth/authorize?scope=openid profile email",
            checks: PKCE,
            token: "https://chat.example.com/oauth/access_token",
            auth: Post,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://chat.example.com/api/v4/users/me",
                r#"{"id":"3ka9","username":null,"first_name":"Ada","last_name":"Lovelace","email":"ada@example.com"}"#,
            )],
            user: ("3ka9", Some("Ada Lovelace"), Some("ada@example.com"), None),
        },
        OAuthRow {
            id: "medium",
            settings: &[],
            authorize: "https://medium.com/m/oauth/authorize?scope=basicProfile",
            checks: PKCE,
            token: "https://api.medium.com/v1/tokens",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://api.medium.com/v1/me",
                r#"{"data":{"id":"5303d74c64f66366f00cb9b2a94f3251bf5","username":"ada","name":"Ada Lovelace","url":"https://medium.com/@ada","imageUrl":"https://images.medium.com/ada.png"}}"#,
            )],
            user: (
                "5303d74c64f66366f00cb9b2a94f3251bf5",
                Some("Ada Lovelace"),
                None,
                Some("https://images.medium.com/ada.png"),
            ),
        },
        OAuthRow {
            id: "naver",
            settings: &[],
            authorize: "https://nid.naver.com/oauth2.0/authorize?scope=openid profile email",
            checks: PKCE,
            token: "https://nid.naver.com/oauth2.0/token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://openapi.naver.com/v1/nid/me",
                r#"{"resultcode":"00","message":"success","response":{"id":"32742776","nickname":"ada","email":"ada@naver.com","profile_image":"https://ssl.pstatic.net/ada.png"}}"#,
            )],
            user: (
                "32742776",
                Some("ada"),
                Some("ada@naver.com"),
                Some("https://ssl.pstatic.net/ada.png"),
            ),
        },
        OAuthRow {
            id: "netlify",
            settings: &[],
            authorize: "https://app.netlify.com/authorize?scope=",
            checks: PKCE,
            token: "https://api.netlify.com/oauth/token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://api.netlify.com/api/v1/user",
                r#"{"id":"5a1","full_name":"Ada Lovelace","email":"ada@example.com","avatar_url":"https://avatars.netlify.com/ada"}"#,
            )],
            user: (
                "5a1",
                Some("Ada Lovelace"),
                Some("ada@example.com"),
                Some("https://avatars.netlify.com/ada"),
            ),
        },
        OAuthRow {
            id: "netsuite",
            settings: &[
                ("account_id", "1234567"),
                (
                    "userinfo_url",
                    "https://1234567.restlets.api.netsuite.com/app/site/hosting/restlet.nl?script=486&deploy=1",
                ),
            ],
            authorize: "https://1234567.app.netsuite.com/app/login/oauth2/authorize.nl?scope=restlets rest_webservices",
            checks: STATE,
            token: "https://1234567.suitetalk.api.netsuite.com/services/rest/auth/oauth2/v1/token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://1234567.restlets.api.netsuite.com/app/site/hosting/restlet.nl?script=486&deploy=1",
                r#"{"id":-5,"name":"Ada Lovelace","email":"ada@example.com","location":1,"role":3}"#,
            )],
            user: ("-5", Some("Ada Lovelace"), Some("ada@example.com"), None),
        },
        OAuthRow {
            id: "nextcloud",
            settings: &[("issuer", "https://cloud.example.com")],
            authorize: "https://cloud.example.com/apps/oauth2/authorize?scope=openid profile email",
            checks: PKCE,
            token: "https://cloud.example.com/apps/oauth2/api/v1/token",
            auth: Basic,
            token_extra: &[],
            token_answer: Some(
                r#"{"access_token":"at-123","token_type":"Bearer","expires_in":3600,"refresh_token":"rt","user_id":"ada"}"#,
            ),
            userinfo: vec![Call {
                headers: &[("ocs-apirequest", "true")],
                ..get(
                    "https://cloud.example.com/ocs/v1.php/cloud/users/ada",
                    r#"{"ocs":{"meta":{"status":"ok","statuscode":100},"data":{"id":"ada","displayname":"Ada Lovelace","email":"ada@example.com"}}}"#,
                )
            }],
            user: (
                "ada",
                Some("Ada Lovelace"),
                Some("ada@example.com"),
                Some("https://cloud.example.com/avatar/ada/512"),
            ),
        },
        OAuthRow {
            id: "notion",
            settings: &[],
            authorize: "https://api.notion.com/v1/oauth/authorize?response_type=code&owner=user&scope=openid profile email",
            checks: PKCE,
            token: "https://api.notion.com/v1/oauth/token",
            auth: Basic,
            token_extra: &[],
            token_answer: Some(
                r#"{"access_token":"at-123","token_type":"bearer","bot_id":"b1","workspace_id":"w1","owner":{"type":"user"}}"#,
            ),
            userinfo: vec![Call {
                headers: &[("notion-version", "2022-06-28")],
                ..get(
                    "https://api.notion.com/v1/users/me",
                    r#"{"object":"user","id":"bot-1","type":"bot","bot":{"owner":{"type":"user","user":{"object":"user","id":"e79a0b74-3aba-4149-9f74-0bb5791a6ee6","name":"Ada Lovelace","avatar_url":"https://s3.notion.so/ada.png","type":"person","person":{"email":"ada@example.com"}}}}}"#,
                )
            }],
            user: (
                "e79a0b74-3aba-4149-9f74-0bb5791a6ee6",
                Some("Ada Lovelace"),
                Some("ada@example.com"),
                Some("https://s3.notion.so/ada.png"),
            ),
        },
        OAuthRow {
            id: "osso",
            settings: &[("issuer", "https://osso.example.com/")],
            authorize: "https://osso.example.com/oauth/authorize?scope=openid profile email",
            checks: PKCE,
            token: "https://osso.example.com/oauth/token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://osso.example.com/oauth/me",
                r#"{"id":"osso-1","email":"ada@example.com","idp":"Okta","requested":{"domain":"example.com"}}"#,
            )],
            user: ("osso-1", None, Some("ada@example.com"), None),
        },
        OAuthRow {
            id: "osu",
            settings: &[],
            authorize: "https://osu.ppy.sh/oauth/authorize?scope=identify",
            checks: PKCE,
            token: "https://osu.ppy.sh/oauth/token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://osu.ppy.sh/api/v2/me",
                r#"{"id":2,"username":"peppy","avatar_url":"https://a.ppy.sh/2"}"#,
            )],
            user: ("2", Some("peppy"), None, Some("https://a.ppy.sh/2")),
        },
        OAuthRow {
            id: "patreon",
            settings: &[],
            authorize: "https://www.patreon.com/oauth2/authorize?scope=identity identity[email]",
            checks: PKCE,
            token: "https://www.patreon.com/api/oauth2/token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://www.patreon.com/api/oauth2/api/current_user",
                r#"{"data":{"id":"123","type":"user","attributes":{"full_name":"Ada Lovelace","email":"ada@example.com","image_url":"https://c8.patreon.com/ada.png"}}}"#,
            )],
            user: (
                "123",
                Some("Ada Lovelace"),
                Some("ada@example.com"),
                Some("https://c8.patreon.com/ada.png"),
            ),
        },
        OAuthRow {
            id: "pinterest",
            settings: &[],
            authorize: "https://www.pinterest.com/oauth?scope=user_accounts:read",
            checks: PKCE,
            token: "https://api.pinterest.com/v5/oauth/token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://api.pinterest.com/v5/user_account",
                r#"{"account_type":"PINNER","username":"ada","profile_image":"https://i.pinimg.com/ada.jpg"}"#,
            )],
            user: (
                "ada",
                Some("ada"),
                None,
                Some("https://i.pinimg.com/ada.jpg"),
            ),
        },
        OAuthRow {
            id: "pipedrive",
            settings: &[],
            authorize: "https://oauth.pipedrive.com/oauth/authorize?scope=openid profile email",
            checks: PKCE,
            token: "https://oauth.pipedrive.com/oauth/token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://api.pipedrive.com/users/me",
                r#"{"success":true,"data":{"id":123,"name":"Ada Lovelace","email":"ada@example.com","icon_url":"https://pipedrive.com/ada.png"}}"#,
            )],
            user: (
                "123",
                Some("Ada Lovelace"),
                Some("ada@example.com"),
                Some("https://pipedrive.com/ada.png"),
            ),
        },
        OAuthRow {
            id: "reddit",
            settings: &[],
            authorize: "https://www.reddit.com/api/v1/authorize?scope=identity",
            checks: STATE,
            token: "https://www.reddit.com/api/v1/access_token",
            auth: Basic,
            token_extra: &[],
            token_answer: Some(
                r#"{"access_token":"at-123","token_type":"bearer","expires_in":86400,"scope":"identity"}"#,
            ),
            userinfo: vec![get(
                "https://oauth.reddit.com/api/v1/me",
                r#"{"id":"abc12","name":"ada_l","icon_img":"https://styles.redditmedia.com/ada.png","verified":true}"#,
            )],
            user: ("abc12", Some("ada_l"), None, None),
        },
        OAuthRow {
            id: "spotify",
            settings: &[],
            authorize: "https://accounts.spotify.com/authorize?scope=user-read-email",
            checks: PKCE,
            token: "https://accounts.spotify.com/api/token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://api.spotify.com/v1/me",
                r#"{"id":"wizzler","display_name":"Ada","email":"ada@example.com","images":[{"url":"https://i.scdn.co/image/ada","height":300,"width":300}]}"#,
            )],
            user: (
                "wizzler",
                Some("Ada"),
                Some("ada@example.com"),
                Some("https://i.scdn.co/image/ada"),
            ),
        },
        OAuthRow {
            id: "strava",
            settings: &[],
            authorize: "https://www.strava.com/api/v3/oauth/authorize?scope=read&approval_prompt=auto&response_type=code",
            checks: PKCE,
            token: "https://www.strava.com/api/v3/oauth/token",
            auth: Post,
            token_extra: &[],
            token_answer: Some(
                r#"{"token_type":"Bearer","expires_at":1568775134,"expires_in":21600,"refresh_token":"rt","access_token":"at-123","athlete":{"id":134815}}"#,
            ),
            userinfo: vec![get(
                "https://www.strava.com/api/v3/athlete",
                r#"{"id":134815,"username":"ada","firstname":"Ada","lastname":"Lovelace","profile":"https://dgalywyr863hv.cloudfront.net/ada/large.jpg"}"#,
            )],
            user: (
                "134815",
                Some("Ada Lovelace"),
                None,
                Some("https://dgalywyr863hv.cloudfront.net/ada/large.jpg"),
            ),
        },
        OAuthRow {
            id: "threads",
            settings: &[],
            authorize: "https://threads.net/oauth/authorize?scope=threads_basic",
            checks: STATE,
            token: "https://graph.threads.net/oauth/access_token",
            auth: Post,
            token_extra: &[],
            token_answer: Some(
                r#"{"access_token":"at-123","user_id":"1254","token_type":"bearer"}"#,
            ),
            userinfo: vec![get(
                "https://graph.threads.net/v1.0/me?fields=id,username,threads_profile_picture_url",
                r#"{"id":"1254","username":"ada","threads_profile_picture_url":"https://scontent.cdninstagram.com/ada.jpg"}"#,
            )],
            user: (
                "1254",
                Some("ada"),
                None,
                Some("https://scontent.cdninstagram.com/ada.jpg"),
            ),
        },
        OAuthRow {
            id: "tiktok",
            settings: &[],
            authorize: "https://www.tiktok.com/v2/auth/authorize?client_key=client-id&scope=user.info.basic",
            checks: PKCE,
            token: "https://open.tiktokapis.com/v2/oauth/token/",
            auth: Post,
            token_extra: &[("client_key", CLIENT_ID)],
            token_answer: Some(
                r#"{"access_token":"at-123","expires_in":86400,"open_id":"afd97af1-b87b-48b9-ac98-410aghda5344","refresh_expires_in":31536000,"refresh_token":"rt","scope":"user.info.basic","token_type":"Bearer"}"#,
            ),
            userinfo: vec![get(
                "https://open.tiktokapis.com/v2/user/info/?fields=open_id,avatar_url,display_name",
                r#"{"data":{"user":{"open_id":"afd97af1-b87b-48b9-ac98-410aghda5344","display_name":"Ada","avatar_url":"https://p19-sign.tiktokcdn-us.com/ada.jpeg"}},"error":{"code":"ok","message":""}}"#,
            )],
            user: (
                "afd97af1-b87b-48b9-ac98-410aghda5344",
                Some("Ada"),
                None,
                Some("https://p19-sign.tiktokcdn-us.com/ada.jpeg"),
            ),
        },
        OAuthRow {
            id: "todoist",
            settings: &[],
            authorize: "https://todoist.com/oauth/authorize?scope=data:read",
            checks: PKCE,
            token: "https://todoist.com/oauth/access_token",
            auth: Post,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![Call {
                method: "POST",
                body: Some(r#"{"sync_token":"*","resource_types":"[\"user\"]"}"#),
                ..get(
                    "https://api.todoist.com/sync/v9/sync",
                    r#"{"full_sync":true,"sync_token":"x","user":{"id":"2671355","email":"ada@example.com","full_name":"Ada Lovelace","avatar_big":"https://dcff1xvirvpfp.cloudfront.net/ada_big.jpg"}}"#,
                )
            }],
            user: (
                "2671355",
                Some("Ada Lovelace"),
                Some("ada@example.com"),
                Some("https://dcff1xvirvpfp.cloudfront.net/ada_big.jpg"),
            ),
        },
        OAuthRow {
            id: "trakt",
            settings: &[],
            authorize: "https://trakt.tv/oauth/authorize?scope=",
            checks: PKCE,
            token: "https://api.trakt.tv/oauth/token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![Call {
                headers: &[("trakt-api-version", "2"), ("trakt-api-key", CLIENT_ID)],
                ..get(
                    "https://api.trakt.tv/users/me?extended=full",
                    r#"{"username":"ada","name":"Ada Lovelace","ids":{"slug":"ada"},"images":{"avatar":{"full":"https://walter.trakt.tv/ada.jpg"}}}"#,
                )
            }],
            user: (
                "ada",
                Some("Ada Lovelace"),
                None,
                Some("https://walter.trakt.tv/ada.jpg"),
            ),
        },
        OAuthRow {
            id: "twitter",
            settings: &[],
            authorize: "https://x.com/i/oauth2/authorize?scope=users.read tweet.read offline.access",
            checks: PKCE_STATE,
            token: "https://api.x.com/2/oauth2/token",
            auth: Basic,
            token_extra: &[],
            token_answer: Some(
                r#"{"token_type":"bearer","expires_in":7200,"access_token":"at-123","scope":"users.read tweet.read offline.access","refresh_token":"rt"}"#,
            ),
            userinfo: vec![get(
                "https://api.x.com/2/users/me?user.fields=profile_image_url",
                r#"{"data":{"id":"2244994945","name":"Ada Lovelace","username":"ada","profile_image_url":"https://pbs.twimg.com/profile_images/ada_normal.jpg"}}"#,
            )],
            user: (
                "2244994945",
                Some("Ada Lovelace"),
                None,
                Some("https://pbs.twimg.com/profile_images/ada_normal.jpg"),
            ),
        },
        OAuthRow {
            id: "vk",
            settings: &[],
            authorize: "https://oauth.vk.com/authorize?scope=email&v=5.131",
            checks: PKCE,
            token: "https://oauth.vk.com/access_token?v=5.131",
            auth: Post,
            token_extra: &[],
            token_answer: Some(
                r#"{"access_token":"at-123","expires_in":86400,"user_id":210700286,"email":"ada@vk.com","token_type":"bearer"}"#,
            ),
            userinfo: vec![Call {
                headers: &[("user-agent", "authjs")],
                ..get(
                    "https://api.vk.com/method/users.get?fields=photo_100&v=5.131",
                    r#"{"response":[{"id":210700286,"first_name":"Ada","last_name":"Lovelace","photo_100":"https://sun1.userapi.com/ada.jpg"}]}"#,
                )
            }],
            user: (
                "210700286",
                Some("Ada Lovelace"),
                Some("ada@vk.com"),
                Some("https://sun1.userapi.com/ada.jpg"),
            ),
        },
        OAuthRow {
            id: "webex",
            settings: &[],
            authorize: "https://webexapis.com/v1/authorize?scope=spark:kms spark:people_read",
            checks: PKCE,
            token: "https://webexapis.com/v1/access_token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://webexapis.com/v1/people/me",
                r#"{"id":"Y2lzY29zcGFyazovL3VzL1BFT1BMRS9hZGE","emails":["ada@example.com"],"displayName":"Ada Lovelace","avatar":"https://avatar-prod.webexcontent.com/ada"}"#,
            )],
            user: (
                "Y2lzY29zcGFyazovL3VzL1BFT1BMRS9hZGE",
                Some("Ada Lovelace"),
                Some("ada@example.com"),
                Some("https://avatar-prod.webexcontent.com/ada"),
            ),
        },
        OAuthRow {
            id: "wechat",
            settings: &[],
            authorize: "https://open.weixin.qq.com/connect/oauth2/authorize?appid=client-id&scope=snsapi_userinfo",
            checks: STATE,
            // Auth.js writes the token endpoint's params into its URL.
            token: "https://api.weixin.qq.com/sns/oauth2/access_token?appid=client-id&secret=client-secret",
            auth: Basic,
            token_extra: &[],
            // No token_type (Auth.js conforms it to bearer), the user's openid.
            token_answer: Some(
                r#"{"access_token":"at-123","expires_in":7200,"refresh_token":"rt","openid":"oLVPpjqs9BhvzwPj5A-vTYAX3GLc","scope":"snsapi_userinfo","unionid":"o6_bmasdasdsad6_2sgVt7hMZOPfL"}"#,
            ),
            userinfo: vec![Call {
                bearer: false,
                ..get(
                    "https://api.weixin.qq.com/sns/userinfo?access_token=at-123&openid=oLVPpjqs9BhvzwPj5A-vTYAX3GLc&lang=zh_CN",
                    r#"{"openid":"oLVPpjqs9BhvzwPj5A-vTYAX3GLc","nickname":"Ada","sex":1,"headimgurl":"https://thirdwx.qlogo.cn/mmopen/ada/46","unionid":"o6_bmasdasdsad6_2sgVt7hMZOPfL"}"#,
                )
            }],
            user: (
                "o6_bmasdasdsad6_2sgVt7hMZOPfL",
                Some("Ada"),
                None,
                Some("https://thirdwx.qlogo.cn/mmopen/ada/46"),
            ),
        },
        OAuthRow {
            id: "wikimedia",
            settings: &[],
            authorize: "https://meta.wikimedia.org/w/rest.php/oauth2/authorize?scope=",
            checks: PKCE,
            token: "https://meta.wikimedia.org/w/rest.php/oauth2/access_token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://meta.wikimedia.org/w/rest.php/oauth2/resource/profile",
                r#"{"sub":"12345","username":"Ada Lovelace","editcount":42,"confirmed_email":true,"email":"ada@example.com"}"#,
            )],
            user: ("12345", Some("Ada Lovelace"), Some("ada@example.com"), None),
        },
        OAuthRow {
            id: "wordpress",
            settings: &[],
            authorize: "https://public-api.wordpress.com/oauth2/authorize?scope=auth",
            checks: PKCE,
            token: "https://public-api.wordpress.com/oauth2/token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://public-api.wordpress.com/rest/v1/me",
                r#"{"ID":12345,"display_name":"Ada","username":"ada","email":"ada@example.com","avatar_URL":"https://0.gravatar.com/avatar/ada"}"#,
            )],
            user: (
                "12345",
                Some("Ada"),
                Some("ada@example.com"),
                Some("https://0.gravatar.com/avatar/ada"),
            ),
        },
        OAuthRow {
            id: "workos",
            settings: &[("connection", "conn_01E4ZCR3C56J083X43JQXF3JK5")],
            authorize: "https://api.workos.com/sso/authorize?connection=conn_01E4ZCR3C56J083X43JQXF3JK5&scope=openid profile email",
            checks: PKCE,
            token: "https://api.workos.com/sso/token",
            auth: Post,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://api.workos.com/sso/profile",
                r#"{"id":"prof_01DMC79VCBZ0NY2099737PSVF1","connection_type":"OktaSAML","email":"ada@example.com","first_name":"Ada","last_name":"Lovelace","raw_attributes":{"picture":"https://example.com/ada.jpg"}}"#,
            )],
            user: (
                "prof_01DMC79VCBZ0NY2099737PSVF1",
                Some("Ada Lovelace"),
                Some("ada@example.com"),
                Some("https://example.com/ada.jpg"),
            ),
        },
        OAuthRow {
            id: "yandex",
            settings: &[],
            authorize: "https://oauth.yandex.ru/authorize?scope=login:info login:email login:avatar",
            checks: PKCE,
            token: "https://oauth.yandex.ru/token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://login.yandex.ru/info?format=json",
                r#"{"id":"1000034426","login":"ada","display_name":null,"real_name":"Ada Lovelace","default_email":"ada@yandex.ru","is_avatar_empty":false,"default_avatar_id":"131652443"}"#,
            )],
            user: (
                "1000034426",
                Some("Ada Lovelace"),
                Some("ada@yandex.ru"),
                Some("https://avatars.yandex.net/get-yapic/131652443/islands-200"),
            ),
        },
        OAuthRow {
            id: "zoho",
            settings: &[],
            authorize: "https://accounts.zoho.com/oauth/v2/auth?scope=AaaServer.profile.Read",
            checks: PKCE,
            token: "https://accounts.zoho.com/oauth/v2/token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://accounts.zoho.com/oauth/user/info",
                r#"{"First_Name":"Ada","Last_Name":"Lovelace","Email":"ada@example.com","Display_Name":"ada","ZUID":12345678}"#,
            )],
            user: (
                "12345678",
                Some("Ada Lovelace"),
                Some("ada@example.com"),
                None,
            ),
        },
        OAuthRow {
            id: "zoom",
            settings: &[],
            authorize: "https://zoom.us/oauth/authorize?scope=",
            checks: PKCE,
            token: "https://zoom.us/oauth/token",
            auth: Basic,
            token_extra: &[],
            token_answer: None,
            userinfo: vec![get(
                "https://api.zoom.us/v2/users/me",
                r#"{"id":"KDcuGIm1QgePTO8WbOqwIQ","first_name":"Ada","last_name":"Lovelace","email":"ada@example.com","pic_url":"https://lh4.googleusercontent.com/ada.jpg"}"#,
            )],
            user: (
                "KDcuGIm1QgePTO8WbOqwIQ",
                Some("Ada Lovelace"),
                Some("ada@example.com"),
                Some("https://lh4.googleusercontent.com/ada.jpg"),
            ),
        },
    ]
}

// ---------------------------------------------------------------------------------------
// The harness.

/// The app with one catalogue preset built from its settings, talking to the stand-in.
fn app(id: &str, settings: &[(&str, &str)], stand_in: &StandIn) -> (Auth, MemoryAdapter, String) {
    let entry = catalog::entry(id).unwrap();
    let mut pairs = vec![
        (entry.env_var("id"), CLIENT_ID.to_owned()),
        (entry.env_var("secret"), CLIENT_SECRET.to_owned()),
    ];
    pairs.extend(
        settings
            .iter()
            .map(|(k, v)| (entry.env_var(k), (*v).to_owned())),
    );
    let provider = entry
        .build(&Env::from_pairs(pairs))
        .unwrap()
        .http_client(ToStandIn {
            origin: stand_in.origin.clone(),
            inner: authcore::http_client::ReqwestClient::shared(),
        });
    let provider_id = provider.id().to_owned();
    let db = MemoryAdapter::new();
    let config = AuthConfig::builder()
        .secret("catalogue-presets-secret-xxxxxxx")
        .trust_host(true)
        .adapter(db.clone())
        .provider(provider)
        .build()
        .unwrap();
    (Auth::new(config), db, provider_id)
}

/// The decoded query pairs of a URL, sorted, and the URL without its query.
fn split(url: &str) -> (String, BTreeSet<(String, String)>) {
    let u = url::Url::parse(url).unwrap();
    let mut base = u.clone();
    base.set_query(None);
    (base.to_string(), u.query_pairs().into_owned().collect())
}

/// The authorization URL the app redirected to, against the row's expectation; returns
/// the `state` (if any) and the `nonce` (if any).
fn check_authorization(
    what: &str,
    location: &str,
    expected: &str,
    checks: Checks,
    provider_id: &str,
) -> (Option<String>, Option<String>) {
    let (base, mut pairs) = split(location);
    let (want_base, mut want) = split(expected);
    assert_eq!(base, want_base, "{what}: authorization endpoint");
    let redirect = format!("{APP}/auth/callback/{provider_id}");
    for (k, v) in [
        ("response_type", "code"),
        ("client_id", CLIENT_ID),
        ("redirect_uri", redirect.as_str()),
    ] {
        if !want.iter().any(|(n, _)| n == k) {
            want.insert((k.to_owned(), v.to_owned()));
        }
    }
    let mut take = |name: &str| {
        let found = pairs.iter().find(|(n, _)| n == name).cloned();
        if let Some(p) = &found {
            pairs.remove(p);
        }
        found.map(|(_, v)| v)
    };
    let state = take("state");
    let challenge = take("code_challenge");
    let method = take("code_challenge_method");
    let nonce = take("nonce");
    assert_eq!(state.is_some(), checks.state, "{what}: state in {location}");
    assert_eq!(
        challenge.is_some(),
        checks.pkce,
        "{what}: PKCE in {location}"
    );
    assert_eq!(method.is_some(), checks.pkce, "{what}: PKCE method");
    assert_eq!(nonce.is_some(), checks.nonce, "{what}: nonce in {location}");
    assert_eq!(pairs, want, "{what}: authorization parameters");
    (state, nonce)
}

/// Delivers the authorization response (`code`, `state`) to the callback, as a query or,
/// for `response_mode=form_post`, a form post.
async fn callback(
    auth: &Auth,
    jar: &mut Jar,
    provider_id: &str,
    state: Option<&str>,
    form_post: bool,
) -> crate::oauth_flow::Resp {
    let mut params = form_urlencoded::Serializer::new(String::new());
    params.append_pair("code", CODE);
    if let Some(s) = state {
        params.append_pair("state", s);
    }
    let params = params.finish();
    let url = format!("{APP}/auth/callback/{provider_id}");
    let req = if form_post {
        Request::post(url)
            .header("content-type", "application/x-www-form-urlencoded")
            .header("cookie", jar.header())
            .body(Full::new(Bytes::from(params)))
    } else {
        Request::get(format!("{url}?{params}"))
            .header("cookie", jar.header())
            .body(Full::default())
    };
    let r = send(auth, req.unwrap()).await;
    jar.absorb(&r);
    r
}

/// The token request the stand-in received, against the row's expectation.
fn check_token_request(
    what: &str,
    got: &Received,
    url: &str,
    auth: ClientAuth,
    extra: &[(&str, &str)],
    pkce: bool,
    provider_id: &str,
) {
    assert_eq!(got.method, Method::POST, "{what}: token method");
    assert_eq!(got.url, url, "{what}: token URL");
    if let Custom(fields) = auth {
        assert_eq!(got.header("authorization"), None, "{what}");
        let want: BTreeSet<(String, String)> = fields
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        assert_eq!(got.form(), want, "{what}: token request body");
        return;
    }
    let mut want: BTreeSet<(String, String)> = [
        ("grant_type", "authorization_code"),
        ("code", CODE),
        (
            "redirect_uri",
            &format!("{APP}/auth/callback/{provider_id}"),
        ),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
    .collect();
    want.extend(
        extra
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
    );
    let basic = format!(
        "Basic {}",
        STANDARD.encode(format!("{CLIENT_ID}:{CLIENT_SECRET}"))
    );
    match auth {
        Basic => assert_eq!(got.header("authorization"), Some(basic.as_str()), "{what}"),
        Post => {
            assert_eq!(got.header("authorization"), None, "{what}");
            want.insert(("client_id".into(), CLIENT_ID.into()));
            want.insert(("client_secret".into(), CLIENT_SECRET.into()));
        }
        Custom(_) => unreachable!(),
    }
    let mut form = got.form();
    let verifier = form.iter().find(|(k, _)| k == "code_verifier").cloned();
    assert_eq!(verifier.is_some(), pkce, "{what}: code_verifier");
    if let Some(v) = verifier {
        form.remove(&v);
    }
    assert_eq!(form, want, "{what}: token request body");
}

/// A userinfo request against its expectation.
fn check_call(what: &str, got: &Received, call: &Call) {
    assert_eq!(got.method.as_str(), call.method, "{what}: userinfo method");
    assert_eq!(got.url, call.url, "{what}: userinfo URL");
    let bearer = format!("Bearer {ACCESS_TOKEN}");
    let want_auth = call.bearer.then_some(bearer.as_str());
    assert_eq!(
        got.header("authorization"),
        want_auth,
        "{what}: {}",
        call.url
    );
    for (name, value) in call.headers {
        assert_eq!(got.header(name), Some(*value), "{what}: header {name}");
    }
    if let Some(body) = call.body {
        let got_body: Value = serde_json::from_slice(&got.body).unwrap();
        let want_body: Value = serde_json::from_str(body).unwrap();
        assert_eq!(got_body, want_body, "{what}: userinfo body");
    }
}

/// The session and the stored user and account after a successful sign-in.
async fn check_signed_in(
    what: &str,
    auth: &Auth,
    db: &MemoryAdapter,
    jar: &Jar,
    r: &crate::oauth_flow::Resp,
    provider_id: &str,
    user: Expected,
) {
    assert_eq!(r.status, 302, "{what}: {r:?}");
    assert_eq!(
        r.location.as_deref(),
        Some("http://localhost:3000/dashboard"),
        "{what}: callback answer {r:?}"
    );
    let (account_id, name, email, image) = user;
    let stored = db
        .get_user_by_account(provider_id, account_id)
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("{what}: no account {provider_id}/{account_id}"));
    assert_eq!(stored.name.as_deref(), name, "{what}: name");
    assert_eq!(stored.email.as_deref(), email, "{what}: email");
    assert_eq!(stored.image.as_deref(), image, "{what}: image");
    let s = session(auth, jar).await;
    assert_eq!(s["user"]["name"].as_str(), name, "{what}: session {s}");
    assert_eq!(s["user"]["email"].as_str(), email, "{what}: session {s}");
    assert_eq!(s["user"]["image"].as_str(), image, "{what}: session {s}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_oauth2_preset_signs_in_against_its_brand_stand_in() {
    let stand_in = StandIn::start().await;
    let mut tested = BTreeSet::new();
    for row in oauth_rows() {
        let what = row.id;
        stand_in.reset();
        let (auth, db, provider_id) = app(row.id, row.settings, &stand_in);
        stand_in.answer("POST", row.token, 200, row.token_answer.unwrap_or(BEARER));
        for call in &row.userinfo {
            stand_in.answer(call.method, call.url, 200, call.answer);
        }
        let mut jar = Jar::default();
        let location = start(&auth, &provider_id, &mut jar).await;
        let (state, _) =
            check_authorization(what, &location, row.authorize, row.checks, &provider_id);
        let r = callback(&auth, &mut jar, &provider_id, state.as_deref(), false).await;
        let received = stand_in.received();
        assert_eq!(
            received.len(),
            1 + row.userinfo.len(),
            "{what}: requests {received:#?}, answer {r:?}"
        );
        check_token_request(
            what,
            &received[0],
            row.token,
            row.auth,
            row.token_extra,
            row.checks.pkce,
            &provider_id,
        );
        for (got, call) in received[1..].iter().zip(&row.userinfo) {
            check_call(what, got, call);
        }
        check_signed_in(what, &auth, &db, &jar, &r, &provider_id, row.user).await;
        tested.insert(row.id);
    }
    // Every OAuth 2 preset of the catalogue has its row.
    let oauth2: BTreeSet<&str> = catalog::entries()
        .iter()
        .filter(|e| {
            let p = e_build(e.id);
            p.kind() == authcore::types::ProviderType::Oauth
        })
        .map(|e| e.id)
        .collect();
    let missing: Vec<_> = oauth2.difference(&tested).collect();
    assert!(
        missing.is_empty(),
        "OAuth 2 presets without a row: {missing:?}"
    );
}

// ---------------------------------------------------------------------------------------
// Against the installed @auth/core at run time.

/// Where a preset sends, at run time, something else than the installed `@auth/core` does
/// for the same options: the parts that differ (`authorize`, `token`, `userinfo`). Each
/// preset here says why in its catalogue `deviations` (docs/providers.md); the test fails on
/// a difference not listed here and on a listed one that no longer shows.
const RUNTIME_DIFFERENCES: &[(&str, &[&str])] = &[
    // Auth.js's token request fails, so it asks for no user.
    ("azure-devops", &["token", "userinfo"]),
    ("box", &["authorize"]),
    ("bungie", &["userinfo"]),
    ("dribbble", &["authorize"]),
    ("notion", &["authorize"]),
];

/// Presets `@auth/core` 0.41.3 cannot sign in with at all: it answers 500 (`InvalidEndpoints`:
/// its preset has neither an issuer nor a userinfo endpoint, and a `userinfo` option does not
/// help). authcore's requests for them are checked against the brand's documentation by
/// the row test above.
const AUTHJS_CANNOT_SIGN_IN: &[&str] = &["netsuite", "todoist"];

/// Auth.js's option name for a catalogue setting.
fn authjs_option(key: &str) -> &str {
    match key {
        "account_id" => "accountID",
        "userinfo_url" => "userinfo",
        "api_key" => "apiKey",
        "tenant_id" => "tenantId",
        other => other,
    }
}

/// One request to the brand, in a form both sides can be compared in: random values
/// (`state`, PKCE, `nonce`) as `<random>`, generic headers (the HTTP client's `accept`,
/// `user-agent` and body type) left out, bodies parsed by their type.
#[derive(Debug, PartialEq)]
struct Sent {
    method: String,
    url: String,
    headers: BTreeMap<String, String>,
    body: Value,
}

fn sent(method: &str, url: &str, headers: &[(String, String)], body: &[u8]) -> Sent {
    let generic = |k: &str, v: &str| match k {
        "accept" => matches!(
            v,
            "application/json" | "application/json, application/jwt" | "*/*"
        ),
        "user-agent" => v.starts_with("oauth4webapi/") || v.starts_with("authcore"),
        "content-type" => {
            v.starts_with("application/x-www-form-urlencoded") || v == "application/json"
        }
        "content-length" | "host" | "connection" | "accept-encoding" => true,
        _ => false,
    };
    let headers: BTreeMap<String, String> = headers
        .iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), v.clone()))
        .filter(|(k, v)| !generic(k, v))
        .collect();
    let body = if body.is_empty() {
        Value::Null
    } else if let Ok(v) = serde_json::from_slice::<Value>(body) {
        v
    } else {
        let pairs: BTreeMap<String, String> = form_urlencoded::parse(body)
            .into_owned()
            .map(|(k, v)| {
                let v = if k == "code_verifier" {
                    "<random>".into()
                } else {
                    v
                };
                (k, v)
            })
            .collect();
        json!(pairs)
    };
    Sent {
        method: method.to_owned(),
        url: url.to_owned(),
        headers,
        body,
    }
}

/// An authorization URL with its random parameters as `<random>`.
fn authorize_of(location: &str) -> (String, BTreeSet<(String, String)>) {
    if url::Url::parse(location).is_err() {
        return (location.to_owned(), BTreeSet::new());
    }
    let (base, pairs) = split(location);
    let pairs = pairs
        .into_iter()
        .map(|(k, v)| {
            let random = matches!(k.as_str(), "state" | "code_challenge" | "nonce");
            (k, if random { "<random>".into() } else { v })
        })
        .collect();
    (base, pairs)
}

/// The stand-in's answers of a row, keyed as both sides look them up.
fn answers_of(row: &OAuthRow) -> BTreeMap<String, String> {
    let key = |method: &str, url: &str| {
        let (base, _) = split(url);
        format!("{method} {base}")
    };
    let mut answers = BTreeMap::new();
    answers.insert(
        key("POST", row.token),
        row.token_answer.unwrap_or(BEARER).to_owned(),
    );
    for call in &row.userinfo {
        answers.insert(key(call.method, call.url), call.answer.to_owned());
    }
    answers
}

/// What the installed `@auth/core` sends for every row (`interop/catalog-runtime.mjs`).
fn authjs_runtime(rows: &[OAuthRow]) -> BTreeMap<String, Value> {
    let cases: Vec<Value> = rows
        .iter()
        .map(|row| authjs_case(row.id, row.settings, &answers_of(row)))
        .collect();
    authjs_run(cases)
}

/// One case for `interop/catalog-runtime.mjs`.
fn authjs_case(id: &str, settings: &[(&str, &str)], answers: &BTreeMap<String, String>) -> Value {
    let options: serde_json::Map<String, Value> = settings
        .iter()
        .map(|(k, v)| (authjs_option(k).to_owned(), json!(v)))
        .collect();
    json!({
        "id": id,
        "options": options,
        "answers": answers,
        "code": CODE,
        "clientId": CLIENT_ID,
        "clientSecret": CLIENT_SECRET,
    })
}

/// Runs the cases through the installed `@auth/core`; the results by id.
fn authjs_run(cases: Vec<Value>) -> BTreeMap<String, Value> {
    crate::interop_node::interop_dir("@auth/core/package.json");
    let out = crate::interop_node::run(
        "catalog-runtime.mjs",
        &json!({ "app": APP, "cases": cases }),
    )
    .expect("catalog-runtime.mjs failed");
    let results: Vec<Value> = serde_json::from_slice(&out).unwrap();
    results
        .into_iter()
        .map(|r| (r["id"].as_str().unwrap().to_owned(), r))
        .collect()
}

/// The differences found are exactly the `listed` ones, each with its deviation text in
/// the catalogue.
fn assert_listed(found: &BTreeMap<&str, Vec<&str>>, listed: &[(&str, &[&str])], report: &[String]) {
    let listed: BTreeMap<&str, Vec<&str>> = listed
        .iter()
        .map(|(id, parts)| (*id, parts.to_vec()))
        .collect();
    assert_eq!(
        found,
        &listed,
        "differences from @auth/core:\n{}",
        report.join("\n")
    );
    for id in listed.keys() {
        assert!(
            !catalog::entry(id).unwrap().deviations.is_empty(),
            "{id} differs from @auth/core without a deviation in the catalogue"
        );
    }
}

/// What the stand-in received, comparable.
fn ours_sent(stand_in: &StandIn) -> Vec<Sent> {
    stand_in
        .received()
        .iter()
        .map(|r| {
            let headers: Vec<(String, String)> = r
                .headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_str().unwrap().to_owned()))
                .collect();
            sent(r.method.as_str(), &r.url, &headers, &r.body)
        })
        .collect()
}

/// What `@auth/core` sent in one case of `catalog-runtime.mjs`, comparable.
fn theirs_sent(result: &Value) -> Vec<Sent> {
    result["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let headers: Vec<(String, String)> = r["headers"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
                .collect();
            sent(
                r["method"].as_str().unwrap(),
                r["url"].as_str().unwrap(),
                &headers,
                r["body"].as_str().unwrap().as_bytes(),
            )
        })
        .collect()
}

/// Every OAuth 2 preset's authorization redirect, token request and userinfo requests
/// against what the installed `@auth/core` sends at run time for the same options and the
/// same answers: equal, or different exactly where [`RUNTIME_DIFFERENCES`] says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_oauth2_preset_sends_what_authjs_sends_at_run_time() {
    let rows = oauth_rows();
    let authjs = authjs_runtime(&rows);
    let stand_in = StandIn::start().await;
    let mut found: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut report = Vec::new();
    for row in &rows {
        let theirs = &authjs[row.id];
        assert!(theirs.get("error").is_none(), "{}: {theirs}", row.id);
        if AUTHJS_CANNOT_SIGN_IN.contains(&row.id) {
            assert_eq!(theirs["status"], 500, "{}: {theirs}", row.id);
            assert_eq!(theirs["location"], Value::Null, "{}: {theirs}", row.id);
            continue;
        }
        stand_in.reset();
        for (key, answer) in answers_of(row) {
            let (method, url) = key.split_once(' ').unwrap();
            stand_in.answer(method, url, 200, &answer);
        }
        let (auth, _, provider_id) = app(row.id, row.settings, &stand_in);
        let mut jar = Jar::default();
        let location = start(&auth, &provider_id, &mut jar).await;
        let state = url::Url::parse(&location)
            .unwrap()
            .query_pairs()
            .find(|(k, _)| k == "state")
            .map(|(_, v)| v.into_owned());
        callback(&auth, &mut jar, &provider_id, state.as_deref(), false).await;
        let ours = ours_sent(&stand_in);
        let their_requests = theirs_sent(theirs);
        let their_location = theirs["location"].as_str().unwrap_or_default();
        let mut parts = Vec::new();
        if authorize_of(&location) != authorize_of(their_location) {
            parts.push("authorize");
            report.push(format!(
                "{}: authorize\n  ours   {:?}\n  Auth.js {:?}",
                row.id,
                authorize_of(&location),
                authorize_of(their_location)
            ));
        }
        if ours.first() != their_requests.first() {
            parts.push("token");
            report.push(format!(
                "{}: token\n  ours   {:?}\n  Auth.js {:?}",
                row.id,
                ours.first(),
                their_requests.first()
            ));
        }
        if ours.get(1..) != their_requests.get(1..) {
            parts.push("userinfo");
            report.push(format!(
                "{}: userinfo\n  ours   {:?}\n  Auth.js {:?}",
                row.id,
                ours.get(1..),
                their_requests.get(1..)
            ));
        }
        if !parts.is_empty() {
            found.insert(row.id, parts);
        }
    }
    assert_listed(&found, RUNTIME_DIFFERENCES, &report);
}

/// A preset with made-up settings, to look at.
fn e_build(id: &str) -> authcore::providers::OAuthProvider {
    let entry = catalog::entry(id).unwrap();
    let mut pairs = vec![
        (entry.env_var("id"), "c".to_owned()),
        (entry.env_var("secret"), "s".to_owned()),
    ];
    for s in entry.settings {
        let v = match s.key {
            "platform_type" => "OfficialAccount",
            "account_id" => "1",
            "api_key" | "scope" | "api_version" | "connection" | "tenant_id" => "x",
            _ => "https://idp.example",
        };
        pairs.push((entry.env_var(s.key), v.to_owned()));
    }
    entry.build(&Env::from_pairs(pairs)).unwrap()
}

// ---------------------------------------------------------------------------------------
// The id list of the installed @auth/core.

/// The ids of a union type `export type <name> = "a" | "b" …;` in provider-types.d.ts.
fn union_ids(text: &str, name: &str) -> Vec<String> {
    let start = text
        .find(&format!("export type {name} ="))
        .unwrap_or_else(|| panic!("{name} not in provider-types.d.ts"));
    let line = &text[start..text[start..].find(';').map_or(text.len(), |e| start + e)];
    line.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_provider_id_of_authjs_is_in_the_catalogue() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../interop/node_modules/@auth/core/providers/provider-types.d.ts"
    );
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{path}: {e} (run `npm ci --prefix interop`)"));
    let package: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../interop/node_modules/@auth/core/package.json"
        ))
        .unwrap(),
    )
    .unwrap();
    assert_eq!(package["version"], "0.41.3");
    let oauth = union_ids(&text, "OAuthProviderId");
    let email = union_ids(&text, "EmailProviderId");
    assert!(oauth.len() > 90 && email.len() > 5, "{oauth:?} {email:?}");
    let others: Vec<&str> = catalog::OTHER_PRESETS.iter().map(|o| o.id).collect();
    let mut missing = Vec::new();
    for id in oauth.iter().chain(&email) {
        if catalog::entry(id).is_err() && !others.contains(&id.as_str()) {
            missing.push(id.clone());
        }
    }
    assert!(
        missing.is_empty(),
        "Auth.js ids missing from the catalogue: {missing:?}"
    );
    // And nothing the package does not have.
    for e in catalog::entries() {
        assert!(
            oauth.contains(&e.id.to_owned()),
            "{} is not an Auth.js id",
            e.id
        );
    }
    // `loops` is listed among the OAuth ids by Auth.js but is an email service.
    assert!(oauth.contains(&"loops".to_owned()) && others.contains(&"loops"));
    assert_eq!(
        catalog::entries().len() + catalog::OTHER_PRESETS.len(),
        oauth.len() + email.len() - 1 + 1,
        "every id exactly once (loops is in both Auth.js lists, `email` in EmailProviderId)"
    );
    // Display names as in Auth.js: `name: "…"` in providers/<id>.js.
    for e in catalog::entries() {
        let js = std::fs::read_to_string(format!(
            "{}/../../interop/node_modules/@auth/core/providers/{}.js",
            env!("CARGO_MANIFEST_DIR"),
            e.id
        ))
        .unwrap();
        let names: Vec<&str> = js
            .lines()
            .filter_map(|l| l.trim().strip_prefix("name: \""))
            .filter_map(|l| l.split('"').next())
            .collect();
        // azure-ad spreads Entra ID's then overrides the name: the last one counts.
        assert_eq!(names.last().copied(), Some(e.name), "{}", e.id);
        let ids: Vec<&str> = js
            .lines()
            .filter_map(|l| l.trim().strip_prefix("id: \""))
            .filter_map(|l| l.split('"').next())
            .collect();
        assert_eq!(ids.last().copied(), Some(e.provider_id), "{}", e.id);
        // The button style: `brandColor ?? bg`, and `text`.
        let (brand, text) = js_style(&js);
        let style = e_build(e.id).button_style().clone();
        assert_eq!(
            (style.brand_color.as_deref(), style.text.as_deref()),
            (brand.as_deref(), text.as_deref()),
            "{} button style",
            e.id
        );
    }
}

/// `style: { bg, text, brandColor }` of a preset's JavaScript (the sign-in page uses
/// `brandColor ?? bg`); azure-ad has Entra ID's.
fn js_style(js: &str) -> (Option<String>, Option<String>) {
    let js = if js.contains("...MicrosoftEntraID(config)") {
        std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../interop/node_modules/@auth/core/providers/microsoft-entra-id.js"
        ))
        .unwrap()
    } else {
        js.to_owned()
    };
    let Some(start) = js.find("style: {") else {
        return (None, None);
    };
    let block = &js[start..start + js[start..].find('}').unwrap()];
    let value = |key: &str| {
        let at = block.find(&format!("{key}: \""))?;
        let rest = &block[at + key.len() + 3..];
        Some(rest[..rest.find('"')?].to_owned())
    };
    (value("brandColor").or_else(|| value("bg")), value("text"))
}

// ---------------------------------------------------------------------------------------
// OpenID Connect presets: discovery, a signed ID token, the claims mapping.

/// An OpenID Connect preset.
struct OidcRow {
    id: &'static str,
    settings: &'static [(&'static str, &'static str)],
    /// The issuer the preset uses (and the stand-in's discovery document states).
    issuer: &'static str,
    /// The discovery URL the preset fetches.
    discovery: &'static str,
    /// A configured authorization endpoint (`None`: the discovered one).
    authorize: Option<&'static str>,
    /// The preset's own authorization parameters (decoded query).
    params: &'static str,
    checks: Checks,
    /// A configured token endpoint (`None`: the discovered one).
    token: Option<&'static str>,
    auth: ClientAuth,
    /// The ID token is HS256 with the client secret (LINE), not RS256 from the JWKS.
    hs256: bool,
    /// Extra fields of the token answer (Twitch's scope array).
    token_fields: &'static str,
    /// The brand's claims in the ID token (`sub` …).
    claims: &'static str,
    /// The userinfo answer, for presets that take the profile from userinfo, and the
    /// configured userinfo URL (`None`: the discovered one).
    userinfo: Option<(Option<&'static str>, &'static str)>,
    /// The userinfo answer is a JWT signed by the OP (BankID).
    signed_userinfo: bool,
    user: Expected,
}

/// Defaults for a row: discovery at `<issuer>/.well-known/openid-configuration`, scope
/// `openid profile email`, PKCE, Basic, RS256, claims from the ID token.
const fn oidc_row(
    id: &'static str,
    issuer: &'static str,
    discovery: &'static str,
    claims: &'static str,
    user: Expected,
) -> OidcRow {
    OidcRow {
        id,
        settings: &[],
        issuer,
        discovery,
        authorize: None,
        params: "scope=openid profile email",
        checks: PKCE,
        token: None,
        auth: Basic,
        hs256: false,
        token_fields: "{}",
        claims,
        userinfo: None,
        signed_userinfo: false,
        user,
    }
}

const ADA: &str = r#"{"sub":"u-1","name":"Ada Lovelace","email":"ada@example.com","picture":"https://cdn.example.com/ada.png"}"#;
const ADA_USER: Expected = (
    "u-1",
    Some("Ada Lovelace"),
    Some("ada@example.com"),
    Some("https://cdn.example.com/ada.png"),
);

fn oidc_rows() -> Vec<OidcRow> {
    const ISS: &str = "https://idp.example.com/tenant";
    const ENTRA: &str =
        "https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0";
    const ISS_DISCOVERY: &str = "https://idp.example.com/tenant/.well-known/openid-configuration";
    let tenant = |id, settings| OidcRow {
        settings,
        ..oidc_row(id, ISS, ISS_DISCOVERY, ADA, ADA_USER)
    };
    // Microsoft Entra ID and its deprecated alias, for one tenant.
    let entra = |id| OidcRow {
        settings: &[("issuer", ENTRA)],
        params: "scope=openid profile email User.Read",
        ..oidc_row(
            id,
            ENTRA,
            "https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0/.well-known/openid-configuration",
            r#"{"sub":"AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ","name":"Ada Lovelace","email":"ada@example.com","tid":"9188040d-6c67-4c5b-b112-36a304b66dad"}"#,
            (
                "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ",
                Some("Ada Lovelace"),
                Some("ada@example.com"),
                None,
            ),
        )
    };
    vec![
        OidcRow {
            params: "scope=name email&response_mode=form_post",
            checks: NONCE_STATE,
            auth: Post,
            ..oidc_row(
                "apple",
                "https://appleid.apple.com",
                "https://appleid.apple.com/.well-known/openid-configuration",
                r#"{"sub":"001234.abcd","email":"ada@privaterelay.appleid.com","email_verified":true,"is_private_email":true}"#,
                (
                    "001234.abcd",
                    Some("ada@privaterelay.appleid.com"),
                    Some("ada@privaterelay.appleid.com"),
                    None,
                ),
            )
        },
        tenant("asgardeo", &[("issuer", ISS)]),
        tenant("auth0", &[("issuer", ISS)]),
        tenant("authentik", &[("issuer", ISS)]),
        entra("azure-ad"),
        OidcRow {
            settings: &[("issuer", ISS)],
            ..oidc_row(
                "azure-ad-b2c",
                ISS,
                ISS_DISCOVERY,
                r#"{"sub":"b2c-1","name":null,"preferred_username":"ada","emails":["ada@example.com"],"tfp":"B2C_1_signin"}"#,
                ("b2c-1", Some("ada"), Some("ada@example.com"), None),
            )
        },
        OidcRow {
            params: "ui_locales=no&login_hint=BIS&scope=openid profile email",
            checks: ALL,
            auth: Post,
            signed_userinfo: true,
            userinfo: Some((
                None,
                r#"{"sub":"bid-1","name":"Ada Lovelace","email":"ada@example.no","nnin_altsub":"x"}"#,
            )),
            ..oidc_row(
                "bankid-no",
                "https://auth.bankid.no/auth/realms/prod",
                "https://auth.bankid.no/auth/realms/prod/.well-known/openid-configuration",
                r#"{"sub":"bid-1"}"#,
                ("bid-1", Some("Ada Lovelace"), Some("ada@example.no"), None),
            )
        },
        OidcRow {
            settings: &[("issuer", "https://oauth.battle.net")],
            ..oidc_row(
                "battlenet",
                "https://oauth.battle.net",
                "https://oauth.battle.net/.well-known/openid-configuration",
                r#"{"sub":"100001","battle_tag":"Ada#1234"}"#,
                ("100001", Some("Ada#1234"), None, None),
            )
        },
        OidcRow {
            settings: &[("issuer", ISS)],
            ..oidc_row(
                "beyondidentity",
                ISS,
                ISS_DISCOVERY,
                r#"{"sub":"bi-1","name":"Ada Lovelace","email":"ada@example.com","preferred_username":"ada","picture":"https://x/ada.png"}"#,
                ("bi-1", Some("Ada Lovelace"), Some("ada@example.com"), None),
            )
        },
        tenant("cognito", &[("issuer", ISS)]),
        OidcRow {
            checks: PKCE_STATE,
            ..oidc_row(
                "descope",
                // The project id is the client id.
                "https://api.descope.com/client-id",
                "https://api.descope.com/client-id/.well-known/openid-configuration",
                ADA,
                ADA_USER,
            )
        },
        tenant("duende-identity-server6", &[("issuer", ISS)]),
        OidcRow {
            settings: &[("issuer", "https://app-x.frontegg.com")],
            authorize: Some("https://app-x.frontegg.com/oauth/authorize"),
            token: Some("https://app-x.frontegg.com/oauth/token"),
            ..oidc_row(
                "frontegg",
                "https://app-x.frontegg.com",
                "https://app-x.frontegg.com/oauth/.well-known/openid-configuration",
                ADA,
                ADA_USER,
            )
        },
        OidcRow {
            settings: &[("issuer", "https://auth.example.com"), ("tenant_id", "t-1")],
            params: "scope=openid offline_access email profile&tenantId=t-1",
            checks: PKCE_STATE,
            token: Some("https://auth.example.com/oauth2/token"),
            ..oidc_row(
                "fusionauth",
                "https://auth.example.com",
                "https://auth.example.com/.well-known/openid-configuration?tenantId=t-1",
                r#"{"sub":"fa-1","given_name":"Ada","family_name":"Lovelace","email":"ada@example.com"}"#,
                ("fa-1", Some("Ada Lovelace"), Some("ada@example.com"), None),
            )
        },
        oidc_row(
            "google",
            "https://accounts.google.com",
            "https://accounts.google.com/.well-known/openid-configuration",
            r#"{"sub":"110169484474386276334","name":"Ada Lovelace","email":"ada@gmail.com","email_verified":true,"picture":"https://lh3.googleusercontent.com/a/ada"}"#,
            (
                "110169484474386276334",
                Some("Ada Lovelace"),
                Some("ada@gmail.com"),
                Some("https://lh3.googleusercontent.com/a/ada"),
            ),
        ),
        OidcRow {
            checks: PKCE_STATE,
            ..oidc_row(
                "huggingface",
                "https://huggingface.co",
                "https://huggingface.co/.well-known/openid-configuration",
                r#"{"sub":"64c1","name":"Ada Lovelace","preferred_username":"ada","picture":"https://cdn-avatars.huggingface.co/ada.png","email":"ada@example.com"}"#,
                (
                    "64c1",
                    Some("Ada Lovelace"),
                    Some("ada@example.com"),
                    Some("https://cdn-avatars.huggingface.co/ada.png"),
                ),
            )
        },
        tenant("identity-server4", &[("issuer", ISS)]),
        tenant("keycloak", &[("issuer", ISS)]),
        OidcRow {
            checks: PKCE_STATE,
            ..tenant("kinde", &[("issuer", ISS)])
        },
        OidcRow {
            checks: STATE,
            hs256: true,
            ..oidc_row(
                "line",
                "https://access.line.me",
                "https://access.line.me/.well-known/openid-configuration",
                r#"{"sub":"U4af4980629","name":"Ada","picture":"https://profile.line-scdn.net/ada","email":"ada@example.com"}"#,
                (
                    "U4af4980629",
                    Some("Ada"),
                    Some("ada@example.com"),
                    Some("https://profile.line-scdn.net/ada"),
                ),
            )
        },
        OidcRow {
            checks: STATE,
            auth: Post,
            ..oidc_row(
                "linkedin",
                "https://www.linkedin.com/oauth",
                "https://www.linkedin.com/oauth/.well-known/openid-configuration",
                r#"{"sub":"782bbtaQ","name":"Ada Lovelace","given_name":"Ada","email":"ada@example.com","picture":"https://media.licdn.com/ada"}"#,
                (
                    "782bbtaQ",
                    Some("Ada Lovelace"),
                    Some("ada@example.com"),
                    Some("https://media.licdn.com/ada"),
                ),
            )
        },
        OidcRow {
            settings: &[("issuer", ISS)],
            params: "scope=offline_access openid email profile",
            ..oidc_row(
                "logto",
                ISS,
                ISS_DISCOVERY,
                r#"{"sub":"lg-1","username":"ada","email":"ada@example.com","picture":"https://x/ada.png"}"#,
                (
                    "lg-1",
                    Some("ada"),
                    Some("ada@example.com"),
                    Some("https://x/ada.png"),
                ),
            )
        },
        entra("microsoft-entra-id"),
        OidcRow {
            checks: PKCE_STATE,
            ..tenant("okta", &[("issuer", ISS)])
        },
        tenant("onelogin", &[("issuer", ISS)]),
        tenant("ory-hydra", &[("issuer", ISS)]),
        tenant("passage", &[("issuer", ISS)]),
        tenant("ping-id", &[("issuer", ISS)]),
        OidcRow {
            params: "scope=openid profile",
            checks: PKCE_STATE,
            ..oidc_row(
                "roblox",
                "https://apis.roblox.com/oauth/",
                "https://apis.roblox.com/oauth/.well-known/openid-configuration",
                r#"{"sub":"1516563360","name":"Ada","nickname":"ada","preferred_username":"ada","picture":"https://tr.rbxcdn.com/ada"}"#,
                (
                    "1516563360",
                    Some("Ada"),
                    None,
                    Some("https://tr.rbxcdn.com/ada"),
                ),
            )
        },
        OidcRow {
            checks: ALL,
            userinfo: Some((
                None,
                r#"{"sub":"https://login.salesforce.com/id/00D/005","user_id":"005","name":"Ada Lovelace","email":"ada@example.com","picture":"https://c.salesforce.com/ada"}"#,
            )),
            ..oidc_row(
                "salesforce",
                "https://login.salesforce.com",
                "https://login.salesforce.com/.well-known/openid-configuration",
                r#"{"sub":"https://login.salesforce.com/id/00D/005"}"#,
                (
                    "https://login.salesforce.com/id/00D/005",
                    Some("Ada Lovelace"),
                    Some("ada@example.com"),
                    Some("https://c.salesforce.com/ada"),
                ),
            )
        },
        oidc_row(
            "simplelogin",
            "https://app.simplelogin.io",
            "https://app.simplelogin.io/.well-known/openid-configuration",
            r#"{"sub":"sl-1","name":"Ada","email":"ada@simplelogin.co","avatar_url":"https://simplelogin.io/ada.png"}"#,
            (
                "sl-1",
                Some("Ada"),
                Some("ada@simplelogin.co"),
                Some("https://simplelogin.io/ada.png"),
            ),
        ),
        OidcRow {
            checks: NONCE,
            ..oidc_row(
                "slack",
                "https://slack.com",
                "https://slack.com/.well-known/openid-configuration",
                r#"{"sub":"U0R7JM","https://slack.com/team_id":"T0R7GR","name":"Ada","email":"ada@example.com","picture":"https://secure.gravatar.com/ada.jpg"}"#,
                (
                    "U0R7JM",
                    Some("Ada"),
                    Some("ada@example.com"),
                    Some("https://secure.gravatar.com/ada.jpg"),
                ),
            )
        },
        OidcRow {
            params: r#"scope=openid user:read:email&claims={"id_token":{"email":null,"picture":null,"preferred_username":null}}"#,
            auth: Post,
            token_fields: r#"{"scope":["openid","user:read:email"]}"#,
            ..oidc_row(
                "twitch",
                "https://id.twitch.tv/oauth2",
                "https://id.twitch.tv/oauth2/.well-known/openid-configuration",
                r#"{"sub":"713936733","preferred_username":"ada","email":"ada@example.com","picture":"https://static-cdn.jtvnw.net/ada.png"}"#,
                (
                    "713936733",
                    Some("ada"),
                    Some("ada@example.com"),
                    Some("https://static-cdn.jtvnw.net/ada.png"),
                ),
            )
        },
        OidcRow {
            settings: &[("issuer", ISS)],
            params: "scope=openid email profile&resource=https://idp.example.com/tenant",
            ..oidc_row("united-effects", ISS, ISS_DISCOVERY, ADA, ADA_USER)
        },
        OidcRow {
            params: "scope=openid name email",
            checks: ALL,
            userinfo: Some((
                None,
                r#"{"sub":"c06c4afe-d9e1-4c5d-939a-177d752a0944","name":"Ada Lovelace","email":"ada@example.com","phone_number":"4712345678"}"#,
            )),
            ..oidc_row(
                "vipps",
                "https://api.vipps.no/access-management-1.0/access/",
                "https://api.vipps.no/access-management-1.0/access/.well-known/openid-configuration",
                r#"{"sub":"c06c4afe-d9e1-4c5d-939a-177d752a0944"}"#,
                (
                    "c06c4afe-d9e1-4c5d-939a-177d752a0944",
                    Some("Ada Lovelace"),
                    Some("ada@example.com"),
                    None,
                ),
            )
        },
        tenant("zitadel", &[("issuer", ISS)]),
    ]
}

/// The stand-in OP's signing key (RSA, `RS256`) and its JWK.
struct OpKey {
    encoding: jsonwebtoken::EncodingKey,
    jwk: Value,
    /// The private key (PKCS #8 PEM), for the Auth.js side of the run-time comparison.
    pem: String,
}

fn op_key() -> OpKey {
    let pair = RsaKeyPair::generate(KeySize::Rsa2048).unwrap();
    let pkcs8 = pair.as_der().unwrap();
    let body: Vec<String> = STANDARD
        .encode(pkcs8.as_ref())
        .as_bytes()
        .chunks(64)
        .map(|c| String::from_utf8(c.to_vec()).unwrap())
        .collect();
    let pem = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        body.join("\n")
    );
    let public = PublicKeyComponents::<Vec<u8>>::from(pair.public_key());
    OpKey {
        encoding: jsonwebtoken::EncodingKey::from_rsa_pem(pem.as_bytes()).unwrap(),
        pem: pem.clone(),
        jwk: json!({
            "kty": "RSA", "kid": "k1", "alg": "RS256", "use": "sig",
            "n": URL_SAFE_NO_PAD.encode(&public.n), "e": URL_SAFE_NO_PAD.encode(&public.e),
        }),
    }
}

impl OpKey {
    fn sign(&self, claims: &serde_json::Map<String, Value>) -> String {
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
        header.kid = Some("k1".into());
        jsonwebtoken::encode(&header, claims, &self.encoding).unwrap()
    }
}

/// `https://host` of a URL.
fn origin_of(url: &str) -> String {
    let u = url::Url::parse(url).unwrap();
    format!("{}://{}", u.scheme(), u.host_str().unwrap())
}

/// What the stand-in answers for an OIDC row: its discovery document, JWKS and userinfo
/// (`"<METHOD> <url>"` → body), and how its token answer is made.
struct OidcPlan {
    /// `https://<issuer host>/__op`, where the discovered endpoints live.
    op: String,
    answers: BTreeMap<String, String>,
    token_url: String,
    userinfo_url: String,
    /// The ID token's claims but `iat`, `exp` and `nonce`.
    claims: serde_json::Map<String, Value>,
    /// The token answer but its `id_token`.
    answer: serde_json::Map<String, Value>,
    hs256: bool,
}

fn oidc_plan(row: &OidcRow, key: &OpKey) -> OidcPlan {
    let op = format!("{}/__op", origin_of(row.issuer));
    let token_url = row
        .token
        .map_or_else(|| format!("{op}/token"), str::to_owned);
    let userinfo_url = row
        .userinfo
        .and_then(|(u, _)| u)
        .map_or_else(|| format!("{op}/userinfo"), str::to_owned);
    let alg = if row.hs256 { "HS256" } else { "RS256" };
    let mut answers = BTreeMap::new();
    answers.insert(
        format!("GET {}", row.discovery),
        json!({
            "issuer": row.issuer,
            "authorization_endpoint": format!("{op}/authorize"),
            "token_endpoint": format!("{op}/token"),
            "userinfo_endpoint": format!("{op}/userinfo"),
            "jwks_uri": format!("{op}/jwks"),
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": [alg],
        })
        .to_string(),
    );
    answers.insert(
        format!("GET {op}/jwks"),
        json!({"keys": [key.jwk]}).to_string(),
    );
    if let Some((_, answer)) = row.userinfo {
        let answer = if row.signed_userinfo {
            // A JWT signed by the OP's key, with its issuer and audience.
            let mut claims: serde_json::Map<String, Value> = serde_json::from_str(answer).unwrap();
            claims.insert("iss".into(), json!(row.issuer));
            claims.insert("aud".into(), json!(CLIENT_ID));
            key.sign(&claims)
        } else {
            answer.to_owned()
        };
        answers.insert(format!("GET {userinfo_url}"), answer);
    }
    let mut claims: serde_json::Map<String, Value> = serde_json::from_str(row.claims).unwrap();
    claims.insert("iss".into(), json!(row.issuer));
    claims.insert("aud".into(), json!(CLIENT_ID));
    let mut answer: serde_json::Map<String, Value> = serde_json::from_str(BEARER).unwrap();
    let extra: serde_json::Map<String, Value> = serde_json::from_str(row.token_fields).unwrap();
    answer.extend(extra);
    OidcPlan {
        op,
        answers,
        token_url,
        userinfo_url,
        claims,
        answer,
        hs256: row.hs256,
    }
}

impl OidcPlan {
    /// The token answer with an ID token for this sign-in (`nonce` from its redirect).
    fn token_answer(&self, key: &OpKey, nonce: Option<&str>) -> String {
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        let mut claims = self.claims.clone();
        claims.insert("iat".into(), json!(now));
        claims.insert("exp".into(), json!(now + 300));
        if let Some(n) = nonce {
            claims.insert("nonce".into(), json!(n));
        }
        let id_token = if self.hs256 {
            jsonwebtoken::encode(
                &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
                &claims,
                &jsonwebtoken::EncodingKey::from_secret(CLIENT_SECRET.as_bytes()),
            )
            .unwrap()
        } else {
            key.sign(&claims)
        };
        let mut answer = self.answer.clone();
        answer.insert("id_token".into(), json!(id_token));
        Value::Object(answer).to_string()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_oidc_preset_signs_in_with_its_discovery_and_claims() {
    let stand_in = StandIn::start().await;
    let key = op_key();
    let mut tested = BTreeSet::new();
    for row in oidc_rows() {
        let what = row.id;
        stand_in.reset();
        let (auth, db, provider_id) = app(row.id, row.settings, &stand_in);
        let plan = oidc_plan(&row, &key);
        let (op, token_url, userinfo_url) = (&plan.op, &plan.token_url, &plan.userinfo_url);
        for (k, answer) in &plan.answers {
            let (method, url) = k.split_once(' ').unwrap();
            stand_in.answer(method, url, 200, answer);
        }

        let mut jar = Jar::default();
        let location = start(&auth, &provider_id, &mut jar).await;
        let authorize = row
            .authorize
            .map_or_else(|| format!("{op}/authorize"), str::to_owned);
        let expected = format!("{authorize}?{}", row.params);
        let (state, nonce) =
            check_authorization(what, &location, &expected, row.checks, &provider_id);

        // The ID token for this sign-in, in the token answer.
        stand_in.answer(
            "POST",
            token_url,
            200,
            plan.token_answer(&key, nonce.as_deref()),
        );

        let form_post = row.params.contains("response_mode=form_post");
        let r = callback(&auth, &mut jar, &provider_id, state.as_deref(), form_post).await;
        let received = stand_in.received();
        let urls: Vec<String> = received
            .iter()
            .map(|r| format!("{} {}", r.method, r.url))
            .collect();
        assert_eq!(
            urls.first().map(String::as_str),
            Some(format!("GET {}", row.discovery).as_str()),
            "{what}: {urls:?} {r:?}"
        );
        let token = received
            .iter()
            .find(|r| r.method == Method::POST)
            .unwrap_or_else(|| panic!("{what}: no token request in {urls:?}, answer {r:?}"));
        check_token_request(
            what,
            token,
            token_url,
            row.auth,
            &[],
            row.checks.pkce,
            &provider_id,
        );
        let userinfo_calls = received.iter().filter(|r| &r.url == userinfo_url).count();
        assert_eq!(
            userinfo_calls,
            usize::from(row.userinfo.is_some()),
            "{what}: {urls:?}"
        );
        check_signed_in(what, &auth, &db, &jar, &r, &provider_id, row.user).await;
        tested.insert(row.id);
    }
    let oidc: BTreeSet<&str> = catalog::entries()
        .iter()
        .filter(|e| e_build(e.id).kind() == authcore::types::ProviderType::Oidc)
        .map(|e| e.id)
        .collect();
    let missing: Vec<_> = oidc.difference(&tested).collect();
    assert!(
        missing.is_empty(),
        "OIDC presets without a row: {missing:?}"
    );
}

/// Where an OpenID Connect preset sends, at run time, something else than the installed
/// `@auth/core` (`discovery`, `authorize`, `token`, `userinfo`); as
/// [`RUNTIME_DIFFERENCES`], each with its reason in the catalogue's deviations.
const OIDC_RUNTIME_DIFFERENCES: &[(&str, &[&str])] =
    &[("frontegg", &["discovery"]), ("fusionauth", &["discovery"])];

/// Every OpenID Connect preset's discovery, authorization redirect, token request and
/// userinfo requests against what the installed `@auth/core` sends at run time for the
/// same options, discovery document, keys and ID token claims.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_oidc_preset_sends_what_authjs_sends_at_run_time() {
    let key = op_key();
    let rows = oidc_rows();
    let plans: Vec<OidcPlan> = rows.iter().map(|r| oidc_plan(r, &key)).collect();
    let cases = rows
        .iter()
        .zip(&plans)
        .map(|(row, plan)| {
            let answers: BTreeMap<String, String> = plan
                .answers
                .iter()
                .map(|(k, v)| {
                    let (method, url) = k.split_once(' ').unwrap();
                    (format!("{method} {}", split(url).0), v.clone())
                })
                .collect();
            let mut case = authjs_case(row.id, row.settings, &answers);
            case["formPost"] = json!(row.params.contains("response_mode=form_post"));
            case["idToken"] = json!({
                "url": plan.token_url,
                "answer": plan.answer,
                "claims": plan.claims,
                "alg": if row.hs256 { "HS256" } else { "RS256" },
                "pem": key.pem,
            });
            case
        })
        .collect();
    let authjs = authjs_run(cases);
    let stand_in = StandIn::start().await;
    let mut found: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut report = Vec::new();
    for (row, plan) in rows.iter().zip(&plans) {
        let theirs = &authjs[row.id];
        assert!(theirs.get("error").is_none(), "{}: {theirs}", row.id);
        stand_in.reset();
        for (k, answer) in &plan.answers {
            let (method, url) = k.split_once(' ').unwrap();
            stand_in.answer(method, url, 200, answer);
        }
        let (auth, _, provider_id) = app(row.id, row.settings, &stand_in);
        let mut jar = Jar::default();
        let location = start(&auth, &provider_id, &mut jar).await;
        let query = |name: &str| {
            url::Url::parse(&location)
                .unwrap()
                .query_pairs()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.into_owned())
        };
        let (state, nonce) = (query("state"), query("nonce"));
        stand_in.answer(
            "POST",
            &plan.token_url,
            200,
            plan.token_answer(&key, nonce.as_deref()),
        );
        let form_post = row.params.contains("response_mode=form_post");
        callback(&auth, &mut jar, &provider_id, state.as_deref(), form_post).await;
        let ours = ours_sent(&stand_in);
        let their_requests = theirs_sent(theirs);
        // Per part: the discovery URLs asked (Auth.js asks again at the callback), the
        // token request, the userinfo requests.
        let discovery = |sent: &[Sent]| -> BTreeSet<String> {
            sent.iter()
                .filter(|r| r.url.contains("/.well-known/"))
                .map(|r| r.url.clone())
                .collect()
        };
        let token = |sent: &[Sent]| -> Option<(String, String, BTreeMap<String, String>, Value)> {
            sent.iter().find(|r| r.method == "POST").map(|r| {
                (
                    r.method.clone(),
                    r.url.clone(),
                    r.headers.clone(),
                    r.body.clone(),
                )
            })
        };
        let userinfo = |sent: &[Sent]| -> Vec<(String, String, BTreeMap<String, String>)> {
            sent.iter()
                .filter(|r| split(&r.url).0 == split(&plan.userinfo_url).0)
                .map(|r| (r.method.clone(), r.url.clone(), r.headers.clone()))
                .collect()
        };
        let their_location = theirs["location"].as_str().unwrap_or_default();
        let mut parts = Vec::new();
        let mut differ = |part: &'static str, ours: String, theirs: String| {
            if ours != theirs {
                parts.push(part);
                report.push(format!(
                    "{}: {part}\n  ours    {ours}\n  Auth.js {theirs}",
                    row.id
                ));
            }
        };
        differ(
            "discovery",
            format!("{:?}", discovery(&ours)),
            format!("{:?}", discovery(&their_requests)),
        );
        differ(
            "authorize",
            format!("{:?}", authorize_of(&location)),
            format!("{:?}", authorize_of(their_location)),
        );
        differ(
            "token",
            format!("{:?}", token(&ours)),
            format!("{:?}", token(&their_requests)),
        );
        differ(
            "userinfo",
            format!("{:?}", userinfo(&ours)),
            format!("{:?}", userinfo(&their_requests)),
        );
        if !parts.is_empty() {
            found.insert(row.id, parts);
        }
    }
    assert_listed(&found, OIDC_RUNTIME_DIFFERENCES, &report);
}
