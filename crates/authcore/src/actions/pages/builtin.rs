//! The built-in pages (the `pages` feature): askama templates themed by the configuration
//! (Auth.js `lib/pages/*.tsx`).

use askama::Template;
use http::{HeaderValue, StatusCode, header};

use crate::actions::Ctx;
use crate::brand_icons::brand_icon;
use crate::error::AuthError;
use crate::providers::Provider;
use crate::response::RawResponse;
use crate::spliced::{Slot, SplicedPage};
use crate::theme::plain_css_color;
use crate::types::Theme;

const CSS: &str = include_str!("../../../templates/style.css");

/// What every page shares: the stylesheet (with the theme's colours), the colour scheme,
/// the logo, and the CSP nonce of this response's inline `<style>` and `<script>`.
struct Shell<'a> {
    nonce: String,
    /// `:root{…}` overrides from the theme; colours are plain CSS colour tokens only.
    theme_css: String,
    color_scheme: &'static str,
    logo: Option<&'a str>,
}

/// A new CSP nonce for a page.
fn page_nonce() -> String {
    crate::random::b64url_token::<16>()
}

impl<'a> Shell<'a> {
    fn new(theme: &'a Theme) -> Self {
        Self::with_nonce(theme, page_nonce())
    }

    fn with_nonce(theme: &'a Theme, nonce: String) -> Self {
        let mut theme_css = String::new();
        if let Some(c) = plain_css_color(&theme.brand_color) {
            theme_css.push_str(&format!(":root{{--brand-color:{c}}}"));
        }
        if let Some(c) = plain_css_color(&theme.button_text) {
            theme_css.push_str(&format!(":root{{--button-text-color:{c}}}"));
        }
        Shell {
            nonce,
            theme_css,
            color_scheme: theme.color_scheme.as_str(),
            logo: Some(theme.logo.as_str()).filter(|l| !l.is_empty()),
        }
    }

    fn respond(&self, status: StatusCode, html: String) -> RawResponse {
        page_response(&self.nonce, status, html)
    }
}

/// The page response with its security headers: a CSP that lets only the page's own inline
/// style and script run (by `nonce`), no framing, no MIME sniffing.
fn page_response(nonce: &str, status: StatusCode, html: String) -> RawResponse {
    let mut r = RawResponse::html(status, html);
    let csp = format!(
        "default-src 'none'; style-src 'nonce-{nonce}'; script-src 'nonce-{nonce}'; img-src 'self' data: https:; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'"
    );
    if let Ok(v) = HeaderValue::from_str(&csp) {
        r.headers.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    r.headers
        .insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    r.headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r.headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    r
}

/// A form field, borrowing from the configuration and the request.
struct FieldView<'a> {
    key: &'a str,
    label: &'a str,
    input_type: &'a str,
    attributes: Vec<(&'a str, &'a str)>,
}

/// How a provider's form is drawn.
#[derive(PartialEq, Eq)]
enum FormKind {
    /// A button (OAuth / OIDC), with the provider's logo or a monogram.
    Button,
    /// Fields and a submit button (email, credentials).
    Fields,
    /// Fields driven by the inline WebAuthn ceremony script.
    WebAuthn,
}

struct ProviderView<'a> {
    id: &'a str,
    name: &'a str,
    action: String,
    kind: FormKind,
    /// OAuth buttons carry the callback URL; credential forms rely on the cookie.
    callback_url: Option<&'a str>,
    /// A configured logo URL (OAuth); else the brand icon, else a monogram is drawn.
    logo: Option<&'a str>,
    /// The brand icon's SVG path data (24×24), inlined (OAuth without a configured logo).
    icon: Option<&'static str>,
    /// First letter of the name, for the monogram.
    monogram: String,
    /// The submit button's id (`submitButton` for email as in Auth.js, else per provider).
    button_id: String,
    fields: Vec<FieldView<'a>>,
    /// A separator goes between a form and its neighbours (Auth.js), not between buttons.
    hr_before: bool,
}

impl ProviderView<'_> {
    fn is_button(&self) -> bool {
        self.kind == FormKind::Button
    }
    fn is_webauthn(&self) -> bool {
        self.kind == FormKind::WebAuthn
    }
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
    shell: &'a Shell<'a>,
    /// Per-provider colour variables (`.provider-N{…}`), plain colour tokens only.
    provider_css: String,
    csrf_token: &'a str,
    error_message: Option<&'static str>,
    providers: Vec<ProviderView<'a>>,
    webauthn: Option<WebAuthnScript>,
    /// Password accounts' links: a forgotten password, sign-up.
    links: Vec<(String, &'static str)>,
}

#[derive(Template)]
#[template(path = "signout.html")]
struct SignoutTemplate<'a> {
    css: &'a str,
    shell: &'a Shell<'a>,
    csrf_token: &'a str,
    action: &'a str,
}

#[derive(Template)]
#[template(path = "error.html")]
struct ErrorTemplate<'a> {
    css: &'a str,
    shell: &'a Shell<'a>,
    heading: &'static str,
    lines: &'static [&'static str],
    signin_href: Option<String>,
    home: Option<(String, String)>,
}

#[derive(Template)]
#[template(path = "verify_request.html")]
struct VerifyRequestTemplate<'a> {
    css: &'a str,
    shell: &'a Shell<'a>,
    origin: &'a str,
    host: &'a str,
}

#[cfg(feature = "two-factor")]
#[derive(Template)]
#[template(path = "two_factor.html")]
struct TwoFactorTemplate<'a> {
    css: &'a str,
    shell: &'a Shell<'a>,
    csrf_token: &'a str,
    action: &'a str,
    enrolment: Option<&'a crate::two_factor::TotpEnrolment>,
    /// The passkey form: its WebAuthn provider and the ceremony script.
    passkey: Option<(&'a str, WebAuthnScript)>,
    error: Option<&'static str>,
    signin_href: String,
}

#[cfg(feature = "two-factor")]
#[derive(Template)]
#[template(path = "recovery_codes.html")]
struct RecoveryCodesTemplate<'a> {
    css: &'a str,
    shell: &'a Shell<'a>,
    codes: &'a [String],
    next: &'a str,
}

/// The second factors as the account page shows them.
struct TwoFactorView {
    totp: bool,
    recovery_codes_left: u64,
}

/// An application with access as the account page shows it.
struct AppView<'a> {
    client_id: &'a str,
    name: &'a str,
    scopes: String,
    /// The day access was first granted (`YYYY-MM-DD`).
    since: &'a str,
}

/// A TOTP enrolment as the account page shows it.
struct EnrolmentView<'a> {
    qr_svg: &'a str,
    secret: &'a str,
}

#[derive(Template)]
#[template(path = "account.html")]
struct AccountTemplate<'a> {
    css: &'a str,
    shell: &'a Shell<'a>,
    who: &'a str,
    action: &'a str,
    csrf_token: &'a str,
    notice: Option<&'static str>,
    error: Option<&'static str>,
    reauthenticate: Option<&'a str>,
    recovery_codes: Option<&'a [String]>,
    accounts: &'a [crate::actions::account::LinkedAccount],
    email: Option<&'a str>,
    link: &'a [super::LinkView],
    show_passkeys: bool,
    passkeys: &'a [crate::actions::account::Passkey],
    can_unlink: bool,
    two_factor: Option<TwoFactorView>,
    enrolment: Option<EnrolmentView<'a>>,
    sessions: Option<&'a [crate::actions::account::SessionInfo]>,
    apps: Vec<AppView<'a>>,
    /// With password accounts: whether the user has a password.
    password: Option<bool>,
    password_min: usize,
    /// The account's address, where it can be changed.
    address: Option<&'a str>,
    organizations: Option<&'a super::OrganizationsView>,
    new_key: Option<&'a str>,
    impersonation: Option<&'a super::ImpersonationView>,
}

#[derive(Template)]
#[template(path = "admin.html")]
struct AdminTemplate<'a> {
    css: &'a str,
    shell: &'a Shell<'a>,
    who: &'a str,
    action: &'a str,
    account: &'a str,
    csrf_token: &'a str,
    audit_stored: bool,
    notice: Option<&'static str>,
    error: Option<&'a str>,
    reauthenticate: Option<&'a str>,
    users: Option<&'a super::UsersView>,
    user: Option<&'a super::UserView>,
    audit: Option<&'a super::AuditView>,
    setup_link: Option<&'a super::SetupLinkView>,
}

fn render(t: &impl Template) -> Result<String, AuthError> {
    // Every page carries the stylesheet: size the buffer for it and the markup at once
    // rather than growing it by doubling.
    let mut html = String::with_capacity(CSS.len() + 4096);
    t.render_into(&mut html)
        .map_err(|e| AuthError::CallbackError {
            callback: "render page",
            source: Box::new(e),
        })?;
    Ok(html)
}

/// The colour of a badge's icon or monogram on a `#rgb[a]` / `#rrggbb[aa]` brand colour:
/// `#fff` where it contrasts at least 3:1 (WCAG, graphics; white on the brand colour is what
/// brands themselves mostly do), else whichever of `#fff` and `#000` contrasts more. `#fff`
/// for any other colour token.
fn readable_on(color: &str) -> &'static str {
    let hex = color.strip_prefix('#').unwrap_or_default();
    let channels: Option<Vec<u8>> = match hex.len() {
        3 | 4 => hex
            .chars()
            .take(3)
            .map(|c| c.to_digit(16).map(|d| (d * 17) as u8))
            .collect(),
        6 | 8 => (0..3)
            .map(|k| u8::from_str_radix(hex.get(2 * k..2 * k + 2)?, 16).ok())
            .collect(),
        _ => None,
    };
    let Some(channels) = channels else {
        return "#fff";
    };
    let linear = |c: u8| {
        let x = f64::from(c) / 255.0;
        if x <= 0.04045 {
            x / 12.92
        } else {
            ((x + 0.055) / 1.055).powf(2.4)
        }
    };
    let l =
        0.2126 * linear(channels[0]) + 0.7152 * linear(channels[1]) + 0.0722 * linear(channels[2]);
    let (on_white, on_black) = (1.05 / (l + 0.05), (l + 0.05) / 0.05);
    if on_white >= 3.0 || on_white >= on_black {
        "#fff"
    } else {
        "#000"
    }
}

/// Sign-in page error messages (Auth.js `lib/pages/signin.tsx`).
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
        "RateLimited" => "Too many attempts. Please wait a few minutes before you try again.",
        "TwoFactorError" => {
            "The two-factor step expired or was begun elsewhere. Please sign in again."
        }
        "TwoFactorEnrolment" => {
            "Your account needs a second factor first: sign in with the email link to set one \
             up, or ask your administrator."
        }
        "ReauthenticationRequired" => {
            "This change needs a recent sign-in. Please sign in again to confirm it is you."
        }
        _ => "Unable to sign in.",
    }
}

#[cfg(feature = "webauthn")]
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
    Some(ceremony_script(ctx, conditional))
}

/// The ceremony script, offering the passkeys of provider `conditional` in autofill ("":
/// none).
#[cfg(feature = "webauthn")]
fn ceremony_script(ctx: &Ctx<'_>, conditional: String) -> WebAuthnScript {
    WebAuthnScript {
        auth_url: ctx.auth_url(""),
        conditional,
        script: include_str!("../../../templates/webauthn.js"),
    }
}

/// The built-in sign-in page.
pub(super) fn render_signin_page(ctx: &Ctx<'_>) -> Result<RawResponse, AuthError> {
    let q = &ctx.req.query;
    // The OAuth forms' hidden `callbackUrl`: the query's value as given (Auth.js spreads
    // the query over the page's props), validated again when the form is posted; else the
    // resolved URL. An empty value leaves the input out, as Auth.js's `callbackUrl &&`.
    let form_callback_url =
        Some(q.get("callbackUrl").unwrap_or(&ctx.callback_url)).filter(|cb| !cb.is_empty());
    let theme = &ctx.config.theme;
    let nonce = page_nonce();
    // Without a message or a prefilled address, the page differs between requests to one
    // origin only in its nonce, CSRF token and callback URL: it is rendered once per origin
    // with markers there and completed per request.
    let spliced = match form_callback_url {
        Some(callback_url) if q.get("error").is_none() && q.get("email").is_none() => ctx
            .req
            .url
            .site
            .signin_page
            .get_or_init(|| {
                let shell = Shell::with_nonce(theme, Slot::Nonce.marker().into());
                let marked = render_signin(
                    ctx,
                    &shell,
                    Slot::CsrfToken.marker(),
                    Some(Slot::CallbackUrl.marker()),
                );
                marked.ok().as_deref().and_then(SplicedPage::parse)
            })
            .as_ref()
            .map(|page| {
                page.fill(|slot| match slot {
                    Slot::Nonce => &nonce,
                    Slot::CsrfToken => &ctx.csrf_token,
                    Slot::CallbackUrl => callback_url,
                })
            }),
        _ => None,
    };
    let html = match spliced {
        Some(html) => html,
        None => {
            let shell = Shell::with_nonce(theme, nonce.clone());
            render_signin(ctx, &shell, &ctx.csrf_token, form_callback_url)?
        }
    };
    Ok(page_response(&nonce, StatusCode::OK, html))
}

/// The sign-in page with `shell`, `csrf_token` in its forms and `form_callback_url` in its
/// OAuth forms.
fn render_signin(
    ctx: &Ctx<'_>,
    shell: &Shell<'_>,
    csrf_token: &str,
    form_callback_url: Option<&str>,
) -> Result<String, AuthError> {
    let q = &ctx.req.query;
    let mut provider_css = String::new();
    let providers = ctx
        .config
        .sign_in_providers()
        .enumerate()
        .map(|(i, p)| {
            let id = p.id();
            let name = p.name();
            let monogram = name.chars().next().map(|c| c.to_uppercase().to_string()).unwrap_or_default();
            let view = |kind, action: String, fields| ProviderView {
                button_id: format!("submitButton-{id}"),
                id,
                name,
                action,
                kind,
                callback_url: None,
                logo: None,
                icon: None,
                monogram: monogram.clone(),
                fields,
                hr_before: false,
            };
            match p {
                #[cfg(feature = "email")]
                Provider::Email(e) => ProviderView {
                    button_id: "submitButton".into(),
                    ..view(
                        FormKind::Fields,
                        ctx.auth_url(&format!("/signin/{}", e.id)),
                        vec![FieldView {
                            key: "email",
                            label: "Email",
                            input_type: "email",
                            attributes: vec![
                                ("placeholder", "email@example.com"),
                                ("autocomplete", "email"),
                                ("required", ""),
                                ("value", q.get("email").unwrap_or_default()),
                            ],
                        }],
                    )
                },
                #[cfg(feature = "oauth")]
                Provider::OAuth(o) => {
                    // The badge (brand icon or monogram) in the preset's colours; the text
                    // colour, when the preset has none, is black or white, whichever reads
                    // better on the brand colour (Auth.js inverts its label over the colour).
                    // Without a brand colour the badge is neutral, in the page's colours.
                    if let Some(brand) = o.style.brand_color.as_deref().and_then(plain_css_color)
                    {
                        let text = o
                            .style
                            .text
                            .as_deref()
                            .and_then(plain_css_color)
                            .unwrap_or_else(|| readable_on(brand));
                        provider_css.push_str(&format!(
                            ".provider-{i}{{--provider-brand-color:{brand};--provider-text-color:{text}}}"
                        ));
                    }
                    let logo = o.style.logo.as_deref().filter(|l| !l.is_empty());
                    ProviderView {
                        callback_url: form_callback_url,
                        icon: if logo.is_some() { None } else { brand_icon(&o.id) },
                        logo,
                        ..view(
                            FormKind::Button,
                            ctx.auth_url(&format!("/signin/{}", o.id)),
                            Vec::new(),
                        )
                    }
                }
                #[cfg(feature = "webauthn")]
                Provider::WebAuthn(w) => view(
                    FormKind::WebAuthn,
                    ctx.auth_url(&format!("/callback/{}", w.id)),
                    w.form_fields
                        .iter()
                        .map(|f| {
                            let mut attributes = vec![("data-form-field", "")];
                            if f.required {
                                attributes.push(("required", ""));
                            }
                            if let Some(a) = &f.autocomplete {
                                attributes.push(("autocomplete", a.as_str()));
                            }
                            FieldView {
                                key: &f.name,
                                label: &f.label,
                                input_type: if f.name == "email" { "email" } else { "text" },
                                attributes,
                            }
                        })
                        .collect(),
                ),
                Provider::Credentials(c) => view(
                    FormKind::Fields,
                    ctx.auth_url(&format!("/callback/{}", c.id)),
                    c.fields
                        .iter()
                        .map(|(key, f)| FieldView {
                            key,
                            label: &f.label,
                            input_type: &f.input_type,
                            attributes: f
                                .attributes
                                .iter()
                                .map(|(k, v)| (k.as_str(), v.as_str()))
                                .collect(),
                        })
                        .collect(),
                ),
            }
        })
        .collect::<Vec<_>>();
    let mut providers = providers;
    for i in 1..providers.len() {
        providers[i].hr_before = !(providers[i].is_button() && providers[i - 1].is_button());
    }
    render(&SigninTemplate {
        css: CSS,
        shell,
        provider_css,
        csrf_token,
        error_message: match (q.get("error"), q.get("code")) {
            (Some("CredentialsSignin"), Some("email_not_verified")) => Some(
                "Confirm your email address first: follow the link we mailed you when you \
                 signed up. No mail? Ask for a password reset: its link confirms the address \
                 too.",
            ),
            (error, _) => error.map(signin_error_message),
        },
        providers,
        #[cfg(feature = "webauthn")]
        webauthn: webauthn_script(ctx),
        #[cfg(not(feature = "webauthn"))]
        webauthn: None,
        links: password_links(ctx),
    })
}

/// The built-in two-factor page: a code field, with the QR code and key of a new secret
/// when the user must enrol, and the message of `error`.
#[cfg(feature = "two-factor")]
pub(crate) fn render_two_factor_page(
    ctx: &Ctx<'_>,
    enrolment: Option<&crate::two_factor::TotpEnrolment>,
    passkey: Option<&str>,
    error: Option<&str>,
) -> Result<RawResponse, AuthError> {
    let shell = Shell::new(&ctx.config.theme);
    let error = error.map(|e| match e {
        "RateLimited" => "Too many attempts. Please wait a few minutes before you try again.",
        _ => "That did not work. Check the code and try again (each code works once), or use another way below.",
    });
    // The sign-in page's ceremony script, without passkey autofill: the form posts the
    // assertion here instead of to the provider's callback.
    #[cfg(feature = "webauthn")]
    let passkey = passkey.map(|id| (id, ceremony_script(ctx, String::new())));
    #[cfg(not(feature = "webauthn"))]
    let passkey: Option<(&str, WebAuthnScript)> = passkey.and(None);
    let html = render(&TwoFactorTemplate {
        css: CSS,
        shell: &shell,
        csrf_token: &ctx.csrf_token,
        action: &ctx.auth_url("/two-factor"),
        enrolment,
        passkey,
        error,
        signin_href: ctx.auth_url("/signin"),
    })?;
    let mut r = shell.respond(StatusCode::OK, html);
    r.headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, no-cache, no-store"),
    );
    Ok(r)
}

/// The recovery codes of a user who enrolled at sign-in, shown once, with the session
/// cookies of `signed_in` and a link to where it redirects.
#[cfg(feature = "two-factor")]
pub(crate) fn render_recovery_codes_page(
    ctx: &Ctx<'_>,
    codes: &[String],
    signed_in: RawResponse,
) -> Result<RawResponse, AuthError> {
    let shell = Shell::new(&ctx.config.theme);
    let next = signed_in.redirect.as_deref().unwrap_or("/");
    let html = render(&RecoveryCodesTemplate {
        css: CSS,
        shell: &shell,
        codes,
        next,
    })?;
    let mut r = shell.respond(StatusCode::OK, html);
    r.headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, no-cache, no-store"),
    );
    r.cookies = signed_in.cookies;
    Ok(r)
}

/// The built-in account page.
pub(crate) fn render_account_page(
    ctx: &Ctx<'_>,
    v: &super::AccountView<'_>,
) -> Result<RawResponse, AuthError> {
    let shell = Shell::new(&ctx.config.theme);
    #[cfg(feature = "two-factor")]
    let (two_factor, enrolment) = (
        v.two_factor.as_ref().map(|t| TwoFactorView {
            totp: t.totp,
            recovery_codes_left: t.recovery_codes_left,
        }),
        v.state.enrolment.as_ref().map(|e| EnrolmentView {
            qr_svg: &e.qr_svg,
            secret: &e.secret,
        }),
    );
    #[cfg(not(feature = "two-factor"))]
    let (two_factor, enrolment) = (None, None);
    let html = render(&AccountTemplate {
        css: CSS,
        shell: &shell,
        who: &v.who,
        action: &v.action,
        csrf_token: v.csrf_token,
        notice: v.state.notice,
        error: v.state.error,
        reauthenticate: v.state.reauthenticate.as_deref(),
        recovery_codes: v.state.recovery_codes.as_deref(),
        accounts: v.accounts,
        email: v.email,
        link: &v.link,
        show_passkeys: v.show_passkeys,
        passkeys: v.passkeys,
        can_unlink: v.can_unlink,
        two_factor,
        enrolment,
        sessions: v.sessions.as_deref(),
        apps: v
            .apps
            .iter()
            .map(|a| AppView {
                client_id: &a.client_id,
                name: &a.name,
                scopes: a.scopes.join(", "),
                since: a.granted_at.get(..10).unwrap_or(&a.granted_at),
            })
            .collect(),
        password: v.password.map(|p| p.has),
        password_min: v.password.map_or(0, |p| p.min_length),
        address: v.password.and(v.address),
        organizations: v.organizations.as_ref(),
        new_key: v.state.new_key.as_deref(),
        impersonation: v.impersonation.as_ref(),
    })?;
    let mut r = shell.respond(StatusCode::OK, html);
    r.headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, no-cache, no-store"),
    );
    Ok(r)
}

/// The built-in administrators' page, answered with `status`.
pub(crate) fn render_admin_page(
    ctx: &Ctx<'_>,
    v: &super::AdminView<'_>,
    status: StatusCode,
) -> Result<RawResponse, AuthError> {
    let shell = Shell::new(&ctx.config.theme);
    let html = render(&AdminTemplate {
        css: CSS,
        shell: &shell,
        who: &v.who,
        action: &v.action,
        account: &v.account,
        csrf_token: v.csrf_token,
        audit_stored: v.audit_stored,
        notice: v.notice,
        error: v.error.as_deref(),
        reauthenticate: v.reauthenticate.as_deref(),
        users: v.users.as_ref(),
        user: v.user.as_ref(),
        audit: v.audit.as_ref(),
        setup_link: v.setup_link.as_ref(),
    })?;
    Ok(shell.respond(status, html).with_no_cache())
}

/// A page that refuses the request: its title, line, form and link, with its status.
pub(crate) fn render_refusal_page(
    ctx: &Ctx<'_>,
    page: &super::RefusalPage,
) -> Result<RawResponse, AuthError> {
    let shell = Shell::new(&ctx.config.theme);
    let html = render(&FormPageTemplate {
        css: CSS,
        shell: &shell,
        title: page.title,
        lines: vec![page.line],
        error: None,
        form: page.form.as_ref().map(|f| FormView {
            action: f.action.clone(),
            hidden: f.hidden.clone(),
            inputs: Vec::new(),
            submit: f.submit,
        }),
        csrf_token: &ctx.csrf_token,
        links: vec![page.link.clone()],
    })?;
    Ok(shell.respond(page.status, html))
}

/// The built-in sign-out page.
pub(super) fn render_signout_page(ctx: &Ctx<'_>) -> Result<RawResponse, AuthError> {
    let shell = Shell::new(&ctx.config.theme);
    let html = render(&SignoutTemplate {
        css: CSS,
        shell: &shell,
        csrf_token: &ctx.csrf_token,
        action: &ctx.req.url.to_str(),
    })?;
    Ok(shell.respond(StatusCode::OK, html))
}

/// The built-in error page for an error type (Auth.js `lib/pages/error.tsx`).
pub(crate) fn error_page_response(
    theme: &Theme,
    origin: &str,
    signin_url: String,
    error: &str,
) -> Result<RawResponse, AuthError> {
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
    let shell = Shell::new(theme);
    let html = render(&ErrorTemplate {
        css: CSS,
        shell: &shell,
        heading,
        lines,
        // Deviation (docs/architecture.md, deviations: Error page "Sign in" link): link to
        // `<origin><basePath>/signin`, not `<request URL>/signin`.
        signin_href: signin.then_some(signin_url),
        home,
    })?;
    Ok(shell.respond(status, html))
}

/// Where the sign-in page links for password accounts: to reset a forgotten password (when
/// an email provider mails the link), and to sign up (when it is open).
fn password_links(ctx: &Ctx<'_>) -> Vec<(String, &'static str)> {
    let mut links = Vec::new();
    #[cfg(feature = "passwords")]
    if let Some(accounts) = &ctx.config.password_accounts {
        if ctx.config.mailer().is_some() {
            links.push((ctx.auth_url("/password/forgot"), "Forgot your password?"));
        }
        if accounts.sign_up_allowed() && ctx.config.sign_up != crate::SignUpPolicy::Closed {
            links.push((ctx.auth_url("/password/signup"), "Create an account"));
        }
    }
    let _ = ctx;
    links
}

/// One input of a form page.
#[cfg_attr(not(feature = "passwords"), allow(dead_code))]
struct InputView {
    name: &'static str,
    label: &'static str,
    kind: &'static str,
    autocomplete: &'static str,
    required: bool,
    minlength: Option<usize>,
    hint: Option<String>,
}

/// The form of a form page: where it posts, its hidden fields, inputs and submit label.
struct FormView<'a> {
    action: String,
    hidden: Vec<(&'static str, &'a str)>,
    inputs: Vec<InputView>,
    submit: &'static str,
}

/// A page of a title, lines, at most one form and links: password accounts' self-service,
/// an invitation's link.
#[derive(Template)]
#[template(path = "form.html")]
struct FormPageTemplate<'a> {
    css: &'a str,
    shell: &'a Shell<'a>,
    title: &'a str,
    lines: Vec<&'a str>,
    error: Option<&'a str>,
    form: Option<FormView<'a>>,
    csrf_token: &'a str,
    links: Vec<(String, &'static str)>,
}

/// The email input of a password-account form.
#[cfg(feature = "passwords")]
fn email_input(autocomplete: &'static str) -> InputView {
    InputView {
        name: "email",
        label: "Email",
        kind: "email",
        autocomplete,
        required: true,
        minlength: None,
        hint: None,
    }
}

/// The new-password input, with the policy's shortest length.
#[cfg(feature = "passwords")]
fn new_password_input(min: usize) -> InputView {
    InputView {
        name: "password",
        label: "New password",
        kind: "password",
        autocomplete: "new-password",
        required: true,
        minlength: Some(min),
        hint: Some(format!(
            "At least {min} characters. A few unrelated words make a good one."
        )),
    }
}

/// A page of password accounts' self-service: a form, or a message with a link.
#[cfg(feature = "passwords")]
pub(crate) fn render_password_page(
    ctx: &Ctx<'_>,
    page: &super::PasswordPage,
) -> Result<RawResponse, AuthError> {
    use super::PasswordForm as Form;
    use super::PasswordPage as P;
    let shell = Shell::new(&ctx.config.theme);
    let signin = (ctx.auth_url("/signin"), "Back to sign in");
    let mut t = FormPageTemplate {
        css: CSS,
        shell: &shell,
        title: "",
        lines: Vec::new(),
        error: None,
        form: None,
        csrf_token: &ctx.csrf_token,
        links: Vec::new(),
    };
    let status = match page {
        P::Form {
            form,
            error,
            status,
            min_length,
        } => {
            t.error = error.as_deref();
            let view = |action: &str, hidden, inputs, submit| FormView {
                action: ctx.auth_url(action),
                hidden,
                inputs,
                submit,
            };
            match form {
                Form::SignUp => {
                    t.title = "Create an account";
                    let name = InputView {
                        name: "name",
                        label: "Name (optional)",
                        kind: "text",
                        autocomplete: "name",
                        required: false,
                        minlength: None,
                        hint: None,
                    };
                    t.form = Some(view(
                        "/password/signup",
                        vec![],
                        vec![name, email_input("email"), new_password_input(*min_length)],
                        "Create account",
                    ));
                    t.links = vec![(ctx.auth_url("/signin"), "I have an account: sign in")];
                }
                Form::Forgot => {
                    t.title = "Forgot your password?";
                    t.lines = vec![
                        "Enter your account's email address: we will mail you a link to choose \
                         a new password.",
                    ];
                    t.form = Some(view(
                        "/password/forgot",
                        vec![],
                        vec![email_input("username")],
                        "Send the link",
                    ));
                    t.links = vec![signin];
                }
                Form::Reset { token, user } => {
                    t.title = "Choose a new password";
                    t.lines = vec!["Every session of your account will be signed out."];
                    t.form = Some(view(
                        "/password/reset",
                        vec![("token", token.as_str()), ("user", user.as_str())],
                        vec![new_password_input(*min_length)],
                        "Set the password",
                    ));
                    t.links = vec![signin];
                }
            }
            *status
        }
        P::Message { title, lines, link } => {
            t.title = title;
            t.lines = lines.to_vec();
            t.links = vec![link.clone()];
            StatusCode::OK
        }
    };
    let html = render(&t)?;
    Ok(shell.respond(status, html))
}

/// The page of an invitation's link: the offer with the form that accepts it, or why it
/// cannot be accepted; `next` is where "not now" and "continue" go.
pub(crate) fn render_invitation_page(
    ctx: &Ctx<'_>,
    page: &super::InvitationPage<'_>,
    next: String,
) -> Result<RawResponse, AuthError> {
    use super::InvitationPage as P;
    let shell = Shell::new(&ctx.config.theme);
    let (title, line, status, form, link) = match page {
        P::Offer {
            organization,
            roles,
            token,
        } => (
            format!("Join {organization}"),
            format!(
                "You are invited to join {organization} as {}.",
                roles.join(", ")
            ),
            StatusCode::OK,
            Some(FormView {
                action: ctx.auth_url("/invitation"),
                hidden: vec![("token", *token)],
                inputs: Vec::new(),
                submit: "Accept the invitation",
            }),
            (next, "Not now"),
        ),
        P::Refused {
            status,
            title,
            line,
        } => (
            (*title).to_owned(),
            (*line).to_owned(),
            *status,
            None,
            (next, "Continue"),
        ),
    };
    let html = render(&FormPageTemplate {
        css: CSS,
        shell: &shell,
        title: &title,
        lines: vec![line.as_str()],
        error: None,
        form,
        csrf_token: &ctx.csrf_token,
        links: vec![link],
    })?;
    Ok(shell.respond(status, html).with_no_cache())
}

/// The built-in verify-request page.
pub(super) fn render_verify_request_page(ctx: &Ctx<'_>) -> Result<RawResponse, AuthError> {
    let base = ctx.req.url.site.base();
    let host = base.host_str().unwrap_or_default();
    let host = match base.port() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_owned(),
    };
    let shell = Shell::new(&ctx.config.theme);
    let html = render(&VerifyRequestTemplate {
        css: CSS,
        shell: &shell,
        origin: ctx.req.origin(),
        host: &host,
    })?;
    Ok(shell.respond(StatusCode::OK, html))
}

#[cfg(test)]
#[cfg(feature = "oauth")]
mod tests {
    use http_body_util::{BodyExt, Full};

    use crate::brand_icons::{WITH_ICON, brand_icon};
    use crate::providers::catalog::{self, GitHubOptions};
    use crate::providers::{OAuthProvider, ProviderStyle};

    /// The sign-in page of a configuration with these OAuth providers.
    async fn signin_html(providers: Vec<OAuthProvider>) -> String {
        let mut builder = crate::AuthConfig::builder()
            .secret("a unit test secret, long and random enough")
            .trust_host(true);
        for p in providers {
            builder = builder.provider(p.client_id("id").client_secret("secret"));
        }
        let auth = crate::Auth::new(builder.build().unwrap());
        let req = http::Request::get("http://localhost:3000/auth/signin")
            .body(Full::new(bytes::Bytes::new()))
            .unwrap();
        let body = auth.handle(req).await.into_body().collect().await.unwrap();
        String::from_utf8(body.to_bytes().to_vec()).unwrap()
    }

    fn custom(id: &str, name: &str) -> OAuthProvider {
        OAuthProvider::oauth(id, name)
            .authorization_url("https://idp.example.com/authorize")
            .token_url("https://idp.example.com/token")
            .userinfo_url("https://idp.example.com/userinfo")
    }

    /// The button of provider `id`, from its opening tag to its end.
    fn button<'a>(html: &'a str, id: &str) -> &'a str {
        let start = html
            .find(&format!("id=\"submitButton-{id}\""))
            .unwrap_or_else(|| panic!("no button for {id}"));
        let end = start + html[start..].find("</button>").unwrap();
        &html[start..end]
    }

    #[tokio::test]
    async fn a_brand_icon_replaces_the_monogram_where_there_is_one() {
        let html = signin_html(vec![
            catalog::github(GitHubOptions::default()),
            custom("acme", "Acme"),
            custom("twitch", "Twitch (custom logo)").style(ProviderStyle {
                logo: Some("https://example.com/twitch.svg".into()),
                ..ProviderStyle::default()
            }),
        ])
        .await;

        // An id with an icon: inline SVG in the button's text colour, no monogram.
        let github = button(&html, "github");
        let path = brand_icon("github").unwrap();
        assert!(
            github.contains(&format!(
                "<svg viewBox=\"0 0 24 24\" width=\"16\" height=\"16\" fill=\"currentColor\" aria-hidden=\"true\" focusable=\"false\"><path d=\"{path}\"/></svg>"
            )),
            "{github}"
        );
        assert!(!github.contains("provider-monogram"), "{github}");

        // An id without one: the monogram.
        assert_eq!(brand_icon("acme"), None);
        let acme = button(&html, "acme");
        assert!(
            acme.contains(
                "<span class=\"provider-logo provider-monogram\" aria-hidden=\"true\">A</span>"
            ),
            "{acme}"
        );
        assert!(!acme.contains("<svg"), "{acme}");

        // A configured logo wins over the brand icon.
        let twitch = button(&html, "twitch");
        assert!(brand_icon("twitch").is_some());
        assert!(
            twitch.contains("<img class=\"provider-logo\" src=\"https://example.com/twitch.svg\""),
            "{twitch}"
        );
        assert!(!twitch.contains("<svg"), "{twitch}");
    }

    #[test]
    fn badge_text_colour_reads_on_the_brand_colour() {
        use super::readable_on;
        for (brand, text) in [
            ("#000", "#fff"),
            ("#fff", "#000"),
            ("#1db954", "#000"),
            ("#FF4500", "#fff"),
            ("#32e6e2", "#000"),
            ("#1a73e8", "#fff"),
            ("#FFD21E", "#000"),
            ("#0052ffcc", "#fff"),
            ("#ff0", "#000"),
            ("#24292f", "#fff"),
            ("rebeccapurple", "#fff"),
            ("#12345", "#fff"),
            ("#gggggg", "#fff"),
        ] {
            assert_eq!(readable_on(brand), text, "{brand}");
        }
    }

    /// The generated path data is inlined into the page as it is: only SVG path characters,
    /// nothing that could end the attribute or open markup.
    #[test]
    fn every_brand_icon_is_plain_path_data() {
        assert!(WITH_ICON.len() >= 40, "{WITH_ICON:?}");
        assert!(WITH_ICON.is_sorted(), "sorted, as generated");
        for id in WITH_ICON {
            let path = brand_icon(id).unwrap_or_else(|| panic!("{id} has no icon"));
            assert!(path.starts_with(['M', 'm']), "{id}: {path}");
            let bad: Vec<char> = path
                .chars()
                .filter(|c| {
                    !(c.is_ascii_digit()
                        || " .,-+eE".contains(*c)
                        || "MmLlHhVvCcSsQqTtAaZz".contains(*c))
                })
                .collect();
            assert!(bad.is_empty(), "{id}: {bad:?}");
            for c in ['<', '>', '"', '&', '\''] {
                assert!(!path.contains(c), "{id}");
            }
        }
        // The brands the issue names, and a few ids that fall back to the monogram.
        for id in [
            "github", "gitlab", "google", "apple", "discord", "spotify", "twitter",
        ] {
            assert!(brand_icon(id).is_some(), "{id}");
        }
        for id in ["microsoft-entra-id", "credentials", "oidc", ""] {
            assert_eq!(brand_icon(id), None, "{id}");
        }
    }
}
