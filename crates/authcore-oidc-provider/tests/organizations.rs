//! Organizations through the OpenID Provider, over HTTP on loopback: authcore's routes and
//! the provider's in one axum app (users, sessions and organizations in a `MemoryAdapter`),
//! users signing in with a password in a browser of their own, then authorize → token →
//! userinfo as a client does. The `organizations` scope and claim; clients that admit only
//! some users (`allowed_roles`, `allowed_organizations`, `allowed_groups`): the others get
//! `access_denied` and no code, and a refresh after a user left is refused; the attacks
//! (another organization's admin, a role or slug in another case, a slug that only starts
//! alike, the scope forged by a client that may not have it) get no code and no token.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use authcore::Auth;
use authcore::adapter::{Member, MemoryAdapter, Organization, OrganizationStore, UserGroupsStore};
use authcore::env::Env;
use authcore::organizations::Organizations;
use authcore_oidc_provider::{ClientConfig, ClientSecret, OpenIdProvider, ProviderSection};
use serde_json::{Value, json};

const SECRET: &str = "client-secret-0123456789abcdef0123456789";
const CB: &str = "http://127.0.0.1:9/callback";
use common::payload;

/// The users: `olga` owns acme and globex, `ada` is acme's admin, `bob` a member of acme,
/// `eve` globex's admin; `mallory` owns and administers `acme-evil` (made through authcore,
/// as any user may), and holds `ADMIN` in acme and `admin` in `ACME`, written straight to
/// the store (authcore makes neither: names are lower case).
const USERS: [&str; 5] = ["olga", "ada", "bob", "eve", "mallory"];

/// The provider and authcore on loopback.
struct Op {
    base: String,
    issuer: String,
    auth: Auth,
    users: MemoryAdapter,
    /// User ids by name.
    ids: BTreeMap<&'static str, String>,
    /// acme's id.
    acme: String,
    dir: std::path::PathBuf,
}

impl Drop for Op {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A client of `id` with a secret, the refresh grant and the callback; `f` sets the rest.
fn client(id: &str, f: impl FnOnce(&mut ClientConfig)) -> ClientConfig {
    let mut c = ClientConfig::default();
    c.id = id.into();
    c.name = Some(format!("The {id} app"));
    c.secret = Some(ClientSecret::new(SECRET));
    c.redirect_uris = vec![CB.into()];
    c.grant_types = vec!["authorization_code".into(), "refresh_token".into()];
    f(&mut c);
    c
}

/// The provider with `clients` (and `[oidc_provider.groups]` `groups`), the users and their
/// organizations.
async fn start(clients: Vec<ClientConfig>, groups: &[(&str, &str)]) -> Op {
    let (dir, key) = common::key_dir("orgs");
    let (listener, base) = common::loopback().await;
    let env = Env::from_pairs([
        (
            "AUTH_SECRET",
            "an organizations test secret, long enough".to_owned(),
        ),
        ("AUTH_URL", format!("{base}/auth")),
    ]);
    let mut section = ProviderSection::default();
    section.signing_keys = vec![key];
    section.clients = clients;
    section.groups = groups
        .iter()
        .map(|(g, m)| ((*g).to_owned(), vec![(*m).to_owned()]))
        .collect();
    let provider = Arc::new(OpenIdProvider::new(&env, section).unwrap());

    let users = MemoryAdapter::new();
    let mut ids = BTreeMap::new();
    for name in USERS {
        ids.insert(name, common::add_user(&users, name).await);
    }
    let auth = Auth::new(
        common::handler(&env, &users)
            .organizations(Organizations::new())
            .build()
            .unwrap(),
    );
    common::serve(listener, &provider, &auth, &users);

    let id = |n: &str| ids[n].clone();
    let acme = auth
        .create_organization_for(&id("olga"), "Acme", Some("acme"))
        .await
        .unwrap();
    let globex = auth
        .create_organization_for(&id("olga"), "Globex", Some("globex"))
        .await
        .unwrap();
    let evil = auth
        .create_organization_for(&id("mallory"), "acme", Some("acme-evil"))
        .await
        .unwrap();
    let shouting = Organization {
        id: "shouting".into(),
        slug: "ACME".into(),
        name: "Acme".into(),
        created_at: time::OffsetDateTime::now_utc(),
    };
    let member = |org: &str, user: &str, roles: &[&str]| Member {
        organization_id: org.to_owned(),
        user_id: id(user),
        roles: roles.iter().map(|r| (*r).to_owned()).collect(),
        teams: Vec::new(),
        created_at: time::OffsetDateTime::now_utc(),
    };
    users
        .create_organization(&shouting, &member("shouting", "olga", &["owner"]))
        .await
        .unwrap();
    for m in [
        member(&acme.id, "ada", &["admin"]),
        member(&acme.id, "bob", &["member"]),
        member(&globex.id, "eve", &["admin"]),
        member(&acme.id, "mallory", &["ADMIN"]),
        member("shouting", "mallory", &["admin"]),
    ] {
        assert!(users.add_member(&m).await.unwrap());
    }
    assert!(
        users
            .set_member_roles(&evil.id, &id("mallory"), &["owner".into(), "admin".into()])
            .await
            .is_ok()
    );
    Op {
        issuer: format!("{base}/oidc"),
        base,
        auth,
        users,
        ids,
        acme: acme.id,
        dir,
    }
}

impl Op {
    /// A browser in which `user` signed in with the password.
    async fn browser(&self, user: &str) -> reqwest::Client {
        let (browser, _) = common::signed_in_browser(&self.base, user).await;
        let session = get_json(&browser, &format!("{}/auth/session", self.base)).await;
        assert_eq!(
            session["user"]["email"],
            format!("{user}@example.com"),
            "{session}"
        );
        browser
    }

    /// The authorization request of `client` for `scope` in `browser` (with `extra`).
    async fn authorize(
        &self,
        browser: &reqwest::Client,
        client: &str,
        scope: &str,
        extra: &[(&str, &str)],
    ) -> reqwest::Response {
        let mut url = url::Url::parse(&format!("{}/oidc/authorize", self.base)).unwrap();
        url.query_pairs_mut()
            .extend_pairs([
                ("client_id", client),
                ("redirect_uri", CB),
                ("response_type", "code"),
                ("scope", scope),
                ("state", "st"),
            ])
            .extend_pairs(extra);
        browser.get(url).send().await.unwrap()
    }

    /// What the authorization request sent back to the client: the parameters of the
    /// redirect to its callback.
    async fn answer(
        &self,
        browser: &reqwest::Client,
        client: &str,
        scope: &str,
        extra: &[(&str, &str)],
    ) -> BTreeMap<String, String> {
        let r = self.authorize(browser, client, scope, extra).await;
        callback_params(&r)
    }

    /// A code for `client` and `scope` in `browser`.
    async fn code(&self, browser: &reqwest::Client, client: &str, scope: &str) -> String {
        let p = self.answer(browser, client, scope, &[]).await;
        p.get("code")
            .cloned()
            .unwrap_or_else(|| panic!("no code: {p:?}"))
    }

    /// `POST /oidc/token` as `client` with `form`: the status and the JSON.
    async fn token(&self, client: &str, form: &[(&str, &str)]) -> (u16, Value) {
        let r = reqwest::Client::new()
            .post(format!("{}/oidc/token", self.base))
            .basic_auth(client, Some(SECRET))
            .form(form)
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
    }

    /// The tokens for `code`.
    async fn redeem(&self, client: &str, code: &str) -> (u16, Value) {
        self.token(
            client,
            &[
                ("grant_type", "authorization_code"),
                ("code", code),
                ("redirect_uri", CB),
            ],
        )
        .await
    }

    /// A refresh with `refresh_token` (and `scope`).
    async fn refresh(
        &self,
        client: &str,
        refresh_token: &str,
        scope: Option<&str>,
    ) -> (u16, Value) {
        let mut form = vec![
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
        ];
        form.extend(scope.map(|s| ("scope", s)));
        self.token(client, &form).await
    }

    /// Userinfo with `access`: the status and the JSON.
    async fn userinfo(&self, access: &str) -> (u16, Value) {
        let r = reqwest::Client::new()
            .get(format!("{}/oidc/userinfo", self.base))
            .bearer_auth(access)
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
    }

    fn id(&self, user: &str) -> &str {
        &self.ids[user]
    }
}

/// The JSON `browser` gets at `url`.
async fn get_json(browser: &reqwest::Client, url: &str) -> Value {
    browser.get(url).send().await.unwrap().json().await.unwrap()
}

/// The parameters of `r`'s redirect to the client's callback.
fn callback_params(r: &reqwest::Response) -> BTreeMap<String, String> {
    assert_eq!(r.status(), 302, "{r:?}");
    let to = r.headers()["location"].to_str().unwrap();
    assert!(to.starts_with(CB), "{to}");
    url::Url::parse(to)
        .unwrap()
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// `access_denied` back at the client, with `state` and `iss`, and no code.
fn assert_denied(op: &Op, p: &BTreeMap<String, String>, case: &str) {
    assert_eq!(
        p.get("error").map(String::as_str),
        Some("access_denied"),
        "{case}: {p:?}"
    );
    assert_eq!(p.get("state").map(String::as_str), Some("st"), "{case}");
    assert_eq!(p.get("iss"), Some(&op.issuer), "{case}");
    assert!(!p.contains_key("code"), "{case}: {p:?}");
}

/// The `organizations` scope: discovery offers it; the ID token and userinfo name the
/// member's organizations with their roles (none for a user of none of them); without the
/// scope there is no claim; a client that may not have the scope gets no claim by asking,
/// nor by widening a refresh; the consent page says what the scope shows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_organizations_claim_names_the_organizations_and_roles() {
    let op = start(
        vec![
            client("rp", |_| {}),
            client("narrow", |c| {
                c.scopes = vec!["openid".into(), "email".into(), "offline_access".into()];
            }),
            client("third", |c| c.consent = true),
        ],
        &[],
    )
    .await;
    let metadata = get_json(
        &reqwest::Client::new(),
        &format!("{}/oidc/.well-known/openid-configuration", op.base),
    )
    .await;
    for field in ["scopes_supported", "claims_supported"] {
        assert!(
            metadata[field]
                .as_array()
                .unwrap()
                .contains(&json!("organizations")),
            "{field}: {metadata}"
        );
    }

    let ada = op.browser("ada").await;
    let code = op.code(&ada, "rp", "openid organizations").await;
    let (status, tokens) = op.redeem("rp", &code).await;
    assert_eq!(status, 200, "{tokens}");
    let want = json!([{"id": op.acme, "slug": "acme", "name": "Acme", "roles": ["admin"]}]);
    let id_token = payload(tokens["id_token"].as_str().unwrap());
    assert_eq!(id_token["organizations"], want, "{id_token}");
    let (status, info) = op.userinfo(tokens["access_token"].as_str().unwrap()).await;
    assert_eq!((status, &info["organizations"]), (200, &want), "{info}");

    // Several organizations, by slug; none is an empty list.
    let olga = op.browser("olga").await;
    let code = op.code(&olga, "rp", "openid organizations").await;
    let (_, tokens) = op.redeem("rp", &code).await;
    let (_, info) = op.userinfo(tokens["access_token"].as_str().unwrap()).await;
    let slugs: Vec<&str> = info["organizations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["slug"].as_str().unwrap())
        .collect();
    assert_eq!(slugs, ["ACME", "acme", "globex"], "{info}");
    op.auth
        .remove_member(op.id("ada"), &op.acme, op.id("ada"))
        .await
        .unwrap();
    let code = op.code(&ada, "rp", "openid organizations").await;
    let (_, tokens) = op.redeem("rp", &code).await;
    assert_eq!(
        payload(tokens["id_token"].as_str().unwrap())["organizations"],
        json!([])
    );

    // Without the scope: no claim.
    let bob = op.browser("bob").await;
    let code = op.code(&bob, "rp", "openid email").await;
    let (_, tokens) = op.redeem("rp", &code).await;
    let id_token = payload(tokens["id_token"].as_str().unwrap());
    assert!(id_token.get("organizations").is_none(), "{id_token}");
    let (_, info) = op.userinfo(tokens["access_token"].as_str().unwrap()).await;
    assert!(info.get("organizations").is_none(), "{info}");

    // A client that may not have the scope: asking is ignored (RFC 6749 §3.3), and a
    // refresh cannot widen the grant to it.
    let code = op
        .code(&bob, "narrow", "openid organizations offline_access")
        .await;
    let (status, tokens) = op.redeem("narrow", &code).await;
    assert_eq!(
        (status, tokens["scope"].as_str()),
        (200, Some("openid offline_access")),
        "{tokens}"
    );
    let id_token = payload(tokens["id_token"].as_str().unwrap());
    assert!(id_token.get("organizations").is_none(), "{id_token}");
    let (_, info) = op.userinfo(tokens["access_token"].as_str().unwrap()).await;
    assert!(info.get("organizations").is_none(), "{info}");
    let refresh_token = tokens["refresh_token"].as_str().unwrap();
    let (status, body) = op
        .refresh("narrow", refresh_token, Some("openid organizations"))
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_scope")),
        "{body}"
    );
    assert!(body.get("access_token").is_none(), "{body}");

    // The consent page says it in words.
    let r = op
        .authorize(&bob, "third", "openid organizations", &[])
        .await;
    assert_eq!(r.status(), 200);
    let page = r.text().await.unwrap();
    assert!(
        page.contains("your organizations and your roles in them"),
        "{page}"
    );
}

/// `allowed_roles = ["acme:admin"]`: acme's admin gets a code; a member, another
/// organization's admin, an admin of a slug that starts alike and roles or slugs in
/// another case get `access_denied` and no code (also with `prompt=none`). A code not yet
/// redeemed and refresh tokens stop working once the admin left acme: no token, and the
/// grant's access token is refused at userinfo.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_roles_admit_the_organizations_admins_only() {
    let op = start(
        vec![client("admins", |c| {
            c.allowed_roles = vec!["acme:admin".into()];
        })],
        &[],
    )
    .await;
    let scope = "openid organizations offline_access";
    for (user, case) in [
        ("bob", "a member of acme"),
        ("eve", "globex's admin"),
        ("mallory", "ADMIN in acme, admin in ACME and in acme-evil"),
        ("olga", "acme's owner (owner is a role of its own)"),
    ] {
        let browser = op.browser(user).await;
        for extra in [&[][..], &[("prompt", "none")][..]] {
            let p = op.answer(&browser, "admins", scope, extra).await;
            assert_denied(&op, &p, &format!("{case} {extra:?}"));
        }
    }

    let ada = op.browser("ada").await;
    let code = op.code(&ada, "admins", scope).await;
    let (status, tokens) = op.redeem("admins", &code).await;
    assert_eq!(status, 200, "{tokens}");
    let refresh_token = tokens["refresh_token"].as_str().unwrap().to_owned();
    let (status, refreshed) = op.refresh("admins", &refresh_token, None).await;
    assert_eq!(status, 200, "{refreshed}");
    let refresh_token = refreshed["refresh_token"].as_str().unwrap().to_owned();
    let access = refreshed["access_token"].as_str().unwrap().to_owned();
    assert_eq!(op.userinfo(&access).await.0, 200);
    let pending = op.code(&ada, "admins", scope).await;

    // Olga takes ada out of acme.
    op.auth
        .remove_member(op.id("olga"), &op.acme, op.id("ada"))
        .await
        .unwrap();
    // Her access token is refused at once, before any refresh or its expiry.
    assert_eq!(op.userinfo(&access).await.0, 401, "out of acme");
    let (status, body) = op.refresh("admins", &refresh_token, None).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant")),
        "{body}"
    );
    assert!(body.get("access_token").is_none(), "{body}");
    assert_eq!(op.userinfo(&access).await.0, 401, "the grant ended");
    let (status, body) = op.redeem("admins", &pending).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant")),
        "{body}"
    );
    let p = op.answer(&ada, "admins", scope, &[]).await;
    assert_denied(&op, &p, "ada, out of acme");
}

/// `allowed_organizations` with consent: a user of another organization is refused before
/// any consent page; a member sees it, and is refused at the answer once out of the
/// organization. `allowed_groups`: the groups of the `groups` claim, from a user source
/// (the adapter's `UserGroupsStore`) or `[oidc_provider.groups]`, compared exactly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_organizations_and_groups_admit_their_members() {
    let op = start(
        vec![
            client("wiki", |c| {
                c.consent = true;
                c.allowed_organizations = vec!["acme".into()];
            }),
            client("staff", |c| c.allowed_groups = vec!["staff".into()]),
            client("ops", |c| c.allowed_groups = vec!["ops".into()]),
        ],
        &[("ops", "ada@example.com")],
    )
    .await;
    let eve = op.browser("eve").await;
    let p = op.answer(&eve, "wiki", "openid", &[]).await;
    assert_denied(&op, &p, "globex's admin, before consent");
    let bob = op.browser("bob").await;
    let r = op.authorize(&bob, "wiki", "openid", &[]).await;
    assert_eq!(r.status(), 200, "the consent page");
    let page = r.text().await.unwrap();
    let start = page.find("name=\"ticket\" value=\"").unwrap() + 21;
    let ticket = &page[start..start + page[start..].find('"').unwrap()];
    op.auth
        .remove_member(op.id("bob"), &op.acme, op.id("bob"))
        .await
        .unwrap();
    let r = bob
        .post(format!("{}/oidc/consent", op.base))
        .form(&[("ticket", ticket), ("decision", "allow")])
        .send()
        .await
        .unwrap();
    assert_denied(&op, &callback_params(&r), "bob, out of acme, allows");

    for (user, groups) in [("bob", &["staff"][..]), ("eve", &["Staff", "staff-2"][..])] {
        let groups: Vec<String> = groups.iter().map(|g| (*g).to_owned()).collect();
        op.users
            .set_user_groups(op.id(user), &groups)
            .await
            .unwrap();
    }
    let code = op.code(&bob, "staff", "openid groups").await;
    let (status, tokens) = op.redeem("staff", &code).await;
    assert_eq!(status, 200, "{tokens}");
    assert_eq!(
        payload(tokens["id_token"].as_str().unwrap())["groups"],
        json!(["staff"])
    );
    let p = op.answer(&eve, "staff", "openid", &[]).await;
    assert_denied(&op, &p, "eve, in Staff and staff-2");
    let ada = op.browser("ada").await;
    let p = op.answer(&ada, "staff", "openid", &[]).await;
    assert_denied(&op, &p, "ada, in no source group");
    // ops: ada's verified address is a member in the configuration.
    op.code(&ada, "ops", "openid").await;
    let p = op.answer(&bob, "ops", "openid", &[]).await;
    assert_denied(&op, &p, "bob, not in ops");
}
