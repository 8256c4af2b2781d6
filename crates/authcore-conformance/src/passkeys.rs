//! [`PasskeyStore`](authcore::adapter::PasskeyStore): removing and naming passkeys.

use super::*;

/// Runs every check of this suite against `adapter`.
pub async fn run<A: Adapter>(adapter: &A) {
    authenticator_deletion(adapter).await;
}

/// `rename_authenticator` names a passkey (and clears the name), `delete_authenticator`
/// removes one (from `get_authenticator` and the user's list); both report whether it
/// existed; authcore extensions, skipped when unsupported.
pub async fn authenticator_deletion<A: Adapter>(adapter: &A) {
    const CHECK: &str = "authenticator_deletion";
    let Some(store) = capability(adapter.capabilities().passkeys, CHECK, "PasskeyStore") else {
        return;
    };
    let user = new_user(adapter, CHECK, "authenticator-deletion").await;
    let (gone, kept) = (random_id(), random_id());
    for id in [&gone, &kept] {
        ok(
            CHECK,
            "create_authenticator",
            adapter
                .create_authenticator(authenticator(&user.id, id, id.clone()))
                .await,
        );
    }
    let deleted = ok(
        CHECK,
        "delete_authenticator",
        store.delete_authenticator(&gone).await,
    );
    eq(
        CHECK,
        "delete_authenticator of a stored one",
        &deleted,
        &true,
    );
    none(
        CHECK,
        "get_authenticator(deleted)",
        adapter.get_authenticator(&gone).await,
    );
    let left: Vec<String> = ok(
        CHECK,
        "list_authenticators_by_user_id",
        adapter.list_authenticators_by_user_id(&user.id).await,
    )
    .into_iter()
    .map(|a| a.credential_id)
    .collect();
    eq(
        CHECK,
        "the user's authenticators after a deletion",
        &left,
        &vec![kept],
    );
    let again = ok(
        CHECK,
        "delete_authenticator again",
        store.delete_authenticator(&gone).await,
    );
    eq(
        CHECK,
        "delete_authenticator of an unknown one",
        &again,
        &false,
    );
}
