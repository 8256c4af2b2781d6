//! The demo app driven in memory, as a browser would: a cookie jar, requests through the
//! router, the CSRF + credentials sign-in.
#![allow(dead_code, clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::convert::Infallible;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use axum::response::Response;
use serde_json::Value;
use tower::{Service, ServiceExt};

pub const ORIGIN: &str = "http://localhost:3000";

/// The demo server's router with a fixed secret and no database.
pub async fn demo() -> axum::Router {
    authcore_server::ServerConfig::new("a demo test secret, long and random enough")
        .build()
        .await
        .unwrap()
        .router()
}

/// What the tests drive: the router (`Server::router`) or the listener's service
/// (`Server::into_service`).
pub trait App:
    Service<Request<Body>, Response = Response, Error = Infallible> + Clone + Send
{
}

impl<S> App for S where
    S: Service<Request<Body>, Response = Response, Error = Infallible> + Clone + Send
{
}

/// The cookies a browser would keep for `localhost:3000`.
#[derive(Default, Debug)]
pub struct CookieJar(pub BTreeMap<String, String>);

impl CookieJar {
    pub fn store(&mut self, res: &Response) {
        for v in res.headers().get_all(header::SET_COOKIE) {
            let v = v.to_str().unwrap();
            let mut attrs = v.split(';').map(str::trim);
            let (name, value) = attrs.next().unwrap().split_once('=').unwrap();
            let expired = attrs.any(|a| a.eq_ignore_ascii_case("max-age=0"));
            if expired || value.is_empty() {
                self.0.remove(name);
            } else {
                self.0.insert(name.to_owned(), value.to_owned());
            }
        }
    }

    pub fn header(&self) -> String {
        self.0
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    pub fn has(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }
}

pub async fn send(app: &impl App, req: Request<Body>, jar: &mut CookieJar) -> Response {
    let res = app.clone().oneshot(req).await.unwrap();
    jar.store(&res);
    res
}

pub async fn get(app: &impl App, path: &str, jar: &mut CookieJar) -> Response {
    let req = Request::get(format!("{ORIGIN}{path}"))
        .header(header::COOKIE, jar.header())
        .body(Body::empty())
        .unwrap();
    send(app, req, jar).await
}

pub async fn text(res: Response) -> String {
    let bytes = axum::body::to_bytes(res.into_body(), 1 << 20)
        .await
        .unwrap();
    String::from_utf8(bytes.to_vec()).unwrap()
}

pub fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

pub async fn sign_in(
    app: &impl App,
    jar: &mut CookieJar,
    username: &str,
    password: &str,
) -> Response {
    sign_in_with(app, jar, "credentials", username, password).await
}

/// The CSRF token, then `POST /auth/callback/<provider>` with `username` and `password`
/// (callback URL `/protected`).
pub async fn sign_in_with(
    app: &impl App,
    jar: &mut CookieJar,
    provider: &str,
    username: &str,
    password: &str,
) -> Response {
    let res = get(app, "/auth/csrf", jar).await;
    assert_eq!(res.status(), StatusCode::OK);
    let json: Value = serde_json::from_str(&text(res).await).unwrap();
    let csrf = json["csrfToken"].as_str().unwrap().to_owned();
    let body = format!(
        "csrfToken={}&username={}&password={}&callbackUrl={}",
        encode(&csrf),
        encode(username),
        encode(password),
        encode("/protected"),
    );
    let req = Request::post(format!("{ORIGIN}/auth/callback/{provider}"))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::USER_AGENT, "authcore-test-browser/1.0")
        .header(header::COOKIE, jar.header())
        .body(Body::from(body))
        .unwrap();
    send(app, req, jar).await
}
