//! Browser-like helpers for OAuth end-to-end tests: a cookie jar for the app, sign-in
//! start, callback delivery, session reads and the common assertions.
#![allow(dead_code, clippy::unwrap_used)]

use std::collections::BTreeMap;

use authcore::Auth;
use bytes::Bytes;
use http::Request;
use http_body_util::{BodyExt, Full};
use serde_json::Value;

use super::oidc_provider::{Callback, OidcProvider};

pub const APP: &str = "http://localhost:3000";

/// A minimal browser cookie jar for the app's cookies.
#[derive(Default, Debug, Clone)]
pub struct Jar(pub BTreeMap<String, String>);

impl Jar {
    pub fn header(&self) -> String {
        self.0
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }
    pub fn absorb(&mut self, r: &Resp) {
        for c in &r.set_cookies {
            let (nv, attrs) = c.split_once(';').unwrap_or((c, ""));
            let (n, v) = nv.split_once('=').unwrap();
            if attrs.contains("Max-Age=0") {
                self.0.remove(n);
            } else {
                self.0.insert(n.to_owned(), v.to_owned());
            }
        }
    }
}

#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub location: Option<String>,
    pub set_cookies: Vec<String>,
    pub body: Bytes,
}

pub async fn send(auth: &Auth, req: Request<Full<Bytes>>) -> Resp {
    let r = auth.handle(req).await;
    let status = r.status().as_u16();
    let location = r
        .headers()
        .get("location")
        .map(|v| v.to_str().unwrap().to_owned());
    let set_cookies = r
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .collect();
    let body = r.into_body().collect().await.unwrap().to_bytes();
    Resp {
        status,
        location,
        set_cookies,
        body,
    }
}

/// CSRF + POST /auth/signin/:id; returns the authorization URL.
pub async fn start(auth: &Auth, id: &str, jar: &mut Jar) -> String {
    let r = send(
        auth,
        Request::get(format!("{APP}/auth/csrf"))
            .body(Full::default())
            .unwrap(),
    )
    .await;
    jar.absorb(&r);
    let token: Value = serde_json::from_slice(&r.body).unwrap();
    let body = format!(
        "csrfToken={}&callbackUrl=%2Fdashboard",
        token["csrfToken"].as_str().unwrap()
    );
    let r = send(
        auth,
        Request::post(format!("{APP}/auth/signin/{id}"))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("cookie", jar.header())
            .body(Full::new(body.into()))
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 302, "{:?}", r);
    jar.absorb(&r);
    r.location.unwrap()
}

/// Delivers the provider's callback to the app.
pub async fn deliver(auth: &Auth, cb: &Callback, jar: &mut Jar) -> Resp {
    let r = match cb {
        Callback::Query(url) => {
            send(
                auth,
                Request::get(url.as_str())
                    .header("cookie", jar.header())
                    .body(Full::default())
                    .unwrap(),
            )
            .await
        }
        Callback::FormPost { action, fields } => {
            let body = form_urlencoded::Serializer::new(String::new())
                .extend_pairs(fields)
                .finish();
            send(
                auth,
                Request::post(action.as_str())
                    .header("content-type", "application/x-www-form-urlencoded")
                    .header("cookie", jar.header())
                    .body(Full::new(body.into()))
                    .unwrap(),
            )
            .await
        }
    };
    jar.absorb(&r);
    r
}

pub async fn sign_in(auth: &Auth, op: &OidcProvider, id: &str, jar: &mut Jar) -> Resp {
    let url = start(auth, id, jar).await;
    let cb = op
        .authorize(&url, &format!("{APP}/auth/callback/{id}"))
        .await;
    deliver(auth, &cb, jar).await
}

pub async fn session(auth: &Auth, jar: &Jar) -> Value {
    let r = send(
        auth,
        Request::get(format!("{APP}/auth/session"))
            .header("cookie", jar.header())
            .body(Full::default())
            .unwrap(),
    )
    .await;
    serde_json::from_slice(&r.body).unwrap()
}

pub fn assert_signed_in(r: &Resp, jar: &Jar) {
    assert_eq!(r.status, 302, "{r:?}");
    assert_eq!(
        r.location.as_deref(),
        Some("http://localhost:3000/dashboard")
    );
    assert!(jar.0.contains_key("authjs.session-token"), "{jar:?}");
    // Check cookies are cleared on success.
    for c in ["authjs.state", "authjs.pkce.code_verifier", "authjs.nonce"] {
        assert!(!jar.0.contains_key(c), "{c} left behind: {jar:?}");
    }
}

pub fn assert_refused(r: &Resp, jar: &Jar, error: &str) {
    assert_eq!(r.status, 302, "{r:?}");
    let loc = r.location.as_deref().unwrap();
    assert!(loc.contains(&format!("error={error}")), "{loc}");
    assert!(!jar.0.contains_key("authjs.session-token"), "{jar:?}");
    assert!(
        r.set_cookies
            .iter()
            .all(|c| !c.starts_with("authjs.session-token"))
    );
}
