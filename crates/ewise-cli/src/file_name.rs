//! What a safe output file name is: the one decision every command that writes files
//! makes before it reads any input.
//!
//! [`check`] applies the rules of a target OS ([`Rules`]) to one file name (the last
//! component of a path, such as `Y.npy`), and [`fold`] gives the key under which a file
//! system that ignores case stores it, so that two outputs it would make one file are
//! refused on every OS.
//!
//! The rules:
//! - Everywhere: a name is not empty, has no `/` and no NUL, is neither `.` nor `..`,
//!   and is at most 255 bytes long (Unix) or 255 UTF-16 units long (Windows).
//! - Windows also refuses `\`, `:` (which makes `C:x` a path relative to drive C's
//!   current directory, and `x:y` an alternate data stream), `<`, `>`, `"`, `|`, `?`,
//!   `*` and the control characters U+0001-U+001F; a name ending in `.` or a space
//!   (Windows drops them, so the file written would be another); and the reserved device
//!   names `CON`, `PRN`, `AUX`, `NUL`, `COM1`-`COM9`, `LPT1`-`LPT9` (with the
//!   superscript digits ¹²³ as well), `CONIN$` and `CONOUT$`, in any case, alone or
//!   followed by an extension (`nul.npy`, `Com1.tar.gz`) or by spaces before it.

use std::fmt;

/// The file-system rules a name is checked against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rules {
    /// Linux, macOS and other Unix systems.
    Unix,
    /// Windows (and programs built for it, run under wine).
    Windows,
}

impl Rules {
    /// The rules of the OS this program was built for.
    pub const HOST: Rules = if cfg!(windows) {
        Rules::Windows
    } else {
        Rules::Unix
    };
}

/// The most bytes (Unix) or UTF-16 units (Windows) in one file name.
pub const MAX_NAME_LENGTH: usize = 255;

/// Why a name cannot be an output file name; its `Display` names the rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unsafe {
    /// The name is empty.
    Empty,
    /// The name is `.` or `..`, which name directories.
    DotName,
    /// The name holds a path separator (`/`, or on Windows `\`).
    Separator(char),
    /// The name holds NUL.
    Nul,
    /// The name holds `:` (Windows: a drive prefix or an alternate data stream).
    Colon,
    /// The name holds a character Windows forbids in file names.
    Forbidden(char),
    /// The name ends in `.` or a space, which Windows drops.
    TrailingDotOrSpace,
    /// The name is a reserved device name (the part before its first `.`, given).
    Device(String),
    /// The name is longer than the target allows.
    TooLong {
        /// Its length, in the target's unit.
        length: usize,
        /// The unit: "bytes" or "UTF-16 units".
        unit: &'static str,
    },
}

impl fmt::Display for Unsafe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unsafe::Empty => write!(f, "it is empty"),
            Unsafe::DotName => write!(f, "'.' and '..' name directories, not files"),
            Unsafe::Separator(c) => write!(f, "it contains the path separator {c:?}"),
            Unsafe::Nul => write!(f, "it contains a NUL character"),
            Unsafe::Colon => write!(
                f,
                "it contains ':', which Windows reads as a drive (C:x lands in drive C's current directory) or an alternate data stream"
            ),
            Unsafe::Forbidden(c) => write!(
                f,
                "it contains {c:?}, which Windows does not allow in file names (nor any of < > \" | ? * or control characters)"
            ),
            Unsafe::TrailingDotOrSpace => write!(
                f,
                "it ends in '.' or a space, which Windows drops, so another file would be written"
            ),
            Unsafe::Device(stem) => write!(
                f,
                "{stem:?} is a Windows device name (CON, PRN, AUX, NUL, COM1-COM9, LPT1-LPT9, CONIN$, CONOUT$, in any case and with any extension), not a file"
            ),
            Unsafe::TooLong { length, unit } => write!(
                f,
                "it is {length} {unit} long; file names take at most {MAX_NAME_LENGTH}"
            ),
        }
    }
}

impl std::error::Error for Unsafe {}

/// Checks that `name`, one file name, can be written as itself in a directory of a
/// system with `rules`: `Ok` for a name that neither leaves the directory, nor names a
/// device, nor is changed by the system on the way.
pub fn check(name: &str, rules: Rules) -> Result<(), Unsafe> {
    if name.is_empty() {
        return Err(Unsafe::Empty);
    }
    if name == "." || name == ".." {
        return Err(Unsafe::DotName);
    }
    if name.contains('\0') {
        return Err(Unsafe::Nul);
    }
    let separators: &[char] = match rules {
        Rules::Unix => &['/'],
        Rules::Windows => &['/', '\\'],
    };
    if let Some(c) = name.chars().find(|c| separators.contains(c)) {
        return Err(Unsafe::Separator(c));
    }
    let (length, unit) = match rules {
        Rules::Unix => (name.len(), "bytes"),
        Rules::Windows => (name.encode_utf16().count(), "UTF-16 units"),
    };
    if length > MAX_NAME_LENGTH {
        return Err(Unsafe::TooLong { length, unit });
    }
    if rules == Rules::Windows {
        check_windows(name)?;
    }
    Ok(())
}

/// The rules Windows adds to the common ones.
fn check_windows(name: &str) -> Result<(), Unsafe> {
    if name.contains(':') {
        return Err(Unsafe::Colon);
    }
    if let Some(c) = name
        .chars()
        .find(|&c| matches!(c, '<' | '>' | '"' | '|' | '?' | '*' | '\u{1}'..='\u{1f}'))
    {
        return Err(Unsafe::Forbidden(c));
    }
    if name.ends_with(['.', ' ']) {
        return Err(Unsafe::TrailingDotOrSpace);
    }
    let stem = name.split('.').next().unwrap_or(name);
    if is_device(stem.trim_end_matches(' ')) {
        return Err(Unsafe::Device(stem.to_string()));
    }
    Ok(())
}

/// Whether `stem` (a name without extension or trailing spaces) is a reserved device.
fn is_device(stem: &str) -> bool {
    let upper = stem.to_uppercase();
    if matches!(
        upper.as_str(),
        "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$"
    ) {
        return true;
    }
    let mut chars = upper.chars();
    let prefix: String = chars.by_ref().take(3).collect();
    let digit = chars.next();
    (prefix == "COM" || prefix == "LPT")
        && chars.next().is_none()
        && matches!(digit, Some('1'..='9' | '¹' | '²' | '³'))
}

/// The key under which a file system that ignores case (Windows, macOS by default,
/// vfat and exFAT, casefolded ext4 folders) and drops trailing dots and spaces
/// (Windows) stores `name`: two names with one key are one file there. Case is folded
/// through upper and then lower case, so that every pair one of those systems might
/// join (`ß` and `SS`, the Kelvin sign and `k`) shares a key.
pub fn fold(name: &str) -> String {
    name.trim_end_matches(['.', ' '])
        .to_uppercase()
        .to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOTH: [Rules; 2] = [Rules::Unix, Rules::Windows];

    #[test]
    fn common_rules_hold_on_every_os() {
        for rules in BOTH {
            for (name, why) in [
                ("", Unsafe::Empty),
                (".", Unsafe::DotName),
                ("..", Unsafe::DotName),
                ("a/b", Unsafe::Separator('/')),
                ("x\0", Unsafe::Nul),
            ] {
                assert_eq!(check(name, rules), Err(why), "{name:?} {rules:?}");
            }
            for name in [
                "y.npy",
                "Sign output.npy",
                ".npy",
                "ünïcode.npy",
                "a..b.npy",
            ] {
                assert_eq!(check(name, rules), Ok(()), "{name:?} {rules:?}");
            }
        }
    }

    #[test]
    fn windows_refuses_what_unix_takes() {
        for name in [
            "C:x.npy",
            "Z:.npy",
            "x:stream.npy",
            "a\\b.npy",
            "a<b.npy",
            "a>b",
            "a\"b",
            "a|b",
            "a?b",
            "a*b",
            "tab\there",
            "out.npy.",
            "out.npy ",
            "CON",
            "con.npy",
            "Nul.npy",
            "nUl.tar.gz",
            "PRN.npy",
            "AUX ",
            "AUX .npy",
            "COM1.npy",
            "com9",
            "LPT1.npy",
            "lpt5.x",
            "COM¹.npy",
            "LPT³",
            "CONIN$.npy",
            "conout$",
        ] {
            assert!(check(name, Rules::Windows).is_err(), "{name:?}");
            assert_eq!(
                check(name, Rules::Unix).is_err(),
                name.contains('/'),
                "{name:?}"
            );
        }
    }

    #[test]
    fn near_device_names_are_files() {
        for name in [
            "CONS.npy",
            "COM0.npy",
            "COM10.npy",
            "LPT.npy",
            "xCON.npy",
            "a.CON.npy",
            "NULL.npy",
            "COM.npy",
            "AUX1.npy",
        ] {
            assert_eq!(check(name, Rules::Windows), Ok(()), "{name:?}");
        }
    }

    #[test]
    fn device_errors_name_the_rule() {
        let why = check("lpt1.npy", Rules::Windows).unwrap_err();
        assert_eq!(why, Unsafe::Device("lpt1".into()));
        assert!(why.to_string().contains("Windows device name"), "{why}");
        assert!(check("C:x", Rules::Windows)
            .unwrap_err()
            .to_string()
            .contains("drive"));
    }

    #[test]
    fn lengths_count_in_each_systems_unit() {
        let bytes_256 = "é".repeat(128);
        assert!(matches!(
            check(&bytes_256, Rules::Unix),
            Err(Unsafe::TooLong { length: 256, .. })
        ));
        assert_eq!(check(&bytes_256, Rules::Windows), Ok(()));
        let units_256 = "a".repeat(256);
        assert!(check(&units_256, Rules::Windows).is_err());
        assert_eq!(check(&"a".repeat(255), Rules::Windows), Ok(()));
    }

    #[test]
    fn fold_joins_what_case_insensitive_systems_join() {
        assert_eq!(fold("Y.npy"), fold("y.npy"));
        assert_eq!(fold("Straße.npy"), fold("STRASSE.npy"));
        assert_eq!(fold("out.npy. "), fold("OUT.NPY"));
        assert_ne!(fold("a.npy"), fold("b.npy"));
        assert_eq!(fold("Ä.npy"), fold("ä.npy"));
        assert_eq!(fold("\u{212a}.npy"), fold("k.npy"));
    }
}
