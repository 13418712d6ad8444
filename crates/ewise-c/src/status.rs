//! Statuses, this thread's last message, and the guard every entry point runs in: no
//! panic crosses the boundary, and every status comes with its message.

use std::cell::{Cell, RefCell};
use std::ffi::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};

use ewise::gpu::GpuError;
use ewise::Error;

use crate::types::*;

/// A refused call: the status C sees and the message `ewise_last_error` gives.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) status: EWISE_STATUS,
    pub(crate) message: String,
}

/// What an entry point's body returns.
pub(crate) type Outcome<T = ()> = Result<T, Failure>;

impl Failure {
    /// `EWISE_ERROR_INVALID_ARGUMENT` with `message`.
    pub(crate) fn invalid(message: impl Into<String>) -> Failure {
        Failure {
            status: EWISE_ERROR_INVALID_ARGUMENT,
            message: message.into(),
        }
    }

    /// `EWISE_ERROR_NOT_SUPPORTED` with `message`.
    pub(crate) fn unsupported(message: impl Into<String>) -> Failure {
        Failure {
            status: EWISE_ERROR_NOT_SUPPORTED,
            message: message.into(),
        }
    }

    /// `EWISE_ERROR_OUT_OF_MEMORY` with `message`.
    pub(crate) fn out_of_memory(message: impl Into<String>) -> Failure {
        Failure {
            status: EWISE_ERROR_OUT_OF_MEMORY,
            message: message.into(),
        }
    }
}

impl From<Error> for Failure {
    /// A level, data type or operator the device does not support is
    /// `EWISE_ERROR_NOT_SUPPORTED` (`DXGI_ERROR_UNSUPPORTED`); a copy that could not be
    /// allocated, `EWISE_ERROR_OUT_OF_MEMORY`; every other refusal of a
    /// description or binding is `EWISE_ERROR_INVALID_ARGUMENT` (`E_INVALIDARG`).
    fn from(e: Error) -> Failure {
        let status = match e {
            Error::OperatorNotAvailable { .. }
            | Error::UnsupportedDataType { .. }
            | Error::FeatureLevelUnavailable { .. } => EWISE_ERROR_NOT_SUPPORTED,
            Error::OutOfMemory { .. } => EWISE_ERROR_OUT_OF_MEMORY,
            _ => EWISE_ERROR_INVALID_ARGUMENT,
        };
        Failure {
            status,
            message: e.to_string(),
        }
    }
}

impl From<GpuError> for Failure {
    fn from(e: GpuError) -> Failure {
        let status = match e {
            GpuError::Op(e) => return Failure::from(e),
            GpuError::OutOfHostMemory { .. } | GpuError::BufferTooLarge { .. } => {
                EWISE_ERROR_OUT_OF_MEMORY
            }
            GpuError::NoAdapter { .. }
            | GpuError::NoUsableAdapter { .. }
            | GpuError::Environment { .. }
            | GpuError::Forked { .. } => EWISE_ERROR_DEVICE_UNAVAILABLE,
            GpuError::Transfer { .. } => EWISE_ERROR_INVALID_ARGUMENT,
            _ => EWISE_ERROR_INTERNAL,
        };
        Failure {
            status,
            message: e.to_string(),
        }
    }
}

/// The most bytes of a message `ewise_last_error` keeps, its NUL included; a longer one
/// is cut at a character boundary and ends with "...".
pub(crate) const MESSAGE_CAPACITY: usize = 1024;

thread_local! {
    /// This thread's last message, NUL-terminated. A `const`-initialised value without a
    /// destructor: native thread-local storage of such a type is never torn down while
    /// its thread runs, so calls from thread-exit destructors (pthread keys, C++
    /// `thread_local`) and `atexit` handlers read and write it like any other call, and
    /// a pointer to it stays valid until the thread itself is gone.
    static LAST_ERROR: RefCell<[u8; MESSAGE_CAPACITY]> = const { RefCell::new([0; MESSAGE_CAPACITY]) };
    /// Whether `LAST_ERROR` holds a message: successes read only this flag.
    static HAS_ERROR: Cell<bool> = const { Cell::new(false) };
}

/// Stores `message` as this thread's last message: NUL bytes become spaces, and a
/// message longer than `MESSAGE_CAPACITY - 1` bytes is cut at a character boundary.
fn set_last_error(message: &str) {
    if message.is_empty() && !HAS_ERROR.get() {
        return;
    }
    HAS_ERROR.set(!message.is_empty());
    LAST_ERROR.with_borrow_mut(|last| {
        let text = fit(message, MESSAGE_CAPACITY - 1);
        for (to, &from) in last.iter_mut().zip(text.iter()) {
            *to = if from == 0 { b' ' } else { from };
        }
        last[text.len()] = 0;
    });
}

/// `message` as at most `most` bytes: whole, or cut at a character boundary with "..."
/// at the end.
fn fit(message: &str, most: usize) -> std::borrow::Cow<'_, [u8]> {
    if message.len() <= most {
        return message.as_bytes().into();
    }
    const MORE: &str = "...";
    let mut cut = most - MORE.len();
    while !message.is_char_boundary(cut) {
        cut -= 1;
    }
    [&message.as_bytes()[..cut], MORE.as_bytes()]
        .concat()
        .into()
}

/// This thread's last message, valid until its next status-returning call (or the
/// thread's end).
pub(crate) fn last_error() -> *const c_char {
    LAST_ERROR.with(|last| last.as_ptr().cast::<c_char>())
}

/// Runs an entry point's body: catches a panic (`EWISE_ERROR_INTERNAL`), records the
/// message of a failure (or "" on success) and returns the status.
pub(crate) fn guard(body: impl FnOnce() -> Outcome) -> EWISE_STATUS {
    let outcome = catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_string());
        Err(Failure {
            status: EWISE_ERROR_INTERNAL,
            message: format!("internal error (a bug in ewise; please report it): {what}"),
        })
    });
    match outcome {
        Ok(()) => {
            set_last_error("");
            EWISE_OK
        }
        Err(f) => {
            set_last_error(&f.message);
            f.status
        }
    }
}

/// Runs a function that returns nothing (the releases), swallowing a panic so that it
/// never crosses the boundary.
pub(crate) fn quietly(body: impl FnOnce()) {
    let _ = catch_unwind(AssertUnwindSafe(body));
}

/// The HRESULT DirectML returns where ewise returns `status`.
pub(crate) fn hresult(status: EWISE_STATUS) -> i32 {
    let code: u32 = match status {
        EWISE_OK => 0,
        EWISE_ERROR_NOT_SUPPORTED => 0x887A_0004,
        EWISE_ERROR_OUT_OF_MEMORY => 0x8007_000E,
        EWISE_ERROR_DEVICE_UNAVAILABLE => 0x887A_0005,
        EWISE_ERROR_INTERNAL => 0x8000_4005,
        _ => 0x8007_0057,
    };
    code as i32
}

/// `*ptr`, or `EWISE_ERROR_INVALID_ARGUMENT` naming `what` when it is NULL.
///
/// # Safety
/// A non-NULL `ptr` must point to a valid `T` for `'a`.
pub(crate) unsafe fn deref<'a, T>(ptr: *const T, what: &str) -> Outcome<&'a T> {
    // SAFETY: the caller promises a non-NULL pointer is valid.
    unsafe { ptr.as_ref() }.ok_or_else(|| Failure::invalid(format!("{what} is NULL")))
}

/// Checks an out-pointer is not NULL.
pub(crate) fn out_ptr<T>(ptr: *mut T, what: &str) -> Outcome<()> {
    if ptr.is_null() {
        Err(Failure::invalid(format!("{what} is NULL")))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn last() -> String {
        // SAFETY: `last_error` returns this thread's NUL-terminated message.
        unsafe { std::ffi::CStr::from_ptr(last_error()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn long_messages_are_cut_at_a_character_boundary() {
        let long = "é".repeat(MESSAGE_CAPACITY);
        set_last_error(&long);
        let kept = last();
        assert!(kept.len() < MESSAGE_CAPACITY && kept.ends_with("..."));
        assert!(kept.trim_end_matches("...").chars().all(|c| c == 'é'));
        set_last_error("a\0b");
        assert_eq!(last(), "a b");
        set_last_error("");
        assert_eq!(last(), "");
        let exact = "x".repeat(MESSAGE_CAPACITY - 1);
        set_last_error(&exact);
        assert_eq!(last(), exact);
    }
}
