//! Key names (the layout is documented in the crate docs).

use std::sync::Arc;

/// The per-user index keys live in the same namespaces as the records, under this name.
pub(crate) const BY_USER_ID: &str = "by-user-id:";

/// Builds key names under a prefix (upstream's `baseKeyPrefix`).
#[derive(Clone, Debug, Default)]
pub(crate) struct Keys {
    prefix: Arc<str>,
}

impl Keys {
    pub(crate) fn new(prefix: &str) -> Self {
        Keys {
            prefix: prefix.into(),
        }
    }

    pub(crate) fn prefix(&self) -> &str {
        &self.prefix
    }

    /// `user:<id>` → the user as JSON.
    pub(crate) fn user(&self, id: &str) -> String {
        format!("{}user:{id}", self.prefix)
    }

    /// `user:email:` (the Lua scripts append an email).
    pub(crate) fn email_prefix(&self) -> String {
        format!("{}user:email:", self.prefix)
    }

    /// `user:email:<email>` → the user id.
    pub(crate) fn email(&self, email: &str) -> String {
        format!("{}user:email:{email}", self.prefix)
    }

    /// `user:account:<provider>:<providerAccountId>` → the account as JSON.
    pub(crate) fn account(&self, provider: &str, provider_account_id: &str) -> String {
        format!(
            "{}user:account:{provider}:{provider_account_id}",
            self.prefix
        )
    }

    /// `user:account:by-user-id:` (the Lua scripts append a user id).
    pub(crate) fn accounts_by_user_prefix(&self) -> String {
        format!("{}user:account:{BY_USER_ID}", self.prefix)
    }

    /// `user:account:by-user-id:<userId>` → set of account keys.
    pub(crate) fn accounts_by_user(&self, user_id: &str) -> String {
        format!("{}user:account:{BY_USER_ID}{user_id}", self.prefix)
    }

    /// `user:session:<sessionToken>` → the session as JSON (expires with the session).
    pub(crate) fn session(&self, token: &str) -> String {
        format!("{}user:session:{token}", self.prefix)
    }

    /// `user:session:by-user-id:` (the Lua scripts append a user id).
    pub(crate) fn sessions_by_user_prefix(&self) -> String {
        format!("{}user:session:{BY_USER_ID}", self.prefix)
    }

    /// `user:session:by-user-id:<userId>` → set of session keys.
    pub(crate) fn sessions_by_user(&self, user_id: &str) -> String {
        format!("{}user:session:{BY_USER_ID}{user_id}", self.prefix)
    }

    /// `user:token:<identifier>:<token>` → the verification token as JSON (expires with it).
    pub(crate) fn verification_token(&self, identifier: &str, token: &str) -> String {
        format!("{}user:token:{identifier}:{token}", self.prefix)
    }

    /// `user:token-index:` (the Lua scripts append an identifier).
    pub(crate) fn tokens_by_identifier_prefix(&self) -> String {
        format!("{}user:token-index:", self.prefix)
    }

    /// `user:token-index:<identifier>` → set of the identifier's token keys.
    pub(crate) fn tokens_by_identifier(&self, identifier: &str) -> String {
        format!("{}user:token-index:{identifier}", self.prefix)
    }

    /// `user:authenticator:<credentialID>` → the authenticator as JSON.
    pub(crate) fn authenticator(&self, credential_id: &str) -> String {
        format!("{}user:authenticator:{credential_id}", self.prefix)
    }

    /// `user:jwt-revocation:<userId>` → the user's JWT revocation as JSON.
    pub(crate) fn jwt_revocation(&self, user_id: &str) -> String {
        format!("{}user:jwt-revocation:{user_id}", self.prefix)
    }

    /// `user:two-factor:<userId>` → the user's TOTP second factor as JSON.
    pub(crate) fn two_factor(&self, user_id: &str) -> String {
        format!("{}user:two-factor:{user_id}", self.prefix)
    }

    /// `user:password:<userId>` → the user's password hash.
    pub(crate) fn password(&self, user_id: &str) -> String {
        format!("{}user:password:{user_id}", self.prefix)
    }

    /// `user:groups:<userId>` → the user's groups from a user source, as a JSON array.
    pub(crate) fn groups(&self, user_id: &str) -> String {
        format!("{}user:groups:{user_id}", self.prefix)
    }

    /// `user:app-access:<userId>` → the user's access granted to applications, as one JSON
    /// object by client id.
    pub(crate) fn app_access(&self, user_id: &str) -> String {
        format!("{}user:app-access:{user_id}", self.prefix)
    }

    /// `upstream-session:<provider>:<sid>` → list of the sessions the provider's session
    /// `sid` signed in here, as JSON, expiring with the last of them.
    pub(crate) fn upstream_sessions(&self, provider: &str, sid: &str) -> String {
        format!("{}upstream-session:{provider}:{sid}", self.prefix)
    }

    /// `user:ban:<userId>` → the user's ban as JSON (`reason`, `at`, `until`, `by`).
    pub(crate) fn ban(&self, user_id: &str) -> String {
        format!("{}user:ban:{user_id}", self.prefix)
    }

    /// `user-index` → sorted set of every user id, all with score 0 (so ordered by id),
    /// for the directory's search.
    pub(crate) fn user_index(&self) -> String {
        format!("{}user-index", self.prefix)
    }

    /// `user-index:complete` → set once the users written before the index existed were
    /// added to it.
    pub(crate) fn user_index_complete(&self) -> String {
        format!("{}user-index:complete", self.prefix)
    }

    /// `user:*`: the pattern of every user key (and of the keys under `user:`), for the
    /// index's first fill.
    pub(crate) fn user_pattern(&self) -> String {
        let mut pattern = String::with_capacity(self.prefix.len() + 8);
        for c in self.prefix.chars() {
            if matches!(c, '*' | '?' | '[' | ']' | '\\') {
                pattern.push('\\');
            }
            pattern.push(c);
        }
        pattern.push_str("user:*");
        pattern
    }

    /// `audit-log` → sorted set of the audit records as JSON, each scored by its `seq`.
    pub(crate) fn audit_log(&self) -> String {
        format!("{}audit-log", self.prefix)
    }

    /// `oidc-clients` → hash of the OpenID Provider's clients made at run time: client id
    /// → the client as JSON.
    pub(crate) fn oidc_clients(&self) -> String {
        format!("{}oidc-clients", self.prefix)
    }

    /// `user:recovery-codes:<userId>` → set of the hashes of the user's unused recovery
    /// codes.
    pub(crate) fn recovery_codes(&self, user_id: &str) -> String {
        format!("{}user:recovery-codes:{user_id}", self.prefix)
    }

    /// `user:authenticator:by-user-id:<userId>` → set of authenticator keys.
    pub(crate) fn authenticators_by_user(&self, user_id: &str) -> String {
        format!("{}user:authenticator:{BY_USER_ID}{user_id}", self.prefix)
    }

    /// `org:<id>` → the organization as JSON.
    pub(crate) fn organization(&self, id: &str) -> String {
        format!("{}org:{id}", self.prefix)
    }

    /// `org:slug:<slug>` → the organization id (slug uniqueness, claimed with `SET NX`).
    pub(crate) fn organization_slug(&self, slug: &str) -> String {
        format!("{}org:slug:{slug}", self.prefix)
    }

    /// `org:members:<organizationId>` → hash of user id → member JSON.
    pub(crate) fn members(&self, organization_id: &str) -> String {
        format!("{}org:members:{organization_id}", self.prefix)
    }

    /// `org:owners:<organizationId>` → set of the user ids of members with the owner role.
    pub(crate) fn owners(&self, organization_id: &str) -> String {
        format!("{}org:owners:{organization_id}", self.prefix)
    }

    /// `org:by-user-id:<userId>` → set of the ids of the organizations the user is a
    /// member of.
    pub(crate) fn organizations_by_user(&self, user_id: &str) -> String {
        format!("{}org:{BY_USER_ID}{user_id}", self.prefix)
    }

    /// `org:teams:<organizationId>` → hash of team id → team JSON.
    pub(crate) fn teams(&self, organization_id: &str) -> String {
        format!("{}org:teams:{organization_id}", self.prefix)
    }

    /// `org:team-names:<organizationId>` → hash of team name → team id (name uniqueness).
    pub(crate) fn team_names(&self, organization_id: &str) -> String {
        format!("{}org:team-names:{organization_id}", self.prefix)
    }

    /// `org:active:by-user-id:<userId>` → hash of the key of a session of the user → the
    /// session's active organization id.
    pub(crate) fn active_organizations(&self, user_id: &str) -> String {
        format!("{}org:active:{BY_USER_ID}{user_id}", self.prefix)
    }

    /// `invitation:<id>` → the invitation as JSON.
    pub(crate) fn invitation(&self, id: &str) -> String {
        format!("{}invitation:{id}", self.prefix)
    }

    /// `invitation:token:<tokenHash>` → the invitation id.
    pub(crate) fn invitation_token(&self, token_hash: &str) -> String {
        format!("{}invitation:token:{token_hash}", self.prefix)
    }

    /// `invitation:by-org-id:<organizationId>` → set of the keys of the organization's
    /// invitations; `invitation:sign-up:index` for the invitations to sign up only.
    pub(crate) fn invitations_of(&self, organization_id: Option<&str>) -> String {
        match organization_id {
            Some(id) => format!("{}invitation:by-org-id:{id}", self.prefix),
            None => format!("{}invitation:sign-up:index", self.prefix),
        }
    }

    /// `invitation:by-email:<email>` → set of the keys of the address's pending
    /// invitations.
    pub(crate) fn invitations_by_email(&self, email: &str) -> String {
        format!("{}invitation:by-email:{email}", self.prefix)
    }

    /// `api-key:<id>` → the API key as JSON.
    pub(crate) fn api_key(&self, id: &str) -> String {
        format!("{}api-key:{id}", self.prefix)
    }

    /// `api-key:by-user-id:<userId>` → set of the keys of the API keys the user made.
    pub(crate) fn api_keys_by_user(&self, user_id: &str) -> String {
        format!("{}api-key:{BY_USER_ID}{user_id}", self.prefix)
    }

    /// `api-key:by-org-id:<organizationId>` → set of the keys of the organization's API
    /// keys.
    pub(crate) fn api_keys_by_organization(&self, organization_id: &str) -> String {
        format!("{}api-key:by-org-id:{organization_id}", self.prefix)
    }
}

/// Whether `id` could be a user id this adapter assigned. Ids are UUIDs; anything with a
/// `:` would address another namespace (`user:email:…`, `user:session:…`), so it is
/// treated as unknown rather than read.
pub(crate) fn is_user_id(id: &str) -> bool {
    is_record_id(id)
}

/// Whether `id` could be the id of an organization, invitation or API key here: ids are
/// assigned by the caller (UUIDs), and one with a `:` would address an index key
/// (`org:slug:…`, `invitation:token:…`), so it is refused when storing and unknown when
/// reading.
pub(crate) fn is_record_id(id: &str) -> bool {
    !id.is_empty() && !id.contains(':')
}

/// Whether a session token, provider id or credential id would address a per-user index
/// key (`…:by-user-id:<userId>`) instead of a record. Such names are treated as unknown.
pub(crate) fn names_index(name: &str) -> bool {
    name.starts_with(BY_USER_ID) || name == BY_USER_ID.trim_end_matches(':')
}
