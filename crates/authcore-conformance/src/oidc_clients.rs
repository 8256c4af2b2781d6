//! [`OidcClientStore`]: the OpenID Provider's clients made at run time, each kept as
//! given (its secret's hash included), a creation refused when the id is taken. The ids are
//! random, so that runs sharing a store pass.

use authcore::adapter::{OidcClientStore, StoredClient, client_secret_hash};

use super::*;

/// Runs every check of this suite.
pub async fn run<A: Adapter + Clone>(adapter: &A) {
    clients_are_kept_as_given(adapter).await;
}

/// The adapter's [`OidcClientStore`], or `None` with check `check` skipped.
fn store<'a, A: Adapter>(adapter: &'a A, check: &str) -> Option<&'a dyn OidcClientStore> {
    capability(
        adapter.capabilities().oidc_clients,
        check,
        "OidcClientStore",
    )
}

/// A client `id` with every field set.
fn client(id: &str) -> StoredClient {
    let now = OffsetDateTime::now_utc()
        .replace_nanosecond(0)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH);
    StoredClient {
        client_id: id.to_owned(),
        name: "Ünïcode app — \"quoted\"".to_owned(),
        redirect_uris: vec![
            "https://app.example/cb".to_owned(),
            "http://127.0.0.1:8080/cb?x=1".to_owned(),
        ],
        post_logout_redirect_uris: vec!["https://app.example/bye".to_owned()],
        grant_types: vec!["authorization_code".to_owned(), "refresh_token".to_owned()],
        scopes: vec!["openid".to_owned(), "email".to_owned()],
        token_endpoint_auth_method: "client_secret_post".to_owned(),
        secret_hash: Some(client_secret_hash("a secret")),
        dpop_bound_access_tokens: true,
        require_pushed_authorization_requests: true,
        access_token_format: Some("opaque".to_owned()),
        created_at: now,
        secret_rotated_at: None,
        disabled_at: None,
    }
}

/// A client comes back as stored; a second creation of its id is refused and changes
/// nothing; an update replaces it while it is as read (and answers `false` for an unknown
/// id, or for a read older than the last change, which it keeps); the listing
/// holds the clients ordered by id.
pub async fn clients_are_kept_as_given<A: Adapter>(adapter: &A) {
    const CHECK: &str = "oidc_clients_are_kept_as_given";
    let Some(store) = store(adapter, CHECK) else {
        return;
    };
    let tag = random_id();
    let (a, b) = (format!("b-{tag}"), format!("a-{tag}"));
    let first = client(&a);
    if !ok(
        CHECK,
        "create_oidc_client",
        store.create_oidc_client(&first).await,
    ) {
        fail(CHECK, "a new client was refused");
    }
    let mut other = client(&a);
    other.name = "another".to_owned();
    if ok(
        CHECK,
        "create_oidc_client",
        store.create_oidc_client(&other).await,
    ) {
        fail(CHECK, "a second client with a taken id was stored");
    }
    let got = ok(CHECK, "get_oidc_client", store.get_oidc_client(&a).await);
    if got.as_ref() != Some(&first) {
        fail(CHECK, format!("stored {first:?}, read {got:?}"));
    }
    if got.and_then(|c| c.secret_hash) != first.secret_hash {
        fail(CHECK, "the secret's hash changed");
    }
    let missing = ok(
        CHECK,
        "get_oidc_client",
        store.get_oidc_client(&format!("none-{tag}")).await,
    );
    if missing.is_some() {
        fail(CHECK, "a client that was never made was found");
    }

    let mut changed = first.clone();
    changed.secret_hash = Some(client_secret_hash("another secret"));
    changed.secret_rotated_at = Some(first.created_at + Duration::seconds(5));
    changed.disabled_at = Some(first.created_at + Duration::seconds(6));
    changed.redirect_uris.clear();
    if !ok(
        CHECK,
        "update_oidc_client",
        store.update_oidc_client(&first, &changed).await,
    ) {
        fail(CHECK, "an update of a stored client answered false");
    }
    // The same data again: still the client's update.
    if !ok(
        CHECK,
        "update_oidc_client",
        store.update_oidc_client(&changed, &changed).await,
    ) {
        fail(CHECK, "an update with unchanged data answered false");
    }
    // An update from a read made before that change: refused, the change kept.
    let mut stale = first.clone();
    stale.name = "stale".to_owned();
    if ok(
        CHECK,
        "update_oidc_client",
        store.update_oidc_client(&first, &stale).await,
    ) {
        fail(CHECK, "an update from a stale read answered true");
    }
    let got = ok(CHECK, "get_oidc_client", store.get_oidc_client(&a).await);
    if got.as_ref() != Some(&changed) {
        fail(CHECK, format!("updated to {changed:?}, read {got:?}"));
    }
    let unknown = client(&format!("none-{tag}"));
    if ok(
        CHECK,
        "update_oidc_client",
        store.update_oidc_client(&unknown, &unknown).await,
    ) {
        fail(CHECK, "an update of an unknown client answered true");
    }
    if ok(
        CHECK,
        "get_oidc_client",
        store.get_oidc_client(&format!("none-{tag}")).await,
    )
    .is_some()
    {
        fail(CHECK, "an update made a client");
    }

    let second = client(&b);
    ok(
        CHECK,
        "create_oidc_client",
        store.create_oidc_client(&second).await,
    );
    let listed: Vec<String> = ok(CHECK, "list_oidc_clients", store.list_oidc_clients().await)
        .into_iter()
        .map(|c| c.client_id)
        .collect();
    let mine: Vec<&String> = listed.iter().filter(|id| id.ends_with(&tag)).collect();
    if mine != [&b, &a] {
        fail(CHECK, format!("listed {mine:?}, expected [{b}, {a}]"));
    }
    let mut sorted = listed.clone();
    sorted.sort();
    if sorted != listed {
        fail(CHECK, "the clients are not ordered by id");
    }
}
