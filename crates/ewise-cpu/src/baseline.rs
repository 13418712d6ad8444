//! Memory-copy baselines: the physical limit that SIGN and IS_INFINITY are measured
//! against, since each reads and writes every element once.

use crate::kernels::stream;
use crate::parallel;

/// How a baseline copy writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CopyKind {
    /// `copy_from_slice` (the platform's `memcpy`).
    Plain,
    /// Streaming (non-temporal) stores, which skip reading the destination's cache lines.
    Streaming,
}

impl CopyKind {
    /// Lower-case name: `plain` or `streaming`.
    pub fn name(self) -> &'static str {
        match self {
            CopyKind::Plain => "plain",
            CopyKind::Streaming => "streaming",
        }
    }
}

/// Copies `src` into `dst` (which must have the same length; a longer one is copied
/// into up to `src.len()`), split over `threads` threads of the same pools the
/// operators use.
pub fn copy(dst: &mut [u8], src: &[u8], kind: CopyKind, threads: usize) {
    let len = dst.len().min(src.len());
    let (dst, src) = (&mut dst[..len], &src[..len]);
    let one = |d: &mut [u8], s: &[u8]| match kind {
        CopyKind::Plain => d.copy_from_slice(s),
        CopyKind::Streaming => {
            stream::copy(d, s);
            stream::fence();
        }
    };
    let Some(pool) = parallel::pool(threads.saturating_sub(1)) else {
        one(dst, src);
        return;
    };
    let piece = len.div_ceil(threads).next_multiple_of(64).max(64);
    pool.in_place_scope(|scope| {
        let mut pieces = dst.chunks_mut(piece).zip(src.chunks(piece));
        let first = pieces.next();
        for (d, s) in pieces {
            scope.spawn(move |_| one(d, s));
        }
        if let Some((d, s)) = first {
            one(d, s);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_are_exact() {
        let src: Vec<u8> = (0..100_003u32).map(|i| (i * 7 + 3) as u8).collect();
        for kind in [CopyKind::Plain, CopyKind::Streaming] {
            for threads in [1, 2, 3] {
                let mut dst = vec![0u8; src.len()];
                copy(&mut dst[..], &src, kind, threads);
                assert!(dst == src, "{kind:?} {threads}");
                let mut dst = vec![0u8; src.len() + 1];
                copy(&mut dst[1..], &src, kind, threads);
                assert!(dst[1..] == src[..], "{kind:?} {threads} misaligned");
            }
        }
    }
}
