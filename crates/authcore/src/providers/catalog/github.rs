//! GitHub (`@auth/core/providers/github`): OAuth 2 with a custom userinfo request that falls
//! back to `GET /user/emails` when the profile has no public email.

use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;

use super::{is_truthy, string_field, style};
use crate::error::BoxError;
use crate::http_client::HttpClient;
use crate::providers::{OAuthProvider, UserinfoContext};
use crate::types::{JsonObject, TokenSet, User};

/// Options of the [`github()`] preset (Auth.js `GitHub(config)`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GitHubOptions {
    /// GitHub Enterprise Server base URL (Auth.js `enterprise.baseUrl`), like
    /// `https://github.example.com`: sign-in moves to `<base>/login/oauth/...` and the API
    /// to `<base>/api/v3`. `None` (or empty): github.com.
    pub enterprise_base_url: Option<String>,
}

impl GitHubOptions {
    /// GitHub Enterprise Server at `base_url`.
    pub fn enterprise(base_url: impl Into<String>) -> Self {
        GitHubOptions {
            enterprise_base_url: Some(base_url.into()),
        }
    }
}

/// GitHub (OAuth app or GitHub App), id `github`.
///
/// * issuer `https://github.com/login/oauth`, authorization
///   `https://github.com/login/oauth/authorize` with `scope=read:user user:email`, token
///   `https://github.com/login/oauth/access_token`, userinfo `https://api.github.com/user`;
///   checks: PKCE (the Auth.js default).
/// * The userinfo request sends `Authorization: Bearer <access token>` and
///   `User-Agent: authjs`. When the profile's `email` is empty (no public email), it reads
///   `GET <api>/user/emails` and takes the primary address, else the first; if that request
///   answers with an error status, the email stays `null`.
/// * Profile: `{id: String(id), name: name ?? login, email, image: avatar_url}`.
///
/// Client id and secret: `AUTH_GITHUB_ID` / `AUTH_GITHUB_SECRET` via env defaults, or
/// [`client_id`](OAuthProvider::client_id) / [`client_secret`](OAuthProvider::client_secret).
///
/// ```
/// use authcore::providers::catalog::{GitHubOptions, github};
///
/// let public = github(GitHubOptions::default())
///     .client_id("Iv1.0123456789")
///     .client_secret("secret");
/// assert_eq!(public.id(), "github");
///
/// // GitHub Enterprise Server: https://github.example.com/login/oauth/... and /api/v3.
/// let enterprise = github(GitHubOptions::enterprise("https://github.example.com"));
/// # let _ = enterprise;
/// ```
pub fn github(options: GitHubOptions) -> OAuthProvider {
    let enterprise = options
        .enterprise_base_url
        .as_deref()
        .map(|b| b.trim_end_matches('/'))
        .filter(|b| !b.is_empty());
    let (base_url, api_base_url) = match enterprise {
        Some(base) => (base.to_owned(), format!("{base}/api/v3")),
        None => (
            "https://github.com".to_owned(),
            "https://api.github.com".to_owned(),
        ),
    };
    let api: Arc<str> = api_base_url.as_str().into();
    OAuthProvider::oauth("github", "GitHub")
        .issuer(format!("{base_url}/login/oauth"))
        .authorization_url(format!("{base_url}/login/oauth/authorize"))
        .authorization_param("scope", "read:user user:email")
        .token_url(format!("{base_url}/login/oauth/access_token"))
        .userinfo_url(format!("{api_base_url}/user"))
        .userinfo_request(move |cx: UserinfoContext| {
            let api = Arc::clone(&api);
            async move { fetch_profile(cx.http.as_ref(), &api, cx.access_token()).await }
        })
        .profile(profile)
        .style(style("#24292f", Some("#fff")))
}

/// A GitHub API `GET` as Auth.js sends it: bearer token and `User-Agent: authjs` only.
fn api_request(url: &str, access_token: &str) -> Result<http::Request<Bytes>, BoxError> {
    Ok(http::Request::get(url)
        .header(
            http::header::AUTHORIZATION,
            format!("Bearer {access_token}"),
        )
        .header(http::header::USER_AGENT, "authjs")
        .body(Bytes::new())?)
}

/// The user's profile, with the email filled from `/user/emails` when it is not public.
async fn fetch_profile(
    client: &dyn HttpClient,
    api: &str,
    access_token: &str,
) -> Result<JsonObject, BoxError> {
    let res = client
        .send(api_request(&format!("{api}/user"), access_token)?)
        .await?;
    // Auth.js parses the body whatever the status and then fails in `profile()` (no `id`);
    // failing here says why.
    if !res.status().is_success() {
        return Err(format!("GitHub GET /user answered HTTP {}", res.status().as_u16()).into());
    }
    let Ok(Value::Object(mut profile)) = serde_json::from_slice::<Value>(res.body()) else {
        return Err("GitHub GET /user did not return a JSON object".into());
    };
    if !is_truthy(profile.get("email")) {
        // No public email: https://docs.github.com/en/rest/users/emails
        let res = client
            .send(api_request(&format!("{api}/user/emails"), access_token)?)
            .await?;
        if res.status().is_success() {
            let Ok(Value::Array(emails)) = serde_json::from_slice::<Value>(res.body()) else {
                return Err("GitHub GET /user/emails did not return a JSON array".into());
            };
            // Auth.js throws on an empty list; here the email just stays unset.
            let chosen = emails
                .iter()
                .find(|e| is_truthy(e.get("primary")))
                .or_else(|| emails.first());
            if let Some(e) = chosen {
                let email = e.get("email").cloned().unwrap_or(Value::Null);
                profile.insert("email".to_owned(), email);
            }
        }
    }
    Ok(profile)
}

/// `{id: String(id), name: name ?? login, email, image: avatar_url}`.
fn profile(p: &JsonObject, _tokens: &TokenSet) -> Result<User, BoxError> {
    let id = string_field(p, "id").ok_or("the GitHub profile has no \"id\"")?;
    Ok(User {
        id: Some(id),
        name: string_field(p, "name").or_else(|| string_field(p, "login")),
        email: string_field(p, "email"),
        image: string_field(p, "avatar_url"),
        ..User::default()
    })
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::Mutex;

    use async_trait::async_trait;
    use serde_json::json;

    use super::*;
    use crate::providers::catalog::test_support::{object, param, tokens};
    use crate::providers::oauth::flow;
    use crate::providers::{Checks, ClientAuthMethod};
    use crate::types::ProviderType;

    const TOKEN: &str = "gho_16C7e42F292c6912E7710c838347Ae178B4a";

    /// The `GET /user` answer of the GitHub docs (trimmed), with the given email.
    fn user_fixture(email: Value) -> Value {
        json!({
            "login": "octocat",
            "id": 583231,
            "node_id": "MDQ6VXNlcjU4MzIzMQ==",
            "avatar_url": "https://avatars.githubusercontent.com/u/583231?v=4",
            "gravatar_id": "",
            "url": "https://api.github.com/users/octocat",
            "html_url": "https://github.com/octocat",
            "type": "User",
            "site_admin": false,
            "name": "The Octocat",
            "company": "@github",
            "blog": "https://github.blog",
            "location": "San Francisco",
            "email": email,
            "hireable": null,
            "bio": null,
            "twitter_username": null,
            "public_repos": 8,
            "public_gists": 8,
            "followers": 16000,
            "following": 9,
            "created_at": "2011-01-25T18:44:36Z",
            "updated_at": "2024-01-22T12:18:59Z",
            "two_factor_authentication": true
        })
    }

    enum Reply {
        Json(u16, Value),
        TransportError,
    }

    /// Stands in for api.github.com: asserts each request (URL, method, exact headers) and
    /// answers from a script.
    struct StandIn {
        script: Mutex<VecDeque<(String, Reply)>>,
    }

    impl StandIn {
        fn new(script: Vec<(&str, Reply)>) -> Arc<Self> {
            Arc::new(StandIn {
                script: Mutex::new(script.into_iter().map(|(u, r)| (u.to_owned(), r)).collect()),
            })
        }

        fn assert_done(&self) {
            let left: Vec<String> = self
                .script
                .lock()
                .unwrap()
                .iter()
                .map(|(u, _)| u.clone())
                .collect();
            assert!(left.is_empty(), "requests not made: {left:?}");
        }
    }

    #[async_trait]
    impl HttpClient for StandIn {
        async fn send(&self, req: http::Request<Bytes>) -> Result<http::Response<Bytes>, BoxError> {
            let next = self.script.lock().unwrap().pop_front();
            let Some((url, reply)) = next else {
                panic!("unexpected request {} {}", req.method(), req.uri());
            };
            assert_eq!(req.method(), http::Method::GET);
            assert_eq!(req.uri().to_string(), url);
            let headers = req.headers();
            assert_eq!(
                headers.len(),
                2,
                "only Authorization and User-Agent: {headers:?}"
            );
            assert_eq!(
                headers[http::header::AUTHORIZATION],
                format!("Bearer {TOKEN}").as_str()
            );
            assert_eq!(headers[http::header::USER_AGENT], "authjs");
            assert!(req.body().is_empty());
            match reply {
                Reply::Json(status, body) => Ok(http::Response::builder()
                    .status(status)
                    .header(
                        http::header::CONTENT_TYPE,
                        "application/json; charset=utf-8",
                    )
                    .body(Bytes::from(body.to_string()))
                    .unwrap()),
                Reply::TransportError => Err("connection reset by peer".into()),
            }
        }
    }

    /// Runs the preset's userinfo request against the stand-in.
    async fn userinfo(p: &OAuthProvider, stand_in: &Arc<StandIn>) -> Result<JsonObject, BoxError> {
        let request = p
            .userinfo_request
            .clone()
            .expect("GitHub has a custom userinfo request");
        let client: Arc<dyn HttpClient> = stand_in.clone();
        request(UserinfoContext {
            tokens: tokens(TOKEN),
            http: client,
            client_id: "client".to_owned(),
            userinfo_endpoint: p.userinfo.url.clone(),
        })
        .await
    }

    #[test]
    fn github_com_defaults() {
        let p = github(GitHubOptions::default());
        assert_eq!(
            (p.id.as_str(), p.name.as_str(), p.kind),
            ("github", "GitHub", ProviderType::Oauth)
        );
        assert_eq!(p.issuer.as_deref(), Some("https://github.com/login/oauth"));
        assert_eq!(
            p.authorization.url.as_deref(),
            Some("https://github.com/login/oauth/authorize")
        );
        assert_eq!(
            p.authorization.params,
            vec![("scope".to_owned(), "read:user user:email".to_owned())]
        );
        assert_eq!(param(&p, "scope"), Some("read:user user:email"));
        assert_eq!(
            p.token.url.as_deref(),
            Some("https://github.com/login/oauth/access_token")
        );
        assert_eq!(
            p.userinfo.url.as_deref(),
            Some("https://api.github.com/user")
        );
        assert!(p.userinfo_request.is_some());
        assert_eq!(p.checks, Checks::default(), "PKCE only");
        assert_eq!(p.client_auth, ClientAuthMethod::ClientSecretBasic);
        assert_eq!(p.style.brand_color.as_deref(), Some("#24292f"));
        assert_eq!(p.style.text.as_deref(), Some("#fff"));
        assert_eq!(p.missing_endpoint(), None);
    }

    #[test]
    fn enterprise_base_url_switches_hosts() {
        for base in ["https://github.example.com", "https://github.example.com/"] {
            let p = github(GitHubOptions::enterprise(base));
            assert_eq!(
                p.issuer.as_deref(),
                Some("https://github.example.com/login/oauth")
            );
            assert_eq!(
                p.authorization.url.as_deref(),
                Some("https://github.example.com/login/oauth/authorize")
            );
            assert_eq!(param(&p, "scope"), Some("read:user user:email"));
            assert_eq!(
                p.token.url.as_deref(),
                Some("https://github.example.com/login/oauth/access_token")
            );
            assert_eq!(
                p.userinfo.url.as_deref(),
                Some("https://github.example.com/api/v3/user")
            );
        }
        // An empty base URL is falsy in Auth.js: github.com.
        let p = github(GitHubOptions {
            enterprise_base_url: Some(String::new()),
        });
        assert_eq!(
            p.token.url.as_deref(),
            Some("https://github.com/login/oauth/access_token")
        );
    }

    #[tokio::test]
    async fn endpoints_need_no_discovery_and_the_authorization_url_carries_the_scope() {
        // No request at all: every endpoint is configured.
        let stand_in = StandIn::new(vec![]);
        let p = github(GitHubOptions::default()).client_id("Iv1.abc");
        let e = flow::resolve_endpoints(&p, stand_in.as_ref())
            .await
            .unwrap();
        assert_eq!(e.issuer.as_deref(), Some("https://github.com/login/oauth"));
        let url = flow::authorization_url(
            &p,
            e.authorization.as_deref().unwrap(),
            "https://app.example/auth/callback/github",
            &[],
            &flow::CheckValues {
                code_challenge: Some("ch".into()),
                ..Default::default()
            },
        )
        .unwrap();
        // The configured params first, as in the URL Auth.js builds (checked against
        // @auth/core by the differential suite).
        assert_eq!(
            url.as_str(),
            "https://github.com/login/oauth/authorize?scope=read%3Auser+user%3Aemail\
             &response_type=code&client_id=Iv1.abc\
             &redirect_uri=https%3A%2F%2Fapp.example%2Fauth%2Fcallback%2Fgithub\
             &code_challenge=ch&code_challenge_method=S256"
        );
    }

    #[test]
    fn profile_mapping() {
        let p = github(GitHubOptions::default());
        let t = tokens(TOKEN);
        let user = p
            .map_profile(&object(user_fixture(json!("octocat@github.com"))), &t)
            .unwrap();
        assert_eq!(
            user,
            User {
                id: Some("583231".into()),
                name: Some("The Octocat".into()),
                email: Some("octocat@github.com".into()),
                image: Some("https://avatars.githubusercontent.com/u/583231?v=4".into()),
                ..User::default()
            }
        );
        // name null → login; email null stays unset.
        let mut fixture = user_fixture(Value::Null);
        fixture["name"] = Value::Null;
        let user = p.map_profile(&object(fixture), &t).unwrap();
        assert_eq!(user.name.as_deref(), Some("octocat"));
        assert_eq!(user.email, None);
        // No id: Auth.js throws (`profile.id.toString()`).
        let mut fixture = user_fixture(Value::Null);
        fixture.as_object_mut().unwrap().remove("id");
        assert!(p.map_profile(&object(fixture), &t).is_err());
    }

    #[tokio::test]
    async fn public_email_needs_one_request() {
        let stand_in = StandIn::new(vec![(
            "https://api.github.com/user",
            Reply::Json(200, user_fixture(json!("octocat@github.com"))),
        )]);
        let profile = userinfo(&github(GitHubOptions::default()), &stand_in)
            .await
            .unwrap();
        stand_in.assert_done();
        assert_eq!(profile, object(user_fixture(json!("octocat@github.com"))));
    }

    #[tokio::test]
    async fn private_email_takes_the_primary_address() {
        let stand_in = StandIn::new(vec![
            (
                "https://api.github.com/user",
                Reply::Json(200, user_fixture(Value::Null)),
            ),
            (
                "https://api.github.com/user/emails",
                Reply::Json(
                    200,
                    json!([
                        {"email": "work@example.com", "primary": false, "verified": true, "visibility": "private"},
                        {"email": "octocat@github.com", "primary": true, "verified": true, "visibility": "private"},
                        {"email": "old@example.com", "primary": false, "verified": false, "visibility": null}
                    ]),
                ),
            ),
        ]);
        let p = github(GitHubOptions::default());
        let profile = userinfo(&p, &stand_in).await.unwrap();
        stand_in.assert_done();
        assert_eq!(profile["email"], "octocat@github.com");
        assert_eq!(
            profile["login"], "octocat",
            "the rest of the profile is kept"
        );
        let user = p.map_profile(&profile, &tokens(TOKEN)).unwrap();
        assert_eq!(user.email.as_deref(), Some("octocat@github.com"));
    }

    #[tokio::test]
    async fn without_a_primary_address_the_first_is_taken() {
        // An empty string is falsy too: the fallback runs.
        let stand_in = StandIn::new(vec![
            (
                "https://api.github.com/user",
                Reply::Json(200, user_fixture(json!(""))),
            ),
            (
                "https://api.github.com/user/emails",
                Reply::Json(
                    200,
                    json!([
                        {"email": "first@example.com", "primary": false, "verified": true, "visibility": "private"},
                        {"email": "second@example.com", "primary": false, "verified": true, "visibility": "private"}
                    ]),
                ),
            ),
        ]);
        let profile = userinfo(&github(GitHubOptions::default()), &stand_in)
            .await
            .unwrap();
        stand_in.assert_done();
        assert_eq!(profile["email"], "first@example.com");
    }

    #[tokio::test]
    async fn failed_emails_request_keeps_the_email_null() {
        for reply in [
            // No `user:email` scope granted.
            Reply::Json(
                404,
                json!({"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}),
            ),
            Reply::Json(
                403,
                json!({"message": "Resource not accessible by integration"}),
            ),
            // Auth.js throws on an empty list; authcore keeps the email unset.
            Reply::Json(200, json!([])),
        ] {
            let stand_in = StandIn::new(vec![
                (
                    "https://api.github.com/user",
                    Reply::Json(200, user_fixture(Value::Null)),
                ),
                ("https://api.github.com/user/emails", reply),
            ]);
            let p = github(GitHubOptions::default());
            let profile = userinfo(&p, &stand_in).await.unwrap();
            stand_in.assert_done();
            assert_eq!(profile["email"], Value::Null);
            let user = p.map_profile(&profile, &tokens(TOKEN)).unwrap();
            assert_eq!((user.id.as_deref(), user.email), (Some("583231"), None));
        }
    }

    #[tokio::test]
    async fn request_failures_are_errors() {
        // As in Auth.js, a transport failure of either request fails the sign-in …
        let stand_in = StandIn::new(vec![
            (
                "https://api.github.com/user",
                Reply::Json(200, user_fixture(Value::Null)),
            ),
            ("https://api.github.com/user/emails", Reply::TransportError),
        ]);
        assert!(
            userinfo(&github(GitHubOptions::default()), &stand_in)
                .await
                .is_err()
        );
        stand_in.assert_done();
        let stand_in = StandIn::new(vec![("https://api.github.com/user", Reply::TransportError)]);
        assert!(
            userinfo(&github(GitHubOptions::default()), &stand_in)
                .await
                .is_err()
        );
        // … and so does a /user error (Auth.js fails later, in `profile()`, for lack of an id),
        let stand_in = StandIn::new(vec![(
            "https://api.github.com/user",
            Reply::Json(401, json!({"message": "Bad credentials"})),
        )]);
        let err = userinfo(&github(GitHubOptions::default()), &stand_in)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("401"), "{err}");
        assert!(!err.to_string().contains(TOKEN));
        // … or an /user/emails body that is not a list.
        let stand_in = StandIn::new(vec![
            (
                "https://api.github.com/user",
                Reply::Json(200, user_fixture(Value::Null)),
            ),
            (
                "https://api.github.com/user/emails",
                Reply::Json(200, json!({"oops": true})),
            ),
        ]);
        assert!(
            userinfo(&github(GitHubOptions::default()), &stand_in)
                .await
                .is_err()
        );
    }

    #[tokio::test]
    async fn enterprise_userinfo_uses_api_v3() {
        let stand_in = StandIn::new(vec![
            (
                "https://github.example.com/api/v3/user",
                Reply::Json(200, user_fixture(Value::Null)),
            ),
            (
                "https://github.example.com/api/v3/user/emails",
                Reply::Json(
                    200,
                    json!([{"email": "octocat@example.com", "primary": true, "verified": true}]),
                ),
            ),
        ]);
        let p = github(GitHubOptions::enterprise("https://github.example.com/"));
        let profile = userinfo(&p, &stand_in).await.unwrap();
        stand_in.assert_done();
        assert_eq!(profile["email"], "octocat@example.com");
    }
}
