//! Discord (`@auth/core/providers/discord`): OAuth 2 with avatar URLs built from the
//! profile.

use serde_json::Value;

use super::{string_field, style};
use crate::error::BoxError;
use crate::providers::OAuthProvider;
use crate::types::{JsonObject, TokenSet, User};

/// Discord, id `discord` (OAuth 2).
///
/// * Authorization `https://discord.com/api/oauth2/authorize` with `scope=identify email`,
///   token `https://discord.com/api/oauth2/token`, userinfo
///   `https://discord.com/api/users/@me`; checks: PKCE.
/// * Profile: `{id, name: global_name ?? username, email, image}` where `image` is
///   `https://cdn.discordapp.com/avatars/<id>/<avatar>.<gif if the hash starts with "a_",
///   else png>`, or without an avatar the default one,
///   `https://cdn.discordapp.com/embed/avatars/<n>.png` with `n = (id >> 22) % 6` for
///   migrated usernames (discriminator `"0"`) and `n = discriminator % 5` otherwise.
///
/// ```
/// use authcore::providers::catalog::discord;
///
/// let p = discord().client_id("1234567890").client_secret("secret");
/// assert_eq!(p.id(), "discord");
/// ```
pub fn discord() -> OAuthProvider {
    OAuthProvider::oauth("discord", "Discord")
        .authorization_url("https://discord.com/api/oauth2/authorize")
        .authorization_param("scope", "identify email")
        .token_url("https://discord.com/api/oauth2/token")
        .userinfo_url("https://discord.com/api/users/@me")
        .profile(profile)
        .style(style("#5865F2", Some("#fff")))
}

/// JavaScript `parseInt(s)` for non-negative decimal numbers: leading digits after
/// whitespace, `None` for `NaN`.
fn parse_int(s: &str) -> Option<u64> {
    let s = s.trim_start();
    let s = s.strip_prefix('+').unwrap_or(s);
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    s[..end].parse().ok()
}

/// The avatar URL (`image_url` in Auth.js).
fn image_url(p: &JsonObject, id: &str) -> Result<String, BoxError> {
    match p.get("avatar") {
        // Auth.js tests `avatar === null`; a missing avatar is treated the same here.
        None | Some(Value::Null) => {
            let snowflake = || -> Result<u64, BoxError> {
                Ok(id
                    .parse::<u64>()
                    .map_err(|_| format!("the Discord user id {id:?} is not a snowflake"))?)
            };
            let n = match p.get("discriminator").and_then(Value::as_str) {
                Some("0") => (snowflake()? >> 22) % 6,
                // Deviation: a discriminator that is not a number (Auth.js: `NaN.png`) gets
                // the new-username default.
                Some(d) => match parse_int(d) {
                    Some(d) => d % 5,
                    None => (snowflake()? >> 22) % 6,
                },
                None => (snowflake()? >> 22) % 6,
            };
            Ok(format!("https://cdn.discordapp.com/embed/avatars/{n}.png"))
        }
        Some(Value::String(hash)) => {
            let format = if hash.starts_with("a_") { "gif" } else { "png" };
            Ok(format!(
                "https://cdn.discordapp.com/avatars/{id}/{hash}.{format}"
            ))
        }
        Some(_) => Err("the Discord avatar hash is not a string".into()),
    }
}

fn profile(p: &JsonObject, _tokens: &TokenSet) -> Result<User, BoxError> {
    let id = string_field(p, "id").ok_or("the Discord profile has no \"id\"")?;
    let image = image_url(p, &id)?;
    Ok(User {
        name: string_field(p, "global_name").or_else(|| string_field(p, "username")),
        email: string_field(p, "email"),
        image: Some(image),
        id: Some(id),
        ..User::default()
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::providers::catalog::test_support::{object, param, tokens};
    use crate::providers::{Checks, ClientAuthMethod};
    use crate::types::ProviderType;

    /// `GET /users/@me` of the Discord docs, with `avatar`, `discriminator` and
    /// `global_name` set per case.
    fn me(avatar: Value, discriminator: &str, global_name: Value) -> JsonObject {
        object(json!({
            "id": "80351110224678912",
            "username": "nelly",
            "discriminator": discriminator,
            "global_name": global_name,
            "avatar": avatar,
            "bot": false,
            "system": false,
            "mfa_enabled": true,
            "banner": "06c16474723fe537c283b8efa61a30c8",
            "accent_color": 16711680,
            "locale": "en-US",
            "verified": true,
            "email": "nelly@discord.com",
            "flags": 64,
            "premium_type": 1,
            "public_flags": 64,
            "avatar_decoration_data": null
        }))
    }

    #[test]
    fn authjs_defaults() {
        let p = discord();
        assert_eq!(
            (p.id.as_str(), p.name.as_str(), p.kind),
            ("discord", "Discord", ProviderType::Oauth)
        );
        assert_eq!(p.issuer, None);
        assert_eq!(
            p.authorization.url.as_deref(),
            Some("https://discord.com/api/oauth2/authorize")
        );
        assert_eq!(param(&p, "scope"), Some("identify email"));
        assert_eq!(
            p.token.url.as_deref(),
            Some("https://discord.com/api/oauth2/token")
        );
        assert_eq!(
            p.userinfo.url.as_deref(),
            Some("https://discord.com/api/users/@me")
        );
        assert_eq!(p.checks, Checks::default());
        assert_eq!(p.client_auth, ClientAuthMethod::ClientSecretBasic);
        assert_eq!(p.style.brand_color.as_deref(), Some("#5865F2"));
        assert_eq!(p.style.text.as_deref(), Some("#fff"));
        assert_eq!(p.missing_endpoint(), None);
    }

    #[test]
    fn profile_with_an_avatar() {
        let p = discord();
        let t = tokens("6qrZcUqja7812RVdnEKjpzOL4CvHBFG");
        let user = p
            .map_profile(
                &me(
                    json!("8342729096ea3675442027381ff50dfe"),
                    "0",
                    json!("Nelly"),
                ),
                &t,
            )
            .unwrap();
        assert_eq!(
            user,
            User {
                id: Some("80351110224678912".into()),
                name: Some("Nelly".into()),
                email: Some("nelly@discord.com".into()),
                image: Some(
                    "https://cdn.discordapp.com/avatars/80351110224678912/8342729096ea3675442027381ff50dfe.png"
                        .into()
                ),
                ..User::default()
            }
        );
        // Animated avatars are GIFs; no global name → username.
        let user = p
            .map_profile(
                &me(
                    json!("a_d5efa99b3eeaa7dd43acca82f5692432"),
                    "1337",
                    Value::Null,
                ),
                &t,
            )
            .unwrap();
        assert_eq!(
            user.image.as_deref(),
            Some(
                "https://cdn.discordapp.com/avatars/80351110224678912/a_d5efa99b3eeaa7dd43acca82f5692432.gif"
            )
        );
        assert_eq!(user.name.as_deref(), Some("nelly"));
    }

    #[test]
    fn default_avatars() {
        let p = discord();
        let t = tokens("x");
        let image = |discriminator: &str| {
            p.map_profile(&me(Value::Null, discriminator, Value::Null), &t)
                .unwrap()
                .image
                .unwrap()
        };
        // Migrated username: (80351110224678912 >> 22) % 6 = 19157197529 % 6 = 5.
        assert_eq!(image("0"), "https://cdn.discordapp.com/embed/avatars/5.png");
        // Legacy discriminator: 1337 % 5 = 2; parseInt("0007") = 7 → 2.
        assert_eq!(
            image("1337"),
            "https://cdn.discordapp.com/embed/avatars/2.png"
        );
        assert_eq!(
            image("0007"),
            "https://cdn.discordapp.com/embed/avatars/2.png"
        );
        assert_eq!(
            image("0005"),
            "https://cdn.discordapp.com/embed/avatars/0.png"
        );
        // A missing avatar key is treated as null.
        let mut profile = me(Value::Null, "0", Value::Null);
        profile.remove("avatar");
        assert_eq!(
            p.map_profile(&profile, &t).unwrap().image.as_deref(),
            Some("https://cdn.discordapp.com/embed/avatars/5.png")
        );
    }

    #[test]
    fn malformed_profiles_are_errors() {
        let p = discord();
        let t = tokens("x");
        let mut bad_id = me(Value::Null, "0", Value::Null);
        bad_id.insert("id".into(), json!("not-a-snowflake"));
        assert!(
            p.map_profile(&bad_id, &t).is_err(),
            "BigInt() throws in Auth.js"
        );
        let mut no_id = me(json!("abc"), "0", Value::Null);
        no_id.remove("id");
        assert!(p.map_profile(&no_id, &t).is_err());
        assert!(p.map_profile(&me(json!(5), "0", Value::Null), &t).is_err());
    }

    #[test]
    fn parse_int_like_javascript() {
        assert_eq!(parse_int("1337"), Some(1337));
        assert_eq!(parse_int(" 42abc"), Some(42));
        assert_eq!(parse_int("+7"), Some(7));
        assert_eq!(parse_int("abc"), None);
        assert_eq!(parse_int(""), None);
    }
}
