//! The HTTP requests of presets whose userinfo (or token) request is not the standard one:
//! built as plain `http::Request`s, sent with the provider's client, answered as JSON.

use bytes::Bytes;
use serde_json::Value;

use super::path_value;
use crate::error::BoxError;
use crate::http_client::HttpClient;
use crate::types::JsonObject;

/// A request with `Accept: application/json` and, when given, the bearer token.
pub(crate) fn api(method: http::Method, url: &str, bearer: Option<&str>) -> http::request::Builder {
    let b = http::Request::builder()
        .method(method)
        .uri(url)
        .header(http::header::ACCEPT, "application/json");
    match bearer {
        Some(token) => b.header(http::header::AUTHORIZATION, format!("Bearer {token}")),
        None => b,
    }
}

/// Sends `request` and parses a successful answer as JSON; `what` names the request in
/// errors (`"Notion GET /v1/users/me"`), which carry the status, never the body.
pub(crate) async fn send_json(
    http: &dyn HttpClient,
    request: http::request::Builder,
    body: Bytes,
    what: &str,
) -> Result<Value, BoxError> {
    let res = http.send(request.body(body)?).await?;
    if !res.status().is_success() {
        return Err(format!("{what} answered HTTP {}", res.status().as_u16()).into());
    }
    serde_json::from_slice(res.body()).map_err(|_| format!("{what} did not answer JSON").into())
}

/// The object at `path` of a JSON answer (`""`: the answer itself), or an error naming
/// what was expected.
pub(crate) fn object_at(answer: Value, path: &str, what: &str) -> Result<JsonObject, BoxError> {
    let Value::Object(root) = answer else {
        return Err(format!("{what} did not answer a JSON object").into());
    };
    if path.is_empty() {
        return Ok(root);
    }
    match path_value(&root, path) {
        Some(Value::Object(m)) => Ok(m.clone()),
        _ => Err(format!("{what} answered no object at {path:?}").into()),
    }
}

/// Sets (or replaces) query parameters of a URL.
pub(crate) fn with_query(url: &str, pairs: &[(&str, &str)]) -> Result<String, BoxError> {
    let mut u = url::Url::parse(url)?;
    let kept: Vec<(String, String)> = u
        .query_pairs()
        .into_owned()
        .filter(|(k, _)| !pairs.iter().any(|(n, _)| n == k))
        .collect();
    u.query_pairs_mut()
        .clear()
        .extend_pairs(kept)
        .extend_pairs(pairs.iter().copied());
    Ok(u.into())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn objects_by_path() {
        let v = json!({"bot": {"owner": {"user": {"id": "u"}}}, "response": [{"id": 1}]});
        assert_eq!(
            object_at(v.clone(), "bot.owner.user", "x").unwrap()["id"],
            "u"
        );
        assert_eq!(object_at(v.clone(), "response.0", "x").unwrap()["id"], 1);
        let err = object_at(v.clone(), "bot.nope", "Notion").unwrap_err();
        assert_eq!(err.to_string(), "Notion answered no object at \"bot.nope\"");
        assert!(object_at(json!([1]), "", "x").is_err());
    }

    #[test]
    fn query_parameters_are_set_once() {
        assert_eq!(
            with_query(
                "https://a/u?lang=en&x=1",
                &[("lang", "zh_CN"), ("openid", "o")]
            )
            .unwrap(),
            "https://a/u?x=1&lang=zh_CN&openid=o"
        );
    }
}
