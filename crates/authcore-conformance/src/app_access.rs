//! [`AppAccessStore`]: the access users granted to
//! applications of authcore as an OpenID Provider.

use super::*;
use authcore::adapter::DatabaseId;
use authcore::ratelimit::{RateLimitStore, SingleUseStore};

/// Runs every check of this suite against `adapter`.
pub async fn run<A: Adapter + Clone>(adapter: &A, options: &Options) {
    app_access(adapter).await;
    app_access_race(adapter, options).await;
}

/// Access granted to applications: grants add scopes and keep the first grant's time, get
/// answers revoked access too, the list holds the user's unrevoked access by client id,
/// revocation clears the scopes and moves the epoch on once, a grant after it starts afresh
/// in the new epoch; other users and unknown ids see nothing (authcore extension, skipped
/// when unsupported).
pub async fn app_access<A: Adapter>(adapter: &A) {
    const CHECK: &str = "app_access";
    let Some(store) = capability(adapter.capabilities().app_access, CHECK, "AppAccessStore") else {
        return;
    };
    let user = new_user(adapter, CHECK, "app-access").await;
    let other = new_user(adapter, CHECK, "app-access-other").await;
    let (a, b) = (format!("a-{}", random_id()), format!("b-{}", random_id()));
    none(
        CHECK,
        "get_app_access before any",
        store.get_app_access(&user.id, &a).await,
    );
    let list = ok(
        CHECK,
        "list_app_access before any",
        store.list_app_access(&user.id).await,
    );
    eq(CHECK, "access before any", &list, &vec![]);

    let (t0, t1, t2, t3) = (instant(-300), instant(-200), instant(-100), instant(0));
    let first = ok(
        CHECK,
        "grant_app_access",
        store
            .grant_app_access(&user.id, &a, "App A", &scopes(&["openid", "email"]), t0)
            .await,
    );
    let want = AppAccess {
        user_id: user.id.clone(),
        client_id: a.clone(),
        client_name: "App A".into(),
        scopes: scopes(&["email", "openid"]),
        created_at: t0,
        updated_at: t0,
        epoch: 0,
    };
    same_access(CHECK, "a first grant (scopes sorted)", &first, &want);
    let again = ok(
        CHECK,
        "grant_app_access again",
        store
            .grant_app_access(&user.id, &a, "App A2", &scopes(&["profile", "openid"]), t1)
            .await,
    );
    let want = AppAccess {
        client_name: "App A2".into(),
        scopes: scopes(&["email", "openid", "profile"]),
        updated_at: t1,
        ..want
    };
    same_access(
        CHECK,
        "a second grant (scopes added, name updated)",
        &again,
        &want,
    );
    let got = some(
        CHECK,
        "get_app_access",
        store.get_app_access(&user.id, &a).await,
    );
    same_access(CHECK, "the stored access", &got, &want);
    joined_read_agrees(adapter, store, "the user with their access", &user.id, &a).await;
    joined_read_agrees(adapter, store, "a user without access", &other.id, &a).await;
    joined_read_agrees(adapter, store, "another client", &user.id, &random_id()).await;
    let got_b = ok(
        CHECK,
        "grant_app_access to another client",
        store
            .grant_app_access(&user.id, &b, "App B", &scopes(&["openid"]), t1)
            .await,
    );
    let list = ok(
        CHECK,
        "list_app_access",
        store.list_app_access(&user.id).await,
    );
    eq(
        CHECK,
        "listed clients, by client id",
        &list.iter().map(|x| x.client_id.clone()).collect::<Vec<_>>(),
        &vec![a.clone(), b.clone()],
    );
    same_access(CHECK, "the listed access", &list[0], &want);
    same_access(CHECK, "the listed access", &list[1], &got_b);
    let list = ok(
        CHECK,
        "list_app_access of another user",
        store.list_app_access(&other.id).await,
    );
    eq(CHECK, "another user's access", &list, &vec![]);
    none(
        CHECK,
        "get_app_access of another user",
        store.get_app_access(&other.id, &a).await,
    );

    let revoked = ok(
        CHECK,
        "revoke_app_access",
        store.revoke_app_access(&user.id, &a, t2).await,
    );
    eq(CHECK, "revoke_app_access answer", &revoked, &true);
    let got = some(
        CHECK,
        "get_app_access after revocation",
        store.get_app_access(&user.id, &a).await,
    );
    let want = AppAccess {
        scopes: Vec::new(),
        updated_at: t2,
        epoch: 1,
        ..want
    };
    same_access(CHECK, "revoked access", &got, &want);
    joined_read_agrees(adapter, store, "the user with revoked access", &user.id, &a).await;
    let list = ok(
        CHECK,
        "list_app_access after revocation",
        store.list_app_access(&user.id).await,
    );
    eq(
        CHECK,
        "listed after revocation",
        &list.iter().map(|x| x.client_id.clone()).collect::<Vec<_>>(),
        &vec![b.clone()],
    );
    let twice = ok(
        CHECK,
        "revoke_app_access again",
        store.revoke_app_access(&user.id, &a, t3).await,
    );
    eq(CHECK, "revoking revoked access", &twice, &false);
    let got = some(
        CHECK,
        "get_app_access after a second revocation",
        store.get_app_access(&user.id, &a).await,
    );
    eq(CHECK, "the epoch after a second revocation", &got.epoch, &1);
    let unknown = ok(
        CHECK,
        "revoke_app_access of an unknown client",
        store.revoke_app_access(&user.id, &random_id(), t3).await,
    );
    eq(CHECK, "revoking what was never granted", &unknown, &false);

    let fresh = ok(
        CHECK,
        "grant_app_access after revocation",
        store
            .grant_app_access(&user.id, &a, "App A", &scopes(&["openid"]), t3)
            .await,
    );
    let want = AppAccess {
        client_name: "App A".into(),
        scopes: scopes(&["openid"]),
        created_at: t3,
        updated_at: t3,
        epoch: 1,
        ..want
    };
    same_access(
        CHECK,
        "a grant after revocation (afresh, same epoch)",
        &fresh,
        &want,
    );

    for id in unknown_ids() {
        none(
            CHECK,
            "get_app_access(unknown user)",
            store.get_app_access(&id, &a).await,
        );
        let list = ok(
            CHECK,
            "list_app_access(unknown user)",
            store.list_app_access(&id).await,
        );
        eq(CHECK, "an unknown user's access", &list, &vec![]);
        let r = ok(
            CHECK,
            "revoke_app_access(unknown user)",
            store.revoke_app_access(&id, &a, t3).await,
        );
        eq(CHECK, "revoking an unknown user's access", &r, &false);
        joined_read_agrees(adapter, store, "an unknown user", &id, &a).await;
    }
}

/// The user read with their access ([`AppAccessStore::get_user_with_app_access`], through
/// the `dyn Adapter` method that falls back to two reads) is what the two reads answer:
/// the user or none, and their access for the client or none.
async fn joined_read_agrees<A: Adapter>(
    adapter: &A,
    store: &dyn AppAccessStore,
    what: &str,
    user_id: &str,
    client_id: &str,
) {
    const CHECK: &str = "app_access";
    let dynamic: &dyn Adapter = adapter;
    let what = format!("get_user_with_app_access: {what}");
    let joined = ok(
        CHECK,
        &what,
        dynamic.get_user_with_app_access(user_id, client_id).await,
    );
    let user = ok(CHECK, &what, adapter.get_user(user_id).await);
    let access = ok(CHECK, &what, store.get_app_access(user_id, client_id).await);
    match (joined, user) {
        (None, None) => {}
        (Some((got_user, got_access)), Some(user)) => {
            same_user(CHECK, &what, &got_user, &user);
            match (got_access, access) {
                (None, None) => {}
                (Some(got), Some(want)) => same_access(CHECK, &what, &got, &want),
                (got, want) => fail(
                    CHECK,
                    format!("{what}: access {got:?}, read alone {want:?}"),
                ),
            }
        }
        (got, want) => fail(
            CHECK,
            format!("{what}: {got:?}, the user read alone {want:?}"),
        ),
    }
}

/// The user read with their access and a token's two revocation marks in one read
/// ([`SingleUseStore::user_with_app_access_unless_marked`], which an OpenID Provider asks on
/// every use of a user's access token), for an adapter and `marks`, a rate-limit store in
/// its database ([`RateLimitStore::database`]): with neither mark made, what the two reads
/// answer (the user or none, their access or none); with either made, or with an unknown
/// user, `None`; once the mark's time has passed, the user again. Asked with another
/// database's id, the adapter answers [`AdapterError::Unsupported`]. Skipped when the
/// store names no database (then the marks are read on their own).
pub async fn user_read_with_marks<A: Adapter, S: RateLimitStore>(adapter: &A, marks: &S) {
    const CHECK: &str = "user_read_with_marks";
    let Some(store) = capability(adapter.capabilities().app_access, CHECK, "AppAccessStore") else {
        return;
    };
    if marks.database().is_none() {
        eprintln!("adapter conformance check '{CHECK}' skipped: the store names no database");
        return;
    }
    let single_use = SingleUseStore::new(marks);
    let read = |user_id: &str, client_id: &str, token: &str, grant: &str| {
        let owned = [user_id, client_id, token, grant].map(str::to_owned);
        async move {
            let [user_id, client_id, token, grant] = owned;
            let marks = [
                ("conformance-token", &*token),
                ("conformance-grant", &*grant),
            ];
            let read = single_use
                .user_with_app_access_unless_marked(store, &user_id, &client_id, marks)
                .await;
            ok(CHECK, "user_with_app_access_unless_marked", read)
        }
    };
    let user = new_user(adapter, CHECK, "user-read-with-marks").await;
    let (client, other_client) = (random_id(), random_id());
    ok(
        CHECK,
        "grant_app_access",
        store
            .grant_app_access(&user.id, &client, "App", &scopes(&["openid"]), instant(0))
            .await,
    );
    let want_access = some(
        CHECK,
        "get_app_access",
        store.get_app_access(&user.id, &client).await,
    );
    let unmarked = |what: &str, got: Option<(AdapterUser, Option<AppAccess>)>, access: bool| {
        let Some((got_user, got_access)) = got else {
            fail(CHECK, format_args!("{what}: no user read"));
        };
        same_user(CHECK, what, &got_user, &user);
        match (got_access, access) {
            (Some(got), true) => same_access(CHECK, what, &got, &want_access),
            (None, false) => {}
            (got, _) => fail(CHECK, format_args!("{what}: access {got:?}")),
        }
    };
    let nothing = |what: &str, got: Option<(AdapterUser, Option<AppAccess>)>| {
        if let Some((user, _)) = got {
            fail(CHECK, format_args!("{what}: read user {}", user.id));
        }
    };
    let (token, grant, fresh_token) = (random_id(), random_id(), random_id());
    let got = read(&user.id, &client, &token, &grant).await;
    unmarked("neither mark made", got, true);
    let got = read(&user.id, &other_client, &token, &grant).await;
    unmarked("no access for the client", got, false);
    for id in unknown_ids() {
        nothing("an unknown user", read(&id, &client, &token, &grant).await);
    }

    let day = std::time::Duration::from_secs(86_400);
    let short = std::time::Duration::from_secs(2);
    for (kind, value, ttl) in [
        ("conformance-token", &token, day),
        ("conformance-grant", &grant, short),
    ] {
        if let Err(e) = single_use.mark(kind, value, ttl).await {
            fail(CHECK, format_args!("mark: {e}"));
        }
    }
    nothing(
        "the first mark made",
        read(&user.id, &client, &token, &grant).await,
    );
    let got = read(&user.id, &client, &fresh_token, &grant).await;
    nothing("the second mark made", got);
    // A blocking sleep, as the rate-limit suite's (this crate needs no timer).
    std::thread::sleep(short + std::time::Duration::from_millis(200));
    let got = read(&user.id, &client, &fresh_token, &grant).await;
    unmarked("the mark's time passed", got, true);

    let elsewhere = store
        .get_user_with_app_access_unless_locked(&user.id, &client, DatabaseId::unique(), ["a", "b"])
        .await;
    if !matches!(elsewhere, Err(AdapterError::Unsupported(_))) {
        fail(
            CHECK,
            format_args!("another database's marks read as this one's: {elsewhere:?}"),
        );
    }
}

/// Concurrent grants of different scopes lose none; of two concurrent revocations one
/// answers `true` and the epoch moves on once.
pub async fn app_access_race<A: Adapter + Clone>(adapter: &A, options: &Options) {
    const CHECK: &str = "app_access_race";
    let Some(store) = capability(adapter.capabilities().app_access, CHECK, "AppAccessStore") else {
        return;
    };
    let user = new_user(adapter, CHECK, "app-access-race").await;
    let client = random_id();
    for round in 0..options.race_rounds.max(1) {
        let (a, b) = (adapter.clone(), adapter.clone());
        let (Some(x), Some(y)) = (a.capabilities().app_access, b.capabilities().app_access) else {
            fail(CHECK, "a clone of the adapter has no AppAccessStore");
        };
        let (sx, sy) = (scopes(&["openid"]), scopes(&["email"]));
        let (rx, ry) = futures_util::future::join(
            x.grant_app_access(&user.id, &client, "Race", &sx, instant(0)),
            y.grant_app_access(&user.id, &client, "Race", &sy, instant(0)),
        )
        .await;
        ok(CHECK, "grant", rx);
        ok(CHECK, "grant", ry);
        let got = some(
            CHECK,
            "get_app_access",
            store.get_app_access(&user.id, &client).await,
        );
        if got.scopes != scopes(&["email", "openid"]) {
            fail(
                CHECK,
                format_args!("round {round}: concurrent grants left {:?}", got.scopes),
            );
        }
        let (a, b) = (adapter.clone(), adapter.clone());
        let (Some(x), Some(y)) = (a.capabilities().app_access, b.capabilities().app_access) else {
            fail(CHECK, "a clone of the adapter has no AppAccessStore");
        };
        let (rx, ry) = futures_util::future::join(
            x.revoke_app_access(&user.id, &client, instant(0)),
            y.revoke_app_access(&user.id, &client, instant(0)),
        )
        .await;
        let revoked = [ok(CHECK, "revoke", rx), ok(CHECK, "revoke", ry)];
        if revoked.iter().filter(|r| **r).count() != 1 {
            fail(
                CHECK,
                format_args!(
                    "round {round}: concurrent revocations answered {revoked:?}, expected one true"
                ),
            );
        }
        let after = some(
            CHECK,
            "get_app_access",
            store.get_app_access(&user.id, &client).await,
        );
        if after.epoch != got.epoch + 1 {
            fail(
                CHECK,
                format_args!(
                    "round {round}: the epoch went from {} to {}",
                    got.epoch, after.epoch
                ),
            );
        }
    }
}
