//! What differs between the SQL databases, as data: identifier quotes, placeholders, table
//! names, and who assigns ids. Every statement is written once (in [`Queries`]) with `"`
//! quotes, `?` placeholders and `{…}` fragments, and rendered once per dialect.

use std::sync::OnceLock;

/// Who assigns a row's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ids {
    /// The database (`SERIAL`): an insert returns it.
    Serial,
    /// The adapter: a UUID v4 text, bound as the first value of the insert.
    Uuid,
    /// The table has no id column (the key is another column).
    #[cfg(feature = "mysql")]
    None,
}

/// One SQL dialect and the table layout that goes with it (a `static` of each backend).
#[derive(Debug)]
pub(crate) struct Dialect {
    /// Quotes identifiers: `"` (standard SQL) or `` ` `` (MySQL).
    pub quote: char,
    /// `$1, $2, …` (PostgreSQL) instead of `?`.
    pub numbered_placeholders: bool,
    /// `users`, `accounts`, `sessions`, `verification_token`, `authenticators` as named here.
    pub tables: Tables,
    /// Ids of `users`.
    pub user_ids: Ids,
    /// Ids of `accounts` and `sessions`.
    pub row_ids: Ids,
    /// How an insert that meets an existing key updates it instead (`{upsert}` on the `id`
    /// key, `{upsert access}` on `app_access`'s): `ON CONFLICT ({key}) DO UPDATE SET` or
    /// MySQL's `ON DUPLICATE KEY UPDATE`.
    pub upsert: &'static str,
    /// ` FOR UPDATE` where a read can lock its row (`{for update}`); SQLite locks the whole
    /// database for a writing transaction instead.
    pub for_update: &'static str,
    /// The function that counts a text's characters (`{char_length}`): `LENGTH`, or
    /// MySQL's `CHAR_LENGTH` (its `LENGTH` counts bytes).
    pub char_length: &'static str,
    /// Every statement rendered for this dialect, on first use (`OnceLock::new()`).
    pub queries: OnceLock<Queries>,
}

/// The table names of a dialect's layout.
#[derive(Debug)]
pub(crate) struct Tables {
    pub users: &'static str,
    pub accounts: &'static str,
    pub sessions: &'static str,
    pub verification_tokens: &'static str,
    pub authenticators: &'static str,
    /// The JWT revocation list (authcore's own table).
    pub revocations: &'static str,
    /// TOTP second factors (authcore's own table).
    pub two_factors: &'static str,
    /// Recovery codes (authcore's own table).
    pub recovery_codes: &'static str,
    /// Rate-limit counts and marks (authcore's own table).
    pub rate_limits: &'static str,
    /// Access granted to applications (authcore's own table).
    pub app_access: &'static str,
    /// Sessions signed in by upstream provider sessions (authcore's own table).
    pub upstream_sessions: &'static str,
    /// Password hashes (authcore's own table).
    pub passwords: &'static str,
    /// Groups from user sources (authcore's own table).
    pub user_groups: &'static str,
    /// Organizations (authcore's own table).
    pub organizations: &'static str,
    /// Members of organizations (authcore's own table).
    pub organization_members: &'static str,
    /// Teams of organizations (authcore's own table).
    pub organization_teams: &'static str,
    /// Invitations, to organizations or to sign up (authcore's own table).
    pub invitations: &'static str,
    /// API keys (authcore's own table).
    pub api_keys: &'static str,
    /// Bans of users (authcore's own table).
    pub bans: &'static str,
    /// The audit log (authcore's own table).
    pub audit_log: &'static str,
    /// The OpenID Provider's clients made at run time (authcore's own table).
    pub oidc_clients: &'static str,
}

/// The table names of Auth.js's `@auth/pg-adapter` (also used on SQLite).
#[cfg(any(feature = "postgres", feature = "sqlite"))]
pub(crate) const PG_ADAPTER_TABLES: Tables = Tables {
    users: "users",
    accounts: "accounts",
    sessions: "sessions",
    verification_tokens: "verification_token",
    authenticators: "authenticators",
    revocations: "session_revocations",
    two_factors: "two_factors",
    recovery_codes: "recovery_codes",
    rate_limits: "rate_limits",
    app_access: "app_access",
    upstream_sessions: "upstream_sessions",
    passwords: "user_passwords",
    user_groups: "user_groups",
    organizations: "organizations",
    organization_members: "organization_members",
    organization_teams: "organization_teams",
    invitations: "organization_invitations",
    api_keys: "api_keys",
    bans: "bans",
    audit_log: "audit_log",
    oidc_clients: "oidc_clients",
};

impl Dialect {
    /// Every statement, rendered for this dialect.
    pub fn queries(&'static self) -> &'static Queries {
        self.queries.get_or_init(|| Queries::render(self))
    }

    /// Whether `id` can name a user row: with `SERIAL` ids only the canonical decimal form
    /// of an `INTEGER` ([`serial_id`]); other ids name no row.
    pub fn is_user_id(&self, id: &str) -> bool {
        self.user_ids != Ids::Serial || serial_id(id).is_some()
    }

    /// Renders a statement template: `"` becomes the dialect's quote, each `?` its next
    /// placeholder, and the fragments
    /// - `{users}`, `{accounts}`, `{sessions}`, `{tokens}`, `{authenticators}`,
    ///   `{revocations}`, `{two_factors}`, `{recovery_codes}`, `{rate_limits}`,
    ///   `{app_access}`, `{upstream_sessions}`, `{passwords}`, `{user_groups}`,
    ///   `{organizations}`, `{org_members}`, `{org_teams}`, `{invitations}`, `{api_keys}`,
    ///   `{bans}`, `{audit_log}`, `{oidc_clients}`: table names;
    /// - `{upsert}`, `{upsert access}`, `{for update}`, `{char_length}`: the dialect's
    ///   [`Dialect::upsert`] (on the `id` key, or on `app_access`'s),
    ///   [`Dialect::for_update`] and [`Dialect::char_length`];
    /// - `{user}`, `{account}`, `{session}`, `{authenticator}`, `{organization}`,
    ///   `{member}`, `{team}`, `{invitation}`, `{api_key}`, `{audit_record}`: a row's
    ///   columns, in the order the row readers of [`crate::ops`] expect;
    /// - `{uid,}` / `{u?,}` and `{rid,}` / `{r?,}`: the id column and its value when the
    ///   adapter assigns ids of users, resp. accounts and sessions (else nothing);
    /// - `{returning id}`: ` RETURNING id` when the database assigns user ids.
    ///
    /// Templates contain no string literals but `'!'` (the escape character of `LIKE`
    /// patterns, [`crate::ops::like_pattern`]), so `"` and `?` mean nothing else in them.
    pub fn render(&self, template: &str) -> String {
        let t = &self.tables;
        let q = |name: &str| format!("\"{name}\"");
        let adapter_ids = |ids: Ids, text: &'static str| if ids == Ids::Uuid { text } else { "" };
        let expanded = template
            .replace("{user}", USER_COLUMNS)
            .replace("{account}", ACCOUNT_COLUMNS)
            .replace("{session}", SESSION_COLUMNS)
            .replace("{authenticator}", AUTHENTICATOR_COLUMNS)
            .replace("{organization}", ORGANIZATION_COLUMNS)
            .replace("{member}", MEMBER_COLUMNS)
            .replace("{team}", TEAM_COLUMNS)
            .replace("{invitation}", INVITATION_COLUMNS)
            .replace("{api_key}", API_KEY_COLUMNS)
            .replace("{audit_record}", AUDIT_RECORD_COLUMNS)
            .replace("{users}", &q(t.users))
            .replace("{accounts}", &q(t.accounts))
            .replace("{sessions}", &q(t.sessions))
            .replace("{tokens}", &q(t.verification_tokens))
            .replace("{authenticators}", &q(t.authenticators))
            .replace("{revocations}", &q(t.revocations))
            .replace("{two_factors}", &q(t.two_factors))
            .replace("{recovery_codes}", &q(t.recovery_codes))
            .replace("{rate_limits}", &q(t.rate_limits))
            .replace("{app_access}", &q(t.app_access))
            .replace("{upstream_sessions}", &q(t.upstream_sessions))
            .replace("{passwords}", &q(t.passwords))
            .replace("{user_groups}", &q(t.user_groups))
            .replace("{organizations}", &q(t.organizations))
            .replace("{org_members}", &q(t.organization_members))
            .replace("{org_teams}", &q(t.organization_teams))
            .replace("{invitations}", &q(t.invitations))
            .replace("{api_keys}", &q(t.api_keys))
            .replace("{bans}", &q(t.bans))
            .replace("{audit_log}", &q(t.audit_log))
            .replace("{oidc_clients}", &q(t.oidc_clients))
            .replace("{char_length}", self.char_length)
            .replace("{upsert}", &self.upsert.replace("{key}", "id"))
            .replace(
                "{upsert access}",
                &self.upsert.replace("{key}", r#""userId", "clientId""#),
            )
            .replace("{for update}", self.for_update)
            .replace("{uid,}", adapter_ids(self.user_ids, "id, "))
            .replace("{u?,}", adapter_ids(self.user_ids, "?, "))
            .replace("{rid,}", adapter_ids(self.row_ids, "id, "))
            .replace("{r?,}", adapter_ids(self.row_ids, "?, "))
            .replace(
                "{returning id}",
                if self.user_ids == Ids::Serial {
                    " RETURNING id"
                } else {
                    ""
                },
            );
        debug_assert!(!expanded.contains('{'), "unknown fragment in {template:?}");
        let mut out = String::with_capacity(expanded.len() + 16);
        let mut n = 0;
        for c in expanded.chars() {
            match c {
                '"' => out.push(self.quote),
                '?' if self.numbered_placeholders => {
                    n += 1;
                    out.push('$');
                    out.push_str(&n.to_string());
                }
                c => out.push(c),
            }
        }
        out
    }
}

/// A `SERIAL` id: the decimal form of an `INTEGER`, in its canonical spelling so that one
/// row has one id string.
pub(crate) fn serial_id(id: &str) -> Option<i32> {
    id.parse::<i32>().ok().filter(|n| n.to_string() == id)
}

/// `users` columns of [`crate::ops`]'s user reader (table-qualified: they are also read
/// joined with `sessions` and `accounts`).
const USER_COLUMNS: &str =
    r#"{users}.id, {users}.name, {users}.email, {users}."emailVerified", {users}.image"#;

/// `accounts` columns of the account reader.
const ACCOUNT_COLUMNS: &str = r#""userId", type, provider, "providerAccountId", access_token, expires_at, refresh_token, id_token, scope, session_state, token_type"#;

/// `sessions` columns of the session reader.
const SESSION_COLUMNS: &str =
    r#"{sessions}."sessionToken", {sessions}."userId", {sessions}.expires"#;

/// `authenticators` columns of the authenticator reader.
const AUTHENTICATOR_COLUMNS: &str = r#""credentialID", "userId", "providerAccountId", "credentialPublicKey", counter, "credentialDeviceType", "credentialBackedUp", transports, name"#;

/// `organizations` columns of the organization reader (table-qualified: also read joined
/// with the members).
const ORGANIZATION_COLUMNS: &str = r#"{organizations}.id, {organizations}.slug, {organizations}.name, {organizations}."createdAt""#;

/// Members' columns of the member reader (table-qualified, as the organization's).
const MEMBER_COLUMNS: &str = r#"{org_members}."organizationId", {org_members}."userId", {org_members}.roles, {org_members}.teams, {org_members}."createdAt""#;

/// Teams' columns of the team reader.
const TEAM_COLUMNS: &str = r#"id, "organizationId", name, "createdAt""#;

/// Invitations' columns of the invitation reader.
const INVITATION_COLUMNS: &str = r#"id, "organizationId", email, roles, teams, "inviterId", "tokenHash", "createdAt", expires, status, "acceptedBy", "closedAt""#;

/// API keys' columns of the API key reader.
const API_KEY_COLUMNS: &str = r#"id, hash, name, "userId", "organizationId", permissions, "createdAt", expires, "lastUsedAt", "revokedAt""#;

/// The audit log's columns of the audit record reader.
const AUDIT_RECORD_COLUMNS: &str = r#"seq, "at", kind, actor, target, data, "prevHash", hash"#;

/// The conditions of an audit log query but its cursor. Binds: kind (NULL: any) twice, the
/// kind and its `.` twice, user (NULL: any) three times, since (NULL: any) twice, until
/// (NULL: any) twice. A subkind by its first characters, not `LIKE`: SQLite's ignores case.
macro_rules! audit_conditions {
    () => {
        concat!(
            r#"(? IS NULL OR kind = ? OR SUBSTR(kind, 1, {char_length}(?)) = ?) "#,
            r#"AND (? IS NULL OR actor = ? OR target = ?) "#,
            r#"AND (? IS NULL OR "at" >= ?) AND (? IS NULL OR "at" < ?)"#,
        )
    };
}

/// Declares [`Queries`]: each statement's name and template, written once for every dialect.
macro_rules! queries {
    ($($(#[$doc:meta])* $name:ident = $template:expr;)*) => {
        /// Every statement of the adapter, rendered for one dialect.
        #[derive(Debug)]
        pub(crate) struct Queries {
            $($(#[$doc])* pub $name: String,)*
        }

        impl Queries {
            pub fn render(d: &Dialect) -> Self {
                Queries { $($name: d.render($template),)* }
            }
        }
    };
}

queries! {
    /// Binds: [id,] name, email, emailVerified, image.
    insert_user = r#"INSERT INTO {users} ({uid,}name, email, "emailVerified", image) VALUES ({u?,}?, ?, ?, ?){returning id}"#;
    get_user = "SELECT {user} FROM {users} WHERE {users}.id = ?";
    get_user_by_email = "SELECT {user} FROM {users} WHERE {users}.email = ?";
    get_user_by_account = r#"SELECT {user} FROM {users} JOIN {accounts} ON {users}.id = {accounts}."userId" WHERE {accounts}.provider = ? AND {accounts}."providerAccountId" = ?"#;
    /// One statement: `CASE WHEN <field given> THEN <new value> ELSE <column> END`.
    update_user = concat!(
        "UPDATE {users} SET ",
        "name = CASE WHEN ? THEN ? ELSE name END, ",
        "email = CASE WHEN ? THEN ? ELSE email END, ",
        r#""emailVerified" = CASE WHEN ? THEN ? ELSE "emailVerified" END, "#,
        "image = CASE WHEN ? THEN ? ELSE image END ",
        "WHERE id = ?"
    );
    delete_user_authenticators = r#"DELETE FROM {authenticators} WHERE "userId" = ?"#;
    delete_user_sessions = r#"DELETE FROM {sessions} WHERE "userId" = ?"#;
    delete_user_accounts = r#"DELETE FROM {accounts} WHERE "userId" = ?"#;
    delete_user_tokens = "DELETE FROM {tokens} WHERE identifier IN (SELECT email FROM {users} WHERE id = ?)";
    delete_user_revocation = r#"DELETE FROM {revocations} WHERE "userId" = ?"#;
    delete_user_two_factor = r#"DELETE FROM {two_factors} WHERE "userId" = ?"#;
    delete_user_recovery_codes = r#"DELETE FROM {recovery_codes} WHERE "userId" = ?"#;
    delete_user_password = r#"DELETE FROM {passwords} WHERE "userId" = ?"#;
    delete_user_groups = r#"DELETE FROM {user_groups} WHERE "userId" = ?"#;
    delete_user = "DELETE FROM {users} WHERE id = ?";
    /// Binds: user id. A write that changes nothing: in a transaction it locks the user's
    /// row (on SQLite, the database), so a concurrent `delete_user` waits for it.
    lock_user = "UPDATE {users} SET name = name WHERE id = ?";
    /// Binds: user id.
    user_exists = "SELECT id FROM {users} WHERE id = ?";
    get_password = r#"SELECT "hash" FROM {passwords} WHERE "userId" = ?"#;
    /// Binds: user id, hash, now.
    insert_password = r#"INSERT INTO {passwords} ("userId", "hash", "updatedAt") VALUES (?, ?, ?)"#;
    /// Binds: new hash, now, user id, current hash, current hash. Only while the hash is
    /// still the one read: of concurrent replacements from one hash, one changes the row.
    /// The lengths too: MySQL's `utf8mb4_bin` ignores trailing spaces when it compares.
    replace_password = r#"UPDATE {passwords} SET "hash" = ?, "updatedAt" = ? WHERE "userId" = ? AND "hash" = ? AND LENGTH("hash") = LENGTH(?)"#;
    /// Binds: user id, position, name.
    insert_user_group = r#"INSERT INTO {user_groups} ("userId", "position", "name") VALUES (?, ?, ?)"#;
    get_user_groups = r#"SELECT "name" FROM {user_groups} WHERE "userId" = ? ORDER BY "position""#;
    insert_two_factor = r#"INSERT INTO {two_factors} ("userId", "totpSecret", "totpConfirmedAt") VALUES (?, ?, ?)"#;
    get_two_factor = r#"SELECT "totpSecret", "totpConfirmedAt" FROM {two_factors} WHERE "userId" = ?"#;
    insert_recovery_code = r#"INSERT INTO {recovery_codes} ("userId", "codeHash") VALUES (?, ?)"#;
    use_recovery_code = r#"DELETE FROM {recovery_codes} WHERE "userId" = ? AND "codeHash" = ?"#;
    count_recovery_codes = r#"SELECT COUNT(*) FROM {recovery_codes} WHERE "userId" = ?"#;
    insert_revocation = r#"INSERT INTO {revocations} ("userId", "revokedBefore", "keepSession") VALUES (?, ?, ?)"#;
    get_revocation = r#"SELECT "revokedBefore", "keepSession" FROM {revocations} WHERE "userId" = ?"#;
    link_account = "INSERT INTO {accounts} ({rid,}{account}) VALUES ({r?,}?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    unlink_account = r#"DELETE FROM {accounts} WHERE provider = ? AND "providerAccountId" = ?"#;
    get_account = r#"SELECT {account} FROM {accounts} WHERE provider = ? AND "providerAccountId" = ?"#;
    list_accounts = r#"SELECT {account} FROM {accounts} WHERE "userId" = ?"#;
    update_account = r#"UPDATE {accounts} SET access_token = ?, expires_at = ?, refresh_token = ?, id_token = ?, scope = ?, session_state = ?, token_type = ? WHERE provider = ? AND "providerAccountId" = ?"#;
    insert_session = r#"INSERT INTO {sessions} ({rid,}"sessionToken", "userId", expires) VALUES ({r?,}?, ?, ?)"#;
    get_session = r#"SELECT {session} FROM {sessions} WHERE "sessionToken" = ?"#;
    get_session_and_user = r#"SELECT {session}, {user} FROM {sessions} JOIN {users} ON {users}.id = {sessions}."userId" WHERE {sessions}."sessionToken" = ?"#;
    update_session = r#"UPDATE {sessions} SET expires = ? WHERE "sessionToken" = ?"#;
    delete_session = r#"DELETE FROM {sessions} WHERE "sessionToken" = ?"#;
    list_sessions = r#"SELECT {session}, "createdAt", "lastSeenAt", "userAgent" FROM {sessions} WHERE "userId" = ?"#;
    /// Binds: at (first use), at, user agent (NULL keeps the stored one), token.
    record_session_activity = r#"UPDATE {sessions} SET "createdAt" = COALESCE("createdAt", ?), "lastSeenAt" = ?, "userAgent" = COALESCE(?, "userAgent") WHERE "sessionToken" = ?"#;
    /// Binds: methods (space-separated), time, impersonator, token.
    record_session_sign_in = r#"UPDATE {sessions} SET amr = ?, "authTime" = ?, impersonator = ? WHERE "sessionToken" = ?"#;
    get_session_sign_in = r#"SELECT amr, "authTime", impersonator FROM {sessions} WHERE "sessionToken" = ?"#;
    /// Binds: user id, the token to keep ('' for none: tokens are never empty).
    delete_user_sessions_but = r#"DELETE FROM {sessions} WHERE "userId" = ? AND "sessionToken" <> ?"#;
    delete_stale_tokens = "DELETE FROM {tokens} WHERE expires < ?";
    insert_token = "INSERT INTO {tokens} (identifier, expires, token) VALUES (?, ?, ?)";
    get_token = "SELECT identifier, expires, token FROM {tokens} WHERE identifier = ? AND token = ?";
    delete_token = "DELETE FROM {tokens} WHERE identifier = ? AND token = ?";
    insert_authenticator = "INSERT INTO {authenticators} ({authenticator}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";
    rename_authenticator = r#"UPDATE {authenticators} SET name = ? WHERE "credentialID" = ?"#;
    get_authenticator = r#"SELECT {authenticator} FROM {authenticators} WHERE "credentialID" = ?"#;
    list_authenticators = r#"SELECT {authenticator} FROM {authenticators} WHERE "userId" = ?"#;
    delete_authenticator = r#"DELETE FROM {authenticators} WHERE "credentialID" = ?"#;
    /// Binds: key. Makes the key's row if missing and, in a transaction, locks it.
    lock_rate_limit = r#"INSERT INTO {rate_limits} (id, count, "windowEnds", "lockedUntil", expires) VALUES (?, 0, 0, 0, 0) {upsert} count = {rate_limits}.count"#;
    get_rate_limit = r#"SELECT count, "windowEnds", "lockedUntil" FROM {rate_limits} WHERE id = ?{for update}"#;
    get_rate_limit_unlocked = r#"SELECT count, "windowEnds", "lockedUntil" FROM {rate_limits} WHERE id = ?"#;
    /// Binds: two keys (the same one twice for one). The later of their locks' ends (0 for
    /// none): two lookups by key, where `IN` or `ORDER BY` would make SQLite build a
    /// temporary table.
    get_later_rate_limit_lock = r#"SELECT CASE WHEN a > b THEN a ELSE b END FROM (SELECT COALESCE((SELECT "lockedUntil" FROM {rate_limits} WHERE id = ?), 0) AS a, COALESCE((SELECT "lockedUntil" FROM {rate_limits} WHERE id = ?), 0) AS b) AS locks"#;
    /// Binds: count, window end, lock end, expiry, key.
    set_rate_limit = r#"UPDATE {rate_limits} SET count = ?, "windowEnds" = ?, "lockedUntil" = ?, expires = ? WHERE id = ?"#;
    /// Binds: key. One event given back, never below zero.
    give_back_rate_limit = "UPDATE {rate_limits} SET count = count - 1 WHERE id = ? AND count > 0";
    delete_rate_limit = "DELETE FROM {rate_limits} WHERE id = ?";
    /// Binds: now.
    delete_expired_rate_limits = "DELETE FROM {rate_limits} WHERE expires < ?";
    /// Binds: key, expiry, value, expiry, value.
    put_rate_limit_value = r#"INSERT INTO {rate_limits} (id, count, "windowEnds", "lockedUntil", expires, data) VALUES (?, 0, 0, 0, ?, ?) {upsert} expires = ?, data = ?"#;
    get_rate_limit_value = "SELECT data, expires FROM {rate_limits} WHERE id = ?";
    get_rate_limit_value_locked = "SELECT data, expires FROM {rate_limits} WHERE id = ?{for update}";
    update_authenticator_counter = r#"UPDATE {authenticators} SET counter = ? WHERE "credentialID" = ?"#;
    /// Binds: user id, client id, client name, '' (no scopes), now, now. Makes the row
    /// (revoked-looking, epoch 0) if missing and, in a transaction, locks it.
    lock_app_access = r#"INSERT INTO {app_access} ("userId", "clientId", "clientName", scopes, "createdAt", "updatedAt", epoch) VALUES (?, ?, ?, ?, ?, ?, 0) {upsert access} epoch = {app_access}.epoch"#;
    get_app_access_locked = r#"SELECT "clientName", scopes, "createdAt", "updatedAt", epoch FROM {app_access} WHERE "userId" = ? AND "clientId" = ?{for update}"#;
    get_app_access = r#"SELECT "clientName", scopes, "createdAt", "updatedAt", epoch FROM {app_access} WHERE "userId" = ? AND "clientId" = ?"#;
    /// Binds: client id, user id. The user with their access for the client (`NULL`s when
    /// none).
    get_user_with_app_access = r#"SELECT {user}, {app_access}."clientName", {app_access}.scopes, {app_access}."createdAt", {app_access}."updatedAt", {app_access}.epoch FROM {users} LEFT JOIN {app_access} ON {app_access}."userId" = {users}.id AND {app_access}."clientId" = ? WHERE {users}.id = ?"#;
    /// Binds: two rate-limit keys, client id, user id. The two keys' lock ends (0 for none),
    /// then `get_user_with_app_access`'s columns: a user's access token's revocation marks,
    /// the user and their access in one read.
    get_user_with_app_access_and_locks = r#"SELECT COALESCE((SELECT "lockedUntil" FROM {rate_limits} WHERE id = ?), 0), COALESCE((SELECT "lockedUntil" FROM {rate_limits} WHERE id = ?), 0), {user}, {app_access}."clientName", {app_access}.scopes, {app_access}."createdAt", {app_access}."updatedAt", {app_access}.epoch FROM {users} LEFT JOIN {app_access} ON {app_access}."userId" = {users}.id AND {app_access}."clientId" = ? WHERE {users}.id = ?"#;
    /// Binds: user id, '' (no scopes).
    list_app_access = r#"SELECT "clientId", "clientName", scopes, "createdAt", "updatedAt", epoch FROM {app_access} WHERE "userId" = ? AND scopes <> ?"#;
    /// Binds: client name, scopes, created, updated, user id, client id.
    set_app_access = r#"UPDATE {app_access} SET "clientName" = ?, scopes = ?, "createdAt" = ?, "updatedAt" = ? WHERE "userId" = ? AND "clientId" = ?"#;
    /// Binds: '' (no scopes), now, user id, client id, ''. Only unrevoked access: of two
    /// concurrent revocations one changes the row.
    revoke_app_access = r#"UPDATE {app_access} SET scopes = ?, epoch = epoch + 1, "updatedAt" = ? WHERE "userId" = ? AND "clientId" = ? AND scopes <> ?"#;
    delete_user_app_access = r#"DELETE FROM {app_access} WHERE "userId" = ?"#;
    /// Binds: now.
    delete_expired_upstream_sessions = "DELETE FROM {upstream_sessions} WHERE expires < ?";
    /// Binds: id, provider, sid, user id, session token, expires.
    insert_upstream_session = r#"INSERT INTO {upstream_sessions} (id, provider, sid, "userId", "sessionToken", expires) VALUES (?, ?, ?, ?, ?, ?)"#;
    /// Binds: provider, sid.
    list_upstream_sessions = r#"SELECT id, "userId", "sessionToken", expires FROM {upstream_sessions} WHERE provider = ? AND sid = ?"#;
    delete_upstream_session = "DELETE FROM {upstream_sessions} WHERE id = ?";
    delete_user_upstream_sessions = r#"DELETE FROM {upstream_sessions} WHERE "userId" = ?"#;
    /// Binds: id, slug, name, created.
    insert_organization = r#"INSERT INTO {organizations} (id, slug, name, "createdAt") VALUES (?, ?, ?, ?)"#;
    get_organization = "SELECT {organization} FROM {organizations} WHERE id = ?";
    get_organization_by_slug = "SELECT {organization} FROM {organizations} WHERE slug = ?";
    /// Binds: slug, name, id.
    update_organization = "UPDATE {organizations} SET slug = ?, name = ? WHERE id = ?";
    /// Binds: id. A write that changes nothing: in a transaction it locks the
    /// organization's row (on SQLite, the database), so the changes to its members that
    /// take it are made one after another.
    lock_organization = "UPDATE {organizations} SET name = name WHERE id = ?";
    /// Binds: organization id.
    clear_sessions_organization = r#"UPDATE {sessions} SET "activeOrganizationId" = NULL WHERE "activeOrganizationId" = ?"#;
    delete_organization_api_keys = r#"DELETE FROM {api_keys} WHERE "organizationId" = ?"#;
    delete_organization_invitations = r#"DELETE FROM {invitations} WHERE "organizationId" = ?"#;
    delete_organization_teams = r#"DELETE FROM {org_teams} WHERE "organizationId" = ?"#;
    delete_organization_members = r#"DELETE FROM {org_members} WHERE "organizationId" = ?"#;
    delete_organization = "DELETE FROM {organizations} WHERE id = ?";
    /// Binds: user id.
    list_organizations_of_user = r#"SELECT {organization}, {member} FROM {org_members} JOIN {organizations} ON {organizations}.id = {org_members}."organizationId" WHERE {org_members}."userId" = ?"#;
    /// Binds: organization id, user id, roles, teams, created.
    insert_member = r#"INSERT INTO {org_members} ("organizationId", "userId", roles, teams, "createdAt") VALUES (?, ?, ?, ?, ?)"#;
    get_member = r#"SELECT {member} FROM {org_members} WHERE "organizationId" = ? AND "userId" = ?"#;
    list_members = r#"SELECT {member} FROM {org_members} WHERE "organizationId" = ?"#;
    /// Binds: organization id, user id, a `LIKE` pattern around the owner role. The user's
    /// membership and every one that may hold the owner role (the caller checks), locked.
    get_member_and_owners_locked = r#"SELECT "userId", roles FROM {org_members} WHERE "organizationId" = ? AND ("userId" = ? OR roles LIKE ?){for update}"#;
    /// Binds: roles, organization id, user id.
    set_member_roles = r#"UPDATE {org_members} SET roles = ? WHERE "organizationId" = ? AND "userId" = ?"#;
    /// Binds: teams, organization id, user id.
    set_member_teams = r#"UPDATE {org_members} SET teams = ? WHERE "organizationId" = ? AND "userId" = ?"#;
    delete_member = r#"DELETE FROM {org_members} WHERE "organizationId" = ? AND "userId" = ?"#;
    /// Binds: user id, organization id.
    clear_member_sessions_organization = r#"UPDATE {sessions} SET "activeOrganizationId" = NULL WHERE "userId" = ? AND "activeOrganizationId" = ?"#;
    delete_user_memberships = r#"DELETE FROM {org_members} WHERE "userId" = ?"#;
    /// Binds: organization id, '' (no teams). The members in some team, locked.
    list_members_in_teams_locked = r#"SELECT "userId", teams FROM {org_members} WHERE "organizationId" = ? AND teams <> ?{for update}"#;
    /// Binds: id, organization id, name, created.
    insert_team = "INSERT INTO {org_teams} ({team}) VALUES (?, ?, ?, ?)";
    list_teams = r#"SELECT {team} FROM {org_teams} WHERE "organizationId" = ?"#;
    /// Binds: team id, organization id.
    get_team = r#"SELECT {team} FROM {org_teams} WHERE id = ? AND "organizationId" = ?"#;
    delete_team = r#"DELETE FROM {org_teams} WHERE id = ? AND "organizationId" = ?"#;
    /// Binds: the twelve columns of `{invitation}`.
    insert_invitation = "INSERT INTO {invitations} ({invitation}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    get_invitation = "SELECT {invitation} FROM {invitations} WHERE id = ?";
    get_invitation_locked = "SELECT {invitation} FROM {invitations} WHERE id = ?{for update}";
    get_invitation_by_token = r#"SELECT {invitation} FROM {invitations} WHERE "tokenHash" = ?"#;
    list_invitations = r#"SELECT {invitation} FROM {invitations} WHERE "organizationId" = ?"#;
    list_sign_up_invitations = r#"SELECT {invitation} FROM {invitations} WHERE "organizationId" IS NULL"#;
    /// Binds: email, status.
    list_invitations_for_email = "SELECT {invitation} FROM {invitations} WHERE email = ? AND status = ?";
    /// Binds: user id, invitation id. The user's membership of the invitation's organization.
    get_invitation_member = r#"SELECT "userId" FROM {org_members} WHERE "userId" = ? AND "organizationId" = (SELECT "organizationId" FROM {invitations} WHERE id = ?)"#;
    /// Binds: new status, accepted by (NULL for a revocation), time, id, 'pending'. Only a
    /// pending invitation changes: of concurrent closings one changes the row.
    close_invitation = r#"UPDATE {invitations} SET status = ?, "acceptedBy" = ?, "closedAt" = ? WHERE id = ? AND status = ?"#;
    /// Binds: organization id (NULL for none), session token.
    set_session_organization = r#"UPDATE {sessions} SET "activeOrganizationId" = ? WHERE "sessionToken" = ?"#;
    get_session_organization = r#"SELECT "activeOrganizationId" FROM {sessions} WHERE "sessionToken" = ?"#;
    /// Binds: the ten columns of `{api_key}`.
    insert_api_key = "INSERT INTO {api_keys} ({api_key}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    get_api_key = "SELECT {api_key} FROM {api_keys} WHERE id = ?";
    list_user_api_keys = r#"SELECT {api_key} FROM {api_keys} WHERE "userId" = ? AND "organizationId" IS NULL"#;
    list_organization_api_keys = r#"SELECT {api_key} FROM {api_keys} WHERE "organizationId" = ?"#;
    /// Binds: time, id. Only an unrevoked key: of concurrent revocations one changes it.
    revoke_api_key = r#"UPDATE {api_keys} SET "revokedAt" = ? WHERE id = ? AND "revokedAt" IS NULL"#;
    /// Binds: time, id, time. Only forward.
    record_api_key_use = r#"UPDATE {api_keys} SET "lastUsedAt" = ? WHERE id = ? AND ("lastUsedAt" IS NULL OR "lastUsedAt" < ?)"#;
    delete_user_api_keys = r#"DELETE FROM {api_keys} WHERE "userId" = ?"#;
    /// Binds: a `LIKE` pattern of the text (NULL: any) three times, provider (NULL: any)
    /// twice, organization id (NULL: any) twice, the id to start after (NULL: the first)
    /// twice, limit. Text without regard to case: both sides lowered.
    search_users = concat!(
        "SELECT {user} FROM {users} WHERE ",
        "(? IS NULL OR LOWER({users}.email) LIKE LOWER(?) ESCAPE '!' OR LOWER({users}.name) LIKE LOWER(?) ESCAPE '!') ",
        r#"AND (? IS NULL OR EXISTS (SELECT 1 FROM {accounts} WHERE {accounts}."userId" = {users}.id AND {accounts}.provider = ?)) "#,
        r#"AND (? IS NULL OR EXISTS (SELECT 1 FROM {org_members} WHERE {org_members}."userId" = {users}.id AND {org_members}."organizationId" = ?)) "#,
        "AND (? IS NULL OR {users}.id > ?) ORDER BY {users}.id LIMIT ?"
    );
    get_user_ban = r#"SELECT reason, "createdAt", expires, "bannedBy" FROM {bans} WHERE "userId" = ?"#;
    /// Binds: user id, reason, created, expires, by.
    insert_user_ban = r#"INSERT INTO {bans} ("userId", reason, "createdAt", expires, "bannedBy") VALUES (?, ?, ?, ?, ?)"#;
    delete_user_ban = r#"DELETE FROM {bans} WHERE "userId" = ?"#;
    /// Binds: the eight columns of `{audit_record}`.
    insert_audit_record = "INSERT INTO {audit_log} ({audit_record}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)";
    last_audit_record = "SELECT {audit_record} FROM {audit_log} ORDER BY seq DESC LIMIT 1";
    /// Binds: those of the conditions, the cursor (NULL: from the first) twice, limit.
    query_audit_records = concat!(
        "SELECT {audit_record} FROM {audit_log} WHERE ",
        audit_conditions!(),
        " AND (? IS NULL OR seq > ?) ORDER BY seq LIMIT ?"
    );
    /// Binds: as `query_audit_records`, newest first (the cursor: from the last).
    query_audit_records_desc = concat!(
        "SELECT {audit_record} FROM {audit_log} WHERE ",
        audit_conditions!(),
        " AND (? IS NULL OR seq < ?) ORDER BY seq DESC LIMIT ?"
    );
    /// Binds: the last seq to delete.
    prune_audit_records = "DELETE FROM {audit_log} WHERE seq <= ?";
    /// Binds: clientId, data (the client as JSON).
    insert_oidc_client = r#"INSERT INTO {oidc_clients} ("clientId", data) VALUES (?, ?)"#;
    get_oidc_client = r#"SELECT data FROM {oidc_clients} WHERE "clientId" = ?"#;
    list_oidc_clients = "SELECT data FROM {oidc_clients}";
    /// Binds: data, clientId.
    update_oidc_client = r#"UPDATE {oidc_clients} SET data = ? WHERE "clientId" = ? AND data = ?"#;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(all(feature = "postgres", feature = "mysql"))]
    fn placeholders_quotes_tables_and_ids_follow_the_dialect() {
        let (pg, my) = (&crate::postgres::DIALECT, &crate::mysql::DIALECT);
        let t = r#"INSERT INTO {users} ({uid,}"emailVerified") VALUES ({u?,}?){returning id}"#;
        assert_eq!(
            pg.render(t),
            r#"INSERT INTO "users" ("emailVerified") VALUES ($1) RETURNING id"#
        );
        assert_eq!(
            my.render(t),
            "INSERT INTO `user` (id, `emailVerified`) VALUES (?, ?)"
        );
        let t = "INSERT INTO {sessions} ({rid,}expires) VALUES ({r?,}?)";
        assert_eq!(my.render(t), "INSERT INTO `session` (expires) VALUES (?)");
        // Placeholders are numbered in order on PostgreSQL.
        let q = pg.queries();
        assert!(q.update_user.contains("$8 ELSE image END WHERE id = $9"));
        assert!(q.link_account.ends_with("$10, $11)"));
        // A subkind by its characters: MySQL's LENGTH counts bytes.
        assert!(
            q.query_audit_records
                .contains("SUBSTR(kind, 1, LENGTH($3)) = $4")
        );
        let my_audit = &my.queries().query_audit_records;
        assert!(my_audit.contains("SUBSTR(kind, 1, CHAR_LENGTH(?)) = ?"));
        assert!(my_audit.contains("`at` >= ?"), "{my_audit}");
    }

    /// Every dialect of this build.
    fn dialects() -> Vec<&'static Dialect> {
        vec![
            #[cfg(feature = "sqlite")]
            &crate::sqlite::DIALECT,
            #[cfg(feature = "postgres")]
            &crate::postgres::DIALECT,
            #[cfg(feature = "mysql")]
            &crate::mysql::DIALECT,
        ]
    }

    #[test]
    fn every_statement_renders_without_leftover_fragments() {
        for d in dialects() {
            let q = d.queries();
            for sql in [&q.update_user, &q.get_session_and_user, &q.link_account] {
                assert!(!sql.contains('{') && !sql.contains('}'), "{sql}");
            }
        }
    }

    /// `sql` with PostgreSQL's numbered placeholders as `?`.
    fn unnumbered(sql: &str) -> String {
        let mut out = String::with_capacity(sql.len());
        let mut chars = sql.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '$' {
                out.push(c);
                continue;
            }
            out.push('?');
            while chars.next_if(char::is_ascii_digit).is_some() {}
        }
        out
    }

    #[test]
    fn the_user_read_with_locks_is_the_user_read_after_its_two_lookups() {
        for d in dialects() {
            let q = d.queries();
            let (plain, locks) = (
                unnumbered(&q.get_user_with_app_access),
                unnumbered(&q.get_user_with_app_access_and_locks),
            );
            let join = plain.strip_prefix("SELECT ").unwrap();
            let later = unnumbered(&q.get_later_rate_limit_lock);
            let lookups = later.split_once("(SELECT ").unwrap().1;
            let (a, b) = lookups.split_once(" AS a, ").unwrap();
            let b = b.split_once(" AS b").unwrap().0;
            assert_eq!(locks, format!("SELECT {a}, {b}, {join}"));
        }
    }

    #[test]
    fn only_canonical_integers_are_serial_ids() {
        assert_eq!(serial_id("42"), Some(42));
        assert_eq!(serial_id("0"), Some(0));
        assert_eq!(serial_id("-3"), Some(-3));
        for bad in [
            "",
            "+42",
            "042",
            " 42",
            "4.2",
            "9999999999",
            "0e8400e2-9b1d-41d4-a716-446655440000",
        ] {
            assert_eq!(serial_id(bad), None, "{bad:?}");
        }
    }
}
