//! Statuses, this thread's last message, and the guard every entry point runs in: no
//! panic crosses the boundary, and every status comes with its message.

use std::cell::{Cell, RefCell};
use std::ffi::{c_char, CString};
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
    /// `EWISE_ERROR_NOT_SUPPORTED` (`DXGI_ERROR_UNSUPPORTED`); every other refusal of a
    /// description or binding is `EWISE_ERROR_INVALID_ARGUMENT` (`E_INVALIDARG`).
    fn from(e: Error) -> Failure {
        let status = match e {
            Error::OperatorNotAvailable { .. }
            | Error::UnsupportedDataType { .. }
            | Error::FeatureLevelUnavailable { .. } => EWISE_ERROR_NOT_SUPPORTED,
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
            GpuError::OutOfHostMemory { .. } => EWISE_ERROR_OUT_OF_MEMORY,
            GpuError::NoAdapter { .. }
            | GpuError::DeviceRequest { .. }
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

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
    /// Whether `LAST_ERROR` holds a message: successes read only this flag.
    static HAS_ERROR: Cell<bool> = const { Cell::new(false) };
}

fn set_last_error(message: &str) {
    if message.is_empty() && !HAS_ERROR.get() {
        return;
    }
    let text = match message {
        "" => CString::default(),
        m => CString::new(m.replace('\0', " ")).unwrap_or_default(),
    };
    HAS_ERROR.set(!message.is_empty());
    LAST_ERROR.with(|last| *last.borrow_mut() = text);
}

/// This thread's last message, valid until its next status-returning call.
pub(crate) fn last_error() -> *const c_char {
    LAST_ERROR.with(|last| last.borrow().as_ptr())
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
