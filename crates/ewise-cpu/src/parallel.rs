//! Threads: how many, the pool that provides them, and when to use them.
//!
//! The thread cap lives here, once: [`max_threads`] is the most threads any execution
//! uses (the operators, the [`baseline`](crate::baseline) copies and reads), and
//! [`MIN_PIECE_BYTES`] the least work a thread is given. [`Parallelism::resolve`] applies
//! the first, [`thread_pieces`] both. Front ends that take a thread count (the CLI's
//! `--threads`, the Python package's `threads=`) are bounded by the same rule.
//!
//! A process runs executions on at most [`max_threads`] - 1 rayon workers (one pool,
//! shared by every thread count and grown when a count needs more workers, plus, while
//! its workers exit, at most one pool it replaced) and [`available_cores`] - 1 spinning
//! helpers (for medium sizes), beside the callers' own threads. A forked child starts
//! its own pool and helpers ([`crate::fork`]).

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;

use rayon::{ThreadPool, ThreadPoolBuilder};

use crate::fork::PerProcess;

/// How many threads an operator may use. Threads are only used above size thresholds
/// ([`MEDIUM_THRESHOLD_BYTES`], [`PARALLEL_THRESHOLD_BYTES`]); smaller tensors run on
/// the caller's thread with no dispatch cost.
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
    /// 0 until read; threads that read it at once all store the same count.
    static CORES: AtomicUsize = AtomicUsize::new(0);
    match CORES.load(Ordering::Relaxed) {
        0 => {
            let cores = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
            CORES.store(cores, Ordering::Relaxed);
            cores
        }
        cores => cores,
    }
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

/// Bytes moved (read plus written) from which an execution always runs on several
/// threads: its parts go to the helper threads, woken if they sleep, or, when it has
/// more parts than the helpers and the caller can take (a thread count above the
/// cores), to a rayon pool. Below it, only helpers that are awake take parts.
pub const PARALLEL_THRESHOLD_BYTES: u64 = 4 << 20;

/// Bytes moved from which an execution hands parts to the spinning helper threads that
/// are awake (below [`PARALLEL_THRESHOLD_BYTES`], it does not wake sleeping ones, whose
/// wake-up would cost more than it saves); smaller executions stay on one thread.
pub const MEDIUM_THRESHOLD_BYTES: u64 = 256 << 10;

/// The pool with at least `helpers` workers (at most [`max_threads`] - 1) that work
/// beside the calling thread (which runs one piece itself, in `in_place_scope`); `None`
/// for no helpers, or if the system refuses threads and there is no pool yet (a smaller
/// pool is returned if a larger one cannot be started).
///
/// Every caller shares one pool per process generation: a count above its size replaces
/// it with one of at least twice its workers (at most [`max_threads`] - 1), and the old
/// pool's workers exit once the executions that hold it finish. Before a second
/// replacement, the one before it must have finished, so at most one replaced pool has
/// workers at any time. Callers fetch the pool for each execution and keep it no longer.
/// wasm32 starts no threads, so it has no pool.
pub(crate) fn pool(helpers: usize) -> Option<Arc<ThreadPool>> {
    static POOLS: PerProcess<Mutex<Pools>> = PerProcess::new();
    let cap = max_threads() - 1;
    let helpers = helpers.min(cap);
    if helpers == 0 || cfg!(target_family = "wasm") {
        return None;
    }
    let mut pools = POOLS
        .get(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let size = match &pools.current {
        Some((pool, _)) if pool.current_num_threads() >= helpers => return Some(pool.clone()),
        Some((pool, _)) => helpers.max(pool.current_num_threads().saturating_mul(2)),
        None => helpers,
    }
    .min(cap);
    if !crate::fork::protected() {
        return None;
    }
    if let Some(retired) = pools.retired.take() {
        retired.wait_until_gone();
    }
    let live = Arc::new(Live::default());
    let Some(pool) = build(size, &live) else {
        pools.retired = Some(live);
        return pools.current.as_ref().map(|(pool, _)| pool.clone());
    };
    let pool = Arc::new(pool);
    let old = pools.current.replace((pool.clone(), live));
    pools.retired = old.map(|(_, live)| live);
    Some(pool)
}

/// A process generation's pool.
#[derive(Default)]
struct Pools {
    /// The pool callers get, with its running workers.
    current: Option<(Arc<ThreadPool>, Arc<Live>)>,
    /// The running workers of the pool `current` last replaced.
    retired: Option<Arc<Live>>,
}

/// How many of a pool's worker threads are running.
#[derive(Default)]
struct Live {
    threads: Mutex<usize>,
    exited: Condvar,
}

impl Live {
    fn count(&self) -> MutexGuard<'_, usize> {
        self.threads.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wait_until_gone(&self) {
        let mut threads = self.count();
        while *threads > 0 {
            threads = self
                .exited
                .wait(threads)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// Counts one running worker of a [`Live`] until dropped, at its thread's end.
struct Running(Arc<Live>);

impl Running {
    fn new(live: &Arc<Live>) -> Running {
        *live.count() += 1;
        Running(live.clone())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let mut threads = self.0.count();
        *threads -= 1;
        if *threads == 0 {
            self.0.exited.notify_all();
        }
    }
}

/// A pool of `size` workers counted in `live`; `None` if the system refuses threads.
fn build(size: usize, live: &Arc<Live>) -> Option<ThreadPool> {
    let live = live.clone();
    ThreadPoolBuilder::new()
        .num_threads(size)
        .thread_name(|i| format!("ewise-{i}"))
        .spawn_handler(move |worker| {
            let mut builder = thread::Builder::new();
            if let Some(name) = worker.name() {
                builder = builder.name(name.to_owned());
            }
            if let Some(bytes) = worker.stack_size() {
                builder = builder.stack_size(bytes);
            }
            let running = Running::new(&live);
            builder
                .spawn(move || {
                    let _running = running;
                    worker.run();
                })
                .map(drop)
        })
        .build()
        .ok()
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
