//! Streaming (non-temporal) stores: writing outputs that will not be read soon without
//! first reading their cache lines.

/// Whether this target has non-temporal stores here (x86-64). Where it has none,
/// [`copy`] is a plain copy, and the streaming kernels write their outputs directly
/// rather than through a cache-resident block and a copy.
pub(crate) const NON_TEMPORAL: bool = cfg!(target_arch = "x86_64");

/// Copies `src` into `dst` (same length), with non-temporal stores for the 16-byte
/// aligned middle on x86-64 and plain copies elsewhere. Callers finish a sequence of
/// these with [`fence`].
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
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
    let len = dst.len().min(src.len());
    let head = dst.as_ptr().align_offset(16).min(len);
    dst[..head].copy_from_slice(&src[..head]);
    let body = (len - head) / 16 * 16;
    let (d, s) = (&mut dst[head..head + body], &src[head..head + body]);
    for (dc, sc) in d.chunks_exact_mut(16).zip(s.chunks_exact(16)) {
        // SAFETY: `sc` and `dc` are 16 bytes each; the load is unaligned-tolerant and
        // `dc` starts 16-byte aligned (the head was peeled above), as `_mm_stream_si128`
        // requires. SSE2 is part of the x86-64 baseline.
        unsafe {
            let v = _mm_loadu_si128(sc.as_ptr().cast::<__m128i>());
            _mm_stream_si128(dc.as_mut_ptr().cast::<__m128i>(), v);
        }
    }
    dst[head + body..len].copy_from_slice(&src[head + body..len]);
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
