//! [`SessionJson`]: the session a host's read found ([`Auth::read_session`]), as the
//! framework integrations (`authcore-axum`, `authcore-actix`) hand it to handlers.
//!
//! [`Auth::read_session`]: crate::Auth::read_session

use std::sync::Arc;

use serde_json::{Map, Value};

pub use crate::types::SignInInfo;

/// The session a read found for a signed-in user ([`Auth::read_session`]): the JSON object
/// `GET <basePath>/session` returns (`{"user": {"name", "email", "image"}, "expires"}` by
/// default, plus whatever the `session` callback adds), with what the JSON does not carry:
/// the user's id and how they signed in. Cheap to clone. (The default session the `session`
/// callback receives is a [`Session`](crate::Session); the framework integrations'
/// extractors wrap this type.)
///
/// [`Auth::read_session`]: crate::Auth::read_session
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
    sign_in: Option<Arc<SignInInfo>>,
}

/// What a route asks of a session beyond being signed in (step-up): two factors proven at
/// sign-in, a sign-in of at most some age, or both. The integrations' route guards take
/// one (`RequireAuthLayer::two_factors` / `max_age` in axum, `RequireAuth`'s in actix-web).
/// Only sessions that record their sign-in can show it: with second factors on, JWT and
/// database sessions do ([`SessionJson::sign_in`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepUp {
    two_factors: bool,
    max_age: Option<std::time::Duration>,
}

impl StepUp {
    /// Also two factors (`mfa` in the sign-in's `amr`).
    pub fn two_factors(mut self) -> Self {
        self.two_factors = true;
        self
    }

    /// Also a sign-in of at most `max_age` ago.
    pub fn max_age(mut self, max_age: std::time::Duration) -> Self {
        self.max_age = Some(max_age);
        self
    }

    /// Whether `session` shows what is asked (nothing asked: any session does).
    pub fn is_met_by(&self, session: &SessionJson) -> bool {
        self.is_met(session.sign_in())
    }

    /// Whether a session that signed in as `sign_in` says (`None`: not recorded) shows what
    /// is asked.
    pub fn is_met(&self, sign_in: Option<&SignInInfo>) -> bool {
        if *self == StepUp::default() {
            return true;
        }
        let Some(sign_in) = sign_in else {
            return false;
        };
        (!self.two_factors || sign_in.is_two_factor())
            && self.max_age.is_none_or(|age| sign_in.is_within(age))
    }

    /// Whether two factors are asked.
    pub fn needs_two_factors(&self) -> bool {
        self.two_factors
    }
}

impl SessionJson {
    /// A session from the JSON `GET <basePath>/session` returned.
    pub fn from_json(json: Value) -> Self {
        SessionJson {
            json: Arc::new(json),
            user_id: None,
            sign_in: None,
        }
    }

    /// The same session, with how its user signed in.
    pub fn with_sign_in(mut self, sign_in: SignInInfo) -> Self {
        self.sign_in = Some(Arc::new(sign_in));
        self
    }

    /// How and when the user signed in, where the session records it (with second factors
    /// on); `None` otherwise.
    pub fn sign_in(&self) -> Option<&SignInInfo> {
        self.sign_in.as_deref()
    }

    /// The same session, with the id of its user.
    pub fn with_user_id(mut self, id: impl Into<Arc<str>>) -> Self {
        self.user_id = Some(id.into());
        self
    }

    /// The signed-in user's id, for a handler's own queries: the JWT session's `sub` (the
    /// id `authorize` or the adapter gave at sign-in), or the database session's user id.
    /// It is not in the session JSON (Auth.js leaves it out by default); sessions read by
    /// [`Auth::read_session`](crate::Auth::read_session) carry it.
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

    /// A field the `session` callback added, as the type the application gave it: a
    /// top-level field (`claim::<Vec<String>>("roles")`), or one inside `user` with a
    /// `user.` prefix (`claim::<u64>("user.tenant")`). `None` when it is absent or has
    /// another shape (what the callback wrote does not fit `T`).
    ///
    /// ```
    /// use authcore::SessionJson;
    /// #[derive(serde::Deserialize, Debug, PartialEq)]
    /// struct Plan { name: String, seats: u32 }
    /// let s = SessionJson::from_json(authcore::serde_json::json!({
    ///     "user": {"name": "Ada", "tenant": 7},
    ///     "roles": ["admin", "billing"],
    ///     "plan": {"name": "team", "seats": 5},
    /// }));
    /// assert_eq!(s.claim::<Vec<String>>("roles").unwrap(), ["admin", "billing"]);
    /// assert_eq!(s.claim::<u64>("user.tenant"), Some(7));
    /// assert_eq!(s.claim::<Plan>("plan"), Some(Plan { name: "team".into(), seats: 5 }));
    /// assert_eq!(s.claim::<u64>("roles"), None); // another shape
    /// assert_eq!(s.claim::<String>("missing"), None);
    /// ```
    pub fn claim<T: serde::de::DeserializeOwned>(&self, name: &str) -> Option<T> {
        let value = match name.strip_prefix("user.") {
            Some(field) => self.user()?.get(field)?,
            None => self.json.get(name)?,
        };
        T::deserialize(value).ok()
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
