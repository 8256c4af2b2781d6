//! GitLab (`@auth/core/providers/gitlab`): OAuth 2 against gitlab.com or a self-managed
//! instance.

use super::{string_field, style};
use crate::error::BoxError;
use crate::providers::OAuthProvider;
use crate::types::{JsonObject, TokenSet, User};

/// The default GitLab instance.
const GITLAB_COM: &str = "https://gitlab.com";

/// Options of the [`gitlab()`] preset (Auth.js `GitLab(options)`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GitLabOptions {
    /// Base URL of a self-managed instance (Auth.js `baseUrl`), like
    /// `https://gitlab.example.com`. `None`: `https://gitlab.com`.
    pub base_url: Option<String>,
}

impl GitLabOptions {
    /// A self-managed GitLab at `base_url`.
    pub fn base_url(base_url: impl Into<String>) -> Self {
        GitLabOptions {
            base_url: Some(base_url.into()),
        }
    }
}

/// GitLab, id `gitlab` (OAuth 2).
///
/// * Authorization `<base>/oauth/authorize?scope=read_user`, token `<base>/oauth/token`,
///   userinfo `<base>/api/v4/user`; checks: PKCE.
/// * Profile: `{id: String(sub ?? id), name: name ?? username, email, image: avatar_url}`.
///
/// The base URL is parsed and normalised like JavaScript's `new URL(baseUrl)`; one
/// deviation: a base with a path (`https://example.com/gitlab`) gets a `/` before
/// `oauth/...`, where Auth.js would glue the two together.
///
/// ```
/// use authcore::providers::catalog::{GitLabOptions, gitlab};
///
/// let p = gitlab(GitLabOptions::base_url("https://gitlab.example.com"))
///     .client_id("app-id")
///     .client_secret("secret");
/// assert_eq!(p.id(), "gitlab");
/// ```
pub fn gitlab(options: GitLabOptions) -> OAuthProvider {
    let base = normalise_base(options.base_url.as_deref().unwrap_or(GITLAB_COM));
    OAuthProvider::oauth("gitlab", "GitLab")
        .authorization_url(format!("{base}oauth/authorize?scope=read_user"))
        .token_url(format!("{base}oauth/token"))
        .userinfo_url(format!("{base}api/v4/user"))
        .profile(profile)
        .style(style("#FC6D26", Some("#fff")))
}

/// `String(new URL(base))`, ending in `/`.
fn normalise_base(base: &str) -> String {
    let mut s = match url::Url::parse(base) {
        Ok(u) => u.as_str().to_owned(),
        Err(_) => base.to_owned(),
    };
    if !s.ends_with('/') {
        s.push('/');
    }
    s
}

/// `{id: String(sub ?? id), name: name ?? username, email, image: avatar_url}`.
fn profile(p: &JsonObject, _tokens: &TokenSet) -> Result<User, BoxError> {
    Ok(User {
        id: string_field(p, "sub").or_else(|| string_field(p, "id")),
        name: string_field(p, "name").or_else(|| string_field(p, "username")),
        email: string_field(p, "email"),
        image: string_field(p, "avatar_url"),
        ..User::default()
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::providers::catalog::test_support::{object, tokens};
    use crate::providers::oauth::flow;
    use crate::providers::{Checks, ClientAuthMethod};
    use crate::types::ProviderType;

    /// `GET /api/v4/user` of the GitLab docs (trimmed).
    fn user_fixture() -> Value {
        json!({
            "id": 1,
            "username": "john_smith",
            "email": "john@example.com",
            "name": "John Smith",
            "state": "active",
            "locked": false,
            "avatar_url": "http://localhost:3000/uploads/user/avatar/1/index.jpg",
            "web_url": "http://localhost:3000/john_smith",
            "created_at": "2012-05-23T08:00:58Z",
            "bio": "",
            "public_email": "john@example.com",
            "bot": false,
            "last_sign_in_at": "2012-06-01T11:41:01Z",
            "confirmed_at": "2012-05-23T09:05:22Z",
            "theme_id": 1,
            "identities": [{"provider": "github", "extern_uid": "2435223452345"}],
            "can_create_group": true,
            "can_create_project": true,
            "two_factor_enabled": true,
            "external": false,
            "private_profile": false,
            "commit_email": "john-codes@example.com"
        })
    }

    #[test]
    fn gitlab_com_defaults() {
        let p = gitlab(GitLabOptions::default());
        assert_eq!(
            (p.id.as_str(), p.name.as_str(), p.kind),
            ("gitlab", "GitLab", ProviderType::Oauth)
        );
        assert_eq!(p.issuer, None);
        assert_eq!(
            p.authorization.url.as_deref(),
            Some("https://gitlab.com/oauth/authorize?scope=read_user")
        );
        assert!(
            p.authorization.params.is_empty(),
            "the scope is in the URL, as upstream"
        );
        assert_eq!(
            p.token.url.as_deref(),
            Some("https://gitlab.com/oauth/token")
        );
        assert_eq!(
            p.userinfo.url.as_deref(),
            Some("https://gitlab.com/api/v4/user")
        );
        assert!(p.userinfo_request.is_none());
        assert_eq!(p.checks, Checks::default());
        assert_eq!(p.client_auth, ClientAuthMethod::ClientSecretBasic);
        assert_eq!(p.style.brand_color.as_deref(), Some("#FC6D26"));
        assert_eq!(p.style.text.as_deref(), Some("#fff"));
        assert_eq!(p.missing_endpoint(), None);
    }

    #[test]
    fn self_managed_base_urls() {
        for (base, expected) in [
            ("https://gitlab.example.com", "https://gitlab.example.com/"),
            ("https://gitlab.example.com/", "https://gitlab.example.com/"),
            (
                "HTTPS://GitLab.Example.COM:443",
                "https://gitlab.example.com/",
            ),
            ("http://localhost:8080", "http://localhost:8080/"),
            ("https://example.com/gitlab/", "https://example.com/gitlab/"),
            ("https://example.com/gitlab", "https://example.com/gitlab/"),
        ] {
            let p = gitlab(GitLabOptions::base_url(base));
            assert_eq!(
                p.authorization.url.as_deref(),
                Some(format!("{expected}oauth/authorize?scope=read_user").as_str()),
                "{base}"
            );
            assert_eq!(
                p.token.url.as_deref(),
                Some(format!("{expected}oauth/token").as_str())
            );
            assert_eq!(
                p.userinfo.url.as_deref(),
                Some(format!("{expected}api/v4/user").as_str())
            );
        }
    }

    #[test]
    fn authorization_url_keeps_the_scope_of_the_endpoint() {
        let p = gitlab(GitLabOptions::default()).client_id("app");
        let url = flow::authorization_url(
            &p,
            p.authorization.url.as_deref().unwrap(),
            "https://app.example/auth/callback/gitlab",
            &[],
            &flow::CheckValues::default(),
        )
        .unwrap();
        let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
        assert!(
            pairs.contains(&("scope".into(), "read_user".into())),
            "{url}"
        );
        assert_eq!(pairs.iter().filter(|(k, _)| k == "scope").count(), 1);
    }

    #[test]
    fn profile_mapping() {
        let p = gitlab(GitLabOptions::default());
        let user = p
            .map_profile(&object(user_fixture()), &tokens("glpat"))
            .unwrap();
        assert_eq!(
            user,
            User {
                id: Some("1".into()),
                name: Some("John Smith".into()),
                email: Some("john@example.com".into()),
                image: Some("http://localhost:3000/uploads/user/avatar/1/index.jpg".into()),
                ..User::default()
            }
        );
        // `sub` (OpenID userinfo shape) wins over `id`; name null → username.
        let mut f = user_fixture();
        f["sub"] = json!("42");
        f["name"] = Value::Null;
        let user = p.map_profile(&object(f), &tokens("glpat")).unwrap();
        assert_eq!(
            (user.id.as_deref(), user.name.as_deref()),
            (Some("42"), Some("john_smith"))
        );
    }
}
