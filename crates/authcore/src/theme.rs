//! Theme values shared by the layers that draw with them: the built-in pages (actions) and
//! the default sign-in mail (email providers). Both sit above this module.

/// A theme or provider colour if it is a plain CSS colour token (`#abc`, `rebeccapurple`,
/// `rgb(1, 2, 3)`), so it cannot break out of the stylesheet.
pub(crate) fn plain_css_color(value: &str) -> Option<&str> {
    let plain = !value.is_empty()
        && value.len() <= 64
        && value.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'#' | b'(' | b')' | b',' | b'.' | b'%' | b' ')
        });
    plain.then_some(value)
}

#[cfg(test)]
mod tests {
    use super::plain_css_color;

    #[test]
    fn only_plain_colour_tokens_pass() {
        for ok in ["#abc", "rebeccapurple", "rgb(1, 2, 3)", "hsl(10 50% 50%)"] {
            assert_eq!(plain_css_color(ok), Some(ok));
        }
        let long = "a".repeat(65);
        for bad in [
            "",
            "red;}body{x:y",
            "url(x)\"",
            "red</style>",
            long.as_str(),
        ] {
            assert_eq!(plain_css_color(bad), None, "{bad}");
        }
    }
}
