//! What the provider keeps between requests in the handler's single-use store, and the
//! salts of what it seals: the names of each kind, so that no two purposes share one.

/// The salt of sealed authorization codes (a purpose of its own: no session token or check
/// cookie opens as a code).
pub(crate) const CODE_SALT: &str = "authcore.oidc-provider.code";

/// The salt of sealed refresh tokens.
pub(crate) const REFRESH_SALT: &str = "authcore.oidc-provider.refresh";

/// The salt of opaque access tokens (clients with `access_token_format = "opaque"`).
pub(crate) const ACCESS_TOKEN_SALT: &str = "authcore.oidc-provider.access-token";

/// The salt of the consent page's ticket (the request it answers, for whom).
pub(crate) const CONSENT_SALT: &str = "authcore.oidc-provider.consent";

/// How long the consent page may stay open (seconds).
pub(crate) const CONSENT_TICKET_TTL_SECS: u64 = 600;

/// The salt of the sealed way back of a logout (its post-logout redirect URI and state).
pub(crate) const LOGOUT_SALT: &str = "authcore.oidc-provider.logout";

/// How long the sign-out page may take before the way back is void (seconds).
pub(crate) const LOGOUT_TTL_SECS: u64 = 600;

/// The query parameter the authorization endpoint adds to its own URL when it sends a
/// `prompt=login` request to sign in: a sealed [`LoginMarker`], bound to the request, to a
/// sign-in newer than the one present, and to one use.
pub(crate) const LOGIN_AFTER: &str = "authcore_login_after";

/// The salt of the sealed [`LOGIN_AFTER`] marker.
pub(crate) const LOGIN_AFTER_SALT: &str = "authcore.oidc-provider.login-after";

/// How long the sign-in asked for by `prompt=login` may take (seconds).
pub(crate) const LOGIN_AFTER_TTL_SECS: u64 = 3600;

/// The kind of the single-use marks of [`LOGIN_AFTER`] markers' nonces.
pub(crate) const USED_LOGIN_AFTER: &str = "oidc-provider-login-after";

/// The salt of sealed pushed authorization requests (the `request_uri`s of RFC 9126).
pub(crate) const PAR_SALT: &str = "authcore.oidc-provider.pushed-request";

/// The kind of the single-use marks of pushed requests' `request_uri`s (by their `jti`).
pub(crate) const USED_REQUEST_URI: &str = "oidc-provider-request-uri";

/// The kind of the marks that revoke one access token (by its `jti`).
pub(crate) const REVOKED: &str = "oidc-provider-revoked";

/// The kind of the marks that revoke a grant (by the code's `jti`): its access tokens and
/// refresh tokens.
pub(crate) const REVOKED_GRANT: &str = "oidc-provider-revoked-grant";

/// The kind of the single-use marks of codes.
pub(crate) const USED_CODE: &str = "oidc-provider-code";

/// The kind of the single-use marks of refresh tokens.
pub(crate) const USED_REFRESH: &str = "oidc-provider-refresh";

/// The kind of the marks that say a session (`sid`) signed in to a client.
pub(crate) const SIGNED_IN_SESSION: &str = "oidc-provider-session-client";

/// The kind of the marks that say a user signed in to a client.
pub(crate) const SIGNED_IN_USER: &str = "oidc-provider-user-client";

/// The key of a session's or a user's mark for `client`.
pub(crate) fn client_key(who: &str, client: &str) -> String {
    format!("{who}\n{client}")
}

pub(crate) fn secs(t: i64) -> std::time::Duration {
    std::time::Duration::from_secs(t.unsigned_abs())
}

/// The salt of sealed device codes (RFC 8628 §3.2).
pub(crate) const DEVICE_SALT: &str = "authcore.oidc-provider.device";

/// How long past its expiry a device code still opens, to be answered `expired_token`
/// rather than `invalid_grant` (seconds).
pub(crate) const DEVICE_EXPIRED_GRACE_SECS: u64 = 3600;

/// The salt of the device page's ticket (the authorization it answers, for whom).
pub(crate) const DEVICE_TICKET_SALT: &str = "authcore.oidc-provider.device-ticket";

/// The kind of the values that keep a pending device authorization under its user code.
pub(crate) const DEVICE_REQUEST: &str = "oidc-provider-device-request";

/// The kind of the values that keep the user's decision under a device authorization's id.
pub(crate) const DEVICE_DECISION: &str = "oidc-provider-device-decision";

/// The kind of the single-use marks of user codes (one decision each).
pub(crate) const USED_USER_CODE: &str = "oidc-provider-user-code";

/// The kind of the single-use marks of device codes (redeemed once).
pub(crate) const USED_DEVICE_CODE: &str = "oidc-provider-device-code";

/// The kind of the counts of a device code's polls (`slow_down`).
pub(crate) const DEVICE_POLL: &str = "oidc-provider-device-poll";

/// The kind of the counts of device authorizations started (by client address, and by
/// client).
pub(crate) const DEVICE_START: &str = "oidc-provider-device-start";

/// The kind of the counts of user code lookups (by client address, user, and all).
pub(crate) const DEVICE_LOOKUP: &str = "oidc-provider-device-lookup";
