//! The credentials sign-in of a [`UserSource`]: the username and password of the form are
//! checked by the source, and the user it answers is the adapter's user linked to the
//! source's account (`<source id>` / the source's user id), made and linked at the first
//! sign-in, so that sessions, second factors and passkeys work as for any other user.

use serde_json::Value;

use super::source::{SourceError, SourceUser, UserSource};
use crate::adapter::{Adapter, AdapterError, AdapterUser, NewUser, UserUpdate};
use crate::email_address::normalize_email;
use crate::types::{Account, JsonObject, ProviderType, User};

/// The longest username looked up; longer ones never match.
const MAX_USERNAME_BYTES: usize = 256;

/// Why [`authorize`] failed (not a wrong password: that is `Ok(None)`).
#[derive(Debug, thiserror::Error)]
pub(crate) enum SignInError {
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error("cannot record the user: {0}")]
    Adapter(#[from] AdapterError),
    /// The right password of a password account whose address is not confirmed yet.
    #[error("the account's email address is not confirmed yet")]
    Unverified,
}

/// The `code` of the `CredentialsSignin` error for a password account whose address is
/// not confirmed yet.
pub(crate) const EMAIL_NOT_VERIFIED: &str = "email_not_verified";

/// Checks the form's `username` (or `email`) and `password` with `source`; the user to
/// sign in, with the source's groups in its `groups` field, or `None`.
///
/// An empty username or password is refused before the source is asked: a directory
/// takes a bind with an empty password as an unauthenticated bind that succeeds
/// ([RFC 4513 §5.1.2](https://www.rfc-editor.org/rfc/rfc4513#section-5.1.2)).
pub(crate) async fn authorize(
    adapter: Option<&dyn Adapter>,
    source: &dyn UserSource,
    credentials: &JsonObject,
) -> Result<Option<User>, SignInError> {
    let field = |k: &str| credentials.get(k).and_then(Value::as_str).unwrap_or("");
    let username = Some(field("username"))
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| field("email"));
    let password = field("password");
    if username.trim().is_empty() || password.is_empty() || username.len() > MAX_USERNAME_BYTES {
        return Ok(None);
    }
    let Some(found) = source.authenticate(username, password).await? else {
        return Ok(None);
    };
    if found.unverified {
        return Err(SignInError::Unverified);
    }
    let stored = match adapter {
        Some(adapter) => match stored_user(adapter, source, &found).await? {
            Some(user) => Some((adapter, user)),
            None => {
                tracing::warn!(
                    source = source.id(),
                    "sign-in refused: the source's address is another user's, and the source does not vouch for its addresses"
                );
                return Ok(None);
            }
        },
        None => None,
    };
    let mut groups = found.groups.clone();
    let (id, name, email) = match stored {
        // Without a database the id is the same at every sign-in.
        None => (
            format!("{}:{}", source.id(), found.id),
            found.name.clone(),
            found.email.clone(),
        ),
        Some((adapter, user)) => {
            if let Some(store) = adapter.user_groups() {
                if found.adapter_user_id.is_some() {
                    // The adapter's own password accounts have no groups of their own: the
                    // user keeps the groups stored (an import's, an operator's).
                    groups = store.get_user_groups(&user.id).await?;
                } else {
                    store.set_user_groups(&user.id, &found.groups).await?;
                }
            }
            (user.id, user.name, user.email)
        }
    };
    let mut user = User::with_id(id);
    user.name = name;
    user.email = email;
    user.extra.insert(
        "groups".into(),
        Value::from(groups.iter().map(String::as_str).collect::<Vec<_>>()),
    );
    Ok(Some(user))
}

/// The adapter's user of `found`: its own for password accounts; else the user linked to
/// the source's account, with the name and address the source now gives, or one made and
/// linked now. The user with the source's address, if there is one, is the one linked when
/// the source vouches for its addresses; otherwise that first sign-in is refused (`None`).
async fn stored_user(
    adapter: &dyn Adapter,
    source_of: &dyn UserSource,
    found: &SourceUser,
) -> Result<Option<AdapterUser>, SignInError> {
    let source = source_of.id();
    if let Some(id) = &found.adapter_user_id {
        return Ok(Some(adapter.get_user(id).await?.ok_or_else(|| {
            AdapterError::Backend("the user went away during the sign-in".into())
        })?));
    }
    let email = found.email.as_deref().and_then(|e| normalize_email(e).ok());
    if let Some(user) = adapter.get_user_by_account(source, &found.id).await? {
        return Ok(Some(
            refreshed(adapter, user, found.name.as_ref(), email).await?,
        ));
    }
    let existing = match &email {
        Some(e) => adapter.get_user_by_email(e).await?,
        None => None,
    };
    let user = match existing {
        Some(_) if !source_of.vouches_for_addresses() => return Ok(None),
        Some(user) => user,
        None => {
            let made = adapter
                .create_user(NewUser {
                    name: found.name.clone(),
                    email: email.clone(),
                    ..NewUser::default()
                })
                .await;
            match (made, &email) {
                (Ok(user), _) => user,
                // Another sign-in made the user with this address first: the same user
                // only where the source's addresses can be trusted.
                (Err(e), Some(address)) if source_of.vouches_for_addresses() => {
                    adapter.get_user_by_email(address).await?.ok_or(e)?
                }
                (Err(e), _) => return Err(e.into()),
            }
        }
    };
    let mut account = Account::new(ProviderType::Credentials, source, found.id.clone());
    account.user_id = Some(user.id.clone());
    if let Err(e) = adapter.link_account(account).await {
        // A concurrent first sign-in linked it: take that user.
        return match adapter.get_user_by_account(source, &found.id).await? {
            Some(user) => Ok(Some(user)),
            None => Err(e.into()),
        };
    }
    Ok(Some(user))
}

/// `user` with the name and address the source gives now, stored when they changed.
async fn refreshed(
    adapter: &dyn Adapter,
    user: AdapterUser,
    name: Option<&String>,
    email: Option<String>,
) -> Result<AdapterUser, AdapterError> {
    let name_changed = name.is_some_and(|n| user.name.as_ref() != Some(n));
    let email_changed = email.is_some() && user.email != email;
    if !name_changed && !email_changed {
        return Ok(user);
    }
    let update = UserUpdate {
        id: user.id.clone(),
        name: name_changed.then(|| name.cloned()),
        email: email_changed.then_some(email),
        ..UserUpdate::default()
    };
    match adapter.update_user(update).await {
        Ok(Some(updated)) => Ok(updated),
        // The address is another user's: keep the stored one.
        Ok(None) | Err(_) => Ok(user),
    }
}
