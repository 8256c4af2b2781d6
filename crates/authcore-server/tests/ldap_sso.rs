//! Directory users through the single sign-on server: a real OpenLDAP `slapd` (seeded by
//! authcore-ldap's test support: alice in `admins` and `dev`, bob in no group) behind
//! `[ldap]`; a directory user signs in at the server over HTTP, passes the gateway's rule on
//! an LDAP group and is refused by a rule on a group they are not in, with the groups in the
//! identity headers; the OpenID Provider's ID token and userinfo carry the same groups.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};

use crate::support::slapd::{self, Slapd};
use crate::support::sso::{self, Sections, SsoServer, header};

/// `[ldap]` for `slapd` (groups from `memberOf`, or by a search where the overlay is not
/// installed) and the gateway's rules on its groups.
fn directory_and_rules(slapd: &Slapd) -> String {
    let group_base = if slapd.memberof {
        String::new()
    } else {
        format!("group_base_dn = \"{}\"\n", slapd::GROUPS_DN)
    };
    format!(
        r#"
[ldap]
url = "{url}"
bind_dn = "{bind_dn}"
bind_password = "{bind_password}"
base_dn = "{base_dn}"
{group_base}
[[gateway.rules]]
name = "admins"
hosts = ["admin.example.test"]
allow_groups = ["admins"]

[[gateway.rules]]
name = "operators"
hosts = ["ops.example.test"]
allow_groups = ["ops"]
"#,
        url = slapd.ldap_url(),
        bind_dn = slapd::SERVICE_DN,
        bind_password = slapd::SERVICE_PASSWORD,
        base_dn = slapd::BASE_DN,
    )
}

/// The names of a JSON array of groups, sorted (a directory lists them in no set order).
fn sorted(groups: &Value) -> Vec<String> {
    let mut names: Vec<String> = groups
        .as_array()
        .map(|a| a.iter().map(|g| g.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn directory_groups_reach_the_gateway_and_the_app() {
    let directory = Slapd::start();
    let more = directory_and_rules(&directory);
    let server = SsoServer::start(
        Sections {
            auth: "",
            more: &more,
        },
        &[],
    )
    .await;

    // A wrong directory password opens nothing.
    let stranger = server.browser();
    assert!(!stranger.sign_in("ldap", "alice", "not-her-password").await);
    let r = stranger
        .through_gateway("https://admin.example.test/")
        .await;
    assert_eq!(r.status(), 401);

    let alice = server.browser();
    assert!(alice.sign_in("ldap", "alice", "alice-password").await);
    for (url, status) in [
        ("https://admin.example.test/", 200),
        ("https://app.example.test/", 200),
        ("https://ops.example.test/", 403),
    ] {
        let r = alice.through_gateway(url).await;
        assert_eq!(r.status(), status, "{url}");
        if status == 200 {
            assert_eq!(
                header(&r, "x-auth-request-email"),
                Some("alice@example.org")
            );
            let mut groups: Vec<&str> = header(&r, "x-auth-request-groups")
                .unwrap()
                .split(',')
                .collect();
            groups.sort_unstable();
            assert_eq!(groups, ["admins", "dev"], "{url}");
        }
    }

    // bob is in no group: signed in, but not an administrator.
    let bob = server.browser();
    assert!(bob.sign_in("ldap", "bob", "bob-password").await);
    let r = bob.through_gateway("https://app.example.test/").await;
    assert_eq!(r.status(), 200);
    assert_eq!(header(&r, "x-auth-request-email"), Some("bob@example.org"));
    assert_eq!(header(&r, "x-auth-request-groups"), Some(""));
    for url in ["https://admin.example.test/", "https://ops.example.test/"] {
        assert_eq!(bob.through_gateway(url).await.status(), 403, "{url}");
    }

    // The app gets the directory's groups in the ID token and at userinfo.
    for (browser, email, groups) in [
        (&alice, "alice@example.org", vec!["admins", "dev"]),
        (&bob, "bob@example.org", vec![]),
    ] {
        let tokens = browser.app_tokens("openid email groups").await;
        let claims = sso::claims(tokens["id_token"].as_str().unwrap());
        assert_eq!(claims["email"], email, "{claims}");
        assert_eq!(claims["amr"], json!(["pwd"]), "{claims}");
        assert_eq!(sorted(&claims["groups"]), groups, "{claims}");
        let info = server
            .userinfo(tokens["access_token"].as_str().unwrap())
            .await;
        assert_eq!(info["sub"], claims["sub"], "{info}");
        assert_eq!(sorted(&info["groups"]), groups, "{info}");
    }
}
