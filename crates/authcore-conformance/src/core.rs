//! The calls of Auth.js's adapter (`adapters.ts`), which every [`Adapter`] has: users,
//! accounts, sessions, verification tokens and authenticators.

use super::*;

/// Runs every check of this suite against `adapter`.
pub async fn run<A: Adapter + Clone>(adapter: &A, options: &Options) {
    users(adapter).await;
    update_user(adapter).await;
    accounts(adapter, options).await;
    account_link_race(adapter, options).await;
    sessions(adapter).await;
    verification_tokens(adapter).await;
    verification_token_race(adapter, options).await;
    authenticators(adapter).await;
    delete_user(adapter).await;
    if options.deletes_user_tokens {
        delete_user_tokens(adapter).await;
    }
}

/// create_user assigns distinct ids; get_user / get_user_by_email round-trip every field;
/// unknown ids and emails give `Ok(None)`.
pub async fn users<A: Adapter>(adapter: &A) {
    const CHECK: &str = "users";
    let verified = instant(-3600);
    let full = NewUser {
        name: Some("Ada Lovelace".to_owned()),
        email: Some(unique_email("users")),
        email_verified: Some(verified),
        image: Some("https://example.com/ada.png".to_owned()),
    };
    let a = ok(
        CHECK,
        "create_user",
        adapter.create_user(full.clone()).await,
    );
    eq(CHECK, "created name", &a.name, &full.name);
    eq(CHECK, "created email", &a.email, &full.email);
    eq(CHECK, "created image", &a.image, &full.image);
    same_opt_second(
        CHECK,
        "created emailVerified",
        a.email_verified,
        Some(verified),
    );
    if a.id.is_empty() {
        fail(CHECK, "create_user assigned an empty id");
    }

    let bare = NewUser {
        email: Some(unique_email("users-bare")),
        ..NewUser::default()
    };
    let b = ok(
        CHECK,
        "create_user",
        adapter.create_user(bare.clone()).await,
    );
    if a.id == b.id {
        fail(CHECK, format_args!("two users got the same id {:?}", a.id));
    }
    eq(CHECK, "bare user name", &b.name, &None);
    eq(CHECK, "bare user image", &b.image, &None);
    eq(CHECK, "bare user emailVerified", &b.email_verified, &None);

    let got = some(CHECK, "get_user", adapter.get_user(&a.id).await);
    same_user(CHECK, "get_user", &got, &a);
    let got = some(CHECK, "get_user", adapter.get_user(&b.id).await);
    same_user(CHECK, "get_user", &got, &b);

    let email = full.email.clone().unwrap_or_default();
    let got = some(
        CHECK,
        "get_user_by_email",
        adapter.get_user_by_email(&email).await,
    );
    same_user(CHECK, "get_user_by_email", &got, &a);

    for id in unknown_ids() {
        none(CHECK, "get_user(unknown id)", adapter.get_user(&id).await);
    }
    none(
        CHECK,
        "get_user_by_email(unknown email)",
        adapter.get_user_by_email(&unique_email("nobody")).await,
    );
}

/// update_user changes only the fields given; `Some(None)` clears; unknown id → `Ok(None)`.
pub async fn update_user<A: Adapter>(adapter: &A) {
    const CHECK: &str = "update_user";
    let original = ok(
        CHECK,
        "create_user",
        adapter
            .create_user(NewUser {
                name: Some("Before".to_owned()),
                email: Some(unique_email("update")),
                email_verified: None,
                image: Some("https://example.com/before.png".to_owned()),
            })
            .await,
    );

    // Only the name.
    let up = UserUpdate {
        id: original.id.clone(),
        name: Some(Some("After".to_owned())),
        ..UserUpdate::default()
    };
    let got = some(CHECK, "update_user(name)", adapter.update_user(up).await);
    let mut want = original.clone();
    want.name = Some("After".to_owned());
    same_user(CHECK, "update_user(name) result", &got, &want);
    let stored = some(CHECK, "get_user", adapter.get_user(&original.id).await);
    same_user(CHECK, "get_user after update_user(name)", &stored, &want);

    // Set emailVerified, clear the image, change the email.
    let verified = instant(0);
    let new_email = unique_email("update-new");
    let up = UserUpdate {
        id: original.id.clone(),
        email: Some(Some(new_email.clone())),
        email_verified: Some(Some(verified)),
        image: Some(None),
        ..UserUpdate::default()
    };
    let got = some(CHECK, "update_user(email…)", adapter.update_user(up).await);
    want.email = Some(new_email.clone());
    want.email_verified = Some(verified);
    want.image = None;
    same_user(
        CHECK,
        "update_user(email, emailVerified, image) result",
        &got,
        &want,
    );
    let stored = some(CHECK, "get_user", adapter.get_user(&original.id).await);
    same_user(CHECK, "get_user after second update_user", &stored, &want);
    let by_email = some(
        CHECK,
        "get_user_by_email(new email)",
        adapter.get_user_by_email(&new_email).await,
    );
    eq(
        CHECK,
        "get_user_by_email(new email).id",
        &by_email.id,
        &original.id,
    );

    // Clear emailVerified; an empty update changes nothing.
    let up = UserUpdate {
        id: original.id.clone(),
        email_verified: Some(None),
        ..UserUpdate::default()
    };
    let got = some(CHECK, "update_user(clear)", adapter.update_user(up).await);
    want.email_verified = None;
    same_user(
        CHECK,
        "update_user(emailVerified: None) result",
        &got,
        &want,
    );
    let up = UserUpdate {
        id: original.id.clone(),
        ..UserUpdate::default()
    };
    let got = some(CHECK, "update_user(empty)", adapter.update_user(up).await);
    same_user(CHECK, "update_user(no fields) result", &got, &want);

    for id in unknown_ids() {
        let up = UserUpdate {
            id,
            name: Some(Some("ghost".to_owned())),
            ..UserUpdate::default()
        };
        none(
            CHECK,
            "update_user(unknown id)",
            adapter.update_user(up).await,
        );
    }
}

/// link_account then get_user_by_account / get_account round-trip every field; a second
/// link of the same (provider, providerAccountId) is a Conflict and leaves the first;
/// unlink_account removes the link.
pub async fn accounts<A: Adapter>(adapter: &A, options: &Options) {
    const CHECK: &str = "accounts";
    let user = new_user(adapter, CHECK, "accounts").await;
    let other = new_user(adapter, CHECK, "accounts-other").await;

    let mut oauth = full_account(&user.id, ProviderType::Oauth, "github");
    oauth
        .extra
        .insert("refresh_token_expires_in".to_owned(), json!(15_897_600));
    oauth.authorization_details = Some(vec![json!({"type": "account_information"})]);
    ok(
        CHECK,
        "link_account(oauth)",
        adapter.link_account(oauth.clone()).await,
    );

    // An OIDC account with only the required fields, same provider account id on another
    // provider: uniqueness is per (provider, providerAccountId).
    let mut bare = Account::new(
        ProviderType::Oidc,
        "google",
        oauth.provider_account_id.clone(),
    );
    bare.user_id = Some(user.id.clone());
    ok(
        CHECK,
        "link_account(oidc)",
        adapter.link_account(bare.clone()).await,
    );

    let email_acc = {
        let mut a = Account::new(
            ProviderType::Email,
            "email",
            user.email.clone().unwrap_or_default(),
        );
        a.user_id = Some(other.id.clone());
        a
    };
    ok(
        CHECK,
        "link_account(email)",
        adapter.link_account(email_acc.clone()).await,
    );

    let owner = some(
        CHECK,
        "get_user_by_account",
        adapter
            .get_user_by_account(&oauth.provider, &oauth.provider_account_id)
            .await,
    );
    same_user(CHECK, "get_user_by_account(oauth)", &owner, &user);
    let owner = some(
        CHECK,
        "get_user_by_account",
        adapter
            .get_user_by_account(&email_acc.provider, &email_acc.provider_account_id)
            .await,
    );
    same_user(CHECK, "get_user_by_account(email)", &owner, &other);

    let got = some(
        CHECK,
        "get_account(oauth)",
        adapter
            .get_account(&oauth.provider_account_id, &oauth.provider)
            .await,
    );
    let want = expected_account(&oauth, options);
    if !options.account_extras && got.extra != want.extra {
        fail(
            CHECK,
            format_args!(
                "get_account returned extra fields {:?} although the backend does not store them",
                got.extra
            ),
        );
    }
    eq(CHECK, "get_account(oauth) round trip", &got, &want);
    let got = some(
        CHECK,
        "get_account(oidc)",
        adapter
            .get_account(&bare.provider_account_id, &bare.provider)
            .await,
    );
    eq(CHECK, "get_account(oidc) round trip", &got, &bare);
    let got = some(
        CHECK,
        "get_account(email)",
        adapter
            .get_account(&email_acc.provider_account_id, &email_acc.provider)
            .await,
    );
    eq(CHECK, "get_account(email) round trip", &got, &email_acc);

    // Same (provider, providerAccountId) again, for another user: Conflict, first link kept.
    let mut dup = full_account(&other.id, ProviderType::Oauth, "github");
    dup.provider_account_id = oauth.provider_account_id.clone();
    expect_conflict(
        CHECK,
        "second link_account of the same account",
        adapter.link_account(dup).await,
    );
    let owner = some(
        CHECK,
        "get_user_by_account after conflict",
        adapter
            .get_user_by_account(&oauth.provider, &oauth.provider_account_id)
            .await,
    );
    eq(CHECK, "owner after conflicting link", &owner.id, &user.id);
    let got = some(
        CHECK,
        "get_account after conflict",
        adapter
            .get_account(&oauth.provider_account_id, &oauth.provider)
            .await,
    );
    eq(CHECK, "account after conflicting link", &got, &want);

    // Unknown accounts.
    none(
        CHECK,
        "get_user_by_account(unknown)",
        adapter.get_user_by_account("github", &random_id()).await,
    );
    none(
        CHECK,
        "get_account(unknown)",
        adapter.get_account(&random_id(), "github").await,
    );
    none(
        CHECK,
        "get_account(known id, other provider)",
        adapter
            .get_account(&oauth.provider_account_id, "gitlab")
            .await,
    );

    ok(
        CHECK,
        "unlink_account",
        adapter
            .unlink_account(&oauth.provider, &oauth.provider_account_id)
            .await,
    );
    none(
        CHECK,
        "get_user_by_account after unlink",
        adapter
            .get_user_by_account(&oauth.provider, &oauth.provider_account_id)
            .await,
    );
    none(
        CHECK,
        "get_account after unlink",
        adapter
            .get_account(&oauth.provider_account_id, &oauth.provider)
            .await,
    );
    // The other provider's account with the same id is untouched.
    some(
        CHECK,
        "get_account(oidc) after unlinking the oauth one",
        adapter
            .get_account(&bare.provider_account_id, &bare.provider)
            .await,
    );
    ok(
        CHECK,
        "unlink_account(unknown)",
        adapter.unlink_account("github", &random_id()).await,
    );
    // Once unlinked, the account can be linked again (to the other user).
    let mut again = oauth.clone();
    again.user_id = Some(other.id.clone());
    ok(
        CHECK,
        "link_account after unlink",
        adapter.link_account(again).await,
    );
    let owner = some(
        CHECK,
        "get_user_by_account after relink",
        adapter
            .get_user_by_account(&oauth.provider, &oauth.provider_account_id)
            .await,
    );
    eq(CHECK, "owner after relink", &owner.id, &other.id);
}

/// Two concurrent link_account of the same account: exactly one Ok, one Conflict.
pub async fn account_link_race<A: Adapter + Clone>(adapter: &A, options: &Options) {
    const CHECK: &str = "account_link_race";
    let a = new_user(adapter, CHECK, "race-a").await;
    let b = new_user(adapter, CHECK, "race-b").await;
    for round in 0..options.race_rounds.max(1) {
        let acc_a = full_account(&a.id, ProviderType::Oauth, "race");
        let mut acc_b = full_account(&b.id, ProviderType::Oauth, "race");
        acc_b.provider_account_id = acc_a.provider_account_id.clone();
        let (x, y) = (adapter.clone(), adapter.clone());
        let (rx, ry) =
            futures_util::future::join(x.link_account(acc_a.clone()), y.link_account(acc_b)).await;
        let winner = match (&rx, &ry) {
            (Ok(()), Err(AdapterError::Conflict(_))) => &a.id,
            (Err(AdapterError::Conflict(_)), Ok(())) => &b.id,
            _ => fail(
                CHECK,
                format_args!(
                    "round {round}: concurrent links gave {rx:?} and {ry:?}, expected one Ok and one Conflict"
                ),
            ),
        };
        let owner = some(
            CHECK,
            "get_user_by_account after race",
            adapter
                .get_user_by_account(&acc_a.provider, &acc_a.provider_account_id)
                .await,
        );
        eq(CHECK, "owner after race", &owner.id, winner);
    }
}

/// Sessions: create / get_session_and_user / update_session / delete_session, expiry to the
/// second, unknown tokens give `Ok(None)`.
pub async fn sessions<A: Adapter>(adapter: &A) {
    const CHECK: &str = "sessions";
    let user = new_user(adapter, CHECK, "sessions").await;
    let session = AdapterSession {
        session_token: random_id(),
        user_id: user.id.clone(),
        expires: instant(30 * 24 * 3600),
    };
    let created = ok(
        CHECK,
        "create_session",
        adapter.create_session(session.clone()).await,
    );
    same_session(CHECK, "create_session result", &created, &session);

    let (s, u) = some(
        CHECK,
        "get_session_and_user",
        adapter.get_session_and_user(&session.session_token).await,
    );
    same_session(CHECK, "get_session_and_user session", &s, &session);
    same_user(CHECK, "get_session_and_user user", &u, &user);

    // A second session of the same user is independent.
    let second = AdapterSession {
        session_token: random_id(),
        user_id: user.id.clone(),
        expires: instant(3600),
    };
    ok(
        CHECK,
        "create_session(second)",
        adapter.create_session(second.clone()).await,
    );

    let later = instant(60 * 24 * 3600);
    let updated = some(
        CHECK,
        "update_session",
        adapter.update_session(&session.session_token, later).await,
    );
    let mut want = session.clone();
    want.expires = later;
    same_session(CHECK, "update_session result", &updated, &want);
    let (s, _) = some(
        CHECK,
        "get_session_and_user after update",
        adapter.get_session_and_user(&session.session_token).await,
    );
    same_session(CHECK, "session after update_session", &s, &want);
    let (s, _) = some(
        CHECK,
        "get_session_and_user(second)",
        adapter.get_session_and_user(&second.session_token).await,
    );
    same_session(
        CHECK,
        "second session after updating the first",
        &s,
        &second,
    );

    // Sessions see user updates.
    let up = UserUpdate {
        id: user.id.clone(),
        name: Some(Some("Renamed".to_owned())),
        ..UserUpdate::default()
    };
    some(CHECK, "update_user", adapter.update_user(up).await);
    let (_, u) = some(
        CHECK,
        "get_session_and_user after update_user",
        adapter.get_session_and_user(&session.session_token).await,
    );
    eq(
        CHECK,
        "session user name after update_user",
        &u.name,
        &Some("Renamed".to_owned()),
    );

    let deleted = some(
        CHECK,
        "delete_session",
        adapter.delete_session(&session.session_token).await,
    );
    same_session(CHECK, "delete_session result", &deleted, &want);
    none(
        CHECK,
        "second delete_session",
        adapter.delete_session(&session.session_token).await,
    );
    none(
        CHECK,
        "get_session_and_user after delete",
        adapter.get_session_and_user(&session.session_token).await,
    );
    none(
        CHECK,
        "update_session after delete",
        adapter.update_session(&session.session_token, later).await,
    );
    some(
        CHECK,
        "get_session_and_user(second) after deleting the first",
        adapter.get_session_and_user(&second.session_token).await,
    );

    let unknown = random_id();
    none(
        CHECK,
        "get_session_and_user(unknown)",
        adapter.get_session_and_user(&unknown).await,
    );
    none(
        CHECK,
        "update_session(unknown)",
        adapter.update_session(&unknown, later).await,
    );
    none(
        CHECK,
        "delete_session(unknown)",
        adapter.delete_session(&unknown).await,
    );
}

/// Verification tokens: used exactly once, matched on (identifier, token).
pub async fn verification_tokens<A: Adapter>(adapter: &A) {
    const CHECK: &str = "verification_tokens";
    let identifier = unique_email("vt");
    let token = VerificationToken {
        identifier: identifier.clone(),
        token: format!("{}{}", random_id(), random_id()),
        expires: instant(24 * 3600),
    };
    ok(
        CHECK,
        "create_verification_token",
        adapter.create_verification_token(token.clone()).await,
    );
    // A second token for the same identifier is independent.
    let other = VerificationToken {
        identifier: identifier.clone(),
        token: format!("{}{}", random_id(), random_id()),
        expires: instant(600),
    };
    ok(
        CHECK,
        "create_verification_token(second)",
        adapter.create_verification_token(other.clone()).await,
    );

    none(
        CHECK,
        "use_verification_token(other identifier, right token)",
        adapter
            .use_verification_token(&unique_email("vt-wrong"), &token.token)
            .await,
    );
    none(
        CHECK,
        "use_verification_token(right identifier, unknown token)",
        adapter
            .use_verification_token(&identifier, &random_id())
            .await,
    );

    let used = some(
        CHECK,
        "use_verification_token",
        adapter
            .use_verification_token(&identifier, &token.token)
            .await,
    );
    same_token(CHECK, "use_verification_token result", &used, &token);
    none(
        CHECK,
        "second use_verification_token",
        adapter
            .use_verification_token(&identifier, &token.token)
            .await,
    );

    let used = some(
        CHECK,
        "use_verification_token(second token)",
        adapter
            .use_verification_token(&identifier, &other.token)
            .await,
    );
    same_token(
        CHECK,
        "use_verification_token(second token) result",
        &used,
        &other,
    );
}

/// Two concurrent use_verification_token of the same token: exactly one gets it.
pub async fn verification_token_race<A: Adapter + Clone>(adapter: &A, options: &Options) {
    const CHECK: &str = "verification_token_race";
    for round in 0..options.race_rounds.max(1) {
        let token = VerificationToken {
            identifier: unique_email("vt-race"),
            token: random_id(),
            expires: instant(600),
        };
        ok(
            CHECK,
            "create_verification_token",
            adapter.create_verification_token(token.clone()).await,
        );
        let (x, y) = (adapter.clone(), adapter.clone());
        let (rx, ry) = futures_util::future::join(
            x.use_verification_token(&token.identifier, &token.token),
            y.use_verification_token(&token.identifier, &token.token),
        )
        .await;
        let rx = ok(CHECK, "racing use_verification_token", rx);
        let ry = ok(CHECK, "racing use_verification_token", ry);
        match (rx, ry) {
            (Some(t), None) | (None, Some(t)) => {
                same_token(CHECK, "racing use_verification_token result", &t, &token)
            }
            (x, y) => fail(
                CHECK,
                format_args!(
                    "round {round}: two concurrent uses returned {x:?} and {y:?}, expected exactly one Some"
                ),
            ),
        }
    }
}

/// Authenticators: create / get / list (sorted by credential id) / update counter;
/// a duplicate credential id is a Conflict.
pub async fn authenticators<A: Adapter>(adapter: &A) {
    const CHECK: &str = "authenticators";
    let user = new_user(adapter, CHECK, "authn").await;
    let other = new_user(adapter, CHECK, "authn-other").await;
    let pa_id = random_id();
    let mut acc = Account::new(ProviderType::Webauthn, "passkey", pa_id.clone());
    acc.user_id = Some(user.id.clone());
    ok(
        CHECK,
        "link_account(webauthn)",
        adapter.link_account(acc).await,
    );

    // Byte order (what Rust and `COLLATE "C"` sort by) differs from case-insensitive order
    // here: "A…" < "Z…" < "b…".
    let stem = random_id();
    let mut z = authenticator(&user.id, &pa_id, format!("Z{stem}+/w=="));
    z.counter = u64::from(u32::MAX);
    z.credential_backed_up = true;
    z.credential_device_type = "multiDevice".to_owned();
    let mut b = authenticator(&user.id, &pa_id, format!("b{stem}"));
    b.transports = None;
    let a = authenticator(&user.id, &pa_id, format!("A{stem}"));
    for x in [&z, &b, &a] {
        let created = ok(
            CHECK,
            "create_authenticator",
            adapter.create_authenticator(x.clone()).await,
        );
        eq(CHECK, "create_authenticator result", &created, x);
    }
    let foreign = authenticator(&other.id, &random_id(), format!("B{stem}"));
    ok(
        CHECK,
        "create_authenticator(other user)",
        adapter.create_authenticator(foreign.clone()).await,
    );

    for x in [&z, &b, &a, &foreign] {
        let got = some(
            CHECK,
            "get_authenticator",
            adapter.get_authenticator(&x.credential_id).await,
        );
        eq(CHECK, "get_authenticator round trip", &got, x);
    }
    none(
        CHECK,
        "get_authenticator(unknown)",
        adapter.get_authenticator(&random_id()).await,
    );
    none(
        CHECK,
        "get_authenticator(other case)",
        adapter
            .get_authenticator(&a.credential_id.to_lowercase())
            .await,
    );

    let list = ok(
        CHECK,
        "list_authenticators_by_user_id",
        adapter.list_authenticators_by_user_id(&user.id).await,
    );
    eq(
        CHECK,
        "list_authenticators_by_user_id (sorted by credential id, bytewise)",
        &list,
        &vec![a.clone(), z.clone(), b.clone()],
    );
    for id in unknown_ids() {
        let list = ok(
            CHECK,
            "list_authenticators_by_user_id(unknown)",
            adapter.list_authenticators_by_user_id(&id).await,
        );
        eq(
            CHECK,
            "list_authenticators_by_user_id(unknown user)",
            &list,
            &vec![],
        );
    }

    let updated = some(
        CHECK,
        "update_authenticator_counter",
        adapter
            .update_authenticator_counter(&b.credential_id, 42)
            .await,
    );
    let mut want_b = b.clone();
    want_b.counter = 42;
    eq(
        CHECK,
        "update_authenticator_counter result",
        &updated,
        &want_b,
    );
    let got = some(
        CHECK,
        "get_authenticator after counter update",
        adapter.get_authenticator(&b.credential_id).await,
    );
    eq(CHECK, "authenticator after counter update", &got, &want_b);
    let got = some(
        CHECK,
        "get_authenticator(untouched)",
        adapter.get_authenticator(&a.credential_id).await,
    );
    eq(CHECK, "other authenticator after counter update", &got, &a);
    none(
        CHECK,
        "update_authenticator_counter(unknown)",
        adapter.update_authenticator_counter(&random_id(), 1).await,
    );

    let mut dup = authenticator(&other.id, &random_id(), a.credential_id.clone());
    dup.counter = 7;
    expect_conflict(
        CHECK,
        "create_authenticator with an existing credential id",
        adapter.create_authenticator(dup).await,
    );
    let got = some(
        CHECK,
        "get_authenticator after conflict",
        adapter.get_authenticator(&a.credential_id).await,
    );
    eq(CHECK, "authenticator after conflicting create", &got, &a);
}

/// delete_user removes the user with its accounts, sessions and authenticators, and
/// nothing of another user.
pub async fn delete_user<A: Adapter>(adapter: &A) {
    const CHECK: &str = "delete_user";
    let victim = new_user(adapter, CHECK, "delete").await;
    let bystander = new_user(adapter, CHECK, "delete-bystander").await;

    let app_access = adapter.capabilities().app_access;

    let mut accounts = Vec::new();
    let mut sessions = Vec::new();
    let mut authns = Vec::new();
    for u in [&victim, &bystander] {
        let acc = full_account(&u.id, ProviderType::Oauth, "github");
        let session = AdapterSession {
            session_token: random_id(),
            user_id: u.id.clone(),
            expires: instant(3600),
        };
        let authn = authenticator(&u.id, &acc.provider_account_id, random_id());
        ok(
            CHECK,
            "link_account",
            adapter.link_account(acc.clone()).await,
        );
        ok(
            CHECK,
            "create_session",
            adapter.create_session(session.clone()).await,
        );
        ok(
            CHECK,
            "create_authenticator",
            adapter.create_authenticator(authn.clone()).await,
        );
        if let Some(app_access) = app_access {
            ok(
                CHECK,
                "grant_app_access",
                app_access
                    .grant_app_access(&u.id, "app", "App", &scopes(&["openid"]), instant(0))
                    .await,
            );
        }
        accounts.push(acc);
        sessions.push(session);
        authns.push(authn);
    }

    ok(CHECK, "delete_user", adapter.delete_user(&victim.id).await);
    none(
        CHECK,
        "get_user after delete_user",
        adapter.get_user(&victim.id).await,
    );
    let email = victim.email.clone().unwrap_or_default();
    none(
        CHECK,
        "get_user_by_email after delete_user",
        adapter.get_user_by_email(&email).await,
    );
    none(
        CHECK,
        "get_user_by_account after delete_user",
        adapter
            .get_user_by_account(&accounts[0].provider, &accounts[0].provider_account_id)
            .await,
    );
    none(
        CHECK,
        "get_account after delete_user",
        adapter
            .get_account(&accounts[0].provider_account_id, &accounts[0].provider)
            .await,
    );
    some(
        CHECK,
        "get_user_by_account(other user) after delete_user",
        adapter
            .get_user_by_account(&accounts[1].provider, &accounts[1].provider_account_id)
            .await,
    );
    none(
        CHECK,
        "get_session_and_user after delete_user",
        adapter
            .get_session_and_user(&sessions[0].session_token)
            .await,
    );
    some(
        CHECK,
        "get_session_and_user(other user) after delete_user",
        adapter
            .get_session_and_user(&sessions[1].session_token)
            .await,
    );
    none(
        CHECK,
        "delete_session of a deleted user's session",
        adapter.delete_session(&sessions[0].session_token).await,
    );
    none(
        CHECK,
        "get_authenticator after delete_user",
        adapter.get_authenticator(&authns[0].credential_id).await,
    );
    let list = ok(
        CHECK,
        "list_authenticators_by_user_id after delete_user",
        adapter.list_authenticators_by_user_id(&victim.id).await,
    );
    eq(CHECK, "authenticators of a deleted user", &list, &vec![]);
    some(
        CHECK,
        "get_authenticator(other user) after delete_user",
        adapter.get_authenticator(&authns[1].credential_id).await,
    );
    if let Some(app_access) = app_access {
        none(
            CHECK,
            "get_app_access after delete_user",
            app_access.get_app_access(&victim.id, "app").await,
        );
        some(
            CHECK,
            "get_app_access(other user) after delete_user",
            app_access.get_app_access(&bystander.id, "app").await,
        );
    }
    some(
        CHECK,
        "get_user(other user) after delete_user",
        adapter.get_user(&bystander.id).await,
    );

    // Deleting an unknown user is not an error.
    for id in unknown_ids() {
        ok(
            CHECK,
            "delete_user(unknown id)",
            adapter.delete_user(&id).await,
        );
    }
    ok(
        CHECK,
        "delete_user(already deleted)",
        adapter.delete_user(&victim.id).await,
    );
}

/// `delete_user` also deletes the unused verification tokens of the user's email, and no
/// one else's.
pub async fn delete_user_tokens<A: Adapter>(adapter: &A) {
    const CHECK: &str = "delete_user_tokens";
    let victim = new_user(adapter, CHECK, "delete-tokens").await;
    let bystander = new_user(adapter, CHECK, "delete-tokens-bystander").await;
    let token = |u: &AdapterUser| VerificationToken {
        identifier: u.email.clone().unwrap_or_default(),
        token: random_id(),
        expires: instant(3600),
    };
    let (gone, kept) = (token(&victim), token(&bystander));
    for t in [&gone, &kept] {
        ok(
            CHECK,
            "create_verification_token",
            adapter.create_verification_token(t.clone()).await,
        );
    }
    ok(CHECK, "delete_user", adapter.delete_user(&victim.id).await);
    none(
        CHECK,
        "use_verification_token of the deleted user's address",
        adapter
            .use_verification_token(&gone.identifier, &gone.token)
            .await,
    );
    some(
        CHECK,
        "use_verification_token of another address",
        adapter
            .use_verification_token(&kept.identifier, &kept.token)
            .await,
    );
}
