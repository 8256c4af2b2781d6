//! The route guards' suite every framework integration passes: permission and role
//! requirements, API keys as signed-in principals, and the attacks on them (revoked,
//! expired, forged and misplaced keys, keys in the URL, odd `Authorization` headers, an
//! active organization the user has left), each answered the same way by every
//! integration, with the guarded handler never reached and the key never echoed.
//!
//! An integration mounts [`ROUTES`] over [`GuardWorld::auth`], its handlers answering
//! through [`GuardWorld::serve`] and [`GuardWorld::serve_in`], and runs [`run`] with a
//! closure that sends a [`GuardRequest`] through the framework:
//!
//! ```ignore
//! #[tokio::test]
//! async fn guards() {
//!     for strategy in [SessionStrategy::Jwt, SessionStrategy::Database] {
//!         let world = GuardWorld::new(strategy).await;
//!         let app = my_app(&world);
//!         authcore_conformance::guards::run(&world, |req| send(&app, req)).await;
//!     }
//! }
//! ```

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use authcore::account::Principal;
use authcore::adapter::{Adapter, AdapterSession, Member, MemoryAdapter, NewUser};
use authcore::organizations::Organizations;
use authcore::providers::CredentialsProvider;
use authcore::types::SignInInfo;
use authcore::{Auth, AuthConfig, SessionStrategy};
use time::OffsetDateTime;

/// The origin the requests are made for (plain HTTP, so the cookies have no `__Secure-`
/// prefix).
pub const ORIGIN: &str = "http://localhost:3000";

/// The session cookie's name on [`ORIGIN`].
const SESSION_COOKIE: &str = "authjs.session-token";

/// A route of the suite's application: its path (an axum / actix-web pattern), what its
/// guard asks, and how its handler answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    /// The path; `{org}` is a path parameter.
    pub path: &'static str,
    /// Whether the guard is the JSON one (`401` JSON for anonymous requests) rather than
    /// the page one (redirect to the sign-in page); `None`: no guard.
    pub json: Option<bool>,
    /// The permission the guard asks, if any.
    pub permission: Option<&'static str>,
    /// The role the guard asks, if any.
    pub role: Option<&'static str>,
    /// What the handler extracts and answers.
    pub handler: Handler,
}

/// What a route's handler extracts and answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handler {
    /// The principal (the integration's `CurrentPrincipal`): [`GuardWorld::serve`] of its
    /// user id.
    Principal,
    /// The principal and the `{org}` path parameter: [`GuardWorld::serve_in`].
    PrincipalInOrganization,
    /// The session (the integration's `Session`): [`GuardWorld::serve`] of its user id.
    Session,
}

/// The routes an integration mounts for the suite.
pub const ROUTES: &[Route] = &[
    route("/api/billing", Some(true), Some("billing:write"), None),
    route("/billing", Some(false), Some("billing:write"), None),
    route("/api/admin", Some(true), None, Some("admin")),
    route(
        "/api/audit",
        Some(true),
        Some("billing:read"),
        Some("billing"),
    ),
    route("/api/me", Some(true), None, None),
    route("/me", Some(false), None, None),
    route("/whoami", None, None, None),
    Route {
        handler: Handler::Session,
        ..route("/api/session", Some(true), None, None)
    },
    Route {
        handler: Handler::PrincipalInOrganization,
        ..route(
            "/api/orgs/{org}/billing",
            Some(true),
            Some("billing:write"),
            None,
        )
    },
];

const fn route(
    path: &'static str,
    json: Option<bool>,
    permission: Option<&'static str>,
    role: Option<&'static str>,
) -> Route {
    Route {
        path,
        json,
        permission,
        role,
        handler: Handler::Principal,
    }
}

/// A request of the suite: a path (and query) on [`ORIGIN`] and its headers, in order
/// (a name may repeat).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardRequest {
    /// The path and query.
    pub path: String,
    /// The headers.
    pub headers: Vec<(&'static str, String)>,
}

/// The answer the framework gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardAnswer {
    /// The status code.
    pub status: u16,
    /// The headers (names in lower case).
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: String,
}

impl GuardAnswer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// The users, organizations, sessions and API keys of the suite, over a [`MemoryAdapter`]
/// with organizations on and a `billing` role (`billing:read`, `billing:write`):
///
/// | user | organization `a` | organization `b` |
/// |---|---|---|
/// | ada | owner | |
/// | bob | admin | |
/// | cy | member | |
/// | dee | billing | owner |
/// | eve | billing, then removed (after making a key) | |
/// | gus | billing, then removed (with `a` active) | |
pub struct GuardWorld {
    /// The handler the integration guards its routes with.
    pub auth: Auth,
    db: MemoryAdapter,
    served: Arc<AtomicUsize>,
    /// The organizations' ids.
    org_a: String,
    org_b: String,
    /// The users' ids, by name.
    users: Vec<(&'static str, String)>,
    /// Session cookies (`name=value`), by name.
    sessions: Vec<(&'static str, String)>,
    /// API keys' text, by name.
    keys: Vec<(&'static str, String)>,
}

impl std::fmt::Debug for GuardWorld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GuardWorld")
            .field("served", &self.served())
            .finish_non_exhaustive()
    }
}

/// Fails the setup of the suite.
fn setup<T, E: std::fmt::Debug>(what: &str, r: Result<T, E>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => panic!("guard suite setup: {what}: {e:?}"),
    }
}

impl GuardWorld {
    /// Makes the users, organizations, sessions (of `strategy`) and keys.
    pub async fn new(strategy: SessionStrategy) -> GuardWorld {
        let db = MemoryAdapter::new();
        let auth = Auth::new(setup(
            "config",
            AuthConfig::builder()
                .secret("the guard suite's secret, long enough to be realistic")
                .trust_host(true)
                .provider(CredentialsProvider::new().authorize(|_, _| async { Ok(None) }))
                .adapter(db.clone())
                .session_strategy(strategy)
                .credentials_database_sessions(strategy == SessionStrategy::Database)
                .organizations(
                    Organizations::new().role("billing", ["billing:read", "billing:write"]),
                )
                .build(),
        ));
        let mut world = GuardWorld {
            auth,
            db,
            served: Arc::default(),
            org_a: String::new(),
            org_b: String::new(),
            users: Vec::new(),
            sessions: Vec::new(),
            keys: Vec::new(),
        };
        for name in ["ada", "bob", "cy", "dee", "eve", "gus"] {
            let user = setup(
                "user",
                world
                    .db
                    .create_user(NewUser {
                        email: Some(format!("{name}@example.com")),
                        ..NewUser::default()
                    })
                    .await,
            );
            world.users.push((name, user.id));
        }
        let auth = world.auth.clone();
        world.org_a = setup(
            "organization a",
            auth.create_organization_for(world.user("ada"), "A", Some("a"))
                .await,
        )
        .id;
        world.org_b = setup(
            "organization b",
            auth.create_organization_for(world.user("dee"), "B", Some("b"))
                .await,
        )
        .id;
        let Some(store) = world.db.capabilities().organizations else {
            panic!("guard suite setup: the memory adapter has no organizations");
        };
        for (name, role) in [
            ("bob", "admin"),
            ("cy", "member"),
            ("dee", "billing"),
            ("eve", "billing"),
            ("gus", "billing"),
        ] {
            let member = Member {
                organization_id: world.org_a.clone(),
                user_id: world.user(name).to_owned(),
                roles: vec![role.to_owned()],
                teams: Vec::new(),
                created_at: OffsetDateTime::now_utc(),
            };
            setup("member", store.add_member(&member).await);
        }

        let (a, b) = (world.org_a.clone(), world.org_b.clone());
        for (session, user, active) in [
            ("ada", "ada", Some(&a)),
            ("ada-no-org", "ada", None),
            ("bob", "bob", Some(&a)),
            ("cy", "cy", Some(&a)),
            ("dee", "dee", Some(&a)),
            ("gus", "gus", Some(&a)),
        ] {
            let cookie = world.session(user, active.map(String::as_str)).await;
            world.sessions.push((session, cookie));
        }
        // A session whose active organization the user never belonged to: only the store,
        // or a token made with the secret, can say so; the membership is checked on every
        // read.
        let forged = world.mint(world.user("cy"), Some(&b)).await;
        world.sessions.push(("cy-forged", forged));

        let billing = || vec!["billing:write".to_owned()];
        // Every permission of `admin` here (it may not give a key `*`, which it lacks).
        let admin: Vec<String> = ["organization:update", "member:*", "team:*", "api_key:*"]
            .into_iter()
            .chain(["billing:read", "billing:write"])
            .map(str::to_owned)
            .collect();
        for (key, maker, org, permissions, lifetime) in [
            ("dee", "dee", Some(&a), billing(), None),
            (
                "dee-b-read",
                "dee",
                Some(&b),
                vec!["member:read".to_owned()],
                None,
            ),
            ("dee-b-billing", "dee", Some(&b), billing(), None),
            ("ada-all", "ada", Some(&a), vec!["*".to_owned()], None),
            ("ada-own", "ada", None, Vec::new(), None),
            (
                "bob-read",
                "bob",
                Some(&a),
                vec!["member:read".to_owned()],
                None,
            ),
            ("bob-all", "bob", Some(&a), admin.clone(), None),
            ("revoked", "dee", Some(&a), billing(), None),
            (
                "expired",
                "dee",
                Some(&a),
                billing(),
                Some(std::time::Duration::from_millis(1)),
            ),
            ("eve", "eve", Some(&a), billing(), None),
        ] {
            let me = world.current_session(maker).await;
            let made = setup(
                "API key",
                auth.create_api_key(&me, org.map(String::as_str), key, &permissions, lifetime)
                    .await,
            );
            if key == "revoked" {
                setup(
                    "revoke",
                    auth.revoke_api_key(world.user("dee"), &made.key.id).await,
                );
            }
            world.keys.push((key, made.secret.expose().to_owned()));
        }
        // The same id with another secret of the same form, and an unknown id.
        // `ak_`, 24 hex digits, `_`: the secret part follows (and may hold `_` itself).
        let (id, secret) = world.key("dee").split_at(28);
        let other = if secret.starts_with('A') { "B" } else { "A" };
        let wrong_secret = format!("{id}{other}{}", &secret[1..]);
        let unknown_id = format!("ak_{}_{secret}", "0".repeat(24));
        world.keys.push(("wrong-secret", wrong_secret));
        world.keys.push(("unknown-id", unknown_id));
        // Eve leaves with a key out; Gus leaves with `a` active.
        for name in ["eve", "gus"] {
            setup(
                "remove member",
                auth.remove_member(world.user("ada"), &a, world.user(name))
                    .await,
            );
        }
        // Long past the expired key's millisecond.
        std::thread::sleep(std::time::Duration::from_millis(5));
        world
    }

    /// How many times a guarded handler did its work.
    pub fn served(&self) -> usize {
        self.served.load(Ordering::SeqCst)
    }

    /// The body of a handler that reached its work as `user_id`: counts it, and answers the
    /// user id.
    pub fn serve(&self, user_id: &str) -> String {
        self.served.fetch_add(1, Ordering::SeqCst);
        user_id.to_owned()
    }

    /// The body of a handler of an organization named in its path: the principal must act
    /// in it (the guard checked the permission in the principal's own organization), else
    /// `404` as if it did not exist; then [`GuardWorld::serve`]. The status and body.
    pub fn serve_in(&self, principal: &Principal, organization_id: &str) -> (u16, String) {
        match &principal.organization {
            Some(org) if org.id == organization_id => (200, self.serve(&principal.user_id)),
            _ => (404, "no such organization".to_owned()),
        }
    }

    fn user(&self, name: &str) -> &str {
        find(&self.users, name)
    }

    fn key(&self, name: &str) -> &str {
        find(&self.keys, name)
    }

    /// A session cookie (`name=value`) of `user_id`, signed in now with a password, with
    /// `org` as its active organization, written where the strategy keeps it (the JWT's
    /// claim, the store) without the membership check of [`Auth::set_active_organization`].
    async fn mint(&self, user_id: &str, org: Option<&str>) -> String {
        if self.auth.config().session_strategy() == SessionStrategy::Database {
            let token = uuid::Uuid::new_v4().to_string();
            let session = AdapterSession {
                session_token: token.clone(),
                user_id: user_id.to_owned(),
                expires: OffsetDateTime::now_utc() + time::Duration::hours(1),
            };
            setup("session", self.db.create_session(session).await);
            let capabilities = self.db.capabilities();
            if let Some(store) = capabilities.session_sign_in {
                let now = OffsetDateTime::now_utc().unix_timestamp();
                let sign_in = SignInInfo::new(vec!["pwd".to_owned()], Some(now));
                setup(
                    "session sign-in",
                    store.record_session_sign_in(&token, &sign_in).await,
                );
            }
            if let Some(store) = capabilities.organizations {
                setup(
                    "session organization",
                    store.set_session_organization(&token, org).await,
                );
            }
            return format!("{SESSION_COOKIE}={token}");
        }
        let now = OffsetDateTime::now_utc().unix_timestamp();
        let mut claims = serde_json::json!({"sub": user_id, "amr": ["pwd"], "auth_time": now});
        if let Some(org) = org {
            claims["org"] = org.into();
        }
        let Some(claims) = claims.as_object() else {
            unreachable!("a JSON object");
        };
        let token = setup(
            "session token",
            self.auth
                .config()
                .jwt()
                .encode(claims, SESSION_COOKIE, 3600),
        );
        format!("{SESSION_COOKIE}={token}")
    }

    /// A session of `name` with `active` made its active organization through
    /// [`Auth::set_active_organization`].
    async fn session(&self, name: &str, active: Option<&str>) -> String {
        let cookie = self.mint(self.user(name), None).await;
        let Some(org) = active else {
            return cookie;
        };
        let (uri, headers) = head(&cookie);
        let set = setup(
            "active organization",
            self.auth
                .set_active_organization(&uri, &headers, Some(org))
                .await,
        );
        set.iter()
            .filter_map(|v| v.to_str().ok())
            .filter_map(|v| v.split(';').next())
            .find(|v| v.starts_with(SESSION_COOKIE))
            .map_or(cookie, str::to_owned)
    }

    /// The [`authcore::account::CurrentSession`] of a fresh session of `name`.
    async fn current_session(&self, name: &str) -> authcore::account::CurrentSession {
        let (uri, headers) = head(&self.mint(self.user(name), None).await);
        match self.auth.current_session(&uri, &headers).await {
            Some(me) => me,
            None => panic!("guard suite setup: no current session for {name}"),
        }
    }

    /// Every case of the suite.
    #[rustfmt::skip]
    fn cases(&self) -> Vec<Case> {
        use Expect::*;
        let (a, b) = (&self.org_a, &self.org_b);
        let key = |k: &str| vec![bearer(self.key(k))];
        let with = |s: &str| vec![("cookie", find(&self.sessions, s).to_owned())];
        let both = |k: &str, s: &str| [key(k), with(s)].concat();
        let served = |name: &str| Served(self.user(name).to_owned());
        let page_json = |s: &str| [with(s), vec![("accept", "application/json".into())]].concat();
        let dee = self.key("dee");
        let orgs_billing = |o: &str| format!("/api/orgs/{o}/billing");
        let authorization = |v: String| vec![("authorization", v)];
        vec![
            // Permissions through a session's active organization.
            case("billing member", "/api/billing", with("dee"), served("dee")),
            case("owner has every permission", "/api/billing", with("ada"), served("ada")),
            case("admin has the host's permissions", "/api/billing", with("bob"), served("bob")),
            case("member lacks billing", "/api/billing", with("cy"), forbidden("permission", "billing:write")),
            case("member lacks billing, page", "/billing", with("cy"), ForbiddenPage("billing:write")),
            case("member lacks billing, API client of a page", "/billing", page_json("cy"), forbidden("permission", "billing:write")),
            case("no active organization", "/api/billing", with("ada-no-org"), forbidden("permission", "billing:write")),
            case("no active organization, signed in", "/api/me", with("ada-no-org"), served("ada")),
            // Roles: exact names.
            case("admin role", "/api/admin", with("bob"), served("bob")),
            case("owner is not admin", "/api/admin", with("ada"), forbidden("role", "admin")),
            case("member is not admin", "/api/admin", with("cy"), forbidden("role", "admin")),
            case("permission and role", "/api/audit", with("dee"), served("dee")),
            case("permission without the role", "/api/audit", with("bob"), forbidden("role", "billing")),
            // Signed out.
            case("signed out, API", "/api/billing", vec![], SessionRequired),
            case("signed out, page", "/billing?tab=2", vec![], SignIn("/auth/signin?callbackUrl=%2Fbilling%3Ftab%3D2")),
            case("signed out, plain API guard", "/api/me", vec![], SessionRequired),
            case("signed out, plain page guard", "/me", vec![], SignIn("/auth/signin?callbackUrl=%2Fme")),
            case("signed out, extractor", "/whoami", vec![], SessionRequired),
            case("signed in, extractor", "/whoami", with("cy"), served("cy")),
            // API keys are signed-in principals.
            case("key with the permission", "/api/billing", key("dee"), served("dee")),
            case("key at a page", "/billing", key("dee"), served("dee")),
            case("key at a plain API guard", "/api/me", key("dee"), served("dee")),
            case("key at a plain page guard", "/me", key("dee"), served("dee")),
            case("key, extractor", "/whoami", key("dee"), served("dee")),
            case("owner's key with every permission", "/api/billing", key("ada-all"), served("ada")),
            case("key with all of its maker's role keeps the role", "/api/admin", key("bob-all"), served("bob")),
            case("a key has its maker's roles only", "/api/audit", key("ada-all"), forbidden("role", "billing")),
            case("user's own key signs in", "/api/me", key("ada-own"), served("ada")),
            case("user's own key has no permissions", "/api/billing", key("ada-own"), forbidden("permission", "billing:write")),
            case("key narrower than its maker's role", "/api/admin", key("bob-read"), forbidden("role", "admin")),
            case("key in its organization's path", &orgs_billing(a), key("dee"), served("dee")),
            case("key of b in b's path", &orgs_billing(b), key("dee-b-billing"), served("dee")),
            // Attacks: a bad key is refused, never passed over for the cookie.
            case("revoked key", "/api/billing", key("revoked"), InvalidKey),
            case("revoked key, plain guard", "/api/me", key("revoked"), InvalidKey),
            case("revoked key, page", "/me", key("revoked"), InvalidKey),
            case("revoked key, extractor", "/whoami", key("revoked"), InvalidKey),
            case("revoked key beside a good session", "/api/billing", both("revoked", "dee"), InvalidKey),
            case("expired key", "/api/billing", key("expired"), InvalidKey),
            case("wrong secret", "/api/billing", key("wrong-secret"), InvalidKey),
            case("unknown key id", "/api/billing", key("unknown-id"), InvalidKey),
            case("maker removed from the organization", "/api/billing", key("eve"), InvalidKey),
            case("maker removed, plain guard", "/api/me", key("eve"), InvalidKey),
            case("key of another organization in a's path", &orgs_billing(a), key("dee-b-billing"), NotFound),
            case("key of b beside a session active in a", "/api/billing", both("dee-b-read", "dee"), forbidden("permission", "billing:write")),
            case("a key's request has no session", "/api/session", both("dee", "dee"), SessionRequired),
            case("a session's request has one", "/api/session", with("dee"), served("dee")),
            // The `Authorization` header.
            case("lower case scheme", "/api/billing", authorization(format!("bearer {dee}")), served("dee")),
            case("upper case scheme", "/api/billing", authorization(format!("BEARER {dee}")), served("dee")),
            case("spaces after the scheme", "/api/billing", authorization(format!("Bearer    {dee}")), served("dee")),
            case("trailing text", "/api/billing", authorization(format!("Bearer {dee} x")), InvalidKey),
            case("two keys in one header", "/api/billing", authorization(format!("Bearer {dee}, Bearer {dee}")), InvalidKey),
            case("two headers, two keys", "/api/billing", [key("dee"), key("dee")].concat(), InvalidKey),
            case("two headers, a key and Basic", "/api/billing", [key("dee"), authorization("Basic ZGVlOnB3".into())].concat(), InvalidKey),
            case("two headers, a bad key first", "/api/billing", [key("revoked"), key("dee")].concat(), InvalidKey),
            case("tab after the scheme", "/api/billing", authorization(format!("Bearer\t{dee}")), SessionRequired),
            case("another scheme", "/api/billing", authorization(format!("Token {dee}")), SessionRequired),
            case("no scheme", "/api/billing", authorization(dee.to_owned()), SessionRequired),
            // Keys in the URL are not read.
            case("api_key in the query", &format!("/api/billing?api_key={dee}"), vec![], SessionRequired),
            case("access_token in the query", &format!("/api/billing?access_token={dee}"), vec![], SessionRequired),
            case("access_token in the query, plain guard", &format!("/api/me?access_token={dee}"), vec![], SessionRequired),
            case("access_token in the query, extractor", &format!("/whoami?access_token={dee}"), vec![], SessionRequired),
            // The active organization is a membership, checked on every request.
            case("active organization left", "/api/billing", with("gus"), forbidden("permission", "billing:write")),
            case("active organization left, still signed in", "/api/me", with("gus"), served("gus")),
            case("active organization never joined", "/api/me", with("cy-forged"), served("cy")),
            case("active organization never joined, its path", &orgs_billing(b), with("cy-forged"), forbidden("permission", "billing:write")),
        ]
    }
}

/// `("authorization", "Bearer <key>")`.
fn bearer(key: &str) -> (&'static str, String) {
    ("authorization", format!("Bearer {key}"))
}

fn find<'a>(list: &'a [(&'static str, String)], name: &str) -> &'a str {
    match list.iter().find(|(n, _)| *n == name) {
        Some((_, v)) => v,
        None => panic!("guard suite: no {name:?}"),
    }
}

/// The URI and headers of a request on [`ORIGIN`] with `cookie`.
fn head(cookie: &str) -> (authcore::http::Uri, authcore::http::HeaderMap) {
    let uri = setup("URI", format!("{ORIGIN}/").parse());
    let mut headers = authcore::http::HeaderMap::new();
    headers.insert(
        authcore::http::header::COOKIE,
        setup("cookie", cookie.parse()),
    );
    (uri, headers)
}

/// A case: a request and what must come of it.
struct Case {
    name: &'static str,
    request: GuardRequest,
    expect: Expect,
}

fn case(
    name: &'static str,
    path: &str,
    headers: Vec<(&'static str, String)>,
    expect: Expect,
) -> Case {
    Case {
        name,
        request: GuardRequest {
            path: path.to_owned(),
            headers,
        },
        expect,
    }
}

/// What must come of a case.
#[derive(Debug)]
enum Expect {
    /// `200` from the handler, which did its work as this user id.
    Served(String),
    /// `401` `{"error":"SessionRequired"}`.
    SessionRequired,
    /// `302` to this location.
    SignIn(&'static str),
    /// `401` `{"error":"InvalidApiKey"}` with `WWW-Authenticate: Bearer error="invalid_token"`.
    InvalidKey,
    /// `403` JSON naming what is missing (`"permission"` or `"role"`, and its name).
    Forbidden(&'static str, &'static str),
    /// `403` page naming the missing permission.
    ForbiddenPage(&'static str),
    /// `404` from the handler of an organization the principal does not act in.
    NotFound,
}

fn forbidden(kind: &'static str, name: &'static str) -> Expect {
    Expect::Forbidden(kind, name)
}

/// Runs every case through `send`, which makes the request through the framework's
/// application (the [`ROUTES`] over [`GuardWorld::auth`]) and returns its answer. Panics
/// naming the first case that fails.
pub async fn run<F, Fut>(world: &GuardWorld, send: F)
where
    F: Fn(GuardRequest) -> Fut,
    Fut: Future<Output = GuardAnswer>,
{
    let secrets: Vec<&str> = world.keys.iter().map(|(_, k)| k.as_str()).collect();
    for case in world.cases() {
        let before = world.served();
        let answer = send(case.request.clone()).await;
        let fail = |what: String| -> ! {
            panic!(
                "guard case {:?} ({} {:?}) failed: {what}; answer {answer:?}",
                case.name, case.request.path, case.request.headers
            )
        };
        let served = world.served() - before;
        let json = || -> serde_json::Value {
            serde_json::from_str(&answer.body).unwrap_or_else(|e| fail(format!("a JSON body: {e}")))
        };
        let expected_status = match &case.expect {
            Expect::Served(_) => 200,
            Expect::SessionRequired | Expect::InvalidKey => 401,
            Expect::SignIn(_) => 302,
            Expect::Forbidden(..) | Expect::ForbiddenPage(_) => 403,
            Expect::NotFound => 404,
        };
        if answer.status != expected_status {
            fail(format!("status {expected_status} expected"));
        }
        if served != usize::from(matches!(case.expect, Expect::Served(_))) {
            fail(format!("the handler did its work {served} times"));
        }
        // The key a request sent never comes back (a redirect's location is the address the
        // client asked for, so only its body and other headers are looked at).
        let echoed = secrets.iter().any(|s| {
            answer.body.contains(s)
                || answer
                    .headers
                    .iter()
                    .any(|(n, v)| n != "location" && v.contains(s))
        });
        if echoed {
            fail("an API key in the answer".into());
        }
        match &case.expect {
            Expect::Served(user) if answer.body != *user => fail(format!("body {user:?}")),
            Expect::SessionRequired
                if json() != serde_json::json!({"error": "SessionRequired"}) =>
            {
                fail("SessionRequired".into())
            }
            Expect::SignIn(location) if answer.header("location") != Some(*location) => {
                fail(format!("location {location:?}"))
            }
            Expect::InvalidKey => {
                if json() != serde_json::json!({"error": "InvalidApiKey"}) {
                    fail("InvalidApiKey".into());
                }
                if answer.header("www-authenticate") != Some(r#"Bearer error="invalid_token""#) {
                    fail("WWW-Authenticate: Bearer error=\"invalid_token\"".into());
                }
            }
            Expect::Forbidden(kind, name)
                if json() != serde_json::json!({"error": "Forbidden", *kind: name}) =>
            {
                fail(format!("Forbidden {kind} {name}"))
            }
            Expect::ForbiddenPage(name) => {
                let html = answer
                    .header("content-type")
                    .is_some_and(|t| t.starts_with("text/html"));
                if !html || !answer.body.contains(name) {
                    fail(format!("an HTML page naming {name}"));
                }
            }
            _ => {}
        }
    }
    if world.auth.config().session_strategy() == SessionStrategy::Jwt {
        rolled_session_keeps_its_organization(world, &send).await;
    }
}

/// A JWT session the guard rolls (a new cookie on the answer) keeps its active
/// organization: the next request with the new cookie still holds the permission.
async fn rolled_session_keeps_its_organization<F, Fut>(world: &GuardWorld, send: &F)
where
    F: Fn(GuardRequest) -> Fut,
    Fut: Future<Output = GuardAnswer>,
{
    let request = |cookie: &str| GuardRequest {
        path: "/api/billing".to_owned(),
        headers: vec![("cookie", cookie.to_owned())],
    };
    let answer = send(request(find(&world.sessions, "dee"))).await;
    let rolled = answer
        .headers
        .iter()
        .filter(|(n, _)| n == "set-cookie")
        .filter_map(|(_, v)| v.split(';').next())
        .find(|v| v.starts_with(SESSION_COOKIE));
    let Some(rolled) = rolled else {
        panic!("guard suite: the guard did not roll the session: {answer:?}");
    };
    let again = send(request(rolled)).await;
    assert_eq!(
        (again.status, again.body.as_str()),
        (200, world.user("dee")),
        "guard suite: the rolled session lost its organization"
    );
}
