//! [`UserGroupsStore`](authcore::adapter::UserGroupsStore): the groups user sources gave
//! users, replaced as a whole.

use super::*;

/// How many groups the large lists have.
const MANY: usize = 200;

/// Runs every check of this suite against `adapter`.
pub async fn run<A: Adapter + Clone>(adapter: &A, options: &Options) {
    user_groups(adapter).await;
    user_groups_race(adapter, options).await;
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

/// Groups (authcore extension, skipped when unsupported): none before any; each list set
/// comes back as given (order, duplicates, large lists, names that are Unicode, long, or
/// hold separators and quotes), replacing the one before; an empty list clears; one user's
/// groups are not another's; `delete_user` removes them; a write for a user that does not
/// exist fails.
pub async fn user_groups<A: Adapter>(adapter: &A) {
    const CHECK: &str = "user_groups";
    let Some(store) = capability(adapter.capabilities().user_groups, CHECK, "UserGroupsStore")
    else {
        return;
    };
    let user = new_user(adapter, CHECK, "user-groups").await;
    let other = new_user(adapter, CHECK, "user-groups-other").await;
    let get =
        |id: String| async move { ok(CHECK, "get_user_groups", store.get_user_groups(&id).await) };
    eq(
        CHECK,
        "groups before any",
        &get(user.id.clone()).await,
        &vec![],
    );

    let many: Vec<String> = (0..MANY).rev().map(|i| format!("group-{i:03}")).collect();
    let unicode: Vec<String> = (0..MANY)
        .map(|i| format!("Gruppe-Ü-{i}-日本語-👩‍💻"))
        .collect();
    // Each list in turn: (what it is, the list).
    let lists = [
        (
            "a list in no sorted order",
            names(&["staff", "admins", "Admins", "beta"]),
        ),
        ("a list replacing the last", names(&["ops"])),
        (
            "names with separators, quotes and spaces",
            names(&[
                "cn=admins,ou=groups,dc=example,dc=org",
                "a b",
                " leading and trailing ",
                "semi;colon",
                "quote'\"`",
                "back\\slash",
                "per%cent_under",
                "{\"json\":[1]}",
                "line\nbreak",
            ]),
        ),
        ("duplicates kept", names(&["dup", "other", "dup"])),
        ("a long name", vec!["g".repeat(1000)]),
        ("many names, in the order given", many),
        ("many Unicode names", unicode),
        ("an empty list clears", Vec::new()),
        (
            "a list after clearing",
            names(&["Ωmega", "ελληνικά", "עברית"]),
        ),
    ];
    for (what, list) in &lists {
        ok(
            CHECK,
            "set_user_groups",
            store.set_user_groups(&user.id, list).await,
        );
        eq(CHECK, what, &get(user.id.clone()).await, list);
    }
    eq(
        CHECK,
        "another user's groups",
        &get(other.id.clone()).await,
        &vec![],
    );

    let others = names(&["theirs"]);
    ok(
        CHECK,
        "set_user_groups",
        store.set_user_groups(&other.id, &others).await,
    );
    let (_, last) = &lists[lists.len() - 1];
    eq(
        CHECK,
        "the groups stay apart",
        &get(user.id.clone()).await,
        last,
    );
    ok(CHECK, "delete_user", adapter.delete_user(&other.id).await);
    eq(
        CHECK,
        "the groups of a deleted user",
        &get(other.id.clone()).await,
        &vec![],
    );
    eq(
        CHECK,
        "the groups of a user not deleted",
        &get(user.id.clone()).await,
        last,
    );

    let mut missing = unknown_ids().to_vec();
    missing.push(other.id.clone());
    for id in missing {
        for list in [others.clone(), Vec::new()] {
            expect_error(
                CHECK,
                "set_user_groups for a user that does not exist",
                store.set_user_groups(&id, &list).await,
            );
        }
        eq(
            CHECK,
            "the groups of a user that does not exist",
            &get(id).await,
            &vec![],
        );
    }
}

/// Concurrent replacements of a user's groups: the list stored is one of them, whole, never
/// a mix.
pub async fn user_groups_race<A: Adapter + Clone>(adapter: &A, options: &Options) {
    const CHECK: &str = "user_groups_race";
    let Some(store) = capability(adapter.capabilities().user_groups, CHECK, "UserGroupsStore")
    else {
        return;
    };
    let user = new_user(adapter, CHECK, "user-groups-race").await;
    for round in 0..options.race_rounds.max(1) {
        let a: Vec<String> = (0..20).map(|i| format!("a-{round}-{i}")).collect();
        let b: Vec<String> = (0..30).map(|i| format!("b-{round}-{i}")).collect();
        let (x, y) = (adapter.clone(), adapter.clone());
        let (Some(sx), Some(sy)) = (x.capabilities().user_groups, y.capabilities().user_groups)
        else {
            fail(CHECK, "a clone of the adapter has no UserGroupsStore");
        };
        let (rx, ry) = futures_util::future::join(
            sx.set_user_groups(&user.id, &a),
            sy.set_user_groups(&user.id, &b),
        )
        .await;
        ok(CHECK, "set_user_groups", rx);
        ok(CHECK, "set_user_groups", ry);
        let got = ok(
            CHECK,
            "get_user_groups",
            store.get_user_groups(&user.id).await,
        );
        if got != a && got != b {
            fail(
                CHECK,
                format_args!("round {round}: concurrent replacements left {got:?}, a mix"),
            );
        }
    }
}
