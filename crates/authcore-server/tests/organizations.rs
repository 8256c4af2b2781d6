//! Organizations in the standalone server, with the configuration of
//! `docs/manual/organizations-server.md` as written (the environment adds the test's
//! database, secret, URL, signing key and mail relay): the operator's `create-organization`
//! and `invite` commands, run as the binary, place users in organizations; the gateway's
//! rules admit them by membership, role and permission in one organization only, and tell
//! the application their organizations in a header and in the signed identity; sign-up by
//! invitation lets in only an invited address; bad settings stop the start with their key.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use authcore::adapter::{Adapter, OrganizationStore};
use authcore::env::Env;
use authcore_server::{ConfigFile, ServerConfig};
use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::gateway::{Via, ask, header_of, sub_request};
use crate::password_self_service::next_mail;
use crate::sign_in_methods::ask_for_link;
use crate::support::TestDir;
use crate::support::binary::{self, ServerProcess};
use crate::support::in_memory::{self, CookieJar, ORIGIN, send, sign_in_with};
use crate::support::smtp::SmtpServer;
use crate::support::sso;

const PASSWORD: &str = "a horse, a battery and a staple";

/// The fenced block after `<!-- organizations-test: <name> -->` in the chapter.
fn documented(name: &str) -> String {
    crate::support::documented(
        "manual/organizations-server.md",
        &format!("organizations-test: {name}"),
    )
}

/// The documented configuration in `dir`, and the variables that give it the test's
/// database, secret, URL, signing key and mail relay (and password accounts, with which
/// the test's users sign in).
struct Site {
    config: PathBuf,
    vars: Vec<(String, String)>,
}

impl Site {
    fn new(dir: &Path, smtp_port: u16) -> Site {
        let key = dir.join("identity.pem");
        let made = Command::new("openssl")
            .args(["genpkey", "-algorithm", "ed25519", "-out"])
            .arg(&key)
            .status()
            .unwrap();
        assert!(made.success());
        let config = dir.join("authcore.toml");
        std::fs::write(&config, documented("server")).unwrap();
        let vars = [
            (
                "AUTHCORE_DATABASE_URL",
                format!("sqlite://{}?mode=rwc", dir.join("orgs.db").display()),
            ),
            (
                "AUTH_SECRET",
                "an organizations test secret, long enough".to_owned(),
            ),
            ("AUTH_URL", format!("{ORIGIN}/auth")),
            ("AUTHCORE_PASSWORDS", "on".to_owned()),
            ("AUTHCORE_GATEWAY_SIGNING_KEYS", key.display().to_string()),
            ("SMTP_URL", format!("smtp://127.0.0.1:{smtp_port}")),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        Site { config, vars }
    }

    fn env(&self) -> Env {
        Env::from_pairs(self.vars.iter().map(|(k, v)| (k.as_str(), v.as_str())))
    }

    /// `authcore-server <args> --config <the chapter's file>` with the site's variables and
    /// `stdin`: whether it succeeded, and what it printed.
    fn run(&self, args: &[&str], stdin: &str) -> (bool, String) {
        let config = self.config.display().to_string();
        let mut command = args.to_vec();
        command.extend(["--config", config.as_str()]);
        let vars: Vec<(&str, &str)> = self
            .vars
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        binary::run(&command, &vars, stdin)
    }

    /// [`Site::run`], which must succeed.
    fn ok(&self, args: &[&str]) -> String {
        let (ok, text) = self.run(args, "");
        assert!(ok, "{args:?}: {text}");
        text
    }
}

/// The token of the invitation link an `invite` printed.
fn printed_token(output: &str) -> String {
    let link = output
        .lines()
        .find(|l| l.starts_with(ORIGIN) && l.contains("/auth/invitation?token="))
        .unwrap_or_else(|| panic!("no link in {output}"));
    link.split("token=").nth(1).unwrap().to_owned()
}

/// The claims of the identity JWT of a forward-auth answer (verified elsewhere).
fn identity_claims(res: &axum::response::Response) -> Value {
    sso::claims(header_of(res, "x-auth-request-jwt").unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chapters_site_with_the_operators_commands() {
    let dir = TestDir::new("orgs-site");
    let mut mail = SmtpServer::start().await;
    let site = Site::new(&dir.0, mail.port);

    // The operator makes the users (here with passwords), the organizations and the
    // invitations, as the chapter does; each invitation is mailed and its link printed.
    for email in [
        "ada@example.com",
        "bob@example.com",
        "carol@example.com",
        "eve@example.com",
    ] {
        let (ok, text) = site.run(&["add-user", email], PASSWORD);
        assert!(ok, "{email}: {text}");
    }
    let made = site.ok(&[
        "create-organization",
        "Acme Corp",
        "--slug",
        "acme",
        "--owner",
        "ada@example.com",
    ]);
    assert!(made.contains("slug acme"), "{made}");
    let made = site.ok(&["create-organization", "Beta", "--owner", "ada@example.com"]);
    assert!(made.contains("slug beta"), "{made}");
    let mut tokens = Vec::new();
    for (email, args) in [
        (
            "bob@example.com",
            &["--organization", "acme", "--role", "admin"][..],
        ),
        ("carol@example.com", &["--organization", "acme"][..]),
        (
            "eve@example.com",
            &["--organization", "beta", "--role", "admin"][..],
        ),
    ] {
        let mut command = vec!["invite", email];
        command.extend_from_slice(args);
        let printed = site.ok(&command);
        assert!(printed.contains(", mailed;"), "{printed}");
        let token = printed_token(&printed);
        let message = next_mail(&mut mail, email, "You are invited to join").await;
        assert!(
            message["text"].as_str().unwrap().contains(&token),
            "the mailed link is the printed one: {message}"
        );
        tokens.push((email, token));
    }
    // What the commands refuse, with their reasons and status 1.
    for (args, says) in [
        (
            &[
                "create-organization",
                "Acme",
                "--slug",
                "acme",
                "--owner",
                "ada@example.com",
            ][..],
            "another organization has this slug",
        ),
        (
            &[
                "create-organization",
                "Gamma",
                "--owner",
                "nobody@example.com",
            ],
            "no user has the address nobody@example.com",
        ),
        (&["create-organization", "Gamma"], "needs --owner"),
        (
            &[
                "create-organization",
                "Gamma",
                "--slug",
                "Gamma",
                "--owner",
                "ada@example.com",
            ],
            "slug \"Gamma\"",
        ),
        (
            &["invite", "x@example.com", "--organization", "nope"],
            "no organization has the slug \"nope\"",
        ),
        (
            &["invite", "x@example.com", "--role", "admin"],
            "--role needs --organization",
        ),
        (
            &[
                "invite",
                "x@example.com",
                "--organization",
                "acme",
                "--role",
                "ghost",
            ],
            "no role \"ghost\"",
        ),
        (&["invite", "not an address"], "not an email address"),
        (&["invite"], "needs the address to invite"),
        (
            &[
                "invite",
                "x@example.com",
                "--organization",
                "acme",
                "--organization",
                "beta",
            ],
            "--organization is given twice",
        ),
    ] {
        let (ok, text) = site.run(args, "");
        assert!(!ok, "{args:?}: {text}");
        assert!(text.contains(says), "{args:?}: {text}");
    }

    let server = ServerConfig::from_file(&site.config, site.env())
        .unwrap()
        .build()
        .await
        .unwrap();
    let app = server.router();
    let db = server.database().unwrap();
    // Each invited user signs in and accepts with the token of the printed link.
    for (email, token) in &tokens {
        let user = db.get_user_by_email(email).await.unwrap().unwrap();
        server
            .auth()
            .accept_invitation(&user.id, token)
            .await
            .unwrap_or_else(|e| panic!("{email}: {e}"));
    }

    let mut jars = Vec::new();
    for who in ["ada", "bob", "carol", "eve"] {
        let mut jar = CookieJar::default();
        let email = format!("{who}@example.com");
        let res = sign_in_with(&app, &mut jar, "password", &email, PASSWORD).await;
        assert_eq!(res.status(), StatusCode::FOUND, "{who}");
        assert!(jar.has("authjs.session-token"), "{who}");
        jars.push((who, jar));
    }
    let mut signed_out = CookieJar::default();
    use StatusCode as S;
    let (allow, forbidden) = (S::OK, S::FORBIDDEN);
    // The chapter's table, row by row.
    for (who, admin, billing, elsewhere, organizations) in [
        ("bob", allow, allow, allow, "acme:admin"),
        ("carol", forbidden, forbidden, allow, "acme:member"),
        ("ada", forbidden, allow, allow, "acme:owner,beta:owner"),
        ("eve", forbidden, forbidden, forbidden, "beta:admin"),
    ] {
        let jar = &mut jars.iter_mut().find(|(w, _)| *w == who).unwrap().1;
        for (path, want) in [
            ("/admin/users", admin),
            ("/billing/", billing),
            ("/", elsewhere),
        ] {
            let url = format!("https://acme.example.com{path}");
            let res = ask(&app, &url, Via::Nginx, jar).await;
            assert_eq!(res.status(), want, "{who} {path}");
            if want == allow {
                assert_eq!(
                    header_of(&res, "x-auth-request-organizations"),
                    Some(organizations),
                    "{who}"
                );
                let claims = identity_claims(&res);
                let want_claim: Vec<Value> = organizations
                    .split(',')
                    .map(|o| {
                        let (slug, roles) = o.split_once(':').unwrap();
                        json!({"slug": slug, "roles": roles.split('+').collect::<Vec<_>>()})
                    })
                    .collect();
                assert_eq!(
                    claims["organizations"],
                    json!(want_claim),
                    "{who}: {claims}"
                );
            }
        }
        // Elsewhere (the default, signed in) every user passes, with their organizations.
        let res = ask(&app, "https://other.example.com/", Via::Nginx, jar).await;
        assert_eq!(res.status(), allow, "{who}");
        assert_eq!(
            header_of(&res, "x-auth-request-organizations"),
            Some(organizations),
            "{who}"
        );
    }
    for path in ["/admin/", "/billing/", "/"] {
        let url = format!("https://acme.example.com{path}");
        let res = ask(&app, &url, Via::Nginx, &mut signed_out).await;
        assert_eq!(res.status(), S::UNAUTHORIZED, "{path}");
        let res = ask(&app, &url, Via::Caddy, &mut signed_out).await;
        assert_eq!(res.status(), S::FOUND, "{path}");
        assert!(
            header_of(&res, "location")
                .unwrap()
                .starts_with(&format!("{ORIGIN}/auth/signin?callbackUrl=")),
            "{path}"
        );
    }

    // A client's own organizations header is no input: the answer carries authcore's value
    // (which the proxy copies over it), whatever the client sent.
    let carol = &mut jars.iter_mut().find(|(w, _)| *w == "carol").unwrap().1;
    for forged in ["acme:admin", "acme:owner,beta:owner", ""] {
        let req = sub_request(
            "https://acme.example.com/admin/",
            Via::Caddy,
            carol,
            &[
                ("X-Auth-Request-Organizations", forged),
                ("x_auth_request_organizations", forged),
            ],
        );
        assert_eq!(send(&app, req, carol).await.status(), forbidden, "{forged}");
        let req = sub_request(
            "https://acme.example.com/",
            Via::Caddy,
            carol,
            &[("X-Auth-Request-Organizations", forged)],
        );
        let res = send(&app, req, carol).await;
        assert_eq!(res.status(), allow);
        assert_eq!(
            header_of(&res, "x-auth-request-organizations"),
            Some("acme:member")
        );
    }

    // Programs: an organization's API key passes the gateway as its maker within the key's
    // permissions, in the key's organization only; a refused key is nobody (never the cookie
    // beside it).
    let (bob_key, bill_key) = {
        let bob = &jars.iter().find(|(w, _)| *w == "bob").unwrap().1;
        let mut headers = axum::http::HeaderMap::new();
        headers.insert(axum::http::header::COOKIE, bob.header().parse().unwrap());
        let me = server
            .auth()
            .current_session(&format!("{ORIGIN}/").parse().unwrap(), &headers)
            .await
            .unwrap();
        let acme = server
            .database()
            .unwrap()
            .get_organization_by_slug("acme")
            .await
            .unwrap()
            .unwrap();
        let make = |perms: &'static [&'static str]| {
            let (auth, me, acme) = (server.auth().clone(), me.clone(), acme.id.clone());
            async move {
                let perms: Vec<String> = perms.iter().map(|p| (*p).to_owned()).collect();
                auth.create_api_key(&me, Some(&acme), "ci", &perms, None)
                    .await
                    .unwrap()
                    .secret
                    .expose()
                    .to_owned()
            }
        };
        (make(&["member:*"]).await, make(&["billing:read"]).await)
    };
    let nobody = CookieJar::default();
    for (key, path, want, told) in [
        (bob_key.as_str(), "/", allow, true),
        (bob_key.as_str(), "/billing/", forbidden, false),
        (bob_key.as_str(), "/admin/users", forbidden, false),
        (bill_key.as_str(), "/billing/", allow, true),
        (bill_key.as_str(), "/admin/users", forbidden, false),
    ] {
        let url = format!("https://acme.example.com{path}");
        let auth_header = format!("Bearer {key}");
        let req = sub_request(
            &url,
            Via::Nginx,
            &nobody,
            &[
                ("authorization", auth_header.as_str()),
                ("accept", "application/json"),
            ],
        );
        let res = send(&app, req, &mut CookieJar::default()).await;
        assert_eq!(res.status(), want, "{path} with a key");
        if told {
            assert!(header_of(&res, "x-auth-request-user").is_some(), "{path}");
        }
    }
    // A revoked, forged or malformed key, even beside Bob's own cookie: nobody.
    let bob = &jars.iter().find(|(w, _)| *w == "bob").unwrap().1;
    let forged = format!("{}AAAA", &bob_key[..bob_key.len() - 4]);
    for key in [
        forged.as_str(),
        "ak_0123456789abcdef01234567_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "ak_x",
    ] {
        let auth_header = format!("Bearer {key}");
        let req = sub_request(
            "https://acme.example.com/",
            Via::Nginx,
            bob,
            &[
                ("authorization", auth_header.as_str()),
                ("accept", "application/json"),
            ],
        );
        let res = send(&app, req, &mut CookieJar::default()).await;
        assert_eq!(res.status(), S::UNAUTHORIZED, "{key}");
        assert!(header_of(&res, "x-auth-request-user").is_none());
    }

    // A member who is removed is judged by the new state at the next request.
    let ada = db
        .get_user_by_email("ada@example.com")
        .await
        .unwrap()
        .unwrap();
    let carol_id = db
        .get_user_by_email("carol@example.com")
        .await
        .unwrap()
        .unwrap()
        .id;
    let acme = server
        .auth()
        .organizations_of(&ada.id)
        .await
        .unwrap()
        .into_iter()
        .find(|m| m.organization.slug == "acme")
        .unwrap()
        .organization;
    server
        .auth()
        .remove_member(&ada.id, &acme.id, &carol_id)
        .await
        .unwrap();
    let carol = &mut jars.iter_mut().find(|(w, _)| *w == "carol").unwrap().1;
    let res = ask(&app, "https://acme.example.com/", Via::Nginx, carol).await;
    assert_eq!(res.status(), forbidden);

    // Sign-up by invitation: a stranger asking for a magic link gets the same answer and no
    // account (and no mail: the next one is the invitation below); once invited by the
    // operator, the address signs up with a magic link.
    let stranger = ask_for_link(&app, &mut CookieJar::default(), "stranger@example.com").await;
    assert!(
        stranger.ends_with("/auth/verify-request?provider=email&type=email"),
        "{stranger}"
    );
    assert!(
        db.get_user_by_email("stranger@example.com")
            .await
            .unwrap()
            .is_none()
    );
    let printed = site.ok(&["invite", "dave@example.com"]);
    assert!(
        printed.contains("dave@example.com: invited to sign up until"),
        "{printed}"
    );
    next_mail(&mut mail, "dave@example.com", "You are invited to join").await;
    assert!(
        db.get_user_by_email("dave@example.com")
            .await
            .unwrap()
            .is_none()
    );
    let mut dave = CookieJar::default();
    let to = ask_for_link(&app, &mut dave, "dave@example.com").await;
    assert_eq!(to, stranger, "the same answer, invited or not");
    let message = next_mail(&mut mail, "dave@example.com", "Sign in to").await;
    let link = sso::link_in(&message, "/auth/callback/email");
    let res = in_memory::get(&app, link.strip_prefix(ORIGIN).unwrap(), &mut dave).await;
    assert_eq!(res.status(), StatusCode::FOUND);
    assert!(dave.has("authjs.session-token"));
    let session: Value = serde_json::from_str(
        &in_memory::text(in_memory::get(&app, "/auth/session", &mut dave).await).await,
    )
    .unwrap();
    assert_eq!(session["user"]["email"], "dave@example.com", "{session}");
    assert!(
        db.get_user_by_email("dave@example.com")
            .await
            .unwrap()
            .is_some()
    );
    // The invitation to sign up is used: it lets in nobody else later.
    let used = server.auth().invitations(None, None).await.unwrap();
    assert!(
        used.iter()
            .filter(|i| i.email == "dave@example.com")
            .all(|i| i.status != authcore::adapter::InvitationStatus::Pending),
        "{used:?}"
    );
}

/// `import-keycloak`, run as the binary on a realm export: Keycloak's users sign in with
/// their Keycloak passwords (PBKDF2, rehashed to argon2id at that first sign-in) and keep
/// their groups; the export's disabled user and user without an address are named and left
/// out; a second run changes nothing.
#[tokio::test]
async fn keycloak_users_sign_in_with_their_keycloak_passwords() {
    let dir = TestDir::new("orgs-keycloak");
    let mail = SmtpServer::start().await;
    let site = Site::new(&dir.0, mail.port);
    // Keycloak's PBKDF2-SHA256 (27,500 iterations) of PASSWORD with salt
    // `0123456789abcdef`, as `kc.sh export` writes it.
    let credential = json!({
        "type": "password",
        "secretData": json!({
            "value": "Dh6PcicJJZcc/6hwTzTTvpnfkzxdt88BKyH0mXSh+ehtonhL17epCKw0amJFle1Z+Jip68G/yYN0dB5asWMyBA==",
            "salt": "MDEyMzQ1Njc4OWFiY2RlZg==",
            "additionalParameters": {}
        }).to_string(),
        "credentialData": "{\"hashIterations\":27500,\"algorithm\":\"pbkdf2-sha256\",\"additionalParameters\":{}}"
    });
    let realm = json!({
        "realm": "acme",
        "users": [
            { "username": "kim", "email": "kim@example.com", "emailVerified": true,
              "firstName": "Kim", "enabled": true, "credentials": [credential],
              "groups": ["/admins"] },
            { "username": "off", "email": "off@example.com", "enabled": false },
            { "username": "service-account-ci", "enabled": true }
        ]
    });
    let export = dir.0.join("realm.json");
    std::fs::write(&export, realm.to_string()).unwrap();
    let export = export.display().to_string();
    let printed = site.ok(&["import-keycloak", &export]);
    assert!(
        printed.contains("1 users made, 0 matched by address, 1 passwords imported, 2 skipped"),
        "{printed}"
    );
    assert!(
        printed.contains("skipped off: disabled in Keycloak"),
        "{printed}"
    );
    assert!(printed.contains("skipped service-account-ci: no valid email address"));
    let again = site.ok(&["import-keycloak", &export]);
    assert!(
        again.contains("0 users made, 1 matched by address, 0 passwords imported"),
        "{again}"
    );
    let (ok, text) = site.run(&["import-keycloak", "/nonexistent/realm.json"], "");
    assert!(!ok && text.contains("/nonexistent/realm.json"), "{text}");

    let server = ServerConfig::from_file(&site.config, site.env())
        .unwrap()
        .build()
        .await
        .unwrap();
    let app = server.router();
    let mut jar = CookieJar::default();
    let res = sign_in_with(
        &app,
        &mut jar,
        "password",
        "kim@example.com",
        "wrong password!!",
    )
    .await;
    assert!(!jar.has("authjs.session-token"), "{:?}", res.headers());
    let res = sign_in_with(&app, &mut jar, "password", "kim@example.com", PASSWORD).await;
    assert_eq!(res.status(), StatusCode::FOUND);
    assert!(jar.has("authjs.session-token"));
    let db = server.database().unwrap();
    let kim = db
        .get_user_by_email("kim@example.com")
        .await
        .unwrap()
        .unwrap();
    let hash = authcore::adapter::PasswordStore::get_password_hash(db, &kim.id)
        .await
        .unwrap()
        .unwrap();
    assert!(
        hash.starts_with("$argon2id$"),
        "rehashed at the sign-in: {hash}"
    );
    assert_eq!(
        authcore::adapter::UserGroupsStore::get_user_groups(db, &kim.id)
            .await
            .unwrap(),
        ["admins"]
    );
    assert!(
        db.get_user_by_email("off@example.com")
            .await
            .unwrap()
            .is_none()
    );
}

/// The chapter's configuration starts the binary, which says what is on as the chapter
/// shows it; with the chapter's bad role, it stops with the chapter's message.
#[test]
fn the_binary_says_what_is_on_and_stops_on_a_bad_role() {
    let dir = TestDir::new("orgs-binary");
    let site = Site::new(&dir.0, 25);
    let vars: Vec<(&str, &str)> = site
        .vars
        .iter()
        .filter(|(k, _)| k != "SMTP_URL")
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .chain([("AUTHCORE_SIGN_UP", "invite")])
        .collect();
    let mut server = ServerProcess::spawn(&vars, Some(&documented("server")));
    server.base_url();
    for line in documented("start-up").lines() {
        let seen = server.wait_for_line(|l| l == line, Duration::from_secs(10));
        assert!(seen.is_some(), "{line:?} not in:\n{}", server.output());
    }
    server.terminate();
    let _ = server.wait_for_exit(Duration::from_secs(10));

    let config = documented("server").replace(
        "billing = [\"billing:read\", \"billing:write\"]",
        "Billing = [\"billing:read\", \"billing:write\"]",
    );
    let mut server = ServerProcess::spawn(&vars, Some(&config));
    let status = server.wait_for_exit(Duration::from_secs(20));
    assert!(!status.success(), "{}", server.output());
    let shown = documented("bad-role");
    assert!(
        server.output().contains(shown.trim()),
        "{}\nwant: {shown}",
        server.output()
    );
}

#[test]
fn the_settings_from_the_file_and_the_environment() {
    use authcore::SignUpPolicy;
    let read = |file: &str, vars: &[(&str, &str)]| {
        ServerConfig::resolve(
            ConfigFile::parse(file).unwrap(),
            Env::from_pairs(vars.iter().copied()),
        )
    };
    let on = "[organizations]\nenabled = true\n";
    let week = Duration::from_secs(7 * 86_400);
    for (file, vars, want) in [
        ("", vec![], None),
        ("[organizations]\n", vec![], None),
        ("[organizations]\nenabled = false\n", vec![], None),
        (on, vec![], Some((true, week, "admin, member, owner"))),
        (
            "",
            vec![("AUTHCORE_ORGANIZATIONS", "on")],
            Some((true, week, "admin, member, owner")),
        ),
        (on, vec![("AUTHCORE_ORGANIZATIONS", "off")], None),
        (
            "[organizations]\nenabled = true\nusers_create = false\ninvitation_days = 2\n[organizations.roles]\nbilling = [\"billing:*\"]\nmember = [\"project:read\"]\n",
            vec![],
            Some((
                false,
                Duration::from_secs(2 * 86_400),
                "admin, billing, member, owner",
            )),
        ),
        (
            "[organizations]\nenabled = true\nusers_create = false\ninvitation_days = 2\n",
            vec![
                ("AUTHCORE_ORGANIZATIONS_USERS_CREATE", "on"),
                ("AUTHCORE_ORGANIZATIONS_INVITATION_DAYS", "30"),
            ],
            Some((
                true,
                Duration::from_secs(30 * 86_400),
                "admin, member, owner",
            )),
        ),
    ] {
        let got = read(file, &vars).unwrap().organizations.map(|o| {
            let roles = o.roles().unwrap();
            (
                o.users_may_create(),
                o.invitation_lifetime(),
                roles.names().collect::<Vec<_>>().join(", "),
            )
        });
        let want = want.map(|(create, ttl, roles)| (create, ttl, roles.to_owned()));
        assert_eq!(got, want, "{file} {vars:?}");
    }
    let invite = format!("[auth]\nsign_up = \"invite\"\n{on}");
    assert_eq!(read(&invite, &[]).unwrap().sign_up, SignUpPolicy::Invite);
    assert_eq!(
        read(on, &[("AUTHCORE_SIGN_UP", "invite")]).unwrap().sign_up,
        SignUpPolicy::Invite
    );
    let gateway = "[auth]\nurl = \"http://localhost:3000/auth\"\n[gateway]\n[[gateway.rules]]\norganization = \"acme\"\n";
    assert!(read(&format!("{gateway}{on}"), &[]).is_ok());
    for (file, vars, says) in [
        (
            "[organizations]\nenabled = true\n[organizations.roles]\nBilling = [\"billing:read\"]\n".to_owned(),
            vec![],
            "[organizations.roles] Billing: role name \"Billing\"",
        ),
        (
            "[organizations.roles]\nx = [\"billing\"]\n".to_owned(),
            vec![],
            "[organizations.roles] x: role \"x\": permission \"billing\"",
        ),
        (
            "[organizations]\nenabled = true\n[organizations.roles]\nowner = [\"a:b\"]\n".to_owned(),
            vec![],
            "[organizations.roles] owner:",
        ),
        (
            "[organizations]\nenabled = true\n[organizations.roles]\nx = [\"a:*x\"]\n".to_owned(),
            vec![],
            "permission \"a:*x\"",
        ),
        ("[organizations]\ninvitation_days = 0\n".to_owned(), vec![], "invitation_days"),
        ("[organizations]\ninvitation_days = 400\n".to_owned(), vec![], "from 1 to 365"),
        (
            on.to_owned(),
            vec![("AUTHCORE_ORGANIZATIONS_INVITATION_DAYS", "a week")],
            "AUTHCORE_ORGANIZATIONS_INVITATION_DAYS",
        ),
        (on.to_owned(), vec![("AUTHCORE_ORGANIZATIONS_USERS_CREATE", "yes")], "AUTHCORE_ORGANIZATIONS_USERS_CREATE"),
        (
            format!("[server]\ndatabase_url = \"none\"\n{on}"),
            vec![],
            "organizations ([organizations] enabled, AUTHCORE_ORGANIZATIONS) are kept in the database",
        ),
        (
            "[auth]\nsign_up = \"invite\"\n".to_owned(),
            vec![],
            "set [organizations] enabled = true",
        ),
        ("".to_owned(), vec![("AUTHCORE_SIGN_UP", "invite")], "set [organizations] enabled = true"),
        (
            gateway.to_owned(),
            vec![],
            "rules on an organization need organizations on",
        ),
        (
            format!("{gateway}allow_roles = [\"Admin\"]\n{on}"),
            vec![],
            "allow_roles: role name \"Admin\"",
        ),
        (
            "[auth]\nurl = \"http://localhost:3000/auth\"\n[gateway]\n[[gateway.rules]]\nallow_roles = [\"admin\"]\n".to_owned(),
            vec![],
            "allow_roles needs organization",
        ),
        ("[organizations]\nenabled = true\nbogus = 1\n".to_owned(), vec![], "bogus"),
    ] {
        let err = match ConfigFile::parse(&file) {
            Ok(parsed) => ServerConfig::resolve(parsed, Env::from_pairs(vars.iter().copied()))
                .unwrap_err()
                .to_string(),
            Err(e) => e.to_string(),
        };
        assert!(err.contains(says), "{file} {vars:?}: {err}");
    }
}
