//! Ctrl-C: the first one stops the run at the next chunk, so temporary outputs are
//! removed and an in-place file is left between two whole chunks; a second one ends the
//! process at once.

use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{bail, Result};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The exit status of a run stopped by Ctrl-C (128 + SIGINT).
pub const EXIT_CODE: u8 = 130;

/// Installs the handler; without one (the system refused), Ctrl-C ends the process as
/// usual, which still never leaves a partial output file in place of OUT.
pub fn install() {
    let _ = ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            std::process::exit(i32::from(EXIT_CODE));
        }
    });
}

/// Whether Ctrl-C was pressed.
pub fn requested() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Fails with "interrupted" once Ctrl-C was pressed; called between chunks.
pub fn check() -> Result<()> {
    if requested() {
        bail!("interrupted (Ctrl-C): no output was written");
    }
    Ok(())
}
