//! Administrators through the `Auth` API and the JSON routes: finding users, a ban that
//! closes every door (a session, a new sign-in, an API key), impersonation that is marked,
//! time-limited and powerless for sensitive changes, and the audit trail of it all — and,
//! as an attacker would try them, every way past those rules: each refusal leaves the
//! users as they were and answers none of their data.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use crate::common::*;
use authcore::account::AdminRoute;
use authcore::account::{AccountError, KeyRefused};
use authcore::adapter::{
    Adapter, AuditLogStore, AuditQuery, MemoryAdapter, UserDirectoryStore, UserQuery,
};
use authcore::admin::Admins;
use authcore::audit::{AuditLog, ChainFault};
use authcore::organizations::Organizations;
use authcore::{Auth, SessionStrategy};
use serde_json::{Value, json};

/// An app with administrators: Ada, owner of the administrators' organization `ops`, and
/// Lou, listed by address; Uma and Bob are users (Bob a member of `ops` without the
/// permission), all signing in by magic links into `mailbox`.
struct App {
    auth: Auth,
    db: MemoryAdapter,
    mailbox: Mailbox,
    ada: String,
    lou: String,
    uma: String,
    bob: String,
    ops: String,
}

async fn app_with(strategy: SessionStrategy, impersonation: Duration) -> App {
    let db = MemoryAdapter::new();
    let mailbox = Mailbox::default();
    let (auth, _) = auth_with(
        builder()
            .url(format!("{ORIGIN}/auth"))
            .provider(mailbox.provider())
            .adapter(db.clone())
            .session_strategy(strategy)
            .jwt_revocation(true)
            .organizations(Organizations::new().role("viewer", ["project:read"]))
            .admins(
                Admins::new()
                    .user("lou@example.com")
                    .organization("ops")
                    .impersonation(impersonation)
                    .configured_clients(["configured-app"]),
            )
            .audit_log(AuditLog::new().store(true)),
    );
    let ada = stored_user(&db, "ada@example.com", true).await;
    let lou = stored_user(&db, "lou@example.com", true).await;
    let uma = stored_user(&db, "uma@example.com", true).await;
    let bob = stored_user(&db, "bob@example.com", true).await;
    let ops = auth
        .create_organization_for(&ada, "Ops", Some("ops"))
        .await
        .unwrap()
        .id;
    let sent = auth
        .invite(
            Some(&ada),
            &authcore::account::InvitationSpec::to_organization(&ops, "bob@example.com")
                .roles(["viewer"]),
            None,
        )
        .await
        .unwrap();
    let token = sent.link.split("token=").nth(1).unwrap().to_owned();
    auth.accept_invitation(&bob, &token).await.unwrap();
    App {
        auth,
        db,
        mailbox,
        ada,
        lou,
        uma,
        bob,
        ops,
    }
}

async fn app(strategy: SessionStrategy) -> App {
    app_with(strategy, Duration::from_secs(600)).await
}

const STRATEGIES: [SessionStrategy; 2] = [SessionStrategy::Jwt, SessionStrategy::Database];

impl App {
    /// A fresh password session of `user`: its cookie header.
    async fn cookie(&self, user: &str) -> String {
        session_of(&self.auth, &self.db, user, Duration::ZERO, &["pwd"])
            .await
            .0
    }

    /// Signs `email` in by a magic link: the answer of the link.
    async fn sign_in(&self, email: &str) -> TestResponse {
        let r = ask_for_magic_link(&self.auth, email).await;
        assert_eq!(r.status, 302, "{}", r.text());
        let link = self
            .mailbox
            .last(email, authcore::providers::email::LinkPurpose::SignIn);
        let path = link.strip_prefix(ORIGIN).unwrap().to_owned();
        send(&self.auth, get(&path).body(empty()).unwrap()).await
    }

    /// Who the session of `cookie` is, if anyone.
    async fn who(&self, cookie: &str) -> Option<String> {
        let r = get_session(&self.auth, cookie).await;
        r.json()["user"]["email"].as_str().map(str::to_owned)
    }

    /// `route` with `fields` (a query for a read, a JSON body with a valid CSRF token
    /// for a change) and the request headers `extra`.
    async fn call(
        &self,
        route: AdminRoute,
        cookie: &str,
        extra: &[(&str, &str)],
        fields: Value,
    ) -> TestResponse {
        let (csrf_cookie, token) = csrf_pair();
        let mut uri = url(route.path());
        let body = if route.method() == http::Method::GET {
            let query: Vec<(String, String)> = fields
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
                .collect();
            if !query.is_empty() {
                uri.push('?');
                uri.push_str(
                    &url::form_urlencoded::Serializer::new(String::new())
                        .extend_pairs(query)
                        .finish(),
                );
            }
            String::new()
        } else {
            let mut body = fields;
            if body.get("csrfToken").is_none() {
                body["csrfToken"] = json!(token);
            }
            body.to_string()
        };
        let mut req = http::Request::builder()
            .method(route.method())
            .uri(uri)
            .header("cookie", format!("{cookie}; {csrf_cookie}"))
            .header("content-type", "application/json");
        for (k, v) in extra {
            req = req.header(*k, *v);
        }
        let r = self
            .auth
            .handle_admin(
                route,
                req.body(http_body_util::Full::new(bytes::Bytes::from(body)))
                    .unwrap(),
            )
            .await;
        let (parts, body) = r.into_parts();
        TestResponse {
            status: parts.status,
            headers: parts.headers,
            body: http_body_util::BodyExt::collect(body)
                .await
                .unwrap()
                .to_bytes(),
        }
    }

    async fn audit_kinds(&self) -> Vec<String> {
        let records = self
            .db
            .query_audit_records(&AuditQuery {
                ascending: true,
                limit: 1000,
                ..AuditQuery::default()
            })
            .await
            .unwrap();
        records.into_iter().map(|r| r.kind).collect()
    }
}

#[tokio::test]
async fn administrators_find_users_and_read_them() {
    let a = app(SessionStrategy::Database).await;
    let cookie = a.cookie(&a.ada).await;
    let r = a
        .call(AdminRoute::Users, &cookie, &[], json!({ "q": "UMA" }))
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["users"][0]["id"], json!(a.uma));
    assert_eq!(r.json()["users"].as_array().unwrap().len(), 1);
    // Every user, a page of two at a time.
    let mut seen = Vec::new();
    let mut after = String::new();
    loop {
        let mut q = json!({ "limit": "2" });
        if !after.is_empty() {
            q["after"] = json!(after);
        }
        let page = a.call(AdminRoute::Users, &cookie, &[], q).await.json();
        for u in page["users"].as_array().unwrap() {
            seen.push(u["id"].as_str().unwrap().to_owned());
        }
        match page["next"].as_str() {
            Some(next) => after = next.to_owned(),
            None => break,
        }
    }
    seen.sort();
    let mut all = vec![a.ada.clone(), a.lou.clone(), a.uma.clone(), a.bob.clone()];
    all.sort();
    assert_eq!(seen, all);
    let r = a
        .call(
            AdminRoute::Users,
            &cookie,
            &[],
            json!({ "organizationId": a.ops }),
        )
        .await;
    assert_eq!(r.json()["users"].as_array().unwrap().len(), 2);
    let r = a
        .call(AdminRoute::User, &cookie, &[], json!({ "id": a.bob }))
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let detail = r.json();
    assert_eq!(detail["user"]["email"], "bob@example.com");
    assert_eq!(detail["admin"], false);
    assert_eq!(detail["organizations"][0]["roles"], json!(["viewer"]));
    // Lou is an administrator by address, Ada by her role in `ops`.
    for who in [&a.lou, &a.ada] {
        assert!(a.auth.is_admin(who).await.unwrap());
    }
    assert!(!a.auth.is_admin(&a.bob).await.unwrap());
    // Oversize and malformed values are refused, not searched.
    for q in [
        json!({ "q": "x".repeat(300) }),
        json!({ "limit": "-1" }),
        json!({ "limit": "lots" }),
        json!({ "after": "a".repeat(300) }),
    ] {
        let r = a.call(AdminRoute::Users, &cookie, &[], q.clone()).await;
        assert_eq!(r.status, 400, "{q}");
        assert_eq!(r.json()["error"], "InvalidValue", "{q}");
    }
    let r = a
        .call(AdminRoute::User, &cookie, &[], json!({ "id": "nobody" }))
        .await;
    assert_eq!(
        (r.status.as_u16(), r.json()["error"].clone()),
        (404, json!("NotFound"))
    );
}

#[tokio::test]
async fn a_ban_closes_every_door_and_its_lifting_opens_them() {
    for strategy in STRATEGIES {
        let a = app(strategy).await;
        let signed_in = a.sign_in("uma@example.com").await;
        assert_eq!(signed_in.status, 302);
        let uma_session = signed_in.cookie(SESSION_COOKIE).unwrap();
        let uma_cookie = format!("{SESSION_COOKIE}={uma_session}");
        assert_eq!(a.who(&uma_cookie).await.as_deref(), Some("uma@example.com"));
        let key = a
            .auth
            .create_api_key(
                &fresh_session(&a.auth, &a.db, &a.uma).await,
                None,
                "cli",
                &[],
                None,
            )
            .await
            .unwrap();
        let key_text = key.secret.expose().to_owned();

        let admin = a.cookie(&a.ada).await;
        let r = a
            .call(
                AdminRoute::Ban,
                &admin,
                &[],
                json!({ "userId": a.uma, "reason": "spam", "until": "2999-01-01T00:00:00Z" }),
            )
            .await;
        assert_eq!(r.status, 200, "{strategy:?}: {}", r.text());
        // The session she had is over, a new sign-in is refused, her key is refused.
        assert_eq!(a.who(&uma_cookie).await, None, "{strategy:?}");
        let again = a.sign_in("uma@example.com").await;
        assert!(
            again.location().unwrap().contains("error=AccessDenied"),
            "{strategy:?}: {:?}",
            again.location()
        );
        assert!(again.cookie(SESSION_COOKIE).is_none_or(|c| c.is_empty()));
        let mut headers = http::HeaderMap::new();
        headers.insert(
            http::header::AUTHORIZATION,
            format!("Bearer {key_text}").parse().unwrap(),
        );
        let refused = a
            .auth
            .principal(&url("/api").parse().unwrap(), &headers)
            .await;
        assert_eq!(refused, Err(KeyRefused::Banned), "{strategy:?}");
        let detail = a
            .call(AdminRoute::User, &admin, &[], json!({ "id": a.uma }))
            .await
            .json();
        assert_eq!(detail["banned"], true);
        assert_eq!(detail["ban"]["reason"], "spam");

        let r = a
            .call(AdminRoute::Unban, &admin, &[], json!({ "userId": a.uma }))
            .await;
        assert_eq!(r.status, 200, "{}", r.text());
        let back = a.sign_in("uma@example.com").await;
        let cookie = format!("{SESSION_COOKIE}={}", back.cookie(SESSION_COOKIE).unwrap());
        assert_eq!(a.who(&cookie).await.as_deref(), Some("uma@example.com"));
        let kinds = a.audit_kinds().await;
        for kind in ["signIn", "admin.banned", "signInRefused", "admin.unbanned"] {
            assert!(
                kinds.iter().any(|k| k == kind),
                "{strategy:?}: {kind} in {kinds:?}"
            );
        }
    }
}

#[tokio::test]
async fn a_ban_ends_by_itself_and_refuses_bad_values() {
    let a = app(SessionStrategy::Database).await;
    let admin = a.cookie(&a.ada).await;
    for (fields, error) in [
        (json!({ "userId": a.uma, "reason": "" }), "InvalidValue"),
        (
            json!({ "userId": a.uma, "reason": "x".repeat(501) }),
            "InvalidValue",
        ),
        (
            json!({ "userId": a.uma, "reason": "a\u{0}b" }),
            "InvalidValue",
        ),
        (
            json!({ "userId": a.uma, "reason": "spam", "until": "2001-01-01T00:00:00Z" }),
            "InvalidValue",
        ),
        (
            json!({ "userId": a.uma, "reason": "spam", "until": "tomorrow" }),
            "InvalidValue",
        ),
        (json!({ "userId": a.ada, "reason": "self" }), "OwnAccount"),
        (json!({ "userId": "nobody", "reason": "spam" }), "NotFound"),
        (json!({ "reason": "spam" }), "InvalidRequest"),
    ] {
        let r = a.call(AdminRoute::Ban, &admin, &[], fields.clone()).await;
        assert_eq!(r.json()["error"], json!(error), "{fields}");
        assert!(r.status.is_client_error(), "{fields}");
    }
    assert_eq!(a.db.get_user_ban(&a.uma).await.unwrap(), None);
    // A ban that has ended lets the user in without being lifted.
    a.db.set_user_ban(
        &a.uma,
        Some(&authcore::adapter::UserBan {
            reason: "a day off".into(),
            at: time::OffsetDateTime::now_utc() - time::Duration::days(2),
            until: Some(time::OffsetDateTime::now_utc() - time::Duration::days(1)),
            by: Some(a.ada.clone()),
        }),
    )
    .await
    .unwrap();
    assert_eq!(a.auth.ban_of(&a.uma).await.unwrap(), None);
    let r = a.sign_in("uma@example.com").await;
    assert!(r.cookie(SESSION_COOKIE).is_some_and(|c| !c.is_empty()));
}

#[tokio::test]
async fn impersonation_is_marked_limited_and_ended_by_one_call() {
    for strategy in STRATEGIES {
        let a = app(strategy).await;
        let admin = a.cookie(&a.ada).await;
        let r = a
            .call(
                AdminRoute::Impersonate,
                &admin,
                &[],
                json!({ "userId": a.uma }),
            )
            .await;
        assert_eq!(r.status, 200, "{strategy:?}: {}", r.text());
        let token = r.cookie(SESSION_COOKIE).unwrap();
        let cookie = format!("{SESSION_COOKIE}={token}");
        assert_eq!(a.who(&cookie).await.as_deref(), Some("uma@example.com"));
        let mut headers = http::HeaderMap::new();
        headers.insert(http::header::COOKIE, cookie.parse().unwrap());
        let me = a
            .auth
            .current_session(&url("/auth/session").parse().unwrap(), &headers)
            .await
            .unwrap();
        assert_eq!(
            me.impersonator.as_deref(),
            Some(a.ada.as_str()),
            "{strategy:?}"
        );
        assert_eq!(me.amr, ["imp"]);
        // A host's session read (the gateway's) learns it too, second factors off.
        let read = a
            .auth
            .read_session(
                &url("/auth/session").parse().unwrap(),
                &headers,
                &authcore::ReadOptions::default(),
            )
            .await
            .unwrap();
        let sign_in = read.session.as_ref().and_then(|s| s.sign_in()).cloned();
        assert_eq!(
            sign_in.map(|s| (s.amr, s.impersonator)),
            Some((vec!["imp".to_owned()], Some(a.ada.clone()))),
            "{strategy:?}"
        );
        // No sensitive change, no administration, no impersonation from it.
        assert!(matches!(
            a.auth.delete_user(&me).await,
            Err(AccountError::ReauthenticationRequired)
        ));
        assert!(a.db.get_user(&a.uma).await.unwrap().is_some());
        let r = a.call(AdminRoute::Users, &cookie, &[], json!({})).await;
        assert_eq!(r.status, 403, "{strategy:?}");
        // The session is never pushed past its end by being used.
        let read = get_session(&a.auth, &cookie).await;
        let expires = time::OffsetDateTime::parse(
            read.json()["expires"].as_str().unwrap(),
            &time::format_description::well_known::Rfc3339,
        )
        .unwrap();
        assert!(expires <= time::OffsetDateTime::now_utc() + time::Duration::seconds(601));
        // One call ends it.
        let r = a
            .call(AdminRoute::EndImpersonation, &cookie, &[], json!({}))
            .await;
        assert_eq!(r.status, 200, "{strategy:?}: {}", r.text());
        // A copy of the cookie kept is over too.
        assert_eq!(a.who(&cookie).await, None, "{strategy:?}");
        assert!(
            r.set_cookies()
                .iter()
                .any(|c| c.starts_with(SESSION_COOKIE))
        );
        let kinds = a.audit_kinds().await;
        for kind in ["admin.impersonationStarted", "admin.impersonationEnded"] {
            assert!(kinds.iter().any(|k| k == kind), "{strategy:?}: {kind}");
        }
    }
}

#[tokio::test]
async fn an_impersonation_ends_at_its_time() {
    for strategy in STRATEGIES {
        let a = app_with(strategy, Duration::from_secs(1)).await;
        let admin = a.cookie(&a.ada).await;
        let r = a
            .call(
                AdminRoute::Impersonate,
                &admin,
                &[],
                json!({ "userId": a.uma }),
            )
            .await;
        let cookie = format!("{SESSION_COOKIE}={}", r.cookie(SESSION_COOKIE).unwrap());
        assert!(a.who(&cookie).await.is_some());
        tokio::time::sleep(Duration::from_millis(2100)).await;
        assert_eq!(a.who(&cookie).await, None, "{strategy:?}");
    }
}

#[tokio::test]
async fn attack_impersonation_of_administrators_and_escalation_through_it() {
    for strategy in STRATEGIES {
        let a = app(strategy).await;
        let admin = a.cookie(&a.ada).await;
        // Never of another administrator (by list or by role), nor of oneself.
        for (target, error) in [(&a.lou, "TargetIsAdmin"), (&a.ada, "OwnAccount")] {
            let r = a
                .call(
                    AdminRoute::Impersonate,
                    &admin,
                    &[],
                    json!({ "userId": target }),
                )
                .await;
            assert_eq!(r.json()["error"], json!(error), "{strategy:?}");
            assert!(r.cookie(SESSION_COOKIE).is_none());
            // Nor a set-up link, which would set their password or sign them in.
            let r = setup_link_for(&a, &admin, target).await;
            assert_eq!(r.json()["error"], json!(error), "{strategy:?}");
            assert!(r.json().get("setupLink").is_none(), "{}", r.text());
        }
        // Impersonating Bob (an `ops` member without the permission) gives nothing of
        // an administrator's, even were he one later.
        let r = a
            .call(
                AdminRoute::Impersonate,
                &admin,
                &[],
                json!({ "userId": a.bob }),
            )
            .await;
        let bob = format!("{SESSION_COOKIE}={}", r.cookie(SESSION_COOKIE).unwrap());
        for route in AdminRoute::ALL {
            if route == AdminRoute::EndImpersonation {
                continue;
            }
            let r = a.call(route, &bob, &[], json!({ "userId": a.uma })).await;
            assert!(
                [401, 403].contains(&r.status.as_u16()),
                "{strategy:?} {route:?}: {}",
                r.status
            );
            assert!(!r.text().contains("uma@example.com"));
        }
        assert_eq!(a.db.get_user_ban(&a.uma).await.unwrap(), None);
    }
}

#[tokio::test]
async fn attack_non_administrators_on_every_route() {
    for strategy in STRATEGIES {
        let a = app(strategy).await;
        let bob = a.cookie(&a.bob).await;
        // An `ops` key of Bob's: his role lacks the permission, so the key cannot hold it.
        let bob_session = fresh_session(&a.auth, &a.db, &a.bob).await;
        let key = a
            .auth
            .create_api_key(
                &bob_session,
                Some(&a.ops),
                "k",
                &["project:read".into()],
                None,
            )
            .await
            .unwrap();
        let bearer = format!("Bearer {}", key.secret.expose());
        // A JWT claiming to be an administrator, signed with the right secret: claims of
        // the token make nobody an administrator.
        let forged = session_cookie(
            &a.auth,
            json!({ "sub": a.uma, "role": "admin", "admin": true, "amr": ["pwd"],
                    "auth_time": time::OffsetDateTime::now_utc().unix_timestamp() }),
        );
        let forged_key = "Bearer ak_nope_nope";
        type Who<'a> = (&'a str, &'a str, Vec<(&'a str, &'a str)>);
        let attackers: [Who<'_>; 6] = [
            ("nobody", "", vec![]),
            ("a user", &bob, vec![]),
            ("a member's key", "", vec![("authorization", &bearer)]),
            ("a forged key", "", vec![("authorization", forged_key)]),
            ("an admin claim", &forged, vec![]),
            (
                "two authorization headers",
                "",
                vec![("authorization", &bearer), ("authorization", &bearer)],
            ),
        ];
        let users_before =
            a.db.search_users(&UserQuery {
                limit: 100,
                ..UserQuery::default()
            })
            .await
            .unwrap();
        let mails_before = a.mailbox.count();
        for (who, cookie, headers) in &attackers {
            for route in AdminRoute::ALL {
                if route == AdminRoute::EndImpersonation {
                    continue;
                }
                let fields = json!({
                    "userId": a.uma, "id": a.uma, "reason": "x", "email": "new@example.com",
                });
                let fields = if route.method() == http::Method::GET {
                    json!({ "id": a.uma })
                } else {
                    fields
                };
                let r = a.call(route, cookie, headers, fields).await;
                assert!(
                    [401, 403, 429].contains(&r.status.as_u16()),
                    "{strategy:?} {who} {route:?}: {} {}",
                    r.status,
                    r.text()
                );
                assert!(!r.text().contains("uma@example.com"), "{who} {route:?}");
                assert!(r.cookie(SESSION_COOKIE).is_none(), "{who} {route:?}");
            }
        }
        let users_after =
            a.db.search_users(&UserQuery {
                limit: 100,
                ..UserQuery::default()
            })
            .await
            .unwrap();
        assert_eq!(
            users_before, users_after,
            "{strategy:?}: no user made or deleted"
        );
        assert_eq!(
            a.mailbox.count(),
            mails_before,
            "{strategy:?}: no link mailed"
        );
        assert_eq!(a.db.get_user_ban(&a.uma).await.unwrap(), None);
        assert!(
            !a.audit_kinds()
                .await
                .iter()
                .any(|k| k.starts_with("admin."))
        );
    }
}

#[tokio::test]
async fn attack_a_forged_impersonation_token_names_no_session() {
    let a = app(SessionStrategy::Database).await;
    let uma = a.cookie(&a.uma).await;
    let token = uma.split('=').nth(1).unwrap();
    for forged in [
        format!("imp-99999999999-{token}"),
        format!("imp-1-{token}"),
        format!("{token}-imp-9999999999-"),
    ] {
        let cookie = format!("{SESSION_COOKIE}={forged}");
        assert_eq!(a.who(&cookie).await, None, "{forged}");
    }
}

#[tokio::test]
async fn administrators_changes_need_a_recent_sign_in_and_their_csrf_token() {
    let a = app(SessionStrategy::Database).await;
    let (stale, _) = session_of(&a.auth, &a.db, &a.ada, Duration::from_secs(7200), &["pwd"]).await;
    let r = a
        .call(
            AdminRoute::Ban,
            &stale,
            &[],
            json!({ "userId": a.uma, "reason": "spam" }),
        )
        .await;
    assert_eq!(r.json()["error"], "ReauthenticationRequired");
    // Reads need no recent sign-in.
    let r = a.call(AdminRoute::Users, &stale, &[], json!({})).await;
    assert_eq!(r.status, 200);
    let fresh = a.cookie(&a.ada).await;
    let r = a
        .call(
            AdminRoute::Ban,
            &fresh,
            &[],
            json!({ "userId": a.uma, "reason": "spam", "csrfToken": "b".repeat(64) }),
        )
        .await;
    assert_eq!(r.json()["error"], "MissingCSRF");
    assert_eq!(a.db.get_user_ban(&a.uma).await.unwrap(), None);
}

#[tokio::test]
async fn the_other_actions_and_their_audit_records() {
    let a = app(SessionStrategy::Database).await;
    let admin = a.cookie(&a.ada).await;
    // Sessions end.
    let _ = a.cookie(&a.uma).await;
    let r = a
        .call(
            AdminRoute::EndSessions,
            &admin,
            &[],
            json!({ "userId": a.uma }),
        )
        .await;
    assert_eq!(r.json()["ended"], 1, "{}", r.text());
    // A user made, then deleted.
    let r = a
        .call(
            AdminRoute::CreateUser,
            &admin,
            &[],
            json!({ "email": "New@Example.com", "name": "Nina" }),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let nina = r.json()["user"]["id"].as_str().unwrap().to_owned();
    assert_eq!(r.json()["user"]["email"], "new@example.com");
    assert_eq!(r.json()["setupLink"]["method"], "signIn", "{}", r.text());
    let r = a
        .call(
            AdminRoute::CreateUser,
            &admin,
            &[],
            json!({ "email": "new@example.com" }),
        )
        .await;
    assert_eq!(r.json()["error"], "InvalidValue");
    let r = a
        .call(
            AdminRoute::DeleteUser,
            &admin,
            &[],
            json!({ "userId": nina }),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(a.db.get_user(&nina).await.unwrap().is_none());
    // No second factor to reset.
    let r = a
        .call(
            AdminRoute::ResetTwoFactor,
            &admin,
            &[],
            json!({ "userId": a.uma }),
        )
        .await;
    assert!(r.status.is_client_error());
    // The trail, newest first, filtered by user.
    let r = a
        .call(AdminRoute::Audit, &admin, &[], json!({ "userId": nina }))
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let kinds: Vec<_> = r
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kind"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        kinds,
        [
            "admin.userDeleted",
            "account.accountDeleted",
            "admin.setupLinkMade",
            "admin.userCreated"
        ]
    );
    let r = a
        .call(AdminRoute::Audit, &admin, &[], json!({ "kind": "admin" }))
        .await;
    let records = r.json();
    assert!(
        records
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["kind"].as_str().unwrap().starts_with("admin."))
    );
    assert!(
        records
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["actor"] == json!(a.ada))
    );
    let report = a.auth.check_audit_log().await.unwrap();
    assert!(report.faults.is_empty(), "{:?}", report.faults);
}

#[tokio::test]
async fn the_audit_check_finds_records_removed_and_retention_keeps_the_chain() {
    let a = app(SessionStrategy::Database).await;
    for _ in 0..3 {
        a.sign_in("uma@example.com").await;
    }
    let report = a.auth.check_audit_log().await.unwrap();
    assert!(report.faults.is_empty(), "{:?}", report.faults);
    let first = report.first.unwrap();
    // Someone deletes the oldest records in the database: the check says so.
    a.db.prune_audit_records(first + 1).await.unwrap();
    let report = a.auth.check_audit_log().await.unwrap();
    assert_eq!(report.faults, [ChainFault::Unanchored { seq: first + 2 }]);
}

#[tokio::test]
async fn no_secret_reaches_the_audit_log() {
    let a = app(SessionStrategy::Database).await;
    a.sign_in("uma@example.com").await;
    let link = a.mailbox.last(
        "uma@example.com",
        authcore::providers::email::LinkPurpose::SignIn,
    );
    let link_token = query_param(&link, "token");
    let key = a
        .auth
        .create_api_key(
            &fresh_session(&a.auth, &a.db, &a.uma).await,
            None,
            "k",
            &[],
            None,
        )
        .await
        .unwrap();
    let admin = a.cookie(&a.ada).await;
    let r = a
        .call(
            AdminRoute::Impersonate,
            &admin,
            &[],
            json!({ "userId": a.uma }),
        )
        .await;
    let imp_token = r.cookie(SESSION_COOKIE).unwrap();
    let all =
        a.db.query_audit_records(&AuditQuery {
            ascending: true,
            limit: 1000,
            ..AuditQuery::default()
        })
        .await
        .unwrap();
    let text = serde_json::to_string(&all).unwrap();
    assert!(all.iter().any(|r| r.kind == "apiKey.created"));
    for secret in [
        link_token.as_str(),
        key.secret.expose(),
        imp_token.as_str(),
        admin.split('=').nth(1).unwrap(),
        SECRET,
    ] {
        assert!(!text.contains(secret), "a secret in the audit log");
    }
}

#[tokio::test]
async fn administrators_make_rotate_and_disable_oidc_clients() {
    use authcore::adapter::OidcClientStore;
    let a = app(SessionStrategy::Database).await;
    let admin = a.cookie(&a.ada).await;
    let new = json!({
        "clientId": "wiki",
        "name": "The wiki",
        "redirectUris": ["https://wiki.example/cb"],
        "grantTypes": ["authorization_code", "refresh_token"],
    });
    let r = a
        .call(AdminRoute::CreateClient, &admin, &[], new.clone())
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let created = r.json();
    let secret = created["clientSecret"].as_str().unwrap().to_owned();
    assert_eq!(secret.len(), 43, "32 random bytes in base64url");
    assert_eq!(created["client"]["clientId"], "wiki");
    assert_eq!(
        created["client"]["tokenEndpointAuthMethod"],
        "client_secret_basic"
    );
    assert!(created["client"].get("secretHash").is_none());
    let stored = a.db.get_oidc_client("wiki").await.unwrap().unwrap();
    assert!(stored.secret_matches(&secret));
    assert!(!stored.secret_hash.as_deref().unwrap().contains(&secret));

    // The same id again, an id of a configured client, values that are not valid.
    let taken = json!({ "clientId": "configured-app", "name": "x", "redirectUris": ["https://x.example/cb"] });
    let cases = [
        (new.clone(), 409, "ClientIdTaken"),
        (taken, 409, "ClientIdTaken"),
        (
            json!({ "clientId": "w2", "name": "x", "redirectUris": ["http://x.example/cb"] }),
            400,
            "InvalidValue",
        ),
        (
            json!({ "clientId": "w2", "name": "x", "redirectUris": ["https://x.example/cb#f"] }),
            400,
            "InvalidValue",
        ),
        (
            json!({ "clientId": "w 2", "name": "x", "redirectUris": ["https://x.example/cb"] }),
            400,
            "InvalidValue",
        ),
        (
            json!({ "clientId": "w2", "name": "", "redirectUris": ["https://x.example/cb"] }),
            400,
            "InvalidValue",
        ),
        (json!({ "clientId": "w2" }), 400, "InvalidRequest"),
    ];
    for (body, status, error) in cases {
        let r = a
            .call(AdminRoute::CreateClient, &admin, &[], body.clone())
            .await;
        assert_eq!(r.status, status, "{body}: {}", r.text());
        assert_eq!(r.json()["error"], error, "{body}");
    }
    assert!(
        a.db.get_oidc_client("configured-app")
            .await
            .unwrap()
            .is_none()
    );

    // A public client has no secret.
    let r = a
        .call(
            AdminRoute::CreateClient,
            &admin,
            &[],
            json!({ "clientId": "spa", "name": "SPA", "redirectUris": ["http://localhost:5173/cb"],
                    "tokenEndpointAuthMethod": "none" }),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["clientSecret"], Value::Null);
    let r = a
        .call(
            AdminRoute::RotateClientSecret,
            &admin,
            &[],
            json!({ "clientId": "spa" }),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.text());

    // The rotation: a new secret once, the old one no longer matches.
    let r = a
        .call(
            AdminRoute::RotateClientSecret,
            &admin,
            &[],
            json!({ "clientId": "wiki" }),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let rotated = r.json()["clientSecret"].as_str().unwrap().to_owned();
    assert_ne!(rotated, secret);
    let stored = a.db.get_oidc_client("wiki").await.unwrap().unwrap();
    assert!(stored.secret_matches(&rotated));
    assert!(!stored.secret_matches(&secret));
    assert!(stored.secret_rotated_at.is_some());

    // Disabled, enabled; an unknown client.
    for (route, disabled) in [
        (AdminRoute::DisableClient, true),
        (AdminRoute::DisableClient, true),
        (AdminRoute::EnableClient, false),
        (AdminRoute::DisableClient, true),
    ] {
        let r = a
            .call(route, &admin, &[], json!({ "clientId": "wiki" }))
            .await;
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.json()["disabledAt"].is_string(), disabled, "{route:?}");
    }
    for route in [AdminRoute::DisableClient, AdminRoute::RotateClientSecret] {
        let r = a
            .call(route, &admin, &[], json!({ "clientId": "nope" }))
            .await;
        assert_eq!(r.status, 404, "{route:?}: {}", r.text());
    }

    // The listing: both clients, no secret nor its hash.
    let r = a.call(AdminRoute::Clients, &admin, &[], json!({})).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let listing = r.json();
    let ids: Vec<&str> = listing["clients"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["clientId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["spa", "wiki"]);
    let hash = stored.secret_hash.clone().unwrap();
    for text in [
        r.text(),
        serde_json::to_string(
            &a.db
                .query_audit_records(&AuditQuery {
                    ascending: true,
                    limit: 1000,
                    ..AuditQuery::default()
                })
                .await
                .unwrap(),
        )
        .unwrap(),
    ] {
        for s in [secret.as_str(), rotated.as_str(), hash.as_str()] {
            assert!(!text.contains(s), "a secret or its hash shown: {text}");
        }
    }
    let kinds = a.audit_kinds().await;
    let clients: Vec<&str> = kinds
        .iter()
        .map(String::as_str)
        .filter(|k| k.starts_with("admin.client"))
        .collect();
    assert_eq!(
        clients,
        [
            "admin.clientCreated",
            "admin.clientCreated",
            "admin.clientSecretRotated",
            "admin.clientDisabled",
            "admin.clientEnabled",
            "admin.clientDisabled",
        ]
    );
}

#[tokio::test]
async fn attack_a_stale_session_and_a_missing_csrf_token_make_no_client() {
    use authcore::adapter::OidcClientStore;
    let a = app(SessionStrategy::Database).await;
    let stale = session_of(
        &a.auth,
        &a.db,
        &a.ada,
        Duration::from_secs(3 * 3600),
        &["pwd"],
    )
    .await
    .0;
    let body = json!({ "clientId": "wiki", "name": "W", "redirectUris": ["https://w.example/cb"] });
    let r = a
        .call(AdminRoute::CreateClient, &stale, &[], body.clone())
        .await;
    assert_eq!(r.status, 401, "{}", r.text());
    let mut no_csrf = body;
    no_csrf["csrfToken"] = json!("forged");
    let r = a
        .call(
            AdminRoute::CreateClient,
            &a.cookie(&a.ada).await,
            &[],
            no_csrf,
        )
        .await;
    assert_eq!(r.status, 403, "{}", r.text());
    assert!(a.db.list_oidc_clients().await.unwrap().is_empty());
}

/// A site with password accounts whose administrator is Ada (by address), set-up links
/// living `lifetime`, and links mailed into its mailbox.
async fn password_app(lifetime: Duration) -> App {
    password_app_mailing(lifetime, true).await
}

/// [`password_app`], whose links are mailed when `mails` (else it sends no mail).
async fn password_app_mailing(lifetime: Duration, mails: bool) -> App {
    let db = MemoryAdapter::new();
    let mailbox = Mailbox::default();
    let accounts = authcore::passwords::PasswordAccounts::new(
        std::sync::Arc::new(db.clone()),
        authcore::passwords::PasswordHashing::argon2id(64, 1, 1).unwrap(),
    )
    .unwrap()
    // A server that mails nothing confirms no address.
    .require_verified_email(mails);
    let mut builder = authcore::AuthConfig::builder();
    if mails {
        builder = builder.provider(mailbox.provider().magic_links(false));
    }
    let (auth, _) = auth_with(
        builder
            .secret(SECRET)
            .trust_host(true)
            .url(format!("{ORIGIN}/auth"))
            .adapter(db.clone())
            .session_strategy(SessionStrategy::Database)
            .password_accounts(accounts)
            .admins(
                Admins::new()
                    .user("ada@example.com")
                    .user("boss@example.com")
                    .setup_link_lifetime(lifetime),
            )
            .audit_log(AuditLog::new().store(true)),
    );
    let ada = stored_user(&db, "ada@example.com", true).await;
    App {
        auth,
        db,
        mailbox,
        ada,
        lou: String::new(),
        uma: String::new(),
        bob: String::new(),
        ops: String::new(),
    }
}

const NEW_PASSWORD: &str = "a brand new and long password";

/// An administrator (`admin`, a session cookie) makes the user `email`: the answer's JSON
/// and its set-up link.
async fn created_with_link(a: &App, admin: &str, email: &str) -> (serde_json::Value, String) {
    let r = a
        .call(
            AdminRoute::CreateUser,
            admin,
            &[],
            json!({ "email": email }),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let made = r.json();
    let link = made["setupLink"]["url"].as_str().unwrap().to_owned();
    (made, link)
}

/// An administrator's (`admin`, a session cookie) request for a new set-up link for
/// `user`: the answer.
async fn setup_link_for(a: &App, admin: &str, user: &str) -> TestResponse {
    a.call(AdminRoute::SetupLink, admin, &[], json!({ "userId": user }))
        .await
}

/// Sets the password of `user` by the link `link`: the answer.
async fn set_password(a: &App, link: &str, password: &str) -> TestResponse {
    post_password_step(
        &a.auth,
        "reset",
        &[
            ("token", &query_param(link, "token")),
            ("user", &query_param(link, "user")),
            ("password", password),
        ],
    )
    .await
}

/// Signs `email` in with `password`: whether a session opened.
async fn password_signs_in(a: &App, email: &str, password: &str) -> bool {
    let r = post_credentials_to(
        &a.auth,
        "password",
        &[("username", email), ("password", password)],
    )
    .await;
    r.status == 302 && r.cookie(SESSION_COOKIE).is_some()
}

#[tokio::test]
async fn a_user_made_by_an_administrator_sets_their_password_by_the_link_once() {
    let a = password_app(Duration::from_secs(3600)).await;
    let admin = a.cookie(&a.ada).await;
    let r = a
        .call(
            AdminRoute::CreateUser,
            &admin,
            &[],
            json!({ "email": "Nina@Example.com", "name": "Nina" }),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.headers["cache-control"], "private, no-cache, no-store");
    let made = r.json();
    let nina = made["user"]["id"].as_str().unwrap().to_owned();
    let link = made["setupLink"]["url"].as_str().unwrap().to_owned();
    assert_eq!(made["setupLink"]["method"], "password");
    assert_eq!(made["setupLink"]["mailed"], true);
    assert!(made["setupLink"]["expires"].is_string());
    assert!(
        link.starts_with(&format!("{ORIGIN}/auth/password/reset?token=")),
        "{link}"
    );
    // The same link was mailed to the user, as an account set-up.
    assert_eq!(
        a.mailbox.last(
            "nina@example.com",
            authcore::providers::email::LinkPurpose::AccountSetup
        ),
        link
    );
    // No password yet: nothing signs in.
    assert!(!password_signs_in(&a, "nina@example.com", NEW_PASSWORD).await);
    // The link's page, then the password set by it; the address counts as confirmed.
    let page = send(
        &a.auth,
        get(link.strip_prefix(ORIGIN).unwrap())
            .body(empty())
            .unwrap(),
    )
    .await;
    assert_eq!(page.status, 200, "{}", page.text());
    let r = set_password(&a, &link, NEW_PASSWORD).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(password_signs_in(&a, "nina@example.com", NEW_PASSWORD).await);
    // Single use: the link sets no other password.
    let r = set_password(&a, &link, "an attacker's replayed password").await;
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(!password_signs_in(&a, "nina@example.com", "an attacker's replayed password").await);
    assert!(password_signs_in(&a, "nina@example.com", NEW_PASSWORD).await);
    // A new link for the user, who signs in now: mailed to her only; each is recorded,
    // never with its token.
    let r = setup_link_for(&a, &admin, &nina).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.json()["setupLink"]["url"].is_null(), "{}", r.text());
    assert_eq!(r.json()["setupLink"]["mailed"], true);
    let second = a.mailbox.last(
        "nina@example.com",
        authcore::providers::email::LinkPurpose::AccountSetup,
    );
    assert_ne!(second, link);
    assert!(!r.text().contains(&query_param(&second, "token")));
    let records =
        a.db.query_audit_records(&AuditQuery {
            user: Some(nina.clone()),
            ascending: true,
            limit: 100,
            ..AuditQuery::default()
        })
        .await
        .unwrap();
    let kinds: Vec<_> = records.iter().map(|r| r.kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "admin.userCreated",
            "admin.setupLinkMade",
            "account.passwordChanged",
            "signIn",
            "signIn",
            "admin.setupLinkMade"
        ],
        "{records:?}"
    );
    let text = serde_json::to_string(&records).unwrap();
    for token in [query_param(&link, "token"), query_param(&second, "token")] {
        assert!(!text.contains(&token), "a link's token in the audit log");
    }
    // Not for nobody, nor for oneself.
    for (user, status) in [("nobody", 404), (a.ada.as_str(), 409)] {
        let r = setup_link_for(&a, &admin, user).await;
        assert_eq!(r.status, status, "{user}: {}", r.text());
    }
}

/// An address the configuration lists as an administrator's, not yet verified: a user
/// made with it gets no set-up link (using one would verify the address and make an
/// administrator whose password the creator chose), nor does a later request make one;
/// nothing is mailed and the address stays unverified.
#[tokio::test]
async fn attack_no_set_up_link_for_an_address_listed_as_an_administrator() {
    let a = password_app(Duration::from_secs(3600)).await;
    let admin = a.cookie(&a.ada).await;
    let r = a
        .call(
            AdminRoute::CreateUser,
            &admin,
            &[],
            json!({ "email": "boss@example.com" }),
        )
        .await;
    assert_eq!(r.status, 200, "the user is made: {}", r.text());
    assert!(r.json()["setupLink"].is_null(), "{}", r.text());
    let boss = r.json()["user"]["id"].as_str().unwrap().to_owned();
    let r = setup_link_for(&a, &admin, &boss).await;
    assert_eq!(r.status, 403, "{}", r.text());
    assert_eq!(r.json()["error"], "TargetIsAdmin", "{}", r.text());
    assert!(!r.text().contains("token="), "{}", r.text());
    assert!(
        !a.mailbox
            .links
            .lock()
            .unwrap()
            .iter()
            .any(|m| m.identifier == "boss@example.com"),
        "nothing mailed"
    );
    let user = a.db.get_user(&boss).await.unwrap().unwrap();
    assert!(user.email_verified.is_none());
}

/// Users who already sign in, each by another way (a password, a confirmed address, an
/// OAuth account, a passkey): an administrator's set-up link for them is mailed to them
/// only, never put in the administrator's hands (with it, the administrator would set the
/// password and keep the account); a server that does not mail makes none. The user's
/// password is unchanged either way.
#[tokio::test]
async fn attack_no_set_up_link_in_an_administrator_s_hands_for_a_user_who_signs_in() {
    for mails in [true, false] {
        let a = password_app_mailing(Duration::from_secs(3600), mails).await;
        let admin = a.cookie(&a.ada).await;
        // A fresh user's link is the administrator's to hand over, mailed or not.
        let (_, link) = created_with_link(&a, &admin, "pat@example.com").await;
        let r = set_password(&a, &link, NEW_PASSWORD).await;
        assert_eq!(r.status, 200, "{}", r.text());
        let pat =
            a.db.get_user_by_email("pat@example.com")
                .await
                .unwrap()
                .unwrap()
                .id;
        let confirmed = stored_user(&a.db, "cid@example.com", true).await;
        let oauth = stored_user(&a.db, "gil@example.com", false).await;
        let mut account = authcore::types::Account::new(
            authcore::types::ProviderType::Oauth,
            "github",
            "gil-on-github",
        );
        account.user_id = Some(oauth.clone());
        a.db.link_account(account).await.unwrap();
        let passkey = stored_user(&a.db, "pia@example.com", false).await;
        add_passkey(&a.db, &passkey, "passkey", "pia-credential").await;
        for (user, email) in [
            (&pat, "pat@example.com"),
            (&confirmed, "cid@example.com"),
            (&oauth, "gil@example.com"),
            (&passkey, "pia@example.com"),
        ] {
            let mailed_before = a.mailbox.count();
            let r = setup_link_for(&a, &admin, user).await;
            assert!(!r.text().contains("token="), "{email}: {}", r.text());
            if mails {
                assert_eq!(r.status, 200, "{email}: {}", r.text());
                assert!(
                    r.json()["setupLink"]["url"].is_null(),
                    "{email}: {}",
                    r.text()
                );
                assert_eq!(r.json()["setupLink"]["mailed"], true, "{email}");
                assert_eq!(
                    a.mailbox.count(),
                    mailed_before + 1,
                    "{email}: mailed to them"
                );
                let mailed = a
                    .mailbox
                    .last(email, authcore::providers::email::LinkPurpose::AccountSetup);
                assert!(
                    !r.text().contains(&query_param(&mailed, "token")),
                    "{email}"
                );
            } else {
                assert_eq!(r.status, 409, "{email}: {}", r.text());
                assert_eq!(r.json()["error"], "SetUpAlready", "{email}");
                assert_eq!(a.mailbox.count(), mailed_before, "{email}");
            }
        }
        assert!(password_signs_in(&a, "pat@example.com", NEW_PASSWORD).await);
        // Recorded either way when made, with whether it was shown.
        let records =
            a.db.query_audit_records(&AuditQuery {
                user: Some(pat.clone()),
                kind: Some("admin.setupLinkMade".into()),
                ascending: true,
                limit: 10,
                ..AuditQuery::default()
            })
            .await
            .unwrap();
        let shown: Vec<Value> = records
            .iter()
            .map(|r| serde_json::from_str::<Value>(&r.data).unwrap()["shown"].clone())
            .collect();
        let expected = if mails {
            vec![json!(true), json!(false)]
        } else {
            vec![json!(true)]
        };
        assert_eq!(shown, expected, "mails: {mails}: {records:?}");
    }
}

#[tokio::test]
async fn attack_an_expired_set_up_link_sets_no_password() {
    let a = password_app(Duration::from_millis(1)).await;
    let admin = a.cookie(&a.ada).await;
    let (_, link) = created_with_link(&a, &admin, "late@example.com").await;
    // Past its lifetime.
    tokio::time::sleep(Duration::from_millis(20)).await;
    let r = set_password(&a, &link, NEW_PASSWORD).await;
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(!password_signs_in(&a, "late@example.com", NEW_PASSWORD).await);
    let late =
        a.db.get_user_by_email("late@example.com")
            .await
            .unwrap()
            .unwrap();
    assert!(late.email_verified.is_none(), "nothing changed");
}

#[tokio::test]
async fn without_password_accounts_the_set_up_link_signs_the_user_in_once() {
    let a = app(SessionStrategy::Database).await;
    let admin = a.cookie(&a.ada).await;
    let (made, link) = created_with_link(&a, &admin, "max@example.com").await;
    assert_eq!(made["setupLink"]["method"], "signIn");
    assert_eq!(
        a.mailbox.last(
            "max@example.com",
            authcore::providers::email::LinkPurpose::AccountSetup
        ),
        link
    );
    let path = link.strip_prefix(ORIGIN).unwrap().to_owned();
    let r = send(&a.auth, get(&path).body(empty()).unwrap()).await;
    assert_eq!(r.status, 302, "{}", r.text());
    assert_eq!(
        r.location(),
        Some(format!("{ORIGIN}/auth/account").as_str())
    );
    let cookie = format!("{SESSION_COOKIE}={}", r.cookie(SESSION_COOKIE).unwrap());
    assert_eq!(a.who(&cookie).await.as_deref(), Some("max@example.com"));
    // Used: it signs nobody in again.
    let again = send(&a.auth, get(&path).body(empty()).unwrap()).await;
    assert!(
        again.cookie(SESSION_COOKIE).is_none(),
        "{:?}",
        again.location()
    );
    assert!(
        again
            .location()
            .unwrap_or_default()
            .contains("error=Verification")
    );
}
