//! The device authorization grant (RFC 8628) of authcore as an OpenID Provider: the strict
//! `openid-client` (npm) as a device asks for a code, the user allows it in a signed-in
//! browser, and the library's polls get the tokens and call userinfo
//! (`testsupport/oidc-rp/openid-client-device.mjs`); the user's page in headless Chromium
//! (`testsupport/browser/device.mjs`); two instances on one database as one provider; and
//! the attacks, as raw requests, each checked to issue no token and leak nothing: user
//! codes guessed, expired, answered twice or from another session; device codes polled too
//! fast, redeemed twice, by another client, after a denial, or forged; a banned user; and
//! a store that cannot answer at "Allow", which spends no user code.
//! The clients are the one `docs/identity-provider.md` shows, as written, and two more.

use std::time::Duration;

use authcore::adapter::{Adapter, AuditQuery, UserBan};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::openid_provider::{
    Op, fresh_dir, fresh_session, listener, oidc_rp_dir, payload, start_instances, start_with,
    step_of, userinfo_status,
};
use crate::support::{self, browser, pg};

const GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";
const CONSOLE_SECRET: &str = "console-secret-0123456789abcdef0123456";
/// The documented public device client.
const TV: &str = "tv-app";

/// The documented device client (`tv-app`: public, with refresh tokens), `console` (a
/// secret, the device grant only) and `radio` (public, the device grant only).
fn clients() -> String {
    format!(
        r#"{documented}
[[oidc_provider.clients]]
id = "console"
secret = "{CONSOLE_SECRET}"
grant_types = ["{GRANT}"]

[[oidc_provider.clients]]
id = "radio"
grant_types = ["{GRANT}"]
"#,
        documented = support::documented("identity-provider.md", "oidc-provider-test: device")
    )
}

/// `POST <path>` with `form`, with HTTP Basic `basic` when given: the status and the JSON.
async fn post(
    op: &Op,
    path: &str,
    basic: Option<(&str, &str)>,
    form: &[(&str, &str)],
) -> (u16, Value) {
    crate::openid_provider::post_form(op, path, basic, form).await
}

/// A client's HTTP Basic credentials, if any, and the form fields it authenticates by.
type ClientAuth<'a> = (Option<(&'a str, &'a str)>, Vec<(&'a str, &'a str)>);

/// How `client` authenticates: `console` with its secret, the public ones by `client_id`.
fn auth_of(client: &str) -> ClientAuth<'_> {
    match client {
        "console" => (Some(("console", CONSOLE_SECRET)), vec![]),
        id => (None, vec![("client_id", id)]),
    }
}

/// A device authorization of `client` for `scope`: the answer (checked to be one).
async fn device_authorization(op: &Op, client: &str, scope: &str) -> Value {
    let (basic, mut form) = auth_of(client);
    form.push(("scope", scope));
    let (status, body) = post(op, "/oidc/device", basic, &form).await;
    assert_eq!(status, 200, "{body}");
    body
}

/// A poll of the token endpoint by `client` with `device_code`.
async fn poll(op: &Op, client: &str, device_code: &str) -> (u16, Value) {
    let (basic, mut form) = auth_of(client);
    form.extend([("grant_type", GRANT), ("device_code", device_code)]);
    post(op, "/oidc/token", basic, &form).await
}

/// The user's page for `user_code` in `browser`: the status and the HTML.
async fn page(op: &Op, browser: &reqwest::Client, user_code: &str) -> (u16, String) {
    let mut url = url::Url::parse(&format!("{}/oidc/device/verify", op.base)).unwrap();
    url.query_pairs_mut().append_pair("user_code", user_code);
    let r = browser.get(url).send().await.unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

/// The ticket of a confirmation page, if it has one.
fn ticket_of(html: &str) -> Option<String> {
    let at = html.find(r#"name="ticket" value=""#)? + r#"name="ticket" value=""#.len();
    Some(html[at..at + html[at..].find('"')?].to_owned())
}

/// The answer `decision` to the page's `ticket` from `browser`: the status and the HTML.
async fn answer(op: &Op, browser: &reqwest::Client, ticket: &str, decision: &str) -> (u16, String) {
    let r = browser
        .post(format!("{}/oidc/device/verify", op.base))
        .form(&[("ticket", ticket), ("decision", decision)])
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

/// `browser`'s user answers `decision` to `user_code`'s page.
async fn decide(
    op: &Op,
    browser: &reqwest::Client,
    user_code: &str,
    decision: &str,
) -> (u16, String) {
    let (status, html) = page(op, browser, user_code).await;
    assert_eq!(status, 200, "{html}");
    let ticket = ticket_of(&html).unwrap_or_else(|| panic!("no ticket: {html}"));
    answer(op, browser, &ticket, decision).await
}

/// The demo user, who signs in in the provider's browsers.
async fn demo_user(op: &Op) -> authcore::adapter::AdapterUser {
    op.database
        .get_user_by_email("demo@example.com")
        .await
        .unwrap()
        .unwrap()
}

/// The device code and user code of a device authorization's answer.
fn codes(d: &Value) -> (String, String) {
    (
        d["device_code"].as_str().unwrap().to_owned(),
        d["user_code"].as_str().unwrap().to_owned(),
    )
}

/// A relying party script running beside the test, read step by step.
struct Rp {
    _child: tokio::process::Child,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    steps: Vec<Value>,
}

impl Rp {
    fn start(args: &[&str]) -> Self {
        let mut child = tokio::process::Command::new("node")
            .arg("openid-client-device.mjs")
            .args(args)
            .current_dir(oidc_rp_dir())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Rp {
            _child: child,
            lines,
            steps: Vec::new(),
        }
    }

    /// The next line (at most 60 s away); `None` after `{"done": true}`.
    async fn next(&mut self) -> Option<Value> {
        let line = tokio::time::timeout(Duration::from_secs(60), self.lines.next_line())
            .await
            .expect("the relying party is silent")
            .unwrap()
            .expect("the relying party stopped early");
        let v: Value = serde_json::from_str(&line).unwrap();
        assert!(v.get("error").is_none(), "the relying party failed: {v}");
        if v.get("done").is_some() {
            return None;
        }
        self.steps.push(v.clone());
        Some(v)
    }

    /// Reads until step `name`.
    async fn until(&mut self, name: &str) -> Value {
        loop {
            match self.next().await {
                Some(v) if v["step"] == name => return v,
                Some(_) => {}
                None => panic!("no step {name}: {:?}", self.steps),
            }
        }
    }

    /// Reads to the end: every step.
    async fn finish(mut self) -> Vec<Value> {
        while self.next().await.is_some() {}
        self.steps
    }
}

/// openid-client (npm) as a device: discovery names the device endpoint and grant; the
/// code it is given is entered by the signed-in user (the link with the code only fills
/// it in: nothing is allowed until the user clicks), and its polls get an ID token, an
/// access token userinfo answers and a refresh token that refreshes. The approval is
/// audited as the code flow's is. Denied, the library hears `access_denied`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openid_client_signs_a_device_in() {
    let op = start_with(&clients()).await;
    let scope = "openid profile email offline_access";
    let mut rp = Rp::start(&[&op.issuer, TV, "-", scope]);
    let discovery = rp.until("discovery").await;
    assert_eq!(
        discovery["deviceEndpoint"],
        format!("{}/oidc/device", op.base),
        "{discovery}"
    );
    assert!(
        discovery["grantTypes"]
            .as_array()
            .unwrap()
            .contains(&json!(GRANT)),
        "{discovery}"
    );
    let device = rp.until("device").await;
    let verification = format!("{}/oidc/device/verify", op.base);
    assert_eq!(device["verificationUri"], verification, "{device}");
    assert_eq!(
        (device["interval"].as_u64(), device["expiresIn"].as_u64()),
        (Some(5), Some(600)),
        "{device}"
    );
    let user_code = device["userCode"].as_str().unwrap();
    assert!(
        user_code.len() == 9
            && user_code.chars().enumerate().all(|(i, c)| if i == 4 {
                c == '-'
            } else {
                "BCDFGHJKLMNPQRSTVWXZ".contains(c)
            }),
        "{device}"
    );
    let complete = device["verificationUriComplete"].as_str().unwrap();
    assert!(
        complete.starts_with(&format!("{verification}?user_code=")),
        "{device}"
    );

    // The link fills the code in; the page asks, and only the click allows.
    let (status, html) = {
        let r = op.signed_in.get(complete).send().await.unwrap();
        (r.status().as_u16(), r.text().await.unwrap())
    };
    assert_eq!(status, 200, "{html}");
    assert!(
        html.contains("The TV app") && html.contains(user_code),
        "{html}"
    );
    assert!(html.contains("your email address"), "{html}");
    let ticket = ticket_of(&html).unwrap();
    let (status, html) = answer(&op, &op.signed_in, &ticket, "allow").await;
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("Device connected"), "{html}");

    let steps = rp.finish().await;
    let s = step_of(&steps, "signed-in");
    let claims = &s["claims"];
    assert_eq!(claims["iss"], op.issuer, "{s}");
    assert_eq!(claims["aud"], TV, "{s}");
    assert_eq!(claims["email"], "demo@example.com", "{s}");
    assert_eq!(claims["name"], "Demo User", "{s}");
    assert_eq!(claims["amr"], json!(["pwd"]), "{s}");
    assert!(claims["auth_time"].as_i64().is_some(), "{s}");
    assert!(claims.get("nonce").is_none(), "{s}");
    assert_eq!(s["userinfo"]["sub"], claims["sub"], "{s}");
    assert_eq!(s["userinfo"]["email"], "demo@example.com", "{s}");
    assert_eq!(s["scope"], scope, "{s}");
    assert_eq!(s["refresh"], true, "{s}");
    let r = step_of(&steps, "refreshed");
    assert_eq!(r["sub"], claims["sub"], "{r}");
    assert_eq!(r["userinfo"]["email"], "demo@example.com", "{r}");

    // Audited as the code flow's grants are, by the user who allowed it.
    let store = (&op.database as &dyn Adapter).audit_log().unwrap();
    let records = store
        .query_audit_records(&AuditQuery {
            kind: Some("oidc.granted".into()),
            limit: 10,
            ..AuditQuery::default()
        })
        .await
        .unwrap();
    let record = records
        .iter()
        .find(|r| r.data.contains(GRANT))
        .unwrap_or_else(|| panic!("no device grant audited: {records:?}"));
    assert_eq!(
        record.actor.as_deref(),
        claims["sub"].as_str(),
        "{record:?}"
    );
    assert!(record.data.contains(TV), "{record:?}");

    // Denied: the library's poll is refused with access_denied.
    let mut rp = Rp::start(&[&op.issuer, "console", CONSOLE_SECRET, "openid"]);
    let device = rp.until("device").await;
    let (status, html) = decide(
        &op,
        &op.signed_in,
        device["userCode"].as_str().unwrap(),
        "deny",
    )
    .await;
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("Request denied"), "{html}");
    let steps = rp.finish().await;
    assert_eq!(
        step_of(&steps, "refused")["reason"],
        "access_denied",
        "{steps:?}"
    );
    assert!(steps.iter().all(|s| s["step"] != "signed-in"), "{steps:?}");
}

/// Two instances on one PostgreSQL database are one provider for the device flow: the
/// pending authorization made at one is found, allowed and redeemed at the other (the
/// single-use store's values and marks live in the database), once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_share_pending_device_authorizations() {
    let schema = format!(
        "op_device_{}_{}",
        std::process::id(),
        crate::openid_provider::rand_suffix()
    );
    pg::admin_sql(&format!("CREATE SCHEMA {schema}")).await;
    let url = format!("{}?options=-c%20search_path%3D{schema}", pg::postgres_url());
    let ops = start_instances(
        fresh_dir(),
        &url,
        "",
        &clients(),
        vec![listener().await, listener().await],
    )
    .await;
    let (a, b) = (&ops[0], &ops[1]);
    let (device_code, user_code) = codes(&device_authorization(a, TV, "openid email").await);
    let (status, pending) = poll(b, TV, &device_code).await;
    assert_eq!(
        (status, pending["error"].as_str()),
        (400, Some("authorization_pending")),
        "{pending}"
    );
    let (status, html) = decide(b, &b.signed_in, &user_code, "allow").await;
    assert_eq!(status, 200, "{html}");
    // Polled again at once at the other instance: the interval is shared too.
    let (status, soon) = poll(a, TV, &device_code).await;
    assert_eq!(
        (status, soon["error"].as_str()),
        (400, Some("slow_down")),
        "{soon}"
    );
    tokio::time::sleep(Duration::from_secs(11)).await;
    let (status, tokens) = poll(a, TV, &device_code).await;
    assert_eq!(status, 200, "{tokens}");
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(userinfo_status(b, access).await, 200);
    assert_eq!(payload(tokens["id_token"].as_str().unwrap())["aud"], TV);
    // Redeemed again at the other instance: refused, and the first redemption's token is
    // revoked.
    let (status, again) = poll(b, TV, &device_code).await;
    assert_eq!(
        (status, again["error"].as_str()),
        (400, Some("invalid_grant")),
        "{again}"
    );
    assert!(again.get("access_token").is_none(), "{again}");
    assert_eq!(userinfo_status(a, access).await, 401);
    drop(ops);
    pg::admin_sql(&format!("DROP SCHEMA {schema} CASCADE")).await;
}

/// What an attack got: every answer a client and the attacker's browser saw.
#[derive(Default)]
struct Seen {
    answers: Vec<String>,
}

impl Seen {
    fn token(&mut self, (status, body): &(u16, Value)) {
        self.answers.push(format!("{status} {body}"));
    }

    fn page(&mut self, (status, html): &(u16, String)) {
        self.answers.push(format!("{status} {html}"));
    }

    /// No token was issued and nothing of the user or of the codes leaked in any answer.
    fn nothing_issued_or_leaked(&self, attack: &str, secrets: &[&str]) {
        for a in &self.answers {
            for field in ["access_token", "id_token", "refresh_token"] {
                assert!(!a.contains(field), "{attack}: {field} issued: {a}");
            }
            for s in secrets.iter().filter(|s| !s.is_empty()) {
                assert!(!a.contains(s), "{attack}: {s:?} leaked: {a}");
            }
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Attack {
    /// The device code polled faster than the interval.
    PolledTooFast,
    /// The device code polled by another client, before and after the user allowed it.
    AnotherClient,
    /// Denied by the user, then polled, then allowed with the same page.
    DeniedThenPolled,
    /// The allowed device code redeemed a second time.
    RedeemedTwice,
    /// A page answered from another session of the same user (a forged form).
    AnotherSession,
    /// An allowed user code entered again.
    UserCodeAgain,
    /// Device codes and pages made up, or altered.
    Forged,
    /// A device code past its expiry, and its user code.
    Expired,
    /// A client without the grant, a client with a wrong secret.
    ClientNotAllowed,
    /// The user banned after seeing the page: the allow is refused, the device hears
    /// `access_denied`; allowed before the ban, the poll after it is refused.
    BannedUser,
}

/// The attacks of RFC 8628 §5 and of the token endpoint's single use and client binding,
/// each checked to issue no token and to leak neither the user nor the codes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn device_flow_attacks_issue_no_token() {
    // Administrators on: bans hold (without them no user is banned).
    let op = start_with(&format!(
        "{}\n[admin]\nusers = [\"admin@example.com\"]\n",
        clients()
    ))
    .await;
    let demo = demo_user(&op).await;
    // The banned user last: the ban holds for the rest of the provider's life.
    for attack in [
        Attack::PolledTooFast,
        Attack::AnotherClient,
        Attack::DeniedThenPolled,
        Attack::RedeemedTwice,
        Attack::AnotherSession,
        Attack::UserCodeAgain,
        Attack::Forged,
        Attack::Expired,
        Attack::ClientNotAllowed,
        Attack::BannedUser,
    ] {
        let name = format!("{attack:?}");
        let mut seen = Seen::default();
        let (device_code, user_code) = codes(&device_authorization(&op, TV, "openid email").await);
        let expect = |r: &(u16, Value), error: &str| {
            assert_eq!(
                (r.0, r.1["error"].as_str()),
                (400, Some(error)),
                "{name}: {}",
                r.1
            );
        };
        match attack {
            Attack::PolledTooFast => {
                let first = poll(&op, TV, &device_code).await;
                expect(&first, "authorization_pending");
                for _ in 0..3 {
                    let r = poll(&op, TV, &device_code).await;
                    expect(&r, "slow_down");
                    seen.token(&r);
                }
                // Allowed meanwhile: still slow_down until the interval, five seconds more.
                let (status, _) = decide(&op, &op.signed_in, &user_code, "allow").await;
                assert_eq!(status, 200, "{name}");
                let r = poll(&op, TV, &device_code).await;
                expect(&r, "slow_down");
                seen.token(&r);
            }
            Attack::AnotherClient => {
                for client in ["radio", "console"] {
                    let r = poll(&op, client, &device_code).await;
                    expect(&r, "invalid_grant");
                    seen.token(&r);
                }
                let (status, _) = decide(&op, &op.signed_in, &user_code, "allow").await;
                assert_eq!(status, 200, "{name}");
                for client in ["radio", "console"] {
                    let r = poll(&op, client, &device_code).await;
                    expect(&r, "invalid_grant");
                    seen.token(&r);
                }
                // Another client's polls neither slowed nor spent it: its own client
                // redeems it (the one token of this attack, not the attacker's).
                let (status, own) = poll(&op, TV, &device_code).await;
                assert_eq!(status, 200, "{name}: {own}");
            }
            Attack::DeniedThenPolled => {
                let (status, html) = page(&op, &op.signed_in, &user_code).await;
                assert_eq!(status, 200, "{name}");
                let ticket = ticket_of(&html).unwrap();
                let (status, _) = answer(&op, &op.signed_in, &ticket, "deny").await;
                assert_eq!(status, 200, "{name}");
                let r = poll(&op, TV, &device_code).await;
                expect(&r, "access_denied");
                seen.token(&r);
                let again = answer(&op, &op.signed_in, &ticket, "allow").await;
                assert_eq!(again.0, 409, "{name}: {}", again.1);
                seen.page(&again);
                tokio::time::sleep(Duration::from_secs(5)).await;
                let r = poll(&op, TV, &device_code).await;
                expect(&r, "access_denied");
                seen.token(&r);
            }
            Attack::RedeemedTwice => {
                let (status, _) = decide(&op, &op.signed_in, &user_code, "allow").await;
                assert_eq!(status, 200, "{name}");
                let (status, first) = poll(&op, TV, &device_code).await;
                assert_eq!(status, 200, "{name}: {first}");
                let access = first["access_token"].as_str().unwrap().to_owned();
                let r = poll(&op, TV, &device_code).await;
                expect(&r, "invalid_grant");
                seen.token(&r);
                // And what the first redemption gave is revoked.
                assert_eq!(userinfo_status(&op, &access).await, 401, "{name}");
            }
            Attack::AnotherSession => {
                let (_, html) = page(&op, &op.signed_in, &user_code).await;
                let ticket = ticket_of(&html).unwrap();
                let (other, _) = fresh_session(&op).await;
                let r = answer(&op, &other, &ticket, "allow").await;
                assert_eq!(r.0, 403, "{name}: {}", r.1);
                seen.page(&r);
                // Not signed in at all: refused too.
                let anonymous = reqwest::Client::new();
                let r = answer(&op, &anonymous, &ticket, "allow").await;
                assert_eq!(r.0, 403, "{name}: {}", r.1);
                seen.page(&r);
                let r = poll(&op, TV, &device_code).await;
                expect(&r, "authorization_pending");
                seen.token(&r);
            }
            Attack::UserCodeAgain => {
                let (status, _) = decide(&op, &op.signed_in, &user_code, "allow").await;
                assert_eq!(status, 200, "{name}");
                let r = page(&op, &op.signed_in, &user_code).await;
                assert_eq!(r.0, 409, "{name}: {}", r.1);
                assert!(ticket_of(&r.1).is_none(), "{name}");
                seen.page(&r);
                let (other, _) = fresh_session(&op).await;
                let r = page(&op, &other, &user_code).await;
                assert_eq!(r.0, 409, "{name}: {}", r.1);
                seen.page(&r);
            }
            Attack::Forged => {
                let mut altered = device_code.clone().into_bytes();
                let at = altered.len() / 2;
                altered[at] = if altered[at] == b'A' { b'B' } else { b'A' };
                let altered = String::from_utf8(altered).unwrap();
                for code in [altered.as_str(), "", "x", &"A".repeat(5000)] {
                    let r = poll(&op, TV, code).await;
                    assert_eq!(r.0, 400, "{name}: {}", r.1);
                    seen.token(&r);
                }
                // A made-up page answer.
                let r = answer(&op, &op.signed_in, "not-a-ticket", "allow").await;
                assert_eq!(r.0, 400, "{name}");
                seen.page(&r);
                let r = poll(&op, TV, &device_code).await;
                expect(&r, "authorization_pending");
            }
            Attack::Expired => {
                // A device authorization as the provider makes one, ten minutes old.
                let now = time::OffsetDateTime::now_utc().unix_timestamp();
                let request = json!({
                    "id": "expired-device-authorization",
                    "client_id": TV,
                    "scopes": ["openid"],
                    "expires_at": now - 1,
                });
                let sealed = op
                    .auth
                    .config()
                    .jwt()
                    .encode(
                        request.as_object().unwrap(),
                        "authcore.oidc-provider.device",
                        3600,
                    )
                    .unwrap();
                op.auth
                    .config()
                    .single_use()
                    .put(
                        "oidc-provider-device-request",
                        "BBBBBBBB",
                        &request.to_string(),
                        Duration::from_secs(600),
                    )
                    .await
                    .unwrap();
                let r = poll(&op, TV, &sealed).await;
                expect(&r, "expired_token");
                seen.token(&r);
                let r = page(&op, &op.signed_in, "bbbb-bbbb").await;
                assert_eq!(r.0, 404, "{name}: {}", r.1);
                assert!(ticket_of(&r.1).is_none(), "{name}");
                seen.page(&r);
            }
            Attack::ClientNotAllowed => {
                let (status, body) = post(
                    &op,
                    "/oidc/device",
                    Some(("rp", crate::openid_provider::RP_SECRET)),
                    &[("scope", "openid")],
                )
                .await;
                assert_eq!(
                    (status, body["error"].as_str()),
                    (400, Some("unauthorized_client")),
                    "{body}"
                );
                seen.token(&(status, body));
                let (status, body) = post(
                    &op,
                    "/oidc/device",
                    Some(("console", "wrong-secret-0123456789abcdef0123456789")),
                    &[("scope", "openid")],
                )
                .await;
                assert_eq!(
                    (status, body["error"].as_str()),
                    (401, Some("invalid_client")),
                    "{body}"
                );
                seen.token(&(status, body));
                let r = post(
                    &op,
                    "/oidc/token",
                    Some(("console", "wrong-secret-0123456789abcdef0123456789")),
                    &[("grant_type", GRANT), ("device_code", &device_code)],
                )
                .await;
                assert_eq!(r.0, 401, "{name}: {}", r.1);
                seen.token(&r);
                // A scope the client may not ask for.
                let (status, body) = post(
                    &op,
                    "/oidc/device",
                    Some(("console", CONSOLE_SECRET)),
                    &[("scope", "openid offline_access")],
                )
                .await;
                assert_eq!(
                    (status, body["error"].as_str()),
                    (400, Some("invalid_scope")),
                    "{body}"
                );
                seen.token(&(status, body));
            }
            Attack::BannedUser => {
                // Allowed, then banned: the poll is refused.
                let (status, _) = decide(&op, &op.signed_in, &user_code, "allow").await;
                assert_eq!(status, 200, "{name}");
                let (early_code, early_user_code) =
                    codes(&device_authorization(&op, TV, "openid email").await);
                let (_, html) = page(&op, &op.signed_in, &early_user_code).await;
                let ticket = ticket_of(&html).unwrap();
                let ban = UserBan {
                    reason: "a test".into(),
                    at: time::OffsetDateTime::now_utc(),
                    until: None,
                    by: None,
                };
                let directory = (&op.database as &dyn Adapter).user_directory().unwrap();
                assert!(directory.set_user_ban(&demo.id, Some(&ban)).await.unwrap());
                let r = poll(&op, TV, &device_code).await;
                expect(&r, "invalid_grant");
                seen.token(&r);
                // The page seen before the ban, allowed after it: refused, and the device
                // hears access_denied.
                let r = answer(&op, &op.signed_in, &ticket, "allow").await;
                assert_eq!(r.0, 403, "{name}: {}", r.1);
                seen.page(&r);
                let r = poll(&op, TV, &early_code).await;
                expect(&r, "access_denied");
                seen.token(&r);
                // A new code: the page refuses the banned user.
                let (_, fresh) = codes(&device_authorization(&op, TV, "openid").await);
                let r = page(&op, &op.signed_in, &fresh).await;
                assert!(matches!(r.0, 302 | 403), "{name}: {} {}", r.0, r.1);
                assert!(ticket_of(&r.1).is_none(), "{name}");
                seen.page(&r);
            }
        }
        seen.nothing_issued_or_leaked(&name, &[&demo.id, "demo@example.com", &device_code]);
    }
}

/// The `i`th of a series of user codes of the alphabet that are not `user_code`.
fn wrong_code(i: u32, user_code: &str) -> String {
    let guess: String = format!("{i:08}")
        .bytes()
        .map(|b| char::from(b"BCDFGHJKLM"[usize::from(b - b'0')]))
        .collect();
    assert_ne!(guess, user_code.replace('-', ""));
    guess
}

/// User codes cannot be guessed: after 20 lookups from one address (and one user) in a
/// quarter of an hour, lookups are refused, the right code included, and nothing is shown
/// of any request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guessing_user_codes_is_limited() {
    let op = start_with(&clients()).await;
    let (device_code, user_code) = codes(&device_authorization(&op, TV, "openid email").await);
    let (browser, _) = fresh_session(&op).await;
    let mut statuses = Vec::new();
    for i in 0..25 {
        let (status, html) = page(&op, &browser, &wrong_code(i, &user_code)).await;
        assert!(ticket_of(&html).is_none(), "{html}");
        statuses.push(status);
    }
    assert_eq!(statuses[..20], [404; 20], "{statuses:?}");
    assert_eq!(statuses[20..], [429; 5], "{statuses:?}");
    // The right code now: refused as well, and no request shown.
    let (status, html) = page(&op, &browser, &user_code).await;
    assert_eq!(status, 429, "{html}");
    assert!(
        ticket_of(&html).is_none() && !html.contains("The TV app"),
        "{html}"
    );
    let (status, body) = poll(&op, TV, &device_code).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("authorization_pending")),
        "{body}"
    );
}

/// Only wrong codes count against the lookup limits (per address, per user and over all
/// lookups): a user who enters their right code again and again is not locked out, and
/// the limits then still stop a guesser after 20 wrong ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn right_user_codes_do_not_use_up_the_lookup_limits() {
    let op = start_with(&clients()).await;
    let (_, user_code) = codes(&device_authorization(&op, TV, "openid email").await);
    let (browser, _) = fresh_session(&op).await;
    for i in 0..30 {
        let (status, html) = page(&op, &browser, &user_code).await;
        assert_eq!(status, 200, "lookup {i}: {html}");
        assert!(ticket_of(&html).is_some(), "lookup {i}");
    }
    let mut statuses = Vec::new();
    for i in 0..21 {
        let (status, html) = page(&op, &browser, &wrong_code(i, &user_code)).await;
        assert!(ticket_of(&html).is_none(), "{html}");
        statuses.push(status);
    }
    assert_eq!(statuses[..20], [404; 20], "{statuses:?}");
    assert_eq!(statuses[20], 429, "{statuses:?}");
    let (status, html) = page(&op, &browser, &user_code).await;
    assert_eq!(status, 429, "locked, the right code too: {html}");
}

/// Starting device authorizations is limited per client address: a public client's id
/// alone authenticates it, and each start keeps a pending request in the shared store.
/// After 30 starts from one address in a quarter of an hour the 31st gets `429 slow_down`
/// and no codes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_flooding_the_device_endpoint_is_limited() {
    let op = start_with(&clients()).await;
    for _ in 0..30 {
        device_authorization(&op, TV, "openid email").await;
    }
    let (basic, mut form) = auth_of(TV);
    form.push(("scope", "openid email"));
    let (status, body) = post(&op, "/oidc/device", basic, &form).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (429, Some("slow_down")),
        "{body}"
    );
    assert!(
        body.get("device_code").is_none() && body.get("user_code").is_none(),
        "{body}"
    );
}

/// The user's page in headless Chromium: the verification URI sends a person who is not
/// signed in to sign in and back; the code typed as people type it is found; the page
/// names the app and what it will see, is legible in light and dark (WCAG AA), fits 320 px
/// and meets its CSP; allowed, the device's poll gets its tokens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browser_device_page_signs_in_and_allows_a_device() {
    let op = start_with(&clients()).await;
    let (device_code, user_code) = codes(&device_authorization(&op, TV, "openid email").await);
    let dir = fresh_dir();
    let shots = browser::screenshot_dir(&dir);
    let steps = browser::run(
        "device.mjs",
        &[&op.base, &user_code, shots.to_str().unwrap()],
        Duration::from_secs(120),
    )
    .await;
    let step = |name: &str| browser::step(&steps, name, "device page").clone();
    assert!(
        step("sign-in-page")["url"]
            .as_str()
            .unwrap()
            .contains("/auth/signin?callbackUrl=%2Foidc%2Fdevice%2Fverify"),
        "{steps:?}"
    );
    let entry = step("entry");
    assert!(
        entry["url"]
            .as_str()
            .unwrap()
            .ends_with("/oidc/device/verify"),
        "{entry}"
    );
    assert_eq!(entry["heading"], "Connect a device", "{entry}");
    let confirm = step("confirm");
    assert_eq!(confirm["status"], 200, "{confirm}");
    assert_eq!(confirm["heading"], "Sign The TV app in?", "{confirm}");
    let text = browser::text(&confirm, "text");
    assert!(
        text.contains(&user_code) && text.contains("your email address"),
        "{confirm}"
    );
    assert_eq!(confirm["overflow"], 0, "{confirm}");
    for c in steps.iter().filter(|s| s["step"] == "contrast") {
        browser::assert_wcag_aa(&c["contrast"], &c.to_string());
    }
    let allowed = step("allowed");
    assert_eq!(allowed["heading"], "Device connected", "{allowed}");
    assert_eq!(allowed["violations"], json!([]), "{allowed}");
    assert_eq!(allowed["pageErrors"], json!([]), "{allowed}");
    let (status, tokens) = poll(&op, TV, &device_code).await;
    assert_eq!(status, 200, "{tokens}");
    assert_eq!(
        payload(tokens["id_token"].as_str().unwrap())["email"],
        "demo@example.com"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// A store that cannot say whether the user may use the client when they press "Allow"
/// (here the organizations' members, for a client open to one organization): the answer is
/// `503`, the user code is not spent and nothing is decided, so the device keeps waiting;
/// once the store is back, the same page's "Allow" connects the device.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_outage_at_allow_spends_no_user_code() {
    let op = start_with(&format!(
        r#"{}
[[oidc_provider.clients]]
id = "acme-tv"
grant_types = ["{GRANT}"]
allowed_organizations = ["acme"]

[organizations]
enabled = true
"#,
        clients()
    ))
    .await;
    let demo = demo_user(&op).await;
    op.auth
        .create_organization_for(&demo.id, "Acme", Some("acme"))
        .await
        .unwrap();
    let (device_code, user_code) =
        codes(&device_authorization(&op, "acme-tv", "openid email").await);
    let (browser, _) = fresh_session(&op).await;
    let (status, html) = page(&op, &browser, &user_code).await;
    assert_eq!(status, 200, "{html}");
    let ticket = ticket_of(&html).unwrap_or_else(|| panic!("no ticket: {html}"));

    // The members' table gone, as a database that cannot answer.
    let db = format!("sqlite://{}", op.dir.join("op.db").display());
    let rename = async |sql: &'static str| {
        let mut conn = <sqlx::SqliteConnection as sqlx::Connection>::connect(&db)
            .await
            .unwrap();
        sqlx::query(sql).execute(&mut conn).await.unwrap();
    };
    rename("ALTER TABLE organization_members RENAME TO organization_members_away").await;
    let (status, html) = answer(&op, &browser, &ticket, "allow").await;
    assert_eq!(status, 503, "{html}");
    assert!(!html.contains("Device connected"), "{html}");
    let (status, body) = poll(&op, "acme-tv", &device_code).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("authorization_pending")),
        "nothing decided: {body}"
    );

    // Back: the same page's answer is taken.
    rename("ALTER TABLE organization_members_away RENAME TO organization_members").await;
    let (status, html) = answer(&op, &browser, &ticket, "allow").await;
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("Device connected"), "{html}");
    // The interval since the poll above (a poll sooner hears slow_down).
    tokio::time::sleep(Duration::from_secs(6)).await;
    let (status, body) = poll(&op, "acme-tv", &device_code).await;
    assert_eq!(status, 200, "{body}");
    assert!(body["access_token"].is_string(), "{body}");
}
