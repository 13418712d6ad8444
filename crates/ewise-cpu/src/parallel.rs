//! Threads: how many, the pools that provide them, and when to use them.

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
    /// Exactly this many threads (1: the caller's thread only).
    Threads(NonZeroUsize),
}

impl Parallelism {
    /// A fixed thread count; 0 means [`Parallelism::Auto`].
    pub fn threads(n: usize) -> Parallelism {
        NonZeroUsize::new(n).map_or(Parallelism::Auto, Parallelism::Threads)
    }

    /// The thread count this resolves to on this machine. The core count is read once
    /// per process: asking the system reads cgroup files, tens of microseconds that
    /// would otherwise be paid by every compilation.
    pub fn resolve(self) -> usize {
        static CORES: OnceLock<usize> = OnceLock::new();
        match self {
            Parallelism::Auto => *CORES
                .get_or_init(|| std::thread::available_parallelism().map_or(1, NonZeroUsize::get)),
            Parallelism::Threads(n) => n.get(),
        }
    }
}

/// Bytes moved (read plus written) below which an execution stays on one thread.
pub const PARALLEL_THRESHOLD_BYTES: u64 = 4 << 20;

/// Bytes moved from which an execution below [`PARALLEL_THRESHOLD_BYTES`] hands parts to
/// the spinning helper threads (when they are awake) instead of a rayon pool, whose
/// wake-up would cost more than it saves.
pub const MEDIUM_THRESHOLD_BYTES: u64 = 256 << 10;

/// Output bytes from which contiguous runs use streaming stores.
pub const STREAM_THRESHOLD_BYTES: u64 = 8 << 20;

/// A pool of `helpers` threads that work beside the calling thread (which runs one
/// piece itself, in `in_place_scope`), shared by every caller that asks for that many;
/// `None` for no helpers or if the system refuses to start threads.
pub(crate) fn pool(helpers: usize) -> Option<Arc<ThreadPool>> {
    /// Pools by thread count.
    type Pools = Mutex<Vec<(usize, Arc<ThreadPool>)>>;
    static POOLS: OnceLock<Pools> = OnceLock::new();
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
