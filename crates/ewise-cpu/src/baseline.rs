//! Memory baselines: copies, the physical limit that SIGN and IS_INFINITY are measured
//! against, since each reads and writes every element once; and a plain read, the limit
//! of an operator that reads much more than it writes (IS_INFINITY of 32- and 64-bit
//! floats).

use std::sync::Mutex;

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
/// into up to `src.len()`), split over `threads` threads as the operators are: on the
/// helper threads, or the pool beyond them (in a forked child, the child's own), under
/// the same cap ([`thread_pieces`](crate::thread_pieces): at most
/// [`max_threads`](crate::max_threads), each moving at least
/// [`MIN_PIECE_BYTES`](crate::MIN_PIECE_BYTES)).
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
    let threads = parallel::thread_pieces(threads, 2 * len as u64);
    let piece = len.div_ceil(threads).next_multiple_of(64).max(64);
    on_threads(
        dst.chunks_mut(piece).zip(src.chunks(piece)).collect(),
        |(d, s)| one(d, s),
    );
}

/// Reads every byte of `src`, split over `threads` threads as [`copy`] is, under the
/// same cap, and returns the bitwise OR of its 8-byte words (zero-padded at the end),
/// so that the reads cannot be left out.
pub fn read(src: &[u8], threads: usize) -> u64 {
    let one = |s: &[u8]| {
        let mut words = s.chunks_exact(8);
        let body = words.by_ref().fold(0u64, |acc, w| {
            acc | u64::from_ne_bytes(w.try_into().unwrap_or_default())
        });
        let mut tail = [0u8; 8];
        tail[..words.remainder().len()].copy_from_slice(words.remainder());
        body | u64::from_ne_bytes(tail)
    };
    let threads = parallel::thread_pieces(threads, src.len() as u64);
    let piece = src.len().div_ceil(threads).next_multiple_of(64).max(64);
    let mut results = vec![0u64; src.len().div_ceil(piece)];
    on_threads(
        results.iter_mut().zip(src.chunks(piece)).collect(),
        |(r, s)| *r = one(s),
    );
    results.iter().fold(0, |acc, r| acc | r)
}

/// Runs `one` on each part, the first on the calling thread, on the threads an operator
/// with as many parts would use: the helper threads (woken if they sleep) when there
/// are enough of them, else the pool, else the calling thread alone. Copies on the
/// pool's workers, which spin on after each job, left the helpers of the operator timed
/// next to them a CPU to share: `ewise bench` put 64 Ki-element SIGN on two threads
/// at 0.25-0.7 of the copy, where one thread runs it at 0.9-1.4.
fn on_threads<T: Send>(parts: Vec<T>, one: impl Fn(T) + Sync) {
    if parts.len() <= 1 {
        parts.into_iter().for_each(one);
    } else if parts.len() <= crate::helper::count() + 1 {
        let slots: Vec<Mutex<Option<T>>> = parts.into_iter().map(|p| Mutex::new(Some(p))).collect();
        let job = |k: usize| {
            let taken = slots[k].lock().unwrap_or_else(|e| e.into_inner()).take();
            if let Some(part) = taken {
                one(part);
            }
        };
        crate::helper::run(&job, slots.len(), true);
    } else if let Some(pool) = parallel::pool(parts.len() - 1) {
        let one = &one;
        pool.in_place_scope(|scope| {
            let mut parts = parts.into_iter();
            let first = parts.next();
            for part in parts {
                scope.spawn(move |_| one(part));
            }
            if let Some(part) = first {
                one(part);
            }
        });
    } else {
        parts.into_iter().for_each(one);
    }
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

    #[test]
    fn reads_see_every_byte() {
        for len in [0usize, 1, 7, 8, 9, 100_003] {
            for at in 0..len.clamp(1, 40) {
                let at = if len == 0 { 0 } else { (at * 2503) % len };
                let mut src = vec![0u8; len];
                if len > 0 {
                    src[at] = 0x80;
                }
                for threads in [1, 2, 3] {
                    let mut word = [0u8; 8];
                    if len > 0 {
                        word[at % 8] = 0x80;
                    }
                    let want = u64::from_ne_bytes(word);
                    assert_eq!(read(&src, threads), want, "{len} {at} {threads}");
                }
            }
        }
    }
}
