//! authcore-actix through actix-web's test server: the routes (providers, CSRF, a
//! credentials sign-in), the `Session` / `OptionalSession` extractors, and `RequireAuth`
//! (redirect with `callbackUrl`, `401` JSON, the refreshed cookie on the answer).
#![allow(clippy::unwrap_used)]

use actix_web::dev::ServiceResponse;
use actix_web::{App, test, web};
use authcore::providers::{CredentialField, CredentialsProvider};
use authcore::{Auth, AuthConfig, User};
use authcore_actix::{OptionalSession, RequireAuth, Session, auth_routes};
use serde_json::Value;

const SECRET: &str = "actix-test-secret-0123456789abcdef";

fn auth() -> Auth {
    Auth::new(
        AuthConfig::builder()
            .secret(SECRET)
            .trust_host(true)
            .provider(
                CredentialsProvider::new()
                    .field("username", CredentialField::new("Username"))
                    .authorize(|c, _| async move {
                        let name = c.get("username").and_then(|v| v.as_str());
                        Ok((name == Some("ada"))
                            .then(|| User::with_id("1").name("Ada").email("ada@example.com")))
                    }),
            )
            .build()
            .unwrap(),
    )
}

async fn home(OptionalSession(session): OptionalSession) -> String {
    match session {
        Some(s) => format!("hello {}", s.user_name().unwrap_or("?")),
        None => "anonymous".to_owned(),
    }
}

async fn me(session: Session) -> String {
    session.user_email().unwrap_or("?").to_owned()
}

macro_rules! app {
    ($auth:expr) => {
        test::init_service(
            App::new()
                .app_data(web::Data::new($auth.clone()))
                .service(auth_routes($auth.clone()))
                .service(
                    web::scope("/private")
                        .wrap(RequireAuth::new($auth.clone()))
                        .route("/page", web::get().to(me)),
                )
                .service(
                    web::scope("/api")
                        .wrap(RequireAuth::json($auth.clone()))
                        .route("/me", web::get().to(me)),
                )
                .route("/me", web::get().to(me))
                .route("/", web::get().to(home)),
        )
        .await
    };
}

fn header(res: &ServiceResponse, name: &str) -> Option<String> {
    res.headers()
        .get(name)
        .map(|v| v.to_str().unwrap().to_owned())
}

/// `name=value` of the session cookie the answer sets.
fn session_cookie<B>(res: &ServiceResponse<B>) -> Option<String> {
    res.headers().get_all("set-cookie").find_map(|v| {
        let v = v.to_str().unwrap();
        v.starts_with("authjs.session-token=")
            .then(|| v.split(';').next().unwrap().to_owned())
    })
}

async fn body(res: ServiceResponse) -> String {
    String::from_utf8(test::read_body(res).await.to_vec()).unwrap()
}

/// A credentials sign-in through the routes: the session cookie (`name=value`), the CSRF
/// cookie and the CSRF token it was made with.
struct SignedIn {
    session: String,
    csrf_cookie: String,
    token: String,
}

/// Signs `ada` in: the CSRF pair from `/auth/csrf`, then the credentials callback.
async fn sign_in<S, B>(app: &S) -> SignedIn
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    let res =
        test::call_service(app, test::TestRequest::get().uri("/auth/csrf").to_request()).await;
    let csrf_cookie = res
        .headers()
        .get_all("set-cookie")
        .find_map(|v| v.to_str().unwrap().split(';').next().map(str::to_owned))
        .unwrap();
    let token: Value = serde_json::from_slice(&test::read_body(res).await).unwrap();
    let token = token["csrfToken"].as_str().unwrap().to_owned();
    let res = test::call_service(
        app,
        test::TestRequest::post()
            .uri("/auth/callback/credentials")
            .insert_header(("cookie", csrf_cookie.clone()))
            .insert_header(("content-type", "application/x-www-form-urlencoded"))
            .set_payload(format!("csrfToken={token}&username=ada"))
            .to_request(),
    )
    .await;
    assert_eq!(res.status(), 302);
    SignedIn {
        session: session_cookie(&res).expect("signed in"),
        csrf_cookie,
        token,
    }
}

#[actix_web::test]
async fn routes_extractors_and_middleware() {
    let auth = auth();
    let app = app!(auth);

    // The routes: providers, then a credentials sign-in with the CSRF pair.
    let res = test::call_service(
        &app,
        test::TestRequest::get().uri("/auth/providers").to_request(),
    )
    .await;
    assert_eq!(res.status(), 200);
    let providers: Value = serde_json::from_str(&body(res).await).unwrap();
    assert_eq!(providers["credentials"]["type"], "credentials");

    let SignedIn {
        session: cookie, ..
    } = sign_in(&app).await;

    // The extractors.
    let get = |path: &str, cookie: Option<&str>| {
        let mut r = test::TestRequest::get().uri(path);
        if let Some(c) = cookie {
            r = r.insert_header(("cookie", c.to_owned()));
        }
        r.to_request()
    };
    assert_eq!(
        body(test::call_service(&app, get("/", None)).await).await,
        "anonymous"
    );
    assert_eq!(
        body(test::call_service(&app, get("/", Some(&cookie))).await).await,
        "hello Ada"
    );
    let res = test::call_service(&app, get("/me", None)).await;
    assert_eq!(res.status(), 401);
    assert_eq!(body(res).await, r#"{"error":"SessionRequired"}"#);
    assert_eq!(
        body(test::call_service(&app, get("/me", Some(&cookie))).await).await,
        "ada@example.com"
    );

    // RequireAuth: a redirect to sign-in and back, 401 for the JSON scope, the refreshed
    // cookie for signed-in users.
    let res = test::call_service(&app, get("/private/page?tab=2", None)).await;
    assert_eq!(res.status(), 302);
    assert_eq!(
        header(&res, "location").as_deref(),
        Some("/auth/signin?callbackUrl=%2Fprivate%2Fpage%3Ftab%3D2")
    );
    let res = test::call_service(&app, get("/api/me", None)).await;
    assert_eq!(res.status(), 401);
    let res = test::call_service(&app, get("/private/page", Some(&cookie))).await;
    assert_eq!(res.status(), 200);
    assert!(
        session_cookie(&res).is_some(),
        "the session cookie is refreshed"
    );
    assert_eq!(body(res).await, "ada@example.com");

    // A garbage cookie is nobody, and the middleware clears it.
    let res = test::call_service(
        &app,
        get("/private/page", Some("authjs.session-token=garbage")),
    )
    .await;
    assert_eq!(res.status(), 302);
    assert!(session_cookie(&res).is_some_and(|c| c == "authjs.session-token="));
}

/// The account routes as `account_routes` registers them: the session from the cookie, a
/// change refused without the CSRF token of `/auth/csrf`, a wrong method refused as JSON.
/// (Without an adapter the calls that pass end in `NoAdapter`: the account functions
/// themselves are tested with the server.)
#[actix_web::test]
async fn account_routes_check_the_session_and_csrf() {
    let auth = auth();
    let app = test::init_service(
        App::new()
            .service(auth_routes(auth.clone()))
            .configure(authcore_actix::account_routes(auth.clone())),
    )
    .await;
    let call = |req: test::TestRequest| {
        let app = &app;
        async move {
            let res = test::call_service(app, req.to_request()).await;
            let status = res.status().as_u16();
            let cache = header(&res, "cache-control");
            let json: Value = serde_json::from_str(&body(res).await).unwrap();
            (
                status,
                json["error"].as_str().unwrap_or_default().to_owned(),
                cache,
            )
        }
    };
    let (status, error, cache) = call(test::TestRequest::get().uri("/account")).await;
    assert_eq!((status, error.as_str()), (401, "SessionRequired"));
    assert_eq!(cache.as_deref(), Some("private, no-cache, no-store"));

    let SignedIn {
        session,
        csrf_cookie,
        token,
    } = sign_in(&app).await;
    let cookies = format!("{session}; {csrf_cookie}");

    let (status, error, _) = call(
        test::TestRequest::get()
            .uri("/account")
            .insert_header(("cookie", cookies.clone())),
    )
    .await;
    assert_eq!((status, error.as_str()), (501, "NoAdapter"));
    for (body, expected) in [
        ("{}".to_owned(), (403, "MissingCSRF")),
        (r#"{"csrfToken":"forged"}"#.to_owned(), (403, "MissingCSRF")),
        (format!(r#"{{"csrfToken":"{token}"}}"#), (501, "NoAdapter")),
    ] {
        let (status, error, _) = call(
            test::TestRequest::post()
                .uri("/account/sessions/revoke-others")
                .insert_header(("cookie", cookies.clone()))
                .insert_header(("content-type", "application/json"))
                .set_payload(body.clone()),
        )
        .await;
        assert_eq!((status, error.as_str()), expected, "{body}");
    }
    // The token without the session: no way in.
    let (status, error, _) = call(
        test::TestRequest::post()
            .uri("/account/delete")
            .insert_header(("cookie", csrf_cookie))
            .insert_header(("content-type", "application/json"))
            .set_payload(format!(r#"{{"csrfToken":"{token}"}}"#)),
    )
    .await;
    assert_eq!((status, error.as_str()), (401, "SessionRequired"));
    let (status, error, _) = call(
        test::TestRequest::get()
            .uri("/account/delete")
            .insert_header(("cookie", cookies)),
    )
    .await;
    assert_eq!((status, error.as_str()), (405, "MethodNotAllowed"));
}

/// `RequireAuth::two_factors()` with second factors on: a user without a second factor gets
/// `403` (a page linking to the account page, or JSON for API clients) rather than a loop
/// through the sign-in page; a user with one whose session did not prove it is sent to sign
/// in again (step-up); a session that proved two factors passes.
#[actix_web::test]
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
            .secret(SECRET)
            .trust_host(true)
            .provider(CredentialsProvider::new().authorize(|_, _| async { Ok(None) }))
            .adapter(db.clone())
            .session_strategy(authcore::SessionStrategy::Jwt)
            .two_factor(authcore::two_factor::TwoFactorOptions::default())
            .build()
            .unwrap(),
    );
    let app = test::init_service(
        App::new()
            .app_data(web::Data::new(auth.clone()))
            .service(auth_routes(auth.clone()))
            .service(
                web::scope("/mfa")
                    .wrap(RequireAuth::new(auth.clone()).two_factors())
                    .route("/page", web::get().to(me)),
            )
            .service(
                web::scope("/api")
                    .wrap(RequireAuth::json(auth.clone()).two_factors())
                    .route("/me", web::get().to(me)),
            ),
    )
    .await;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let cookie = |sub: &str, amr: &[&str]| {
        let claims = serde_json::json!({"sub": sub, "amr": amr, "auth_time": now});
        let token = auth
            .config()
            .jwt()
            .encode(claims.as_object().unwrap(), "authjs.session-token", 3600)
            .unwrap();
        format!("authjs.session-token={token}")
    };
    let get = |path: &str, cookie: &str, accept: Option<&str>| {
        let mut r = test::TestRequest::get()
            .uri(path)
            .insert_header(("cookie", cookie.to_owned()));
        if let Some(a) = accept {
            r = r.insert_header(("accept", a.to_owned()));
        }
        r.to_request()
    };

    // Ada has no second factor: a page for browsers, JSON for API clients.
    let ada_cookie = cookie(&ada, &["pwd"]);
    let res = test::call_service(
        &app,
        get("/mfa/page?tab=2", &ada_cookie, Some("text/html,*/*;q=0.8")),
    )
    .await;
    assert_eq!(res.status(), 403);
    assert_eq!(
        header(&res, "content-type").as_deref(),
        Some("text/html; charset=utf-8")
    );
    let page = body(res).await;
    assert!(page.contains("second factor"), "{page}");
    assert!(page.contains(r#"href="/auth/account""#), "{page}");
    assert!(
        page.contains(r#"href="/auth/signin?callbackUrl=%2Fmfa%2Fpage%3Ftab%3D2""#),
        "{page}"
    );
    for (path, accept) in [
        ("/mfa/page", Some("application/json")),
        ("/api/me", None),
        ("/api/me", Some("text/html")),
    ] {
        let res = test::call_service(&app, get(path, &ada_cookie, accept)).await;
        assert_eq!(res.status(), 403, "{path} {accept:?}");
        assert_eq!(
            header(&res, "content-type").as_deref(),
            Some("application/json")
        );
        let json: Value = serde_json::from_str(&body(res).await).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"error": "TwoFactorRequired", "enrol": "/auth/account"})
        );
    }

    // Bob has a passkey but signed in with a password: sign in again (step-up).
    let bob_cookie = cookie(&bob, &["pwd"]);
    let res = test::call_service(&app, get("/mfa/page", &bob_cookie, None)).await;
    assert_eq!(res.status(), 302);
    assert_eq!(
        header(&res, "location").as_deref(),
        Some("/auth/signin?callbackUrl=%2Fmfa%2Fpage")
    );
    let res = test::call_service(&app, get("/api/me", &bob_cookie, None)).await;
    assert_eq!(res.status(), 401);
    assert_eq!(body(res).await, r#"{"error":"SessionRequired"}"#);

    // A session that proved two factors passes.
    let bob_mfa = cookie(&bob, &["hwk", "user", "mfa"]);
    let res = test::call_service(&app, get("/mfa/page", &bob_mfa, None)).await;
    assert_eq!(res.status(), 200);
}

/// Without organizations there are no API keys: an `Authorization: Bearer ak_…` header
/// is not read, and `RequireAuth` decides by the session cookie alone, as before.
#[actix_web::test]
async fn bearer_keys_are_not_read_without_organizations() {
    let auth = auth();
    let app = app!(auth);
    let signed_in = sign_in(&app).await;
    let bearer = format!("Bearer ak_{}_{}", "0".repeat(24), "a".repeat(43));
    for (path, cookie, status) in [
        ("/api/me", true, 200),
        ("/private/page", true, 200),
        ("/api/me", false, 401),
        ("/private/page", false, 302),
    ] {
        let mut req = test::TestRequest::get()
            .uri(path)
            .insert_header(("authorization", bearer.clone()));
        if cookie {
            req = req.insert_header(("cookie", signed_in.session.clone()));
        }
        let res = test::call_service(&app, req.to_request()).await;
        assert_eq!(res.status(), status, "{path} signed in: {cookie}");
        assert!(header(&res, "www-authenticate").is_none());
    }
}
