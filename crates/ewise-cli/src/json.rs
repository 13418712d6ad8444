//! The little JSON the commands print: strings quoted and escaped.

use std::fmt::Write as _;

/// `s` as a JSON string literal.
pub fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn quotes_backslashes_and_controls_are_escaped() {
        assert_eq!(super::string("a\"b\\c\n"), r#""a\"b\\c\u000a""#);
        assert_eq!(
            super::string("llvmpipe (LLVM 19)"),
            "\"llvmpipe (LLVM 19)\""
        );
    }
}
