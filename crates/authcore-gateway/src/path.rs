//! The path the access rules judge, from the path a proxy reports (percent-encoded, as the
//! client sent it).
//!
//! The servers behind a gateway do not agree on what a path names: nginx decodes `%2F` and
//! resolves dot segments before it serves a file, Python's `http.server` and many
//! frameworks decode first and normalise after, Tomcat drops `;parameters` from each
//! segment, some servers decode twice or read `\` as `/`. A rule matched on the path as sent
//! (`/public/..%2fsecret` starts with `/public/`) would let any of them serve a protected
//! resource under a public rule. So the path is either reduced to one form every such
//! server agrees on, or refused:
//!
//! - percent-escapes are decoded once (`%2F` included, as nginx does), repeated slashes
//!   merged (`//` reads as `/`, as nginx's `merge_slashes` does);
//! - refused (400): a dot segment `.` or `..` in any spelling (`..`, `%2e%2E`, `.%2e`,
//!   `..%2f` once decoded, `..;x` as Tomcat reads it — RFC 3986 §5.2.4 would move such a
//!   path to another prefix, and browsers never send one), a backslash (raw or `%5C`), an
//!   escape that decodes to another escape (`%252e`: double encoding), `%00` and other
//!   control characters, invalid escapes, and bytes that are not UTF-8 once decoded.
//!
//! What is left has no ambiguity for the servers above: its segments are the same whether
//! they decode once or twice, split on `/` or `\`, strip `;parameters` or not.

use std::borrow::Cow;

/// Why a path is refused (the answer is `400`; the reason goes to the log).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PathRefusal {
    /// Not a path (`/…`).
    #[error("the path does not start with /")]
    NotAbsolute,
    /// `%` not followed by two hexadecimal digits.
    #[error("the path has an invalid percent-escape")]
    BadEscape,
    /// An escape that decodes to another escape (`%252e`).
    #[error("the path is percent-encoded twice")]
    DoubleEncoded,
    /// A `.` or `..` segment (also `%2e`, or before a `;parameter`).
    #[error("the path has a dot segment")]
    DotSegment,
    /// `\` or `%5C`.
    #[error("the path has a backslash")]
    Backslash,
    /// `%00`, other control characters, space or `#`.
    #[error("the path has a control character")]
    ControlCharacter,
    /// Decoded bytes that are not UTF-8.
    #[error("the path is not UTF-8 once decoded")]
    NotUtf8,
}

/// The path the rules judge: decoded once, repeated slashes merged (a trailing slash kept),
/// or why it is refused (`/public//app%2Ecss` is `/public/app.css`, `/public/..%2fsecret`
/// a [`PathRefusal::DotSegment`]).
pub fn judged_path(raw: &str) -> Result<String, PathRefusal> {
    if !raw.starts_with('/') {
        return Err(PathRefusal::NotAbsolute);
    }
    if raw.bytes().any(|b| b == b'\\') {
        return Err(PathRefusal::Backslash);
    }
    if raw.bytes().any(|b| b <= b' ' || b == 0x7f || b == b'#') {
        return Err(PathRefusal::ControlCharacter);
    }
    check_escapes(raw.as_bytes())?;
    let decoded: Cow<'_, [u8]> = percent_encoding::percent_decode_str(raw).into();
    let decoded = std::str::from_utf8(&decoded).map_err(|_| PathRefusal::NotUtf8)?;
    if decoded.contains('\\') {
        return Err(PathRefusal::Backslash);
    }
    if decoded.chars().any(char::is_control) {
        return Err(PathRefusal::ControlCharacter);
    }
    if has_escape(decoded.as_bytes()) {
        return Err(PathRefusal::DoubleEncoded);
    }
    let mut judged = String::with_capacity(decoded.len());
    for segment in decoded.split('/').filter(|s| !s.is_empty()) {
        let before_parameters = segment.split(';').next().unwrap_or_default();
        if matches!(segment, "." | "..") || matches!(before_parameters, "." | "..") {
            return Err(PathRefusal::DotSegment);
        }
        judged.push('/');
        judged.push_str(segment);
    }
    if judged.is_empty() || decoded.ends_with('/') {
        judged.push('/');
    }
    Ok(judged)
}

/// Every `%` starts a two-digit hexadecimal escape.
fn check_escapes(raw: &[u8]) -> Result<(), PathRefusal> {
    let mut rest = raw;
    while let Some(i) = rest.iter().position(|&b| b == b'%') {
        match rest.get(i + 1..i + 3) {
            Some([a, b]) if a.is_ascii_hexdigit() && b.is_ascii_hexdigit() => rest = &rest[i + 3..],
            _ => return Err(PathRefusal::BadEscape),
        }
    }
    Ok(())
}

/// Whether `s` holds a percent-escape (`%` and two hexadecimal digits).
fn has_escape(s: &[u8]) -> bool {
    s.windows(3)
        .any(|w| w[0] == b'%' && w[1].is_ascii_hexdigit() && w[2].is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn decoded_once_and_merged_or_refused() {
        assert_eq!(
            judged_path("/public//app%2Ecss").unwrap(),
            "/public/app.css"
        );
        assert_eq!(
            judged_path("/public/..%2fsecret"),
            Err(PathRefusal::DotSegment)
        );
    }

    #[test]
    fn path_confusion_corpus() {
        use PathRefusal::*;
        for (raw, want) in [
            // Kept, decoded once, slashes merged.
            ("/", Ok("/")),
            ("/public/app.css", Ok("/public/app.css")),
            ("/public/", Ok("/public/")),
            ("//public///x//", Ok("/public/x/")),
            ("/%70ublic/x", Ok("/public/x")),
            ("/public%2Fx", Ok("/public/x")),
            ("/api/queues/%2F/q", Ok("/api/queues/q")),
            ("/a%20b", Ok("/a b")),
            ("/caf%C3%A9", Ok("/café")),
            ("/...", Ok("/...")),
            ("/.well-known/x", Ok("/.well-known/x")),
            ("/a;b/c", Ok("/a;b/c")),
            ("/a/;/c", Ok("/a/;/c")),
            ("/100%25", Ok("/100%")),
            ("/p?q", Ok("/p?q")),
            // Dot segments in every spelling.
            ("/public/../secret", Err(DotSegment)),
            ("/public/./x", Err(DotSegment)),
            ("/public/..", Err(DotSegment)),
            ("/public/..%2fsecret", Err(DotSegment)),
            ("/public/..%2Fsecret", Err(DotSegment)),
            ("/public/%2E%2E%2Fsecret", Err(DotSegment)),
            ("/public/%2e%2e/secret", Err(DotSegment)),
            ("/public/.%2e/secret", Err(DotSegment)),
            ("/public//../secret", Err(DotSegment)),
            ("/public/..;/secret", Err(DotSegment)),
            ("/public/..;jsessionid=1/secret", Err(DotSegment)),
            ("/secret/..;/public/x", Err(DotSegment)),
            ("/public/%2e;/x", Err(DotSegment)),
            // Double encoding.
            ("/public/%252e%252e/secret", Err(DoubleEncoded)),
            ("/public/%252fx", Err(DoubleEncoded)),
            ("/a%2520b", Err(DoubleEncoded)),
            // Backslashes.
            ("/public\\..\\secret", Err(Backslash)),
            ("/public/..%5csecret", Err(Backslash)),
            ("/public/%5C", Err(Backslash)),
            // NUL and control characters.
            ("/public/%00/../secret", Err(ControlCharacter)),
            ("/secret%00/public", Err(ControlCharacter)),
            ("/a%0d%0aSet-Cookie:x", Err(ControlCharacter)),
            ("/a%7f", Err(ControlCharacter)),
            ("/a b", Err(ControlCharacter)),
            ("/a#b", Err(ControlCharacter)),
            // Broken escapes, invalid UTF-8, not a path.
            ("/a%", Err(BadEscape)),
            ("/a%2", Err(BadEscape)),
            ("/a%zz", Err(BadEscape)),
            ("/a%C3", Err(NotUtf8)),
            ("/a%ff", Err(NotUtf8)),
            ("/a%c0%ae%c0%ae/x", Err(NotUtf8)),
            ("public/x", Err(NotAbsolute)),
            ("", Err(NotAbsolute)),
            ("*", Err(NotAbsolute)),
        ] {
            assert_eq!(judged_path(raw).as_deref(), want.as_deref(), "{raw:?}");
        }
    }

    /// How the servers behind a gateway read a path: decoded once or twice, `\` as a
    /// separator or not, `;parameters` dropped or not, then dot segments resolved
    /// (RFC 3986 §5.2.4) and repeated slashes merged: a test model, not the judge.
    fn server_readings(raw: &str) -> Vec<String> {
        let mut readings = Vec::new();
        for decodes in 1..=2 {
            for backslash_separates in [false, true] {
                for drop_parameters in [false, true] {
                    let mut p = raw.to_owned();
                    for _ in 0..decodes {
                        p = percent_encoding::percent_decode_str(&p)
                            .decode_utf8_lossy()
                            .into_owned();
                    }
                    if backslash_separates {
                        p = p.replace('\\', "/");
                    }
                    if drop_parameters {
                        p = p
                            .split('/')
                            .map(|s| s.split(';').next().unwrap_or_default())
                            .collect::<Vec<_>>()
                            .join("/");
                    }
                    let segments: Vec<&str> = p.split('/').collect();
                    let mut out: Vec<&str> = Vec::new();
                    for s in segments {
                        match s {
                            "" | "." => {}
                            ".." => {
                                out.pop();
                            }
                            s => out.push(s),
                        }
                    }
                    readings.push(format!("/{}", out.join("/")));
                }
            }
        }
        readings
    }

    const PIECES: &[&str] = &[
        "public", "secret", "/", "//", ".", "..", "%2e", "%2E", "%2f", "%2F", "%5c", "\\", ";",
        ";x", "%3b", "%25", "%252e", "%252f", "%00", "x", "%70ublic", "%",
    ];

    proptest! {
        /// No path that any server above reads as under `/secret` is judged as under
        /// `/public/` (nor the other way round).
        #[test]
        fn no_path_escapes_its_prefix(pieces in proptest::collection::vec(0..PIECES.len(), 1..10)) {
            let raw: String = std::iter::once("/")
                .chain(pieces.iter().map(|&i| PIECES[i]))
                .collect();
            if let Ok(judged) = judged_path(&raw) {
                for reading in server_readings(&raw) {
                    for (a, b) in [("/public", "/secret"), ("/secret", "/public")] {
                        let under = |p: &str, prefix: &str| p == prefix || p.starts_with(&format!("{prefix}/"));
                        prop_assert!(
                            !(under(&reading, b) && under(&judged, a)),
                            "{raw:?} judged as {judged:?}, read by a server as {reading:?}"
                        );
                    }
                }
            }
        }
    }

    /// The model of the servers is not vacuous: it reads the classic escapes as `/secret`.
    #[test]
    fn the_server_model_reads_the_classic_escapes() {
        for raw in [
            "/public/..%2fsecret",
            "/public/%252e%252e/secret",
            "/public\\..\\secret",
            "/public/..;/secret",
        ] {
            assert!(server_readings(raw).iter().any(|r| r == "/secret"), "{raw}");
            assert!(judged_path(raw).is_err(), "{raw}");
        }
        assert!(
            server_readings("/public//x")
                .iter()
                .all(|r| r == "/public/x")
        );
    }
}
