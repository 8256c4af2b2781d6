//! The OAuth 2 (`type: "oauth"`) presets of Auth.js besides the ones with a module of
//! their own (Discord, GitHub, GitLab): each function is `@auth/core/providers/<id>` with
//! the same endpoints, parameters, checks, client authentication, requests and profile
//! mapping. Profile mappings are written as `fields()` specs (JSON paths with `??`
//! fallbacks and joined name parts). Where a preset differs from Auth.js, its doc says so
//! and [`CatalogEntry::deviations`](super::CatalogEntry::deviations) repeats it.
//!
//! ```
//! use authcore::providers::catalog;
//!
//! let spotify = catalog::spotify().client_id("id").client_secret("secret");
//! let netsuite = catalog::netsuite("1234567", "https://1234567.restlets.api.netsuite.com/app/site/hosting/restlet.nl?script=1&deploy=1");
//! let mastodon = catalog::mastodon("https://mastodon.social");
//! # let _ = (spotify, netsuite, mastodon);
//! ```

use std::sync::Arc;

use bytes::Bytes;
use http::Method;
use serde_json::{Value, json};

use super::request::{api, object_at, send_json, with_query};
use super::{field, fields, string_field, style};
use crate::providers::{
    Checks, ClientAuthMethod, ClientValue, OAuthProvider, TokenRequestParams, UserinfoContext,
};
use crate::types::{JsonObject, TokenSet, User};

/// Checks `["state"]`.
pub(crate) fn state_only() -> Checks {
    Checks {
        pkce: false,
        state: true,
        nonce: false,
    }
}

/// Checks `["pkce", "state"]`.
pub(crate) fn pkce_and_state() -> Checks {
    Checks {
        pkce: true,
        state: true,
        nonce: false,
    }
}

/// An OAuth 2 preset with its three endpoints.
fn oauth2(id: &str, name: &str, authorization: &str, token: &str, userinfo: &str) -> OAuthProvider {
    OAuthProvider::oauth(id, name)
        .authorization_url(authorization)
        .token_url(token)
        .userinfo_url(userinfo)
}

/// `issuer` without a trailing `/` (presets append paths to it).
fn base(issuer: &str) -> &str {
    issuer.trim_end_matches('/')
}

/// 42 School, id `42-school`: `scope=public`; profile `{id, usual_full_name, email,
/// image.link}`.
pub fn forty_two_school() -> OAuthProvider {
    oauth2(
        "42-school",
        "42 School",
        "https://api.intra.42.fr/oauth/authorize",
        "https://api.intra.42.fr/oauth/token",
        "https://api.intra.42.fr/v2/me",
    )
    .authorization_param("scope", "public")
    .profile(fields("id", "usual_full_name", "email", "image.link"))
}

/// Atlassian, id `atlassian`: `audience=api.atlassian.com`, `scope=read:me`, checks
/// `state`; profile `{account_id, name, email, picture}`.
pub fn atlassian() -> OAuthProvider {
    oauth2(
        "atlassian",
        "Atlassian",
        "https://auth.atlassian.com/authorize",
        "https://auth.atlassian.com/oauth/token",
        "https://api.atlassian.com/me",
    )
    .authorization_param("audience", "api.atlassian.com")
    .authorization_param("scope", "read:me")
    .checks(state_only())
    .profile(fields("account_id", "name", "email", "picture"))
    .style(style("#fff", Some("#0052cc")))
}

/// Azure DevOps, id `azure-devops`: `response_type=Assertion`, `scope` (default
/// `vso.profile`); the token request is Azure DevOps's JWT-bearer exchange (the client
/// secret as `client_assertion`, the code as `assertion`) sent to
/// `https://app.vssps.visualstudio.com/oauth2/token`; profile `{id, displayName,
/// emailAddress, image: data URL of coreAttributes.Avatar}`.
///
/// Deviation: Auth.js posts the exchange to the *authorize* URL (its constant is misnamed),
/// which Azure DevOps does not answer with tokens; authcore uses the token endpoint.
pub fn azure_devops(scope: Option<&str>) -> OAuthProvider {
    const TOKEN: &str = "https://app.vssps.visualstudio.com/oauth2/token";
    oauth2(
        "azure-devops",
        "Azure DevOps",
        "https://app.vssps.visualstudio.com/oauth2/authorize",
        TOKEN,
        "https://app.vssps.visualstudio.com/_apis/profile/profiles/me?details=true&coreAttributes=Avatar&api-version=6.0",
    )
    .authorization_param("response_type", "Assertion")
    .authorization_param("scope", scope.unwrap_or("vso.profile"))
    // Azure DevOps calls its access tokens `jwt-bearer`; they are used as bearer tokens.
    .conform(|status, mut body| {
        if let Some(t) = body.get_mut("token_type")
            && t.as_str().is_some_and(|t| t.eq_ignore_ascii_case("jwt-bearer"))
        {
            *t = Value::from("bearer");
        }
        (status, body)
    })
    .token_request(|p: TokenRequestParams, http| async move {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .append_pair(
                "client_assertion_type",
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            )
            .append_pair("client_assertion", p.client_secret.as_deref().unwrap_or_default())
            .append_pair("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer")
            .append_pair("assertion", &p.code)
            .append_pair("redirect_uri", &p.redirect_uri)
            .finish();
        let url = p.token_endpoint.as_deref().unwrap_or(TOKEN);
        let req = api(Method::POST, url, None)
            .header(http::header::CONTENT_TYPE, "application/x-www-form-urlencoded");
        let res = http.send(req.body(Bytes::from(body))?).await?;
        let json = serde_json::from_slice(res.body()).unwrap_or(Value::Null);
        Ok((res.status().as_u16(), json))
    })
    .profile(|p: &JsonObject, _: &TokenSet| {
        let base = fields("id", "displayName", "emailAddress", "")(p, &TokenSet::default())?;
        let avatar = field(p, "coreAttributes.Avatar.value.value");
        Ok(User {
            image: avatar.map(|b64| format!("data:image/jpeg;base64,{b64}")),
            ..base
        })
    })
}

/// Bitbucket, id `bitbucket`: `scope=account`; profile `{account_id, display_name ??
/// username, image: links.avatar.href}` (no email, as in Auth.js).
pub fn bitbucket() -> OAuthProvider {
    oauth2(
        "bitbucket",
        "Bitbucket",
        "https://bitbucket.org/site/oauth2/authorize",
        "https://bitbucket.org/site/oauth2/access_token",
        "https://api.bitbucket.org/2.0/user",
    )
    .authorization_param("scope", "account")
    .profile(fields(
        "account_id",
        "display_name | username",
        "",
        "links.avatar.href",
    ))
    .style(style("#205081", Some("#fff")))
}

/// Box, id `box`: profile `{id, name, email: login, image: avatar_url}`.
pub fn box_com() -> OAuthProvider {
    oauth2(
        "box",
        "Box",
        "https://account.box.com/api/oauth2/authorize",
        "https://api.box.com/oauth2/token",
        "https://api.box.com/2.0/users/me",
    )
    .profile(fields("id", "name", "login", "avatar_url"))
    .style(style("#0075C9", Some("#fff")))
    // Box's `scope` can only narrow the application's own Box scopes
    // (https://developer.box.com/guides/api-calls/permissions-and-errors/scopes/):
    // Auth.js's `openid profile email` are none of them.
    .default_scope(false)
}

/// BoxyHQ SAML (SAML Jackson), id `boxyhq-saml`: endpoints under `issuer` (your Jackson
/// deployment), `provider=saml`; profile `{id, firstName + lastName, email}`.
pub fn boxyhq_saml(issuer: &str) -> OAuthProvider {
    let b = base(issuer);
    oauth2(
        "boxyhq-saml",
        "BoxyHQ SAML",
        &format!("{b}/api/oauth/authorize"),
        &format!("{b}/api/oauth/token"),
        &format!("{b}/api/oauth/userinfo"),
    )
    .authorization_param("provider", "saml")
    .profile(fields("id", "firstName + lastName", "email", ""))
    .style(style("#25c2a0", None))
}

/// Bungie, id `bungie`: `reauth=true`; the user is
/// `GET /platform/User/GetBungieAccount/<membership_id>/254/` with the application's API
/// key in `X-API-Key` (Bungie refuses requests without it) and `membership_id` from the
/// token response; profile `{Response.bungieNetUser.membershipId, displayName, image:
/// https://www.bungie.net + profilePicturePath}`.
///
/// Deviation: Auth.js leaves `{membershipId}` in the URL unreplaced and sends no API key,
/// so its preset cannot fetch the user without overrides.
pub fn bungie(api_key: impl Into<String>) -> OAuthProvider {
    let api_key: Arc<str> = api_key.into().into();
    oauth2(
        "bungie",
        "Bungie",
        "https://www.bungie.net/en/OAuth/Authorize?reauth=true",
        "https://www.bungie.net/platform/app/oauth/token/",
        "https://www.bungie.net/platform/User/GetBungieAccount/{membershipId}/254/",
    )
    .userinfo_request(move |cx: UserinfoContext| {
        let api_key = Arc::clone(&api_key);
        async move {
            let membership = string_field(&cx.tokens.extra, "membership_id")
                .ok_or("the Bungie token response has no membership_id")?;
            let url = format!(
                "https://www.bungie.net/platform/User/GetBungieAccount/{}/254/",
                urlencoding_path(&membership)
            );
            let req = api(Method::GET, &url, Some(cx.access_token()))
                .header("X-API-Key", api_key.as_ref());
            let answer = send_json(
                cx.http.as_ref(),
                req,
                Bytes::new(),
                "Bungie GetBungieAccount",
            )
            .await?;
            object_at(answer, "", "Bungie GetBungieAccount")
        }
    })
    .profile(|p: &JsonObject, t: &TokenSet| {
        let user = fields(
            "Response.bungieNetUser.membershipId",
            "Response.bungieNetUser.displayName",
            "",
            "",
        )(p, t)?;
        let image = field(p, "Response.bungieNetUser.profilePicturePath").map(|path| {
            let slash = if path.starts_with('/') { "" } else { "/" };
            format!("https://www.bungie.net{slash}{path}")
        });
        Ok(User { image, ..user })
    })
}

/// A path segment with everything but unreserved characters percent-encoded.
fn urlencoding_path(segment: &str) -> String {
    url::form_urlencoded::byte_serialize(segment.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}

/// ClickUp, id `click-up`: checks `state`; profile `{user.id, user.username, user.email,
/// user.profilePicture}`.
///
/// Deviation: Auth.js returns `profilePicture` and `color` instead of `email` and `image`,
/// so its users have neither; authcore maps them to `email` and `image`.
pub fn click_up() -> OAuthProvider {
    oauth2(
        "click-up",
        "ClickUp",
        "https://app.clickup.com/api",
        "https://api.clickup.com/api/v2/oauth/token",
        "https://api.clickup.com/api/v2/user",
    )
    .checks(state_only())
    .profile(fields(
        "user.id",
        "user.username",
        "user.email",
        "user.profilePicture",
    ))
    .style(style("#24292f", Some("#fff")))
}

/// Coinbase, id `coinbase`: `scope=wallet:user:email wallet:user:read`; profile
/// `{data.id, data.name, data.email, data.avatar_url}`.
pub fn coinbase() -> OAuthProvider {
    oauth2(
        "coinbase",
        "Coinbase",
        "https://login.coinbase.com/oauth2/auth?scope=wallet:user:email+wallet:user:read",
        "https://login.coinbase.com/oauth2/token",
        "https://api.coinbase.com/v2/user",
    )
    .profile(fields(
        "data.id",
        "data.name",
        "data.email",
        "data.avatar_url",
    ))
    .style(style("#0052ff", None))
}

/// Concept2, id `concept2`: `scope=user:read,results:write`; profile `{data.id,
/// data.username, data.email, data.profile_image}`.
pub fn concept2() -> OAuthProvider {
    oauth2(
        "concept2",
        "Concept2",
        "https://log.concept2.com/oauth/authorize",
        "https://log.concept2.com/oauth/access_token",
        "https://log.concept2.com/api/users/me",
    )
    .authorization_param("scope", "user:read,results:write")
    .profile(fields(
        "data.id",
        "data.username",
        "data.email",
        "data.profile_image",
    ))
}

/// Dribbble, id `dribbble`: `scope` (default `public`); profile `{id, name, email,
/// avatar_url}`.
///
/// Deviation: Auth.js sends `scope=undefined` when no scope is given; authcore asks for
/// `public`, Dribbble's basic scope.
pub fn dribbble(scope: Option<&str>) -> OAuthProvider {
    oauth2(
        "dribbble",
        "Dribbble",
        "https://dribbble.com/oauth/authorize",
        "https://dribbble.com/oauth/token",
        "https://api.dribbble.com/v2/user",
    )
    .authorization_param("scope", scope.unwrap_or("public"))
    .profile(fields("id", "name", "email", "avatar_url"))
    .style(style("#000", Some("#fff")))
}

/// Dropbox, id `dropbox`: `token_access_type=offline`, `scope=account_info.read`; the
/// user is a `POST` to `users/get_current_account`; profile `{account_id,
/// name.display_name, email, profile_photo_url}`.
pub fn dropbox() -> OAuthProvider {
    oauth2(
        "dropbox",
        "Dropbox",
        "https://www.dropbox.com/oauth2/authorize",
        "https://api.dropboxapi.com/oauth2/token",
        "https://api.dropboxapi.com/2/users/get_current_account",
    )
    .authorization_param("token_access_type", "offline")
    .authorization_param("scope", "account_info.read")
    .userinfo_request(|cx: UserinfoContext| async move {
        let url = cx
            .userinfo_endpoint
            .clone()
            .ok_or("no Dropbox userinfo endpoint")?;
        let req = api(Method::POST, &url, Some(cx.access_token()));
        let answer = send_json(
            cx.http.as_ref(),
            req,
            Bytes::new(),
            "Dropbox get_current_account",
        )
        .await?;
        object_at(answer, "", "Dropbox get_current_account")
    })
    .profile(fields(
        "account_id",
        "name.display_name",
        "email",
        "profile_photo_url",
    ))
    .style(style("#0061fe", None))
}

/// Eventbrite, id `eventbrite`: `scope=user.profile`, `client_secret_post`; profile `{id,
/// name, email: the primary of emails, image from image_id}`.
pub fn eventbrite() -> OAuthProvider {
    oauth2(
        "eventbrite",
        "Eventbrite",
        "https://www.eventbrite.com/oauth/authorize",
        "https://www.eventbrite.com/oauth/token",
        "https://www.eventbriteapi.com/v3/users/me/",
    )
    .authorization_param("scope", "user.profile")
    .client_auth(ClientAuthMethod::ClientSecretPost)
    .profile(|p: &JsonObject, t: &TokenSet| {
        let user = fields("id", "name", "", "")(p, t)?;
        let email = p
            .get("emails")
            .and_then(Value::as_array)
            .and_then(|all| all.iter().find(|e| e.get("primary") == Some(&Value::Bool(true))))
            .and_then(|e| e.get("email"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let image = field(p, "image_id").map(|id| {
            format!("https://img.evbuc.com/https%3A%2F%2Fcdn.evbuc.com%2Fimages%2F{id}%2F1%2Foriginal.jpg")
        });
        Ok(User {
            email,
            image,
            ..user
        })
    })
    .style(style("#f05537", Some("#fff")))
}

/// EVE Online, id `eveonline`: `scope=publicData`, checks `state`; profile
/// `{CharacterID, CharacterName, image: the 128 px portrait}`.
pub fn eveonline() -> OAuthProvider {
    oauth2(
        "eveonline",
        "EVE Online",
        "https://login.eveonline.com/v2/oauth/authorize?scope=publicData",
        "https://login.eveonline.com/v2/oauth/token",
        "https://login.eveonline.com/oauth/verify",
    )
    .checks(state_only())
    .profile(|p: &JsonObject, t: &TokenSet| {
        let user = fields("CharacterID", "CharacterName", "", "")(p, t)?;
        let image = user
            .id
            .as_ref()
            .map(|id| format!("https://image.eveonline.com/Character/{id}_128.jpg"));
        Ok(User { image, ..user })
    })
}

/// Facebook, id `facebook`: Graph API v19.0 dialog, `scope=email`; the user is
/// `/me?fields=id,name,email,picture`; profile `{id, name, email, picture.data.url}`.
pub fn facebook() -> OAuthProvider {
    oauth2(
        "facebook",
        "Facebook",
        "https://www.facebook.com/v19.0/dialog/oauth",
        "https://graph.facebook.com/oauth/access_token",
        "https://graph.facebook.com/me?fields=id,name,email,picture",
    )
    .authorization_param("scope", "email")
    .profile(fields("id", "name", "email", "picture.data.url"))
    .style(style("#006aff", Some("#fff")))
}

/// FACEIT, id `faceit`: `redirect_popup=true`, client secret as HTTP Basic; profile
/// `{guid, name, email, picture}`.
pub fn faceit() -> OAuthProvider {
    oauth2(
        "faceit",
        "FACEIT",
        "https://accounts.faceit.com/accounts?redirect_popup=true",
        "https://api.faceit.com/auth/v1/oauth/token",
        "https://api.faceit.com/auth/v1/resources/userinfo",
    )
    .profile(fields("guid", "name", "email", "picture"))
}

/// Figma, id `figma`: `scope=files:read`, checks `state`; profile `{id, handle, email,
/// img_url}`.
pub fn figma() -> OAuthProvider {
    oauth2(
        "figma",
        "Figma",
        "https://www.figma.com/oauth",
        "https://api.figma.com/v1/oauth/token",
        "https://api.figma.com/v1/me",
    )
    .authorization_param("scope", "files:read")
    .checks(state_only())
    .profile(fields("id", "handle", "email", "img_url"))
    .style(style("#ff7237", Some("#fff")))
}

/// Foursquare, id `foursquare`: the user is `GET /v2/users/self?v=<api version>` with the
/// access token as `oauth_token` (default version `20230131`); profile
/// `{response.user.id, firstName + lastName, contact.email, photo prefix + original +
/// suffix}`.
pub fn foursquare(api_version: Option<&str>) -> OAuthProvider {
    let version = api_version.unwrap_or("20230131");
    oauth2(
        "foursquare",
        "Foursquare",
        "https://foursquare.com/oauth2/authenticate",
        "https://foursquare.com/oauth2/access_token",
        &format!("https://api.foursquare.com/v2/users/self?v={version}"),
    )
    .userinfo_request(|cx: UserinfoContext| async move {
        let url = cx
            .userinfo_endpoint
            .clone()
            .ok_or("no Foursquare userinfo endpoint")?;
        let url = with_query(&url, &[("oauth_token", cx.access_token())])?;
        let answer = send_json(
            cx.http.as_ref(),
            api(Method::GET, &url, None),
            Bytes::new(),
            "Foursquare users/self",
        )
        .await?;
        object_at(answer, "", "Foursquare users/self")
    })
    .profile(|p: &JsonObject, t: &TokenSet| {
        let user = fields(
            "response.user.id",
            "response.user.firstName + response.user.lastName",
            "response.user.contact.email",
            "",
        )(p, t)?;
        let image = match (
            field(p, "response.user.photo.prefix"),
            field(p, "response.user.photo.suffix"),
        ) {
            (Some(prefix), Some(suffix)) => Some(format!("{prefix}original{suffix}")),
            _ => None,
        };
        Ok(User { image, ..user })
    })
    .style(style("#000", Some("#fff")))
}

/// FreshBooks, id `freshbooks`: profile `{response.id, first_name + last_name,
/// response.email}`.
pub fn freshbooks() -> OAuthProvider {
    oauth2(
        "freshbooks",
        "Freshbooks",
        "https://auth.freshbooks.com/service/auth/oauth/authorize",
        "https://api.freshbooks.com/auth/oauth/token",
        "https://api.freshbooks.com/auth/api/v1/users/me",
    )
    .profile(fields(
        "response.id",
        "response.first_name + response.last_name",
        "response.email",
        "",
    ))
    .style(style("#0075dd", Some("#fff")))
}

/// HubSpot, id `hubspot`: `scope=oauth`, `client_secret_post`; the user is
/// `GET /oauth/v1/access-tokens/<access token>`; profile `{user_id, user, user}`.
pub fn hubspot() -> OAuthProvider {
    oauth2(
        "hubspot",
        "HubSpot",
        "https://app.hubspot.com/oauth/authorize",
        "https://api.hubapi.com/oauth/v1/token",
        "https://api.hubapi.com/oauth/v1/access-tokens",
    )
    .authorization_param("scope", "oauth")
    .client_auth(ClientAuthMethod::ClientSecretPost)
    .userinfo_request(|cx: UserinfoContext| async move {
        let url = cx
            .userinfo_endpoint
            .clone()
            .ok_or("no HubSpot userinfo endpoint")?;
        let url = format!("{url}/{}", urlencoding_path(cx.access_token()));
        let answer = send_json(
            cx.http.as_ref(),
            api(Method::GET, &url, None),
            Bytes::new(),
            "HubSpot access-tokens",
        )
        .await?;
        object_at(answer, "", "HubSpot access-tokens")
    })
    .profile(fields("user_id", "user", "user", ""))
    .style(style("#ff7a59", Some("#fff")))
}

/// Instagram, id `instagram`: `scope=user_profile`, `client_secret_post`; profile `{id,
/// username}`.
pub fn instagram() -> OAuthProvider {
    oauth2(
        "instagram",
        "Instagram",
        "https://api.instagram.com/oauth/authorize?scope=user_profile",
        "https://api.instagram.com/oauth/access_token",
        "https://graph.instagram.com/me?fields=id,username,account_type,name",
    )
    .client_auth(ClientAuthMethod::ClientSecretPost)
    .profile(fields("id", "username", "", ""))
    .style(style("#fff", Some("#000")))
}

/// Kakao, id `kakao`: `client_secret_post`; profile `{id, kakao_account.profile.nickname,
/// kakao_account.email, kakao_account.profile.profile_image_url}`.
pub fn kakao() -> OAuthProvider {
    oauth2(
        "kakao",
        "Kakao",
        "https://kauth.kakao.com/oauth/authorize?scope",
        "https://kauth.kakao.com/oauth/token",
        "https://kapi.kakao.com/v2/user/me",
    )
    .client_auth(ClientAuthMethod::ClientSecretPost)
    .profile(fields(
        "id",
        "kakao_account.profile.nickname",
        "kakao_account.email",
        "kakao_account.profile.profile_image_url",
    ))
}

/// Mailchimp, id `mailchimp`: profile `{login.login_id, accountname, login.email}`.
pub fn mailchimp() -> OAuthProvider {
    oauth2(
        "mailchimp",
        "Mailchimp",
        "https://login.mailchimp.com/oauth2/authorize",
        "https://login.mailchimp.com/oauth2/token",
        "https://login.mailchimp.com/oauth2/metadata",
    )
    .profile(fields("login.login_id", "accountname", "login.email", ""))
    .style(style("#000", Some("#fff")))
}

/// Mail.ru, id `mailru`: `scope=userinfo`; the default profile mapping.
pub fn mailru() -> OAuthProvider {
    oauth2(
        "mailru",
        "Mail.ru",
        "https://oauth.mail.ru/login?scope=userinfo",
        "https://oauth.mail.ru/token",
        "https://oauth.mail.ru/userinfo",
    )
}

/// Mastodon, id `mastodon`: endpoints on your instance (`issuer`), `scope=read`; profile
/// `{id, username, image: avatar_static}`.
pub fn mastodon(issuer: &str) -> OAuthProvider {
    let b = base(issuer);
    oauth2(
        "mastodon",
        "Mastodon",
        &format!("{b}/oauth/authorize?scope=read"),
        &format!("{b}/oauth/token"),
        &format!("{b}/api/v1/accounts/verify_credentials"),
    )
    .profile(fields("id", "username", "", "avatar_static"))
}

/// Mattermost, id `mattermost`: endpoints on your server (`issuer`),
/// `client_secret_post`; profile `{id, username ?? first_name + last_name, email}`.
pub fn mattermost(issuer: &str) -> OAuthProvider {
    let b = base(issuer);
    oauth2(
        "mattermost",
        "Mattermost",
        &format!("{b}/oauth/authorize"),
        &format!("{b}/oauth/access_token"),
        &format!("{b}/api/v4/users/me"),
    )
    .client_auth(ClientAuthMethod::ClientSecretPost)
    .profile(fields(
        "id",
        "username | first_name + last_name",
        "email",
        "",
    ))
    .style(style("#000", Some("#fff")))
}

/// Medium, id `medium`: `scope=basicProfile`; profile `{data.id, data.name,
/// data.imageUrl}`.
pub fn medium() -> OAuthProvider {
    oauth2(
        "medium",
        "Medium",
        "https://medium.com/m/oauth/authorize?scope=basicProfile",
        "https://api.medium.com/v1/tokens",
        "https://api.medium.com/v1/me",
    )
    .profile(fields("data.id", "data.name", "", "data.imageUrl"))
}

/// Naver, id `naver`: profile `{response.id, response.nickname, response.email,
/// response.profile_image}`.
pub fn naver() -> OAuthProvider {
    oauth2(
        "naver",
        "Naver",
        "https://nid.naver.com/oauth2.0/authorize",
        "https://nid.naver.com/oauth2.0/token",
        "https://openapi.naver.com/v1/nid/me",
    )
    .profile(fields(
        "response.id",
        "response.nickname",
        "response.email",
        "response.profile_image",
    ))
}

/// Netlify, id `netlify`: profile `{id, full_name, email, avatar_url}`.
pub fn netlify() -> OAuthProvider {
    oauth2(
        "netlify",
        "Netlify",
        "https://app.netlify.com/authorize?scope",
        "https://api.netlify.com/oauth/token",
        "https://api.netlify.com/api/v1/user",
    )
    .profile(fields("id", "full_name", "email", "avatar_url"))
    .style(style("#32e6e2", None))
}

/// NetSuite, id `netsuite`: endpoints of your account (`account_id`),
/// `scope=restlets rest_webservices`, checks `state`; the user comes from the RESTlet at
/// `userinfo_url` (NetSuite has no userinfo endpoint; Auth.js's docs have you write one);
/// profile `{id, name, email}`.
///
/// Deviation: the Auth.js preset has no userinfo URL and fails unless you add one; here
/// it is a required setting.
pub fn netsuite(account_id: &str, userinfo_url: &str) -> OAuthProvider {
    oauth2(
        "netsuite",
        "NetSuite",
        &format!("https://{account_id}.app.netsuite.com/app/login/oauth2/authorize.nl"),
        &format!(
            "https://{account_id}.suitetalk.api.netsuite.com/services/rest/auth/oauth2/v1/token"
        ),
        userinfo_url,
    )
    .authorization_param("scope", "restlets rest_webservices")
    .checks(state_only())
    .profile(fields("id", "name", "email", ""))
    .style(style("#181a1b", Some("#fbfbfb")))
}

/// Nextcloud, id `nextcloud`: endpoints on your server (`issuer`); the user is
/// `GET /ocs/v1.php/cloud/users/<user_id of the token response>` with `OCS-APIRequest:
/// true`, answered under `ocs.data`; profile `{id, displayname, email, image:
/// <issuer>/avatar/<id>/512}`.
pub fn nextcloud(issuer: &str) -> OAuthProvider {
    let b: Arc<str> = base(issuer).into();
    let avatar_base = Arc::clone(&b);
    oauth2(
        "nextcloud",
        "Nextcloud",
        &format!("{b}/apps/oauth2/authorize"),
        &format!("{b}/apps/oauth2/api/v1/token"),
        &format!("{b}/ocs/v1.php/cloud/users"),
    )
    .userinfo_request(|cx: UserinfoContext| async move {
        let url = cx
            .userinfo_endpoint
            .clone()
            .ok_or("no Nextcloud userinfo endpoint")?;
        let user = string_field(&cx.tokens.extra, "user_id")
            .ok_or("the Nextcloud token response has no user_id")?;
        let url = format!("{url}/{}", urlencoding_path(&user));
        let req = api(Method::GET, &url, Some(cx.access_token())).header("OCS-APIRequest", "true");
        let answer =
            send_json(cx.http.as_ref(), req, Bytes::new(), "Nextcloud cloud/users").await?;
        object_at(answer, "ocs.data", "Nextcloud cloud/users")
    })
    .profile(move |p: &JsonObject, t: &TokenSet| {
        let user = fields("id", "displayname", "email", "")(p, t)?;
        let image = user
            .id
            .as_ref()
            .map(|id| format!("{avatar_base}/avatar/{}/512", urlencoding_path(id)));
        Ok(User { image, ..user })
    })
    .style(style("#fff", Some("#0082C9")))
}

/// Notion, id `notion`: `owner=user`; the user is the owner of the bot,
/// `GET /v1/users/me` with `Notion-Version: 2022-06-28`, at `bot.owner.user`; profile
/// `{id, name, person.email, avatar_url}`.
pub fn notion() -> OAuthProvider {
    oauth2(
        "notion",
        "Notion",
        "https://api.notion.com/v1/oauth/authorize",
        "https://api.notion.com/v1/oauth/token",
        "https://api.notion.com/v1/users",
    )
    .authorization_param("response_type", "code")
    .authorization_param("owner", "user")
    .userinfo_request(|cx: UserinfoContext| async move {
        let req = api(
            Method::GET,
            "https://api.notion.com/v1/users/me",
            Some(cx.access_token()),
        )
        .header("Notion-Version", "2022-06-28");
        let answer = send_json(
            cx.http.as_ref(),
            req,
            Bytes::new(),
            "Notion GET /v1/users/me",
        )
        .await?;
        object_at(answer, "bot.owner.user", "Notion GET /v1/users/me")
    })
    .profile(fields("id", "name", "person.email", "avatar_url"))
    .style(style("#fff", Some("#000")))
}

/// Osso, id `osso`: endpoints on your Osso deployment (`issuer`); the default profile
/// mapping.
pub fn osso(issuer: &str) -> OAuthProvider {
    let b = base(issuer);
    oauth2(
        "osso",
        "Osso",
        &format!("{b}/oauth/authorize"),
        &format!("{b}/oauth/token"),
        &format!("{b}/oauth/me"),
    )
}

/// osu!, id `osu`: `scope=identify`; profile `{id, username, avatar_url}`.
pub fn osu() -> OAuthProvider {
    oauth2(
        "osu",
        "osu!",
        "https://osu.ppy.sh/oauth/authorize?scope=identify",
        "https://osu.ppy.sh/oauth/token",
        "https://osu.ppy.sh/api/v2/me",
    )
    .profile(fields("id", "username", "", "avatar_url"))
}

/// Patreon, id `patreon`: `scope=identity identity[email]`; profile `{data.id,
/// data.attributes.full_name, .email, .image_url}`.
pub fn patreon() -> OAuthProvider {
    oauth2(
        "patreon",
        "Patreon",
        "https://www.patreon.com/oauth2/authorize",
        "https://www.patreon.com/api/oauth2/token",
        "https://www.patreon.com/api/oauth2/api/current_user",
    )
    .authorization_param("scope", "identity identity[email]")
    .profile(fields(
        "data.id",
        "data.attributes.full_name",
        "data.attributes.email",
        "data.attributes.image_url",
    ))
    .style(style("#e85b46", Some("#fff")))
}

/// Pinterest, id `pinterest`: `scope=user_accounts:read`; profile `{id: username, name:
/// username, image: profile_image}`.
pub fn pinterest() -> OAuthProvider {
    oauth2(
        "pinterest",
        "Pinterest",
        "https://www.pinterest.com/oauth",
        "https://api.pinterest.com/v5/oauth/token",
        "https://api.pinterest.com/v5/user_account",
    )
    .authorization_param("scope", "user_accounts:read")
    .profile(fields("username", "username", "", "profile_image"))
    .style(style("#bd081c", None))
}

/// Pipedrive, id `pipedrive`: profile `{data.id, data.name, data.email, data.icon_url}`.
pub fn pipedrive() -> OAuthProvider {
    oauth2(
        "pipedrive",
        "Pipedrive",
        "https://oauth.pipedrive.com/oauth/authorize",
        "https://oauth.pipedrive.com/oauth/token",
        "https://api.pipedrive.com/users/me",
    )
    .profile(fields(
        "data.id",
        "data.name",
        "data.email",
        "data.icon_url",
    ))
}

/// Reddit, id `reddit`: `scope=identity`, checks `state`; the default profile mapping
/// (`id`, `name`).
pub fn reddit() -> OAuthProvider {
    oauth2(
        "reddit",
        "Reddit",
        "https://www.reddit.com/api/v1/authorize?scope=identity",
        "https://www.reddit.com/api/v1/access_token",
        "https://oauth.reddit.com/api/v1/me",
    )
    .checks(state_only())
    .style(style("#FF4500", None))
}

/// Spotify, id `spotify`: `scope=user-read-email`; profile `{id, display_name, email,
/// images[0].url}`.
pub fn spotify() -> OAuthProvider {
    oauth2(
        "spotify",
        "Spotify",
        "https://accounts.spotify.com/authorize?scope=user-read-email",
        "https://accounts.spotify.com/api/token",
        "https://api.spotify.com/v1/me",
    )
    .profile(fields("id", "display_name", "email", "images.0.url"))
    .style(style("#1db954", None))
}

/// Strava, id `strava`: `scope=read`, `approval_prompt=auto`, `client_secret_post`;
/// profile `{id, firstname + lastname, image: profile}`.
pub fn strava() -> OAuthProvider {
    oauth2(
        "strava",
        "Strava",
        "https://www.strava.com/api/v3/oauth/authorize",
        "https://www.strava.com/api/v3/oauth/token",
        "https://www.strava.com/api/v3/athlete",
    )
    .authorization_param("scope", "read")
    .authorization_param("approval_prompt", "auto")
    .authorization_param("response_type", "code")
    .client_auth(ClientAuthMethod::ClientSecretPost)
    .profile(fields("id", "firstname + lastname", "", "profile"))
}

/// Threads, id `threads`: `scope=threads_basic`, checks `state`, `client_secret_post`;
/// profile `{id, username, threads_profile_picture_url}`.
///
/// Deviation: Auth.js reads the fields under `data`, where the Threads `/me` answer does
/// not have them (its profile throws); authcore reads them at the top level, and under
/// `data` when they are there.
pub fn threads() -> OAuthProvider {
    oauth2(
        "threads",
        "Threads",
        "https://threads.net/oauth/authorize?scope=threads_basic",
        "https://graph.threads.net/oauth/access_token",
        "https://graph.threads.net/v1.0/me?fields=id,username,threads_profile_picture_url",
    )
    .checks(state_only())
    .client_auth(ClientAuthMethod::ClientSecretPost)
    .profile(fields(
        "id | data.id",
        "username | data.username",
        "",
        "threads_profile_picture_url | data.threads_profile_picture_url",
    ))
    .style(style("#000", Some("#fff")))
}

/// TikTok, id `tiktok`: the client id goes as `client_key` in the authorization request
/// and the token request body, `scope=user.info.basic`, `client_secret_post`; profile
/// `{data.user.open_id, data.user.display_name, data.user.avatar_url}`.
///
/// Deviation: Auth.js copies `clientId` into `client_key` when the preset is created, so
/// with `AUTH_TIKTOK_ID` (read later) the parameter is missing; authcore fills it in when
/// the request is made.
pub fn tiktok() -> OAuthProvider {
    oauth2(
        "tiktok",
        "TikTok",
        "https://www.tiktok.com/v2/auth/authorize",
        "https://open.tiktokapis.com/v2/oauth/token/",
        "https://open.tiktokapis.com/v2/user/info/?fields=open_id,avatar_url,display_name",
    )
    .authorization_client_param("client_key", ClientValue::ClientId)
    .authorization_param("scope", "user.info.basic")
    .token_client_param("client_key", ClientValue::ClientId)
    .client_auth(ClientAuthMethod::ClientSecretPost)
    .profile(fields(
        "data.user.open_id",
        "data.user.display_name",
        "",
        "data.user.avatar_url",
    ))
    .style(style("#000", Some("#fff")))
}

/// Todoist, id `todoist`: `scope=data:read`, `client_secret_post`; the user is a `POST`
/// to the Sync API (`{sync_token: "*", resource_types: "[\"user\"]"}`), at `user`;
/// profile `{id, full_name, email, avatar_big}`.
pub fn todoist() -> OAuthProvider {
    OAuthProvider::oauth("todoist", "Todoist")
        .authorization_url("https://todoist.com/oauth/authorize")
        .authorization_param("scope", "data:read")
        .token_url("https://todoist.com/oauth/access_token")
        .client_auth(ClientAuthMethod::ClientSecretPost)
        .userinfo_request(|cx: UserinfoContext| async move {
            let req = api(
                Method::POST,
                "https://api.todoist.com/sync/v9/sync",
                Some(cx.access_token()),
            )
            .header(http::header::CONTENT_TYPE, "application/json");
            let body = json!({"sync_token": "*", "resource_types": "[\"user\"]"}).to_string();
            let answer =
                send_json(cx.http.as_ref(), req, Bytes::from(body), "Todoist sync").await?;
            object_at(answer, "user", "Todoist sync")
        })
        .profile(fields("id", "full_name", "email", "avatar_big"))
        .style(style("#E44332", Some("#000")))
}

/// Trakt, id `trakt`: the user is `GET /users/me?extended=full` with `trakt-api-version:
/// 2` and the client id as `trakt-api-key`; profile `{ids.slug, name,
/// images.avatar.full}`.
pub fn trakt() -> OAuthProvider {
    oauth2(
        "trakt",
        "Trakt",
        "https://trakt.tv/oauth/authorize?scope=",
        "https://api.trakt.tv/oauth/token",
        "https://api.trakt.tv/users/me?extended=full",
    )
    .userinfo_request(|cx: UserinfoContext| async move {
        let url = cx
            .userinfo_endpoint
            .clone()
            .ok_or("no Trakt userinfo endpoint")?;
        let req = api(Method::GET, &url, Some(cx.access_token()))
            .header("trakt-api-version", "2")
            .header("trakt-api-key", cx.client_id.as_str());
        let answer = send_json(cx.http.as_ref(), req, Bytes::new(), "Trakt users/me").await?;
        object_at(answer, "", "Trakt users/me")
    })
    .profile(fields("ids.slug", "name", "", "images.avatar.full"))
    .style(style("#ED2224", Some("#fff")))
}

/// Twitter (X), id `twitter`: OAuth 2 with `scope=users.read tweet.read offline.access`,
/// checks PKCE and `state`; profile `{data.id, data.name, data.email,
/// data.profile_image_url}`.
pub fn twitter() -> OAuthProvider {
    oauth2(
        "twitter",
        "Twitter",
        "https://x.com/i/oauth2/authorize?scope=users.read tweet.read offline.access",
        "https://api.x.com/2/oauth2/token",
        "https://api.x.com/2/users/me?user.fields=profile_image_url",
    )
    .checks(pkce_and_state())
    .profile(fields(
        "data.id",
        "data.name",
        "data.email",
        "data.profile_image_url",
    ))
    .style(style("#1da1f2", Some("#fff")))
}

/// VK, id `vk`: API version 5.131, `scope=email`, `client_secret_post`; the user is
/// `users.get` (with `User-Agent: authjs`), at `response[0]`, with the email of the token
/// response; profile `{id, first_name + last_name, email, photo_100}`.
pub fn vk() -> OAuthProvider {
    oauth2(
        "vk",
        "VK",
        "https://oauth.vk.com/authorize?scope=email&v=5.131",
        "https://oauth.vk.com/access_token?v=5.131",
        "https://api.vk.com/method/users.get?fields=photo_100&v=5.131",
    )
    .client_auth(ClientAuthMethod::ClientSecretPost)
    .userinfo_request(|cx: UserinfoContext| async move {
        let url = cx
            .userinfo_endpoint
            .clone()
            .ok_or("no VK userinfo endpoint")?;
        let req = api(Method::GET, &url, Some(cx.access_token()))
            .header(http::header::USER_AGENT, "authjs");
        let answer = send_json(cx.http.as_ref(), req, Bytes::new(), "VK users.get").await?;
        let mut user = object_at(answer, "response.0", "VK users.get")?;
        let email = cx
            .tokens
            .extra
            .get("email")
            .filter(|e| e.is_string())
            .cloned();
        user.insert("email".to_owned(), email.unwrap_or(Value::Null));
        Ok(user)
    })
    .profile(fields("id", "first_name + last_name", "email", "photo_100"))
    .style(style("#07F", Some("#fff")))
}

/// Webex, id `webex`: endpoints under the API base (default `https://webexapis.com/v1`),
/// `scope=spark:kms spark:people_read`; profile `{id, displayName, emails[0], avatar}`.
pub fn webex(api_base_url: Option<&str>) -> OAuthProvider {
    let b = base(api_base_url.unwrap_or("https://webexapis.com/v1"));
    oauth2(
        "webex",
        "Webex",
        &format!("{b}/authorize"),
        &format!("{b}/access_token"),
        &format!("{b}/people/me"),
    )
    .authorization_param("scope", "spark:kms spark:people_read")
    .profile(fields("id", "displayName", "emails.0", "avatar"))
}

/// Which WeChat application signs users in ([`wechat()`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum WeChatPlatform {
    /// An Official Account, inside WeChat (`snsapi_userinfo`), the Auth.js default.
    #[default]
    OfficialAccount,
    /// A website, by QR code (`qrconnect`, `snsapi_login`).
    WebsiteApp,
}

impl std::str::FromStr for WeChatPlatform {
    type Err = ();
    /// Auth.js's `platformType` names: `OfficialAccount`, `WebsiteApp`.
    fn from_str(s: &str) -> Result<Self, ()> {
        match s {
            "OfficialAccount" => Ok(Self::OfficialAccount),
            "WebsiteApp" => Ok(Self::WebsiteApp),
            _ => Err(()),
        }
    }
}

/// WeChat, id `wechat`: the client id and secret go as `appid` / `secret` (authorization
/// and token requests), checks `state`, the token response gets `token_type: bearer`
/// (WeChat sends none); the user is `GET /sns/userinfo` with `access_token`, the token
/// response's `openid` and `lang=zh_CN` as query parameters; profile `{unionid ?? openid,
/// nickname, headimgurl}`.
///
/// Deviation: Auth.js uses `unionid` only, which WeChat sends only for applications bound
/// to an Open Platform account; without it every sign-in would be a new account. authcore
/// falls back to the (per-application) `openid`.
pub fn wechat(platform: WeChatPlatform) -> OAuthProvider {
    let (url, scope) = match platform {
        WeChatPlatform::OfficialAccount => (
            "https://open.weixin.qq.com/connect/oauth2/authorize",
            "snsapi_userinfo",
        ),
        WeChatPlatform::WebsiteApp => (
            "https://open.weixin.qq.com/connect/qrconnect",
            "snsapi_login",
        ),
    };
    oauth2(
        "wechat",
        "WeChat",
        url,
        "https://api.weixin.qq.com/sns/oauth2/access_token",
        "https://api.weixin.qq.com/sns/userinfo",
    )
    .checks(state_only())
    .authorization_client_param("appid", ClientValue::ClientId)
    .authorization_param("scope", scope)
    .token_url_client_param("appid", ClientValue::ClientId)
    .token_url_client_param("secret", ClientValue::ClientSecret)
    .conform(|status, mut body| {
        if let Value::Object(m) = &mut body
            && !m.contains_key("errcode")
        {
            m.insert("token_type".to_owned(), Value::from("bearer"));
        }
        (status, body)
    })
    .userinfo_request(|cx: UserinfoContext| async move {
        let url = cx
            .userinfo_endpoint
            .clone()
            .ok_or("no WeChat userinfo endpoint")?;
        let openid = string_field(&cx.tokens.extra, "openid").unwrap_or_default();
        let url = with_query(
            &url,
            &[
                ("access_token", cx.access_token()),
                ("openid", &openid),
                ("lang", "zh_CN"),
            ],
        )?;
        let answer = send_json(
            cx.http.as_ref(),
            api(Method::GET, &url, None),
            Bytes::new(),
            "WeChat sns/userinfo",
        )
        .await?;
        object_at(answer, "", "WeChat sns/userinfo")
    })
    .profile(fields("unionid | openid", "nickname", "", "headimgurl"))
    .style(style("#fff", Some("#000")))
}

/// Wikimedia, id `wikimedia`: profile `{sub, username, email}`.
pub fn wikimedia() -> OAuthProvider {
    oauth2(
        "wikimedia",
        "Wikimedia",
        "https://meta.wikimedia.org/w/rest.php/oauth2/authorize?scope=",
        "https://meta.wikimedia.org/w/rest.php/oauth2/access_token",
        "https://meta.wikimedia.org/w/rest.php/oauth2/resource/profile",
    )
    .profile(fields("sub", "username", "email", ""))
    .style(style("#000", Some("#fff")))
}

/// WordPress.com, id `wordpress`: `scope=auth`; profile `{ID, display_name, email,
/// avatar_URL}`.
pub fn wordpress() -> OAuthProvider {
    oauth2(
        "wordpress",
        "WordPress.com",
        "https://public-api.wordpress.com/oauth2/authorize?scope=auth",
        "https://public-api.wordpress.com/oauth2/token",
        "https://public-api.wordpress.com/rest/v1/me",
    )
    .profile(fields("ID", "display_name", "email", "avatar_URL"))
}

/// WorkOS, id `workos`: endpoints under `issuer` (default `https://api.workos.com/`),
/// `connection` in the authorization URL, `client_secret_post`; profile `{id, first_name
/// + last_name, email, raw_attributes.picture}`.
pub fn workos(issuer: Option<&str>, connection: Option<&str>) -> OAuthProvider {
    let b = base(issuer.unwrap_or("https://api.workos.com/"));
    let connection: String =
        url::form_urlencoded::byte_serialize(connection.unwrap_or_default().as_bytes()).collect();
    oauth2(
        "workos",
        "WorkOS",
        &format!("{b}/sso/authorize?connection={connection}"),
        &format!("{b}/sso/token"),
        &format!("{b}/sso/profile"),
    )
    .client_auth(ClientAuthMethod::ClientSecretPost)
    .profile(fields(
        "id",
        "first_name + last_name",
        "email",
        "raw_attributes.picture",
    ))
    .style(style("#6363f1", Some("#fff")))
}

/// Yandex, id `yandex`: `scope=login:info login:email login:avatar`; profile `{id,
/// display_name ?? real_name ?? first_name, default_email ?? emails[0], image: the
/// islands-200 avatar unless is_avatar_empty}`.
pub fn yandex() -> OAuthProvider {
    oauth2(
        "yandex",
        "Yandex",
        "https://oauth.yandex.ru/authorize?scope=login:info+login:email+login:avatar",
        "https://oauth.yandex.ru/token",
        "https://login.yandex.ru/info?format=json",
    )
    .profile(|p: &JsonObject, t: &TokenSet| {
        let user = fields(
            "id",
            "display_name | real_name | first_name",
            "default_email | emails.0",
            "",
        )(p, t)?;
        let empty = p.get("is_avatar_empty") == Some(&Value::Bool(true));
        let image = field(p, "default_avatar_id")
            .filter(|_| !empty)
            .map(|id| format!("https://avatars.yandex.net/get-yapic/{id}/islands-200"));
        Ok(User { image, ..user })
    })
    .style(style("#ffcc00", Some("#000")))
}

/// Zoho, id `zoho`: `scope=AaaServer.profile.Read`; profile `{ZUID, First_Name +
/// Last_Name, Email}`.
pub fn zoho() -> OAuthProvider {
    oauth2(
        "zoho",
        "Zoho",
        "https://accounts.zoho.com/oauth/v2/auth?scope=AaaServer.profile.Read",
        "https://accounts.zoho.com/oauth/v2/token",
        "https://accounts.zoho.com/oauth/user/info",
    )
    .profile(fields("ZUID", "First_Name + Last_Name", "Email", ""))
}

/// Zoom, id `zoom`: profile `{id, first_name + last_name, email, pic_url}`.
pub fn zoom() -> OAuthProvider {
    oauth2(
        "zoom",
        "Zoom",
        "https://zoom.us/oauth/authorize?scope",
        "https://zoom.us/oauth/token",
        "https://api.zoom.us/v2/users/me",
    )
    .profile(fields("id", "first_name + last_name", "email", "pic_url"))
    .style(style("#0b5cff", Some("#fff")))
}
