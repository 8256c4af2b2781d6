//! Drives an axum `Router` with authcore mounted, in memory.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use authcore::providers::{CredentialField, CredentialsProvider};
use authcore::{Auth, AuthConfig, User};
use authcore_axum::{
    AuthDispatch, AuthRouterExt, AuthService, OptionalSession, RequireAuthLayer, Session,
};
use axum::Router;
use axum::body::Body;
use axum::extract::Extension;
use axum::response::Response;
use axum::routing::get;
use http::{Request, StatusCode, header};
use serde_json::Value;
use tower::{Service, ServiceExt};

const ORIGIN: &str = "http://localhost:3000";

fn auth(base_path: &str) -> Auth {
    let config = AuthConfig::builder()
        .secret("a test secret that is long enough to be realistic")
        .trust_host(true)
        .base_path(base_path)
        .provider(
            CredentialsProvider::new()
                .field("username", CredentialField::new("Username"))
                .field(
                    "password",
                    CredentialField::new("Password").input_type("password"),
                )
                .authorize(|credentials, _request| async move {
                    let get = |k: &str| {
                        credentials
                            .get(k)
                            .and_then(Value::as_str)
                            .map(str::to_owned)
                    };
                    let ok = get("username").as_deref() == Some("ada")
                        && get("password").as_deref() == Some("pw");
                    Ok(ok.then(|| {
                        User::with_id("1")
                            .name("Ada Lovelace")
                            .email("ada@example.com")
                    }))
                }),
        )
        .build()
        .unwrap();
    Auth::new(config)
}

fn app(auth: Auth) -> Router {
    let pages =
        Router::new()
            .route(
                "/protected",
                get(|s: Session| async move { format!("hello {}", s.user_name().unwrap()) }),
            )
            .route(
                "/protected/ext",
                get(|Extension(s): Extension<Session>| async move {
                    s.user_email().unwrap().to_owned()
                }),
            )
            .route_layer(RequireAuthLayer::new(auth.clone()));
    let api = Router::new()
        .route(
            "/api/me",
            get(|s: Session| async move { axum::Json(s.into_json()) }),
        )
        .route_layer(RequireAuthLayer::json(auth.clone()));
    Router::new()
        .route(
            "/me",
            get(|s: Session| async move { s.user_name().unwrap().to_owned() }),
        )
        .route(
            "/me/id",
            get(|s: Session| async move { s.user_id().unwrap_or("none").to_owned() }),
        )
        .route(
            "/maybe",
            get(|OptionalSession(s): OptionalSession| async move {
                s.and_then(|s| s.user_name().map(str::to_owned))
                    .unwrap_or_else(|| "anonymous".to_owned())
            }),
        )
        .route(
            "/maybe-option",
            get(|s: Option<Session>, again: OptionalSession| async move {
                assert_eq!(s, again.0);
                s.map_or("anonymous".to_owned(), |s| {
                    s.user_email().unwrap().to_owned()
                })
            }),
        )
        .merge(pages)
        .merge(api)
        .auth_routes(auth.clone())
        .with_state(auth)
}

/// The cookies a browser would keep for `localhost:3000`.
#[derive(Default, Debug)]
struct CookieJar(BTreeMap<String, String>);

impl CookieJar {
    /// Applies the `Set-Cookie` headers of a response.
    fn store(&mut self, res: &Response) {
        for v in res.headers().get_all(header::SET_COOKIE) {
            let v = v.to_str().unwrap();
            let mut attrs = v.split(';').map(str::trim);
            let (name, value) = attrs.next().unwrap().split_once('=').unwrap();
            let expired = attrs.any(|a| {
                let a = a.to_ascii_lowercase();
                a == "max-age=0" || a.starts_with("expires=thu, 01 jan 1970")
            });
            if expired || value.is_empty() {
                self.0.remove(name);
            } else {
                self.0.insert(name.to_owned(), value.to_owned());
            }
        }
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// The `Cookie` header value (`None` when empty).
    fn header(&self) -> Option<String> {
        (!self.0.is_empty()).then(|| {
            self.0
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join("; ")
        })
    }
}

fn get_req(path: &str, jar: &CookieJar) -> Request<Body> {
    let mut b = Request::get(format!("{ORIGIN}{path}"));
    if let Some(c) = jar.header() {
        b = b.header(header::COOKIE, c);
    }
    b.body(Body::empty()).unwrap()
}

fn form_encode(pairs: &[(&str, &str)]) -> String {
    let enc = |s: &str| {
        s.bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                    char::from(b).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect::<String>()
    };
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", enc(k), enc(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// What the tests drive: a `Router`, or an `AuthDispatch` in front of one.
trait App: Service<Request<Body>, Response = Response, Error = Infallible> + Clone + Send {}

impl<S> App for S where
    S: Service<Request<Body>, Response = Response, Error = Infallible> + Clone + Send
{
}

async fn send(app: &impl App, req: Request<Body>, jar: &mut CookieJar) -> Response {
    let res = app.clone().oneshot(req).await.unwrap();
    jar.store(&res);
    res
}

async fn body_string(res: Response) -> String {
    let bytes = axum::body::to_bytes(res.into_body(), 1 << 20)
        .await
        .unwrap();
    String::from_utf8(bytes.to_vec()).unwrap()
}

async fn body_json(res: Response) -> Value {
    serde_json::from_str(&body_string(res).await).unwrap()
}

fn location(res: &Response) -> &str {
    res.headers()[header::LOCATION].to_str().unwrap()
}

/// Signs in through the router (csrf → credentials callback); returns the callback response.
async fn sign_in(app: &impl App, base: &str, jar: &mut CookieJar, password: &str) -> Response {
    let res = send(app, get_req(&format!("{base}/csrf"), jar), jar).await;
    assert_eq!(res.status(), StatusCode::OK);
    let csrf = body_json(res).await["csrfToken"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(jar.get("authjs.csrf-token").is_some(), "{jar:?}");
    let body = form_encode(&[
        ("csrfToken", &csrf),
        ("username", "ada"),
        ("password", password),
        ("callbackUrl", &format!("{ORIGIN}/protected")),
    ]);
    let req = Request::post(format!("{ORIGIN}{base}/callback/credentials"))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::COOKIE, jar.header().unwrap())
        .body(Body::from(body))
        .unwrap();
    send(app, req, jar).await
}

#[tokio::test]
async fn mounts_under_default_base_path() {
    let auth = auth("/auth");
    default_base_path(app(auth.clone())).await;
    default_base_path(AuthDispatch::new(auth.clone(), app(auth))).await;
}

async fn default_base_path(app: impl App) {
    let mut jar = CookieJar::default();
    let res = send(&app, get_req("/auth/providers", &jar), &mut jar).await;
    assert_eq!(res.status(), StatusCode::OK);
    assert!(
        res.headers()[header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    let json = body_json(res).await;
    assert_eq!(json["credentials"]["id"], "credentials");
    assert_eq!(
        json["credentials"]["callbackUrl"],
        "http://localhost:3000/auth/callback/credentials"
    );

    for path in ["/nope", "/api/auth/providers", "/authx/providers"] {
        let res = send(&app, get_req(path, &jar), &mut jar).await;
        assert_eq!(res.status(), StatusCode::NOT_FOUND, "{path}");
    }
    // Anything under the base path, the bare base path included, reaches authcore, which
    // answers unknown actions as Auth.js does.
    for path in ["/auth/nope", "/auth", "/auth/"] {
        let res = send(&app, get_req(path, &jar), &mut jar).await;
        assert_eq!(res.status(), StatusCode::BAD_REQUEST, "{path}");
        assert_eq!(body_json(res).await, "Bad request.", "{path}");
    }
}

#[tokio::test]
async fn mounts_under_custom_base_path() {
    let auth = auth("/api/auth");
    custom_base_path(app(auth.clone())).await;
    custom_base_path(AuthDispatch::new(auth.clone(), app(auth))).await;
}

async fn custom_base_path(app: impl App) {
    let mut jar = CookieJar::default();
    let res = send(&app, get_req("/api/auth/providers", &jar), &mut jar).await;
    assert_eq!(res.status(), StatusCode::OK);
    let json = body_json(res).await;
    assert_eq!(
        json["credentials"]["signinUrl"],
        "http://localhost:3000/api/auth/signin/credentials"
    );
    for path in ["/auth/providers", "/auth", "/api", "/api/"] {
        let res = send(&app, get_req(path, &jar), &mut jar).await;
        assert_eq!(res.status(), StatusCode::NOT_FOUND, "{path}");
    }
    for path in ["/api/auth", "/api/auth/"] {
        let res = send(&app, get_req(path, &jar), &mut jar).await;
        assert_eq!(res.status(), StatusCode::BAD_REQUEST, "{path}");
    }

    // The whole flow works under the custom path, and the guard redirects there.
    let res = send(&app, get_req("/protected?tab=1", &jar), &mut jar).await;
    assert_eq!(res.status(), StatusCode::FOUND);
    assert_eq!(
        location(&res),
        "/api/auth/signin?callbackUrl=%2Fprotected%3Ftab%3D1"
    );
    let res = sign_in(&app, "/api/auth", &mut jar, "pw").await;
    assert_eq!(res.status(), StatusCode::FOUND);
    assert_eq!(location(&res), "http://localhost:3000/protected");
    let res = send(&app, get_req("/protected", &jar), &mut jar).await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(body_string(res).await, "hello Ada Lovelace");
}

/// `AuthDispatch` answers authcore's actions before the router: its layers do not run for
/// them, and everything else (the bare base path and unknown actions included) is the
/// router's.
#[tokio::test]
async fn dispatch_answers_actions_before_the_router() {
    let auth = auth("/auth");
    let routed = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&routed);
    let router = app(auth.clone()).layer(axum::middleware::from_fn(
        move |req: axum::extract::Request, next: axum::middleware::Next| {
            counter.fetch_add(1, Ordering::SeqCst);
            next.run(req)
        },
    ));
    let dispatch = AuthDispatch::new(auth, router);
    let mut jar = CookieJar::default();
    for (path, status, through_router) in [
        ("/auth/providers", StatusCode::OK, false),
        ("/auth/csrf", StatusCode::OK, false),
        ("/auth/session", StatusCode::OK, false),
        ("/auth/signin", StatusCode::OK, false),
        ("/auth/nope", StatusCode::BAD_REQUEST, true),
        ("/auth", StatusCode::BAD_REQUEST, true),
        ("/maybe", StatusCode::OK, true),
        ("/nope", StatusCode::NOT_FOUND, true),
    ] {
        let before = routed.load(Ordering::SeqCst);
        let res = send(&dispatch, get_req(path, &jar), &mut jar).await;
        assert_eq!(res.status(), status, "{path}");
        let went_through = routed.load(Ordering::SeqCst) > before;
        assert_eq!(went_through, through_router, "{path}");
    }
    // A whole sign-in through the dispatch, then a guarded page of the router.
    let res = sign_in(&dispatch, "/auth", &mut jar, "pw").await;
    assert_eq!(location(&res), "http://localhost:3000/protected");
    let res = send(&dispatch, get_req("/protected", &jar), &mut jar).await;
    assert_eq!(body_string(res).await, "hello Ada Lovelace");
}

#[tokio::test]
async fn nest_service_keeps_the_full_path() {
    let auth = auth("/api/auth");
    let app = Router::new().nest_service("/api/auth", AuthService::new(auth));
    let mut jar = CookieJar::default();
    let res = send(&app, get_req("/api/auth/providers", &jar), &mut jar).await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(body_json(res).await["credentials"]["type"], "credentials");
}

#[tokio::test]
async fn credentials_sign_in_flow() {
    let app = app(auth("/auth"));
    let mut jar = CookieJar::default();

    // Anonymous: the guard redirects, the JSON guard and the extractor answer 401.
    let res = send(&app, get_req("/protected", &jar), &mut jar).await;
    assert_eq!(res.status(), StatusCode::FOUND);
    assert_eq!(location(&res), "/auth/signin?callbackUrl=%2Fprotected");
    for path in ["/api/me", "/me"] {
        let res = send(&app, get_req(path, &jar), &mut jar).await;
        assert_eq!(res.status(), StatusCode::UNAUTHORIZED, "{path}");
        assert_eq!(res.headers()[header::CONTENT_TYPE], "application/json");
        assert_eq!(
            body_json(res).await,
            serde_json::json!({"error": "SessionRequired"})
        );
    }
    // Paths no route matches are still 404, not a redirect (route_layer).
    let res = send(&app, get_req("/protected/nope", &jar), &mut jar).await;
    assert_eq!(res.status(), StatusCode::NOT_FOUND);

    // Sign in.
    let res = sign_in(&app, "/auth", &mut jar, "pw").await;
    assert_eq!(res.status(), StatusCode::FOUND);
    assert_eq!(location(&res), "http://localhost:3000/protected");
    assert!(jar.get("authjs.session-token").is_some(), "{jar:?}");

    // Signed in: everything sees the user.
    let before = jar.get("authjs.session-token").unwrap().to_owned();
    let res = send(&app, get_req("/protected", &jar), &mut jar).await;
    assert_eq!(res.status(), StatusCode::OK);
    // The guard re-sets the refreshed session cookie, so sessions keep rolling.
    let refreshed: Vec<_> = res
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .collect();
    assert_eq!(refreshed.len(), 1, "{refreshed:?}");
    assert!(refreshed[0].starts_with("authjs.session-token=ey"));
    assert_ne!(jar.get("authjs.session-token").unwrap(), before);
    assert_eq!(body_string(res).await, "hello Ada Lovelace");
    let res = send(&app, get_req("/protected/ext", &jar), &mut jar).await;
    assert_eq!(body_string(res).await, "ada@example.com");
    // The user id for the handler's own queries: the JWT's `sub`, `authorize`'s id.
    let res = send(&app, get_req("/me/id", &jar), &mut jar).await;
    assert_eq!(body_string(res).await, "1");
    let res = send(&app, get_req("/me", &jar), &mut jar).await;
    assert_eq!(body_string(res).await, "Ada Lovelace");
    let res = send(&app, get_req("/api/me", &jar), &mut jar).await;
    assert_eq!(res.status(), StatusCode::OK);
    let json = body_json(res).await;
    assert_eq!(json["user"]["name"], "Ada Lovelace");
    assert_eq!(json["user"]["email"], "ada@example.com");
    assert!(json["expires"].is_string());

    // The session endpoint agrees.
    let res = send(&app, get_req("/auth/session", &jar), &mut jar).await;
    assert_eq!(body_json(res).await["user"]["name"], "Ada Lovelace");

    // Sign out: POST /auth/signout with the CSRF token clears the session cookie.
    let res = send(&app, get_req("/auth/csrf", &jar), &mut jar).await;
    let csrf = body_json(res).await["csrfToken"]
        .as_str()
        .unwrap()
        .to_owned();
    let req = Request::post(format!("{ORIGIN}/auth/signout"))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::COOKIE, jar.header().unwrap())
        .body(Body::from(form_encode(&[("csrfToken", &csrf)])))
        .unwrap();
    let res = send(&app, req, &mut jar).await;
    assert_eq!(res.status(), StatusCode::FOUND);
    assert!(jar.get("authjs.session-token").is_none(), "{jar:?}");
    let res = send(&app, get_req("/protected", &jar), &mut jar).await;
    assert_eq!(res.status(), StatusCode::FOUND);
}

/// Without organizations there are no API keys: an `Authorization: Bearer ak_…` header
/// is not read, and the layers decide by the session cookie alone, as before.
#[tokio::test]
async fn bearer_keys_are_not_read_without_organizations() {
    let app = app(auth("/auth"));
    let mut jar = CookieJar::default();
    sign_in(&app, "/auth", &mut jar, "pw").await;
    let bearer = format!("Bearer ak_{}_{}", "0".repeat(24), "a".repeat(43));
    for (path, signed_in, status) in [
        ("/api/me", true, StatusCode::OK),
        ("/protected", true, StatusCode::OK),
        ("/api/me", false, StatusCode::UNAUTHORIZED),
        ("/protected", false, StatusCode::FOUND),
    ] {
        let jar = if signed_in {
            &jar
        } else {
            &CookieJar::default()
        };
        let mut req = get_req(path, jar);
        req.headers_mut()
            .insert(header::AUTHORIZATION, bearer.parse().unwrap());
        let res = app.clone().oneshot(req).await.unwrap();
        assert_eq!(res.status(), status, "{path} signed in: {signed_in}");
        assert!(res.headers().get(header::WWW_AUTHENTICATE).is_none());
    }
}

#[tokio::test]
async fn wrong_password_is_refused() {
    let app = app(auth("/auth"));
    let mut jar = CookieJar::default();
    let res = sign_in(&app, "/auth", &mut jar, "wrong").await;
    assert_eq!(res.status(), StatusCode::FOUND);
    assert_eq!(
        location(&res),
        "http://localhost:3000/auth/signin?error=CredentialsSignin&code=credentials"
    );
    assert!(jar.get("authjs.session-token").is_none());
    let res = send(&app, get_req("/me", &jar), &mut jar).await;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn optional_session() {
    let app = app(auth("/auth"));
    let mut jar = CookieJar::default();
    for path in ["/maybe", "/maybe-option"] {
        let res = send(&app, get_req(path, &jar), &mut jar).await;
        assert_eq!(res.status(), StatusCode::OK);
        assert_eq!(body_string(res).await, "anonymous");
    }
    // A forged session cookie is no session.
    jar.0
        .insert("authjs.session-token".into(), "not-a-jwe".into());
    let res = send(&app, get_req("/maybe", &jar), &mut jar).await;
    assert_eq!(body_string(res).await, "anonymous");
    jar.0.clear();

    let res = sign_in(&app, "/auth", &mut jar, "pw").await;
    assert_eq!(res.status(), StatusCode::FOUND);
    let res = send(&app, get_req("/maybe", &jar), &mut jar).await;
    assert_eq!(body_string(res).await, "Ada Lovelace");
    let res = send(&app, get_req("/maybe-option", &jar), &mut jar).await;
    assert_eq!(body_string(res).await, "ada@example.com");
}

#[tokio::test]
async fn session_accessors() {
    let s = Session::from_json(serde_json::json!({
        "user": {"name": "Ada", "email": "ada@example.com", "image": null, "id": "1"},
        "expires": "2030-01-01T00:00:00.000Z",
        "role": "admin"
    }));
    assert_eq!(s.user_name(), Some("Ada"));
    assert_eq!(s.user_email(), Some("ada@example.com"));
    assert_eq!(s.user_image(), None);
    assert_eq!(s.user_str("id"), Some("1"));
    assert_eq!(s.expires(), Some("2030-01-01T00:00:00.000Z"));
    assert_eq!(s.get("role"), Some(&Value::from("admin")));
    assert_eq!(s.json()["user"]["name"], "Ada");
    assert_eq!(s.into_json()["role"], "admin");
}

/// The account routes as `account_routes` mounts them: the session from the cookie, every
/// change refused without the CSRF token of `/auth/csrf` (before anything is called), a
/// wrong method or an oversize body refused as JSON. (Without an adapter the calls that pass
/// end in `NoAdapter`: the account functions themselves are tested with the server.)
#[tokio::test]
async fn account_routes_check_the_session_and_csrf() {
    let auth = auth("/auth");
    let app = app(auth.clone()).account_routes(auth);
    let mut jar = CookieJar::default();
    let post = |path: &str, body: String, jar: &CookieJar| {
        let mut b = Request::post(format!("{ORIGIN}{path}"))
            .header(header::CONTENT_TYPE, "application/json");
        if let Some(c) = jar.header() {
            b = b.header(header::COOKIE, c);
        }
        b.body(Body::from(body)).unwrap()
    };

    let res = send(&app, get_req("/account", &jar), &mut jar).await;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        res.headers()[header::CACHE_CONTROL],
        "private, no-cache, no-store"
    );
    assert_eq!(body_json(res).await["error"], "SessionRequired");

    sign_in(&app, "/auth", &mut jar, "pw").await;
    let res = send(&app, get_req("/account", &jar), &mut jar).await;
    assert_eq!(res.status(), StatusCode::NOT_IMPLEMENTED);
    assert_eq!(body_json(res).await["error"], "NoAdapter");

    let csrf =
        body_json(send(&app, get_req("/auth/csrf", &jar), &mut jar).await).await["csrfToken"]
            .as_str()
            .unwrap()
            .to_owned();
    for (body, status, error) in [
        ("{}".to_owned(), StatusCode::FORBIDDEN, "MissingCSRF"),
        (
            r#"{"csrfToken":"forged"}"#.to_owned(),
            StatusCode::FORBIDDEN,
            "MissingCSRF",
        ),
        (
            "not json".to_owned(),
            StatusCode::BAD_REQUEST,
            "InvalidRequest",
        ),
        (
            format!(r#"{{"csrfToken":"{csrf}"}}"#),
            StatusCode::NOT_IMPLEMENTED,
            "NoAdapter",
        ),
    ] {
        let res = send(&app, post("/account/delete", body.clone(), &jar), &mut jar).await;
        assert_eq!(res.status(), status, "{body}");
        assert_eq!(body_json(res).await["error"], error, "{body}");
    }
    // Signed out, a valid token is no way in.
    let mut stranger = CookieJar::default();
    let token = body_json(send(&app, get_req("/auth/csrf", &stranger), &mut stranger).await).await
        ["csrfToken"]
        .as_str()
        .unwrap()
        .to_owned();
    let body = format!(r#"{{"csrfToken":"{token}"}}"#);
    let res = send(
        &app,
        post("/account/delete", body, &stranger),
        &mut stranger,
    )
    .await;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);

    let res = send(&app, get_req("/account/delete", &jar), &mut jar).await;
    assert_eq!(res.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(body_json(res).await["error"], "MethodNotAllowed");
    let huge = format!(
        r#"{{"csrfToken":"{csrf}","pad":"{}"}}"#,
        "x".repeat(1 << 20)
    );
    let res = send(&app, post("/account/delete", huge, &jar), &mut jar).await;
    assert_eq!(res.status(), StatusCode::PAYLOAD_TOO_LARGE);
}

/// Step-up: `two_factors()` and `max_age()` let through only sessions whose sign-in shows
/// them (the JWT's `amr` / `auth_time`); others are sent to sign in again, as anonymous
/// requests are (`401` for the JSON layer), except where two factors are asked with second
/// factors off: nobody can prove them, and the answer is `403`.
#[tokio::test]
async fn step_up_requires_two_factors_or_a_recent_sign_in() {
    use std::time::Duration;
    let auth = auth("/auth");
    let hour = Duration::from_secs(3600);
    let ok = || get(|s: Session| async move { s.user_id().unwrap_or_default().to_owned() });
    let app = Router::new()
        .route("/mfa", ok())
        .route_layer(RequireAuthLayer::new(auth.clone()).two_factors())
        .merge(
            Router::new()
                .route("/recent", ok())
                .route_layer(RequireAuthLayer::new(auth.clone()).max_age(hour)),
        )
        .merge(
            Router::new()
                .route("/api/mfa", ok())
                .route_layer(RequireAuthLayer::json(auth.clone()).two_factors()),
        )
        .auth_routes(auth.clone())
        .with_state(auth.clone());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let jar_with = |claims: Value| {
        let token = auth
            .config()
            .jwt()
            .encode(claims.as_object().unwrap(), "authjs.session-token", 3600)
            .unwrap();
        let mut jar = CookieJar::default();
        jar.0.insert("authjs.session-token".into(), token);
        jar
    };
    let password_only = jar_with(serde_json::json!({"sub": "1", "amr": ["pwd"], "auth_time": now}));
    let two_factors_old = jar_with(
        serde_json::json!({"sub": "1", "amr": ["pwd", "otp", "mfa"], "auth_time": now - 7200}),
    );
    let unrecorded = jar_with(serde_json::json!({"sub": "1"}));
    for (jar, path, status) in [
        (&password_only, "/mfa", StatusCode::FORBIDDEN),
        (&password_only, "/recent", StatusCode::OK),
        (&two_factors_old, "/mfa", StatusCode::OK),
        (&two_factors_old, "/recent", StatusCode::FOUND),
        (&unrecorded, "/mfa", StatusCode::FORBIDDEN),
        (&unrecorded, "/recent", StatusCode::FOUND),
    ] {
        let res = app.clone().oneshot(get_req(path, jar)).await.unwrap();
        assert_eq!(res.status(), status, "{path}");
        match status {
            StatusCode::OK => assert_eq!(body_string(res).await, "1"),
            StatusCode::FOUND => assert_eq!(
                location(&res),
                format!("/auth/signin?callbackUrl={}", path.replace('/', "%2F"))
            ),
            _ => assert!(body_string(res).await.contains("/auth/account")),
        }
    }
    let res = app
        .clone()
        .oneshot(get_req("/api/mfa", &password_only))
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    assert_eq!(body_json(res).await["error"], "TwoFactorRequired");
}

/// `two_factors()` with second factors on: a user without a second factor cannot prove two
/// factors by signing in again, so the answer is `403` (a page linking to the account page,
/// or JSON for API clients) rather than a loop through the sign-in page; a user with one
/// whose session did not prove it is sent to sign in again (step-up); a session that proved
/// two factors passes.
#[tokio::test]
async fn two_factors_sends_users_without_a_second_factor_to_enrol() {
    use authcore::adapter::{Adapter, MemoryAdapter, NewUser};
    let db = MemoryAdapter::new();
    let mut ids = Vec::new();
    for email in ["ada@example.com", "bob@example.com"] {
        let user = db
            .create_user(NewUser {
                email: Some(email.into()),
                ..NewUser::default()
            })
            .await
            .unwrap();
        ids.push(user.id);
    }
    let (ada, bob) = (ids[0].clone(), ids[1].clone());
    // Bob has a passkey: a second factor.
    db.create_authenticator(authcore::Authenticator {
        credential_id: "Y3JlZA==".into(),
        user_id: Some(bob.clone()),
        provider_account_id: "Y3JlZA==".into(),
        counter: 0,
        credential_backed_up: false,
        credential_public_key: "a2V5".into(),
        transports: None,
        credential_device_type: "singleDevice".into(),
        name: None,
    })
    .await
    .unwrap();
    let auth = Auth::new(
        AuthConfig::builder()
            .secret("a test secret that is long enough to be realistic")
            .trust_host(true)
            .provider(CredentialsProvider::new().authorize(|_, _| async { Ok(None) }))
            .adapter(db.clone())
            .session_strategy(authcore::SessionStrategy::Jwt)
            .two_factor(authcore::two_factor::TwoFactorOptions::default())
            .build()
            .unwrap(),
    );
    let ok = || get(|s: Session| async move { s.user_id().unwrap_or_default().to_owned() });
    let app = Router::new()
        .route("/mfa", ok())
        .route_layer(RequireAuthLayer::new(auth.clone()).two_factors())
        .merge(
            Router::new()
                .route("/api/mfa", ok())
                .route_layer(RequireAuthLayer::json(auth.clone()).two_factors()),
        )
        .auth_routes(auth.clone())
        .with_state(auth.clone());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let jar_with = |sub: &str, amr: &[&str]| {
        let claims = serde_json::json!({"sub": sub, "amr": amr, "auth_time": now});
        let token = auth
            .config()
            .jwt()
            .encode(claims.as_object().unwrap(), "authjs.session-token", 3600)
            .unwrap();
        let mut jar = CookieJar::default();
        jar.0.insert("authjs.session-token".into(), token);
        jar
    };
    let with_accept = |path: &str, jar: &CookieJar, accept: &str| {
        let mut req = get_req(path, jar);
        req.headers_mut()
            .insert(header::ACCEPT, accept.parse().unwrap());
        req
    };
    let ada_jar = jar_with(&ada, &["pwd"]);

    // Ada has no second factor: a page for browsers, JSON for API clients.
    let res = app
        .clone()
        .oneshot(with_accept("/mfa?tab=2", &ada_jar, "text/html,*/*;q=0.8"))
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        res.headers()[header::CONTENT_TYPE],
        "text/html; charset=utf-8"
    );
    let page = body_string(res).await;
    assert!(page.contains("second factor"), "{page}");
    assert!(page.contains(r#"href="/auth/account""#), "{page}");
    assert!(
        page.contains(r#"href="/auth/signin?callbackUrl=%2Fmfa%3Ftab%3D2""#),
        "{page}"
    );
    for (path, accept) in [
        ("/mfa", Some("application/json")),
        ("/api/mfa", None),
        ("/api/mfa", Some("text/html")),
    ] {
        let req = match accept {
            Some(a) => with_accept(path, &ada_jar, a),
            None => get_req(path, &ada_jar),
        };
        let res = app.clone().oneshot(req).await.unwrap();
        assert_eq!(res.status(), StatusCode::FORBIDDEN, "{path} {accept:?}");
        assert_eq!(res.headers()[header::CONTENT_TYPE], "application/json");
        assert_eq!(
            body_json(res).await,
            serde_json::json!({"error": "TwoFactorRequired", "enrol": "/auth/account"})
        );
    }

    // Bob has a passkey but signed in with a password: sign in again (step-up).
    let bob_jar = jar_with(&bob, &["pwd"]);
    let res = app
        .clone()
        .oneshot(get_req("/mfa", &bob_jar))
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::FOUND);
    assert_eq!(location(&res), "/auth/signin?callbackUrl=%2Fmfa");
    let res = app
        .clone()
        .oneshot(get_req("/api/mfa", &bob_jar))
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(body_json(res).await["error"], "SessionRequired");

    // A session that proved two factors passes.
    let bob_mfa = jar_with(&bob, &["hwk", "user", "mfa"]);
    let res = app
        .clone()
        .oneshot(get_req("/mfa", &bob_mfa))
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(body_string(res).await, bob);
}
