//! Administrators' operations on the OpenID Provider's clients made at run time
//! ([`OidcClientStore`]): make one (its secret shown once), replace its secret, disable and
//! enable it; each recorded in the audit log, never with the secret.

use serde_json::json;
use time::OffsetDateTime;

use super::account::AccountError;
use super::admin::Actor;
use crate::adapter::{
    OidcClientStore, StoredClient, capability, client_secret_hash, redirect_uri_problem,
};
use crate::config::ConfigInner;

/// The grant types a stored client may use.
const GRANT_TYPES: [&str; 4] = [
    "authorization_code",
    "refresh_token",
    "client_credentials",
    "urn:ietf:params:oauth:grant-type:device_code",
];

/// How a stored client may authenticate at the token endpoint.
const AUTH_METHODS: [&str; 3] = ["client_secret_basic", "client_secret_post", "none"];

/// The most redirect URIs (and post-logout ones) of a client.
const MAX_URIS: usize = 20;

/// What an administrator gives for a new client.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct NewClient {
    /// The `client_id`: 1 to 128 characters among letters, digits, `-`, `_`, `.`.
    pub client_id: String,
    /// The name shown to users (1 to 200 characters, no control characters).
    pub name: String,
    /// Where codes may be sent (absolute `https`, or `http` on a loopback host; no
    /// fragment).
    #[serde(default)]
    pub redirect_uris: Vec<String>,
    /// Where RP-initiated logout may send the browser back (same rules).
    #[serde(default)]
    pub post_logout_redirect_uris: Vec<String>,
    /// The grant types (default `authorization_code`).
    #[serde(default)]
    pub grant_types: Vec<String>,
    /// The scopes it may ask for (default: the provider's, as for a configured client).
    #[serde(default)]
    pub scopes: Vec<String>,
    /// `client_secret_basic` (the default), `client_secret_post`, or `none` for a public
    /// client (no secret; PKCE).
    #[serde(default)]
    pub token_endpoint_auth_method: Option<String>,
    /// Its access tokens must be DPoP-bound (RFC 9449 §5.2; default no).
    #[serde(default)]
    pub dpop_bound_access_tokens: bool,
    /// Its authorization requests must be pushed first (RFC 9126 §6; default no).
    #[serde(default)]
    pub require_pushed_authorization_requests: bool,
    /// `jwt` (the default: signed access tokens) or `opaque` (sealed access tokens that
    /// only the introspection endpoint reads).
    #[serde(default)]
    pub access_token_format: Option<String>,
}

impl NewClient {
    /// A new client with this id, name and redirect URIs, the rest by default.
    pub fn new(
        client_id: impl Into<String>,
        name: impl Into<String>,
        redirect_uris: Vec<String>,
    ) -> Self {
        NewClient {
            client_id: client_id.into(),
            name: name.into(),
            redirect_uris,
            ..Default::default()
        }
    }
}

/// A client secret, to hand over once: it is stored only as its SHA-256.
#[derive(Clone, PartialEq, Eq)]
pub struct ClientSecretOnce(String);

impl ClientSecretOnce {
    /// The secret's text.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ClientSecretOnce {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClientSecretOnce([redacted])")
    }
}

/// A new secret: 32 random bytes in base64url, and its stored form.
fn new_secret() -> (ClientSecretOnce, String) {
    let secret = crate::random::b64url_token::<32>();
    let hash = client_secret_hash(&secret);
    (ClientSecretOnce(secret), hash)
}

fn store(c: &ConfigInner) -> Result<&dyn OidcClientStore, AccountError> {
    let adapter = c.adapter.as_deref().ok_or(AccountError::NoAdapter)?;
    Ok(capability(adapter.oidc_clients(), "OidcClientStore")?)
}

fn invalid(message: impl Into<String>) -> AccountError {
    AccountError::InvalidValue(message.into())
}

/// The client as validated, or what is wrong.
fn validated(new: &NewClient, now: OffsetDateTime) -> Result<StoredClient, AccountError> {
    let id = new.client_id.trim();
    if id.is_empty()
        || id.len() > 128
        || !id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    {
        return Err(invalid(
            "a client id has 1 to 128 characters among letters, digits, -, _ and .",
        ));
    }
    let name = new.name.trim();
    if name.is_empty() || name.chars().count() > 200 || name.chars().any(char::is_control) {
        return Err(invalid(
            "a client's name has 1 to 200 characters and no control characters",
        ));
    }
    for uris in [&new.redirect_uris, &new.post_logout_redirect_uris] {
        if uris.len() > MAX_URIS {
            return Err(invalid(format!("at most {MAX_URIS} URIs of each kind")));
        }
        if let Some(problem) = uris.iter().find_map(|u| redirect_uri_problem(u)) {
            return Err(invalid(format!("a redirect URI: {problem}")));
        }
    }
    let mut grant_types = new.grant_types.clone();
    if grant_types.is_empty() {
        grant_types.push("authorization_code".to_owned());
    }
    if let Some(g) = grant_types
        .iter()
        .find(|g| !GRANT_TYPES.contains(&g.as_str()))
    {
        return Err(invalid(format!(
            "grant type {g:?} is not one of {}",
            GRANT_TYPES.join(", ")
        )));
    }
    grant_types.sort_unstable();
    grant_types.dedup();
    let code = grant_types.iter().any(|g| g == "authorization_code");
    if code && new.redirect_uris.is_empty() {
        return Err(invalid("give at least one redirect URI"));
    }
    let method = new
        .token_endpoint_auth_method
        .as_deref()
        .unwrap_or("client_secret_basic");
    if !AUTH_METHODS.contains(&method) {
        return Err(invalid(format!(
            "token_endpoint_auth_method is one of {}",
            AUTH_METHODS.join(", ")
        )));
    }
    if method == "none" && grant_types.iter().any(|g| g == "client_credentials") {
        return Err(invalid(
            "the client_credentials grant is for clients with a secret",
        ));
    }
    if new.scopes.len() > 20
        || new
            .scopes
            .iter()
            .any(|s| s.is_empty() || s.len() > 64 || !s.bytes().all(|b| b.is_ascii_graphic()))
    {
        return Err(invalid("scopes are at most 20 words of 1 to 64 characters"));
    }
    let access_token_format = match new.access_token_format.as_deref().map(str::trim) {
        None | Some("jwt") => None,
        Some("opaque") => Some("opaque".to_owned()),
        Some(_) => {
            return Err(invalid(
                "accessTokenFormat is \"jwt\" (the default) or \"opaque\"",
            ));
        }
    };
    Ok(StoredClient {
        client_id: id.to_owned(),
        name: name.to_owned(),
        redirect_uris: new.redirect_uris.clone(),
        post_logout_redirect_uris: new.post_logout_redirect_uris.clone(),
        grant_types,
        scopes: new.scopes.clone(),
        token_endpoint_auth_method: method.to_owned(),
        secret_hash: None,
        dpop_bound_access_tokens: new.dpop_bound_access_tokens,
        require_pushed_authorization_requests: new.require_pushed_authorization_requests,
        access_token_format,
        created_at: now,
        secret_rotated_at: None,
        disabled_at: None,
    })
}

/// The client's fields for the audit log (never its secret or its hash).
fn audit_json(client: &StoredClient) -> serde_json::Value {
    json!({
        "name": client.name,
        "redirectUris": client.redirect_uris,
        "postLogoutRedirectUris": client.post_logout_redirect_uris,
        "grantTypes": client.grant_types,
        "scopes": client.scopes,
        "tokenEndpointAuthMethod": client.token_endpoint_auth_method,
        "dpopBoundAccessTokens": client.dpop_bound_access_tokens,
        "requirePushedAuthorizationRequests": client.require_pushed_authorization_requests,
        "accessTokenFormat": client.access_token_format(),
        "disabled": client.is_disabled(),
    })
}

/// A client made at run time as administrators see it: everything but its secret's hash,
/// which no answer, page or serialisation of this type carries.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ClientInfo {
    /// The `client_id`.
    pub client_id: String,
    /// The name shown to users.
    pub name: String,
    /// Where codes may be sent.
    pub redirect_uris: Vec<String>,
    /// Where RP-initiated logout may send the browser back.
    pub post_logout_redirect_uris: Vec<String>,
    /// The grant types it may use.
    pub grant_types: Vec<String>,
    /// The scopes it may ask for (empty: the provider's).
    pub scopes: Vec<String>,
    /// How it authenticates at the token endpoint.
    pub token_endpoint_auth_method: String,
    /// Whether it has a secret (a confidential client).
    pub has_secret: bool,
    /// Whether its access tokens must be DPoP-bound.
    pub dpop_bound_access_tokens: bool,
    /// Whether its authorization requests must be pushed first.
    pub require_pushed_authorization_requests: bool,
    /// What its access tokens are: `jwt` or `opaque`.
    pub access_token_format: String,
    /// When it was made.
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// When its secret was last replaced, if ever.
    #[serde(with = "time::serde::rfc3339::option")]
    pub secret_rotated_at: Option<OffsetDateTime>,
    /// When it was disabled, if it is.
    #[serde(with = "time::serde::rfc3339::option")]
    pub disabled_at: Option<OffsetDateTime>,
}

impl From<&StoredClient> for ClientInfo {
    fn from(c: &StoredClient) -> Self {
        ClientInfo {
            client_id: c.client_id.clone(),
            name: c.name.clone(),
            redirect_uris: c.redirect_uris.clone(),
            post_logout_redirect_uris: c.post_logout_redirect_uris.clone(),
            grant_types: c.grant_types.clone(),
            scopes: c.scopes.clone(),
            token_endpoint_auth_method: c.token_endpoint_auth_method.clone(),
            has_secret: c.secret_hash.is_some(),
            dpop_bound_access_tokens: c.dpop_bound_access_tokens,
            require_pushed_authorization_requests: c.require_pushed_authorization_requests,
            access_token_format: c.access_token_format().to_owned(),
            created_at: c.created_at,
            secret_rotated_at: c.secret_rotated_at,
            disabled_at: c.disabled_at,
        }
    }
}

/// Every stored client, ordered by id.
pub(crate) async fn list(c: &ConfigInner, _actor: &Actor) -> Result<Vec<ClientInfo>, AccountError> {
    let clients = store(c)?.list_oidc_clients().await?;
    Ok(clients.iter().map(ClientInfo::from).collect())
}

/// Makes a client (`admin.clientCreated`); its secret, unless it is public, comes back
/// once. `ClientIdTaken` for an id a configured or stored client has; `InvalidValue` for
/// one the OpenID Provider would not use ([`Admins::client_check`](crate::admin::Admins::client_check)).
pub(crate) async fn create(
    c: &ConfigInner,
    actor: &Actor,
    new: &NewClient,
) -> Result<(ClientInfo, Option<ClientSecretOnce>), AccountError> {
    let mut client = validated(new, OffsetDateTime::now_utc())?;
    actor.may_change(c).await?;
    let admins = c.admins.as_ref().ok_or(AccountError::AdminOff)?;
    if admins.configured_clients.contains(&client.client_id) {
        tracing::warn!(client = %client.client_id, by = %actor.user_id, "client refused: a configured client has its id");
        return Err(AccountError::ClientIdTaken);
    }
    let secret = (client.token_endpoint_auth_method != "none").then(|| {
        let (secret, hash) = new_secret();
        client.secret_hash = Some(hash);
        secret
    });
    // The provider's own rules: what is made here, it uses.
    if let Some(check) = &admins.client_check
        && let Err(problem) = check(&client)
    {
        tracing::info!(client = %client.client_id, by = %actor.user_id, %problem, "client refused by the provider's rules");
        return Err(invalid(problem));
    }
    if !store(c)?.create_oidc_client(&client).await? {
        return Err(AccountError::ClientIdTaken);
    }
    tracing::warn!(client = %client.client_id, by = %actor.user_id, "oidc client created");
    crate::actions::audit::record(
        c,
        actor
            .event("admin.clientCreated", &client.client_id)
            .with("after", audit_json(&client)),
    )
    .await;
    Ok((ClientInfo::from(&client), secret))
}

/// How many times a change is tried again when the client changed between its read and
/// its write.
const CHANGE_ATTEMPTS: usize = 8;

/// Changes the stored client `client_id` by `change` (`None`: nothing to change) in a
/// conditional update: when another change came between the read and the write, the
/// client is read again and `change` applied to it, so that neither change undoes the
/// other. The client before and after; `NotFound` when there is none.
async fn change_client(
    store: &dyn OidcClientStore,
    client_id: &str,
    mut change: impl FnMut(&StoredClient) -> Result<Option<StoredClient>, AccountError>,
) -> Result<(StoredClient, StoredClient), AccountError> {
    for _ in 0..CHANGE_ATTEMPTS {
        let before = store
            .get_oidc_client(client_id)
            .await?
            .ok_or(AccountError::NotFound)?;
        let Some(after) = change(&before)? else {
            return Ok((before.clone(), before));
        };
        if store.update_oidc_client(&before, &after).await? {
            return Ok((before, after));
        }
    }
    tracing::warn!(client = %client_id, "oidc client changed by others at every attempt");
    Err(invalid("the client was changed meanwhile: try again"))
}

/// Replaces the client's secret (`admin.clientSecretRotated`): the old one stops working
/// at once, the new one comes back once. `InvalidValue` for a public client.
pub(crate) async fn rotate_secret(
    c: &ConfigInner,
    actor: &Actor,
    client_id: &str,
) -> Result<ClientSecretOnce, AccountError> {
    actor.may_change(c).await?;
    let (secret, hash) = new_secret();
    change_client(store(c)?, client_id, |client| {
        if client.secret_hash.is_none() {
            return Err(invalid("a public client has no secret"));
        }
        Ok(Some(StoredClient {
            secret_hash: Some(hash.clone()),
            secret_rotated_at: Some(OffsetDateTime::now_utc()),
            ..client.clone()
        }))
    })
    .await?;
    tracing::warn!(client = %client_id, by = %actor.user_id, "oidc client secret rotated");
    crate::actions::audit::record(c, actor.event("admin.clientSecretRotated", client_id)).await;
    Ok(secret)
}

/// Disables (`disable`) or enables the client (`admin.clientDisabled`,
/// `admin.clientEnabled`): a disabled client's requests and tokens are refused.
pub(crate) async fn set_disabled(
    c: &ConfigInner,
    actor: &Actor,
    client_id: &str,
    disable: bool,
) -> Result<ClientInfo, AccountError> {
    actor.may_change(c).await?;
    let (before, after) = change_client(store(c)?, client_id, |client| {
        Ok((client.is_disabled() != disable).then(|| StoredClient {
            disabled_at: disable.then(OffsetDateTime::now_utc),
            ..client.clone()
        }))
    })
    .await?;
    if before == after {
        return Ok(ClientInfo::from(&after));
    }
    let kind = if disable {
        "admin.clientDisabled"
    } else {
        "admin.clientEnabled"
    };
    tracing::warn!(client = %client_id, by = %actor.user_id, disable, "oidc client changed");
    crate::actions::audit::record(
        c,
        actor
            .event(kind, client_id)
            .with("before", json!({ "disabled": before.is_disabled() }))
            .with("after", json!({ "disabled": disable })),
    )
    .await;
    Ok(ClientInfo::from(&after))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn new_clients_are_validated() {
        let now = OffsetDateTime::UNIX_EPOCH;
        let ok = NewClient::new("app-1", "App", vec!["https://app.example/cb".into()]);
        let with = |f: fn(&mut NewClient)| {
            let mut n = ok.clone();
            f(&mut n);
            n
        };
        let cases: Vec<(&str, NewClient, bool)> = vec![
            ("valid", ok.clone(), true),
            (
                "loopback http",
                with(|n| n.redirect_uris = vec!["http://127.0.0.1:8080/cb".into()]),
                true,
            ),
            (
                "http elsewhere",
                with(|n| n.redirect_uris = vec!["http://app.example/cb".into()]),
                false,
            ),
            (
                "fragment",
                with(|n| n.redirect_uris = vec!["https://app.example/cb#x".into()]),
                false,
            ),
            (
                "relative",
                with(|n| n.redirect_uris = vec!["/cb".into()]),
                false,
            ),
            ("no redirect", with(|n| n.redirect_uris.clear()), false),
            ("empty id", with(|n| n.client_id = String::new()), false),
            ("id with space", with(|n| n.client_id = "a b".into()), false),
            ("long id", with(|n| n.client_id = "a".repeat(129)), false),
            ("empty name", with(|n| n.name = " ".into()), false),
            ("control in name", with(|n| n.name = "a\u{7}".into()), false),
            (
                "unknown grant",
                with(|n| n.grant_types = vec!["password".into()]),
                false,
            ),
            (
                "unknown method",
                with(|n| n.token_endpoint_auth_method = Some("tls".into())),
                false,
            ),
            (
                "public service",
                with(|n| {
                    n.token_endpoint_auth_method = Some("none".into());
                    n.grant_types = vec!["client_credentials".into()];
                }),
                false,
            ),
            (
                "bad logout uri",
                with(|n| n.post_logout_redirect_uris = vec!["ftp://x".into()]),
                false,
            ),
            (
                "opaque tokens",
                with(|n| n.access_token_format = Some("opaque".into())),
                true,
            ),
            (
                "signed tokens",
                with(|n| n.access_token_format = Some("jwt".into())),
                true,
            ),
            (
                "unknown token format",
                with(|n| n.access_token_format = Some("JWT".into())),
                false,
            ),
        ];
        for (name, new, want) in cases {
            assert_eq!(validated(&new, now).is_ok(), want, "{name}");
        }
    }

    #[test]
    fn a_new_secret_matches_its_hash_only() {
        let (secret, hash) = new_secret();
        assert_eq!(secret.expose().len(), 43);
        let client = StoredClient {
            secret_hash: Some(hash),
            ..validated(
                &NewClient::new("a", "A", vec!["https://a.example/cb".into()]),
                OffsetDateTime::UNIX_EPOCH,
            )
            .unwrap()
        };
        assert!(client.secret_matches(secret.expose()));
        assert!(!client.secret_matches("other"));
        assert!(!format!("{secret:?}").contains(secret.expose()));
        let shown = serde_json::to_string(&ClientInfo::from(&client)).unwrap();
        assert!(!shown.contains("secretHash"), "{shown}");
        assert!(
            !shown.contains(client.secret_hash.as_deref().unwrap()),
            "{shown}"
        );
        assert!(shown.contains(r#""hasSecret":true"#), "{shown}");
    }

    /// The memory store, each read followed by a pause in which the other change runs:
    /// two changes made at once both read the client before either writes.
    struct Interleaved {
        inner: crate::adapter::MemoryAdapter,
        refused: std::sync::atomic::AtomicUsize,
    }

    #[async_trait::async_trait]
    impl OidcClientStore for Interleaved {
        async fn create_oidc_client(
            &self,
            client: &StoredClient,
        ) -> Result<bool, crate::adapter::AdapterError> {
            self.inner.create_oidc_client(client).await
        }
        async fn get_oidc_client(
            &self,
            client_id: &str,
        ) -> Result<Option<StoredClient>, crate::adapter::AdapterError> {
            let read = self.inner.get_oidc_client(client_id).await;
            tokio::task::yield_now().await;
            read
        }
        async fn list_oidc_clients(
            &self,
        ) -> Result<Vec<StoredClient>, crate::adapter::AdapterError> {
            self.inner.list_oidc_clients().await
        }
        async fn update_oidc_client(
            &self,
            before: &StoredClient,
            after: &StoredClient,
        ) -> Result<bool, crate::adapter::AdapterError> {
            let done = self.inner.update_oidc_client(before, after).await?;
            if !done {
                self.refused
                    .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            Ok(done)
        }
    }

    #[tokio::test]
    async fn a_rotation_and_a_disabling_at_once_both_hold() {
        let store = Interleaved {
            inner: crate::adapter::MemoryAdapter::new(),
            refused: std::sync::atomic::AtomicUsize::new(0),
        };
        let (first, first_hash) = new_secret();
        let client = StoredClient {
            secret_hash: Some(first_hash),
            ..validated(
                &NewClient::new("a", "A", vec!["https://a.example/cb".into()]),
                OffsetDateTime::UNIX_EPOCH,
            )
            .unwrap()
        };
        assert!(store.create_oidc_client(&client).await.unwrap());
        let (second, second_hash) = new_secret();
        let rotate = change_client(&store, "a", |c| {
            Ok(Some(StoredClient {
                secret_hash: Some(second_hash.clone()),
                ..c.clone()
            }))
        });
        let disable = change_client(&store, "a", |c| {
            Ok((!c.is_disabled()).then(|| StoredClient {
                disabled_at: Some(OffsetDateTime::UNIX_EPOCH),
                ..c.clone()
            }))
        });
        let (rotated, disabled) = tokio::join!(rotate, disable);
        rotated.unwrap();
        disabled.unwrap();
        // The two read the same client: one write was refused and made again.
        assert_eq!(store.refused.load(std::sync::atomic::Ordering::SeqCst), 1);
        let stored = store.inner.get_oidc_client("a").await.unwrap().unwrap();
        assert!(stored.is_disabled(), "the disabling holds");
        assert!(stored.secret_matches(second.expose()), "the rotation holds");
        assert!(!stored.secret_matches(first.expose()));
    }
}
