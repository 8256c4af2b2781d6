//! `authcore-server import-keycloak <realm.json>`: the users of a Keycloak realm export
//! (`kc.sh export --realm <name> --file realm.json`, or the admin console's partial export
//! with users) brought into the database, so that they sign in with the passwords they have:
//! each user with an address becomes a user (or, when the address has one, is that user),
//! its Keycloak password hash (PBKDF2-SHA256) is kept as it is and verified at the next
//! sign-in, which rehashes it to argon2id, and its groups (without Keycloak's leading `/`)
//! become the user's groups. Disabled users and users without an address are skipped and
//! named in the report; a hash is never written over a password the user already has here,
//! and a user here is matched only by an address Keycloak verified (else anyone who
//! registered that address in Keycloak would get a password to its account).

use authcore::adapter::{Adapter, AdapterError, NewUser, UserUpdate};
use serde_json::Value;

/// What an import did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ImportReport {
    /// Users made.
    pub created: usize,
    /// Users that existed here (by address) and were kept, with what the export added.
    pub matched: usize,
    /// Passwords imported.
    pub passwords: usize,
    /// Users not imported, each with why (by Keycloak username).
    pub skipped: Vec<(String, String)>,
}

/// Why an import could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// Not a realm export.
    #[error("not a Keycloak realm export: {0}")]
    Format(String),
    /// The database lacks what the import writes.
    #[error("the database does not store {0}")]
    Unsupported(&'static str),
    /// The database failed.
    #[error(transparent)]
    Adapter(#[from] AdapterError),
}

/// The most users one export may hold (a bound on the work of one command).
const MAX_USERS: usize = 1_000_000;

/// Imports the users of realm export `realm` into `adapter`.
pub async fn import_realm(
    adapter: &dyn Adapter,
    realm: &Value,
) -> Result<ImportReport, ImportError> {
    let users = realm
        .get("users")
        .and_then(Value::as_array)
        .ok_or_else(|| {
            ImportError::Format("it has no \"users\" list (export the realm with its users)".into())
        })?;
    if users.len() > MAX_USERS {
        return Err(ImportError::Format(format!(
            "{} users: at most {MAX_USERS} per import",
            users.len()
        )));
    }
    let passwords = adapter
        .passwords()
        .ok_or(ImportError::Unsupported("passwords"))?;
    let groups_store = adapter.user_groups();
    let mut report = ImportReport::default();
    for user in users {
        let username = user
            .get("username")
            .and_then(Value::as_str)
            .unwrap_or("(no username)")
            .to_owned();
        let mut skip = |why: &str| report.skipped.push((username.clone(), why.to_owned()));
        if user.get("enabled").and_then(Value::as_bool) == Some(false) {
            skip("disabled in Keycloak");
            continue;
        }
        let Some(email) = user
            .get("email")
            .and_then(Value::as_str)
            .and_then(|e| authcore::providers::email::normalize_email(e).ok())
        else {
            skip("no valid email address");
            continue;
        };
        let hash = match user
            .get("credentials")
            .and_then(Value::as_array)
            .and_then(|list| {
                list.iter()
                    .find(|c| c.get("type").and_then(Value::as_str) == Some("password"))
            }) {
            Some(credential) => match authcore::passwords::from_keycloak(credential) {
                Ok(hash) => Some(hash),
                Err(e) => {
                    skip(&format!("its password cannot be imported: {e}"));
                    continue;
                }
            },
            None => None,
        };
        let name = [
            user.get("firstName").and_then(Value::as_str),
            user.get("lastName").and_then(Value::as_str),
        ]
        .into_iter()
        .flatten()
        .filter(|s| !s.trim().is_empty())
        .collect::<Vec<_>>()
        .join(" ");
        let verified = user.get("emailVerified").and_then(Value::as_bool) == Some(true);
        let now = time::OffsetDateTime::now_utc();
        let id = match adapter.get_user_by_email(&email).await? {
            // A Keycloak account whose address Keycloak never verified is not known to be
            // that address's owner: it gets no password or groups on the user here.
            Some(_) if !verified => {
                skip("its address, not verified in Keycloak, is an existing user's");
                continue;
            }
            Some(existing) => {
                report.matched += 1;
                if verified && existing.email_verified.is_none() {
                    adapter
                        .update_user(UserUpdate {
                            id: existing.id.clone(),
                            email_verified: Some(Some(now)),
                            ..UserUpdate::default()
                        })
                        .await?;
                }
                existing.id
            }
            None => {
                report.created += 1;
                adapter
                    .create_user(NewUser {
                        name: (!name.is_empty()).then_some(name),
                        email: Some(email.clone()),
                        email_verified: verified.then_some(now),
                        image: None,
                    })
                    .await?
                    .id
            }
        };
        if let Some(hash) = hash
            && passwords.get_password_hash(&id).await?.is_none()
        {
            passwords.set_password_hash(&id, &hash).await?;
            report.passwords += 1;
        }
        let groups: Vec<String> = user
            .get("groups")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .filter_map(Value::as_str)
                    .map(|g| g.trim_start_matches('/').to_owned())
                    .filter(|g| !g.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        if !groups.is_empty()
            && let Some(store) = groups_store
        {
            store.set_user_groups(&id, &groups).await?;
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use authcore::adapter::{MemoryAdapter, PasswordStore, UserGroupsStore};
    use authcore::passwords::{PasswordHashing, Verification};
    use serde_json::json;

    /// Keycloak's PBKDF2-SHA256 (27,500 iterations, 64 bytes) of `correct horse battery
    /// staple` with salt `0123456789abcdef`, as `kc.sh export` writes it.
    fn credential() -> Value {
        json!({
            "type": "password",
            "createdDate": 1_700_000_000_000_u64,
            "secretData": json!({
                "value": "DGzF4+RpmttWHV7FCaK41NYsG4Rc9QqDO8q71k0T1ODS+Ooo+SM5Ep4eJNd+eywW2X+UkNdTatqTScXAD7qm+w==",
                "salt": "MDEyMzQ1Njc4OWFiY2RlZg==",
                "additionalParameters": {}
            }).to_string(),
            "credentialData": "{\"hashIterations\":27500,\"algorithm\":\"pbkdf2-sha256\",\"additionalParameters\":{}}"
        })
    }

    fn realm() -> Value {
        json!({
            "realm": "acme",
            "users": [
                { "username": "ada", "email": "Ada@Example.com", "emailVerified": true,
                  "firstName": "Ada", "lastName": "Lovelace", "enabled": true,
                  "credentials": [credential()], "groups": ["/admins", "/staff"] },
                { "username": "bob", "email": "bob@example.com", "enabled": true,
                  "credentials": [] },
                { "username": "gone", "email": "gone@example.com", "enabled": false,
                  "credentials": [credential()] },
                { "username": "service-account-ci", "enabled": true },
                { "username": "odd", "email": "odd@example.com", "enabled": true,
                  "credentials": [{ "type": "password", "secretData": "{}",
                                    "credentialData": "{\"algorithm\":\"argon2\"}" }] }
            ]
        })
    }

    #[tokio::test]
    async fn a_realm_export_becomes_users_who_sign_in_with_their_passwords() {
        let db = MemoryAdapter::new();
        let report = import_realm(&db, &realm()).await.unwrap();
        assert_eq!(
            (report.created, report.matched, report.passwords),
            (2, 0, 1)
        );
        let skipped: Vec<&str> = report.skipped.iter().map(|(u, _)| u.as_str()).collect();
        assert_eq!(skipped, ["gone", "service-account-ci", "odd"]);
        let ada = db
            .get_user_by_email("ada@example.com")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(ada.name.as_deref(), Some("Ada Lovelace"));
        assert!(ada.email_verified.is_some());
        let hash = db.get_password_hash(&ada.id).await.unwrap().unwrap();
        let hashing = PasswordHashing::default();
        assert_eq!(
            hashing.verify(&hash, "correct horse battery staple"),
            Ok(Verification::Match { rehash: true })
        );
        assert_eq!(hashing.verify(&hash, "wrong"), Ok(Verification::Mismatch));
        assert_eq!(
            db.get_user_groups(&ada.id).await.unwrap(),
            ["admins", "staff"]
        );
        let bob = db
            .get_user_by_email("bob@example.com")
            .await
            .unwrap()
            .unwrap();
        assert!(bob.email_verified.is_none());
        assert!(db.get_password_hash(&bob.id).await.unwrap().is_none());
        assert!(
            db.get_user_by_email("gone@example.com")
                .await
                .unwrap()
                .is_none()
        );
    }

    /// Run twice, or over users who have a password here: nothing is overwritten.
    #[tokio::test]
    async fn an_import_never_overwrites_a_password() {
        let db = MemoryAdapter::new();
        let ada = db
            .create_user(NewUser {
                email: Some("ada@example.com".into()),
                ..NewUser::default()
            })
            .await
            .unwrap();
        db.set_password_hash(&ada.id, "$argon2id$kept")
            .await
            .unwrap();
        let report = import_realm(&db, &realm()).await.unwrap();
        assert_eq!(
            (report.created, report.matched, report.passwords),
            (1, 1, 0)
        );
        assert_eq!(
            db.get_password_hash(&ada.id).await.unwrap().as_deref(),
            Some("$argon2id$kept")
        );
        let again = import_realm(&db, &realm()).await.unwrap();
        // Bob's address was never verified in Keycloak: the second run does not match it.
        assert_eq!((again.created, again.matched, again.passwords), (0, 1, 0));
        assert!(again.skipped.iter().any(|(u, _)| u == "bob"));
    }

    /// An unverified Keycloak address that is a user's here takes nothing over: no password,
    /// no groups.
    #[tokio::test]
    async fn an_unverified_address_takes_over_no_account() {
        let db = MemoryAdapter::new();
        let victim = db
            .create_user(NewUser {
                email: Some("victim@example.com".into()),
                ..NewUser::default()
            })
            .await
            .unwrap();
        let realm = json!({ "users": [
            { "username": "mallory", "email": "victim@example.com", "emailVerified": false,
              "enabled": true, "credentials": [credential()], "groups": ["/admins"] }
        ]});
        let report = import_realm(&db, &realm).await.unwrap();
        assert_eq!((report.matched, report.passwords), (0, 0));
        assert_eq!(report.skipped.len(), 1);
        assert!(db.get_password_hash(&victim.id).await.unwrap().is_none());
        assert!(db.get_user_groups(&victim.id).await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn what_is_not_an_export_is_refused() {
        let db = MemoryAdapter::new();
        for bad in [json!({}), json!({"users": "x"}), json!([1, 2])] {
            assert!(matches!(
                import_realm(&db, &bad).await,
                Err(ImportError::Format(_))
            ));
        }
    }
}
