//! Built-in pages and the GET actions that render them or redirect to custom pages
//! (spec §2.4, §2.7–2.9, §13).

use askama::Template;
use http::StatusCode;

use super::Ctx;
use crate::cookies::encode_uri_component;
use crate::error::AuthError;
use crate::providers::Provider;
use crate::response::ResponseInternal;
use crate::types::Theme;

const CSS: &str = include_str!("../../templates/style.css");

struct FieldView {
    key: String,
    label: String,
    input_type: String,
    attributes: Vec<(String, String)>,
}

struct ProviderView {
    id: String,
    name: String,
    action: String,
    /// OAuth buttons carry the callback URL; credential forms rely on the cookie.
    callback_url: Option<String>,
    /// `--provider-brand-color` of OAuth buttons.
    brand_color: Option<String>,
    fields: Vec<FieldView>,
    /// A WebAuthn form, driven by the inline ceremony script.
    webauthn: bool,
}

/// The WebAuthn ceremony script of the sign-in page (authcore's own, inline).
struct WebAuthnScript {
    auth_url: String,
    /// The provider whose passkeys are offered in autofill (conditional UI), or "".
    conditional: String,
    script: &'static str,
}

#[derive(Template)]
#[template(path = "signin.html")]
struct SigninTemplate<'a> {
    css: &'a str,
    theme: &'a Theme,
    csrf_token: &'a str,
    error_message: Option<&'static str>,
    providers: Vec<ProviderView>,
    webauthn: Option<WebAuthnScript>,
}

#[derive(Template)]
#[template(path = "signout.html")]
struct SignoutTemplate<'a> {
    css: &'a str,
    theme: &'a Theme,
    csrf_token: &'a str,
    action: &'a str,
}

#[derive(Template)]
#[template(path = "error.html")]
struct ErrorTemplate<'a> {
    css: &'a str,
    theme: &'a Theme,
    heading: &'static str,
    lines: &'static [&'static str],
    signin_href: Option<String>,
    home: Option<(String, String)>,
}

#[derive(Template)]
#[template(path = "verify_request.html")]
struct VerifyRequestTemplate<'a> {
    css: &'a str,
    theme: &'a Theme,
    origin: &'a str,
    host: &'a str,
}

fn render(t: &impl Template) -> Result<String, AuthError> {
    t.render().map_err(|e| AuthError::CallbackError {
        callback: "render page",
        source: Box::new(e),
    })
}

/// `?` or `&` to append a query to `url`.
fn query_sep(url: &str) -> char {
    if url.contains('?') { '&' } else { '?' }
}

/// Sign-in page error messages (spec §13.2).
fn signin_error_message(error: &str) -> &'static str {
    match error {
        "Signin" | "OAuthSignin" | "OAuthCallbackError" | "OAuthCreateAccount"
        | "EmailCreateAccount" | "Callback" => "Try signing in with a different account.",
        "OAuthAccountNotLinked" => {
            "To confirm your identity, sign in with the same account you used originally."
        }
        "EmailSignin" => "The e-mail could not be sent.",
        "CredentialsSignin" => "Sign in failed. Check the details you provided are correct.",
        "SessionRequired" => "Please sign in to access this page.",
        _ => "Unable to sign in.",
    }
}

fn webauthn_script(ctx: &Ctx<'_>) -> Option<WebAuthnScript> {
    let mut webauthn = ctx.config.providers.iter().filter_map(|p| match p {
        Provider::WebAuthn(w) => Some(w),
        _ => None,
    });
    let first = webauthn.next()?;
    let conditional = std::iter::once(first)
        .chain(webauthn)
        .find(|w| w.enable_conditional_ui)
        .map(|w| w.id.clone())
        .unwrap_or_default();
    Some(WebAuthnScript {
        auth_url: ctx.auth_url(""),
        conditional,
        script: include_str!("../../templates/webauthn.js"),
    })
}

pub(crate) fn signin_page(ctx: &Ctx<'_>) -> Result<ResponseInternal, AuthError> {
    if ctx.req.provider_id.is_some() {
        return Err(AuthError::unknown_action("Unsupported action"));
    }
    let q = &ctx.req.query;
    if let Some(page) = &ctx.config.pages.sign_in {
        let mut url = format!(
            "{page}{}callbackUrl={}",
            query_sep(page),
            encode_uri_component(&ctx.callback_url)
        );
        if let Some(e) = q.get("error") {
            url.push_str("&error=");
            url.push_str(&encode_uri_component(e));
        }
        return Ok(ResponseInternal::redirect(url));
    }
    let providers = ctx
        .config
        .providers
        .iter()
        .map(|p| match p {
            Provider::Email(e) => ProviderView {
                id: e.id.clone(),
                name: e.name.clone(),
                action: ctx.auth_url(&format!("/signin/{}", e.id)),
                callback_url: None,
                brand_color: None,
                webauthn: false,
                fields: vec![FieldView {
                    key: "email".into(),
                    label: "Email".into(),
                    input_type: "email".into(),
                    attributes: vec![
                        ("placeholder".into(), "email@example.com".into()),
                        ("required".into(), String::new()),
                        (
                            "value".into(),
                            q.get("email").unwrap_or_default().to_owned(),
                        ),
                    ],
                }],
            },
            Provider::OAuth(o) => ProviderView {
                id: o.id.clone(),
                name: o.name.clone(),
                action: ctx.auth_url(&format!("/signin/{}", o.id)),
                callback_url: Some(ctx.callback_url.clone()),
                brand_color: Some(o.style.brand_color.clone().unwrap_or_else(|| "#fff".into())),
                fields: Vec::new(),
                webauthn: false,
            },
            Provider::WebAuthn(w) => ProviderView {
                id: w.id.clone(),
                name: w.name.clone(),
                action: ctx.auth_url(&format!("/callback/{}", w.id)),
                callback_url: None,
                brand_color: None,
                webauthn: true,
                fields: w
                    .form_fields
                    .iter()
                    .map(|f| {
                        let mut attributes = vec![("data-form-field".into(), String::new())];
                        if f.required {
                            attributes.push(("required".into(), String::new()));
                        }
                        if let Some(a) = &f.autocomplete {
                            attributes.push(("autocomplete".into(), a.clone()));
                        }
                        FieldView {
                            key: f.name.clone(),
                            label: f.label.clone(),
                            input_type: if f.name == "email" { "email" } else { "text" }.into(),
                            attributes,
                        }
                    })
                    .collect(),
            },
            Provider::Credentials(c) => ProviderView {
                id: c.id.clone(),
                name: c.name.clone(),
                action: ctx.auth_url(&format!("/callback/{}", c.id)),
                callback_url: None,
                brand_color: None,
                webauthn: false,
                fields: c
                    .fields
                    .iter()
                    .map(|(key, f)| FieldView {
                        key: key.clone(),
                        label: f.label.clone(),
                        input_type: f.input_type.clone(),
                        attributes: f.attributes.clone(),
                    })
                    .collect(),
            },
        })
        .collect();
    let html = render(&SigninTemplate {
        css: CSS,
        theme: &ctx.config.theme,
        csrf_token: &ctx.csrf_token,
        error_message: q.get("error").map(signin_error_message),
        providers,
        webauthn: webauthn_script(ctx),
    })?;
    Ok(ResponseInternal::html(StatusCode::OK, html))
}

pub(crate) fn signout_page(ctx: &Ctx<'_>) -> Result<ResponseInternal, AuthError> {
    if let Some(page) = &ctx.config.pages.sign_out {
        return Ok(ResponseInternal::redirect(page.clone()));
    }
    let html = render(&SignoutTemplate {
        css: CSS,
        theme: &ctx.config.theme,
        csrf_token: &ctx.csrf_token,
        action: ctx.req.url.as_str(),
    })?;
    Ok(ResponseInternal::html(StatusCode::OK, html))
}

/// The built-in error page for an error type (spec §13.3).
pub(crate) fn error_page_response(
    theme: &Theme,
    origin: &str,
    signin_url: String,
    error: &str,
) -> Result<ResponseInternal, AuthError> {
    let host = url::Url::parse(origin)
        .ok()
        .and_then(|u| {
            u.host_str().map(|h| match u.port() {
                Some(p) => format!("{h}:{p}"),
                None => h.to_owned(),
            })
        })
        .unwrap_or_default();
    let (status, heading, lines, signin): (
        StatusCode,
        &'static str,
        &'static [&'static str],
        bool,
    ) = match error {
        "Configuration" => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "Server error",
            &[
                "There is a problem with the server configuration.",
                "Check the server logs for more information.",
            ],
            false,
        ),
        "AccessDenied" => (
            StatusCode::FORBIDDEN,
            "Access Denied",
            &["You do not have permission to sign in."],
            true,
        ),
        "Verification" => (
            StatusCode::FORBIDDEN,
            "Unable to sign in",
            &[
                "The sign in link is no longer valid.",
                "It may have been used already or it may have expired.",
            ],
            true,
        ),
        _ => (StatusCode::OK, "Error", &[], false),
    };
    let home = (!signin && status == StatusCode::OK).then(|| (origin.to_owned(), host));
    let html = render(&ErrorTemplate {
        css: CSS,
        theme,
        heading,
        lines,
        // Deviation (spec §16.24): link to `<origin><basePath>/signin`, not `<request URL>/signin`.
        signin_href: signin.then_some(signin_url),
        home,
    })?;
    Ok(ResponseInternal::html(status, html))
}

pub(crate) fn error_page(ctx: &Ctx<'_>) -> Result<ResponseInternal, AuthError> {
    let error = ctx.req.query.get("error");
    if let Some(page) = &ctx.config.pages.error {
        // Deviation (spec §16.23): the value is URL-encoded; a missing one stays `undefined`.
        let value = error.map_or_else(|| "undefined".into(), encode_uri_component);
        return Ok(ResponseInternal::redirect(format!(
            "{page}{}error={value}",
            query_sep(page)
        )));
    }
    error_page_response(
        &ctx.config.theme,
        &ctx.req.origin,
        ctx.auth_url("/signin"),
        error.unwrap_or(""),
    )
}

pub(crate) fn verify_request_page(ctx: &Ctx<'_>) -> Result<ResponseInternal, AuthError> {
    if let Some(page) = &ctx.config.pages.verify_request {
        let search = ctx
            .req
            .url
            .query()
            .map(|q| format!("?{q}"))
            .unwrap_or_default();
        return Ok(ResponseInternal::redirect(format!("{page}{search}")));
    }
    let host = ctx.req.url.host_str().unwrap_or_default();
    let host = match ctx.req.url.port() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_owned(),
    };
    let html = render(&VerifyRequestTemplate {
        css: CSS,
        theme: &ctx.config.theme,
        origin: &ctx.req.origin,
        host: &host,
    })?;
    Ok(ResponseInternal::html(StatusCode::OK, html))
}
