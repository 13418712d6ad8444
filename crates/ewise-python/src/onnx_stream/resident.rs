//! Keeping the resident set of a run over memory-mapped files bounded: the pages of a
//! shared file mapping that a chunk is done with are unmapped from the process (they
//! stay in the page cache, dirty ones included, and are written back as usual), so
//! reading or writing a file-backed array of any size does not grow the process by it.

use pyo3::prelude::*;

/// How many `.base` links [`shared_file_mapping`] follows at most.
const BASE_LINKS: usize = 64;

/// Whether `array`'s memory is a shared mapping of a file: an `np.memmap` (or a view of
/// one) opened with mode `"r"`, `"r+"` or `"w+"`, whose pages [`release`] may drop.
/// Copy-on-write memmaps (`"c"`), whose written pages exist nowhere else, and every
/// other array answer `false`.
pub(crate) fn shared_file_mapping(array: &Bound<'_, PyAny>) -> PyResult<bool> {
    let memmap = array.py().import("numpy")?.getattr("memmap")?;
    let mut object = array.clone();
    for _ in 0..BASE_LINKS {
        if object.is_instance(&memmap)? {
            let mapped = object.getattr("_mmap").is_ok_and(|m| !m.is_none());
            let mode = object
                .getattr("mode")
                .and_then(|m| m.extract::<String>())
                .unwrap_or_default();
            if mapped {
                return Ok(matches!(mode.as_str(), "r" | "r+" | "w+"));
            }
        }
        match object.getattr("base") {
            Ok(base) if !base.is_none() => object = base,
            _ => break,
        }
    }
    Ok(false)
}

/// Unmaps from this process the pages holding bytes `[low, high)` (whole pages, so
/// neighbouring bytes of those pages go too); their contents are kept by the file's
/// page cache and come back on the next access. Does nothing outside Linux.
///
/// # Safety
/// Every byte of `[low, high)` must lie in a shared file mapping (an array for which
/// [`shared_file_mapping`] answered `true`): in private or anonymous memory, the pages'
/// contents would be lost.
pub(crate) unsafe fn release(low: usize, high: usize) {
    #[cfg(target_os = "linux")]
    {
        /// `MADV_DONTNEED` on every Linux architecture this builds for.
        const MADV_DONTNEED: std::ffi::c_int = 4;
        extern "C" {
            fn madvise(
                addr: *mut std::ffi::c_void,
                len: usize,
                advice: std::ffi::c_int,
            ) -> std::ffi::c_int;
            fn getpagesize() -> std::ffi::c_int;
        }
        if high <= low {
            return;
        }
        // SAFETY: getpagesize has no preconditions.
        let page = usize::try_from(unsafe { getpagesize() }).unwrap_or(4096);
        let start = low - low % page;
        let end = high.div_ceil(page) * page;
        // SAFETY: the pages are part of a shared file mapping (by the caller), which
        // MADV_DONTNEED only unmaps; a failure leaves them mapped, which is harmless.
        unsafe { madvise(start as *mut std::ffi::c_void, end - start, MADV_DONTNEED) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (low, high);
}
