//! What the framework integrations' route guards ask of a request's [`Principal`] beyond
//! being signed in, and what they answer when it falls short: one rule and one set of
//! answers for every integration.

use http::StatusCode;

use super::{KeyRefused, Principal};
use crate::response::{GUARD_PAGE_TYPE, guard_answer};

/// The permissions and roles a route asks of the request's [`Principal`], all of them, in
/// the organization the request acts in: the API key's, or the session's active one.
///
/// The integrations' guards take one (`RequireAuthLayer::permission` / `role` in axum,
/// `RequireAuth`'s in actix-web). A route whose path names an organization also compares
/// it with [`Principal::organization`]: the guard knows only the request's own.
///
/// ```
/// use authcore::organizations::Requirement;
///
/// let billing = Requirement::new().permission("billing:write");
/// assert!(!billing.is_empty());
/// assert!(Requirement::new().is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Requirement {
    permissions: Vec<String>,
    roles: Vec<String>,
}

/// What a [`Principal`] lacks of a [`Requirement`]: the first permission or role missing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unmet<'a> {
    /// A permission the request does not hold in its organization (or it acts in none).
    Permission(&'a str),
    /// A role the member does not have there.
    Role(&'a str),
}

impl Requirement {
    /// Nothing asked beyond being signed in.
    pub fn new() -> Self {
        Self::default()
    }

    /// Also `permission` (`resource:action`, `resource:*` or `*`, as the roles write them).
    ///
    /// # Panics
    ///
    /// When `permission` is not of that form: a guard only owners could pass is a mistake
    /// in the program, found where the routes are made.
    pub fn permission(mut self, permission: impl Into<String>) -> Self {
        let permission = checked(permission.into(), super::check_permission);
        self.permissions.push(permission);
        self
    }

    /// Also `role`.
    ///
    /// # Panics
    ///
    /// When `role` is not a role name (lower case letters, digits, `_`, `-`, `.`).
    pub fn role(mut self, role: impl Into<String>) -> Self {
        self.roles
            .push(checked(role.into(), super::check_role_name));
        self
    }

    /// Whether nothing is asked beyond being signed in.
    pub fn is_empty(&self) -> bool {
        self.permissions.is_empty() && self.roles.is_empty()
    }

    /// What `principal` lacks (`None`: it holds every permission and role asked).
    pub fn unmet(&self, principal: &Principal) -> Option<Unmet<'_>> {
        let permission = self
            .permissions
            .iter()
            .find(|p| !principal.has_permission(p))
            .map(|p| Unmet::Permission(p));
        permission.or_else(|| {
            self.roles
                .iter()
                .find(|r| !principal.has_role(r))
                .map(|r| Unmet::Role(r))
        })
    }
}

/// `name` if `check` takes it; a panic naming it otherwise.
fn checked(name: String, check: fn(&str) -> Result<(), String>) -> String {
    if let Err(e) = check(&name) {
        panic!("a route guard's {e}");
    }
    name
}

impl Unmet<'_> {
    /// The guards' answer to a signed-in request that lacks it: `403`, with
    /// `{"error":"Forbidden","permission":"billing:write"}` (or `"role":"admin"`) for API
    /// clients (`json`), else a short page saying what is missing.
    pub fn response(self, json: bool) -> http::Response<String> {
        let (kind, name) = match self {
            Unmet::Permission(p) => ("permission", p),
            Unmet::Role(r) => ("role", r),
        };
        if json {
            let body = serde_json::json!({ "error": "Forbidden", kind: name });
            guard_answer(StatusCode::FORBIDDEN, "application/json", body.to_string())
        } else {
            guard_answer(
                StatusCode::FORBIDDEN,
                GUARD_PAGE_TYPE,
                forbidden_page(kind, name),
            )
        }
    }
}

impl KeyRefused {
    /// The guards' answer to a request whose `Authorization: Bearer` API key was refused:
    /// `401` `{"error":"InvalidApiKey"}` with `WWW-Authenticate: Bearer
    /// error="invalid_token"` (RFC 6750 §3), whatever the reason (which is logged, not
    /// told); `429` with `Retry-After` for a client over the limit of refused keys; `503`
    /// when the keys could not be read.
    pub fn response(self) -> http::Response<String> {
        if let KeyRefused::RateLimited { retry_after } = self {
            let body = serde_json::json!({ "error": "RateLimited" }).to_string();
            let mut res = guard_answer(StatusCode::TOO_MANY_REQUESTS, "application/json", body);
            if let Ok(v) = http::HeaderValue::from_str(&retry_after.as_secs().max(1).to_string()) {
                res.headers_mut().insert(http::header::RETRY_AFTER, v);
            }
            return res;
        }
        if self == KeyRefused::Unavailable {
            let body = serde_json::json!({ "error": "Unavailable" }).to_string();
            return guard_answer(StatusCode::SERVICE_UNAVAILABLE, "application/json", body);
        }
        let body = serde_json::json!({ "error": "InvalidApiKey" }).to_string();
        let mut res = guard_answer(StatusCode::UNAUTHORIZED, "application/json", body);
        res.headers_mut().insert(
            http::header::WWW_AUTHENTICATE,
            http::HeaderValue::from_static(r#"Bearer error="invalid_token""#),
        );
        res
    }
}

/// The page of [`Unmet::response`], the name escaped by the template engine.
#[cfg(feature = "pages")]
fn forbidden_page(kind: &str, name: &str) -> String {
    use askama::Template as _;
    #[derive(askama::Template)]
    #[template(
        ext = "html",
        source = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>Not allowed</title></head><body>\n<h1>Not allowed</h1>\n<p>This page needs the {{ kind }} <code>{{ name }}</code> in your organization, and you do not have it.</p>\n</body></html>\n"
    )]
    struct Page<'a> {
        kind: &'a str,
        name: &'a str,
    }
    Page { kind, name }
        .render()
        .unwrap_or_else(|_| "Not allowed.\n".to_owned())
}

/// Without the built-in pages, the same in plain words.
#[cfg(not(feature = "pages"))]
fn forbidden_page(kind: &str, name: &str) -> String {
    format!("Not allowed: this page needs the {kind} {name} in your organization.\n")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn answers() {
        let res = Unmet::Permission("billing:write").response(true);
        assert_eq!(res.status(), 403);
        assert_eq!(
            res.body(),
            r#"{"error":"Forbidden","permission":"billing:write"}"#
        );
        let res = Unmet::Role("admin").response(false);
        assert_eq!(res.status(), 403);
        assert!(res.body().contains("admin"), "{}", res.body());
        for (refused, status) in [
            (KeyRefused::Invalid, 401),
            (KeyRefused::Revoked, 401),
            (KeyRefused::Expired, 401),
            (KeyRefused::MakerGone, 401),
            (KeyRefused::Unavailable, 503),
        ] {
            let res = refused.response();
            assert_eq!(res.status(), status, "{refused:?}");
            assert_eq!(
                res.headers().get(http::header::WWW_AUTHENTICATE).is_some(),
                status == 401
            );
        }
    }

    #[test]
    #[should_panic(expected = "billing")]
    fn a_malformed_permission_is_a_mistake_in_the_program() {
        let _ = Requirement::new().permission("billing");
    }
}
