//! The credentials provider (Auth.js `providers/credentials.ts`): an async
//! `authorize(credentials, request)`.
//!
//! ```
//! use authcore::providers::{CredentialField, CredentialsProvider};
//! use authcore::User;
//!
//! let provider = CredentialsProvider::new()
//!     .field("username", CredentialField::new("Username"))
//!     .field("password", CredentialField::new("Password").input_type("password"))
//!     .authorize(|credentials, _request| async move {
//!         let ok = credentials.get("username").and_then(|v| v.as_str()) == Some("demo");
//!         Ok(ok.then(|| User::with_id("1").name("Demo")))
//!     });
//! assert_eq!(provider.id(), "credentials");
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;

use crate::error::BoxError;
use crate::types::{JsonObject, User};

/// The request handed to `authorize`: the current URL, original headers and method, and the
/// parsed body re-serialised as JSON (as Auth.js does).
pub type AuthorizeRequest = http::Request<Bytes>;

/// Why `authorize` failed.
#[derive(Debug, thiserror::Error)]
pub enum AuthorizeError {
    /// Auth.js `CredentialsSignin` with a custom `code`, shown to the client as
    /// `?error=CredentialsSignin&code=<code>`.
    #[error("credentials sign-in refused (code {code})")]
    CredentialsSignin {
        /// The code sent to the client.
        code: String,
    },
    /// Anything else: reported to the client as `Configuration`.
    #[error(transparent)]
    Other(BoxError),
}

/// `?` on an adapter call inside `authorize` (a user lookup): reported as `Configuration`.
impl From<crate::adapter::AdapterError> for AuthorizeError {
    fn from(e: crate::adapter::AdapterError) -> Self {
        AuthorizeError::Other(Box::new(e))
    }
}

/// `?` on any boxed error inside `authorize`: reported as `Configuration`.
impl From<BoxError> for AuthorizeError {
    fn from(e: BoxError) -> Self {
        AuthorizeError::Other(e)
    }
}

impl AuthorizeError {
    /// A `CredentialsSignin` error with a custom code.
    pub fn credentials_signin(code: impl Into<String>) -> Self {
        AuthorizeError::CredentialsSignin { code: code.into() }
    }
}

type AuthorizeFuture = Pin<Box<dyn Future<Output = Result<Option<User>, AuthorizeError>> + Send>>;
type AuthorizeFn = dyn Fn(JsonObject, AuthorizeRequest) -> AuthorizeFuture + Send + Sync;

/// One input field of the built-in sign-in form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CredentialField {
    /// Label shown next to the input.
    pub label: String,
    /// `type` attribute (`text` by default).
    pub input_type: String,
    /// Other HTML attributes (`placeholder`, `autocomplete`, …).
    pub attributes: Vec<(String, String)>,
}

impl CredentialField {
    /// A text field with a label.
    pub fn new(label: impl Into<String>) -> Self {
        CredentialField {
            label: label.into(),
            input_type: "text".to_owned(),
            attributes: Vec::new(),
        }
    }
    /// Sets the input `type`.
    pub fn input_type(mut self, t: impl Into<String>) -> Self {
        self.input_type = t.into();
        self
    }
    /// Adds an HTML attribute.
    pub fn attribute(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.attributes.push((name.into(), value.into()));
        self
    }
}

/// A credentials provider.
#[derive(Clone)]
pub struct CredentialsProvider {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) fields: Vec<(String, CredentialField)>,
    pub(crate) authorize: Option<Arc<AuthorizeFn>>,
    /// Where usernames and passwords are checked, for a provider made by
    /// [`CredentialsProvider::from_source`].
    #[cfg(feature = "passwords")]
    pub(crate) source: Option<Arc<dyn crate::passwords::UserSource>>,
}

impl std::fmt::Debug for CredentialsProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CredentialsProvider")
            .field("id", &self.id)
            .field("name", &self.name)
            .field("fields", &self.fields)
            .field("authorize", &self.authorize.is_some())
            .finish_non_exhaustive()
    }
}

impl Default for CredentialsProvider {
    fn default() -> Self {
        Self::new()
    }
}

impl CredentialsProvider {
    /// Id `credentials`, name `Credentials`, no fields, no `authorize` (set one, or the
    /// config will not build).
    pub fn new() -> Self {
        CredentialsProvider {
            id: "credentials".to_owned(),
            name: "Credentials".to_owned(),
            fields: Vec::new(),
            authorize: None,
            #[cfg(feature = "passwords")]
            source: None,
        }
    }

    /// A username and password form whose users `source` checks, with no `authorize` to
    /// write: id and name of the source (`password`: "Password" …), fields `username` and
    /// `password` (for the password accounts, `username` is an email input labelled
    /// "Email"). With an adapter, the user the source answers is stored and linked at
    /// the first sign-in (so database sessions work without
    /// `credentials_database_sessions`), and the source's groups are kept with
    /// [`UserGroupsStore`](crate::adapter::UserGroupsStore) when the adapter has one; with
    /// JWT sessions they are the `groups` of the user the `jwt` callback receives.
    #[cfg(feature = "passwords")]
    pub fn from_source(source: Arc<dyn crate::passwords::UserSource>) -> Self {
        let id = source.id().to_owned();
        let name = match id.as_str() {
            crate::passwords::PASSWORD_ACCOUNTS_ID => "Password".to_owned(),
            "ldap" => "Directory".to_owned(),
            other => other.to_owned(),
        };
        let mut provider = CredentialsProvider::username_password()
            .with_id(id)
            .with_name(name);
        if provider.id == crate::passwords::PASSWORD_ACCOUNTS_ID {
            // Password accounts sign in by address: the field says so, and still names the
            // saved username for password managers.
            provider.fields[0].1 = CredentialField::new("Email")
                .input_type("email")
                .attribute("autocomplete", "username");
        }
        provider.source = Some(source);
        provider
    }

    /// Id `credentials`, with the fields `username` and `password` (autocompleted as the
    /// browser's saved username and current password); set `authorize`.
    pub fn username_password() -> Self {
        CredentialsProvider::new()
            .field(
                "username",
                CredentialField::new("Username").attribute("autocomplete", "username"),
            )
            .field(
                "password",
                CredentialField::new("Password")
                    .input_type("password")
                    .attribute("autocomplete", "current-password"),
            )
    }

    /// Sets the id.
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = id.into();
        self
    }

    /// Sets the display name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Adds a form field (`credentials` in Auth.js).
    pub fn field(mut self, key: impl Into<String>, field: CredentialField) -> Self {
        self.fields.push((key.into(), field));
        self
    }

    /// Sets `authorize`. It receives the whole parsed body (including `csrfToken` and
    /// `callbackUrl`) and the request; `Ok(None)` refuses with `CredentialsSignin`.
    pub fn authorize<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(JsonObject, AuthorizeRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Option<User>, AuthorizeError>> + Send + 'static,
    {
        self.authorize = Some(Arc::new(move |c, r| Box::pin(f(c, r))));
        self
    }

    /// Provider id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Form fields in order.
    pub fn fields(&self) -> &[(String, CredentialField)] {
        &self.fields
    }

    /// Whether the provider checks passwords itself ([`from_source`](Self::from_source))
    /// and answers users stored in the adapter.
    pub(crate) fn has_source(&self) -> bool {
        #[cfg(feature = "passwords")]
        return self.source.is_some();
        #[cfg(not(feature = "passwords"))]
        false
    }

    pub(crate) async fn call_authorize(
        &self,
        credentials: JsonObject,
        request: AuthorizeRequest,
        adapter: Option<&dyn crate::adapter::Adapter>,
    ) -> Result<Option<User>, AuthorizeError> {
        #[cfg(feature = "passwords")]
        if let Some(source) = &self.source {
            // Boxed: the password check's future is large, and every sign-in's future
            // (the closure's too) would otherwise carry its size through each move.
            return Box::pin(crate::passwords::authorize(
                adapter,
                source.as_ref(),
                &credentials,
            ))
            .await
            .map_err(|e| match e {
                crate::passwords::SignInError::Unverified => {
                    AuthorizeError::credentials_signin(crate::passwords::EMAIL_NOT_VERIFIED)
                }
                e => AuthorizeError::Other(e.into()),
            });
        }
        let _ = adapter;
        match &self.authorize {
            Some(f) => f(credentials, request).await,
            None => Ok(None),
        }
    }
}
