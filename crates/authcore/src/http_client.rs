//! The HTTP client of provider requests (OAuth discovery, JWKS, token and userinfo; HTTP
//! email services): the [`HttpClient`] seam, and reqwest behind it by default (the `reqwest`
//! feature). A host without that feature gives each such provider its own client.

use std::sync::Arc;
#[cfg(feature = "reqwest")]
use std::sync::OnceLock;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;

use crate::error::BoxError;

/// Largest provider response authcore reads (discovery, JWKS, token, userinfo): 1 MiB.
pub const MAX_RESPONSE_BYTES: usize = 1024 * 1024;
/// Timeout of one provider request: 10 s.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// The HTTP client used for discovery, JWKS, token and userinfo requests (Auth.js
/// `customFetch`). Implementations must not follow redirects.
#[async_trait]
pub trait HttpClient: Send + Sync + 'static {
    /// Sends one request.
    async fn send(&self, request: http::Request<Bytes>) -> Result<http::Response<Bytes>, BoxError>;
}

/// The client of a provider that was given none: the shared [`ReqwestClient`] with the
/// `reqwest` feature, else none (`build()` then names the provider that needs one).
pub(crate) fn default_client() -> Option<Arc<dyn HttpClient>> {
    #[cfg(feature = "reqwest")]
    return Some(ReqwestClient::shared());
    #[cfg(not(feature = "reqwest"))]
    None
}

/// The client of a provider used without `build()` where there is no default: every request
/// fails, saying why.
#[derive(Debug)]
pub(crate) struct NoClient;

#[async_trait]
impl HttpClient for NoClient {
    async fn send(&self, _: http::Request<Bytes>) -> Result<http::Response<Bytes>, BoxError> {
        Err("no HTTP client: enable authcore's `reqwest` feature or give the provider one".into())
    }
}

/// The default client: reqwest with rustls, no redirects, a 10 s timeout and a 1 MiB body
/// limit.
#[cfg(feature = "reqwest")]
#[derive(Debug, Clone)]
pub struct ReqwestClient {
    client: reqwest::Client,
}

#[cfg(feature = "reqwest")]
impl ReqwestClient {
    /// The shared default client.
    pub fn shared() -> Arc<dyn HttpClient> {
        static SHARED: OnceLock<Arc<dyn HttpClient>> = OnceLock::new();
        SHARED
            .get_or_init(|| {
                let client = reqwest::Client::builder()
                    .redirect(reqwest::redirect::Policy::none())
                    .timeout(REQUEST_TIMEOUT)
                    .connect_timeout(REQUEST_TIMEOUT)
                    .user_agent(concat!("authcore/", env!("CARGO_PKG_VERSION")))
                    .build()
                    .unwrap_or_default();
                Arc::new(ReqwestClient { client })
            })
            .clone()
    }
}

#[cfg(feature = "reqwest")]
/// A transport error without the request URL's query: a token endpoint can carry the client
/// secret there (WeChat's `secret`, as Auth.js sends it), and errors reach the logger.
fn without_query(mut e: reqwest::Error) -> reqwest::Error {
    if let Some(url) = e.url_mut() {
        url.set_query(None);
    }
    e
}

#[cfg(feature = "reqwest")]
#[async_trait]
impl HttpClient for ReqwestClient {
    async fn send(&self, request: http::Request<Bytes>) -> Result<http::Response<Bytes>, BoxError> {
        let request = reqwest::Request::try_from(request.map(reqwest::Body::from))?;
        let mut response = self.client.execute(request).await.map_err(without_query)?;
        let mut out = http::Response::builder().status(response.status().as_u16());
        if let Some(h) = out.headers_mut() {
            h.clone_from(response.headers());
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(without_query)? {
            if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
                return Err(format!("response larger than {MAX_RESPONSE_BYTES} bytes").into());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(out.body(Bytes::from(body))?)
    }
}

#[cfg(test)]
#[cfg(feature = "reqwest")]
mod tests {
    use super::*;

    /// A token endpoint can carry the client secret in its query (WeChat, as Auth.js sends
    /// it); a transport error, which reaches the logger, must not show it.
    #[tokio::test]
    async fn transport_errors_leave_the_query_out() {
        // A port nothing listens on: the connection is refused at once.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let req = http::Request::post(format!("http://{addr}/token?appid=a&secret=s3cret-value"))
            .body(Bytes::new())
            .unwrap();
        let err = ReqwestClient::shared().send(req).await.unwrap_err();
        let mut shown = format!("{err} {err:?}");
        let mut source = err.source();
        while let Some(e) = source {
            shown.push_str(&format!(" {e} {e:?}"));
            source = e.source();
        }
        assert!(!shown.contains("s3cret-value"), "{shown}");
        assert!(shown.contains("/token"), "{shown}");
    }
}
