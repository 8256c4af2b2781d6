//! [`TwoFactorStore`](authcore::adapter::TwoFactorStore): TOTP secrets and recovery codes.

use super::*;

/// Runs every check of this suite against `adapter`.
pub async fn run<A: Adapter + Clone>(adapter: &A, options: &Options) {
    two_factor(adapter).await;
    recovery_code_race(adapter, options).await;
}

/// Second factors (authcore extensions, skipped when unsupported): a TOTP record
/// round-trips and is replaced by the next `set_two_factor`; recovery codes are replaced as
/// a set, each used once, counted; `delete_two_factor` and `delete_user` remove both; one
/// user's codes are not another's.
pub async fn two_factor<A: Adapter>(adapter: &A) {
    const CHECK: &str = "two_factor";
    let Some(store) = capability(adapter.capabilities().two_factor, CHECK, "TwoFactorStore") else {
        return;
    };
    let user = new_user(adapter, CHECK, "two-factor").await;
    let other = new_user(adapter, CHECK, "two-factor-other").await;
    none(
        CHECK,
        "get_two_factor before any",
        store.get_two_factor(&user.id).await,
    );
    let pending = TwoFactor {
        user_id: user.id.clone(),
        totp_secret: format!("eyJhbGciOiJkaXIifQ..{}", random_id()),
        totp_confirmed_at: None,
    };
    ok(
        CHECK,
        "set_two_factor",
        store.set_two_factor(pending.clone()).await,
    );
    let got = some(
        CHECK,
        "get_two_factor",
        store.get_two_factor(&user.id).await,
    );
    eq(CHECK, "an unconfirmed TOTP record", &got, &pending);
    let confirmed = TwoFactor {
        totp_confirmed_at: Some(instant(0)),
        ..pending
    };
    ok(
        CHECK,
        "set_two_factor again",
        store.set_two_factor(confirmed.clone()).await,
    );
    let got = some(
        CHECK,
        "get_two_factor",
        store.get_two_factor(&user.id).await,
    );
    eq(CHECK, "the confirmed record replacing it", &got, &confirmed);
    none(
        CHECK,
        "another user's record",
        store.get_two_factor(&other.id).await,
    );

    let first: Vec<String> = (0..10).map(|_| random_id()).collect();
    ok(
        CHECK,
        "replace_recovery_codes",
        store.replace_recovery_codes(&user.id, &first).await,
    );
    ok(
        CHECK,
        "another user's codes",
        store.replace_recovery_codes(&other.id, &first[..2]).await,
    );
    eq(
        CHECK,
        "count_recovery_codes",
        &ok(CHECK, "count", store.count_recovery_codes(&user.id).await),
        &10,
    );
    eq(
        CHECK,
        "use_recovery_code",
        &ok(
            CHECK,
            "use",
            store.use_recovery_code(&user.id, &first[3]).await,
        ),
        &true,
    );
    eq(
        CHECK,
        "a used code again",
        &ok(
            CHECK,
            "use",
            store.use_recovery_code(&user.id, &first[3]).await,
        ),
        &false,
    );
    eq(
        CHECK,
        "an unknown code",
        &ok(
            CHECK,
            "use",
            store.use_recovery_code(&user.id, &random_id()).await,
        ),
        &false,
    );
    eq(
        CHECK,
        "count after one use",
        &ok(CHECK, "count", store.count_recovery_codes(&user.id).await),
        &9,
    );
    eq(
        CHECK,
        "the other user's code is theirs",
        &ok(
            CHECK,
            "use",
            store.use_recovery_code(&other.id, &first[0]).await,
        ),
        &true,
    );
    let second: Vec<String> = (0..10).map(|_| random_id()).collect();
    ok(
        CHECK,
        "replace_recovery_codes again",
        store.replace_recovery_codes(&user.id, &second).await,
    );
    eq(
        CHECK,
        "an old code after replacing",
        &ok(
            CHECK,
            "use",
            store.use_recovery_code(&user.id, &first[5]).await,
        ),
        &false,
    );
    eq(
        CHECK,
        "a new code",
        &ok(
            CHECK,
            "use",
            store.use_recovery_code(&user.id, &second[5]).await,
        ),
        &true,
    );

    ok(
        CHECK,
        "delete_two_factor",
        store.delete_two_factor(&user.id).await,
    );
    none(
        CHECK,
        "get_two_factor after delete",
        store.get_two_factor(&user.id).await,
    );
    eq(
        CHECK,
        "codes after delete_two_factor",
        &ok(CHECK, "count", store.count_recovery_codes(&user.id).await),
        &0,
    );
    eq(
        CHECK,
        "the other user's codes stay",
        &ok(CHECK, "count", store.count_recovery_codes(&other.id).await),
        &1,
    );

    ok(
        CHECK,
        "set_two_factor",
        store
            .set_two_factor(TwoFactor {
                user_id: other.id.clone(),
                ..confirmed
            })
            .await,
    );
    ok(CHECK, "delete_user", adapter.delete_user(&other.id).await);
    none(
        CHECK,
        "get_two_factor of a deleted user",
        store.get_two_factor(&other.id).await,
    );
    eq(
        CHECK,
        "codes of a deleted user",
        &ok(CHECK, "count", store.count_recovery_codes(&other.id).await),
        &0,
    );
}

/// Two concurrent uses of one recovery code: exactly one succeeds.
pub async fn recovery_code_race<A: Adapter + Clone>(adapter: &A, options: &Options) {
    const CHECK: &str = "recovery_code_race";
    let Some(store) = capability(adapter.capabilities().two_factor, CHECK, "TwoFactorStore") else {
        return;
    };
    let user = new_user(adapter, CHECK, "recovery-race").await;
    for round in 0..options.race_rounds.max(1) {
        let code = random_id();
        ok(
            CHECK,
            "replace_recovery_codes",
            store
                .replace_recovery_codes(&user.id, std::slice::from_ref(&code))
                .await,
        );
        let (a, b) = (adapter.clone(), adapter.clone());
        let (Some(x), Some(y)) = (a.capabilities().two_factor, b.capabilities().two_factor) else {
            fail(CHECK, "a clone of the adapter has no TwoFactorStore");
        };
        let (rx, ry) = futures_util::future::join(
            x.use_recovery_code(&user.id, &code),
            y.use_recovery_code(&user.id, &code),
        )
        .await;
        let used = [ok(CHECK, "use", rx), ok(CHECK, "use", ry)];
        if used.iter().filter(|u| **u).count() != 1 {
            fail(
                CHECK,
                format_args!("round {round}: concurrent uses answered {used:?}, expected one true"),
            );
        }
    }
}
