//! Cookies (Auth.js `lib/utils/cookie.ts`, `lib/vendored/cookie.ts`): names and options,
//! `Set-Cookie` serialisation in Auth.js attribute order, request `Cookie` parsing, and
//! session cookie chunking.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::sync::Arc;

use percent_encoding::{percent_decode, percent_encode_byte};
use time::OffsetDateTime;

/// Percent-encodes like JavaScript's `encodeURIComponent`.
///
/// ```
/// assert_eq!(authcore::cookies::encode_uri_component("/a b?x=é"), "%2Fa%20b%3Fx%3D%C3%A9");
/// ```
pub fn encode_uri_component(s: &str) -> Cow<'_, str> {
    let first = next_escaped(s.as_bytes(), 0);
    if first == s.len() {
        // The common case (JWEs, hex tokens): nothing to escape.
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + s.len() / 2 + 8);
    push_escaped_from(&mut out, s, first);
    Cow::Owned(out)
}

/// Appends `encodeURIComponent(s)` to `out` (what [`encode_uri_component`] returns).
pub(crate) fn push_uri_component(out: &mut String, s: &str) {
    push_escaped_from(out, s, next_escaped(s.as_bytes(), 0));
}

/// [`push_uri_component`] of `s`, whose first byte to escape is at `first` (or its length).
fn push_escaped_from(out: &mut String, s: &str, first: usize) {
    // Runs of unreserved bytes are copied whole; every other byte (an ASCII separator or a
    // byte of a multi-byte UTF-8 character, which `encodeURIComponent` escapes byte by byte
    // too) is written by the crate's `percent_encode_byte`.
    let bytes = s.as_bytes();
    let mut run_start = 0;
    let mut i = first;
    loop {
        // A run is ASCII and follows an escaped character's last byte, so a non-empty
        // `run_start..i` lies on character boundaries; an empty one, inside a multi-byte
        // character, may not (`get` gives `None` there: nothing to copy).
        out.push_str(s.get(run_start..i).unwrap_or_default());
        let Some(&b) = bytes.get(i) else {
            return;
        };
        out.push_str(percent_encode_byte(b));
        run_start = i + 1;
        i = next_escaped(bytes, run_start);
    }
}

/// The index of the first byte at or after `from` that `encodeURIComponent` escapes, or the
/// length. Long unreserved runs (a JWE, a hex token) are checked eight bytes per step, the
/// lookups combined without a branch each: a table lookup per byte is cheaper than
/// `percent_encoding`'s set test, and eight lookups per branch are cheaper again on a long
/// cookie.
fn next_escaped(bytes: &[u8], from: usize) -> usize {
    let mut i = from;
    while let Some(chunk) = bytes.get(i..i + 8) {
        if !chunk.iter().fold(true, |all, &b| {
            all & URI_COMPONENT_UNRESERVED[usize::from(b)]
        }) {
            break;
        }
        i += 8;
    }
    bytes
        .get(i..)
        .and_then(|rest| {
            rest.iter()
                .position(|&b| !URI_COMPONENT_UNRESERVED[usize::from(b)])
        })
        .map_or(bytes.len(), |at| i + at)
}

/// The bytes `encodeURIComponent` leaves as they are (ASCII alphanumerics and `-_.!~*'()`),
/// as a lookup table; a property test checks the encoder against `percent_encoding` with
/// the same set.
static URI_COMPONENT_UNRESERVED: [bool; 256] = crate::byte_class::alphanumerics_and(b"-_.!~*'()");

/// Maximum characters of one session cookie chunk (Auth.js `CHUNK_SIZE`).
pub const CHUNK_SIZE: usize = 4096 - 160;

/// `SameSite` attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SameSite {
    /// `SameSite=Strict`.
    Strict,
    /// `SameSite=Lax` (default).
    #[default]
    Lax,
    /// `SameSite=None` (requires `Secure`).
    None,
}

/// `Priority` attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    /// `Priority=Low`.
    Low,
    /// `Priority=Medium`.
    Medium,
    /// `Priority=High`.
    High,
}

/// Options of one cookie (Auth.js `CookieOption.options`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CookieOptions {
    /// `HttpOnly` (default true).
    pub http_only: bool,
    /// `SameSite` (default Lax).
    pub same_site: SameSite,
    /// `Path` (default `/`).
    pub path: String,
    /// `Secure` (default: on HTTPS).
    pub secure: bool,
    /// `Domain`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// `Max-Age` in seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_age: Option<i64>,
    /// `Partitioned`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partitioned: bool,
    /// `Priority`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<Priority>,
}

impl Default for CookieOptions {
    /// Auth.js's defaults for a plain-HTTP cookie: `HttpOnly`, `SameSite=Lax`, `Path=/`.
    fn default() -> Self {
        CookieOptions::defaults(false)
    }
}

impl CookieOptions {
    fn defaults(secure: bool) -> Self {
        CookieOptions {
            http_only: true,
            same_site: SameSite::Lax,
            path: "/".to_owned(),
            secure,
            domain: None,
            max_age: None,
            partitioned: false,
            priority: None,
        }
    }
}

/// Name and options of one cookie.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CookieSpec {
    /// Cookie name.
    pub name: String,
    /// Attributes.
    pub options: CookieOptions,
}

/// The seven cookies Auth.js uses, resolved for one scheme (secure or not).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CookieSet {
    /// Session token (chunked).
    pub session_token: CookieSpec,
    /// Callback URL.
    pub callback_url: CookieSpec,
    /// CSRF double-submit cookie.
    pub csrf_token: CookieSpec,
    /// PKCE code verifier.
    pub pkce_code_verifier: CookieSpec,
    /// OAuth state.
    pub state: CookieSpec,
    /// OIDC nonce.
    pub nonce: CookieSpec,
    /// WebAuthn challenge.
    pub webauthn_challenge: CookieSpec,
}

impl CookieSet {
    /// Auth.js defaults (`defaultCookies` in `lib/utils/cookie.ts`) for secure
    /// (`__Secure-`/`__Host-` prefixes) or plain cookies.
    pub fn defaults(secure: bool) -> Self {
        Self::named(secure, "authjs")
    }

    /// The defaults with another name stem: `next-auth` gives NextAuth.js v4's names
    /// (`next-auth.session-token` …), which are otherwise the same cookies.
    pub fn named(secure: bool, stem: &str) -> Self {
        let p = if secure { "__Secure-" } else { "" };
        let spec = |name: &str, max_age: Option<i64>| CookieSpec {
            name: format!("{p}{name}"),
            options: CookieOptions {
                max_age,
                ..CookieOptions::defaults(secure)
            },
        };
        CookieSet {
            session_token: spec(&format!("{stem}.session-token"), None),
            callback_url: spec(&format!("{stem}.callback-url"), None),
            csrf_token: CookieSpec {
                name: format!("{}{stem}.csrf-token", if secure { "__Host-" } else { "" }),
                options: CookieOptions::defaults(secure),
            },
            pkce_code_verifier: spec(&format!("{stem}.pkce.code_verifier"), Some(900)),
            state: spec(&format!("{stem}.state"), Some(900)),
            nonce: spec(&format!("{stem}.nonce"), None),
            webauthn_challenge: spec(&format!("{stem}.challenge"), Some(900)),
        }
    }

    /// Applies user overrides (deep merge per cookie: name and/or single options).
    pub(crate) fn with_overrides(mut self, o: &CookiesOverrides) -> Self {
        for (target, over) in [
            (&mut self.session_token, &o.session_token),
            (&mut self.callback_url, &o.callback_url),
            (&mut self.csrf_token, &o.csrf_token),
            (&mut self.pkce_code_verifier, &o.pkce_code_verifier),
            (&mut self.state, &o.state),
            (&mut self.nonce, &o.nonce),
            (&mut self.webauthn_challenge, &o.webauthn_challenge),
        ] {
            over.apply(target);
        }
        self
    }

    pub(crate) fn all(&self) -> [&CookieSpec; 7] {
        [
            &self.session_token,
            &self.callback_url,
            &self.csrf_token,
            &self.pkce_code_verifier,
            &self.state,
            &self.nonce,
            &self.webauthn_challenge,
        ]
    }
}

/// A partial override of one cookie; unset fields keep the Auth.js default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CookieOverride {
    /// Cookie name.
    pub name: Option<String>,
    /// `HttpOnly`.
    pub http_only: Option<bool>,
    /// `SameSite`.
    pub same_site: Option<SameSite>,
    /// `Path`.
    pub path: Option<String>,
    /// `Secure`.
    pub secure: Option<bool>,
    /// `Domain` (`Some(None)` removes it).
    pub domain: Option<Option<String>>,
    /// `Max-Age` (`Some(None)` removes it).
    pub max_age: Option<Option<i64>>,
    /// `Partitioned`.
    pub partitioned: Option<bool>,
    /// `Priority`.
    pub priority: Option<Option<Priority>>,
}

impl CookieOverride {
    fn apply(&self, spec: &mut CookieSpec) {
        if let Some(n) = &self.name {
            spec.name.clone_from(n);
        }
        let o = &mut spec.options;
        if let Some(v) = self.http_only {
            o.http_only = v;
        }
        if let Some(v) = self.same_site {
            o.same_site = v;
        }
        if let Some(v) = &self.path {
            o.path.clone_from(v);
        }
        if let Some(v) = self.secure {
            o.secure = v;
        }
        if let Some(v) = &self.domain {
            o.domain.clone_from(v);
        }
        if let Some(v) = self.max_age {
            o.max_age = v;
        }
        if let Some(v) = self.partitioned {
            o.partitioned = v;
        }
        if let Some(v) = self.priority {
            o.priority = v;
        }
    }
}

/// User overrides for the seven cookies (Auth.js `cookies` config).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct CookiesOverrides {
    pub session_token: CookieOverride,
    pub callback_url: CookieOverride,
    pub csrf_token: CookieOverride,
    pub pkce_code_verifier: CookieOverride,
    pub state: CookieOverride,
    pub nonce: CookieOverride,
    pub webauthn_challenge: CookieOverride,
}

/// Whether `name` is an RFC 6265 token (what `cookie.serialize` accepts).
pub(crate) fn is_valid_cookie_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// An outgoing cookie.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetCookie {
    /// Cookie name.
    pub name: Arc<str>,
    /// Raw (unencoded) value.
    pub value: String,
    /// Attributes.
    pub options: Arc<CookieOptions>,
    /// `Expires`, if any.
    pub expires: Option<OffsetDateTime>,
    /// Overrides `options.max_age` (used for clearing with `Max-Age=0`).
    pub max_age: Option<i64>,
}

/// Auth.js's cookie record: `{"name", "value", "options": {…, "expires", "maxAge"}}`.
impl serde::Serialize for SetCookie {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;

        #[derive(serde::Serialize)]
        struct Options<'a> {
            #[serde(flatten)]
            options: &'a CookieOptions,
            #[serde(
                rename = "expires",
                with = "time::serde::rfc3339::option",
                skip_serializing_if = "Option::is_none"
            )]
            expires: Option<OffsetDateTime>,
        }
        let mut options = (*self.options).clone();
        if self.max_age.is_some() {
            options.max_age = self.max_age;
        }
        let mut record = serializer.serialize_struct("Cookie", 3)?;
        record.serialize_field("name", &*self.name)?;
        record.serialize_field("value", &self.value)?;
        record.serialize_field(
            "options",
            &Options {
                options: &options,
                expires: self.expires,
            },
        )?;
        record.end()
    }
}

impl SetCookie {
    /// [`SetCookie::to_header_value`] as a header value, without copying the string; `None`
    /// if it cannot be one (values are percent-encoded, so only a configured name or domain
    /// with control characters could cause that).
    pub fn header_value(&self) -> Option<http::HeaderValue> {
        let line = bytes::Bytes::from(self.to_header_value());
        http::HeaderValue::from_maybe_shared(line).ok()
    }

    /// Serialises like the npm `cookie` package: `name=encodeURIComponent(value)` then
    /// `Max-Age`, `Domain`, `Path`, `Expires`, `HttpOnly`, `Secure`, `Partitioned`,
    /// `Priority`, `SameSite`.
    pub fn to_header_value(&self) -> String {
        let mut out = String::with_capacity(self.name.len() + self.value.len() * 3 / 2 + 112);
        out.push_str(&self.name);
        out.push('=');
        push_uri_component(&mut out, &self.value);
        let o = &self.options;
        if let Some(m) = self.max_age.or(o.max_age) {
            let _ = write!(out, "; Max-Age={m}");
        }
        if let Some(d) = &o.domain {
            out.push_str("; Domain=");
            out.push_str(d);
        }
        if !o.path.is_empty() {
            out.push_str("; Path=");
            out.push_str(&o.path);
        }
        if let Some(e) = self.expires {
            out.push_str("; Expires=");
            write_http_date(&mut out, e);
        }
        if o.http_only {
            out.push_str("; HttpOnly");
        }
        if o.secure {
            out.push_str("; Secure");
        }
        if o.partitioned {
            out.push_str("; Partitioned");
        }
        match o.priority {
            Some(Priority::Low) => out.push_str("; Priority=Low"),
            Some(Priority::Medium) => out.push_str("; Priority=Medium"),
            Some(Priority::High) => out.push_str("; Priority=High"),
            None => {}
        }
        out.push_str(match o.same_site {
            SameSite::Strict => "; SameSite=Strict",
            SameSite::Lax => "; SameSite=Lax",
            SameSite::None => "; SameSite=None",
        });
        out
    }
}

/// Writes an RFC 7231 date like JavaScript's `toUTCString` (`Sun, 06 Nov 1994 08:49:37 GMT`).
pub(crate) fn write_http_date(out: &mut String, t: OffsetDateTime) {
    let t = t.to_offset(time::UtcOffset::UTC);
    const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    out.push_str(DAYS[t.weekday().number_days_from_monday() as usize]);
    out.push_str(", ");
    push_digits(out, u32::from(t.day()), 2);
    out.push(' ');
    out.push_str(MONTHS[t.month() as usize - 1]);
    out.push(' ');
    push_year(out, t.year());
    out.push(' ');
    push_digits(out, u32::from(t.hour()), 2);
    out.push(':');
    push_digits(out, u32::from(t.minute()), 2);
    out.push(':');
    push_digits(out, u32::from(t.second()), 2);
    out.push_str(" GMT");
}

/// Appends `n` zero-padded to `width` digits (wider numbers are written in full), without
/// going through `core::fmt`: dates are formatted on every session response.
pub(crate) fn push_digits(out: &mut String, n: u32, width: usize) {
    let mut digits = [b'0'; 10];
    let mut i = digits.len();
    let mut n = n;
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let start = i.min(digits.len().saturating_sub(width));
    for &d in &digits[start..] {
        out.push(char::from(d));
    }
}

/// A year as JavaScript prints it in dates: four digits, a sign below zero.
pub(crate) fn push_year(out: &mut String, year: i32) {
    if year < 0 {
        out.push('-');
    }
    push_digits(out, year.unsigned_abs(), 4);
}

/// Request cookies, in header order, first occurrence of a name kept.
#[derive(Debug, Clone, Default)]
pub struct RequestCookies {
    pairs: Vec<(String, String)>,
}

/// Strict `decodeURIComponent`: `None` for a malformed escape or invalid UTF-8.
///
/// Runs between escapes are copied whole and each `%XX` is decoded by `percent-encoding`
/// (a property test compares this with its decoder): a CSRF cookie (`token%7Chash`)
/// would otherwise be decoded byte by byte after its first escape.
pub(crate) fn decode_uri_component(s: &str) -> Option<String> {
    // `str::find` is `memchr`: a session cookie is a kilobyte without a `%`.
    let Some(mut at) = s.find('%') else {
        return Some(s.to_owned());
    };
    let mut out = Vec::with_capacity(s.len());
    let mut rest = s;
    loop {
        out.extend_from_slice(rest.get(..at)?.as_bytes());
        let escape = rest.as_bytes().get(at..at + 3)?;
        if !escape[1..].iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        out.extend(percent_decode(escape));
        // Three ASCII bytes: the next character starts after them.
        rest = rest.get(at + 3..)?;
        match rest.find('%') {
            Some(next) => at = next,
            None => break,
        }
    }
    out.extend_from_slice(rest.as_bytes());
    String::from_utf8(out).ok()
}

/// `decodeURIComponent` semantics: decode only when the value contains `%`, keep the raw
/// value when any escape is malformed or the result is not UTF-8.
fn decode_cookie_value(raw: &str) -> String {
    decode_uri_component(raw).unwrap_or_else(|| raw.to_owned())
}

impl RequestCookies {
    /// Parses `Cookie` header values (npm `cookie.parse` semantics).
    pub fn parse<'a>(headers: impl IntoIterator<Item = &'a str>) -> Self {
        let mut pairs: Vec<(String, String)> = Vec::new();
        for header in headers {
            for c in cookie::Cookie::split_parse(header).flatten() {
                let (name, value) = c.name_value_trimmed();
                if name.is_empty() || pairs.iter().any(|(n, _)| n == name) {
                    continue;
                }
                pairs.push((name.to_owned(), decode_cookie_value(value)));
            }
        }
        RequestCookies { pairs }
    }

    /// The value of `name`, if present.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// All cookies.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.pairs.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }
}

/// A chunked session cookie (Auth.js `SessionStore`).
pub(crate) struct SessionCookieStore<'a> {
    spec: &'a ResolvedCookie,
    /// Names of request cookies that belong to the session cookie, with values.
    chunks: Vec<(&'a str, &'a str)>,
}

/// A cookie spec prepared for the hot path: shared name and options.
#[derive(Debug, Clone)]
pub(crate) struct ResolvedCookie {
    pub name: Arc<str>,
    pub options: Arc<CookieOptions>,
}

impl ResolvedCookie {
    pub(crate) fn new(spec: &CookieSpec) -> Self {
        ResolvedCookie {
            name: Arc::from(spec.name.as_str()),
            options: Arc::new(spec.options.clone()),
        }
    }

    /// A cookie with this name and options.
    pub(crate) fn set(&self, value: String, expires: Option<OffsetDateTime>) -> SetCookie {
        SetCookie {
            name: self.name.clone(),
            value,
            options: self.options.clone(),
            expires,
            max_age: None,
        }
    }

    /// A cookie clearing this one (`""`, `Max-Age=0`).
    pub(crate) fn clear(&self) -> SetCookie {
        self.clear_named(self.name.clone())
    }

    fn clear_named(&self, name: Arc<str>) -> SetCookie {
        SetCookie {
            name,
            value: String::new(),
            options: self.options.clone(),
            expires: None,
            max_age: Some(0),
        }
    }
}

fn chunk_index(name: &str) -> Option<u64> {
    name.rsplit_once('.').and_then(|(_, n)| n.parse().ok())
}

impl<'a> SessionCookieStore<'a> {
    pub(crate) fn new(spec: &'a ResolvedCookie, cookies: &'a RequestCookies) -> Self {
        let base: &str = &spec.name;
        let mut chunks: Vec<(&str, &str)> = cookies
            .iter()
            .filter(|(n, v)| n.starts_with(base) && !v.is_empty())
            .collect();
        if chunks.len() > 1 {
            // Sort by the integer after the last '.', as Auth.js `SessionStore`
            // (`lib/utils/cookie.ts`). Names without one (only in a malformed mix) go first, in
            // request order: a total order, which Auth.js's comparator (NaN for them) is not
            // and which `sort` requires — an inconsistent one panicked on a crafted `Cookie`
            // header (found by fuzzing).
            chunks.sort_by_key(|c| chunk_index(c.0));
        }
        SessionCookieStore { spec, chunks }
    }

    /// The reassembled value, if any chunk was present.
    pub(crate) fn value(&self) -> Option<Cow<'a, str>> {
        match self.chunks.as_slice() {
            [] => None,
            [(_, v)] => Some(Cow::Borrowed(v)),
            many => Some(Cow::Owned(many.iter().map(|(_, v)| *v).collect())),
        }
    }

    /// Cookies writing `value` (chunked when longer than [`CHUNK_SIZE`]); request chunks
    /// that are not re-written are cleared.
    pub(crate) fn write(&self, value: &str, expires: OffsetDateTime) -> Vec<SetCookie> {
        let n = value.len().div_ceil(CHUNK_SIZE).max(1);
        let mut out = Vec::with_capacity(n + self.chunks.len());
        if n == 1 {
            for (name, _) in &self.chunks {
                if **name != *self.spec.name {
                    out.push(self.spec.clear_named(Arc::from(*name)));
                }
            }
            out.push(self.spec.set(value.to_owned(), Some(expires)));
            return out;
        }
        let mut names = Vec::with_capacity(n);
        // Chunks are cut at character boundaries (the JWE is ASCII; this guards the rest).
        let mut rest = value;
        let mut i = 0;
        while !rest.is_empty() {
            let mut cut = CHUNK_SIZE.min(rest.len());
            while !rest.is_char_boundary(cut) {
                cut -= 1;
            }
            let (head, tail) = rest.split_at(cut);
            let name: Arc<str> = Arc::from(format!("{}.{}", self.spec.name, i));
            names.push(name.clone());
            out.push(SetCookie {
                name,
                value: head.to_owned(),
                options: self.spec.options.clone(),
                expires: Some(expires),
                max_age: None,
            });
            rest = tail;
            i += 1;
        }
        for (name, _) in &self.chunks {
            if !names.iter().any(|n| **n == **name) {
                out.insert(0, self.spec.clear_named(Arc::from(*name)));
            }
        }
        out
    }

    /// Clearing cookies for every chunk in the request (or the base name when none).
    pub(crate) fn clean(&self) -> Vec<SetCookie> {
        if self.chunks.is_empty() {
            return vec![self.spec.clear()];
        }
        self.chunks
            .iter()
            .map(|(name, _)| self.spec.clear_named(Arc::from(*name)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
    use proptest::prelude::*;

    /// Characters `encodeURIComponent` escapes: everything but `A-Z a-z 0-9 - _ . ! ~ * ' ( )`.
    const URI_COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'_')
        .remove(b'.')
        .remove(b'!')
        .remove(b'~')
        .remove(b'*')
        .remove(b'\'')
        .remove(b'(')
        .remove(b')');

    fn resolved(secure: bool) -> ResolvedCookie {
        ResolvedCookie::new(&CookieSet::defaults(secure).session_token)
    }

    #[test]
    fn default_names_follow_spec() {
        let s = CookieSet::defaults(true);
        assert_eq!(s.session_token.name, "__Secure-authjs.session-token");
        assert_eq!(s.csrf_token.name, "__Host-authjs.csrf-token");
        assert_eq!(s.callback_url.name, "__Secure-authjs.callback-url");
        assert_eq!(s.pkce_code_verifier.options.max_age, Some(900));
        assert_eq!(s.nonce.options.max_age, None);
        assert!(
            s.all()
                .iter()
                .all(|c| c.options.secure && c.options.http_only)
        );
        let p = CookieSet::defaults(false);
        assert_eq!(p.csrf_token.name, "authjs.csrf-token");
        assert_eq!(p.webauthn_challenge.name, "authjs.challenge");
        assert!(p.all().iter().all(|c| !c.options.secure));
    }

    #[test]
    fn overrides_merge_per_field() {
        let o = CookiesOverrides {
            session_token: CookieOverride {
                name: Some("my-session".into()),
                same_site: Some(SameSite::Strict),
                ..Default::default()
            },
            ..Default::default()
        };
        let s = CookieSet::defaults(true).with_overrides(&o);
        assert_eq!(s.session_token.name, "my-session");
        assert_eq!(s.session_token.options.same_site, SameSite::Strict);
        assert!(s.session_token.options.secure);
        assert_eq!(s.csrf_token.name, "__Host-authjs.csrf-token");
    }

    #[test]
    fn serialisation_matches_npm_cookie_order_and_encoding() {
        let r = ResolvedCookie::new(&CookieSet::defaults(true).csrf_token);
        let c = r.set("abc|def".into(), None);
        assert_eq!(
            c.to_header_value(),
            "__Host-authjs.csrf-token=abc%7Cdef; Path=/; HttpOnly; Secure; SameSite=Lax"
        );
        let r = ResolvedCookie::new(&CookieSet::defaults(false).state);
        let t = time::macros::datetime!(1994-11-06 08:49:37 UTC);
        assert_eq!(
            r.set("v".into(), Some(t)).to_header_value(),
            "authjs.state=v; Max-Age=900; Path=/; Expires=Sun, 06 Nov 1994 08:49:37 GMT; HttpOnly; SameSite=Lax"
        );
        assert_eq!(
            r.clear().to_header_value(),
            "authjs.state=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax"
        );
        let cb = ResolvedCookie::new(&CookieSet::defaults(false).callback_url);
        assert_eq!(
            cb.set("http://localhost:3000/a b?x=1".into(), None)
                .to_header_value(),
            "authjs.callback-url=http%3A%2F%2Flocalhost%3A3000%2Fa%20b%3Fx%3D1; Path=/; HttpOnly; SameSite=Lax"
        );
    }

    #[test]
    fn parsing_keeps_first_and_decodes_only_valid_escapes() {
        let c = RequestCookies::parse(["a=1; b=x%7Cy; a=2", "c=%ZZ; d=%E2%82%AC; e=%FF; f"]);
        assert_eq!(c.get("a"), Some("1"));
        assert_eq!(c.get("b"), Some("x|y"));
        assert_eq!(c.get("c"), Some("%ZZ"));
        assert_eq!(c.get("d"), Some("€"));
        assert_eq!(c.get("e"), Some("%FF"));
        assert_eq!(c.get("f"), None);
    }

    #[test]
    fn chunking_round_trips_and_cleans_stale_chunks() {
        let spec = resolved(false);
        let t = OffsetDateTime::UNIX_EPOCH;
        let big: String = "x".repeat(CHUNK_SIZE * 2 + 10);
        let empty = RequestCookies::default();
        let out = SessionCookieStore::new(&spec, &empty).write(&big, t);
        let names: Vec<&str> = out.iter().map(|c| &*c.name).collect();
        assert_eq!(
            names,
            [
                "authjs.session-token.0",
                "authjs.session-token.1",
                "authjs.session-token.2"
            ]
        );
        // Reassemble from a header in scrambled order.
        let header = format!(
            "authjs.session-token.2={}; authjs.session-token.0={}; authjs.session-token.1={}",
            out[2].value, out[0].value, out[1].value
        );
        let req = RequestCookies::parse([header.as_str()]);
        let store = SessionCookieStore::new(&spec, &req);
        assert_eq!(store.value().as_deref(), Some(big.as_str()));
        // Writing a short value clears all three chunks and sets the base name.
        let out = store.write("short", t);
        assert_eq!(out.len(), 4);
        assert!(out[..3].iter().all(|c| c.max_age == Some(0)));
        assert_eq!(&*out[3].name, "authjs.session-token");
        // Writing chunks over an unchunked cookie clears the base name.
        let req = RequestCookies::parse(["authjs.session-token=old"]);
        let out = SessionCookieStore::new(&spec, &req).write(&big, t);
        assert_eq!(&*out[0].name, "authjs.session-token");
        assert_eq!(out[0].max_age, Some(0));
        assert_eq!(out.len(), 4);
        let clean = SessionCookieStore::new(&spec, &req).clean();
        assert_eq!(clean.len(), 1);
        // A malformed mix of indexed and unindexed names sorts without panicking (fuzzing
        // finding: the old comparator was not a total order): unindexed first, in order.
        let req = RequestCookies::parse([
            "authjs.session-token.1=B; authjs.session-tokenX=x; authjs.session-token.0=A; \
             authjs.session-token=y; authjs.session-token.x=z; authjs.session-token.2=C",
        ]);
        let store = SessionCookieStore::new(&spec, &req);
        assert_eq!(store.value().as_deref(), Some("xyzABC"));
    }

    #[test]
    fn http_dates_pad_like_to_utc_string() {
        let mut out = String::new();
        write_http_date(
            &mut out,
            time::macros::datetime!(0099-01-05 01:02:03 +01:00),
        );
        assert_eq!(out, "Mon, 05 Jan 0099 00:02:03 GMT");
        let mut out = String::new();
        write_http_date(&mut out, time::macros::datetime!(2026-12-31 23:59:59 UTC));
        assert_eq!(out, "Thu, 31 Dec 2026 23:59:59 GMT");
    }

    proptest! {
        /// The encoder agrees with `percent_encoding` on every string.
        #[test]
        fn encode_uri_component_matches_the_crate(s in any::<String>()) {
            let expected: String = utf8_percent_encode(&s, URI_COMPONENT).to_string();
            let actual = encode_uri_component(&s);
            prop_assert_eq!(actual.as_ref(), expected.as_str());
        }

        #[test]
        fn encode_uri_component_matches_on_ascii(s in "[ -~]{0,64}") {
            let expected: String = utf8_percent_encode(&s, URI_COMPONENT).to_string();
            let actual = encode_uri_component(&s);
            prop_assert_eq!(actual.as_ref(), expected.as_str());
        }

        /// The decoder agrees with `percent_encoding`'s (strict: malformed escapes and
        /// invalid UTF-8 are `None`), on arbitrary strings and on escape-heavy ones.
        #[test]
        fn decode_uri_component_matches_the_crate(
            s in prop_oneof![any::<String>(), "([a-z|]|%[0-9a-fA-F]{2}|%[0-9g]?){0,40}"]
        ) {
            // Every `%` starts two hex digits (the strictness `percent_encoding` lacks).
            let has_valid_escapes = s.split('%').skip(1).all(|after| {
                after.len() >= 2 && after.as_bytes()[..2].iter().all(u8::is_ascii_hexdigit)
            });
            let expected = has_valid_escapes
                .then(|| percent_encoding::percent_decode_str(&s).decode_utf8().ok().map(Cow::into_owned))
                .flatten();
            prop_assert_eq!(decode_uri_component(&s), expected);
        }

        #[test]
        fn cookie_parser_never_panics(header in ".{0,300}") {
            let c = RequestCookies::parse([header.as_str()]);
            let _ = c.get("authjs.session-token");
        }

        #[test]
        fn chunks_reassemble_to_the_written_value(len in 0usize..12000, seed in any::<u8>()) {
            let spec = resolved(true);
            let value: String = (0..len).map(|i| (b'a' + ((i as u8).wrapping_add(seed) % 26)) as char).collect();
            let empty = RequestCookies::default();
            let out = SessionCookieStore::new(&spec, &empty).write(&value, OffsetDateTime::UNIX_EPOCH);
            prop_assert!(out.iter().all(|c| c.value.len() <= CHUNK_SIZE));
            let header: Vec<String> = out.iter().rev().map(|c| format!("{}={}", c.name, encode_uri_component(&c.value))).collect();
            let header = header.join("; ");
            let req = RequestCookies::parse([header.as_str()]);
            let store = SessionCookieStore::new(&spec, &req);
            let expected = if value.is_empty() { None } else { Some(value.as_str()) };
            let got = store.value();
            prop_assert_eq!(got.as_deref(), expected);
        }
    }
}
