//! [`SessionJson`]: the session a signed-in request carries, as the framework integrations
//! (`authcore-axum`, `authcore-actix`) hand it to handlers.

use std::sync::Arc;

use serde_json::{Map, Value};

/// The session of a signed-in user: the JSON object `GET <basePath>/session` returns
/// (`{"user": {"name", "email", "image"}, "expires"}` by default, plus whatever the `session`
/// callback adds), with accessors. Cheap to clone.
///
/// ```
/// use authcore::SessionJson;
/// let s = SessionJson::from_json(authcore::serde_json::json!({
///     "user": {"name": "Ada", "email": "ada@example.com"},
///     "expires": "2030-01-01T00:00:00.000Z",
/// }));
/// assert_eq!(s.user_name(), Some("Ada"));
/// assert_eq!(s.user_image(), None);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct SessionJson {
    json: Arc<Value>,
    user_id: Option<Arc<str>>,
}

impl SessionJson {
    /// A session from the JSON `GET <basePath>/session` returned.
    pub fn from_json(json: Value) -> Self {
        SessionJson {
            json: Arc::new(json),
            user_id: None,
        }
    }

    /// The same session, with the id of its user.
    pub fn with_user_id(mut self, id: impl Into<Arc<str>>) -> Self {
        self.user_id = Some(id.into());
        self
    }

    /// The signed-in user's id, for a handler's own queries: the JWT session's `sub` (the
    /// id `authorize` or the adapter gave at sign-in), or the database session's user id.
    /// It is not in the session JSON (Auth.js leaves it out by default); sessions looked up
    /// by [`Auth::lookup_session`](crate::Auth::lookup_session) carry it.
    pub fn user_id(&self) -> Option<&str> {
        self.user_id.as_deref()
    }

    /// The whole session JSON.
    pub fn json(&self) -> &Value {
        &self.json
    }

    /// The whole session JSON, owned.
    pub fn into_json(self) -> Value {
        Arc::unwrap_or_clone(self.json)
    }

    /// A top-level field (`expires`, or one added by the `session` callback).
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.json.get(key)
    }

    /// The `user` object.
    pub fn user(&self) -> Option<&Map<String, Value>> {
        self.json.get("user")?.as_object()
    }

    /// A string field of the `user` object (`id` when the `session` callback adds it).
    pub fn user_str(&self, key: &str) -> Option<&str> {
        self.user()?.get(key)?.as_str()
    }

    /// `user.name`.
    pub fn user_name(&self) -> Option<&str> {
        self.user_str("name")
    }

    /// `user.email`.
    pub fn user_email(&self) -> Option<&str> {
        self.user_str("email")
    }

    /// `user.image`.
    pub fn user_image(&self) -> Option<&str> {
        self.user_str("image")
    }

    /// `expires`: when the session ends, as an ISO 8601 string.
    pub fn expires(&self) -> Option<&str> {
        self.json.get("expires")?.as_str()
    }
}
