//! Helpers shared by the tests of several ewise crates: a dev-dependency only, never
//! published (cargo drops path-only dev-dependencies from published manifests).

use std::io;
use std::path::Path;

/// Whether making the link `link` (a `what`, e.g. "symbolic link" or "junction"), which
/// returned `made`, left a link there. Where none is (the system refused, or, as wine 8.0
/// does, reported success and made nothing), says on one line of standard error that
/// `test` skips its `what` part and returns false; on Unix, where links always work,
/// that is a failure (a panic naming `test`, the link and why).
pub fn link_made(test: &str, what: &str, made: io::Result<()>, link: &Path) -> bool {
    let why = match made {
        Err(e) => e.to_string(),
        Ok(()) => match std::fs::symlink_metadata(link) {
            Ok(m) if m.file_type().is_symlink() => return true,
            Ok(m) => format!("it made a {:?} instead", m.file_type()),
            Err(e) => format!("it reported success but made nothing: {e}"),
        },
    };
    if cfg!(unix) {
        panic!("{test}: cannot make a {what} at {}: {why}", link.display());
    }
    eprintln!("{test}: SKIPPED (its {what} part): this system cannot make a {what} ({why})");
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(unix)]
    fn a_link_made_is_seen_and_a_refusal_on_unix_is_a_failure() {
        let dir = std::env::temp_dir().join(format!("ewise-testkit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let link = dir.join("l");
        let _ = std::fs::remove_file(&link);
        let made = std::os::unix::fs::symlink("missing", &link);
        assert!(link_made("t", "symbolic link", made, &link));
        let plain = dir.join("plain");
        std::fs::write(&plain, b"").unwrap();
        let refused = std::panic::catch_unwind(|| link_made("t", "symbolic link", Ok(()), &plain));
        let message = refused.unwrap_err();
        let text = message.downcast_ref::<String>().unwrap();
        assert!(
            text.starts_with("t: cannot make a symbolic link at "),
            "{text}"
        );
        assert!(text.contains(": it made a FileType"), "{text}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
