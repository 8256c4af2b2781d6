//! Public data types with Auth.js JSON field names.
//!
//! Every type here (de)serialises to the exact JSON shape `@auth/core` uses, so the same
//! JSON crosses the wire both ways (`providerAccountId`, `emailVerified`, `expires_at` …).
//! Unknown fields are kept in `extra` maps where Auth.js allows arbitrary fields.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// A JSON object, as used for arbitrary claims and extra fields.
pub type JsonObject = Map<String, Value>;

/// The type of a provider (`type` in Auth.js).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderType {
    /// OAuth 2 provider.
    Oauth,
    /// OpenID Connect provider.
    Oidc,
    /// Email (magic link) provider.
    Email,
    /// Credentials (username / password or anything else) provider.
    Credentials,
    /// WebAuthn / passkey provider.
    Webauthn,
}

impl ProviderType {
    /// The Auth.js string for this type.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderType::Oauth => "oauth",
            ProviderType::Oidc => "oidc",
            ProviderType::Email => "email",
            ProviderType::Credentials => "credentials",
            ProviderType::Webauthn => "webauthn",
        }
    }
}

impl fmt::Display for ProviderType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A user as returned by providers, `authorize` and adapters (`User` / `AdapterUser`).
///
/// ```
/// let user: authcore::User = serde_json::from_str(
///     r#"{"id":"1","name":"Ada","email":"ada@example.com","role":"admin"}"#).unwrap();
/// assert_eq!(user.extra["role"], "admin");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct User {
    /// Unique id (a string in Auth.js; numbers are converted).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "de_opt_string_or_number"
    )]
    pub id: Option<String>,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Email address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// Avatar URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// When the email was verified (ISO 8601), adapters only.
    #[serde(
        rename = "emailVerified",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub email_verified: Option<Value>,
    /// Any other field.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl User {
    /// A user with just an id.
    pub fn with_id(id: impl Into<String>) -> Self {
        User {
            id: Some(id.into()),
            ..User::default()
        }
    }
    /// Sets the name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
    /// Sets the email.
    pub fn email(mut self, email: impl Into<String>) -> Self {
        self.email = Some(email.into());
        self
    }
    /// Sets the image URL.
    pub fn image(mut self, image: impl Into<String>) -> Self {
        self.image = Some(image.into());
        self
    }
}

fn de_opt_string_or_number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(Value::Bool(b)) => Some(b.to_string()),
        Some(other) => Some(other.to_string()),
    })
}

fn ser_lowercase<S: Serializer>(v: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(t) => s.serialize_str(&t.to_ascii_lowercase()),
        None => s.serialize_none(),
    }
}

fn de_lowercase<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(Option::<String>::deserialize(d)?.map(|t| t.to_ascii_lowercase()))
}

/// OAuth token endpoint response (`TokenSet`), with `expires_at` computed by authcore.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TokenSet {
    /// Access token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_token: Option<String>,
    /// Token type, always lower-cased (`bearer`, `dpop`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "ser_lowercase",
        deserialize_with = "de_lowercase"
    )]
    pub token_type: Option<String>,
    /// OpenID Connect ID token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_token: Option<String>,
    /// Refresh token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// Granted scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// Lifetime in seconds as sent by the provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_in: Option<i64>,
    /// Absolute expiry (seconds since the epoch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<i64>,
    /// RFC 9396 authorization details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_details: Option<Vec<Value>>,
    /// Any other field of the token response.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A linked account (`Account` / `AdapterAccount`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Account {
    /// Owning user id (filled by adapters).
    #[serde(rename = "userId", default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    /// Provider type.
    #[serde(rename = "type")]
    pub kind: ProviderType,
    /// Provider id.
    pub provider: String,
    /// The user's id at the provider.
    #[serde(rename = "providerAccountId")]
    pub provider_account_id: String,
    /// Access token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_token: Option<String>,
    /// Absolute expiry (seconds since the epoch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<i64>,
    /// ID token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_token: Option<String>,
    /// Refresh token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// Granted scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// Token type, lower-cased.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "ser_lowercase",
        deserialize_with = "de_lowercase"
    )]
    pub token_type: Option<String>,
    /// OIDC session state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_state: Option<String>,
    /// RFC 9396 authorization details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_details: Option<Vec<Value>>,
    /// Any other field.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Account {
    /// An account with only the identifying fields set.
    pub fn new(
        kind: ProviderType,
        provider: impl Into<String>,
        provider_account_id: impl Into<String>,
    ) -> Self {
        Account {
            user_id: None,
            kind,
            provider: provider.into(),
            provider_account_id: provider_account_id.into(),
            access_token: None,
            expires_at: None,
            id_token: None,
            refresh_token: None,
            scope: None,
            token_type: None,
            session_state: None,
            authorization_details: None,
            extra: JsonObject::new(),
        }
    }
}

/// A WebAuthn authenticator row (`AdapterAuthenticator`). Ids and keys are standard padded base64.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Authenticator {
    /// Credential id (standard base64 with padding).
    #[serde(rename = "credentialID")]
    pub credential_id: String,
    /// Owning user id.
    #[serde(rename = "userId", default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    /// The account this authenticator belongs to.
    #[serde(rename = "providerAccountId")]
    pub provider_account_id: String,
    /// Signature counter.
    pub counter: u64,
    /// Whether the credential is backed up.
    #[serde(rename = "credentialBackedUp")]
    pub credential_backed_up: bool,
    /// COSE public key (standard base64 with padding).
    #[serde(rename = "credentialPublicKey")]
    pub credential_public_key: String,
    /// Comma-separated transports (`usb,ble,nfc`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transports: Option<String>,
    /// `singleDevice` or `multiDevice`.
    #[serde(rename = "credentialDeviceType")]
    pub credential_device_type: String,
    /// The name the user gave the passkey (beyond Auth.js, whose rows have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// The user part of the default session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionUser {
    /// Name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<Value>,
    /// Email.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<Value>,
    /// Image URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<Value>,
}

/// The default session (Auth.js `Session`): what the `session` callback receives and may
/// extend, the default shape of the JSON `GET <basePath>/session` returns. What a host's
/// session read found is a [`SessionJson`](crate::SessionJson).
///
/// ```
/// let s: authcore::Session = serde_json::from_str(
///     r#"{"user":{"name":"Ada"},"expires":"2030-01-01T00:00:00.000Z"}"#).unwrap();
/// assert_eq!(s.expires, "2030-01-01T00:00:00.000Z");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Session {
    /// The signed-in user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<SessionUser>,
    /// Expiry as an ISO 8601 string with milliseconds (`toISOString`).
    pub expires: String,
    /// Fields added by a `session` callback.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// An OAuth / OIDC profile: the standard claims plus any extra claim.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[allow(missing_docs)]
pub struct Profile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub given_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub middle_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nickname: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_username: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub picture: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email_verified: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gender: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub birthdate: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zoneinfo: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<Value>,
    /// Any non-standard claim.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Milliseconds since 1970 (the `sat` claim of JWT sessions).
pub(crate) fn unix_millis(t: time::OffsetDateTime) -> i64 {
    i64::try_from(t.unix_timestamp_nanos() / 1_000_000).unwrap_or(i64::MAX)
}

/// JavaScript's `Date.prototype.toISOString()`: `2026-01-02T03:04:05.678Z` (UTC, fixed
/// width, so text order is time order). Session bodies and stored timestamps use it.
///
/// ```
/// let t = authcore::time::macros::datetime!(2026-01-02 03:04:05.678 UTC);
/// assert_eq!(authcore::types::iso_string(t), "2026-01-02T03:04:05.678Z");
/// ```
pub fn iso_string(t: time::OffsetDateTime) -> String {
    use crate::cookies::{push_digits, push_year};
    let t = t.to_offset(time::UtcOffset::UTC);
    let mut out = String::with_capacity(24);
    push_year(&mut out, t.year());
    out.push('-');
    push_digits(&mut out, u32::from(u8::from(t.month())), 2);
    out.push('-');
    push_digits(&mut out, u32::from(t.day()), 2);
    out.push('T');
    push_digits(&mut out, u32::from(t.hour()), 2);
    out.push(':');
    push_digits(&mut out, u32::from(t.minute()), 2);
    out.push(':');
    push_digits(&mut out, u32::from(t.second()), 2);
    out.push('.');
    push_digits(&mut out, u32::from(t.millisecond()), 3);
    out.push('Z');
    out
}

impl Profile {
    /// A profile from a provider's claims, keeping every claim: a standard claim whose JSON
    /// type is not the standard one stays in [`Profile::extra`] instead of failing the whole
    /// profile. `email_verified` given as the string `"true"` / `"false"` (Apple, some
    /// Cognito pools) is read as the boolean, and a numeric `sub` (GitHub-style ids) as its
    /// decimal string.
    ///
    /// ```
    /// use authcore::Profile;
    /// let claims = authcore::serde_json::json!({
    ///     "sub": 123, "email": "ada@example.com", "email_verified": "true",
    ///     "picture": {"data": {"url": "https://example.com/a.png"}}, "team": "x"
    /// });
    /// let p = Profile::from_claims(claims.as_object().unwrap().clone());
    /// assert_eq!(p.sub.as_deref(), Some("123"));
    /// assert_eq!(p.email_verified, Some(true));
    /// assert_eq!(p.picture, None);
    /// assert_eq!(p.extra["picture"]["data"]["url"], "https://example.com/a.png");
    /// assert_eq!(p.extra["team"], "x");
    /// // Null standard claims are absent; an unrecognised `email_verified` stays in `extra`.
    /// let claims = authcore::serde_json::json!({"name": null, "address": null, "email_verified": "yes"});
    /// let p = Profile::from_claims(claims.as_object().unwrap().clone());
    /// assert_eq!((p.name, p.address, p.email_verified), (None, None, None));
    /// assert_eq!(p.extra.len(), 1);
    /// assert_eq!(p.extra["email_verified"], "yes");
    /// ```
    pub fn from_claims(claims: JsonObject) -> Profile {
        let mut profile = Profile::default();
        for (name, value) in claims {
            let slot: Option<&mut Option<String>> = match name.as_str() {
                "sub" => Some(&mut profile.sub),
                "name" => Some(&mut profile.name),
                "given_name" => Some(&mut profile.given_name),
                "family_name" => Some(&mut profile.family_name),
                "middle_name" => Some(&mut profile.middle_name),
                "nickname" => Some(&mut profile.nickname),
                "preferred_username" => Some(&mut profile.preferred_username),
                "profile" => Some(&mut profile.profile),
                "picture" => Some(&mut profile.picture),
                "website" => Some(&mut profile.website),
                "email" => Some(&mut profile.email),
                "gender" => Some(&mut profile.gender),
                "birthdate" => Some(&mut profile.birthdate),
                "zoneinfo" => Some(&mut profile.zoneinfo),
                "locale" => Some(&mut profile.locale),
                "phone_number" => Some(&mut profile.phone_number),
                _ => None,
            };
            let value = match (slot, value) {
                (Some(slot), Value::String(v)) => {
                    *slot = Some(v);
                    continue;
                }
                (Some(slot), Value::Number(n)) if name == "sub" => {
                    *slot = Some(n.to_string());
                    continue;
                }
                (Some(_), Value::Null) => continue,
                (_, value) => value,
            };
            match (name.as_str(), value) {
                ("email_verified", Value::Bool(b)) => profile.email_verified = Some(b),
                ("email_verified", Value::String(v)) if v == "true" || v == "false" => {
                    profile.email_verified = Some(v == "true");
                }
                // A null standard claim is an absent one, as for the string claims above.
                ("email_verified" | "updated_at" | "address", Value::Null) => {}
                ("updated_at", v) => profile.updated_at = Some(v),
                ("address", v) => profile.address = Some(v),
                (_, v) => {
                    profile.extra.insert(name, v);
                }
            }
        }
        profile
    }
}

/// A provider as listed by `GET /auth/providers`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublicProvider {
    /// Provider id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Provider type.
    #[serde(rename = "type")]
    pub kind: ProviderType,
    /// `<origin><basePath>/signin/<id>`.
    #[serde(rename = "signinUrl")]
    pub signin_url: String,
    /// `<origin><basePath>/callback/<id>`.
    #[serde(rename = "callbackUrl")]
    pub callback_url: String,
}

/// Custom page paths (`pages`). Each replaces a built-in page.
///
/// Deserialises from Auth.js's camelCase names and from snake_case ones (the server's
/// TOML `[pages]`); an unknown key is an error, so a typo is not silently ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PagesOptions {
    /// Sign-in page (also receives sign-in errors).
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "sign_in")]
    pub sign_in: Option<String>,
    /// Sign-out page.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "sign_out")]
    pub sign_out: Option<String>,
    /// Error page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// "Check your email" page.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "verify_request"
    )]
    pub verify_request: Option<String>,
    /// Page for first sign-ins of new users.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "new_user")]
    pub new_user: Option<String>,
    /// The second step of a sign-in (beyond Auth.js; [`crate::two_factor`]): the host's
    /// page gets `?error=TwoFactorError` after a wrong code and posts `csrfToken` and `code`
    /// to `<basePath>/two-factor`.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "two_factor")]
    pub two_factor: Option<String>,
}

/// Colour scheme of the built-in pages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ColorScheme {
    /// Follow `prefers-color-scheme`.
    #[default]
    Auto,
    /// Always dark.
    Dark,
    /// Always light.
    Light,
}

impl ColorScheme {
    /// The CSS class suffix.
    pub fn as_str(self) -> &'static str {
        match self {
            ColorScheme::Auto => "auto",
            ColorScheme::Dark => "dark",
            ColorScheme::Light => "light",
        }
    }
}

/// Theme of the built-in pages.
///
/// Deserialises from Auth.js's camelCase names and from snake_case ones (the server's
/// TOML `[theme]`); an unknown key is an error, so a typo is not silently ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Theme {
    /// Colour scheme.
    #[serde(default, alias = "color_scheme")]
    pub color_scheme: ColorScheme,
    /// Logo URL.
    #[serde(default)]
    pub logo: String,
    /// Brand colour (CSS).
    #[serde(default, alias = "brand_color")]
    pub brand_color: String,
    /// Button text colour (CSS).
    #[serde(default, alias = "button_text")]
    pub button_text: String,
}

/// Body of `GET /auth/webauthn-options/:provider`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WebAuthnOptionsResponseBody {
    /// `authenticate` or `register`.
    pub action: WebAuthnAction,
    /// The options passed to the browser ceremony.
    pub options: Value,
}

/// WebAuthn ceremony kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WebAuthnAction {
    /// Sign in with an existing passkey.
    Authenticate,
    /// Register a new passkey.
    Register,
}

/// A version string of the form `v1`, `v1.2` or `v1.2.3` (validated).
///
/// ```
/// use authcore::types::SemverString;
/// assert!("v9.0.1".parse::<SemverString>().is_ok());
/// assert!("9.0.1".parse::<SemverString>().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct SemverString(String);

/// Error for an invalid [`SemverString`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid version string {0:?}: expected v<major>[.<minor>[.<patch>]]")]
pub struct InvalidSemver(pub String);

impl FromStr for SemverString {
    type Err = InvalidSemver;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let rest = s
            .strip_prefix('v')
            .ok_or_else(|| InvalidSemver(s.to_owned()))?;
        let parts: Vec<&str> = rest.split('.').collect();
        let ok = (1..=3).contains(&parts.len())
            && parts
                .iter()
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
        if ok {
            Ok(SemverString(s.to_owned()))
        } else {
            Err(InvalidSemver(s.to_owned()))
        }
    }
}

impl<'de> Deserialize<'de> for SemverString {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl SemverString {
    /// The version text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SemverString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// How and when the user of a session signed in (OIDC Core §2 `amr` with RFC 8176 values,
/// and `auth_time`), as sessions record it when second factors are on
/// ([`crate::two_factor`]): JWT sessions in their claims, database sessions through the
/// adapter; not in the session JSON.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct SignInInfo {
    /// The methods: `pwd`, `otp`, `hwk`, `user`, and `mfa` when two factors were proven.
    pub amr: Vec<String>,
    /// When (seconds since 1970).
    pub auth_time: Option<i64>,
    /// The administrator (a user id) who signed in as the user to help them
    /// (impersonation); `None` for the user's own sign-in. JWT sessions carry it as the
    /// actor claim `act` (RFC 8693 §4.1: `{"sub": <administrator>}`).
    pub impersonator: Option<String>,
}

impl SignInInfo {
    /// A sign-in with these methods at `auth_time` (seconds since 1970), as an adapter
    /// reads it back ([`crate::adapter::SessionSignInStore::get_session_sign_in`]).
    pub fn new(amr: Vec<String>, auth_time: Option<i64>) -> Self {
        SignInInfo {
            amr,
            auth_time,
            impersonator: None,
        }
    }

    /// This sign-in, made by the administrator `impersonator` as the user.
    pub fn with_impersonator(mut self, impersonator: Option<String>) -> Self {
        self.impersonator = impersonator;
        self
    }

    /// The sign-in recorded in JWT claims (`amr`, `auth_time`), if any.
    pub(crate) fn from_claims(claims: &serde_json::Map<String, Value>) -> Option<Self> {
        let amr: Vec<String> = claims
            .get("amr")?
            .as_array()?
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect();
        Some(SignInInfo {
            amr,
            auth_time: claims.get("auth_time").and_then(Value::as_i64),
            impersonator: claims
                .get("act")
                .and_then(|act| act.get("sub"))
                .and_then(Value::as_str)
                .map(str::to_owned),
        })
    }

    /// Whether two factors were proven (`mfa` in `amr`).
    pub fn is_two_factor(&self) -> bool {
        self.amr.iter().any(|m| m == "mfa")
    }

    /// Whether the sign-in is at most `max_age` old (`false` when its time is unknown).
    pub fn is_within(&self, max_age: std::time::Duration) -> bool {
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        let max_age = i64::try_from(max_age.as_secs()).unwrap_or(i64::MAX);
        self.auth_time
            .is_some_and(|at| now.saturating_sub(at) <= max_age)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn account_uses_authjs_field_names_and_lowercases_token_type() {
        let a: Account = serde_json::from_value(json!({
            "userId": "u1", "type": "oauth", "provider": "github", "providerAccountId": "42",
            "access_token": "at", "token_type": "Bearer", "expires_at": 1700000000,
            "authorization_details": [{"type": "payment"}], "custom": true
        }))
        .unwrap();
        assert_eq!(a.token_type.as_deref(), Some("bearer"));
        assert_eq!(a.extra["custom"], true);
        let v = serde_json::to_value(&a).unwrap();
        assert_eq!(v["providerAccountId"], "42");
        assert_eq!(v["userId"], "u1");
        assert_eq!(v["type"], "oauth");
        assert_eq!(v["expires_at"], 1700000000);
        assert_eq!(v["authorization_details"][0]["type"], "payment");
    }

    #[test]
    fn token_set_serialises_lowercase_token_type() {
        let t = TokenSet {
            token_type: Some("DPoP".into()),
            ..TokenSet::default()
        };
        assert_eq!(
            serde_json::to_value(&t).unwrap(),
            json!({"token_type": "dpop"})
        );
    }

    #[test]
    fn user_id_numbers_become_strings() {
        let u: User = serde_json::from_value(json!({"id": 7, "emailVerified": null})).unwrap();
        assert_eq!(u.id.as_deref(), Some("7"));
    }

    #[test]
    fn authenticator_and_profile_shapes() {
        let a: Authenticator = serde_json::from_value(json!({
            "credentialID": "AQIDBAU=", "providerAccountId": "AQIDBAU=", "counter": 1,
            "credentialBackedUp": false, "credentialPublicKey": "pQ==",
            "credentialDeviceType": "singleDevice", "transports": "usb,nfc"
        }))
        .unwrap();
        assert_eq!(a.credential_id, "AQIDBAU=");
        let p: Profile =
            serde_json::from_value(json!({"sub": "1", "email_verified": true, "groups": ["a"]}))
                .unwrap();
        assert_eq!(p.email_verified, Some(true));
        assert_eq!(p.extra["groups"][0], "a");
        let pp = PublicProvider {
            id: "c".into(),
            name: "C".into(),
            kind: ProviderType::Credentials,
            signin_url: "s".into(),
            callback_url: "u".into(),
        };
        assert_eq!(
            serde_json::to_string(&pp).unwrap(),
            r#"{"id":"c","name":"C","type":"credentials","signinUrl":"s","callbackUrl":"u"}"#
        );
    }

    #[test]
    fn semver_validation() {
        for ok in ["v1", "v1.2", "v1.2.3", "v10.0.11"] {
            assert!(ok.parse::<SemverString>().is_ok(), "{ok}");
        }
        for bad in ["", "v", "1.2.3", "v1.2.3.4", "v1..2", "v1.x", "v1.2.", "V1"] {
            assert!(bad.parse::<SemverString>().is_err(), "{bad}");
        }
        assert!(serde_json::from_str::<SemverString>("\"v1.2\"").is_ok());
        assert!(serde_json::from_str::<SemverString>("\"1.2\"").is_err());
    }

    #[test]
    fn pages_and_theme_use_camel_case() {
        let p: PagesOptions =
            serde_json::from_value(json!({"signIn": "/login", "verifyRequest": "/v"})).unwrap();
        assert_eq!(p.sign_in.as_deref(), Some("/login"));
        let t: Theme =
            serde_json::from_value(json!({"colorScheme": "dark", "brandColor": "#000"})).unwrap();
        assert_eq!(t.color_scheme, ColorScheme::Dark);
        let w = WebAuthnOptionsResponseBody {
            action: WebAuthnAction::Register,
            options: json!({}),
        };
        assert_eq!(serde_json::to_value(w).unwrap()["action"], "register");
    }
}
