//! The parameters of a request, from its query or form body, each at most once
//! (RFC 6749 §3.1).

use axum::http::{Method, Uri};

/// The pairs of a form or query (invalid UTF-8 replaced, as the URL standard does).
pub(crate) fn pairs(bytes: &[u8]) -> Vec<(String, String)> {
    url::form_urlencoded::parse(bytes).into_owned().collect()
}

/// The parameters of a request to an endpoint that takes both: a `POST`'s form, else the
/// query.
pub(crate) fn request_params(method: &Method, uri: &Uri, body: &[u8]) -> Vec<(String, String)> {
    if method == Method::POST {
        pairs(body)
    } else {
        pairs(uri.query().unwrap_or_default().as_bytes())
    }
}

/// Whether a name comes more than once (RFC 6749 §3.1: a repeated parameter is not picked
/// from).
pub(crate) fn has_repeats(params: &[(String, String)]) -> bool {
    let mut seen = std::collections::HashSet::new();
    params.iter().any(|(k, _)| !seen.insert(k.as_str()))
}

/// A request's parameters, each name at most once.
pub(crate) struct Params(Vec<(String, String)>);

impl Params {
    /// The parameters, or `None` when a name comes more than once.
    pub(crate) fn unique(pairs: Vec<(String, String)>) -> Option<Self> {
        (!has_repeats(&pairs)).then_some(Params(pairs))
    }

    /// Every parameter, as they came.
    pub(crate) fn pairs(&self) -> &[(String, String)] {
        &self.0
    }

    /// The value of `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}
