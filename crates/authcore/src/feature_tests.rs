//! What a build with fewer features does instead of the parts it leaves out (run by
//! `scripts/test-features.sh` for each feature alone and for none; the integration tests
//! cover the full set).

use http_body_util::{BodyExt, Full};

use crate::providers::CredentialsProvider;
use crate::{Auth, AuthConfig};

fn credentials_config() -> AuthConfig {
    AuthConfig::builder()
        .secret("a secret of at least thirty-two characters")
        .trust_host(true)
        .provider(CredentialsProvider::new().authorize(|_, _| async { Ok(None) }))
        .build()
        .expect("valid configuration")
}

async fn get(auth: &Auth, path: &str) -> (http::StatusCode, String) {
    let req = http::Request::get(format!("http://localhost:3000/auth{path}"))
        .body(Full::new(bytes::Bytes::new()))
        .expect("request");
    let res = auth.handle(req).await;
    let status = res.status();
    let body = res.into_body().collect().await.expect("body").to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}

fn run<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(f)
}

/// Every build answers the JSON actions the same way.
#[test]
fn providers_and_csrf_answer_in_every_build() {
    run(async {
        let auth = Auth::new(credentials_config());
        let (status, body) = get(&auth, "/providers").await;
        assert_eq!(status, 200);
        assert!(body.contains(r#""type":"credentials""#), "{body}");
        let (status, body) = get(&auth, "/csrf").await;
        assert_eq!(status, 200);
        assert!(body.contains("csrfToken"), "{body}");
    });
}

/// With the built-in pages: the sign-in page is HTML with a form for the provider.
#[cfg(feature = "pages")]
#[test]
fn the_builtin_signin_page_is_rendered() {
    run(async {
        let (status, body) = get(&Auth::new(credentials_config()), "/signin").await;
        assert_eq!(status, 200);
        assert!(body.contains("<form"), "{body}");
    });
}

/// Without the built-in pages: each page answers its status and one fixed line naming the
/// setting to use; nothing from the request is echoed.
#[cfg(not(feature = "pages"))]
#[test]
fn without_pages_each_page_says_which_setting_replaces_it() {
    run(async {
        let auth = Auth::new(credentials_config());
        for path in ["/signin", "/signout", "/verify-request"] {
            let (status, body) = get(&auth, path).await;
            assert_eq!(status, 404, "{path}");
            assert!(body.contains("`pages` feature"), "{path}: {body}");
        }
        let (status, body) = get(&auth, "/error?error=%3Cscript%3E").await;
        assert_eq!(status, 200);
        assert!(!body.contains("<script>"), "{body}");
        let (status, _) = get(&auth, "/error?error=AccessDenied").await;
        assert_eq!(status, 403);
        // A custom page still takes over.
        let auth = Auth::new(
            AuthConfig::builder()
                .secret("a secret of at least thirty-two characters")
                .trust_host(true)
                .pages(crate::PagesOptions {
                    sign_in: Some("/login".into()),
                    ..Default::default()
                })
                .provider(CredentialsProvider::new().authorize(|_, _| async { Ok(None) }))
                .build()
                .expect("valid configuration"),
        );
        let req = http::Request::get("http://localhost:3000/auth/signin")
            .body(Full::new(bytes::Bytes::new()))
            .expect("request");
        let res = auth.handle(req).await;
        assert_eq!(res.status(), 302);
        let location = res.headers()[http::header::LOCATION].to_str().unwrap();
        assert!(location.starts_with("/login?callbackUrl="), "{location}");
    });
}

/// Without the default HTTP client an OAuth provider needs its own: `build()` names the
/// provider rather than failing at the first sign-in.
#[cfg(all(feature = "oauth", not(feature = "reqwest")))]
#[test]
fn without_reqwest_an_oauth_provider_needs_a_client() {
    let err = AuthConfig::builder()
        .secret("a secret of at least thirty-two characters")
        .provider(crate::providers::catalog::github(Default::default()).client_id("id"))
        .build()
        .expect_err("no HTTP client");
    assert!(
        matches!(&err, crate::ConfigError::NoHttpClient { provider } if provider == "github"),
        "{err}"
    );
}

/// With a client of its own, an OAuth provider builds without the default one.
#[cfg(feature = "oauth")]
#[test]
fn an_oauth_provider_with_its_own_client_builds() {
    struct Refuse;
    #[async_trait::async_trait]
    impl crate::http_client::HttpClient for Refuse {
        async fn send(
            &self,
            _: http::Request<bytes::Bytes>,
        ) -> Result<http::Response<bytes::Bytes>, crate::BoxError> {
            Err("offline".into())
        }
    }
    AuthConfig::builder()
        .secret("a secret of at least thirty-two characters")
        .provider(
            crate::providers::catalog::github(Default::default())
                .client_id("id")
                .http_client(Refuse),
        )
        .build()
        .expect("valid configuration");
}

/// Without the `metrics` feature nothing is recorded, and session reads still work.
#[cfg(not(feature = "metrics"))]
#[test]
fn without_metrics_a_session_read_answers() {
    run(async {
        let (status, body) = get(&Auth::new(credentials_config()), "/session").await;
        assert_eq!(status, 200);
        assert_eq!(body, "null");
    });
}
