//! Helpers shared by the tests of several ewise crates: a dev-dependency only, never
//! published (cargo drops path-only dev-dependencies from published manifests).

use std::fmt::Display;
use std::io;
use std::path::Path;

/// `len` deterministic pseudo-random bytes for `seed` (xorshift64): test data whose
/// every bit pattern matters, the same on every run and platform.
pub fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 24) as u8
        })
        .collect()
}

/// With this variable set to 1, a GPU test that finds no adapter fails instead of
/// skipping (`scripts/gpu-driver.sh` sets it where it selects lavapipe).
pub const REQUIRE_GPU_ENV: &str = "EWISE_REQUIRE_GPU";

/// A GPU test that found no adapter (`why`) skips: says so on one line of standard
/// error; with [`REQUIRE_GPU_ENV`] set to 1 that is a failure (a panic) instead.
pub fn skip_without_gpu(why: impl Display) {
    if std::env::var(REQUIRE_GPU_ENV).is_ok_and(|v| v == "1") {
        panic!("{REQUIRE_GPU_ENV}=1 but no GPU adapter: {why}");
    }
    eprintln!("skipping GPU test: {why}");
}

/// The device that building one gave (`built`), or `None` after
/// [`skip_without_gpu`] where the error is the one that says there is no adapter
/// (`no_adapter`); any other error is a failure (a panic naming it).
pub fn device_or_skip<D, E: Display>(
    built: Result<D, E>,
    no_adapter: impl Fn(&E) -> bool,
) -> Option<D> {
    match built {
        Ok(d) => Some(d),
        Err(e) if no_adapter(&e) => {
            skip_without_gpu(&e);
            None
        }
        Err(e) => panic!("GPU device creation failed: {e}"),
    }
}

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

/// One front end's column of the defaults table in docs/SEMANTICS.md section 8.2, as
/// (setting, cell) pairs in the table's order: the rows after the `<!-- defaults-table`
/// marker up to the next blank line, the header naming the columns. Panics, naming the
/// document, when the table or `column` is missing or a row has another number of cells.
pub fn defaults_column(column: &str) -> Vec<(String, String)> {
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/SEMANTICS.md");
    let text = std::fs::read_to_string(&doc).unwrap_or_else(|e| panic!("{}: {e}", doc.display()));
    let cells = |line: &str| -> Vec<String> {
        line.trim()
            .trim_start_matches('|')
            .trim_end_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect()
    };
    let mut lines = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("<!-- defaults-table"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty());
    let header = cells(
        lines
            .next()
            .unwrap_or_else(|| panic!("no defaults table in {}", doc.display())),
    );
    let at = header
        .iter()
        .position(|h| h == column)
        .unwrap_or_else(|| panic!("no column {column:?} in the defaults table: {header:?}"));
    let rows: Vec<(String, String)> = lines
        .map(cells)
        .filter(|row| {
            !row.iter()
                .all(|c| c.chars().all(|ch| ch == '-' || ch == ':'))
        })
        .map(|row| {
            assert_eq!(
                row.len(),
                header.len(),
                "a row of the defaults table: {row:?}"
            );
            (row[0].clone(), row[at].clone())
        })
        .collect();
    assert!(
        !rows.is_empty(),
        "the defaults table in {} has no rows",
        doc.display()
    );
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_adapter_skips_unless_required_and_other_errors_fail() {
        let no_adapter = |e: &&str| e.starts_with("no GPU adapter");
        assert_eq!(device_or_skip(Ok::<_, &str>(7), no_adapter), Some(7));
        let other = std::panic::catch_unwind(|| device_or_skip(Err::<u8, _>("lost"), no_adapter));
        let message = other.unwrap_err();
        assert_eq!(
            message.downcast_ref::<String>().unwrap(),
            "GPU device creation failed: lost"
        );
        std::env::set_var(REQUIRE_GPU_ENV, "0");
        assert_eq!(
            device_or_skip(Err::<u8, _>("no GPU adapter found"), no_adapter),
            None
        );
        std::env::set_var(REQUIRE_GPU_ENV, "1");
        let required = std::panic::catch_unwind(|| {
            device_or_skip(Err::<u8, _>("no GPU adapter found"), no_adapter)
        });
        std::env::remove_var(REQUIRE_GPU_ENV);
        let message = required.unwrap_err();
        assert_eq!(
            message.downcast_ref::<String>().unwrap(),
            "EWISE_REQUIRE_GPU=1 but no GPU adapter: no GPU adapter found"
        );
    }

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
