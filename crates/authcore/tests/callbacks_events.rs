//! Events whose handlers fail (Auth.js `lib/init.ts`, `eventsErrorHandler`: awaited, errors
//! logged as `EventError` and swallowed) and a custom `redirect` callback (Auth.js
//! `lib/init.ts`, `defaultCallbacks`, and `lib/utils/callback-url.ts`), including one that
//! fails (Auth.js `index.ts`, `Auth`: `error=Configuration`).
#![allow(clippy::unwrap_used)]
use std::sync::{Arc, Mutex};

use crate::common::*;
use authcore::callbacks::{
    Callbacks, Events, RedirectParams, SessionEvent, SignInEvent, SignInOutcome, SignInParams,
    SignOutEvent,
};
use authcore::{Auth, BoxError, PagesOptions};
use serde_json::{Value, json};

/// Every handler fails after recording that it ran.
#[derive(Clone, Default)]
struct FailingEvents {
    ran: Arc<Mutex<Vec<&'static str>>>,
}

#[authcore::async_trait]
impl Events for FailingEvents {
    async fn sign_in(&self, _: SignInEvent<'_>) -> Result<(), BoxError> {
        self.ran.lock().unwrap().push("signIn");
        Err("signIn handler exploded".into())
    }
    async fn sign_out(&self, _: SignOutEvent<'_>) -> Result<(), BoxError> {
        self.ran.lock().unwrap().push("signOut");
        Err("signOut handler exploded".into())
    }
    async fn session(&self, _: SessionEvent<'_>) -> Result<(), BoxError> {
        self.ran.lock().unwrap().push("session");
        Err("session handler exploded".into())
    }
}

async fn credentials_sign_in(auth: &Auth, extra: &[(&str, &str)]) -> TestResponse {
    let mut fields = vec![("username", "demo"), ("password", "pw")];
    fields.extend_from_slice(extra);
    post_credentials(auth, &fields).await
}

async fn sign_out(auth: &Auth, session: Option<&str>, callback_url: Option<&str>) -> TestResponse {
    let (csrf, token) = csrf_pair();
    let cookie = match session {
        Some(s) => format!("{s}; {csrf}"),
        None => csrf,
    };
    let mut pairs = vec![("csrfToken", token.as_str())];
    if let Some(cb) = callback_url {
        pairs.push(("callbackUrl", cb));
    }
    send(
        auth,
        post("/auth/signout")
            .header("cookie", cookie)
            .body(form(&pairs))
            .unwrap(),
    )
    .await
}

#[tokio::test]
async fn failing_event_handlers_are_logged_as_event_error_and_swallowed() {
    let events = FailingEvents::default();
    let rec = Recorder::default();
    let auth = Auth::new(
        builder()
            .logger(rec.clone())
            .events(events.clone())
            .build()
            .unwrap(),
    );

    let r = credentials_sign_in(&auth, &[("callbackUrl", "/dashboard")]).await;
    assert_eq!(r.location(), Some("https://authjs.test/dashboard"));
    let token = r
        .cookie(SESSION_COOKIE)
        .expect("signed in despite the event");
    assert_eq!(rec.error_types(), ["EventError"]);
    assert_eq!(
        rec.errors(),
        ["Event handler signIn failed: signIn handler exploded"]
    );

    let session = format!("{SESSION_COOKIE}={token}");
    let r = get_session(&auth, &session).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["user"]["name"], "Demo User");
    assert!(r.cookie(SESSION_COOKIE).is_some(), "session still rolled");

    let r = sign_out(&auth, Some(&session), Some("/bye")).await;
    assert_eq!(r.location(), Some("https://authjs.test/bye"));
    assert!(
        r.set_cookie_header(SESSION_COOKIE)
            .unwrap()
            .contains("Max-Age=0")
    );

    assert_eq!(
        *events.ran.lock().unwrap(),
        ["signIn", "session", "signOut"]
    );
    assert_eq!(
        rec.error_types(),
        ["EventError", "EventError", "EventError"]
    );
    assert_eq!(
        rec.errors()[1..],
        [
            "Event handler session failed: session handler exploded",
            "Event handler signOut failed: signOut handler exploded"
        ]
    );
}

/// A redirect policy that also trusts `https://partner.example`, records its calls and
/// fails for URLs containing `fail`; the `signIn` callback sends `redirect-me` elsewhere.
#[derive(Clone, Default)]
struct PartnerRedirects {
    seen: Arc<Mutex<Vec<(String, String)>>>,
}

#[authcore::async_trait]
impl Callbacks for PartnerRedirects {
    async fn redirect(&self, p: RedirectParams<'_>) -> Result<String, BoxError> {
        self.seen
            .lock()
            .unwrap()
            .push((p.url.to_owned(), p.base_url.to_owned()));
        if p.url.contains("fail") {
            return Err("redirect policy exploded".into());
        }
        if p.url.starts_with("https://partner.example/") {
            return Ok(p.url.to_owned());
        }
        Ok(format!("{}/routed", p.base_url))
    }
    async fn sign_in(&self, p: SignInParams<'_>) -> Result<SignInOutcome, BoxError> {
        let redirect_me = p
            .credentials
            .and_then(|c| c.get("next"))
            .and_then(Value::as_str);
        Ok(match redirect_me {
            Some(next) => SignInOutcome::Redirect(next.to_owned()),
            None => SignInOutcome::Allow,
        })
    }
}

fn with_redirects(pages: PagesOptions) -> (Auth, Recorder, PartnerRedirects) {
    let cb = PartnerRedirects::default();
    let (auth, rec) = auth_with(builder().callbacks(cb.clone()).pages(pages));
    (auth, rec, cb)
}

#[tokio::test]
async fn custom_redirect_callback_decides_sign_in_and_sign_out_targets() {
    let (auth, rec, cb) = with_redirects(PagesOptions::default());

    // No callbackUrl anywhere: the callback is not consulted, the origin is used.
    let r = send(&auth, get("/auth/session").body(empty()).unwrap()).await;
    assert_eq!(r.status, 200);
    assert!(cb.seen.lock().unwrap().is_empty());

    // A target the default would refuse is allowed by the custom policy.
    let r = credentials_sign_in(&auth, &[("callbackUrl", "https://partner.example/welcome")]).await;
    assert_eq!(r.location(), Some("https://partner.example/welcome"));
    assert!(r.cookie(SESSION_COOKIE).is_some());
    assert_eq!(
        decoded_cookie(&r, CALLBACK_COOKIE).as_deref(),
        Some("https://partner.example/welcome")
    );
    // And a same-origin one is rewritten by it.
    let r = credentials_sign_in(&auth, &[("callbackUrl", "/dashboard")]).await;
    assert_eq!(r.location(), Some("https://authjs.test/routed"));
    assert_eq!(
        *cb.seen.lock().unwrap(),
        [
            (
                "https://partner.example/welcome".to_owned(),
                ORIGIN.to_owned()
            ),
            ("/dashboard".to_owned(), ORIGIN.to_owned()),
        ]
    );

    // The signIn callback's URL goes through it too.
    let r = credentials_sign_in(&auth, &[("next", "https://partner.example/denied")]).await;
    assert_eq!(r.location(), Some("https://partner.example/denied"));
    assert!(r.cookie(SESSION_COOKIE).is_none());
    let r = credentials_sign_in(&auth, &[("next", "https://evil.example/")]).await;
    assert_eq!(r.location(), Some("https://authjs.test/routed"));

    // Sign-out, with and without a session.
    let session = session_cookie(&auth, json!({"sub": "1"}));
    let r = sign_out(&auth, Some(&session), Some("https://partner.example/bye")).await;
    assert_eq!(r.location(), Some("https://partner.example/bye"));
    assert!(
        r.set_cookie_header(SESSION_COOKIE)
            .unwrap()
            .contains("Max-Age=0")
    );
    let r = sign_out(&auth, None, Some("/anywhere")).await;
    assert_eq!(r.location(), Some("https://authjs.test/routed"));
    // A callback-url cookie is resolved through it as well.
    let (csrf, token) = csrf_pair();
    let r = send(
        &auth,
        post("/auth/signout")
            .header(
                "cookie",
                format!("{csrf}; {CALLBACK_COOKIE}=https%3A%2F%2Fpartner.example%2Fcookie"),
            )
            .body(form(&[("csrfToken", &token)]))
            .unwrap(),
    )
    .await;
    assert_eq!(r.location(), Some("https://partner.example/cookie"));
    assert!(rec.errors().is_empty(), "{:?}", rec.errors());
}

#[tokio::test]
async fn custom_sign_in_page_gets_the_callback_result() {
    let (auth, _, cb) = with_redirects(PagesOptions {
        sign_in: Some("/login".into()),
        ..Default::default()
    });
    let r = send(
        &auth,
        get("/auth/signin?callbackUrl=https%3A%2F%2Fpartner.example%2Fx")
            .body(empty())
            .unwrap(),
    )
    .await;
    assert_eq!(
        r.location(),
        Some("/login?callbackUrl=https%3A%2F%2Fpartner.example%2Fx")
    );
    let r = send(
        &auth,
        get("/auth/signin?callbackUrl=%2Fmine")
            .body(empty())
            .unwrap(),
    )
    .await;
    assert_eq!(
        r.location(),
        Some("/login?callbackUrl=https%3A%2F%2Fauthjs.test%2Frouted")
    );
    assert_eq!(cb.seen.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn failing_redirect_callback_is_a_configuration_error() {
    let (auth, rec, _) = with_redirects(PagesOptions::default());
    let configuration = Some("https://authjs.test/auth/error?error=Configuration");

    // Sign-in: no session, a fresh redirect without cookies (Auth.js `index.ts`, `Auth`:
    // an error answers a new 302 that drops the cookies set so far).
    let r = credentials_sign_in(&auth, &[("callbackUrl", "/fail")]).await;
    assert_eq!(r.status, 302);
    assert_eq!(r.location(), configuration);
    assert!(r.set_cookies().is_empty(), "{:?}", r.set_cookies());
    assert_eq!(rec.error_types(), ["CallbackRouteError"]);
    let logged = &rec.errors()[0];
    assert!(logged.contains("redirect"), "{logged}");
    assert!(logged.contains("redirect policy exploded"), "{logged}");

    // Sign-in page, sign-out, and a failing callback-url cookie.
    let r = send(
        &auth,
        get("/auth/signin?callbackUrl=%2Ffail")
            .body(empty())
            .unwrap(),
    )
    .await;
    assert_eq!(r.location(), configuration);
    let session = session_cookie(&auth, json!({"sub": "1"}));
    let r = sign_out(&auth, Some(&session), Some("/fail")).await;
    assert_eq!(r.location(), configuration);
    assert!(r.set_cookies().is_empty(), "session cookie not cleared");
    let r = send(
        &auth,
        get("/auth/providers")
            .header("cookie", format!("{CALLBACK_COOKIE}=%2Ffail"))
            .body(empty())
            .unwrap(),
    )
    .await;
    assert_eq!(r.location(), configuration);

    // JSON form for the client library.
    let (csrf, token) = csrf_pair();
    let r = send(
        &auth,
        post("/auth/callback/credentials")
            .header("cookie", csrf)
            .header("x-auth-return-redirect", "1")
            .body(form(&[
                ("csrfToken", &token),
                ("username", "demo"),
                ("password", "pw"),
                ("callbackUrl", "/fail"),
            ]))
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.json(),
        json!({"url": "https://authjs.test/auth/error?error=Configuration"})
    );
    assert!(r.set_cookies().is_empty());

    // POST /session answers 400 null instead of redirecting (Auth.js `index.ts`, `Auth`).
    let (csrf, token) = csrf_pair();
    let r = send(
        &auth,
        post("/auth/session")
            .header("cookie", format!("{session}; {csrf}"))
            .body(form(&[("csrfToken", &token), ("callbackUrl", "/fail")]))
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.text(), "null");
    assert!(rec.error_types().iter().all(|t| t == "CallbackRouteError"));
    assert_eq!(rec.error_types().len(), 6);

    // With a custom error page.
    let (auth, _, _) = with_redirects(PagesOptions {
        error: Some("/oops".into()),
        ..Default::default()
    });
    let r = credentials_sign_in(&auth, &[("callbackUrl", "/fail")]).await;
    assert_eq!(
        r.location(),
        Some("https://authjs.test/oops?error=Configuration")
    );
}

/// A callback that fails is recorded once in the audit log as `signInFailed`, with its
/// provider and the Auth.js error type: an OAuth callback whose `state` does not decode
/// (recorded where callbacks end), a refused password (recorded by the credentials
/// callback with the identifier, not a second time). An error thrown by `authorize` is the
/// server's failure (logged), not a refused sign-in: no record. The successful sign-in is a
/// `signIn` record, and no record carries the password.
#[tokio::test]
async fn failed_callbacks_are_recorded_once_with_their_provider_and_error() {
    use authcore::adapter::MemoryAdapter;
    let (auth, _) = auth_with(
        builder()
            .adapter(MemoryAdapter::new())
            .session_strategy(authcore::SessionStrategy::Jwt)
            .audit_log(authcore::audit::AuditLog::new().store(true))
            .provider(
                authcore::providers::OAuthProvider::oauth("github", "GitHub")
                    .authorization_url("https://github.com/login/oauth/authorize")
                    .token_url("https://github.com/login/oauth/access_token")
                    .userinfo_url("https://api.github.com/user")
                    .client_id("id")
                    .client_secret("secret"),
            ),
    );
    let r = send(
        &auth,
        http::Request::get("http://localhost:3000/auth/callback/github?state=forged&code=x")
            .body(empty())
            .unwrap(),
    )
    .await;
    assert!(
        r.location().unwrap().contains("/auth/error?error="),
        "{r:?}"
    );
    let refused = post_credentials(&auth, &[("username", "demo"), ("password", "wrong")]).await;
    assert!(
        refused
            .location()
            .unwrap()
            .contains("error=CredentialsSignin")
    );
    let thrown = post_credentials(&auth, &[("username", "throw"), ("password", "x")]).await;
    // None of the failures signed anyone in; the success below did.
    let signed_in = |r: &TestResponse| {
        // `authjs.session-token` or `__Secure-authjs.session-token`, with a value.
        r.set_cookies().iter().any(|c| {
            c.split_once('=').is_some_and(|(name, rest)| {
                name.ends_with("authjs.session-token") && !rest.starts_with(';')
            })
        })
    };
    for failed in [&r, &refused, &thrown] {
        assert!(!signed_in(failed), "{failed:?}");
    }
    let ok = post_credentials(&auth, &[("username", "demo"), ("password", "pw")]).await;
    assert!(signed_in(&ok), "{ok:?}");

    let records = audit_trail(&auth).await;
    let kinds: Vec<&str> = records.iter().map(|r| r.kind.as_str()).collect();
    assert_eq!(
        kinds,
        ["signInFailed", "signInFailed", "signIn"],
        "{records:?}"
    );
    let data: Vec<Value> = records
        .iter()
        .map(|r| serde_json::from_str(&r.data).unwrap())
        .collect();
    assert_eq!(data[0]["provider"], "github");
    assert_eq!(data[0]["error"], "InvalidCheck");
    assert_eq!(data[1]["provider"], "credentials");
    assert_eq!(data[1]["identifier"], "demo");
    assert_eq!(data[1]["error"], "CredentialsSignin");
    assert_eq!(data[2]["provider"], "credentials");
    assert!(records.iter().all(|r| !r.data.contains("wrong")));
}

/// A host that sets no callbacks and no events gets the Auth.js defaults, run in place:
/// the same answers as a host that sets `DefaultCallbacks` and `NoEvents`, which run
/// through the traits (the sign-in's redirect for each kind of callback URL, the session
/// cookie's name and what the session read gives back, the sign-out's redirect).
#[tokio::test]
async fn no_callbacks_answer_as_the_default_callbacks_set_by_hand() {
    use authcore::callbacks::{DefaultCallbacks, NoEvents};
    // Each host logs through a recorder (not its events): an event default that failed
    // would be logged as `EventError`, a callback's as its own error.
    let build = |explicit: bool| {
        let log = Recorder::default();
        let b = builder().logger(log.clone());
        let b = if explicit {
            b.callbacks(DefaultCallbacks).events(NoEvents)
        } else {
            b
        };
        (Auth::new(b.build().unwrap()), log)
    };
    let cases = [
        (None, ORIGIN.to_owned()),
        (
            Some("/dashboard?tab=1"),
            format!("{ORIGIN}/dashboard?tab=1"),
        ),
        (Some("https://authjs.test/x"), format!("{ORIGIN}/x")),
        (Some("https://evil.example/"), ORIGIN.to_owned()),
    ];
    for (callback_url, want) in &cases {
        let mut answers = Vec::new();
        for explicit in [false, true] {
            let (auth, log) = build(explicit);
            let extra: Vec<(&str, &str)> = callback_url
                .map(|u| ("callbackUrl", u))
                .into_iter()
                .collect();
            let r = credentials_sign_in(&auth, &extra).await;
            assert_eq!(r.status, 302, "{callback_url:?}, explicit {explicit}");
            let location = r.location().unwrap().to_owned();
            let token = r.cookie(SESSION_COOKIE).expect("a session cookie");
            let mut session = get_session(&auth, format!("{SESSION_COOKIE}={token}"))
                .await
                .json();
            assert!(session["expires"].is_string(), "{session}");
            session.as_object_mut().unwrap().remove("expires");
            let out = sign_out(
                &auth,
                Some(&format!("{SESSION_COOKIE}={token}")),
                *callback_url,
            )
            .await;
            assert!(
                log.errors().is_empty(),
                "{callback_url:?}, explicit {explicit}: {:?}",
                log.errors()
            );
            answers.push((
                location,
                session,
                out.status,
                out.location().map(str::to_owned),
            ));
        }
        assert_eq!(answers[0], answers[1], "{callback_url:?}");
        let (location, session, status, signed_out_to) = &answers[0];
        assert_eq!(location, want, "{callback_url:?}");
        assert_eq!(
            session,
            &json!({"user": {"name": "Demo User", "email": "demo@example.com", "image": "https://example.com/demo.png"}}),
            "{callback_url:?}"
        );
        assert_eq!(*status, 302, "{callback_url:?}");
        assert_eq!(
            signed_out_to.as_deref(),
            Some(want.as_str()),
            "{callback_url:?}"
        );
    }
}
