//! [`UserDirectoryStore`] and [`AuditLogStore`]: finding and banning users, and the
//! append-only audit log whose records chain by hash (`authcore::audit`).
//!
//! The audit log is one log per store, not one per run: the checks of [`run`] chain their
//! records after whatever the log holds (again after a record another run appended
//! first) and filter by kinds and users of their own, so that runs sharing a store, one
//! after another or at once, pass. [`audit_prune`] deletes records other runs may still
//! read: it needs the log to itself and is not part of [`run`].

use authcore::adapter::{
    AuditLogStore, AuditQuery, AuditRecord, MAX_USER_PAGE, Member, OWNER_ROLE, Organization,
    UserBan, UserDirectoryStore, UserPage, UserQuery,
};
use authcore::audit::{AuditEvent, ChainCheck, ChainFault, PRUNED};

use super::*;

/// Runs every check of this suite that runs sharing a store may run at once.
pub async fn run<A: Adapter + Clone>(adapter: &A, options: &Options) {
    user_search(adapter).await;
    user_search_pages(adapter).await;
    user_search_cap(adapter).await;
    user_search_plain_text(adapter).await;
    user_bans(adapter).await;
    audit_append(adapter).await;
    audit_append_race(adapter, options).await;
    audit_queries(adapter).await;
    audit_chain(adapter).await;
}

/// An instant `secs` after the time this suite first asked, whole seconds plus `millis`.
fn at(secs: i64, millis: i64) -> OffsetDateTime {
    static BASE: std::sync::OnceLock<i64> = std::sync::OnceLock::new();
    let base = *BASE.get_or_init(|| OffsetDateTime::now_utc().unix_timestamp());
    match OffsetDateTime::from_unix_timestamp(base + secs) {
        Ok(t) => t + Duration::milliseconds(millis),
        Err(e) => fail("setup", e),
    }
}

/// The adapter's [`UserDirectoryStore`], or `None` with check `check` skipped.
fn directory<'a, A: Adapter>(adapter: &'a A, check: &str) -> Option<&'a dyn UserDirectoryStore> {
    capability(
        adapter.capabilities().user_directory,
        check,
        "UserDirectoryStore",
    )
}

/// The adapter's [`AuditLogStore`], or `None` with check `check` skipped.
fn audit_log<'a, A: Adapter>(adapter: &'a A, check: &str) -> Option<&'a dyn AuditLogStore> {
    capability(adapter.capabilities().audit_log, check, "AuditLogStore")
}

/// Users named `"{tag} {name}"` for each of `names`, without email.
async fn users_named<A: Adapter>(
    adapter: &A,
    check: &str,
    tag: &str,
    names: impl IntoIterator<Item = String>,
) -> Vec<AdapterUser> {
    let mut users = Vec::new();
    for name in names {
        users.push(user_named(adapter, check, Some(format!("{tag} {name}")), None).await);
    }
    users
}

/// A short random tag, lowercase hex.
fn tag() -> String {
    random_id()[..12].to_owned()
}

async fn user_named<A: Adapter>(
    adapter: &A,
    check: &str,
    name: Option<String>,
    email: Option<String>,
) -> AdapterUser {
    ok(
        check,
        "create_user",
        adapter
            .create_user(NewUser {
                name,
                email,
                ..NewUser::default()
            })
            .await,
    )
}

async fn search<S: UserDirectoryStore + ?Sized>(
    store: &S,
    check: &str,
    what: &str,
    query: &UserQuery,
) -> UserPage {
    ok(check, what, store.search_users(query).await)
}

/// The ids of `users`, sorted (for comparing sets).
fn ids_of<'a>(users: impl IntoIterator<Item = &'a AdapterUser>) -> Vec<String> {
    let mut ids: Vec<String> = users.into_iter().map(|u| u.id.clone()).collect();
    ids.sort();
    ids
}

/// The ids of `page`'s users, sorted.
fn sorted_ids(page: &UserPage) -> Vec<String> {
    ids_of(&page.users)
}

/// `search_users` by text (in the email or the name, without regard to case), by provider,
/// by organization, and by each combination: every condition must hold; unknown providers
/// and organizations answer none; a limit of 0 answers none; the users come whole.
pub async fn user_search<A: Adapter>(adapter: &A) {
    const CHECK: &str = "user_search";
    let Some(store) = directory(adapter, CHECK) else {
        return;
    };
    let t = tag();
    let provider = format!("prov-{}", tag());
    let other_provider = format!("prov-{}", tag());
    let ada = user_named(
        adapter,
        CHECK,
        Some(format!("Ada {t}")),
        Some(unique_email("ada")),
    )
    .await;
    let bob = user_named(
        adapter,
        CHECK,
        Some("Bob".into()),
        Some(format!(
            "bob.{}-{}@conformance.example",
            t.to_uppercase(),
            tag()
        )),
    )
    .await;
    let cy = user_named(adapter, CHECK, Some(format!("Cy {t}")), None).await;
    let dee = user_named(
        adapter,
        CHECK,
        None,
        Some(format!("dee.{t}-{}@conformance.example", tag())),
    )
    .await;
    let eve = user_named(
        adapter,
        CHECK,
        Some("Eve".into()),
        Some(unique_email("eve")),
    )
    .await;
    for (user, p) in [
        (&ada, &provider),
        (&cy, &provider),
        (&eve, &provider),
        (&dee, &other_provider),
    ] {
        let mut account = Account::new(ProviderType::Oauth, p.as_str(), random_id());
        account.user_id = Some(user.id.clone());
        ok(CHECK, "link_account", adapter.link_account(account).await);
    }
    let organization = match adapter.capabilities().organizations {
        Some(orgs) => {
            let id = random_id();
            let org = Organization {
                slug: format!("dir-{id}"),
                name: "Directory".into(),
                id,
                created_at: at(0, 0),
            };
            let member = |user: &AdapterUser, roles: &[&str]| Member {
                organization_id: org.id.clone(),
                user_id: user.id.clone(),
                roles: roles.iter().map(|r| (*r).to_owned()).collect(),
                teams: Vec::new(),
                created_at: at(0, 0),
            };
            ok(
                CHECK,
                "create_organization",
                orgs.create_organization(&org, &member(&ada, &[OWNER_ROLE]))
                    .await,
            );
            for user in [&dee, &eve] {
                ok(
                    CHECK,
                    "add_member",
                    orgs.add_member(&member(user, &["member"])).await,
                );
            }
            Some(org.id)
        }
        None => None,
    };
    let query =
        |text: Option<&str>, provider: Option<&str>, organization: Option<&str>| UserQuery {
            text: text.map(str::to_owned),
            provider: provider.map(str::to_owned),
            organization_id: organization.map(str::to_owned),
            limit: MAX_USER_PAGE,
            ..UserQuery::default()
        };
    let upper = t.to_uppercase();
    let (p, q) = (Some(provider.as_str()), Some(other_provider.as_str()));
    let mut cases: Vec<(&str, UserQuery, Vec<&AdapterUser>)> = vec![
        (
            "text in the name or the email",
            query(Some(&t), None, None),
            vec![&ada, &bob, &cy, &dee],
        ),
        (
            "text in another case",
            query(Some(&upper), None, None),
            vec![&ada, &bob, &cy, &dee],
        ),
        ("a provider", query(None, p, None), vec![&ada, &cy, &eve]),
        ("another provider", query(None, q, None), vec![&dee]),
        (
            "text and a provider",
            query(Some(&t), p, None),
            vec![&ada, &cy],
        ),
        (
            "an unknown provider",
            query(None, Some(&random_id()), None),
            vec![],
        ),
        (
            "text no user has",
            query(Some(&format!("{t}{t}")), None, None),
            vec![],
        ),
    ];
    if let Some(org) = &organization {
        let o = Some(org.as_str());
        cases.extend([
            (
                "an organization",
                query(None, None, o),
                vec![&ada, &dee, &eve],
            ),
            (
                "text and an organization",
                query(Some(&t), None, o),
                vec![&ada, &dee],
            ),
            (
                "a provider and an organization",
                query(None, p, o),
                vec![&ada, &eve],
            ),
            ("all three", query(Some(&t), p, o), vec![&ada]),
            (
                "an unknown organization",
                query(None, None, Some(&random_id())),
                vec![],
            ),
        ]);
    }
    for (what, query, want) in cases {
        let page = search(store, CHECK, what, &query).await;
        eq(CHECK, what, &sorted_ids(&page), &ids_of(want));
        eq(CHECK, &format!("{what}: next"), &page.next, &None);
    }
    let page = search(store, CHECK, "text", &query(Some(&t), p, None)).await;
    for got in &page.users {
        let want = if got.id == ada.id { &ada } else { &cy };
        same_user(CHECK, "a user found", got, want);
    }
    let none = search(
        store,
        CHECK,
        "limit 0",
        &UserQuery {
            limit: 0,
            ..query(Some(&t), None, None)
        },
    )
    .await;
    eq(CHECK, "limit 0 answers no user", &none.users, &Vec::new());
}

/// Pages of [`UserQuery::limit`] users, each starting after the `next` of the one before,
/// give every matching user once, in the order of a single page; the last page has no
/// `next`.
pub async fn user_search_pages<A: Adapter>(adapter: &A) {
    const CHECK: &str = "user_search_pages";
    let Some(store) = directory(adapter, CHECK) else {
        return;
    };
    let t = tag();
    let made = users_named(adapter, CHECK, &t, (0..7).map(|i| format!("page {i}"))).await;
    let query = |after: Option<String>, limit: u32| UserQuery {
        text: Some(t.clone()),
        after,
        limit,
        ..UserQuery::default()
    };
    let whole = search(store, CHECK, "one page", &query(None, MAX_USER_PAGE)).await;
    eq(
        CHECK,
        "one page: every user",
        &sorted_ids(&whole),
        &ids_of(&made),
    );
    let order: Vec<String> = whole.users.iter().map(|u| u.id.clone()).collect();
    for limit in [1, 3, 7] {
        let mut paged = Vec::new();
        let mut after = None;
        for n in 0.. {
            if n > made.len() {
                fail(CHECK, format_args!("limit {limit}: pages never end"));
            }
            let page = search(store, CHECK, "a page", &query(after.clone(), limit)).await;
            if page.users.len() > limit as usize {
                fail(
                    CHECK,
                    format_args!("limit {limit}: a page of {}", page.users.len()),
                );
            }
            paged.extend(page.users.iter().map(|u| u.id.clone()));
            match page.next {
                Some(next) => {
                    let last = page.users.last().map(|u| u.id.clone());
                    eq(
                        CHECK,
                        "next is the page's last id",
                        &Some(next.clone()),
                        &last,
                    );
                    after = Some(next);
                }
                None => break,
            }
        }
        eq(
            CHECK,
            &format!("limit {limit}: the pages in the order of one page"),
            &paged,
            &order,
        );
    }
    // Starting after the third user: the rest.
    let rest = search(
        store,
        CHECK,
        "after an id",
        &query(Some(order[2].clone()), MAX_USER_PAGE),
    )
    .await;
    let ids: Vec<String> = rest.users.iter().map(|u| u.id.clone()).collect();
    eq(CHECK, "the users after an id", &ids, &order[3..].to_vec());
    // After something no id of this store can be (ids are ASCII below `~`): none, no error.
    let none = search(
        store,
        CHECK,
        "after no id",
        &query(Some("~no id".into()), MAX_USER_PAGE),
    )
    .await;
    eq(CHECK, "the users after no id", &none, &UserPage::default());
}

/// A limit over [`MAX_USER_PAGE`] answers [`MAX_USER_PAGE`] users and a `next`.
pub async fn user_search_cap<A: Adapter>(adapter: &A) {
    const CHECK: &str = "user_search_cap";
    let Some(store) = directory(adapter, CHECK) else {
        return;
    };
    let t = tag();
    users_named(
        adapter,
        CHECK,
        &t,
        (0..=MAX_USER_PAGE).map(|i| format!("many {i}")),
    )
    .await;
    let page = search(
        store,
        CHECK,
        "limit u32::MAX",
        &UserQuery {
            text: Some(t),
            limit: u32::MAX,
            ..UserQuery::default()
        },
    )
    .await;
    eq(
        CHECK,
        "users on a page",
        &page.users.len(),
        &(MAX_USER_PAGE as usize),
    );
    if page.next.is_none() {
        fail(CHECK, "a capped page has a next");
    }
}

/// Text is plain text: `%`, `_`, `\` and `!` in it match only themselves (no pattern
/// characters of SQL's `LIKE`).
pub async fn user_search_plain_text<A: Adapter>(adapter: &A) {
    const CHECK: &str = "user_search_plain_text";
    let Some(store) = directory(adapter, CHECK) else {
        return;
    };
    let t = tag();
    let names = [
        "100%",
        "100x",
        "a_b",
        "axb",
        r"back\slash",
        "backslash",
        "50!%",
        "50!x",
    ];
    let users = users_named(adapter, CHECK, &t, names.map(str::to_owned)).await;
    for (text, want) in [
        ("100%", 0),
        ("a_b", 2),
        (r"back\slash", 4),
        (r"back\", 4),
        ("50!%", 6),
    ] {
        let page = search(
            store,
            CHECK,
            text,
            &UserQuery {
                text: Some(format!("{t} {text}")),
                limit: MAX_USER_PAGE,
                ..UserQuery::default()
            },
        )
        .await;
        eq(
            CHECK,
            &format!("searching {text:?}"),
            &sorted_ids(&page),
            &ids_of([&users[want]]),
        );
    }
    let page = search(
        store,
        CHECK,
        "a lone %",
        &UserQuery {
            text: Some("%".into()),
            limit: MAX_USER_PAGE,
            ..UserQuery::default()
        },
    )
    .await;
    for user in &page.users {
        let name = user.name.as_deref().unwrap_or_default();
        let email = user.email.as_deref().unwrap_or_default();
        if !name.contains('%') && !email.contains('%') {
            fail(
                CHECK,
                format_args!("searching \"%\" found a user without one: {name:?}"),
            );
        }
    }
}

/// Bans: none at first; set, replaced, lifted; refused (`false`) for unknown users; gone
/// with the user.
pub async fn user_bans<A: Adapter>(adapter: &A) {
    const CHECK: &str = "user_bans";
    let Some(store) = directory(adapter, CHECK) else {
        return;
    };
    let user = new_user(adapter, CHECK, "banned").await;
    let admin = new_user(adapter, CHECK, "ban-admin").await;
    none(
        CHECK,
        "get_user_ban at first",
        store.get_user_ban(&user.id).await,
    );
    let first = UserBan {
        reason: "Spam — “again”".into(),
        at: at(-60, 0),
        until: None,
        by: Some(admin.id.clone()),
    };
    let second = UserBan {
        reason: String::new(),
        at: at(-30, 0),
        until: Some(at(86_400, 0)),
        by: None,
    };
    for (what, ban) in [("a ban", &first), ("a ban replaced", &second)] {
        eq(
            CHECK,
            &format!("set_user_ban: {what}"),
            &ok(
                CHECK,
                "set_user_ban",
                store.set_user_ban(&user.id, Some(ban)).await,
            ),
            &true,
        );
        eq(
            CHECK,
            &format!("get_user_ban: {what}"),
            &some(CHECK, "get_user_ban", store.get_user_ban(&user.id).await),
            ban,
        );
    }
    eq(
        CHECK,
        "set_user_ban: lifted",
        &ok(
            CHECK,
            "set_user_ban(None)",
            store.set_user_ban(&user.id, None).await,
        ),
        &true,
    );
    none(
        CHECK,
        "get_user_ban once lifted",
        store.get_user_ban(&user.id).await,
    );
    for id in unknown_ids() {
        eq(
            CHECK,
            "set_user_ban of an unknown user",
            &ok(
                CHECK,
                "set_user_ban",
                store.set_user_ban(&id, Some(&first)).await,
            ),
            &false,
        );
        none(
            CHECK,
            "get_user_ban of an unknown user",
            store.get_user_ban(&id).await,
        );
    }
    ok(
        CHECK,
        "set_user_ban",
        store.set_user_ban(&user.id, Some(&first)).await,
    );
    ok(CHECK, "delete_user", adapter.delete_user(&user.id).await);
    none(
        CHECK,
        "get_user_ban after delete_user",
        store.get_user_ban(&user.id).await,
    );
    eq(
        CHECK,
        "set_user_ban of a deleted user",
        &ok(
            CHECK,
            "set_user_ban",
            store.set_user_ban(&user.id, Some(&first)).await,
        ),
        &false,
    );
    none(
        CHECK,
        "get_user_ban of a deleted user",
        store.get_user_ban(&user.id).await,
    );
}

// ---------------------------------------------------------------------------------------
// The audit log

/// Appends `event` at `at` after the log's last record, again after a record another
/// writer appended first (as `authcore::audit` does).
async fn append_chained<S: AuditLogStore + ?Sized>(
    store: &S,
    check: &str,
    event: &AuditEvent,
    at: OffsetDateTime,
) -> AuditRecord {
    for _ in 0..64 {
        let last = ok(check, "last_audit_record", store.last_audit_record().await);
        let record = event.seal(last.as_ref(), at);
        if ok(
            check,
            "append_audit_record",
            store.append_audit_record(&record).await,
        ) {
            return record;
        }
    }
    fail(check, "append_audit_record refused 64 appends in a row")
}

async fn audit_query<S: AuditLogStore + ?Sized>(
    store: &S,
    check: &str,
    what: &str,
    query: &AuditQuery,
) -> Vec<AuditRecord> {
    ok(check, what, store.query_audit_records(query).await)
}

/// The record with `seq`, read back.
async fn read_back<S: AuditLogStore + ?Sized>(
    store: &S,
    check: &str,
    seq: u64,
) -> Option<AuditRecord> {
    let found = audit_query(
        store,
        check,
        "query_audit_records",
        &AuditQuery {
            cursor: seq.checked_sub(1),
            ascending: true,
            limit: 1,
            ..AuditQuery::default()
        },
    )
    .await;
    found.into_iter().next().filter(|r| r.seq == seq)
}

/// The whole log, oldest first, read a page at a time.
async fn whole_log<S: AuditLogStore + ?Sized>(store: &S, check: &str) -> Vec<AuditRecord> {
    let mut log: Vec<AuditRecord> = Vec::new();
    loop {
        let query = AuditQuery {
            cursor: log.last().map(|r| r.seq),
            ascending: true,
            limit: authcore::adapter::MAX_AUDIT_PAGE,
            ..AuditQuery::default()
        };
        let page = audit_query(store, check, "query_audit_records", &query).await;
        if page.is_empty() {
            return log;
        }
        log.extend(page);
    }
}

/// `n` records of a kind of their own appended, the `i`-th at `secs + i` seconds.
async fn append_series<S: AuditLogStore + ?Sized>(
    store: &S,
    check: &str,
    n: i64,
    secs: i64,
) -> Vec<AuditRecord> {
    let kind = format!("c{}.{check}", tag());
    let mut records = Vec::new();
    for i in 0..n {
        let event = AuditEvent::new(kind.as_str()).with("i", i);
        records.push(append_chained(store, check, &event, at(secs + i, 999)).await);
    }
    records
}

/// Asserts `got` is `want`, to the byte of its JSON.
#[track_caller]
fn same_record(check: &str, what: &str, got: &AuditRecord, want: &AuditRecord) {
    eq(check, what, got, want);
    let json = |r: &AuditRecord| serde_json::to_string(r).unwrap_or_else(|e| fail(check, e));
    eq(check, &format!("{what} (as JSON)"), &json(got), &json(want));
}

/// Appends: a record appended is read back byte for byte and is at most the last one; a
/// second record with its `seq` is refused and changes nothing.
pub async fn audit_append<A: Adapter>(adapter: &A) {
    const CHECK: &str = "audit_append";
    let Some(store) = audit_log(adapter, CHECK) else {
        return;
    };
    let event = AuditEvent::new(format!("c{}.append", tag()))
        .actor(random_id())
        .with("note", "“Ünïcode” \\ \" '")
        .with("n", 1);
    let record = append_chained(store, CHECK, &event, at(0, 456)).await;
    let back = read_back(store, CHECK, record.seq).await;
    match back {
        Some(back) => same_record(CHECK, "the record read back", &back, &record),
        None => fail(CHECK, "the record appended is not read back"),
    }
    let last = some(CHECK, "last_audit_record", store.last_audit_record().await);
    if last.seq < record.seq {
        fail(
            CHECK,
            format_args!("last_audit_record is {} before {}", last.seq, record.seq),
        );
    }
    let mut taken = AuditEvent::new(format!("c{}.taken", tag())).seal(None, at(1, 0));
    taken.seq = record.seq;
    eq(
        CHECK,
        "append_audit_record of a taken seq",
        &ok(
            CHECK,
            "append_audit_record",
            store.append_audit_record(&taken).await,
        ),
        &false,
    );
    match read_back(store, CHECK, record.seq).await {
        Some(back) => same_record(CHECK, "the record after a refused append", &back, &record),
        None => fail(CHECK, "the record is gone after a refused append"),
    }
}

/// Two appends of one `seq` at once: one is stored, and it is the one read back.
pub async fn audit_append_race<A: Adapter>(adapter: &A, options: &Options) {
    const CHECK: &str = "audit_append_race";
    let Some(store) = audit_log(adapter, CHECK) else {
        return;
    };
    let kind = format!("c{}.race", tag());
    let mut round = 0;
    let mut attempts = 0;
    while round < options.race_rounds.max(1) {
        attempts += 1;
        if attempts > options.race_rounds.max(1) * 8 {
            fail(CHECK, "other writers took every seq raced for");
        }
        let last = ok(CHECK, "last_audit_record", store.last_audit_record().await);
        let [a, b] = ["a", "b"].map(|who| {
            AuditEvent::new(kind.as_str())
                .actor(who)
                .seal(last.as_ref(), at(2, 0))
        });
        let (ra, rb) = futures_util::future::join(
            store.append_audit_record(&a),
            store.append_audit_record(&b),
        )
        .await;
        let stored = [
            ok(CHECK, "the first append", ra),
            ok(CHECK, "the second", rb),
        ];
        let back = read_back(store, CHECK, a.seq).await;
        match (stored, back) {
            ([true, true], _) => fail(CHECK, format_args!("round {round}: both appends stored")),
            ([true, false], Some(back)) => same_record(CHECK, "the first, stored", &back, &a),
            ([false, true], Some(back)) => same_record(CHECK, "the second, stored", &back, &b),
            ([false, false], Some(back)) if back != a && back != b => continue,
            (stored, back) => fail(
                CHECK,
                format_args!("round {round}: appends answered {stored:?}, read back {back:?}"),
            ),
        }
        round += 1;
    }
}

/// Every filter of [`AuditQuery`] alone and together, both orders, cursors and limits;
/// records come back byte for byte.
pub async fn audit_queries<A: Adapter>(adapter: &A) {
    const CHECK: &str = "audit_queries";
    let Some(store) = audit_log(adapter, CHECK) else {
        return;
    };
    let k = format!("c{}", tag());
    let (ua, ub, admin) = (random_id(), random_id(), random_id());
    let events = [
        (AuditEvent::new(k.as_str()).actor(&ua), at(10, 0)),
        (
            AuditEvent::new(format!("{k}.ban")).actor(&ub).target(&ua),
            at(11, 0),
        ),
        (AuditEvent::new(format!("{k}x.other")).actor(&ua), at(12, 0)),
        (
            AuditEvent::new(format!("{k}.ban.extra"))
                .actor(&admin)
                .target(&ub)
                .with("reason", "x"),
            at(13, 0),
        ),
        (
            AuditEvent::new(format!("{k}.unban")).actor(&ub),
            at(14, 789),
        ),
        (AuditEvent::new(format!("{k}.BAN")).actor(&ua), at(15, 0)),
    ];
    let mut r = Vec::new();
    for (event, when) in &events {
        r.push(append_chained(store, CHECK, event, *when).await);
    }
    let q = |kind: Option<&str>, user: Option<&str>| AuditQuery {
        kind: kind.map(str::to_owned),
        user: user.map(str::to_owned),
        ascending: true,
        limit: 100,
        ..AuditQuery::default()
    };
    let family = q(Some(&k), None);
    let picked = |idx: &[usize]| idx.iter().map(|&i| r[i].clone()).collect::<Vec<_>>();
    let rev = |idx: &[usize]| idx.iter().rev().map(|&i| r[i].clone()).collect::<Vec<_>>();
    let cases: Vec<(&str, AuditQuery, Vec<AuditRecord>)> = vec![
        (
            "a kind and its subkinds",
            family.clone(),
            picked(&[0, 1, 3, 4, 5]),
        ),
        (
            "newest first",
            AuditQuery {
                ascending: false,
                ..family.clone()
            },
            rev(&[0, 1, 3, 4, 5]),
        ),
        (
            "a subkind",
            q(Some(&format!("{k}.ban")), None),
            picked(&[1, 3]),
        ),
        (
            "a kind that is another's prefix",
            q(Some(&format!("{k}x")), None),
            picked(&[2]),
        ),
        (
            "a prefix that is no kind",
            q(Some(&format!("{k}.b")), None),
            vec![],
        ),
        (
            "an exact kind",
            q(Some(&format!("{k}.BAN")), None),
            picked(&[5]),
        ),
        (
            "a user as actor or target",
            q(None, Some(&ua)),
            picked(&[0, 1, 2, 5]),
        ),
        ("another user", q(None, Some(&ub)), picked(&[1, 3, 4])),
        (
            "a kind and a user",
            q(Some(&k), Some(&ua)),
            picked(&[0, 1, 5]),
        ),
        (
            "since and until",
            AuditQuery {
                since: Some(at(11, 0)),
                until: Some(at(14, 0)),
                ..family.clone()
            },
            picked(&[1, 3]),
        ),
        (
            "since, to the millisecond",
            AuditQuery {
                since: Some(at(14, 789)),
                ..family.clone()
            },
            picked(&[4, 5]),
        ),
        (
            "since, a millisecond later",
            AuditQuery {
                since: Some(at(14, 790)),
                ..family.clone()
            },
            picked(&[5]),
        ),
        (
            "until, to the millisecond",
            AuditQuery {
                until: Some(at(14, 789)),
                ..family.clone()
            },
            picked(&[0, 1, 3]),
        ),
        (
            "until, a millisecond later",
            AuditQuery {
                until: Some(at(14, 790)),
                ..family.clone()
            },
            picked(&[0, 1, 3, 4]),
        ),
        (
            "every filter",
            AuditQuery {
                since: Some(at(11, 0)),
                until: Some(at(16, 0)),
                ..q(Some(&k), Some(&ub))
            },
            picked(&[1, 3, 4]),
        ),
        (
            "after a cursor, oldest first",
            AuditQuery {
                cursor: Some(r[1].seq),
                ..family.clone()
            },
            picked(&[3, 4, 5]),
        ),
        (
            "before a cursor, newest first",
            AuditQuery {
                cursor: Some(r[4].seq),
                ascending: false,
                ..family.clone()
            },
            rev(&[0, 1, 3]),
        ),
        (
            "a limit, oldest first",
            AuditQuery {
                limit: 2,
                ..family.clone()
            },
            picked(&[0, 1]),
        ),
        (
            "a limit, newest first",
            AuditQuery {
                limit: 2,
                ascending: false,
                ..family.clone()
            },
            rev(&[4, 5]),
        ),
        (
            "a limit over the cap",
            AuditQuery {
                limit: u32::MAX,
                ..family.clone()
            },
            picked(&[0, 1, 3, 4, 5]),
        ),
        (
            "limit 0",
            AuditQuery {
                limit: 0,
                ..family.clone()
            },
            vec![],
        ),
    ];
    for (what, query, want) in cases {
        let got = audit_query(store, CHECK, what, &query).await;
        eq(
            CHECK,
            &format!("{what}: seqs"),
            &got.iter().map(|r| r.seq).collect::<Vec<_>>(),
            &want.iter().map(|r| r.seq).collect::<Vec<_>>(),
        );
        for (got, want) in got.iter().zip(&want) {
            same_record(CHECK, &format!("{what}: a record"), got, want);
        }
    }
    // Pages of two, oldest first, each after the last seq of the one before.
    let mut cursor = None;
    let mut paged = Vec::new();
    for _ in 0..4 {
        let page = audit_query(
            store,
            CHECK,
            "a page",
            &AuditQuery {
                cursor,
                limit: 2,
                ..family.clone()
            },
        )
        .await;
        cursor = page.last().map(|r| r.seq).or(cursor);
        paged.extend(page.into_iter().map(|r| r.seq));
    }
    eq(
        CHECK,
        "pages of two",
        &paged,
        &picked(&[0, 1, 3, 4, 5]).iter().map(|r| r.seq).collect(),
    );
}

/// The log read back passes `authcore::audit::check`; a record altered (or left out)
/// after reading is found.
pub async fn audit_chain<A: Adapter>(adapter: &A) {
    const CHECK: &str = "audit_chain";
    let Some(store) = audit_log(adapter, CHECK) else {
        return;
    };
    let mine = append_series(store, CHECK, 3, 20).await;
    let report = ok(CHECK, "audit::check", authcore::audit::check(store).await);
    eq(CHECK, "the chain's faults", &report.faults, &Vec::new());
    if report.last.is_none_or(|last| last < mine[2].seq) {
        fail(CHECK, format_args!("the check stopped early: {report:?}"));
    }
    // The whole log, read back oldest first, with the middle record of ours altered.
    let log = whole_log(store, CHECK).await;
    let altered_seq = mine[1].seq;
    let mut chain = ChainCheck::new();
    for record in &log {
        if record.seq == altered_seq {
            let mut altered = record.clone();
            altered.data = r#"{"i":7}"#.into();
            chain.feed(&altered);
        } else {
            chain.feed(record);
        }
    }
    let faults = chain.finish().faults;
    if !faults.contains(&ChainFault::Altered { seq: altered_seq }) {
        fail(
            CHECK,
            format_args!("an altered record {altered_seq} was not found: {faults:?}"),
        );
    }
    let mut chain = ChainCheck::new();
    for record in log.iter().filter(|r| r.seq != altered_seq) {
        chain.feed(record);
    }
    let faults = chain.finish().faults;
    if !faults
        .iter()
        .any(|f| matches!(f, ChainFault::Broken { seq, .. } if *seq > altered_seq))
    {
        fail(
            CHECK,
            format_args!("a removed record {altered_seq} was not found: {faults:?}"),
        );
    }
}

/// Retention: `prune_audit_records(through)` deletes the records up to `through` and
/// answers how many; the log then starts after it, and with the `audit.pruned` record
/// appended before the deletion (as `authcore::audit` does) the chain still checks.
/// Needs the log to itself: other runs' records are deleted too.
pub async fn audit_prune<A: Adapter>(adapter: &A) {
    const CHECK: &str = "audit_prune";
    let Some(store) = audit_log(adapter, CHECK) else {
        return;
    };
    let mine = append_series(store, CHECK, 4, 30).await;
    let through = &mine[1];
    let before = whole_log(store, CHECK)
        .await
        .iter()
        .filter(|r| r.seq <= through.seq)
        .count() as u64;
    let pruned = AuditEvent::new(PRUNED)
        .with("throughSeq", through.seq)
        .with("lastHash", through.hash.clone());
    append_chained(store, CHECK, &pruned, at(40, 0)).await;
    eq(
        CHECK,
        "prune_audit_records: how many went",
        &ok(
            CHECK,
            "prune_audit_records",
            store.prune_audit_records(through.seq).await,
        ),
        &before,
    );
    eq(
        CHECK,
        "the first record after pruning",
        &whole_log(store, CHECK).await.first().map(|r| r.seq),
        &Some(mine[2].seq),
    );
    let report = ok(CHECK, "audit::check", authcore::audit::check(store).await);
    eq(
        CHECK,
        "the chain's faults after pruning",
        &report.faults,
        &Vec::new(),
    );
    eq(
        CHECK,
        "prune_audit_records again",
        &ok(
            CHECK,
            "prune_audit_records",
            store.prune_audit_records(through.seq).await,
        ),
        &0,
    );
    // Without a retention record the check finds the records gone.
    ok(
        CHECK,
        "prune_audit_records",
        store.prune_audit_records(mine[2].seq).await,
    );
    let report = ok(CHECK, "audit::check", authcore::audit::check(store).await);
    eq(
        CHECK,
        "the chain's faults after pruning without a record of it",
        &report.faults,
        &vec![ChainFault::Unanchored { seq: mine[3].seq }],
    );
}
