//! The token endpoint ([`TOKEN_PATH`](crate::TOKEN_PATH)): the `authorization_code`,
//! `refresh_token` and `client_credentials` grants (the device code's is
//! `device_endpoint`'s), and the tokens of a user grant.

use authcore_keys::unix_time;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use base64::Engine as _;

use crate::access::MemberOf;
use crate::client_auth::{ClientForm, authenticated_client};
use crate::clients::{self, GrantType};
use crate::config::CODE_TTL_SECS;
use crate::dpop;
use crate::dpop_binding::confirmation;
use crate::grant::{
    self, AccessTokenClaims, CodeGrant, Grant, IdTokenClaims, OrganizationClaim, RefreshGrant,
    UserClaims,
};
use crate::responses::{
    TokenAnswer, invalid_grant, no_randomness, no_signature, no_store, refused, token_error,
    unavailable,
};
use crate::single_use::{
    ACCESS_TOKEN_SALT, CODE_SALT, REFRESH_SALT, REVOKED_GRANT, SIGNED_IN_SESSION, SIGNED_IN_USER,
    USED_CODE, USED_REFRESH, client_key, secs,
};
use crate::{ProviderState, USERINFO_PATH};

/// 128 random bits, base64url (a code's `jti`, an access token's, a page's script nonce);
/// `None` when the system has no randomness to give.
pub(crate) fn random_token() -> Option<String> {
    let mut bytes = [0u8; 16];
    authcore::random::fill(&mut bytes).ok()?;
    Some(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// The `jti` of an access token of `client`: 128 random bits for a signed one; empty for
/// an opaque one, whose seal writes a `jti` of its own in its place
/// (`JwtCodec::encode_serializable`), the one revocation marks name.
fn access_jti(client: &clients::Client) -> Result<String, Box<Response>> {
    if client.opaque_access_tokens() {
        return Ok(String::new());
    }
    random_token().ok_or_else(no_randomness)
}

/// `POST /oidc/token`.
pub(crate) async fn token(
    State(s): State<ProviderState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    // DPoP (RFC 9449 §5, §8): the proof and its nonce are checked before the client
    // authenticates, which may spend a signed assertion.
    let proof = match s.endpoint_proof(&headers, crate::TOKEN_PATH) {
        Ok(proof) => proof,
        Err(answer) => return *answer,
    };
    let mut form = match authenticated_client(&s, &headers, &body).await {
        Ok(f) => f,
        Err(answer) => return *answer,
    };
    let Some(grant_type) = form.param("grant_type").and_then(GrantType::parse) else {
        return token_error(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            "authorization_code, refresh_token, client_credentials or urn:ietf:params:oauth:grant-type:device_code",
        );
    };
    if !form.client.allows_grant(grant_type) {
        return token_error(
            StatusCode::BAD_REQUEST,
            "unauthorized_client",
            "the client may not use this grant type (its grant_types)",
        );
    }
    // The key the tokens are bound to.
    form.dpop_jkt = match s.token_binding(proof, &form.client).await {
        Ok(jkt) => jkt,
        Err(answer) => return *answer,
    };
    let answer = match grant_type {
        GrantType::AuthorizationCode => s.code_grant(&form).await,
        GrantType::RefreshToken => s.refresh_grant(&form).await,
        GrantType::ClientCredentials => s.client_credentials(&form),
        GrantType::DeviceCode => s.device_grant(&form).await,
    };
    let mut r = answer.unwrap_or_else(|refused| *refused);
    if form.dpop_jkt.is_some() {
        s.offer_nonce(&mut r);
    }
    r.headers_mut()
        .insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    no_store(r)
}

pub(crate) type Answer = Result<Response, Box<Response>>;

/// What the tokens of a user grant say.
pub(crate) struct UserTokens<'a> {
    pub(crate) user: &'a authcore::adapter::AdapterUser,
    /// The user's claims the scopes give.
    pub(crate) claims: &'a UserClaims,
    pub(crate) grant: &'a Grant,
    /// The grant's name.
    pub(crate) grant_id: &'a str,
    /// The access token's scopes (the grant's, or fewer).
    pub(crate) scopes: &'a [String],
    pub(crate) nonce: Option<&'a str>,
    /// The refresh token to seal and hand out with them.
    pub(crate) refresh: Option<RefreshGrant>,
    /// The thumbprint of the key the access token is bound to (RFC 9449 §6).
    pub(crate) jkt: Option<&'a str>,
}

impl ProviderState {
    /// The `authorization_code` grant: the sealed code, its checks and its single use.
    pub(crate) async fn code_grant(&self, form: &ClientForm) -> Answer {
        let client = &*form.client;
        let Some(code) = form.param("code") else {
            return Err(refused(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "code is missing",
            ));
        };
        let grant: CodeGrant = self
            .unseal(code, CODE_SALT)
            .ok_or_else(|| invalid_grant("the code is invalid or expired"))?;
        grant
            .check_redemption(
                client.id(),
                form.param("redirect_uri"),
                form.param("code_verifier"),
            )
            .and_then(|()| grant.check_key(form.dpop_jkt.as_deref()))
            .map_err(invalid_grant)?;
        let window = std::time::Duration::from_secs(CODE_TTL_SECS + 60);
        if !self.first_use(USED_CODE, &grant.jti, window).await? {
            // A replayed code: what its first use gave is revoked too (RFC 9700 §4.5.3.1).
            self.revoke_grant(&grant.jti).await;
            return Err(invalid_grant("the code was used already"));
        }
        self.redeemed_grant_tokens(form, &grant.grant, &grant.jti, grant.nonce.as_deref())
            .await
    }

    /// The tokens of a user grant just redeemed (a code, a device code) under the name
    /// `grant_id`: the grant must still stand and admit its user; a refresh token too with
    /// `offline_access` for a client that may refresh.
    pub(crate) async fn redeemed_grant_tokens(
        &self,
        form: &ClientForm,
        grant: &Grant,
        grant_id: &str,
        nonce: Option<&str>,
    ) -> Answer {
        let client = &*form.client;
        if !self.grant_stands(grant).await? {
            return Err(invalid_grant("the user revoked this client's access"));
        }
        let user = self.user(&grant.sub).await?;
        if !self.admits(client, &user).await? {
            return Err(invalid_grant("the user may not use this client"));
        }
        let claims = self.user_claims(&user, &grant.scopes).await?;
        if client.backchannel_logout_uri().is_some() {
            self.remember_sign_in(client.id(), grant).await;
        }
        let offline = client.allows_grant(GrantType::RefreshToken)
            && grant.scopes.iter().any(|s| s == "offline_access");
        let refresh = match offline {
            true => Some(
                RefreshGrant::first(grant, grant_id, random_token().ok_or_else(no_randomness)?)
                    .bound_to(form.refresh_token_key()),
            ),
            false => None,
        };
        self.user_tokens(
            client,
            UserTokens {
                user: &user,
                claims: &claims,
                grant,
                grant_id,
                scopes: &grant.scopes,
                nonce,
                refresh,
                jkt: form.dpop_jkt.as_deref(),
            },
        )
    }

    /// The `refresh_token` grant (RFC 6749 §6): the sealed refresh token is spent and
    /// replaced; one used twice revokes its grant (RFC 9700 §4.14.2), whoever used it first.
    pub(crate) async fn refresh_grant(&self, form: &ClientForm) -> Answer {
        let client = &*form.client;
        let Some(token) = form.param("refresh_token") else {
            return Err(refused(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "refresh_token is missing",
            ));
        };
        let refresh: RefreshGrant = self
            .unseal(token, REFRESH_SALT)
            .ok_or_else(|| invalid_grant("the refresh token is invalid or expired"))?;
        if refresh.grant.client_id != client.id() {
            return Err(invalid_grant(
                "the refresh token was issued to another client",
            ));
        }
        if !refresh.takes_key(form.dpop_jkt.as_deref()) {
            return Err(invalid_grant(
                "the refresh token is DPoP-bound: a proof of its key is needed",
            ));
        }
        let Some(scopes) = refresh.narrow(form.param("scope")) else {
            return Err(refused(
                StatusCode::BAD_REQUEST,
                "invalid_scope",
                "a scope the grant does not have",
            ));
        };
        match self
            .auth
            .config()
            .single_use()
            .is_marked(REVOKED_GRANT, &refresh.grant_id)
            .await
        {
            Ok(false) => {}
            Ok(true) => return Err(invalid_grant("the grant was revoked")),
            Err(e) => {
                tracing::error!(error = %e, "oidc provider: revocations unreadable");
                return Err(unavailable("the revocations cannot be read"));
            }
        }
        let ttl = secs(self.provider.lifetimes_of(client).refresh_token);
        if !self.first_use(USED_REFRESH, &refresh.jti, ttl).await? {
            tracing::warn!(client = %client.id(), user = %refresh.grant.sub, "oidc provider: a refresh token was used twice; its grant is revoked");
            self.revoke_grant(&refresh.grant_id).await;
            return Err(invalid_grant(
                "the refresh token was used already; its grant is revoked",
            ));
        }
        if !self.grant_stands(&refresh.grant).await? {
            return Err(invalid_grant("the user revoked this client's access"));
        }
        let user = self.user(&refresh.grant.sub).await?;
        if !self.admits(client, &user).await? {
            // Out of the client's allowed users (a group or an organization left, a role
            // taken away): the grant ends, its access tokens with it.
            self.revoke_grant(&refresh.grant_id).await;
            return Err(invalid_grant("the user may no longer use this client"));
        }
        let claims = self.user_claims(&user, &scopes).await?;
        // Bound as the one it replaces (whose key the proof was checked against above), or
        // from now on when a public client first sends a proof (RFC 9449 §5).
        let next = refresh
            .next(random_token().ok_or_else(no_randomness)?)
            .bound_to(form.refresh_token_key());
        self.user_tokens(
            client,
            UserTokens {
                user: &user,
                claims: &claims,
                grant: &refresh.grant,
                grant_id: &refresh.grant_id,
                scopes: &scopes,
                nonce: None,
                refresh: Some(next),
                jkt: form.dpop_jkt.as_deref(),
            },
        )
    }

    /// The `client_credentials` grant (RFC 6749 §4.4): an access token of the client for
    /// itself, with no user, no scope and no refresh token (§4.4.3).
    pub(crate) fn client_credentials(&self, form: &ClientForm) -> Answer {
        if form.param("scope").is_some_and(|s| !s.trim().is_empty()) {
            return Err(refused(
                StatusCode::BAD_REQUEST,
                "invalid_scope",
                "a client's own token has no scope",
            ));
        }
        let p = &self.provider;
        let ttl = p.lifetimes_of(&form.client).access_token;
        let now = unix_time();
        let access = AccessTokenClaims {
            iss: p.issuer.clone(),
            aud: p.url(USERINFO_PATH),
            sub: form.client.id().to_owned(),
            client_id: form.client.id().to_owned(),
            scope: String::new(),
            iat: now,
            exp: now + ttl,
            jti: access_jti(&form.client)?,
            grant: None,
            epoch: 0,
            cnf: confirmation(form.dpop_jkt.as_deref()),
        };
        let access_token = self.access_token(&form.client, &access, ttl)?;
        tracing::info!(client = %form.client.id(), "oidc provider: client token issued");
        // No scope and no refresh token (RFC 6749 §4.4.3).
        Ok(TokenAnswer {
            access_token: &access_token,
            token_type: dpop::token_type(access.cnf.as_ref()),
            expires_in: ttl,
            refresh_token: None,
            scope: None,
            id_token: None,
        }
        .into_response())
    }

    /// The access token of `access` for `client`, valid for `ttl` seconds: a signed JWT
    /// (RFC 9068, `typ` `at+jwt`), or an opaque one for a client that asks for them.
    fn access_token(
        &self,
        client: &clients::Client,
        access: &AccessTokenClaims,
        ttl: i64,
    ) -> Result<String, Box<Response>> {
        if client.opaque_access_tokens() {
            // The seal writes its own `iat`, `exp` (`ttl` on) and `jti` (the id revocation
            // marks name).
            return u64::try_from(ttl)
                .ok()
                .and_then(|ttl| self.seal(access, ACCESS_TOKEN_SALT, ttl))
                .ok_or_else(no_signature);
        }
        self.provider
            .keys
            .sign_claims(Some("at+jwt"), access)
            .map_err(|_| no_signature())
    }

    /// The access token, ID token (with `openid`) and refresh token of a user grant.
    pub(crate) fn user_tokens(&self, client: &clients::Client, t: UserTokens<'_>) -> Answer {
        let p = &self.provider;
        let ttl = p.lifetimes_of(client);
        let now = unix_time();
        let scope = t.scopes.join(" ");
        let access = AccessTokenClaims {
            iss: p.issuer.clone(),
            aud: p.url(USERINFO_PATH),
            sub: t.user.id.clone(),
            client_id: client.id().to_owned(),
            scope: scope.clone(),
            iat: now,
            exp: now + ttl.access_token,
            jti: access_jti(client)?,
            grant: Some(t.grant_id.to_owned()),
            epoch: t.grant.epoch,
            cnf: confirmation(t.jkt),
        };
        let access_token = self.access_token(client, &access, ttl.access_token)?;
        let id_token = if t.scopes.iter().any(|s| s == "openid") {
            let id = IdTokenClaims {
                iss: &p.issuer,
                aud: client.id(),
                user: t.claims,
                iat: now,
                exp: now + ttl.id_token,
                nonce: t.nonce,
                auth_time: t.grant.auth_time,
                amr: &t.grant.amr,
                acr: grant::acr_of(&t.grant.amr),
                sid: t.grant.sid.as_deref(),
            };
            Some(
                p.keys
                    .sign_claims_as(client.id_token_alg(), None, &id)
                    .map_err(|_| no_signature())?,
            )
        } else {
            None
        };
        let refresh_token = t
            .refresh
            .as_ref()
            .map(|r| {
                self.seal(r, REFRESH_SALT, ttl.refresh_token.unsigned_abs())
                    .ok_or_else(no_signature)
            })
            .transpose()?;
        tracing::info!(client = %client.id(), user = %t.user.id, refresh = t.refresh.is_some(), "oidc provider: tokens issued");
        Ok(TokenAnswer {
            access_token: &access_token,
            token_type: dpop::token_type(access.cnf.as_ref()),
            expires_in: ttl.access_token,
            refresh_token: refresh_token.as_deref(),
            scope: Some(&scope),
            id_token: id_token.as_deref(),
        }
        .into_response())
    }

    /// Whether `value` is used for the first time; refused (`temporarily_unavailable`) when
    /// the single-use store cannot say: a replay must not pass while a shared store is down.
    pub(crate) async fn first_use(
        &self,
        kind: &str,
        value: &str,
        ttl: std::time::Duration,
    ) -> Result<bool, Box<Response>> {
        self.auth
            .config()
            .single_use()
            .first_use_checked(kind, value, ttl)
            .await
            .map_err(|e| {
                tracing::error!(error = %e, "oidc provider: the single-use store failed");
                unavailable("the single-use store failed")
            })
    }

    /// The contents of a token this provider sealed with `salt`, unexpired.
    pub(crate) fn unseal<T: serde::de::DeserializeOwned>(
        &self,
        token: &str,
        salt: &str,
    ) -> Option<T> {
        self.auth
            .config()
            .jwt()
            .decode_deserializable(token, salt)
            .ok()
            .flatten()
    }

    /// The user of a grant.
    pub(crate) async fn user(
        &self,
        id: &str,
    ) -> Result<authcore::adapter::AdapterUser, Box<Response>> {
        match self.users.get_user(id).await {
            Ok(Some(u)) => Ok(u),
            Ok(None) => Err(invalid_grant("the user is gone")),
            Err(e) => {
                tracing::error!(error = %e, "oidc provider: user read failed");
                Err(unavailable("the user store failed"))
            }
        }
    }

    /// The claims of `user` that `scopes` give, with the user's groups for `groups` and
    /// memberships for `organizations`.
    pub(crate) async fn user_claims(
        &self,
        user: &authcore::adapter::AdapterUser,
        scopes: &[String],
    ) -> Result<UserClaims, Box<Response>> {
        let mut claims = UserClaims::of(user, scopes);
        let has = |s: &str| scopes.iter().any(|g| g == s);
        if has("groups") {
            let groups = self.groups_of(user).await?;
            // No group configured and none from a user source: no claim.
            if !(groups.is_empty() && self.provider.groups.is_empty()) {
                claims.groups = Some(groups);
            }
        }
        if has("organizations") && self.organizations_on() {
            let memberships = self.memberships_of(&user.id).await?;
            let mut organizations: Vec<OrganizationClaim> = memberships
                .into_iter()
                .map(|m| OrganizationClaim {
                    id: m.organization.id,
                    slug: m.organization.slug,
                    name: m.organization.name,
                    roles: m.roles,
                })
                .collect();
            organizations.sort_by(|a, b| a.slug.cmp(&b.slug));
            claims.organizations = Some(organizations);
        }
        Ok(claims)
    }

    /// Whether the handler has organizations on (the `organizations` scope means something).
    pub(crate) fn organizations_on(&self) -> bool {
        self.auth.config().organization_roles().is_some()
    }

    /// The groups of `user`: the configured groups it is a member of and those its user
    /// source (a users file, a directory) gave at the last sign-in, sorted, each once.
    pub(crate) async fn groups_of(
        &self,
        user: &authcore::adapter::AdapterUser,
    ) -> Result<Vec<String>, Box<Response>> {
        let mut all = match self.users.user_groups() {
            Some(store) => store.get_user_groups(&user.id).await.map_err(|e| {
                tracing::error!(error = %e, "oidc provider: the user's groups are unreadable");
                unavailable("the user store failed")
            })?,
            None => Vec::new(),
        };
        // The configured groups (none configured: none, and no account read).
        let groups = &self.provider.groups;
        let accounts = if groups.names_accounts() {
            let linked = match self.users.linked_accounts() {
                Some(store) => store.list_accounts_by_user_id(&user.id).await,
                None => Err(authcore::adapter::AdapterError::Unsupported(
                    "LinkedAccountStore",
                )),
            };
            linked
                .map_err(|e| {
                    tracing::error!(error = %e, "oidc provider: the user's accounts are unreadable");
                    unavailable("the user store failed")
                })?
                .into_iter()
                .map(|a| (a.provider, a.provider_account_id))
                .collect()
        } else {
            Vec::new()
        };
        all.append(&mut groups.of(user, &accounts));
        all.sort();
        all.dedup();
        Ok(all)
    }

    /// The organizations `user_id` is a member of, with their roles; none when
    /// organizations are off.
    pub(crate) async fn memberships_of(
        &self,
        user_id: &str,
    ) -> Result<Vec<authcore::account::Membership>, Box<Response>> {
        match self.auth.organizations_of(user_id).await {
            Ok(m) => Ok(m),
            Err(authcore::account::AccountError::OrganizationsOff) => Ok(Vec::new()),
            Err(e) => {
                tracing::error!(error = %e, "oidc provider: the user's organizations are unreadable");
                Err(unavailable("the user store failed"))
            }
        }
    }

    /// Whether `user` may use `client` (its `allowed_groups`, `allowed_roles` and
    /// `allowed_organizations`), as of now; a banned user may use none.
    pub(crate) async fn admits(
        &self,
        client: &clients::Client,
        user: &authcore::adapter::AdapterUser,
    ) -> Result<bool, Box<Response>> {
        match self.auth.ban_of(&user.id).await {
            Ok(None) => {}
            Ok(Some(_)) => {
                tracing::warn!(client = %client.id(), user = %user.id, "oidc provider: the user is banned");
                return Ok(false);
            }
            Err(e) => {
                tracing::error!(error = %e, "oidc provider: the user's ban is unreadable");
                return Err(unavailable("the user store failed"));
            }
        }
        let rules = client.allowed_users();
        if !rules.restricts() {
            return Ok(true);
        }
        let groups = match rules.reads_groups() {
            true => self.groups_of(user).await?,
            false => Vec::new(),
        };
        let memberships = match rules.reads_organizations() {
            true => self.memberships_of(&user.id).await?,
            false => Vec::new(),
        };
        let member_of: Vec<MemberOf<'_>> = memberships
            .iter()
            .map(|m| MemberOf {
                slug: &m.organization.slug,
                roles: &m.roles,
            })
            .collect();
        let admitted = rules.admits(&groups, &member_of);
        if !admitted {
            tracing::info!(client = %client.id(), user = %user.id, "oidc provider: the user is none of the client's allowed users");
        }
        Ok(admitted)
    }

    /// Revokes grant `grant`: its access tokens and refresh tokens stop working.
    pub(crate) async fn revoke_grant(&self, grant: &str) {
        let p = &self.provider;
        let ttl = secs(p.longest.refresh_token.max(p.longest.access_token));
        if let Err(e) = self
            .auth
            .config()
            .single_use()
            .mark(REVOKED_GRANT, grant, ttl)
            .await
        {
            tracing::error!(error = %e, "oidc provider: cannot revoke a grant");
        }
    }

    /// Remembers that the user (in the session) of `grant` signed in to `client`, for
    /// back-channel logout.
    pub(crate) async fn remember_sign_in(&self, client: &str, grant: &Grant) {
        // As long as the session may live (it is extended while in use).
        let ttl = self.auth.config().session_max_age();
        let marks = [
            Some((SIGNED_IN_USER, client_key(&grant.sub, client))),
            grant
                .sid
                .as_deref()
                .map(|sid| (SIGNED_IN_SESSION, client_key(sid, client))),
        ];
        for (kind, key) in marks.into_iter().flatten() {
            if let Err(e) = self.auth.config().single_use().mark(kind, &key, ttl).await {
                tracing::error!(error = %e, "oidc provider: cannot remember a client's sign-in for its logout");
            }
        }
    }
}
