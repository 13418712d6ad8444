//! Helper threads: one per extra core, each spinning for [`SPIN`] after its last job
//! before it sleeps, so that a call made while its helper is awake hands over half the
//! work in well under a microsecond, where waking a sleeping rayon worker costs about
//! 15 us (docs/PERFORMANCE.md), and far more in calls repeated a few hundred
//! microseconds apart: on a 2-CPU VM a float64 SIGN moving 4 MiB ran at one thread's
//! speed on the pool (19-25 GB/s) and at 57-70 on the helpers.
//!
//! [`run`] runs jobs `0..n`: job 0 on the caller, each other on a free helper, or on the
//! caller when there is none. A helper that serves another caller is not posted to.
//! A post that its helper has not started when the caller is done with its own jobs (a
//! helper whose CPU the system gave to something else) is taken back and its job run by
//! the caller: the caller waits only for helpers that are running a job, never for one
//! that has not started, so a late helper costs at most the caller's running its job
//! too. A sleeping helper is woken and posted to only for large work ([`run`]'s `wake`);
//! otherwise it is woken for the calls that follow only when calls come often
//! ([`FREQUENT`]), so a sporadic small call runs as on one thread and a frequent one pays
//! at most one unpark before its helper is awake again.
//!
//! The helpers belong to a process generation ([`crate::fork`]): a forked child never
//! looks at its parent's helpers, whose threads it does not have and whose slots may be
//! mid-job, and starts its own on its first medium call. There are at most
//! [`available_cores`](crate::available_cores) - 1 helpers per process.
//!
//! Besides the kernels, buffers, fork handling, placement and cache queries, this module
//! has unsafe code: a job borrowed from the caller's stack is handed to another thread,
//! which the caller waits for before its borrow ends.
#![allow(unsafe_code)]

use std::cell::UnsafeCell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

use crate::fork::PerProcess;
use crate::placement::Placement;

/// How long a helper keeps looking for work after a job before it sleeps.
pub const SPIN: Duration = Duration::from_millis(1);

/// A sleeping helper is woken only for callers that came back within this long (no
/// longer than a helper spins), whose next calls it can serve; a sporadic caller does not
/// pay the wake-up.
pub const FREQUENT: Duration = SPIN;

/// The helper is awake and free.
const IDLE: u32 = 0;
/// The helper sleeps; it is free once woken.
const PARKED: u32 = 1;
/// A caller is writing a job into the slot.
const CLAIMED: u32 = 2;
/// A job waits in the slot; the caller may still take it back (to IDLE).
const POSTED: u32 = 3;
/// The job ran.
const DONE: u32 = 4;
/// The job panicked.
const FAILED: u32 = 5;
/// The helper took the job and runs it.
const RUNNING: u32 = 6;

/// A job with its lifetime erased; see [`run`] for why it outlives its use.
type Job = *const (dyn Fn(usize) + Sync);

/// One helper's mailbox.
struct Slot {
    state: AtomicU32,
    /// The job and the participant index it runs with. Written only by the caller that
    /// moved `state` from IDLE or PARKED to CLAIMED, read only by the helper that moved
    /// it from POSTED to RUNNING.
    job: UnsafeCell<Option<(Job, usize)>>,
    thread: OnceLock<Thread>,
    /// Keeps a woken helper off its waker's CPU.
    placement: Placement,
}

// SAFETY: `job` is accessed under the state protocol above (one writer, then one reader,
// ordered by the release store of POSTED and the acquire exchange from POSTED to
// RUNNING, which the caller's exchange from POSTED back to IDLE excludes); the job it
// points to is `Sync`.
unsafe impl Sync for Slot {}

/// This process generation's helpers and call times.
struct Helpers {
    /// Started on first use: one per available core beyond the first (fewer if the
    /// system refuses threads, none if a fork would go unnoticed).
    slots: OnceLock<Vec<&'static Slot>>,
    /// When this generation first asked for its helpers: the time base of `last`.
    start: Instant,
    /// When the last call came, in nanoseconds after `start` plus 1; 0 before any call.
    last: AtomicU64,
}

static HELPERS: PerProcess<Helpers> = PerProcess::new();

fn helpers() -> &'static Helpers {
    HELPERS.get(|| Helpers {
        slots: OnceLock::new(),
        start: Instant::now(),
        last: AtomicU64::new(0),
    })
}

impl Helpers {
    fn slots(&self) -> &[&'static Slot] {
        self.slots.get_or_init(start)
    }

    /// Whether [`run`] was called less than [`FREQUENT`] ago (by any thread); records
    /// this call.
    fn called_recently(&self) -> bool {
        let now = self.start.elapsed().as_nanos() as u64 + 1;
        let last = self.last.swap(now, Ordering::Relaxed);
        last != 0 && now - last.min(now) < FREQUENT.as_nanos() as u64
    }
}

/// The helpers of a new process generation.
fn start() -> Vec<&'static Slot> {
    if !crate::fork::protected() {
        return Vec::new();
    }
    let extra = crate::Parallelism::Auto.resolve().saturating_sub(1);
    let mut slots = Vec::with_capacity(extra);
    for i in 0..extra {
        let slot: &'static Slot = Box::leak(Box::new(Slot {
            state: AtomicU32::new(IDLE),
            job: UnsafeCell::new(None),
            thread: OnceLock::new(),
            placement: Placement::new(),
        }));
        let spawned = thread::Builder::new()
            .name(format!("ewise-helper-{i}"))
            .spawn(move || serve(slot));
        match spawned {
            Ok(handle) => {
                slot.placement.steer_started(&handle);
                let _ = slot.thread.set(handle.thread().clone());
                slots.push(slot);
            }
            Err(_) => break,
        }
    }
    slots
}

/// A helper's life: run posted jobs; after [`SPIN`] without one, sleep until woken.
fn serve(slot: &'static Slot) {
    slot.placement.register();
    slot.placement.settle();
    let mut last = Instant::now();
    loop {
        match slot.state.load(Ordering::Acquire) {
            POSTED => {
                if slot
                    .state
                    .compare_exchange(POSTED, RUNNING, Ordering::Acquire, Ordering::Relaxed)
                    .is_err()
                {
                    // Taken back by its caller.
                    continue;
                }
                // SAFETY: POSTED was stored (with release) after the job was written;
                // from RUNNING on, the caller waits for DONE or FAILED before the job's
                // borrow ends.
                let job = unsafe { (*slot.job.get()).take() };
                let ok = job.is_some_and(|(job, index)| {
                    // SAFETY: as above: the job is alive until this store of DONE.
                    panic::catch_unwind(AssertUnwindSafe(|| unsafe { (*job)(index) })).is_ok()
                });
                slot.state
                    .store(if ok { DONE } else { FAILED }, Ordering::Release);
                last = Instant::now();
            }
            IDLE if last.elapsed() >= SPIN => {
                if slot
                    .state
                    .compare_exchange(IDLE, PARKED, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
                {
                    while slot.state.load(Ordering::Acquire) == PARKED {
                        thread::park();
                        let _ = slot.state.compare_exchange(
                            PARKED,
                            IDLE,
                            Ordering::AcqRel,
                            Ordering::Relaxed,
                        );
                    }
                    slot.placement.settle();
                    last = Instant::now();
                }
            }
            _ => std::hint::spin_loop(),
        }
    }
}

/// The helpers posted to, each with its job's index: waited for, even while unwinding,
/// and freed.
struct Taken(Vec<(&'static Slot, usize)>);

impl Taken {
    /// Takes back each post its helper has not started, and returns their job indices.
    fn take_back(&mut self) -> Vec<usize> {
        let mut back = Vec::new();
        self.0.retain(|&(slot, index)| {
            let unstarted = slot
                .state
                .compare_exchange(POSTED, IDLE, Ordering::AcqRel, Ordering::Acquire)
                .is_ok();
            if unstarted {
                back.push(index);
            }
            !unstarted
        });
        back
    }

    /// Waits for the helpers that started their jobs; whether none panicked.
    fn wait(&mut self) -> bool {
        let mut ok = true;
        for (slot, _) in self.0.drain(..) {
            let mut spins = 0u32;
            let state = loop {
                let s = slot.state.load(Ordering::Acquire);
                if s == DONE || s == FAILED {
                    break s;
                }
                spins = spins.wrapping_add(1);
                if spins.is_multiple_of(1024) {
                    thread::yield_now();
                } else {
                    std::hint::spin_loop();
                }
            };
            ok &= state == DONE;
            slot.state.store(IDLE, Ordering::Release);
        }
        ok
    }
}

impl Drop for Taken {
    fn drop(&mut self) {
        self.take_back();
        self.wait();
    }
}

/// Whether this target has no threads to start (wasm32, where `std::thread::spawn`
/// fails): then there are no helpers, [`run`] runs every job on the caller, and nothing
/// reads the clock, which wasm32-unknown-unknown does not have.
const NO_THREADS: bool = cfg!(target_family = "wasm");

/// How many helper threads this process generation has (starting them on first use).
pub(crate) fn count() -> usize {
    if NO_THREADS {
        return 0;
    }
    helpers().slots().len()
}

/// Runs `job(0)` to `job(jobs - 1)`, each once, and returns when all have finished: job
/// 0 on the calling thread, each other on a free helper (an awake one; with `wake`, a
/// sleeping one too, woken for it) or on the calling thread when there is none; a job
/// posted to a helper that has not started it once the caller's own jobs are done runs
/// on the caller instead. A job that panics on a helper panics here.
pub(crate) fn run<'a>(job: &'a (dyn Fn(usize) + Sync + 'a), jobs: usize, wake: bool) {
    if NO_THREADS {
        (0..jobs).for_each(job);
        return;
    }
    let helpers = helpers();
    let slots = helpers.slots();
    let frequent = helpers.called_recently();
    let mut taken = Taken(Vec::with_capacity(jobs.saturating_sub(1)));
    let mut mine = Vec::with_capacity(jobs);
    mine.push(0);
    for index in 1..jobs {
        let Some(slot) = slots.get(index - 1) else {
            mine.push(index);
            continue;
        };
        let claimed =
            match slot
                .state
                .compare_exchange(IDLE, CLAIMED, Ordering::Acquire, Ordering::Relaxed)
            {
                Err(PARKED) if wake => slot.state.compare_exchange(
                    PARKED,
                    CLAIMED,
                    Ordering::Acquire,
                    Ordering::Relaxed,
                ),
                other => other,
            };
        match claimed {
            Ok(was) => {
                let borrowed: *const (dyn Fn(usize) + Sync + 'a) = job;
                // SAFETY: only the caller that claimed the slot writes the job; `taken`
                // takes the post back or waits for the helper to finish with it before
                // `job` can go away, on return and on unwinding alike. The lifetime is
                // erased only for the pointer's type: the helper never uses it after
                // storing DONE or FAILED, nor after the post was taken back.
                unsafe {
                    *slot.job.get() = Some((
                        std::mem::transmute::<*const (dyn Fn(usize) + Sync + 'a), Job>(borrowed),
                        index,
                    ));
                }
                slot.state.store(POSTED, Ordering::Release);
                // A sleeping helper leaves its park loop once the state is not PARKED.
                if was == PARKED {
                    wake_helper(slot);
                }
                taken.0.push((slot, index));
            }
            Err(PARKED) => {
                if frequent {
                    wake_helper(slot);
                }
                mine.push(index);
            }
            Err(_) => mine.push(index),
        }
    }
    for index in mine {
        job(index);
    }
    for index in taken.take_back() {
        job(index);
    }
    assert!(taken.wait(), "an ewise helper thread's job panicked");
}

/// Wakes a sleeping helper, off the caller's CPU.
fn wake_helper(slot: &Slot) {
    if let Some(t) = slot.thread.get() {
        slot.placement.steer();
        t.unpark();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    #[cfg(not(target_family = "wasm"))]
    use std::sync::Mutex;

    use super::*;

    /// Every job runs once, on whichever thread: the caller's job 0 is trivial, so most
    /// rounds find helpers that have not started yet and take their jobs back.
    #[test]
    fn every_job_runs_once_whoever_runs_it() {
        for round in 0..2000 {
            let counts: Vec<AtomicUsize> = (0..4).map(|_| AtomicUsize::new(0)).collect();
            let job = |k: usize| {
                counts[k].fetch_add(1, Ordering::Relaxed);
            };
            run(&job, 4, round % 3 == 0);
            assert!(
                counts.iter().all(|c| c.load(Ordering::Relaxed) == 1),
                "round {round}"
            );
            if round % 500 == 0 {
                thread::sleep(SPIN * 2);
            }
        }
    }

    #[test]
    #[cfg(not(target_family = "wasm"))]
    fn callers_on_several_threads_share_the_helpers() {
        thread::scope(|s| {
            for t in 0..4 {
                s.spawn(move || {
                    for _ in 0..500 {
                        let data: Vec<AtomicUsize> = (0..2).map(|_| AtomicUsize::new(0)).collect();
                        let job = |k: usize| data[k].store(t * 10 + k, Ordering::Relaxed);
                        run(&job, 2, t % 2 == 0);
                        let got: Vec<usize> =
                            data.iter().map(|d| d.load(Ordering::Relaxed)).collect();
                        assert_eq!(got, [t * 10, t * 10 + 1]);
                    }
                });
            }
        });
    }

    #[test]
    #[cfg(not(target_family = "wasm"))]
    fn a_panicking_job_on_a_helper_panics_in_the_caller() {
        thread::sleep(Duration::from_millis(1));
        // Wake the helpers and give them time to be awake.
        run(&|_| (), 2, false);
        let result = panic::catch_unwind(|| {
            let job = |k: usize| {
                if k == 1 {
                    panic!("boom");
                }
            };
            run(&job, 2, false);
        });
        // The bad job ran either here (its own panic) or on a helper (ours).
        assert!(result.is_err());
        run(&|_| (), 2, false);
    }

    /// With `wake`, a helper that went to sleep is woken and runs a job. (Other tests
    /// share the helpers, so a try counts only when the helper was asleep just before.)
    #[test]
    #[cfg(not(target_family = "wasm"))]
    fn large_work_wakes_a_sleeping_helper() {
        let Some(slot) = helpers().slots().first() else {
            return;
        };
        let caller = thread::current().id();
        let mut woken = false;
        for _ in 0..200 {
            let deadline = Instant::now() + Duration::from_millis(100);
            while slot.state.load(Ordering::Acquire) != PARKED && Instant::now() < deadline {
                thread::sleep(SPIN);
            }
            if slot.state.load(Ordering::Acquire) != PARKED {
                continue;
            }
            let ran_on = Mutex::new(None);
            // The caller's job gives the woken helper time to start job 1.
            let job = |k: usize| {
                if k == 0 {
                    let until = Instant::now() + Duration::from_millis(200);
                    while ran_on.lock().unwrap().is_none() && Instant::now() < until {
                        std::hint::spin_loop();
                    }
                } else {
                    *ran_on.lock().unwrap() = Some(thread::current().id());
                }
            };
            run(&job, 2, true);
            let ran_on = ran_on.into_inner().unwrap();
            assert!(ran_on.is_some(), "job 1 ran nowhere");
            if ran_on != Some(caller) {
                woken = true;
                break;
            }
        }
        assert!(woken, "no sleeping helper ran a job in 200 tries");
    }
}
