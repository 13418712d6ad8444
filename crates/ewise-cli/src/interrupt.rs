//! Stopping: Ctrl-C (SIGINT), SIGTERM and SIGHUP all take one clean path.
//!
//! - The first signal sets a flag that every command checks between chunks and steps;
//!   the command then stops, its temporary outputs are removed as their owners drop, and
//!   the process exits with [`EXIT_CODE`].
//! - If the command has not finished [`GRACE`] after that first signal (it is blocked in
//!   an `open` or `read` of a stalled pipe, or inside one long computation), the handler
//!   removes every temporary file registered with [`track`] itself and exits with
//!   [`EXIT_CODE`].
//! - A second signal does the same at once.
//!
//! Work that must not be cut in two (renaming a set of finished outputs into place, or
//! restoring the files they replaced) runs inside [`critical`]: the handler waits for it
//! to finish before it removes anything and exits.
//!
//! On Windows, Ctrl-C and Ctrl-Break take the same path. Closing the console (and
//! logging off or shutting down) is different: Windows ends the process as soon as the
//! console handler that took the event returns, or 5 s after it was called. The `ctrlc`
//! crate's handler returns at once, which would end the process before the command had
//! stopped or removed its temporaries; so a handler of ours, called first, takes those
//! events and does not return: it sets the flag, gives the command [`GRACE`] to stop by
//! itself, then exits as after a second signal.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use anyhow::{bail, Result};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The temporary files to remove if the process must exit from the handler.
static TEMPORARIES: Mutex<Vec<(u64, PathBuf)>> = Mutex::new(Vec::new());

static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// Held by [`critical`] sections; taken by the handler before it exits.
static CRITICAL: Mutex<()> = Mutex::new(());

/// The exit status of a run stopped by a signal (128 + SIGINT, for all three).
pub const EXIT_CODE: u8 = 130;

/// How long after the first signal the handler waits for the command to stop by itself.
pub const GRACE: Duration = Duration::from_secs(2);

/// Installs the handler for SIGINT, SIGTERM and SIGHUP (Ctrl-C and Ctrl-Break on
/// Windows); without one (the system refused), a signal ends the process as usual,
/// which still never leaves a partial output file in place of OUT.
pub fn install() {
    let _ = ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            exit_now();
        }
        std::thread::spawn(|| {
            std::thread::sleep(GRACE);
            exit_now();
        });
    });
    #[cfg(windows)]
    console::install();
}

/// The console handler for the events after which Windows ends the process (see the
/// module docs).
#[cfg(windows)]
mod console {
    use std::sync::atomic::Ordering;

    use windows_sys::core::BOOL;
    use windows_sys::Win32::System::Console::{
        SetConsoleCtrlHandler, CTRL_CLOSE_EVENT, CTRL_LOGOFF_EVENT, CTRL_SHUTDOWN_EVENT,
    };

    /// The events after which Windows ends the process.
    const ENDING_EVENTS: [u32; 3] = [CTRL_CLOSE_EVENT, CTRL_LOGOFF_EVENT, CTRL_SHUTDOWN_EVENT];

    /// Takes the ending events and never returns from them; passes every other event
    /// (Ctrl-C, Ctrl-Break) on to the next handler, `ctrlc`'s, by returning FALSE.
    unsafe extern "system" fn on_event(event: u32) -> BOOL {
        if !ENDING_EVENTS.contains(&event) {
            return 0;
        }
        if !super::INTERRUPTED.swap(true, Ordering::SeqCst) {
            std::thread::sleep(super::GRACE);
        }
        super::exit_now()
    }

    /// Adds [`on_event`] after `ctrlc`'s handler, so that Windows calls it first (the
    /// last added is called first). Without it (the system refused), closing the console
    /// ends the process as before, which never leaves a partial output in place of OUT.
    pub(super) fn install() {
        // SAFETY: `on_event` is a function with the signature a console handler needs,
        // valid for the life of the process; SetConsoleCtrlHandler takes no other
        // pointer.
        unsafe {
            SetConsoleCtrlHandler(Some(on_event), 1);
        }
    }
}

/// Removes every registered temporary file and exits with [`EXIT_CODE`], after any
/// [`critical`] section in progress has finished.
fn exit_now() -> ! {
    let _critical = CRITICAL.lock().unwrap_or_else(|p| p.into_inner());
    let temporaries = TEMPORARIES.lock().unwrap_or_else(|p| p.into_inner());
    for (_, path) in temporaries.iter() {
        let _ = std::fs::remove_file(path);
    }
    eprintln!("ewise: error: interrupted: stopped before finishing; temporary files removed");
    std::process::exit(i32::from(EXIT_CODE));
}

/// Whether a stop was requested.
pub fn requested() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Fails with "interrupted" once a stop was requested; called between chunks and steps.
pub fn check() -> Result<()> {
    if requested() {
        bail!("interrupted: stopped; no output was written");
    }
    Ok(())
}

/// A temporary file registered for removal by the handler; dropping it unregisters the
/// path (it does not remove the file: its owner does that, or renames it into place).
#[derive(Debug)]
pub struct Tracked {
    id: u64,
}

/// Registers `path`, a temporary file this process created, for removal if the process
/// exits from the handler.
pub fn track(path: &Path) -> Tracked {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    TEMPORARIES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push((id, path.to_path_buf()));
    Tracked { id }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        let mut temporaries = TEMPORARIES.lock().unwrap_or_else(|p| p.into_inner());
        temporaries.retain(|(id, _)| *id != self.id);
    }
}

/// Enters a section the handler does not cut: while the guard lives, a signal may set
/// the flag, but the process does not exit until the guard drops. Keep such sections
/// short and free of reads that can block.
pub fn critical() -> MutexGuard<'static, ()> {
    CRITICAL.lock().unwrap_or_else(|p| p.into_inner())
}
