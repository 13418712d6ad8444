//! Strings a caller gave, as messages show them: cut, so that a hostile string (a
//! feature level, an option value or a model's tensor name of a megabyte) cannot make a
//! megabyte of message. Every front end quotes what it was given through these.

use std::borrow::Cow;

/// The most characters of a caller's string that a message shows.
pub const CLIP_CHARS: usize = 64;

/// `text` whole when it has at most [`CLIP_CHARS`] characters, else its first
/// [`CLIP_CHARS`] followed by `…(N chars)`, N its whole length in characters.
pub fn clip(text: &str) -> Cow<'_, str> {
    match text.char_indices().nth(CLIP_CHARS) {
        None => Cow::Borrowed(text),
        Some((end, _)) => Cow::Owned(format!("{}…({} chars)", &text[..end], text.chars().count())),
    }
}

/// `text` quoted and escaped as Rust's `{:?}` does, cut as [`clip`] cuts it: the first
/// [`CLIP_CHARS`] characters inside the quotes, then `…(N chars)`.
pub fn quoted(text: &str) -> String {
    match text.char_indices().nth(CLIP_CHARS) {
        None => format!("{text:?}"),
        Some((end, _)) => format!("{:?}…({} chars)", &text[..end], text.chars().count()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_strings_are_whole() {
        assert_eq!(clip("LEVEL_6_4"), "LEVEL_6_4");
        assert_eq!(quoted("a\"b\n"), r#""a\"b\n""#);
        let exact = "x".repeat(CLIP_CHARS);
        assert_eq!(clip(&exact), exact);
        assert_eq!(quoted(&exact), format!("{exact:?}"));
    }

    #[test]
    fn long_strings_are_cut_at_a_character_boundary() {
        let long = "é".repeat(1_000_000);
        let cut = clip(&long);
        assert_eq!(cut, format!("{}…(1000000 chars)", "é".repeat(CLIP_CHARS)));
        let shown = quoted(&long);
        assert!(shown.starts_with(&format!("\"{}\"", "é".repeat(CLIP_CHARS))));
        assert!(shown.ends_with("…(1000000 chars)"), "{shown}");
        assert!(shown.len() < 200);
    }
}
