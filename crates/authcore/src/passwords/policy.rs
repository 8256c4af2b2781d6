//! The password policy of new and changed passwords, after NIST SP 800-63B §5.1.1.2
//! ("Memorized Secret Verifiers"): a length range and a list of passwords to refuse, no
//! composition rules (no "one digit, one symbol").
//!
//! A password is read as Unicode: NFKC-normalised, then counted in code points, so `é` typed
//! as one character or as `e` and a combining accent counts once, and a full-width `Ｐ` is a
//! `P`. It is refused when it
//! - holds a control character (NUL included);
//! - is shorter than the minimum (12 by default, at least 8) or longer than the maximum
//!   (128, the cap on the work of hashing it; the hash also refuses more than
//!   [`MAX_PASSWORD_BYTES`] bytes as typed);
//! - is one repeated character, a short block repeated, or a run of consecutive characters
//!   (`aaaaaaaaaaaa`, `abcabcabcabc`, `123456789012`, `abcdefghijkl`, `1234abcd5678`);
//! - contains the user's username or the local part of their email address;
//! - is on the list of common passwords shipped with authcore (compared case-insensitively);
//! - optionally, is known to a breach service ([`BreachCheck`], Have I Been Pwned's range
//!   API or one like it), which is asked only for the first five hex digits of the
//!   password's SHA-1 (k-anonymity).
//!
//! The shipped list (`common-passwords.txt`) is the 10,000 most frequent passwords of at
//! least 8 characters in zxcvbn's password list (MIT; from the npm package
//! `@zxcvbn-ts/language-common`), lowercased: shorter ones never pass the length check.

use std::collections::HashSet;
use std::fmt;
use std::future::Future;
use std::pin::pin;
use std::sync::{Arc, OnceLock};
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use unicode_normalization::UnicodeNormalization as _;

use super::hash::MAX_PASSWORD_BYTES;
use crate::box_error::BoxError;
use crate::http_client::HttpClient;

/// The default minimum length, in characters (NFKC code points).
const DEFAULT_MIN_LENGTH: usize = 12;
/// The lowest minimum a policy may set (NIST SP 800-63B: at least 8).
const LOWEST_MIN_LENGTH: usize = 8;
/// The highest maximum a policy may set, and the default: the cap on hashing work.
const HIGHEST_MAX_LENGTH: usize = 128;
/// Identities shorter than this are not looked for in a password: a two-letter username
/// would refuse half the dictionary.
const MIN_IDENTITY_CHARS: usize = 3;
/// The longest block whose repetition makes a password repetitive (`abcabcabcabc`).
const MAX_REPEATED_BLOCK: usize = 4;
/// The shortest run of one character or of consecutive ones counted as a sequence.
const MIN_RUN: usize = 3;

/// Why a password is refused. [`code`](Self::code) is stable, for JSON answers; the
/// `Display` message tells the user what to change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyViolation {
    /// Fewer characters than the policy's minimum.
    #[error("this password is too short: use at least {min} characters")]
    TooShort {
        /// The policy's minimum, in characters.
        min: usize,
    },
    /// More characters than the policy's maximum.
    #[error("this password is too long: use at most {max} characters")]
    TooLong {
        /// The policy's maximum, in characters.
        max: usize,
    },
    /// On the list of common passwords shipped with authcore.
    #[error("this password is too common: it appears in lists of breached passwords")]
    Common,
    /// Contains the user's username or email address.
    #[error("this password contains your username or email address: choose one without them")]
    ContainsIdentity,
    /// One repeated character, a short block repeated or a run of consecutive characters.
    #[error(
        "this password is too predictable: avoid repeated characters and sequences such as \
         aaaa, abcabc or 1234"
    )]
    Repetitive,
    /// Holds a control character (NUL, a line break, escape …).
    #[error("this password contains a control character (such as a line break): remove it")]
    InvalidCharacter,
    /// Known to the breach service ([`BreachCheck`]).
    #[error("this password has appeared in a data breach: choose a different one")]
    Breached,
}

impl PolicyViolation {
    /// A stable machine code: `too_short`, `too_long`, `common`, `contains_identity`,
    /// `repetitive`, `invalid_character` or `breached`.
    pub fn code(&self) -> &'static str {
        match self {
            PolicyViolation::TooShort { .. } => "too_short",
            PolicyViolation::TooLong { .. } => "too_long",
            PolicyViolation::Common => "common",
            PolicyViolation::ContainsIdentity => "contains_identity",
            PolicyViolation::Repetitive => "repetitive",
            PolicyViolation::InvalidCharacter => "invalid_character",
            PolicyViolation::Breached => "breached",
        }
    }
}

/// A policy that cannot be built: the message says which setting is out of range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyConfigError {
    /// The minimum length is below 8.
    #[error("password policy: the minimum length {min} is below {LOWEST_MIN_LENGTH}")]
    MinLengthTooLow {
        /// The minimum asked for.
        min: usize,
    },
    /// The maximum length is above 128.
    #[error("password policy: the maximum length {max} is above {HIGHEST_MAX_LENGTH}")]
    MaxLengthTooHigh {
        /// The maximum asked for.
        max: usize,
    },
    /// The minimum length is above the maximum.
    #[error("password policy: the minimum length {min} is above the maximum {max}")]
    MinAboveMax {
        /// The minimum asked for.
        min: usize,
        /// The maximum asked for.
        max: usize,
    },
}

/// What is known of the user whose password is checked: a password containing their
/// username or their email address's local part is refused (compared case-insensitively,
/// after NFKC; identities shorter than 3 characters are not looked for).
///
/// ```
/// use authcore::passwords::PasswordContext;
///
/// let context = PasswordContext::new().username("alice").email("alice.liddell@example.com");
/// # let _ = context;
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct PasswordContext<'a> {
    username: Option<&'a str>,
    email: Option<&'a str>,
}

impl<'a> PasswordContext<'a> {
    /// No identity: only the user-independent checks apply.
    pub fn new() -> Self {
        PasswordContext::default()
    }

    /// With the user's username (an email address given here counts as one).
    pub fn username(mut self, username: &'a str) -> Self {
        self.username = Some(username);
        self
    }

    /// With the user's email address: its local part (and that part before a `+tag`) is
    /// looked for.
    pub fn email(mut self, email: &'a str) -> Self {
        self.email = Some(email);
        self
    }

    /// The identities to look for, normalised like the password.
    fn identities(&self) -> Vec<String> {
        let mut found = Vec::new();
        let mut add = |s: &str| {
            let s = fold(s.trim());
            if s.chars().count() >= MIN_IDENTITY_CHARS && !found.contains(&s) {
                found.push(s);
            }
        };
        for value in [self.username, self.email].into_iter().flatten() {
            add(value);
            if let Some((local, _domain)) = value.rsplit_once('@') {
                add(local);
                if let Some((before_tag, _tag)) = local.split_once('+') {
                    add(before_tag);
                }
            }
        }
        found
    }
}

/// The password policy: checks a new password before it is hashed and stored.
///
/// `Default` is the recommended policy: 12 to 128 characters, the shipped list of common
/// passwords. The check is synchronous; [`check_with_breaches`](Self::check_with_breaches)
/// adds the optional breach service.
///
/// ```
/// use authcore::passwords::{PasswordContext, PasswordPolicy};
///
/// let policy = PasswordPolicy::default();
/// let alice = PasswordContext::new().username("alice").email("alice@example.com");
/// assert_eq!(policy.check("Password1234", &alice).unwrap_err().code(), "common");
/// assert_eq!(policy.check("alice-in-wonderland", &alice).unwrap_err().code(), "contains_identity");
/// assert!(policy.check("correct horse battery staple", &alice).is_ok());
///
/// let shorter = PasswordPolicy::builder().min_length(10).build().unwrap();
/// assert_eq!(shorter.min_length(), 10);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PasswordPolicy {
    min_length: usize,
    max_length: usize,
}

impl Default for PasswordPolicy {
    fn default() -> Self {
        PasswordPolicy {
            min_length: DEFAULT_MIN_LENGTH,
            max_length: HIGHEST_MAX_LENGTH,
        }
    }
}

/// Builds a [`PasswordPolicy`]; [`build`](Self::build) refuses settings out of range.
#[derive(Debug, Clone)]
#[must_use]
pub struct PasswordPolicyBuilder {
    policy: PasswordPolicy,
}

impl PasswordPolicyBuilder {
    /// The minimum length in characters (NFKC code points): 12 by default, at least 8.
    pub fn min_length(mut self, min: usize) -> Self {
        self.policy.min_length = min;
        self
    }

    /// The maximum length in characters (NFKC code points): 128 by default, never above.
    pub fn max_length(mut self, max: usize) -> Self {
        self.policy.max_length = max;
        self
    }

    /// The policy, or why its settings are out of range.
    pub fn build(self) -> Result<PasswordPolicy, PolicyConfigError> {
        let PasswordPolicy {
            min_length: min,
            max_length: max,
        } = self.policy;
        if min < LOWEST_MIN_LENGTH {
            return Err(PolicyConfigError::MinLengthTooLow { min });
        }
        if max > HIGHEST_MAX_LENGTH {
            return Err(PolicyConfigError::MaxLengthTooHigh { max });
        }
        if min > max {
            return Err(PolicyConfigError::MinAboveMax { min, max });
        }
        Ok(self.policy)
    }
}

impl PasswordPolicy {
    /// A builder starting from the defaults.
    pub fn builder() -> PasswordPolicyBuilder {
        PasswordPolicyBuilder {
            policy: PasswordPolicy::default(),
        }
    }

    /// The minimum length, in characters.
    pub fn min_length(&self) -> usize {
        self.min_length
    }

    /// The maximum length, in characters.
    pub fn max_length(&self) -> usize {
        self.max_length
    }

    /// Checks `password` for the user described by `context`, offline: the first rule it
    /// breaks, in the order control characters, length, repetition, identity, common list.
    pub fn check(
        &self,
        password: &str,
        context: &PasswordContext<'_>,
    ) -> Result<(), PolicyViolation> {
        if password.chars().any(char::is_control) {
            return Err(PolicyViolation::InvalidCharacter);
        }
        // Beyond what hashing takes; also bounds the work of normalising below.
        if password.len() > MAX_PASSWORD_BYTES {
            return Err(PolicyViolation::TooLong {
                max: self.max_length,
            });
        }
        let normalised: String = password.nfkc().collect();
        if normalised.chars().any(char::is_control) {
            return Err(PolicyViolation::InvalidCharacter);
        }
        let length = normalised.chars().count();
        if length > self.max_length {
            return Err(PolicyViolation::TooLong {
                max: self.max_length,
            });
        }
        if length < self.min_length {
            return Err(PolicyViolation::TooShort {
                min: self.min_length,
            });
        }
        let folded = normalised.to_lowercase();
        if is_repetitive(&folded) {
            return Err(PolicyViolation::Repetitive);
        }
        if context
            .identities()
            .iter()
            .any(|identity| folded.contains(identity.as_str()))
        {
            return Err(PolicyViolation::ContainsIdentity);
        }
        if common_passwords().contains(folded.as_str()) {
            return Err(PolicyViolation::Common);
        }
        Ok(())
    }

    /// [`check`](Self::check), then, when it passes and `breaches` is given, asks the breach
    /// service whether the password appeared in a breach.
    ///
    /// The service fails open: when it cannot be reached, answers an error or a body it
    /// cannot read, or takes longer than its timeout, the password is accepted and a
    /// warning is logged (without the password or its hash), so that an outage of a third
    /// party never blocks sign-ups and password changes.
    pub async fn check_with_breaches(
        &self,
        password: &str,
        context: &PasswordContext<'_>,
        breaches: Option<&BreachCheck>,
    ) -> Result<(), PolicyViolation> {
        self.check(password, context)?;
        let Some(service) = breaches else {
            return Ok(());
        };
        match service.times_seen(password).await {
            Ok(0) => Ok(()),
            Ok(_) => Err(PolicyViolation::Breached),
            Err(e) => {
                tracing::warn!(
                    service = %service.range_url,
                    error = %e,
                    "password breach check failed: the password is accepted without it"
                );
                Ok(())
            }
        }
    }
}

/// NFKC, then lower case: how passwords, identities and the list are compared.
fn fold(s: &str) -> String {
    s.nfkc().collect::<String>().to_lowercase()
}

/// The shipped list of common passwords, read once.
fn common_passwords() -> &'static HashSet<&'static str> {
    static LIST: OnceLock<HashSet<&'static str>> = OnceLock::new();
    LIST.get_or_init(|| {
        include_str!("common-passwords.txt")
            .lines()
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .collect()
    })
}

/// One character, a block of up to [`MAX_REPEATED_BLOCK`] characters repeated, or nothing
/// but runs of [`MIN_RUN`] or more of one character or of consecutive characters.
fn is_repetitive(folded: &str) -> bool {
    let chars: Vec<char> = folded.chars().collect();
    repeats_a_block(&chars) || only_runs(&chars)
}

/// `abababab`, `abcabcabc`, `pass` repeated: the whole password is one short block
/// repeated (the last repetition may be cut short).
fn repeats_a_block(chars: &[char]) -> bool {
    (1..=MAX_REPEATED_BLOCK).any(|block| {
        chars.len() >= 2 * block && chars.iter().skip(block).zip(chars).all(|(a, b)| a == b)
    })
}

/// The step from `a` to `b` within a run: the same character (0), the next (1) or the
/// previous (-1); digits wrap around (`…890…`, `…098…`).
fn step(a: char, b: char) -> Option<i8> {
    if a == b {
        return Some(0);
    }
    if let (Some(x), Some(y)) = (a.to_digit(10), b.to_digit(10)) {
        return match (y + 10 - x) % 10 {
            1 => Some(1),
            9 => Some(-1),
            _ => None,
        };
    }
    match i64::from(u32::from(b)) - i64::from(u32::from(a)) {
        1 => Some(1),
        -1 => Some(-1),
        _ => None,
    }
}

/// Splits the password into maximal runs with one step each (`aaaa`, `1234`, `dcba`) and
/// answers whether every run has at least [`MIN_RUN`] characters.
fn only_runs(chars: &[char]) -> bool {
    let mut start = 0;
    while start < chars.len() {
        let mut end = start + 1;
        let mut run_step = None;
        while let Some(&next) = chars.get(end) {
            let Some(s) = step(chars[end - 1], next) else {
                break;
            };
            match run_step {
                None => run_step = Some(s),
                Some(r) if r == s => {}
                Some(_) => break,
            }
            end += 1;
        }
        if end - start < MIN_RUN {
            return false;
        }
        start = end;
    }
    !chars.is_empty()
}

/// The breach service's URL, Have I Been Pwned's range API.
const PWNED_PASSWORDS_RANGE_URL: &str = "https://api.pwnedpasswords.com/range/";
/// The default timeout of one breach lookup: the user waits for it.
const DEFAULT_BREACH_TIMEOUT: Duration = Duration::from_secs(3);
/// Hex digits of the SHA-1 sent to the service; the other 35 stay here.
const PREFIX_HEX: usize = 5;

/// A breach service with a k-anonymity range API, as Have I Been Pwned's Pwned Passwords:
/// `GET {range URL}{first 5 hex digits of the SHA-1}` answers the suffixes (the other 35
/// hex digits) of the breached passwords' hashes under that prefix, one `SUFFIX:COUNT` a
/// line. Only the prefix leaves the host; the request asks for padding (`Add-Padding:
/// true`: entries of count 0 that are ignored), so the answer's size does not tell the
/// prefix either.
///
/// Requests go through authcore's [`HttpClient`] (the shared reqwest client with the
/// `reqwest` feature, or one given with [`http_client`](Self::http_client)), bounded by
/// [`timeout`](Self::timeout) (3 s by default).
///
/// ```
/// use std::time::Duration;
/// use authcore::passwords::BreachCheck;
///
/// let hibp = BreachCheck::pwned_passwords().timeout(Duration::from_secs(2));
/// let own = BreachCheck::new("https://breaches.internal.example/range/").unwrap();
/// # let _ = (hibp, own);
/// ```
#[derive(Clone)]
pub struct BreachCheck {
    range_url: String,
    client: Arc<dyn HttpClient>,
    timeout: Duration,
}

impl fmt::Debug for BreachCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BreachCheck")
            .field("range_url", &self.range_url)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// Why a breach lookup failed (a policy check then accepts the password: see
/// [`PasswordPolicy::check_with_breaches`]), or why a [`BreachCheck`] cannot be made.
/// No variant holds the password or its hash.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BreachCheckError {
    /// The range URL is not an `https` URL (or `http` on a loopback address) without query
    /// or fragment.
    #[error("breach service: not a usable range URL: {0}")]
    InvalidUrl(String),
    /// No answer within the timeout.
    #[error("breach service: no answer within {0:?}")]
    Timeout(Duration),
    /// The request failed (connection refused, TLS, a client without transport).
    #[error("breach service: the request failed: {0}")]
    Request(#[source] BoxError),
    /// An answer other than 200.
    #[error("breach service: answered HTTP {0}")]
    Status(u16),
    /// A body that is not lines of `SUFFIX:COUNT`.
    #[error("breach service: unreadable answer: {0}")]
    MalformedResponse(&'static str),
}

impl BreachCheck {
    /// Have I Been Pwned's Pwned Passwords (`https://api.pwnedpasswords.com/range/`).
    pub fn pwned_passwords() -> Self {
        BreachCheck::with_url(PWNED_PASSWORDS_RANGE_URL.to_owned())
    }

    /// A service with the same API at `range_url` (the prefix is appended to it; a missing
    /// final `/` is added). It must be `https`, or `http` on a loopback address.
    pub fn new(range_url: &str) -> Result<Self, BreachCheckError> {
        let url = url::Url::parse(range_url)
            .map_err(|e| BreachCheckError::InvalidUrl(format!("{range_url:?}: {e}")))?;
        let loopback = match url.host() {
            Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        };
        let scheme_ok = url.scheme() == "https" || (url.scheme() == "http" && loopback);
        if !scheme_ok || url.host().is_none() {
            return Err(BreachCheckError::InvalidUrl(format!(
                "{range_url:?}: use https (http only on a loopback address)"
            )));
        }
        if url.query().is_some() || url.fragment().is_some() || !url.username().is_empty() {
            return Err(BreachCheckError::InvalidUrl(format!(
                "{range_url:?}: no query, fragment or credentials"
            )));
        }
        let mut range_url = url.to_string();
        if !range_url.ends_with('/') {
            range_url.push('/');
        }
        Ok(BreachCheck::with_url(range_url))
    }

    fn with_url(range_url: String) -> Self {
        BreachCheck {
            range_url,
            client: crate::http_client::default_client()
                .unwrap_or_else(|| Arc::new(crate::http_client::NoClient)),
            timeout: DEFAULT_BREACH_TIMEOUT,
        }
    }

    /// The HTTP client of the lookups (it must not follow redirects).
    pub fn http_client(mut self, client: Arc<dyn HttpClient>) -> Self {
        self.client = client;
        self
    }

    /// The most a lookup may take, connection included (3 s by default).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How many times the service has seen `password` in breaches (0: never). The SHA-1
    /// is of the password as typed (UTF-8, not normalised), as the service's corpus is.
    pub async fn times_seen(&self, password: &str) -> Result<u64, BreachCheckError> {
        let digest = aws_lc_rs::digest::digest(
            &aws_lc_rs::digest::SHA1_FOR_LEGACY_USE_ONLY,
            password.as_bytes(),
        );
        let hash = hex::encode_upper(digest.as_ref());
        let (prefix, suffix) = hash.split_at(PREFIX_HEX);
        let request = http::Request::get(format!("{}{prefix}", self.range_url))
            .header("add-padding", "true")
            .header(http::header::ACCEPT, "text/plain")
            .body(Bytes::new())
            .map_err(|e| BreachCheckError::InvalidUrl(e.to_string()))?;
        let response = with_timeout(self.timeout, self.client.send(request))
            .await
            .ok_or(BreachCheckError::Timeout(self.timeout))?
            .map_err(BreachCheckError::Request)?;
        if response.status() != http::StatusCode::OK {
            return Err(BreachCheckError::Status(response.status().as_u16()));
        }
        count_in_range(response.body(), suffix)
    }
}

/// Reads a range answer (`SUFFIX:COUNT` lines) and answers the count of `suffix`, 0 when it
/// is absent or only there as padding.
fn count_in_range(body: &[u8], suffix: &str) -> Result<u64, BreachCheckError> {
    let text =
        std::str::from_utf8(body).map_err(|_| BreachCheckError::MalformedResponse("not UTF-8"))?;
    let mut seen = 0;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let (entry, count) = line
            .split_once(':')
            .ok_or(BreachCheckError::MalformedResponse("a line without `:`"))?;
        if entry.len() != 40 - PREFIX_HEX || !entry.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(BreachCheckError::MalformedResponse(
                "a line without a 35-digit hex suffix",
            ));
        }
        let count: u64 = count
            .trim()
            .parse()
            .map_err(|_| BreachCheckError::MalformedResponse("a count that is not a number"))?;
        if entry.eq_ignore_ascii_case(suffix) {
            seen = seen.max(count);
        }
    }
    Ok(seen)
}

/// `future`'s output, or `None` when `timeout` passes first (the future is then dropped,
/// which cancels the request). The timer is `futures-timer`'s, so it runs on any executor.
async fn with_timeout<T>(timeout: Duration, future: impl Future<Output = T>) -> Option<T> {
    let mut future = pin!(future);
    let mut delay = pin!(futures_timer::Delay::new(timeout));
    std::future::poll_fn(|cx| {
        if let Poll::Ready(out) = future.as_mut().poll(cx) {
            return Poll::Ready(Some(out));
        }
        if delay.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        Poll::Pending
    })
    .await
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// A long passphrase that breaks no rule.
    const GOOD: &str = "correct horse battery staple";

    fn code(
        policy: &PasswordPolicy,
        password: &str,
        context: &PasswordContext<'_>,
    ) -> &'static str {
        match policy.check(password, context) {
            Ok(()) => "ok",
            Err(v) => v.code(),
        }
    }

    #[test]
    fn each_rule_answers_its_code() {
        let policy = PasswordPolicy::default();
        let none = PasswordContext::new();
        let alice = PasswordContext::new()
            .username("Alice")
            .email("mad.hatter+auth@example.com");
        let long = "Kx9-mWq2-".repeat(15);
        let cases: &[(&str, &str, &PasswordContext<'_>)] = &[
            // Length: 12 vs 11, 128 vs 129 code points.
            ("aB3$xY9!qW2e", "ok", &none),
            ("aB3$xY9!qW2", "too_short", &none),
            ("", "too_short", &none),
            (&long[..128], "ok", &none),
            (&long[..129], "too_long", &none),
            // Control characters, before and after a would-be good password.
            ("correct horse\0battery staple", "invalid_character", &none),
            ("correct horse battery staple\n", "invalid_character", &none),
            (
                "\u{7f}correct horse battery staple",
                "invalid_character",
                &none,
            ),
            (
                "correct horse\u{9b}battery staple",
                "invalid_character",
                &none,
            ),
            // Repetition and sequences.
            ("aaaaaaaaaaaa", "repetitive", &none),
            ("AAAAAAAAAAAA", "repetitive", &none),
            ("123456789012", "repetitive", &none),
            ("abcdefghijkl", "repetitive", &none),
            ("lkjihgfedcba", "repetitive", &none),
            ("098765432109", "repetitive", &none),
            ("1234abcd5678", "repetitive", &none),
            ("aaabbbcccddd", "repetitive", &none),
            ("abababababab", "repetitive", &none),
            ("abc1abc1abc1", "repetitive", &none),
            ("xyzxyzxyzxyz", "repetitive", &none),
            // Identity: username or email local part, any case, after NFKC.
            ("my-alice-password-2024", "contains_identity", &alice),
            ("my-ALICE-password-2024", "contains_identity", &alice),
            ("my-ＡＬＩＣＥ-password-2024", "contains_identity", &alice),
            ("i-am-the-Mad.Hatter!", "contains_identity", &alice),
            ("mad.hatter+auth is me", "contains_identity", &alice),
            ("my-alice-password-2024", "ok", &none),
            // The shipped list, any case, after NFKC (full-width letters and digits).
            ("Password1234", "common", &none),
            ("password1234", "common", &none),
            ("PASSWORD1234", "common", &none),
            ("Ｐａｓｓｗｏｒｄ１２３４", "common", &none),
            ("qwertyuiop123", "common", &none),
            ("1qaz2wsx3edc", "common", &none),
            ("leavemealone", "common", &none),
            ("administrator", "common", &none),
            // Accepted.
            (GOOD, "ok", &alice),
            ("Tr0ub4dor&3-kettle-velvet", "ok", &alice),
            ("gelb Zebra küsst 9 Wolken", "ok", &alice),
        ];
        for (password, expected, context) in cases {
            assert_eq!(
                code(&policy, password, context),
                *expected,
                "{password:?} with {context:?}"
            );
        }
    }

    #[test]
    fn length_is_counted_in_code_points_after_nfkc() {
        let policy = PasswordPolicy::default();
        let none = PasswordContext::new();
        let cases: &[(&str, &str)] = &[
            // Twelve emoji: 12 code points (48 bytes).
            ("🐙🦀🌵🎈🧲🪁🍉🚲🛶🎻🧊🦉", "ok"),
            ("🐙🦀🌵🎈🧲🪁🍉🚲🛶🎻🧊", "too_short"),
            // A ZWJ sequence (woman, ZWJ, laptop) is three code points.
            ("👩\u{200d}💻🐙🦀🌵🎈🧲🪁🍉🚲🛶", "ok"),
            ("👩\u{200d}💻🐙🦀🌵🎈🧲🪁🍉🚲", "too_short"),
            // `e` + combining acute composes to `é`: 22 code points typed, 11 counted.
            (
                "e\u{301}a\u{301}i\u{301}o\u{301}u\u{301}n\u{303}c\u{327}a\u{300}e\u{300}u\u{308}o\u{302}",
                "too_short",
            ),
            (
                "e\u{301}a\u{301}i\u{301}o\u{301}u\u{301}n\u{303}c\u{327}a\u{300}e\u{300}u\u{308}o\u{302}y",
                "ok",
            ),
            // The ligature `ﬁ` is two letters after NFKC: 11 typed, 12 counted.
            ("ﬁrework-sky", "ok"),
            ("ﬁrework-sk", "too_short"),
        ];
        for (password, expected) in cases {
            assert_eq!(code(&policy, password, &none), *expected, "{password:?}");
        }
        // 128 four-byte emoji are 512 bytes, the most hashing takes; 129 are too many.
        let emoji = |n| "🐙🦀🌵🎈🧲".repeat(26).chars().take(n).collect::<String>();
        assert_eq!(code(&policy, &emoji(128), &none), "ok");
        assert_eq!(code(&policy, &emoji(129), &none), "too_long");
    }

    #[test]
    fn a_long_random_passphrase_is_accepted() {
        let policy = PasswordPolicy::default();
        let none = PasswordContext::new();
        for password in [
            "vivid-otter-spoke-plainly-under-4-copper-moons",
            "Zq8#nL2@wE5!rT7$yU1%",
            "la lune bleue chante à minuit sur le vieux pont",
            "ничего не бывает просто так",
            &"Kx9-mWq2-".repeat(14),
        ] {
            assert_eq!(
                policy.check(password, &none),
                Ok(()),
                "{password:?} ({} chars)",
                password.chars().count()
            );
        }
    }

    #[test]
    fn configured_lengths_apply_and_are_validated() {
        let eight = PasswordPolicy::builder().min_length(8).build().unwrap();
        let none = PasswordContext::new();
        assert_eq!(code(&eight, "Zq8#nL2@", &none), "ok");
        assert_eq!(code(&eight, "Zq8#nL2", &none), "too_short");
        assert_eq!(code(&eight, "baseball", &none), "common");
        let capped = PasswordPolicy::builder().max_length(20).build().unwrap();
        assert_eq!(code(&capped, &GOOD[..20], &none), "ok");
        assert_eq!(
            capped.check(GOOD, &none),
            Err(PolicyViolation::TooLong { max: 20 })
        );

        let cases = [
            (7, 128, Err(PolicyConfigError::MinLengthTooLow { min: 7 })),
            (
                12,
                129,
                Err(PolicyConfigError::MaxLengthTooHigh { max: 129 }),
            ),
            (
                20,
                16,
                Err(PolicyConfigError::MinAboveMax { min: 20, max: 16 }),
            ),
            (8, 8, Ok((8, 8))),
            (12, 128, Ok((12, 128))),
        ];
        for (min, max, expected) in cases {
            let built = PasswordPolicy::builder()
                .min_length(min)
                .max_length(max)
                .build()
                .map(|p| (p.min_length(), p.max_length()));
            assert_eq!(built, expected, "{min}..{max}");
        }
        assert_eq!(
            PasswordPolicy::builder().build().unwrap(),
            PasswordPolicy::default()
        );
    }

    #[test]
    fn messages_tell_the_user_what_to_do() {
        let cases = [
            (
                PolicyViolation::TooShort { min: 12 },
                "too_short",
                "at least 12 characters",
            ),
            (
                PolicyViolation::TooLong { max: 128 },
                "too_long",
                "at most 128 characters",
            ),
            (
                PolicyViolation::Common,
                "common",
                "this password is too common: it appears in lists of breached passwords",
            ),
            (
                PolicyViolation::ContainsIdentity,
                "contains_identity",
                "username or email",
            ),
            (PolicyViolation::Repetitive, "repetitive", "sequences"),
            (
                PolicyViolation::InvalidCharacter,
                "invalid_character",
                "control character",
            ),
            (PolicyViolation::Breached, "breached", "data breach"),
        ];
        for (violation, code, message) in cases {
            assert_eq!(violation.code(), code);
            assert!(violation.to_string().contains(message), "{violation}");
        }
    }

    #[test]
    fn identities_too_short_are_not_looked_for() {
        let policy = PasswordPolicy::default();
        let al = PasswordContext::new()
            .username("al")
            .email("jo@example.com");
        assert_eq!(code(&policy, "always-join-the-parade", &al), "ok");
        let email_as_username = PasswordContext::new().username("Bob.Stone@example.com");
        assert_eq!(
            code(&policy, "rolling-bob.stone-2024", &email_as_username),
            "contains_identity"
        );
    }

    #[test]
    fn the_shipped_list_is_lowercase_and_large() {
        let list = common_passwords();
        assert_eq!(list.len(), 10_000);
        assert!(list.iter().all(|p| *p == p.to_lowercase() && p.len() >= 8));
        assert!(list.contains("password1234"));
    }

    #[test]
    fn range_answers_are_read_strictly() {
        let suffix = "1E4C9B93F3F0682250B6CF8331B7EE68FD8";
        let cases: &[(&str, Result<u64, &str>)] = &[
            (
                "1E4C9B93F3F0682250B6CF8331B7EE68FD8:3861493\r\n",
                Ok(3_861_493),
            ),
            ("1e4c9b93f3f0682250b6cf8331b7ee68fd8:7", Ok(7)),
            ("0018A45C4D1DEF81644B54AB7F969B88D65:1\r\n", Ok(0)),
            // Padding: the suffix with count 0 is not a breach.
            ("1E4C9B93F3F0682250B6CF8331B7EE68FD8:0\r\n", Ok(0)),
            ("", Ok(0)),
            ("<html>rate limited</html>", Err("without `:`")),
            ("1E4C9B:12", Err("hex suffix")),
            ("1E4C9B93F3F0682250B6CF8331B7EE68FD8:many", Err("number")),
        ];
        for (body, expected) in cases {
            match (count_in_range(body.as_bytes(), suffix), expected) {
                (Ok(n), Ok(m)) => assert_eq!(n, *m, "{body:?}"),
                (Err(e), Err(m)) => assert!(e.to_string().contains(m), "{body:?}: {e}"),
                (got, _) => panic!("{body:?}: {got:?}"),
            }
        }
        assert!(matches!(
            count_in_range(&[0xff, 0xfe], suffix),
            Err(BreachCheckError::MalformedResponse(_))
        ));
    }

    #[test]
    fn range_urls_are_checked() {
        let cases = [
            ("https://api.pwnedpasswords.com/range/", true),
            ("https://breaches.example/range", true),
            ("http://127.0.0.1:8080/range/", true),
            ("http://[::1]:8080/range/", true),
            ("http://localhost/range/", true),
            ("http://breaches.example/range/", false),
            ("ftp://breaches.example/range/", false),
            ("https://breaches.example/range/?key=1", false),
            ("https://user:pw@breaches.example/range/", false),
            ("not a url", false),
        ];
        for (url, ok) in cases {
            let made = BreachCheck::new(url);
            assert_eq!(made.is_ok(), ok, "{url}: {made:?}");
            if let Ok(check) = made {
                assert!(check.range_url.ends_with('/'));
            }
        }
        assert_eq!(
            BreachCheck::new(PWNED_PASSWORDS_RANGE_URL)
                .unwrap()
                .range_url,
            BreachCheck::pwned_passwords().range_url
        );
    }

    #[tokio::test]
    async fn with_timeout_bounds_a_future_that_never_ends() {
        let started = std::time::Instant::now();
        let never = std::future::pending::<()>();
        assert_eq!(with_timeout(Duration::from_millis(50), never).await, None);
        assert!(started.elapsed() < Duration::from_secs(2));
        assert_eq!(
            with_timeout(Duration::from_secs(5), async { 7 }).await,
            Some(7)
        );
    }
}
