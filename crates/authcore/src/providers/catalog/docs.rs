//! `docs/providers.md`, generated from the catalogue itself: the test fails when the file
//! is stale; `UPDATE_DOCS=1 cargo test -p authcore providers_md` rewrites it.

use super::{CatalogEntry, OTHER_PRESETS, entries};
use crate::env::Env;
use crate::providers::OAuthProvider;
use crate::types::ProviderType;

/// The preset as documented: required settings as `<key>` placeholders, optional ones at
/// their defaults.
fn documented(entry: &CatalogEntry) -> OAuthProvider {
    let mut pairs = vec![
        (entry.env_var("id"), "<client id>".to_owned()),
        (entry.env_var("secret"), "<client secret>".to_owned()),
    ];
    for s in entry.settings.iter().filter(|s| s.required) {
        pairs.push((entry.env_var(s.key), format!("<{}>", s.key)));
    }
    match entry.build(&Env::from_pairs(pairs)) {
        Ok(p) => p,
        Err(e) => panic!("{}: {e}", entry.id),
    }
}

/// Text for a table cell outside code spans.
fn html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('|', "\\|")
}

fn code(s: &str) -> String {
    format!("`{}`", s.replace('|', "\\|"))
}

/// Issuer (OIDC), or the endpoints (OAuth 2; discovered ones are not listed).
fn where_it_talks(p: &OAuthProvider) -> String {
    let mut parts = Vec::new();
    if let Some(i) = &p.issuer {
        parts.push(format!("issuer {}", code(i)));
    }
    if let Some(w) = &p.well_known {
        parts.push(format!("discovery {}", code(w)));
    }
    for (what, url) in [
        ("authorization", &p.authorization.url),
        ("token", &p.token.url),
        ("userinfo", &p.userinfo.url),
    ] {
        if let Some(u) = url {
            parts.push(format!("{what} {}", code(u)));
        }
    }
    parts.join("<br>")
}

pub(super) fn providers_md() -> String {
    let mut out = String::from(
        "# Provider catalogue\n\n\
         Generated from `authcore::providers::catalog` by its tests (`UPDATE_DOCS=1 cargo test -p authcore providers_md` \
         rewrites it; the test fails when it is stale). Every provider id of `@auth/core` 0.41.3 is here, under the same \
         id and display name; each preset reproduces the Auth.js preset (parameters, checks, client authentication, \
         requests, profile mapping) and signs in end to end in `crates/authcore/tests/catalog_presets.rs`. The same \
         test runs every preset through the installed `@auth/core` too (`interop/catalog-runtime.mjs`, the same options, \
         brand answers, discovery documents, keys and ID token claims) and compares what both send: the discovery \
         request, the authorization redirect (every parameter), the token request and the userinfo requests are equal \
         except where the deviations column says otherwise. Like \
         Auth.js, an authorization endpoint configured without a `scope` asks for `openid profile email`. `netsuite` \
         and `todoist` cannot sign in with `@auth/core` 0.41.3 at all (it answers 500, `InvalidEndpoints`).\n\n\
         Enable one in the standalone server with its variables (`AUTH_<ID>_ID`, `AUTH_<ID>_SECRET` and its settings), or \
         a `[providers.<id>]` section with the same keys (`id`, `secret`, and the settings by key); in code, call \
         `catalog::<preset>()` or `catalog::entry(\"<id>\")?.build(&env)`. Endpoint placeholders such as `<issuer>` stand \
         for the setting of that name.\n\n\
         Throughout, where Auth.js would build a name from parts (`${first} ${last}`), authcore joins the parts that \
         are present (no `\"undefined\"`), and a profile without the account id the preset maps is refused \
         (`OAuthProfileParseError`) rather than given a random id; the deviations column lists the rest.\n\n",
    );
    let oauth: Vec<_> = entries().iter().map(|e| (e, documented(e))).collect();
    out.push_str(&format!(
        "## OAuth 2 and OpenID Connect ({} ids)\n\n\
         | id | name | type | issuer or endpoints | variables | required settings | deviations from Auth.js |\n\
         |---|---|---|---|---|---|---|\n",
        oauth.len()
    ));
    for (e, p) in &oauth {
        let mut vars = vec![code(&e.env_var("id")), code(&e.env_var("secret"))];
        for s in e.settings {
            let optional = if s.required { "" } else { " (optional)" };
            vars.push(format!("{}{optional}", code(&e.env_var(s.key))));
        }
        let required: Vec<String> = e
            .settings
            .iter()
            .filter(|s| s.required)
            .map(|s| format!("`{}`: {}", s.key, html(s.what)))
            .collect();
        let mut deviations = e.deviations.to_owned();
        if e.provider_id != e.id {
            deviations = format!(
                "Provider id `{}` (as in Auth.js). {deviations}",
                e.provider_id
            );
        }
        if let Some(instead) = e.deprecated_for {
            deviations = format!("**Deprecated**: use `{instead}`. {deviations}");
        }
        let kind = match p.kind {
            ProviderType::Oidc => "oidc",
            _ => "oauth",
        };
        out.push_str(&format!(
            "| `{}` | {} | {kind} | {} | {} | {} | {} |\n",
            e.id,
            e.name,
            where_it_talks(p),
            vars.join("<br>"),
            if required.is_empty() {
                "—".to_owned()
            } else {
                required.join("<br>")
            },
            if deviations.trim().is_empty() {
                "—".to_owned()
            } else {
                html(deviations.trim())
            },
        ));
    }
    out.push_str(&format!(
        "\n## Email and passkey ({} ids)\n\n| id | name | type | authcore preset |\n|---|---|---|---|\n",
        OTHER_PRESETS.len()
    ));
    for o in OTHER_PRESETS {
        out.push_str(&format!(
            "| `{}` | {} | {} | `{}` |\n",
            o.id,
            o.name,
            o.kind.as_str(),
            o.preset
        ));
    }
    out
}

#[test]
fn providers_md_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/providers.md");
    let want = providers_md();
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(path, &want).unwrap();
    }
    let have = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        have == want,
        "docs/providers.md is stale: run `UPDATE_DOCS=1 cargo test -p authcore providers_md`"
    );
}
