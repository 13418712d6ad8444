//! Windows consoles: `ewise` started in a console of its own, and console control events
//! (Ctrl-C, Ctrl-Break, closing the console) delivered to it for real.
//!
//! Windows has no `kill -s INT`: a console control event goes to the processes attached
//! to one console, and the test process has none (under wine, started from a shell, it
//! has none, and `AllocConsole` fails). So the child gets a console of its own
//! (`CREATE_NEW_CONSOLE`, its standard handles still piped to the test), and a helper
//! process, the test binary itself running one ignored test, attaches to that console,
//! ignores the event itself and generates it ([`send_console_event`]). A helper keeps
//! the test process's own handles and the consoles of other tests' children out of it.

use std::os::windows::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::{ewise_command, start};

/// `CREATE_NEW_CONSOLE`: the child gets a console of its own.
const CREATE_NEW_CONSOLE: u32 = 0x0000_0010;

/// The environment variable that makes [`console_event_helper`] act: `PID EVENT COUNT
/// REPORT`, where EVENT is one of [`ConsoleEvent`]'s codes and REPORT a file for what
/// happened.
pub const CONSOLE_EVENT_ENV: &str = "EWISE_TEST_CONSOLE_EVENT";

/// A console control event to deliver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConsoleEvent {
    /// `CTRL_C_EVENT`.
    CtrlC,
    /// `CTRL_BREAK_EVENT`.
    CtrlBreak,
    /// `CTRL_CLOSE_EVENT`, as closing the console's window sends it.
    Close,
}

impl ConsoleEvent {
    fn code(self) -> u32 {
        match self {
            ConsoleEvent::CtrlC => 0,
            ConsoleEvent::CtrlBreak => 1,
            ConsoleEvent::Close => 2,
        }
    }
}

use windows_sys::Win32::System::Console::{
    AttachConsole, FreeConsole, GenerateConsoleCtrlEvent, GetConsoleWindow, SetConsoleCtrlHandler,
};
use windows_sys::Win32::UI::WindowsAndMessaging::{PostMessageW, WM_CLOSE};

/// Starts `ewise ARGS` in a console of its own, standard input empty and standard
/// output and error piped (read them with `finish_within`).
pub fn spawn_ewise_in_a_console<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Child {
    start(
        ewise_command()
            .args(args)
            .creation_flags(CREATE_NEW_CONSOLE)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    )
}

/// Delivers `event` `count` times (50 ms apart) to the console of `child` (started by
/// [`spawn_ewise_in_a_console`]) through the helper test `helper` of this test binary
/// (one that calls [`console_event_helper`]). `Err` says why the system did not
/// deliver it, in the system's words.
pub fn send_console_event(
    child: &Child,
    event: ConsoleEvent,
    count: u32,
    helper: &str,
) -> Result<(), String> {
    let dir = tempfile::tempdir().expect("temporary directory");
    let report = dir.path().join("report");
    let spec = format!(
        "{} {} {count} {}",
        child.id(),
        event.code(),
        report.display()
    );
    let exe = std::env::current_exe().expect("the test binary's path");
    let status = start(
        Command::new(exe)
            .args([
                helper,
                "--exact",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CONSOLE_EVENT_ENV, spec)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    )
    .wait()
    .expect("the helper runs");
    let said = std::fs::read_to_string(&report)
        .unwrap_or_else(|_| panic!("the helper ({status}) wrote no report"));
    match said.trim() {
        "sent" => Ok(()),
        other => Err(other.to_string()),
    }
}

/// The helper's side of [`send_console_event`]: nothing unless [`CONSOLE_EVENT_ENV`]
/// is set; then attaches to the console of the process it names, ignores console events
/// itself, delivers the event, writes `sent` or why not to the report file and exits.
pub fn console_event_helper() {
    let Ok(spec) = std::env::var(CONSOLE_EVENT_ENV) else {
        return;
    };
    let mut words = spec.splitn(4, ' ');
    let mut number = || -> u32 { words.next().unwrap().parse().unwrap() };
    let (pid, event, count) = (number(), number(), number());
    let report = std::path::PathBuf::from(words.next().unwrap());
    if let Err(why) = deliver(pid, event, count, &report) {
        write_report(&report, &why);
    }
    std::process::exit(0);
}

fn write_report(report: &Path, text: &str) {
    std::fs::write(report, text).expect("write the helper's report");
}

/// Delivers the event; the report says `sent` before the last delivery, since closing
/// the console ends this helper too (it is attached to it).
fn deliver(pid: u32, event: u32, count: u32, report: &Path) -> Result<(), String> {
    let last_error = || std::io::Error::last_os_error();
    // SAFETY: these calls take no pointers but the window handle the system returned
    // (PostMessageW); they change only this helper process's console attachment and
    // handler list.
    unsafe {
        FreeConsole();
        if AttachConsole(pid) == 0 {
            return Err(format!("AttachConsole({pid}) failed: {}", last_error()));
        }
        SetConsoleCtrlHandler(None, 1);
        for i in 0..count {
            if i > 0 {
                std::thread::sleep(Duration::from_millis(50));
            }
            if i + 1 == count {
                write_report(report, "sent");
            }
            if event == ConsoleEvent::Close.code() {
                let window = GetConsoleWindow();
                if window.is_null() {
                    return Err(
                        "the console has no window (GetConsoleWindow returned NULL), so it cannot be closed"
                            .to_string(),
                    );
                }
                if PostMessageW(window, WM_CLOSE, 0, 0) == 0 {
                    return Err(format!("PostMessageW(WM_CLOSE) failed: {}", last_error()));
                }
            } else if GenerateConsoleCtrlEvent(event, 0) == 0 {
                let name = if event == 0 {
                    "CTRL_C_EVENT"
                } else {
                    "CTRL_BREAK_EVENT"
                };
                return Err(format!(
                    "GenerateConsoleCtrlEvent({name}) failed: {}",
                    last_error()
                ));
            }
        }
    }
    Ok(())
}
