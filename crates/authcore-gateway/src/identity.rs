//! Who the user is, as the gateway tells an upstream: the identity read from the session,
//! plain identity headers, and optionally a short-lived signed JWT (JWS, EdDSA or ES256)
//! whose public keys the server publishes as a JWK Set, so an upstream can verify it
//! without the session secret.

use axum::http::{HeaderName, HeaderValue};
use serde::Deserialize;
use serde_json::Value;

use authcore::SignInInfo;
use authcore_keys::SigningKeys;

use crate::rules::{Identity, OrganizationIdentity};

/// The identity of a session JSON (`user.id`, `user.email`, `user.name`,
/// `user.provider`, `user.groups`, as the gateway's callbacks put them there) and how its
/// user signed in, where the session records it.
pub fn identity_of(session: &Value, sign_in: Option<&SignInInfo>) -> Identity {
    let user = session.get("user");
    let text = |k: &str| {
        user.and_then(|u| u.get(k))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let groups = user
        .and_then(|u| u.get("groups"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    Identity {
        id: text("id"),
        email: text("email"),
        name: text("name"),
        provider: text("provider"),
        groups,
        // Read from the store by the forward-auth check, not carried by the session.
        organizations: Vec::new(),
        sign_in: sign_in.cloned(),
    }
}

/// The value of the organizations header: `slug:role+role` per organization, separated by
/// commas (`acme:admin+billing,beta:member`). Slugs and role names are made of lower case
/// letters, digits, `-`, `_` and `.` only, so the separators cannot occur in them; a
/// membership whose names are not of that form (written to the store by something else) is
/// left out rather than written ambiguously.
pub(crate) fn organizations_header(organizations: &[OrganizationIdentity]) -> String {
    use authcore::organizations::{check_role_name, check_slug};
    organizations
        .iter()
        .filter(|o| {
            check_slug(&o.slug).is_ok() && o.roles.iter().all(|r| check_role_name(r).is_ok())
        })
        .map(|o| format!("{}:{}", o.slug, o.roles.join("+")))
        .collect::<Vec<_>>()
        .join(",")
}

/// Names of the identity headers sent to the upstream (`[gateway.headers]`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct HeaderNames {
    /// The user id (default `X-Auth-Request-User`).
    pub user: String,
    /// The email (default `X-Auth-Request-Email`).
    pub email: String,
    /// The display name (default `X-Auth-Request-Name`).
    pub name: String,
    /// Groups or roles, comma-separated (default `X-Auth-Request-Groups`).
    pub groups: String,
    /// The user's organizations and roles in each, `slug:role+role` separated by commas
    /// (default `X-Auth-Request-Organizations`; empty where organizations are off).
    pub organizations: String,
    /// The sign-in provider (default `X-Auth-Request-Provider`).
    pub provider: String,
    /// How the user signed in: RFC 8176 methods, comma-separated, `mfa` among them when two
    /// factors were proven (default `X-Auth-Request-Amr`; empty where not recorded).
    pub amr: String,
    /// When the user signed in, seconds since 1970 (default `X-Auth-Request-Auth-Time`).
    pub auth_time: String,
    /// The administrator (a user id) signed in as the user, for an impersonated session
    /// (default `X-Auth-Request-Impersonator`; empty for the user's own sign-in).
    pub impersonator: String,
    /// The signed identity JWT, when signing keys are configured (default
    /// `X-Auth-Request-Jwt`).
    pub jwt: String,
}

impl Default for HeaderNames {
    fn default() -> Self {
        HeaderNames {
            user: "X-Auth-Request-User".into(),
            email: "X-Auth-Request-Email".into(),
            name: "X-Auth-Request-Name".into(),
            groups: "X-Auth-Request-Groups".into(),
            organizations: "X-Auth-Request-Organizations".into(),
            provider: "X-Auth-Request-Provider".into(),
            amr: "X-Auth-Request-Amr".into(),
            auth_time: "X-Auth-Request-Auth-Time".into(),
            impersonator: "X-Auth-Request-Impersonator".into(),
            jwt: "X-Auth-Request-Jwt".into(),
        }
    }
}

impl HeaderNames {
    /// Checks every name is a valid header name; the error names the bad one.
    pub fn validate(&self) -> Result<(), String> {
        for (key, name) in self.all() {
            HeaderName::try_from(name)
                .map_err(|_| format!("[gateway.headers] {key} = {name:?} is not a header name"))?;
        }
        Ok(())
    }

    fn all(&self) -> [(&'static str, &str); 10] {
        [
            ("user", &self.user),
            ("email", &self.email),
            ("name", &self.name),
            ("groups", &self.groups),
            ("organizations", &self.organizations),
            ("provider", &self.provider),
            ("amr", &self.amr),
            ("auth_time", &self.auth_time),
            ("impersonator", &self.impersonator),
            ("jwt", &self.jwt),
        ]
    }

    /// Every configured name (lower case), for stripping from the client's request.
    pub fn lowercase(&self) -> Vec<String> {
        self.all()
            .iter()
            .map(|(_, n)| n.to_ascii_lowercase())
            .collect()
    }

    /// The identity headers for `who` (`None`: nobody signed in): every one, empty where
    /// there is no value (or the value cannot be a header value), so that a proxy copying
    /// them replaces whatever a client sent (Caddy 2.6 would otherwise pass its placeholder
    /// text on). The JWT header is added separately.
    pub fn headers_for(&self, who: Option<&Identity>) -> Vec<(HeaderName, HeaderValue)> {
        let groups = who.map(|w| w.groups.join(","));
        let organizations = who.map(|w| organizations_header(&w.organizations));
        let sign_in = who.and_then(|w| w.sign_in.as_ref());
        let amr = sign_in.map(|s| s.amr.join(","));
        let auth_time = sign_in.and_then(|s| s.auth_time).map(|t| t.to_string());
        let impersonator = sign_in.and_then(|s| s.impersonator.as_deref());
        [
            (&self.user, who.and_then(|w| w.id.as_deref())),
            (&self.email, who.and_then(|w| w.email.as_deref())),
            (&self.name, who.and_then(|w| w.name.as_deref())),
            (&self.provider, who.and_then(|w| w.provider.as_deref())),
            (&self.groups, groups.as_deref()),
            (&self.organizations, organizations.as_deref()),
            (&self.amr, amr.as_deref()),
            (&self.auth_time, auth_time.as_deref()),
            (&self.impersonator, impersonator),
        ]
        .into_iter()
        .filter_map(|(name, value)| {
            let value = value
                .and_then(|v| HeaderValue::from_bytes(v.as_bytes()).ok())
                .unwrap_or_else(|| HeaderValue::from_static(""));
            Some((HeaderName::try_from(name.as_str()).ok()?, value))
        })
        .collect()
    }
}

/// The signing keys with the identity JWTs made recently, by their claims other than
/// `iat` / `exp`: reused while young (see [`IdentitySigner::sign`]). At most
/// [`MAX_CACHED_JWTS`]; starts over when full.
#[derive(Debug)]
pub(crate) struct IdentitySigner {
    keys: SigningKeys,
    recent: std::sync::Mutex<std::collections::HashMap<String, (i64, String)>>,
}

/// Identity JWTs kept for reuse at most (one per signed-in user and upstream origin).
pub(crate) const MAX_CACHED_JWTS: usize = 4096;

impl IdentitySigner {
    /// A signer with `keys` and no JWT made yet.
    pub(crate) fn new(keys: SigningKeys) -> Self {
        IdentitySigner {
            keys,
            recent: Default::default(),
        }
    }

    /// The signing keys.
    pub(crate) fn keys(&self) -> &SigningKeys {
        &self.keys
    }

    /// A JWT for `who`, valid `ttl_secs` from its `iat`: `iss` the gateway, `aud` the origin
    /// of the upstream (`https://app.example.com`), `sub`, `email`, `name`, `groups`,
    /// `organizations` (`[{"slug", "roles"}]`, where the user is a member of any),
    /// `provider`, `amr` and `auth_time` (where the session records them), `act` (`{"sub":
    /// <administrator>}`, RFC 8693 §4.1, for an impersonated session), `iat`, `exp`, with
    /// the signing key's `kid`.
    ///
    /// Signing costs more than the rest of a forward-auth check (`jsonwebtoken` parses the
    /// PKCS#8 key again for every signature), so a JWT with the same claims made less than a
    /// tenth of `ttl_secs` ago is returned again: every JWT an upstream receives still has at
    /// least 90 % of its lifetime ahead of it.
    pub fn sign(
        &self,
        who: &Identity,
        issuer: &str,
        audience: &str,
        now: i64,
        ttl_secs: i64,
    ) -> Result<String, jsonwebtoken::errors::Error> {
        let identity_claims = IdentityClaims {
            iss: issuer,
            aud: audience,
            sub: who.id.as_deref(),
            email: who.email.as_deref(),
            name: who.name.as_deref(),
            groups: &who.groups,
            organizations: who
                .organizations
                .iter()
                .map(|o| OrganizationClaim {
                    slug: &o.slug,
                    roles: &o.roles,
                })
                .collect(),
            provider: who.provider.as_deref(),
            amr: who.sign_in.as_ref().map(|s| s.amr.as_slice()),
            auth_time: who.sign_in.as_ref().and_then(|s| s.auth_time),
            act: who
                .sign_in
                .as_ref()
                .and_then(|s| s.impersonator.as_deref())
                .map(|sub| ActorClaim { sub }),
        };
        // The claims' JSON is also the cache key. Serialising strings cannot fail; were it to,
        // nothing is cached rather than every identity sharing one empty key.
        let identity = serde_json::to_string(&identity_claims).ok();
        let reuse_for = ttl_secs / 10;
        if let Some(identity) = &identity {
            let recent = self
                .recent
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some((iat, jwt)) = recent.get(identity)
                && (0..reuse_for).contains(&(now - iat))
            {
                return Ok(jwt.clone());
            }
        }
        let claims = SignedClaims {
            identity: identity_claims,
            iat: now,
            exp: now + ttl_secs,
        };
        let jwt = self.keys.sign_claims(None, &claims)?;
        if let Some(identity) = identity
            && reuse_for > 0
        {
            let mut recent = self
                .recent
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if recent.len() >= MAX_CACHED_JWTS {
                recent.clear();
            }
            recent.insert(identity, (now, jwt.clone()));
        }
        Ok(jwt)
    }
}

/// The identity JWT's claims but its times, in the order they are written (`null` for an
/// unknown id, email, name or provider, as the upstreams read them).
#[derive(serde::Serialize)]
struct IdentityClaims<'a> {
    iss: &'a str,
    aud: &'a str,
    sub: Option<&'a str>,
    email: Option<&'a str>,
    name: Option<&'a str>,
    groups: &'a [String],
    /// The user's organizations, where organizations are on and the user is in any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    organizations: Vec<OrganizationClaim<'a>>,
    provider: Option<&'a str>,
    /// How the user signed in (OIDC Core §2), where the session records it.
    #[serde(skip_serializing_if = "Option::is_none")]
    amr: Option<&'a [String]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    auth_time: Option<i64>,
    /// The administrator signed in as the user (RFC 8693 §4.1), for an impersonation.
    #[serde(skip_serializing_if = "Option::is_none")]
    act: Option<ActorClaim<'a>>,
}

/// The actor of an impersonated session in the identity JWT: the administrator's user id.
#[derive(serde::Serialize)]
struct ActorClaim<'a> {
    sub: &'a str,
}

/// One organization in the identity JWT: its slug and the user's roles in it.
#[derive(serde::Serialize)]
struct OrganizationClaim<'a> {
    slug: &'a str,
    roles: &'a [String],
}

/// The identity JWT's claims.
#[derive(serde::Serialize)]
struct SignedClaims<'a> {
    #[serde(flatten)]
    identity: IdentityClaims<'a>,
    iat: i64,
    exp: i64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use serde_json::json;
    use std::path::Path;

    /// A key made with `openssl genpkey -algorithm ed25519` (a test key, nothing signs with
    /// it elsewhere).
    const ED25519: &str = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIDVxnv4w4wgPqJ158P31oPHcIhs3jJ0M3H9yYO2Z5T+g\n-----END PRIVATE KEY-----\n";

    /// P-256 and RSA test keys made with `openssl genpkey` (nothing signs with them elsewhere).
    fn p256_pem() -> Vec<u8> {
        include_bytes!("../testdata/p256.pem").to_vec()
    }

    fn rsa_pem() -> Vec<u8> {
        include_bytes!("../testdata/rsa.pem").to_vec()
    }

    fn who() -> Identity {
        Identity {
            id: Some("u1".into()),
            email: Some("ada@example.com".into()),
            groups: vec!["admins".into()],
            organizations: vec![
                OrganizationIdentity::new(
                    "acme".into(),
                    vec!["admin".into(), "billing".into()],
                    vec!["member:*".into()],
                ),
                OrganizationIdentity::new("beta".into(), vec!["member".into()], vec![]),
            ],
            sign_in: Some(SignInInfo::new(
                vec!["pwd".into(), "otp".into(), "mfa".into()],
                Some(1_699_999_990),
            )),
            ..Identity::default()
        }
    }

    #[test]
    fn identity_jwts_are_reused_for_a_tenth_of_their_lifetime() {
        let p = Path::new("k.pem");
        let keys = IdentitySigner::new(
            SigningKeys::from_pems(&[(p, ED25519.as_bytes().to_vec())]).unwrap(),
        );
        let (iss, aud) = ("https://auth.example.com", "https://app.example.com");
        let t0 = 1_700_000_000;
        let first = keys.sign(&who(), iss, aud, t0, 60).unwrap();
        assert_eq!(keys.sign(&who(), iss, aud, t0 + 5, 60).unwrap(), first);
        // Six seconds is a tenth of 60: a new JWT, with its own iat.
        let later = keys.sign(&who(), iss, aud, t0 + 6, 60).unwrap();
        assert_ne!(later, first);
        let payload = |jwt: &str| -> Value {
            let part = jwt.split('.').nth(1).unwrap();
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
        };
        assert_eq!(payload(&later)["iat"], t0 + 6);
        assert_eq!(payload(&later)["exp"], t0 + 66);
        // Another upstream, another user, a clock that went back, a short lifetime: signed anew.
        assert_ne!(
            keys.sign(&who(), iss, "https://b.example.com", t0 + 7, 60)
                .unwrap(),
            later
        );
        let other = Identity {
            email: Some("other@example.com".into()),
            ..who()
        };
        assert_eq!(
            payload(&keys.sign(&other, iss, aud, t0 + 7, 60).unwrap())["email"],
            "other@example.com"
        );
        assert_eq!(
            payload(&keys.sign(&who(), iss, aud, t0 + 1, 60).unwrap())["iat"],
            t0 + 1
        );
        keys.sign(&who(), iss, aud, t0 + 100, 9).unwrap();
        let short = keys.sign(&who(), iss, aud, t0 + 101, 9).unwrap();
        assert_eq!(payload(&short)["iat"], t0 + 101);
    }

    #[test]
    fn signed_identity_verifies_with_the_published_keys() {
        let p = Path::new("k.pem");
        for pems in [
            vec![(p, ED25519.as_bytes().to_vec()), (p, p256_pem())],
            vec![(p, p256_pem()), (p, ED25519.as_bytes().to_vec())],
            vec![(p, rsa_pem()), (p, ED25519.as_bytes().to_vec())],
        ] {
            let keys = IdentitySigner::new(SigningKeys::from_pems(&pems).unwrap());
            let token = keys
                .sign(
                    &who(),
                    "https://auth.example.com",
                    "https://app.example.com",
                    1_700_000_000,
                    60,
                )
                .unwrap();
            let header = jsonwebtoken::decode_header(&token).unwrap();
            let jwks: jsonwebtoken::jwk::JwkSet =
                serde_json::from_value(keys.keys().jwks()).unwrap();
            assert_eq!(jwks.keys.len(), 2);
            let jwk = jwks.find(header.kid.as_deref().unwrap()).unwrap();
            let mut validation = jsonwebtoken::Validation::new(header.alg);
            validation.set_audience(&["https://app.example.com"]);
            validation.set_issuer(&["https://auth.example.com"]);
            validation.validate_exp = false;
            let data = jsonwebtoken::decode::<Value>(
                &token,
                &jsonwebtoken::DecodingKey::from_jwk(jwk).unwrap(),
                &validation,
            )
            .unwrap();
            assert_eq!(data.claims["sub"], "u1");
            assert_eq!(data.claims["groups"], json!(["admins"]));
            assert_eq!(
                data.claims["organizations"],
                json!([
                    {"slug": "acme", "roles": ["admin", "billing"]},
                    {"slug": "beta", "roles": ["member"]}
                ])
            );
            assert_eq!(data.claims["amr"], json!(["pwd", "otp", "mfa"]));
            assert_eq!(data.claims["auth_time"], 1_699_999_990);
            assert_eq!(data.claims["exp"], 1_700_000_060);
        }
    }

    /// The organizations header: one `slug:roles` per organization; a membership whose
    /// names could pass for separators is left out, never written ambiguously.
    #[test]
    fn organizations_header_cannot_be_misread() {
        let m = |slug: &str, roles: &[&str]| {
            OrganizationIdentity::new(
                slug.into(),
                roles.iter().map(|r| (*r).to_owned()).collect(),
                Vec::new(),
            )
        };
        for (organizations, want) in [
            (vec![], ""),
            (vec![m("acme", &["admin"])], "acme:admin"),
            (
                vec![m("acme", &["admin", "member"]), m("b-2", &["x.y_z"])],
                "acme:admin+member,b-2:x.y_z",
            ),
            (vec![m("acme", &[])], "acme:"),
            // Names the library would refuse, as another writer of the store might leave them.
            (
                vec![m("acme,beta", &["admin"]), m("ok", &["member"])],
                "ok:member",
            ),
            (vec![m("acme", &["admin+owner"])], ""),
            (vec![m("acme", &["member,beta:owner"])], ""),
            (vec![m("acme:owner", &["member"])], ""),
            (vec![m("ACME", &["admin"])], ""),
            (vec![m("acme", &["Admin"])], ""),
        ] {
            assert_eq!(
                organizations_header(&organizations),
                want,
                "{organizations:?}"
            );
        }
    }

    /// A token signed as an algorithm says which key signs it; the JWK Set publishes each.
    #[test]
    fn identity_headers() {
        let names = HeaderNames::default();
        let mut w = who();
        w.name = Some("bad\r\nname".into());
        w.sign_in = None;
        let get = |w: &Identity, n: &str| {
            names
                .headers_for(Some(w))
                .into_iter()
                .find(|(k, _)| k.as_str() == n)
                .map(|(_, v)| v.to_str().unwrap().to_owned())
        };
        assert_eq!(get(&w, "x-auth-request-user").as_deref(), Some("u1"));
        assert_eq!(get(&w, "x-auth-request-groups").as_deref(), Some("admins"));
        assert_eq!(
            get(&w, "x-auth-request-organizations").as_deref(),
            Some("acme:admin+billing,beta:member")
        );
        w.organizations.clear();
        assert_eq!(get(&w, "x-auth-request-organizations").as_deref(), Some(""));
        w.organizations = who().organizations;
        assert_eq!(get(&w, "x-auth-request-name").as_deref(), Some(""));
        assert_eq!(get(&w, "x-auth-request-amr").as_deref(), Some(""));
        w.sign_in = Some(SignInInfo::new(
            vec!["pwd".into(), "otp".into(), "mfa".into()],
            Some(1_700_000_000),
        ));
        assert_eq!(
            get(&w, "x-auth-request-amr").as_deref(),
            Some("pwd,otp,mfa")
        );
        assert_eq!(
            get(&w, "x-auth-request-auth-time").as_deref(),
            Some("1700000000")
        );
        assert_eq!(get(&w, "x-auth-request-impersonator").as_deref(), Some(""));
        w.sign_in = Some(
            SignInInfo::new(vec!["imp".into()], Some(1_700_000_000))
                .with_impersonator(Some("admin-1".into())),
        );
        assert_eq!(get(&w, "x-auth-request-amr").as_deref(), Some("imp"));
        assert_eq!(
            get(&w, "x-auth-request-impersonator").as_deref(),
            Some("admin-1")
        );
        let anonymous = names.headers_for(None);
        assert_eq!(anonymous.len(), 9);
        assert!(anonymous.iter().all(|(_, v)| v.is_empty()));
        assert!(names.validate().is_ok());
        let bad = HeaderNames {
            email: "bad header".into(),
            ..HeaderNames::default()
        };
        assert!(bad.validate().unwrap_err().contains("email"));
        let session =
            json!({"user": {"id": "u1", "email": "a@b.c", "groups": ["g"], "provider": "oidc"}});
        let id = identity_of(&session, None);
        assert_eq!(
            (id.id.as_deref(), id.provider.as_deref()),
            (Some("u1"), Some("oidc"))
        );
        assert_eq!(id.groups, ["g"]);
    }
}
