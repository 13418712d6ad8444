//! Whether the process that named a temporary after itself may still be running, so
//! that the clean-up of stale temporaries never removes a live run's file. Every answer
//! that is not certain is "may be running".

/// False only when `/proc/PID` is absent where `/proc/self` is present (Linux); without
/// `/proc` (macOS, the BSDs), always true.
#[cfg(unix)]
pub(super) fn may_be_running(pid: u32) -> bool {
    use std::path::Path;
    !Path::new("/proc/self").exists() || Path::new(&format!("/proc/{pid}")).exists()
}

/// False only when `OpenProcess` finds no process `pid`, or finds one whose exit code
/// is set (ended, its object kept alive by a handle).
#[cfg(windows)]
pub(super) fn may_be_running(pid: u32) -> bool {
    use windows_sys::Win32::Foundation::{
        CloseHandle, GetLastError, ERROR_INVALID_PARAMETER, STILL_ACTIVE,
    };
    use windows_sys::Win32::System::Threading::{
        GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
    };
    // SAFETY: OpenProcess takes no pointers; it returns a handle this function owns
    // (closed below) or null, after which GetLastError reads this thread's error.
    let handle = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if handle.is_null() {
        return unsafe { GetLastError() } != ERROR_INVALID_PARAMETER;
    }
    let mut code = 0u32;
    // SAFETY: `handle` is open with the query right GetExitCodeProcess needs, `code` is
    // a valid u32 to write, and the handle is closed exactly once.
    let queried = unsafe { GetExitCodeProcess(handle, &mut code) };
    unsafe { CloseHandle(handle) };
    queried == 0 || code == STILL_ACTIVE as u32
}

/// Always true: nothing here tells a process's end.
#[cfg(not(any(unix, windows)))]
pub(super) fn may_be_running(_pid: u32) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_may_be_running() {
        assert!(may_be_running(std::process::id()));
    }

    #[test]
    fn a_child_that_exited_is_known_to_have_ended_where_that_can_be_told() {
        let exe = std::env::current_exe().unwrap();
        let mut child = std::process::Command::new(exe)
            .arg("--list")
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let pid = child.id();
        assert!(may_be_running(pid));
        child.wait().unwrap();
        if cfg!(any(target_os = "linux", windows)) {
            assert!(
                !may_be_running(pid),
                "pid {pid} reaped, yet 'may be running'"
            );
        }
    }
}
