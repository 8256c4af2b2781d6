//! The conformance suite every [`RateLimitStore`] must pass: the fixed-window rule of
//! [`Counter`](authcore::ratelimit::Counter), atomic per key, and the single-use and revocation marks
//! authcore builds on it (OAuth codes, refresh tokens, WebAuthn challenges, the OpenID
//! Provider's grants and consents), and the short-lived values it keeps (the OpenID
//! Provider's pending device authorizations).
//!
//! A store crate runs it from its tests (`authcore-conformance` in its dev-dependencies):
//!
//! ```ignore
//! #[tokio::test(flavor = "multi_thread")]
//! async fn rate_limit_store_conformance() {
//!     let store = MyStore::connect("…").await.unwrap();
//!     authcore_conformance::rate_limit::run_all(&store).await;
//! }
//! ```
//!
//! Every check uses fresh random keys, so a store shared between runs (or parallel runs)
//! can be reused, and panics with `rate-limit store check '<name>' failed: …` on the first
//! failure. Three checks wait for a window of 300 ms to end (a blocking sleep of the calling
//! thread: run the suite on a multi-threaded runtime).

use std::time::Duration;

use authcore::ratelimit::{RateLimit, RateLimitStore, SingleUseStore};

/// Runs every check against `store`.
pub async fn run_all<S: RateLimitStore>(store: &S) {
    counts_lock_and_reset(store).await;
    locked_reads_without_counting(store).await;
    give_back_returns_one_event(store).await;
    a_window_starts_again_after_it_ends(store).await;
    concurrent_events_are_counted_one_by_one(store).await;
    single_use_and_marks(store).await;
    values_are_kept_until_they_expire(store).await;
    new_values_are_kept_once(store).await;
    marks_are_read_together(store).await;
}

fn fail(check: &str, what: impl std::fmt::Display) -> ! {
    panic!("rate-limit store check '{check}' failed: {what}")
}

/// A fresh key, so that runs sharing a store never meet.
fn key(name: &str) -> String {
    format!("conformance:{name}:{}", uuid::Uuid::new_v4())
}

async fn count<S: RateLimitStore>(
    check: &str,
    store: &S,
    k: &str,
    l: &RateLimit,
) -> Option<Duration> {
    store
        .count(k, l)
        .await
        .unwrap_or_else(|e| fail(check, format!("count: {e}")))
}

async fn locked<S: RateLimitStore>(check: &str, store: &S, k: &str) -> Option<Duration> {
    store
        .lockout_left(k)
        .await
        .unwrap_or_else(|e| fail(check, format!("locked: {e}")))
}

/// `limit` events pass, the next is refused with the lock-out, a locked key refuses
/// without counting, and `reset` clears count and lock; other keys are untouched.
async fn counts_lock_and_reset<S: RateLimitStore>(store: &S) {
    let check = "counts_lock_and_reset";
    let (k, other) = (key("k"), key("other"));
    let limit = RateLimit::new(3, Duration::from_secs(60)).lockout(Duration::from_secs(120));
    for i in 0..3 {
        if let Some(r) = count(check, store, &k, &limit).await {
            fail(check, format!("event {i} refused ({r:?})"));
        }
    }
    if locked(check, store, &k).await.is_some() {
        fail(check, "locked before going over the limit");
    }
    if count(check, store, &k, &limit).await != Some(Duration::from_secs(120)) {
        fail(
            check,
            "the event over the limit was not refused with the lock-out",
        );
    }
    match locked(check, store, &k).await {
        Some(left) if left > Duration::from_secs(115) && left <= Duration::from_secs(120) => {}
        left => fail(check, format!("lock left {left:?}, expected about 120 s")),
    }
    if count(check, store, &k, &limit).await.is_none() {
        fail(check, "a locked key let an event through");
    }
    if count(check, store, &other, &limit).await.is_some()
        || locked(check, store, &other).await.is_some()
    {
        fail(check, "another key was affected");
    }
    store
        .reset(&k)
        .await
        .unwrap_or_else(|e| fail(check, format!("reset: {e}")));
    if locked(check, store, &k).await.is_some() || count(check, store, &k, &limit).await.is_some() {
        fail(check, "reset did not clear the lock");
    }
}

/// `locked` on a key never counted, or counted under its limit, answers `None` and counts
/// nothing.
async fn locked_reads_without_counting<S: RateLimitStore>(store: &S) {
    let check = "locked_reads_without_counting";
    let k = key("read");
    let one = RateLimit::new(1, Duration::from_secs(60));
    for _ in 0..3 {
        if locked(check, store, &k).await.is_some() {
            fail(check, "a key never counted is locked");
        }
    }
    if count(check, store, &k, &one).await.is_some() {
        fail(check, "reading counted an event");
    }
}

/// `give_back` makes room for exactly one more event, never goes below zero, and does not
/// lift a lock.
async fn give_back_returns_one_event<S: RateLimitStore>(store: &S) {
    let check = "give_back_returns_one_event";
    let give_back = |k: String| async move {
        store
            .give_back(&k)
            .await
            .unwrap_or_else(|e| fail(check, format!("give_back: {e}")))
    };
    let (k, fresh) = (key("k"), key("fresh"));
    let two = RateLimit::new(2, Duration::from_secs(60));
    for _ in 0..2 {
        if count(check, store, &k, &two).await.is_some() {
            fail(check, "an event under the limit was refused");
        }
    }
    give_back(k.clone()).await;
    if count(check, store, &k, &two).await.is_some() {
        fail(check, "the event given back was not available again");
    }
    if count(check, store, &k, &two).await.is_none() {
        fail(check, "give_back made room for more than one event");
    }
    give_back(k.clone()).await;
    if locked(check, store, &k).await.is_none() {
        fail(check, "give_back lifted a lock");
    }
    for _ in 0..3 {
        give_back(fresh.clone()).await;
    }
    let one = RateLimit::new(1, Duration::from_secs(60));
    if count(check, store, &fresh, &one).await.is_some() {
        fail(
            check,
            "an event on a fresh key was refused after give-backs",
        );
    }
    if count(check, store, &fresh, &one).await.is_none() {
        fail(check, "give_back went below zero");
    }
}

/// After the window ends, the count starts again; after the lock-out ends, the key is open.
/// Only the waits are short (a window of 300 ms, a lock-out of 300 ms in a window of a
/// minute), so a slow store or machine cannot make the check fail.
async fn a_window_starts_again_after_it_ends<S: RateLimitStore>(store: &S) {
    let check = "a_window_starts_again_after_it_ends";
    let (k, l) = (key("window"), key("lock"));
    let short = Duration::from_millis(300);
    let one_per_short_window = RateLimit::new(1, short);
    let locked_shortly = RateLimit::new(1, Duration::from_secs(60)).lockout(short);
    if count(check, store, &k, &one_per_short_window)
        .await
        .is_some()
    {
        fail(check, "the first event was refused");
    }
    if count(check, store, &l, &locked_shortly).await.is_some()
        || count(check, store, &l, &locked_shortly).await.is_none()
    {
        fail(check, "a limit of one did not lock at the second event");
    }
    std::thread::sleep(short + Duration::from_millis(150));
    if count(check, store, &k, &one_per_short_window)
        .await
        .is_some()
    {
        fail(check, "the count did not start again after the window");
    }
    if locked(check, store, &l).await.is_some()
        || count(check, store, &l, &locked_shortly).await.is_some()
    {
        fail(check, "the lock did not end after the lock-out");
    }
}

/// 40 concurrent events on one key under a limit of 7: exactly 7 pass.
async fn concurrent_events_are_counted_one_by_one<S: RateLimitStore>(store: &S) {
    let check = "concurrent_events_are_counted_one_by_one";
    let k = key("race");
    let limit = RateLimit::new(7, Duration::from_secs(60));
    let results = futures_util::future::join_all((0..40).map(|_| store.count(&k, &limit))).await;
    let mut passed = 0;
    for r in results {
        match r {
            Ok(None) => passed += 1,
            Ok(Some(_)) => {}
            Err(e) => fail(check, format!("count: {e}")),
        }
    }
    if passed != 7 {
        fail(
            check,
            format!("{passed} of 40 concurrent events passed a limit of 7"),
        );
    }
}

/// The single-use and revocation marks authcore makes with the store: a value is used once
/// (concurrent uses included), a mark is read without being made, kinds are separate.
async fn single_use_and_marks<S: RateLimitStore>(store: &S) {
    let check = "single_use_and_marks";
    let day = Duration::from_secs(86_400);
    let value = uuid::Uuid::new_v4().to_string();
    let single_use = SingleUseStore::new(store);
    let uses = futures_util::future::join_all(
        (0..10).map(|_| single_use.first_use_checked("conformance-code", &value, day)),
    )
    .await;
    let firsts = uses
        .into_iter()
        .map(|r| r.unwrap_or_else(|e| fail(check, format!("first use: {e}"))))
        .filter(|first| *first)
        .count();
    if firsts != 1 {
        fail(
            check,
            format!("a single-use value was used {firsts} times of 10"),
        );
    }
    let marked = |kind: &'static str, v: String| async move {
        single_use
            .is_marked(kind, &v)
            .await
            .unwrap_or_else(|e| fail(check, format!("is_marked: {e}")))
    };
    if marked("conformance-revoked", value.clone()).await
        || marked("conformance-revoked", value.clone()).await
    {
        fail(
            check,
            "a mark never made is read as made (or reading made it)",
        );
    }
    single_use
        .mark("conformance-revoked", &value, day)
        .await
        .unwrap_or_else(|e| fail(check, format!("mark: {e}")));
    if !marked("conformance-revoked", value.clone()).await {
        fail(check, "a mark made is not read");
    }
    if marked("conformance-other", value.clone()).await {
        fail(check, "a mark of one kind is read under another");
    }
}

/// The values of the single-use store: read back as put, replaced by a later put, separate
/// per kind, gone once expired, and none for an id never put.
async fn values_are_kept_until_they_expire<S: RateLimitStore>(store: &S) {
    let check = "values_are_kept_until_they_expire";
    let single_use = SingleUseStore::new(store);
    let id = uuid::Uuid::new_v4().to_string();
    let get = |kind: &'static str, id: String| async move {
        single_use
            .get(kind, &id)
            .await
            .unwrap_or_else(|e| fail(check, format!("get: {e}")))
    };
    let put = |id: String, value: &'static str, ttl: Duration| async move {
        single_use
            .put("conformance-value", &id, value, ttl)
            .await
            .unwrap_or_else(|e| fail(check, format!("put: {e}")));
    };
    if get("conformance-value", id.clone()).await.is_some() {
        fail(check, "a value never put is read");
    }
    let day = Duration::from_secs(86_400);
    put(id.clone(), "{\"first\":\"é\"}", day).await;
    if get("conformance-value", id.clone()).await.as_deref() != Some("{\"first\":\"é\"}") {
        fail(check, "a value put is not read back as put");
    }
    put(id.clone(), "second", day).await;
    if get("conformance-value", id.clone()).await.as_deref() != Some("second") {
        fail(check, "a value put again is not replaced");
    }
    if get("conformance-other", id.clone()).await.is_some() {
        fail(check, "a value of one kind is read under another");
    }
    let short = uuid::Uuid::new_v4().to_string();
    put(short.clone(), "brief", Duration::from_millis(300)).await;
    std::thread::sleep(Duration::from_millis(600));
    if get("conformance-value", short).await.is_some() {
        fail(check, "a value is read after its time");
    }
}

/// Values kept only where none is ([`SingleUseStore::put_new`],
/// [`RateLimitStore::put_value_if_absent`]): the first is kept, a second leaves it as it
/// is, one whose time has passed is replaced, and of concurrent calls for one id exactly
/// one keeps its value — the one then read.
async fn new_values_are_kept_once<S: RateLimitStore>(store: &S) {
    let check = "new_values_are_kept_once";
    let single_use = SingleUseStore::new(store);
    let put_new = |id: String, value: String, ttl: Duration| async move {
        single_use
            .put_new("conformance-new", &id, &value, ttl)
            .await
            .unwrap_or_else(|e| fail(check, format!("put_new: {e}")))
    };
    let get = |id: String| async move {
        single_use
            .get("conformance-new", &id)
            .await
            .unwrap_or_else(|e| fail(check, format!("get: {e}")))
    };
    let day = Duration::from_secs(86_400);
    let id = uuid::Uuid::new_v4().to_string();
    if !put_new(id.clone(), "first".into(), day).await {
        fail(check, "a value for a new id is not kept");
    }
    if put_new(id.clone(), "second".into(), day).await {
        fail(check, "a second value is said to be kept");
    }
    if get(id.clone()).await.as_deref() != Some("first") {
        fail(check, "a second value replaced the first");
    }
    let short = uuid::Uuid::new_v4().to_string();
    put_new(short.clone(), "brief".into(), Duration::from_millis(300)).await;
    std::thread::sleep(Duration::from_millis(600));
    if !put_new(short.clone(), "after".into(), day).await {
        fail(check, "a value whose time passed is not replaced");
    }
    if get(short).await.as_deref() != Some("after") {
        fail(check, "the value kept after one expired is not read");
    }
    let raced = uuid::Uuid::new_v4().to_string();
    let kept = futures_util::future::join_all(
        (0..16).map(|n| put_new(raced.clone(), format!("value {n}"), day)),
    )
    .await;
    let winners: Vec<usize> = (0..kept.len()).filter(|&n| kept[n]).collect();
    let [winner] = winners[..] else {
        fail(
            check,
            format!("{} of 16 concurrent calls kept their value", winners.len()),
        );
    };
    if get(raced).await != Some(format!("value {winner}")) {
        fail(check, "the value read is not the one kept");
    }
}

/// Marks read together ([`SingleUseStore::any_marked`], [`RateLimitStore::any_locked`]):
/// none made reads as none, one made among several (first, last or alone) reads as made,
/// and a mark whose time has passed no longer counts.
async fn marks_are_read_together<S: RateLimitStore>(store: &S) {
    let check = "marks_are_read_together";
    let single_use = SingleUseStore::new(store);
    let any = |marks: Vec<(&'static str, String)>| async move {
        let marks: Vec<(&str, &str)> = marks.iter().map(|(k, v)| (*k, v.as_str())).collect();
        single_use
            .any_marked(&marks)
            .await
            .unwrap_or_else(|e| fail(check, format!("any_marked: {e}")))
    };
    let mark = |kind: &'static str, value: String, ttl: Duration| async move {
        single_use
            .mark(kind, &value, ttl)
            .await
            .unwrap_or_else(|e| fail(check, format!("mark: {e}")));
    };
    let fresh = || uuid::Uuid::new_v4().to_string();
    let (a, b, c) = (fresh(), fresh(), fresh());
    if any(vec![]).await {
        fail(check, "no marks read as one made");
    }
    let none = vec![
        ("conformance-grant", a.clone()),
        ("conformance-token", b.clone()),
        ("conformance-token", c.clone()),
    ];
    if any(none.clone()).await {
        fail(check, "marks never made read as made");
    }
    mark("conformance-token", c.clone(), Duration::from_secs(86_400)).await;
    for (marks, what) in [
        (none.clone(), "the last of three"),
        (none.iter().rev().cloned().collect(), "the first of three"),
        (vec![("conformance-token", c.clone())], "one alone"),
        (
            vec![
                ("conformance-grant", a.clone()),
                ("conformance-token", c.clone()),
            ],
            "the second of two",
        ),
    ] {
        if !any(marks).await {
            fail(check, format!("a mark made is not read when it is {what}"));
        }
    }
    if any(vec![
        ("conformance-grant", c.clone()),
        ("conformance-token", a.clone()),
    ])
    .await
    {
        fail(check, "a mark of one kind is read under another");
    }
    // Whether it is read while it holds is not asked: another run sharing the thread may
    // sleep through its 300 ms (the marks made for a day above are read).
    mark("conformance-grant", a.clone(), Duration::from_millis(300)).await;
    std::thread::sleep(Duration::from_millis(600));
    if any(vec![("conformance-grant", a), ("conformance-token", b)]).await {
        fail(check, "a mark is read after its time");
    }
}
