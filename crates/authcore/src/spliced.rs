//! Pages rendered once and completed per request: the markup is rendered with a marker in
//! each place a request's own value goes (its CSP nonce, its CSRF token, its callback URL)
//! and cut there, so that a request copies the parts and escapes only its own values
//! instead of rendering the template, its stylesheet and its views again.
//!
//! Pure: [`SplicedPage::parse`] takes the rendered markup, [`SplicedPage::fill`] the values.

use askama::filters::{Escaper as _, Html};

/// A value a request fills in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slot {
    /// The CSP nonce of the page's inline `<style>` and `<script>`.
    Nonce,
    /// The CSRF token of the page's forms.
    CsrfToken,
    /// The callback URL of the page's OAuth forms.
    CallbackUrl,
}

/// Delimits a marker. The HTML escaper leaves it as it is, and no value a page is rendered
/// from carries it in practice; a page where one does is not spliced ([`SplicedPage::parse`]).
const MARK: char = '\u{1}';

impl Slot {
    /// What the template is rendered with in place of the value: the letter between two
    /// [`MARK`]s.
    pub(crate) const fn marker(self) -> &'static str {
        match self {
            Slot::Nonce => "\u{1}n\u{1}",
            Slot::CsrfToken => "\u{1}c\u{1}",
            Slot::CallbackUrl => "\u{1}u\u{1}",
        }
    }

    fn from_letter(letter: &str) -> Option<Self> {
        [Slot::Nonce, Slot::CsrfToken, Slot::CallbackUrl]
            .into_iter()
            .find(|slot| slot.marker().get(1..2) == Some(letter))
    }
}

/// Rendered markup with the markers taken out: `text`, and where in it each value goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SplicedPage {
    text: String,
    /// Byte offsets into `text`, ascending, each with the value that goes there.
    cuts: Vec<(usize, Slot)>,
}

impl SplicedPage {
    /// Cuts `rendered` at its markers. `None` when it holds a [`MARK`] that is not part of a
    /// marker (a configured value carried one): such a page is rendered whole every time.
    pub(crate) fn parse(rendered: &str) -> Option<Self> {
        let mut text = String::with_capacity(rendered.len());
        let mut cuts = Vec::new();
        let mut pieces = rendered.split(MARK);
        // Pieces alternate: markup, marker letter, markup, …; the last one is markup.
        text.push_str(pieces.next().unwrap_or_default());
        while let Some(letter) = pieces.next() {
            cuts.push((text.len(), Slot::from_letter(letter)?));
            text.push_str(pieces.next()?);
        }
        Some(SplicedPage { text, cuts })
    }

    /// The page with each slot's value, HTML-escaped as the template escapes it.
    pub(crate) fn fill<'v>(&self, value: impl Fn(Slot) -> &'v str) -> String {
        let mut out = String::with_capacity(self.text.len() + 96 * self.cuts.len());
        let mut at = 0;
        for &(cut, slot) in &self.cuts {
            out.push_str(&self.text[at..cut]);
            // Writing into a `String` cannot fail.
            let _ = Html.write_escaped_str(&mut out, value(slot));
            at = cut;
        }
        out.push_str(&self.text[at..]);
        out
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn values(slot: Slot) -> &'static str {
        match slot {
            Slot::Nonce => "N0nce",
            Slot::CsrfToken => "abc123",
            Slot::CallbackUrl => "https://app.test/?a=1&b=\"<x>\"",
        }
    }

    #[test]
    fn fills_every_marker_with_its_escaped_value() {
        let rendered = format!(
            "<style nonce=\"{n}\"></style><input value=\"{c}\"/><input value=\"{u}\"/><input value=\"{c}\"/>",
            n = Slot::Nonce.marker(),
            c = Slot::CsrfToken.marker(),
            u = Slot::CallbackUrl.marker(),
        );
        let page = SplicedPage::parse(&rendered).unwrap();
        assert_eq!(
            page.fill(values),
            "<style nonce=\"N0nce\"></style><input value=\"abc123\"/>\
             <input value=\"https://app.test/?a=1&#38;b=&#34;&#60;x&#62;&#34;\"/><input value=\"abc123\"/>"
        );
    }

    #[test]
    fn pages_without_markers_come_back_as_they_are() {
        for text in ["", "<p>plain</p>"] {
            assert_eq!(SplicedPage::parse(text).unwrap().fill(values), text);
        }
    }

    #[test]
    fn a_stray_mark_refuses_the_page() {
        for rendered in [
            "a\u{1}b",            // unknown letter, unclosed
            "a\u{1}x\u{1}b",      // unknown letter
            "a\u{1}n",            // unclosed marker
            "\u{1}\u{1}",         // empty marker
            "a\u{1}c\u{1}\u{1}b", // a marker, then a stray mark
        ] {
            assert_eq!(SplicedPage::parse(rendered), None, "{rendered:?}");
        }
    }
}
