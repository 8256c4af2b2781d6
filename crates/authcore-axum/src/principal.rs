//! The [`CurrentPrincipal`] extractor and its [`PrincipalRejection`].

use authcore::Auth;
use authcore::account::{KeyRefused, Principal};
use axum::extract::{FromRef, FromRequestParts};
use axum::response::{IntoResponse, Response};
use http::request::Parts;

use crate::SessionRequired;

/// The extractor of who a request acts as: the [`Principal`] of its API key
/// (`Authorization: Bearer ak_…`) or of its signed-in user in their active organization
/// ([`Auth::principal`]).
///
/// Behind a [`RequireAuthLayer`](crate::RequireAuthLayer) it reads the principal the layer
/// found, from the request extensions (so `Extension<Principal>` works there too);
/// elsewhere it asks [`Auth::principal`], with the [`Auth`] from the router state
/// (`Auth: FromRef<S>`). It rejects with [`PrincipalRejection`]: `401` when signed out or
/// for a refused key.
///
/// ```
/// use authcore_axum::CurrentPrincipal;
///
/// async fn whoami(CurrentPrincipal(who): CurrentPrincipal) -> String {
///     match (&who.organization, &who.api_key) {
///         (Some(org), Some(_)) => format!("a key of {} in {}", who.user_id, org.slug),
///         (Some(org), None) => format!("{} in {}", who.user_id, org.slug),
///         (None, _) => who.user_id,
///     }
/// }
/// # let _: axum::Router<authcore::Auth> = axum::Router::new().route("/whoami", axum::routing::get(whoami));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CurrentPrincipal(pub Principal);

impl<S> FromRequestParts<S> for CurrentPrincipal
where
    Auth: FromRef<S>,
    S: Send + Sync,
{
    type Rejection = PrincipalRejection;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        if let Some(principal) = parts.extensions.get::<Principal>() {
            return Ok(CurrentPrincipal(principal.clone()));
        }
        let auth = Auth::from_ref(state);
        crate::service::client_addr_from_connect_info(&mut parts.extensions);
        match auth.principal_of_request(parts).await {
            Ok(Some(principal)) => {
                parts.extensions.insert(principal.clone());
                Ok(CurrentPrincipal(principal))
            }
            Ok(None) => Err(PrincipalRejection::SignedOut),
            Err(refused) => Err(PrincipalRejection::KeyRefused(refused)),
        }
    }
}

/// Rejection of the [`CurrentPrincipal`] extractor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PrincipalRejection {
    /// Neither a session nor an API key: `401` `{"error":"SessionRequired"}`.
    SignedOut,
    /// The API key was refused: `401` `{"error":"InvalidApiKey"}`, or `503` when the keys
    /// could not be read ([`KeyRefused::response`]).
    KeyRefused(KeyRefused),
}

impl std::fmt::Display for PrincipalRejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PrincipalRejection::SignedOut => SessionRequired.fmt(f),
            PrincipalRejection::KeyRefused(refused) => refused.fmt(f),
        }
    }
}

impl std::error::Error for PrincipalRejection {}

impl IntoResponse for PrincipalRejection {
    fn into_response(self) -> Response {
        match self {
            PrincipalRejection::SignedOut => SessionRequired.into_response(),
            PrincipalRejection::KeyRefused(refused) => refused.response().into_response(),
        }
    }
}
