//! Threads: how many, the pools that provide them, and when to use them.
//!
//! The thread cap lives here, once: [`max_threads`] is the most threads any execution
//! uses (the operators, the [`baseline`](crate::baseline) copies and reads), and
//! [`MIN_PIECE_BYTES`] the least work a thread is given. [`Parallelism::resolve`] applies
//! the first, [`thread_pieces`] both. Front ends that take a thread count (the CLI's
//! `--threads`, the Python package's `threads=`) are bounded by the same rule.

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, OnceLock};

use rayon::{ThreadPool, ThreadPoolBuilder};

/// How many threads an operator may use. Threads are only used above a size threshold
/// ([`PARALLEL_THRESHOLD_BYTES`]); smaller tensors run on the caller's thread with no
/// dispatch cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Parallelism {
    /// One thread per available core.
    #[default]
    Auto,
    /// This many threads (1: the caller's thread only), up to [`max_threads`]: a larger
    /// count resolves to [`max_threads`].
    Threads(NonZeroUsize),
}

impl Parallelism {
    /// A fixed thread count; 0 means [`Parallelism::Auto`].
    pub fn threads(n: usize) -> Parallelism {
        NonZeroUsize::new(n).map_or(Parallelism::Auto, Parallelism::Threads)
    }

    /// The thread count this resolves to on this machine: [`available_cores`] for
    /// [`Parallelism::Auto`] (at most [`MAX_THREADS`]), the given count for
    /// [`Parallelism::Threads`], at most [`max_threads`]. Always at least 1.
    pub fn resolve(self) -> usize {
        match self {
            Parallelism::Auto => available_cores().min(MAX_THREADS),
            Parallelism::Threads(n) => n.get().min(max_threads()),
        }
    }
}

/// Threads per available core that a thread count may ask for: beyond one per core
/// threads only share the cores (and memory bandwidth) the first ones already use, so
/// more than a few per core never helps and only costs their creation and wake-ups.
pub const THREADS_PER_CORE: usize = 4;

/// The most threads ever used, whatever the core count.
pub const MAX_THREADS: usize = 256;

/// Bytes moved (read plus written, counting every element's input and output) that each
/// thread's piece of an execution moves at least: smaller pieces cost more to hand over
/// than they save. Half the smallest piece measured to pay on a second thread (256 KiB
/// moved split in two, docs/PERFORMANCE.md); with it, an execution at
/// [`MEDIUM_THRESHOLD_BYTES`] still splits across up to four threads.
pub const MIN_PIECE_BYTES: u64 = 64 << 10;

/// The cores this process may run on ([`std::thread::available_parallelism`], 1 when
/// unknown), read once per process: asking the system reads cgroup files, tens of
/// microseconds that would otherwise be paid by every compilation.
pub fn available_cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, NonZeroUsize::get))
}

/// The most threads an execution uses on this machine: [`THREADS_PER_CORE`] per
/// available core, at most [`MAX_THREADS`]. Thread counts above it are treated as it.
pub fn max_threads() -> usize {
    available_cores()
        .saturating_mul(THREADS_PER_CORE)
        .clamp(1, MAX_THREADS)
}

/// How many pieces work moving `moved_bytes` is split into on `threads` threads: at most
/// `threads` (itself capped at [`max_threads`]), few enough that each piece moves at
/// least [`MIN_PIECE_BYTES`] on average, and at least 1.
pub fn thread_pieces(threads: usize, moved_bytes: u64) -> usize {
    let by_size = usize::try_from(moved_bytes / MIN_PIECE_BYTES).unwrap_or(usize::MAX);
    threads.min(max_threads()).min(by_size).max(1)
}

/// Bytes moved (read plus written) below which an execution stays on one thread.
pub const PARALLEL_THRESHOLD_BYTES: u64 = 4 << 20;

/// Bytes moved from which an execution below [`PARALLEL_THRESHOLD_BYTES`] hands parts to
/// the spinning helper threads (when they are awake) instead of a rayon pool, whose
/// wake-up would cost more than it saves.
pub const MEDIUM_THRESHOLD_BYTES: u64 = 256 << 10;

/// Output bytes from which contiguous runs use streaming stores.
pub const STREAM_THRESHOLD_BYTES: u64 = 8 << 20;

/// A pool of `helpers` threads (at most [`max_threads`] - 1) that work beside the
/// calling thread (which runs one piece itself, in `in_place_scope`), shared by every
/// caller that asks for that many; `None` for no helpers or if the system refuses to
/// start threads.
pub(crate) fn pool(helpers: usize) -> Option<Arc<ThreadPool>> {
    /// Pools by thread count.
    type Pools = Mutex<Vec<(usize, Arc<ThreadPool>)>>;
    static POOLS: OnceLock<Pools> = OnceLock::new();
    let helpers = helpers.min(max_threads() - 1);
    if helpers == 0 {
        return None;
    }
    let mut pools = POOLS
        .get_or_init(|| Mutex::new(Vec::new()))
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, p)) = pools.iter().find(|(n, _)| *n == helpers) {
        return Some(p.clone());
    }
    let pool = Arc::new(
        ThreadPoolBuilder::new()
            .num_threads(helpers)
            .thread_name(|i| format!("ewise-{i}"))
            .build()
            .ok()?,
    );
    pools.push((helpers, pool.clone()));
    Some(pool)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_counts_are_capped() {
        let cap = max_threads();
        assert!((1..=MAX_THREADS).contains(&cap));
        assert!(cap >= available_cores().min(MAX_THREADS));
        assert_eq!(Parallelism::threads(100_000).resolve(), cap);
        assert_eq!(Parallelism::threads(usize::MAX).resolve(), cap);
        assert_eq!(Parallelism::threads(1).resolve(), 1);
        assert_eq!(Parallelism::threads(cap).resolve(), cap);
        assert_eq!(
            Parallelism::Auto.resolve(),
            available_cores().min(MAX_THREADS)
        );
    }

    #[test]
    fn pieces_move_at_least_the_minimum() {
        for moved in [
            0,
            1,
            MIN_PIECE_BYTES - 1,
            MIN_PIECE_BYTES,
            5 * MIN_PIECE_BYTES + 3,
            u64::MAX,
        ] {
            for threads in [0, 1, 2, 3, 1024, usize::MAX] {
                let n = thread_pieces(threads, moved);
                assert!(n >= 1 && n <= threads.max(1) && n <= max_threads());
                assert!(
                    n == 1 || moved / n as u64 >= MIN_PIECE_BYTES,
                    "{moved} {threads}"
                );
            }
        }
    }
}
