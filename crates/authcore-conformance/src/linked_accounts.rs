//! [`LinkedAccountStore`](authcore::adapter::LinkedAccountStore): listing a user's accounts and
//! keeping refreshed tokens.

use super::*;

/// Runs every check of this suite against `adapter`.
pub async fn run<A: Adapter + Clone>(adapter: &A, options: &Options) {
    account_tokens(adapter, options).await;
}

/// `list_accounts_by_user_id` lists a user's accounts (ordered by provider and provider
/// account id, no one else's) and `update_account` replaces an account's tokens, keeping
/// its owner and type; both are authcore extensions, skipped when unsupported.
pub async fn account_tokens<A: Adapter>(adapter: &A, options: &Options) {
    const CHECK: &str = "account_tokens";
    let Some(store) = capability(
        adapter.capabilities().linked_accounts,
        CHECK,
        "LinkedAccountStore",
    ) else {
        return;
    };
    let user = new_user(adapter, CHECK, "account-tokens").await;
    let other = new_user(adapter, CHECK, "account-tokens-other").await;
    let none_yet = ok(
        CHECK,
        "list_accounts_by_user_id",
        store.list_accounts_by_user_id(&user.id).await,
    );
    eq(CHECK, "accounts of a new user", &none_yet, &Vec::new());
    let github = full_account(&user.id, ProviderType::Oauth, "github");
    let google = full_account(&user.id, ProviderType::Oidc, "google");
    let elsewhere = full_account(&other.id, ProviderType::Oauth, "github");
    for a in [&google, &github, &elsewhere] {
        ok(CHECK, "link_account", adapter.link_account(a.clone()).await);
    }
    let listed = ok(
        CHECK,
        "list_accounts_by_user_id",
        store.list_accounts_by_user_id(&user.id).await,
    );
    let want = vec![
        expected_account(&github, options),
        expected_account(&google, options),
    ];
    eq(CHECK, "the user's accounts, ordered", &listed, &want);

    let mut refreshed = github.clone();
    refreshed.access_token = Some(format!("at-{}", random_id()));
    refreshed.refresh_token = Some(format!("rt-{}", random_id()));
    refreshed.expires_at = Some(4_102_444_900);
    refreshed.id_token = None;
    // Owner and type are not the method's to change.
    refreshed.user_id = Some(other.id.clone());
    let updated = ok(
        CHECK,
        "update_account",
        store.update_account(&refreshed).await,
    );
    eq(CHECK, "update_account of a linked account", &updated, &true);
    let got = some(
        CHECK,
        "get_account after update_account",
        adapter
            .get_account(&github.provider_account_id, &github.provider)
            .await,
    );
    let mut want = expected_account(&github, options);
    want.access_token.clone_from(&refreshed.access_token);
    want.refresh_token.clone_from(&refreshed.refresh_token);
    want.expires_at = refreshed.expires_at;
    want.id_token = None;
    eq(CHECK, "account after update_account", &got, &want);
    let untouched = some(
        CHECK,
        "get_account(other user's) after update_account",
        adapter
            .get_account(&elsewhere.provider_account_id, &elsewhere.provider)
            .await,
    );
    eq(
        CHECK,
        "another user's account",
        &untouched,
        &expected_account(&elsewhere, options),
    );
    let unknown = Account::new(ProviderType::Oauth, "github", random_id());
    let updated = ok(
        CHECK,
        "update_account(unknown)",
        store.update_account(&unknown).await,
    );
    eq(
        CHECK,
        "update_account of an unknown account",
        &updated,
        &false,
    );
}
