//! What survives `fork()`.
//!
//! A forked child has only the thread that called `fork()`: ewise's helper threads and
//! pool workers are gone, and whatever they held at that moment (a helper's job slot, a
//! pool's locks, a registry's mutex) stays held forever. So everything that refers to
//! ewise's threads lives in a [`PerProcess`] value, made anew in each process
//! *generation*: a counter that a `pthread_atfork` child handler, registered before the
//! first helper or pool thread starts ([`protected`]), increases in every child. A child
//! leaves its parent's values as they are (leaked: never dropped, joined or locked) and
//! makes its own, whose threads start on demand. Devices, operators and compiled
//! operators survive a fork unchanged and run in the child; threads do not, and the
//! child's first call that needs them starts them again.
//!
//! Without `fork()` (non-unix targets) the generation is constant.
#![allow(unsafe_code)]

use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

/// A value per process generation, made on first use in each generation and never
/// freed; reading it costs two atomic loads.
pub(crate) struct PerProcess<T> {
    current: AtomicPtr<Entry<T>>,
}

struct Entry<T> {
    generation: u64,
    value: T,
}

impl<T: Sync + 'static> PerProcess<T> {
    /// None yet.
    pub(crate) const fn new() -> Self {
        PerProcess {
            current: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// This generation's value, made with `make` if there is none. `make` may run on
    /// several threads at once, all but one of its results dropped unused: it must not
    /// start threads.
    #[inline]
    pub(crate) fn get(&self, make: impl Fn() -> T) -> &'static T {
        let generation = generation();
        let seen = self.current.load(Ordering::Acquire);
        // SAFETY: a non-null `current` came from `Box::into_raw` in `replace`, published
        // with release and never freed.
        match unsafe { seen.as_ref() } {
            Some(entry) if entry.generation == generation => &entry.value,
            _ => self.replace(seen, generation, make),
        }
    }

    /// Installs a value for `generation` in place of `seen` (another generation's, or
    /// none), unless another thread of this generation installed one first. `seen` is
    /// leaked, never dropped: its threads may be gone with its locks held.
    #[cold]
    fn replace(
        &self,
        mut seen: *mut Entry<T>,
        generation: u64,
        make: impl Fn() -> T,
    ) -> &'static T {
        let fresh = Box::into_raw(Box::new(Entry {
            generation,
            value: make(),
        }));
        loop {
            match self
                .current
                .compare_exchange(seen, fresh, Ordering::AcqRel, Ordering::Acquire)
            {
                // SAFETY: `fresh` is now published and, like every entry, never freed.
                Ok(_) => return unsafe { &(*fresh).value },
                Err(now) => {
                    // SAFETY: as in `get`.
                    if let Some(entry) = unsafe { now.as_ref() } {
                        if entry.generation == generation {
                            // SAFETY: `fresh` was never published: this is its only owner.
                            drop(unsafe { Box::from_raw(fresh) });
                            return &entry.value;
                        }
                    }
                    seen = now;
                }
            }
        }
    }
}

/// This process's generation: 0 in a process that was not forked from one using ewise,
/// one more in a forked child than in its parent (or more).
#[inline]
pub(crate) fn generation() -> u64 {
    imp::generation()
}

/// Whether a fork is noticed: registers the child handler on first use (in each process
/// where no thread has yet), false only if the system refused it, in which case ewise
/// starts no threads. Call before starting any thread that a [`PerProcess`] value owns.
pub(crate) fn protected() -> bool {
    imp::protected()
}

#[cfg(unix)]
mod imp {
    use std::sync::atomic::{AtomicU64, Ordering};

    static GENERATION: AtomicU64 = AtomicU64::new(0);

    /// [`NONE`], [`REGISTERED`], [`REFUSED`], or the id of the process one of whose
    /// threads is registering the handler.
    static HANDLER: AtomicU64 = AtomicU64::new(NONE);
    const NONE: u64 = 0;
    const REGISTERED: u64 = u64::MAX;
    const REFUSED: u64 = u64::MAX - 1;

    /// Runs in the child, on the thread that forked, before `fork()` returns.
    extern "C" fn forked() {
        GENERATION.fetch_add(1, Ordering::Relaxed);
    }

    #[inline]
    pub(super) fn generation() -> u64 {
        GENERATION.load(Ordering::Relaxed)
    }

    pub(super) fn protected() -> bool {
        loop {
            let state = HANDLER.load(Ordering::Acquire);
            match state {
                REGISTERED => return true,
                REFUSED => return false,
                _ => {}
            }
            let me = u64::from(std::process::id());
            if state == me {
                std::thread::yield_now();
                continue;
            }
            // NONE, or a parent's thread was registering when this process forked from
            // it: that thread is not here to finish. If the parent's handler was already
            // in place, a child bumps the generation twice per fork, which is harmless.
            if HANDLER
                .compare_exchange(state, me, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
            {
                continue;
            }
            // SAFETY: `forked` is a valid `extern "C" fn()` for the life of the process;
            // it only increments an atomic, which is async-signal-safe, as a child
            // handler must be.
            let rc = unsafe { libc::pthread_atfork(None, None, Some(forked)) };
            let done = if rc == 0 { REGISTERED } else { REFUSED };
            HANDLER.store(done, Ordering::Release);
            return rc == 0;
        }
    }
}

#[cfg(not(unix))]
mod imp {
    #[inline]
    pub(super) fn generation() -> u64 {
        0
    }

    pub(super) fn protected() -> bool {
        true
    }
}

/// Threads ask at once: not on wasm32, which has none.
#[cfg(all(test, not(target_family = "wasm")))]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;

    #[test]
    fn one_value_per_generation_whoever_asks_first() {
        static VALUE: PerProcess<AtomicUsize> = PerProcess::new();
        let made = AtomicUsize::new(0);
        let firsts: Vec<usize> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    s.spawn(|| {
                        let v = VALUE.get(|| {
                            made.fetch_add(1, Ordering::Relaxed);
                            AtomicUsize::new(0)
                        });
                        v as *const AtomicUsize as usize
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(firsts.windows(2).all(|w| w[0] == w[1]));
        assert!(made.load(Ordering::Relaxed) >= 1);
        assert!(protected());
        assert!(protected());
    }
}
