//! The Auth.js default sign-in mail (`lib/utils/email.ts`): subject `Sign in to <host>`, a
//! plain-text body and an HTML body with a themed button. Every sender (SMTP, the HTTP email
//! services, a host's own) can reuse it.
//!
//! ```
//! use authcore::providers::email::mail::SignInMail;
//! use authcore::types::Theme;
//!
//! let mail = SignInMail::new("https://example.com/auth/callback/email?token=t", &Theme::default())
//!     .unwrap();
//! assert_eq!(mail.subject, "Sign in to example.com");
//! assert_eq!(mail.text, "Sign in to example.com\nhttps://example.com/auth/callback/email?token=t\n\n");
//! assert!(mail.html.contains("example&#8203;.com"));
//! ```

use askama::Template;

use super::LinkPurpose;
use crate::callbacks::SecurityChange;
use crate::types::Theme;

/// Default button colour (Auth.js `#346df1`).
pub const DEFAULT_BRAND_COLOR: &str = "#346df1";
/// Default button text colour (Auth.js `#fff`).
pub const DEFAULT_BUTTON_TEXT: &str = "#fff";

/// Why the mail could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MailError {
    /// The sign-in link is not an absolute URL with a host.
    #[error("invalid sign-in link")]
    InvalidLink,
    /// The HTML template failed to render.
    #[error("cannot render the sign-in email: {0}")]
    Template(String),
}

/// A rendered link mail: Auth.js's sign-in mail, or the mail of another [`LinkPurpose`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SignInMail {
    /// `new URL(url).host`: host and non-default port.
    pub host: String,
    /// `Sign in to <host>`.
    pub subject: String,
    /// `Sign in to <host>\n<url>\n\n`.
    pub text: String,
    /// The HTML body.
    pub html: String,
}

impl SignInMail {
    /// Renders the Auth.js default mail for the sign-in link `url` with the config's theme.
    pub fn new(url: &str, theme: &Theme) -> Result<Self, MailError> {
        let host = link_host(url)?;
        let html = sign_in_html(url, &host, theme)?;
        Ok(SignInMail {
            subject: format!("Sign in to {host}"),
            text: format!("Sign in to {host}\n{url}\n\n"),
            html,
            host,
        })
    }

    /// Renders the default mail of a link for `purpose`: Auth.js's sign-in mail
    /// ([`SignInMail::new`]) for [`LinkPurpose::SignIn`], else a mail that says what the
    /// link does and that it can be ignored by whoever did not ask for it.
    pub fn for_purpose(url: &str, purpose: LinkPurpose, theme: &Theme) -> Result<Self, MailError> {
        let Some(words) = LinkWords::of(purpose) else {
            return SignInMail::new(url, theme);
        };
        let host = link_host(url)?;
        let subject = format!("{} {host}", words.heading);
        let text = format!("{subject}\n\n{}\n{url}\n\n{}\n", words.lead, words.footer);
        let template = LinkHtml {
            heading: words.heading,
            host_labels: host.split('.').collect(),
            lead: words.lead,
            button: words.button,
            footer: words.footer,
            url,
            color: Colors::of(theme),
        };
        let html = template
            .render()
            .map_err(|e| MailError::Template(e.to_string()))?;
        Ok(SignInMail {
            subject,
            text,
            html: format!("\n{html}\n"),
            host,
        })
    }
}

/// The words of a link mail other than Auth.js's sign-in mail.
struct LinkWords {
    /// Before the host, in the subject and the heading.
    heading: &'static str,
    /// What the link does.
    lead: &'static str,
    button: &'static str,
    /// What to do when it was not you.
    footer: &'static str,
}

impl LinkWords {
    fn of(purpose: LinkPurpose) -> Option<Self> {
        Some(match purpose {
            LinkPurpose::SignIn => return None,
            LinkPurpose::VerifyAddress => LinkWords {
                heading: "Confirm your email address for",
                lead: "Follow this link to confirm your address and finish making your account:",
                button: "Confirm address",
                footer: "If you did not sign up, you can safely ignore this email.",
            },
            LinkPurpose::ResetPassword => LinkWords {
                heading: "Reset your password for",
                lead: "Follow this link to choose a new password. It works once, for 30 minutes, \
                       and signs you out everywhere:",
                button: "Choose a new password",
                footer: "If you did not ask for this, you can safely ignore this email: your \
                         password stays as it is.",
            },
            LinkPurpose::ConfirmNewAddress => LinkWords {
                heading: "Confirm your new email address for",
                lead: "Follow this link to make this the address of your account:",
                button: "Confirm new address",
                footer: "If you did not ask for this, you can safely ignore this email.",
            },
            LinkPurpose::AccountExists => LinkWords {
                heading: "You already have an account at",
                lead: "Someone, probably you, tried to sign up with this address, which has \
                       an account already. Sign in, or reset your password, here:",
                button: "Sign in",
                footer: "If it was not you, you can safely ignore this email.",
            },
            LinkPurpose::NoAccount => LinkWords {
                heading: "Password reset asked for at",
                lead: "Someone, probably you, asked to reset a password with this address, \
                       but no account uses it. To make one, or to sign in another way:",
                button: "Continue",
                footer: "If it was not you, you can safely ignore this email.",
            },
            LinkPurpose::Invitation => LinkWords {
                heading: "You are invited to join",
                lead: "Follow this link to accept the invitation. You sign in, or make an \
                       account, with this address first:",
                button: "Accept invitation",
                footer: "If you did not expect this, you can safely ignore this email.",
            },
            LinkPurpose::AccountSetup => LinkWords {
                heading: "Your account is ready at",
                lead: "An administrator made you an account. Follow this link to set it up: \
                       it works once, for a limited time:",
                button: "Set up your account",
                footer: "If you did not expect this, you can safely ignore this email.",
            },
        })
    }
}

#[derive(Template)]
#[template(path = "email/link.html")]
struct LinkHtml<'a> {
    heading: &'a str,
    host_labels: Vec<&'a str>,
    lead: &'a str,
    button: &'a str,
    footer: &'a str,
    url: &'a str,
    color: Colors<'a>,
}

/// `new URL(url).host` (host plus non-default port).
pub fn link_host(url: &str) -> Result<String, MailError> {
    let parsed = url::Url::parse(url).map_err(|_| MailError::InvalidLink)?;
    let host = parsed.host_str().ok_or(MailError::InvalidLink)?;
    Ok(match parsed.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    })
}

/// A rendered security notice (beyond Auth.js): what changed, and a link to the account
/// page to review it.
///
/// ```
/// use authcore::callbacks::SecurityChange;
/// use authcore::providers::email::mail::SecurityNoticeMail;
/// use authcore::types::Theme;
///
/// let mail = SecurityNoticeMail::new(
///     SecurityChange::PasskeyAdded,
///     Some("https://example.com/auth/account"),
///     &Theme::default(),
/// )
/// .unwrap();
/// assert_eq!(mail.subject, "Security alert: a passkey was added to your account");
/// assert!(mail.text.contains("https://example.com/auth/account"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SecurityNoticeMail {
    /// `Security alert: <what changed>`.
    pub subject: String,
    /// The plain-text body.
    pub text: String,
    /// The HTML body.
    pub html: String,
}

impl SecurityNoticeMail {
    /// Renders the notice of `change`, linking to `account_url` (an absolute http(s) URL;
    /// without one the mail has no link), in the config's theme.
    pub fn new(
        change: SecurityChange,
        account_url: Option<&str>,
        theme: &Theme,
    ) -> Result<Self, MailError> {
        if let Some(url) = account_url {
            let parsed = url::Url::parse(url).map_err(|_| MailError::InvalidLink)?;
            if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
                return Err(MailError::InvalidLink);
            }
        }
        let description = change.description();
        let advice = "If you made this change, you can ignore this email. If not, someone \
                      else may be signed in as you";
        let text = match account_url {
            Some(url) => format!("{description}\n\n{advice}: review your account at\n{url}\n"),
            None => format!("{description}\n\n{advice}: review your account now.\n"),
        };
        let template = SecurityNoticeHtml {
            description,
            advice,
            url: account_url,
            color: Colors::of(theme),
        };
        let html = template
            .render()
            .map_err(|e| MailError::Template(e.to_string()))?;
        Ok(SecurityNoticeMail {
            subject: format!("Security alert: {}", headline(change)),
            text,
            html: format!("\n{html}\n"),
        })
    }
}

/// The subject's account of `change`, in lower case.
fn headline(change: SecurityChange) -> &'static str {
    match change {
        SecurityChange::PasskeyAdded => "a passkey was added to your account",
        SecurityChange::PasskeyRemoved => "a passkey was removed from your account",
        SecurityChange::TotpEnrolled => "an authenticator app was set up for your account",
        SecurityChange::TotpDisabled => "two-factor authentication was turned off",
        SecurityChange::RecoveryCodesRenewed => "new recovery codes were made for your account",
        SecurityChange::ProviderLinked => "a new sign-in method was linked to your account",
        SecurityChange::AccountDeleted => "your account was deleted",
        SecurityChange::PasswordChanged => "your password was changed",
        SecurityChange::EmailChanged => "your account's email address was changed",
    }
}

#[derive(Template)]
#[template(path = "email/security-notice.html")]
struct SecurityNoticeHtml<'a> {
    description: &'a str,
    advice: &'a str,
    url: Option<&'a str>,
    color: Colors<'a>,
}

#[derive(Template)]
#[template(path = "email/signin.html")]
struct SignInHtml<'a> {
    url: &'a str,
    /// The host split at its dots; the template joins them with `&#8203;.` so mail clients
    /// do not turn the host into a link.
    host_labels: Vec<&'a str>,
    color: Colors<'a>,
}

struct Colors<'a> {
    background: &'a str,
    text: &'a str,
    main_background: &'a str,
    button_background: &'a str,
    button_border: &'a str,
    button_text: &'a str,
}

impl<'a> Colors<'a> {
    /// The Auth.js mail colours with the theme's brand and button text colours.
    fn of(theme: &'a Theme) -> Self {
        let brand = css_color(&theme.brand_color, DEFAULT_BRAND_COLOR);
        Colors {
            background: "#f9f9f9",
            text: "#444",
            main_background: "#fff",
            button_background: brand,
            button_border: brand,
            button_text: css_color(&theme.button_text, DEFAULT_BUTTON_TEXT),
        }
    }
}

/// A theme colour if it is a plain CSS colour token, else `default` (never raw into `style`).
fn css_color<'a>(value: &'a str, default: &'a str) -> &'a str {
    crate::theme::plain_css_color(value).unwrap_or(default)
}

/// Auth.js default HTML body. The link and host are HTML-escaped by askama; theme colours
/// that are not plain colour tokens are replaced by the defaults (Auth.js interpolates them
/// raw).
fn sign_in_html(url: &str, host: &str, theme: &Theme) -> Result<String, MailError> {
    let template = SignInHtml {
        url,
        host_labels: host.split('.').collect(),
        color: Colors::of(theme),
    };
    let body = template
        .render()
        .map_err(|e| MailError::Template(e.to_string()))?;
    Ok(format!("\n{body}\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_escapes_the_link_and_obfuscates_the_host() {
        let mail =
            SignInMail::new("https://authjs.test/cb?a=1&b=\"<x>\"", &Theme::default()).unwrap();
        assert_eq!(mail.subject, "Sign in to authjs.test");
        let html = &mail.html;
        assert!(
            html.contains("Sign in to <strong>authjs&#8203;.test</strong>"),
            "{html}"
        );
        assert!(
            html.contains("href=\"https://authjs.test/cb?a=1&#38;b="),
            "{html}"
        );
        assert!(!html.contains("<x>") && !html.contains("b=\"<"), "{html}");
        assert!(html.contains("bgcolor=\"#346df1\""));
        assert!(html.contains("color: #fff; text-decoration: none"));
    }

    #[test]
    fn theme_colours_and_hostile_values() {
        let theme = Theme {
            brand_color: "#123456".into(),
            button_text: "#000".into(),
            ..Theme::default()
        };
        let mail = SignInMail::new("https://a.b/", &theme).unwrap();
        assert!(mail.html.contains("border: 1px solid #123456"));
        assert!(mail.html.contains("color: #000; text-decoration: none"));
        let hostile = Theme {
            brand_color: "red\" onload=\"alert(1)".into(),
            button_text: "#fff;background:url(x)".into(),
            ..Theme::default()
        };
        let mail = SignInMail::new("https://a.b/", &hostile).unwrap();
        assert!(!mail.html.contains("alert") && !mail.html.contains("url(x)"));
        assert!(mail.html.contains("bgcolor=\"#346df1\""));
    }

    #[test]
    fn security_notice_subject_text_and_link() {
        let url = "https://authjs.test/auth/account";
        for change in SecurityChange::ALL {
            let mail = SecurityNoticeMail::new(change, Some(url), &Theme::default()).unwrap();
            assert!(mail.subject.starts_with("Security alert: "), "{mail:?}");
            assert!(!mail.subject.contains('\n') && !mail.subject.ends_with('.'));
            assert!(mail.text.starts_with(change.description()), "{}", mail.text);
            assert!(mail.text.ends_with(&format!("\n{url}\n")), "{}", mail.text);
            assert!(
                mail.html.contains(&format!("href=\"{url}\"")),
                "{}",
                mail.html
            );
        }
        let mail =
            SecurityNoticeMail::new(SecurityChange::PasskeyAdded, Some(url), &Theme::default())
                .unwrap();
        assert_eq!(
            mail.subject,
            "Security alert: a passkey was added to your account"
        );
        assert!(mail.html.contains("A passkey was added to your account."));
        assert!(mail.html.contains("bgcolor=\"#346df1\""), "{}", mail.html);
    }

    #[test]
    fn security_notice_escapes_the_link_and_refuses_other_schemes() {
        let mail = SecurityNoticeMail::new(
            SecurityChange::TotpDisabled,
            Some("https://a.b/account?x=1&y=\"<script>\""),
            &Theme::default(),
        )
        .unwrap();
        assert!(
            mail.html.contains("href=\"https://a.b/account?x=1&#38;y="),
            "{}",
            mail.html
        );
        assert!(!mail.html.contains("<script>"), "{}", mail.html);
        for bad in ["javascript:alert(1)", "/auth/account", "data:text/html,x"] {
            assert_eq!(
                SecurityNoticeMail::new(SecurityChange::TotpDisabled, Some(bad), &Theme::default()),
                Err(MailError::InvalidLink)
            );
        }
    }

    #[test]
    fn security_notice_without_a_link() {
        let mail = SecurityNoticeMail::new(SecurityChange::AccountDeleted, None, &Theme::default())
            .unwrap();
        assert_eq!(mail.subject, "Security alert: your account was deleted");
        assert!(
            !mail.text.contains("http") && !mail.html.contains("href"),
            "{mail:?}"
        );
        assert!(mail.text.contains("review your account now."));
    }

    #[test]
    fn every_purpose_has_its_own_mail() {
        let url = "https://a.b:8443/auth/password/reset?token=t&user=\"<u>\"";
        let sign_in = SignInMail::new(url, &Theme::default()).unwrap();
        assert_eq!(
            SignInMail::for_purpose(url, LinkPurpose::SignIn, &Theme::default()).unwrap(),
            sign_in
        );
        let mut subjects = std::collections::HashSet::new();
        for purpose in LinkPurpose::ALL {
            let mail = SignInMail::for_purpose(url, purpose, &Theme::default()).unwrap();
            assert!(subjects.insert(mail.subject.clone()), "{purpose:?}");
            assert!(mail.subject.ends_with(" a.b:8443"), "{}", mail.subject);
            assert!(mail.text.contains(url), "{purpose:?}");
            assert!(!mail.html.contains("<u>"), "{}", mail.html);
            assert!(
                mail.html
                    .contains("href=\"https://a.b:8443/auth/password/reset?token=t&#38;user=")
            );
        }
        assert_eq!(
            SignInMail::for_purpose(
                "javascript:x",
                LinkPurpose::ResetPassword,
                &Theme::default()
            ),
            Err(MailError::InvalidLink)
        );
    }

    #[test]
    fn text_and_host_follow_authjs() {
        assert_eq!(link_host("https://authjs.test/x").unwrap(), "authjs.test");
        assert_eq!(
            link_host("http://localhost:3000/x").unwrap(),
            "localhost:3000"
        );
        assert_eq!(link_host("not a url"), Err(MailError::InvalidLink));
        let mail = SignInMail::new("https://a.b/c", &Theme::default()).unwrap();
        assert_eq!(mail.text, "Sign in to a.b\nhttps://a.b/c\n\n");
    }
}
