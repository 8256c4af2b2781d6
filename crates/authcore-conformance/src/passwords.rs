//! [`PasswordStore`](authcore::adapter::PasswordStore): password hashes, set, replaced by
//! compare-and-set, deleted.

use super::*;

/// How many replacements race from one hash in [`password_replace_race`].
const RACERS: usize = 8;

/// Runs every check of this suite against `adapter`.
pub async fn run<A: Adapter + Clone>(adapter: &A, options: &Options) {
    passwords(adapter).await;
    password_replace_race(adapter, options).await;
}

/// A PHC-looking hash, different each time.
fn phc_hash() -> String {
    format!(
        "$argon2id$v=19$m=19456,t=2,p=1${}${}",
        random_id(),
        random_id()
    )
}

/// Password hashes (authcore extension, skipped when unsupported): none before any; the hash
/// round-trips byte for byte and the next set replaces it; `replace_password_hash` changes
/// it only from the current hash (not from a stale one, one differing in case or by a
/// trailing space, or from a missing one); delete removes it; one user's hash is not
/// another's; `delete_user` removes it; a write for a user that does not exist fails.
pub async fn passwords<A: Adapter>(adapter: &A) {
    const CHECK: &str = "passwords";
    let Some(store) = capability(adapter.capabilities().passwords, CHECK, "PasswordStore") else {
        return;
    };
    let user = new_user(adapter, CHECK, "passwords").await;
    let other = new_user(adapter, CHECK, "passwords-other").await;
    none(
        CHECK,
        "get_password_hash before any",
        store.get_password_hash(&user.id).await,
    );

    // Stored as given: a bcrypt hash (its cost and salt in the string), a long one, and
    // one with characters that a collation or a trimming column would change.
    let first = phc_hash();
    let stored_as_given = [
        "$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW".to_owned(),
        format!("$pbkdf2-sha512$i=210000,l=64${}", "A".repeat(600)),
        format!("$scrypt$ln=17,r=8,p=1$Üñí ${} ", random_id()),
        first.clone(),
    ];
    for hash in &stored_as_given {
        ok(
            CHECK,
            "set_password_hash",
            store.set_password_hash(&user.id, hash).await,
        );
        let got = some(
            CHECK,
            "get_password_hash",
            store.get_password_hash(&user.id).await,
        );
        eq(CHECK, "the hash set last", &got, hash);
    }
    none(
        CHECK,
        "another user's hash",
        store.get_password_hash(&other.id).await,
    );

    // (current given, new, answer expected, hash stored after).
    let second = phc_hash();
    let cases = [
        (first.clone(), second.clone(), true, second.clone()),
        (first.clone(), phc_hash(), false, second.clone()),
        (second.to_uppercase(), phc_hash(), false, second.clone()),
        (format!("{second} "), phc_hash(), false, second.clone()),
        (String::new(), phc_hash(), false, second.clone()),
        (second.clone(), second.clone(), true, second.clone()),
    ];
    for (current, new, answer, after) in cases {
        let got = ok(
            CHECK,
            "replace_password_hash",
            store.replace_password_hash(&user.id, &current, &new).await,
        );
        eq(
            CHECK,
            &format!("replace_password_hash from {current:?}"),
            &got,
            &answer,
        );
        let stored = some(
            CHECK,
            "get_password_hash",
            store.get_password_hash(&user.id).await,
        );
        eq(CHECK, "the hash after replacing", &stored, &after);
    }
    for current in ["", second.as_str()] {
        let got = ok(
            CHECK,
            "replace_password_hash",
            store
                .replace_password_hash(&other.id, current, &phc_hash())
                .await,
        );
        eq(
            CHECK,
            "replacing the hash of a user without one",
            &got,
            &false,
        );
    }
    none(
        CHECK,
        "a failed replacement sets no hash",
        store.get_password_hash(&other.id).await,
    );

    ok(
        CHECK,
        "delete_password_hash",
        store.delete_password_hash(&user.id).await,
    );
    none(
        CHECK,
        "get_password_hash after delete",
        store.get_password_hash(&user.id).await,
    );
    ok(
        CHECK,
        "delete_password_hash of a user without one",
        store.delete_password_hash(&user.id).await,
    );
    eq(
        CHECK,
        "replace_password_hash after delete",
        &ok(
            CHECK,
            "replace_password_hash",
            store
                .replace_password_hash(&user.id, &second, &phc_hash())
                .await,
        ),
        &false,
    );

    ok(
        CHECK,
        "set_password_hash",
        store.set_password_hash(&other.id, &phc_hash()).await,
    );
    ok(CHECK, "delete_user", adapter.delete_user(&other.id).await);
    none(
        CHECK,
        "the hash of a deleted user",
        store.get_password_hash(&other.id).await,
    );
    let mut missing = unknown_ids().to_vec();
    missing.push(other.id.clone());
    for id in &missing {
        expect_error(
            CHECK,
            "set_password_hash for a user that does not exist",
            store.set_password_hash(id, &phc_hash()).await,
        );
        none(
            CHECK,
            "get_password_hash of a user that does not exist",
            store.get_password_hash(id).await,
        );
        eq(
            CHECK,
            "replace_password_hash of a user that does not exist",
            &ok(
                CHECK,
                "replace_password_hash",
                store.replace_password_hash(id, "", &phc_hash()).await,
            ),
            &false,
        );
        ok(
            CHECK,
            "delete_password_hash of a user that does not exist",
            store.delete_password_hash(id).await,
        );
    }
}

/// Concurrent replacements from one hash (a rehash at sign-in racing others): exactly one
/// answers `true`, and its hash is the one stored.
pub async fn password_replace_race<A: Adapter + Clone>(adapter: &A, options: &Options) {
    const CHECK: &str = "password_replace_race";
    let Some(store) = capability(adapter.capabilities().passwords, CHECK, "PasswordStore") else {
        return;
    };
    let user = new_user(adapter, CHECK, "password-race").await;
    for round in 0..options.race_rounds.max(1) {
        let current = phc_hash();
        ok(
            CHECK,
            "set_password_hash",
            store.set_password_hash(&user.id, &current).await,
        );
        let clones: Vec<A> = (0..RACERS).map(|_| adapter.clone()).collect();
        let news: Vec<String> = (0..RACERS).map(|_| phc_hash()).collect();
        let mut racers = Vec::with_capacity(RACERS);
        for (clone, new) in clones.iter().zip(&news) {
            let Some(racer) = clone.capabilities().passwords else {
                fail(CHECK, "a clone of the adapter has no PasswordStore");
            };
            racers.push(racer.replace_password_hash(&user.id, &current, new));
        }
        let answers: Vec<bool> = futures_util::future::join_all(racers)
            .await
            .into_iter()
            .map(|r| ok(CHECK, "replace_password_hash", r))
            .collect();
        let winners: Vec<&String> = news
            .iter()
            .zip(&answers)
            .filter_map(|(new, won)| won.then_some(new))
            .collect();
        let [winner] = winners[..] else {
            fail(
                CHECK,
                format_args!(
                    "round {round}: concurrent replacements answered {answers:?}, expected one true"
                ),
            );
        };
        let stored = some(
            CHECK,
            "get_password_hash",
            store.get_password_hash(&user.id).await,
        );
        eq(CHECK, "the winner's hash", &stored, winner);
    }
}
