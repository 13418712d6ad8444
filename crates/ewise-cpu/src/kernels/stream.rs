//! Streaming (non-temporal) stores: writing outputs that will not be read soon without
//! first reading their cache lines.

/// Whether this target has non-temporal stores here (x86-64). Where it has none,
/// [`copy`] is a plain copy, and the streaming kernels write their outputs directly
/// rather than through a cache-resident block and a copy.
pub(crate) const NON_TEMPORAL: bool = cfg!(target_arch = "x86_64");

/// How far ahead of their reads, in bytes, the streaming loops prefetch their input into
/// L1. Without it, reads of a stream larger than the caches run 10-15% slower on Zen 1
/// (the hardware prefetchers alone keep too few lines in flight); 512 bytes measured
/// ahead of 1024 and 2048 there.
#[cfg(target_arch = "x86_64")]
const PREFETCH_DISTANCE: usize = 512;

/// Copies `src` into `dst` (same length): on x86-64 with non-temporal stores for the
/// 16-byte aligned middle, prefetching `src` ahead ([`prefetch_ahead`]); elsewhere
/// a plain copy. Callers finish a sequence of these with [`fence`].
#[inline]
pub(crate) fn copy(dst: &mut [u8], src: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        copy_x86(dst, src);
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        dst.copy_from_slice(src);
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
fn copy_x86(dst: &mut [u8], src: &[u8]) {
    let len = dst.len().min(src.len());
    let head = dst.as_ptr().align_offset(16).min(len);
    dst[..head].copy_from_slice(&src[..head]);
    let body = (len - head) / 16 * 16;
    let (d, s) = (&mut dst[head..head + body], &src[head..head + body]);
    for (dl, sl) in d.chunks_exact_mut(64).zip(s.chunks_exact(64)) {
        prefetch_ahead(sl.as_ptr(), 64);
        for (dc, sc) in dl.chunks_exact_mut(16).zip(sl.chunks_exact(16)) {
            // SAFETY: 16 bytes each, and `dc` is 16-byte aligned: `d` starts so (the head
            // was peeled above) and every chunk is a multiple of 16 bytes into it.
            unsafe { stream16(dc.as_mut_ptr(), sc.as_ptr()) };
        }
    }
    let rest = body / 64 * 64;
    for (dc, sc) in d[rest..]
        .chunks_exact_mut(16)
        .zip(s[rest..].chunks_exact(16))
    {
        // SAFETY: as above.
        unsafe { stream16(dc.as_mut_ptr(), sc.as_ptr()) };
    }
    dst[head + body..len].copy_from_slice(&src[head + body..len]);
}

/// Copies the 16 bytes at `src` to `dst` with a non-temporal store.
///
/// # Safety
///
/// `src` must be readable and `dst` writable for 16 bytes, and `dst` 16-byte aligned.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[inline(always)]
unsafe fn stream16(dst: *mut u8, src: *const u8) {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
    // SAFETY: as the caller guarantees; the load is unaligned-tolerant. SSE2 is part of
    // the x86-64 baseline.
    unsafe { _mm_stream_si128(dst.cast::<__m128i>(), _mm_loadu_si128(src.cast())) }
}

/// Orders earlier streaming stores before any later store (`sfence` on x86-64).
#[inline]
pub(crate) fn fence() {
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    // SAFETY: `sfence` has no preconditions; SSE is part of the x86-64 baseline.
    unsafe {
        std::arch::x86_64::_mm_sfence();
    }
}

/// Asks for the `bytes` bytes that lie [`PREFETCH_DISTANCE`] past `at` to be brought
/// into the first-level cache (`prefetcht0` per 64-byte line), for a loop that has just
/// reached `at` in a stream it reads front to back. A hint only: the addresses may lie
/// anywhere, even past the end of the stream, as a prefetch never faults and never
/// changes memory.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn prefetch_ahead(at: *const u8, bytes: usize) {
    for line in (0..bytes).step_by(64) {
        let addr = at.wrapping_add(PREFETCH_DISTANCE + line);
        #[allow(unsafe_code)]
        // SAFETY: a prefetch is a hint with no architectural effect, valid for any address.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(addr.cast());
        }
    }
}

/// Asks for the cache lines of `data` to be brought into the second-level cache ahead
/// of reads (`prefetcht1` on x86-64; nothing elsewhere). A hint only: it never faults
/// and never changes memory. Lines that will be read soon but not at once go to L2
/// rather than L1: rows whose pitch is a multiple of 4 KiB share a few L1 sets, and
/// prefetching many of them into L1 evicts them again before they are read.
#[inline(always)]
pub(crate) fn prefetch_l2(data: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    for line in data.chunks(64) {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T1};
        #[allow(unsafe_code)]
        // SAFETY: a prefetch is a hint with no architectural effect; the address is
        // inside `data`.
        unsafe {
            _mm_prefetch::<_MM_HINT_T1>(line.as_ptr().cast());
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = data;
}
