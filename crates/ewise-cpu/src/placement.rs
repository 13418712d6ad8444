//! Where a woken helper thread runs: never on the CPU of the caller that woke it.
//!
//! Linux places a woken thread on its waker's CPU when it judges the two to share a
//! cache ("wake affine"). Where the guest's scheduler sees each virtual CPU as its own
//! cache domain (as on the 2-CPU Zen 4 VM of docs/PERFORMANCE.md), it looks for no idle
//! CPU: a helper woken by a caller was queued behind the caller on the caller's CPU, and
//! often ran only after the caller's whole burst of calls, several milliseconds later.
//! From Python, int8 SIGN of 1 Mi elements in bursts of 21 calls after a pause ran at one
//! thread's 75-91 GB/s in about half the bursts, and at 130-180 in the others.
//!
//! So a caller about to wake a helper first narrows the helper's allowed CPUs to exclude
//! its own ([`Placement::steer`]), and the helper, once running, gives itself back the set
//! it had ([`Placement::settle`]): nothing stays pinned, and the system may place the
//! helper anywhere again later. Elsewhere than Linux both do nothing.
//!
//! A new thread is queued on its creator's CPU in the same way: helpers started by a
//! caller's first medium call waited there for the next scheduler tick (3-4 ms), long
//! after the calls of that burst were done, and then spun on the caller's CPU for
//! [`crate::helper::SPIN`] before parking. So the caller steers each helper it starts
//! ([`Placement::steer_started`]) as it steers one it wakes.

/// One helper thread's placement: which thread it is, and the CPUs to give back to it
/// after a steered wake-up.
pub(crate) struct Placement {
    imp: imp::State,
}

impl Placement {
    pub(crate) const fn new() -> Placement {
        Placement {
            imp: imp::State::new(),
        }
    }

    /// Records the calling thread as the helper this placement steers.
    pub(crate) fn register(&self) {
        self.imp.register();
    }

    /// Called by a caller that is about to wake the helper: until the helper settles, it
    /// may run on any CPU it was allowed but the caller's, which is returned. Nothing is
    /// changed (`None`) when the helper is not registered, is already steered, would have
    /// no CPU left, or the system refuses.
    pub(crate) fn steer(&self) -> Option<usize> {
        self.imp.steer()
    }

    /// Called by the thread that has just started the helper `thread` (before or after the
    /// helper registered): as [`Placement::steer`], for a thread known by its handle. If
    /// the helper settled before this, it stays steered until it next settles (after its
    /// first wake-up): it may then run on any CPU it was allowed but its creator's.
    pub(crate) fn steer_started<T>(&self, thread: &std::thread::JoinHandle<T>) -> Option<usize> {
        self.imp.steer_started(thread)
    }

    /// Called by the helper once awake: its allowed CPUs are again those it had before it
    /// was steered.
    pub(crate) fn settle(&self) {
        self.imp.settle();
    }
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
mod imp {
    use std::mem::{size_of, zeroed};
    use std::os::unix::thread::JoinHandleExt;
    use std::sync::atomic::{AtomicI32, Ordering};
    use std::sync::Mutex;
    use std::thread::JoinHandle;

    pub(super) struct State {
        /// The helper's thread id; 0 before it registers.
        tid: AtomicI32,
        /// The CPUs the helper was allowed before a steer that it has not settled yet.
        before: Mutex<Option<libc::cpu_set_t>>,
    }

    const SIZE: usize = size_of::<libc::cpu_set_t>();

    /// The CPU the calling thread runs on.
    pub(super) fn current_cpu() -> Option<usize> {
        // SAFETY: no arguments; it returns a CPU number or -1.
        usize::try_from(unsafe { libc::sched_getcpu() }).ok()
    }

    /// The CPUs thread `tid` (0: the calling thread) may run on.
    pub(super) fn allowed(tid: libc::pid_t) -> Option<libc::cpu_set_t> {
        // SAFETY: cpu_set_t is plain bits, written for SIZE bytes at most.
        unsafe {
            let mut set: libc::cpu_set_t = zeroed();
            (libc::sched_getaffinity(tid, SIZE, &mut set) == 0).then_some(set)
        }
    }

    fn allow(tid: libc::pid_t, set: &libc::cpu_set_t) -> bool {
        // SAFETY: `set` is a live cpu_set_t of SIZE bytes.
        unsafe { libc::sched_setaffinity(tid, SIZE, set) == 0 }
    }

    impl State {
        pub(super) const fn new() -> State {
            State {
                tid: AtomicI32::new(0),
                before: Mutex::new(None),
            }
        }

        pub(super) fn register(&self) {
            // The system call, not glibc's gettid(), which exists only from glibc 2.30
            // (the artefacts are built for 2.28).
            // SAFETY: SYS_gettid takes no arguments and returns the calling thread's id.
            let tid = unsafe { libc::syscall(libc::SYS_gettid) };
            self.tid.store(tid as libc::pid_t, Ordering::Relaxed);
        }

        pub(super) fn steer(&self) -> Option<usize> {
            let tid = self.tid.load(Ordering::Relaxed);
            if tid == 0 {
                return None;
            }
            self.narrow(|| allowed(tid), |set| allow(tid, set))
        }

        pub(super) fn steer_started<T>(&self, thread: &JoinHandle<T>) -> Option<usize> {
            let handle = thread.as_pthread_t();
            self.narrow(
                || {
                    // SAFETY: `handle` names a thread that has not been joined (its
                    // JoinHandle is borrowed); the set is plain bits of SIZE bytes.
                    unsafe {
                        let mut set: libc::cpu_set_t = zeroed();
                        (libc::pthread_getaffinity_np(handle, SIZE, &mut set) == 0).then_some(set)
                    }
                },
                // SAFETY: as above; `set` is a live cpu_set_t of SIZE bytes.
                |set| unsafe { libc::pthread_setaffinity_np(handle, SIZE, set) == 0 },
            )
        }

        /// Narrows a thread's allowed CPUs (read by `get`, written by `set`) to exclude
        /// the calling thread's CPU, unless it is steered already or would have none left;
        /// records the set it had.
        fn narrow(
            &self,
            get: impl FnOnce() -> Option<libc::cpu_set_t>,
            set: impl FnOnce(&libc::cpu_set_t) -> bool,
        ) -> Option<usize> {
            let cpu = current_cpu().filter(|&c| c < libc::CPU_SETSIZE as usize)?;
            let mut before = self.before.lock().unwrap_or_else(|e| e.into_inner());
            if before.is_some() {
                return None;
            }
            let had = get()?;
            let mut others = had;
            // SAFETY: `cpu` is below CPU_SETSIZE (checked above).
            let excluded = unsafe {
                libc::CPU_CLR(cpu, &mut others);
                libc::CPU_COUNT(&others) > 0 && libc::CPU_COUNT(&others) < libc::CPU_COUNT(&had)
            };
            if excluded && set(&others) {
                *before = Some(had);
                return Some(cpu);
            }
            None
        }

        pub(super) fn settle(&self) {
            let taken = self.before.lock().unwrap_or_else(|e| e.into_inner()).take();
            if let Some(set) = taken {
                allow(0, &set);
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    pub(super) struct State;

    impl State {
        pub(super) const fn new() -> State {
            State
        }
        pub(super) fn register(&self) {}
        pub(super) fn steer(&self) -> Option<usize> {
            None
        }
        pub(super) fn steer_started<T>(&self, _: &std::thread::JoinHandle<T>) -> Option<usize> {
            None
        }
        pub(super) fn settle(&self) {}
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::sync::mpsc;
    use std::thread;

    use super::*;

    fn bits(set: &libc::cpu_set_t) -> Vec<usize> {
        #[allow(unsafe_code)]
        // SAFETY: indices below CPU_SETSIZE.
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| unsafe { libc::CPU_ISSET(c, set) })
            .collect()
    }

    /// A steered thread, woken, runs off the waker's CPU, and settles back to every CPU it
    /// was allowed; a second steer before it settles changes nothing.
    #[test]
    fn a_steered_thread_wakes_off_the_wakers_cpu_and_settles_back() {
        static PLACEMENT: Placement = Placement::new();
        let before = bits(&imp::allowed(0).unwrap());
        let (registered, wait) = mpsc::channel();
        let (cpu_tx, cpu_rx) = mpsc::channel();
        let helper = thread::spawn(move || {
            PLACEMENT.register();
            registered.send(()).unwrap();
            thread::park();
            let ran_on = imp::current_cpu();
            PLACEMENT.settle();
            cpu_tx
                .send((ran_on, bits(&imp::allowed(0).unwrap())))
                .unwrap();
        });
        wait.recv().unwrap();
        let avoided = PLACEMENT.steer();
        assert_eq!(PLACEMENT.steer(), None, "steered twice");
        helper.thread().unpark();
        let (ran_on, after) = cpu_rx.recv().unwrap();
        helper.join().unwrap();
        assert_eq!(after, before, "the allowed CPUs were not given back");
        if before.len() >= 2 {
            let avoided = avoided.expect("not steered, with two CPUs allowed");
            assert_ne!(ran_on, Some(avoided), "woke on the waker's CPU");
        } else {
            assert_eq!(avoided, None);
        }
    }

    /// A thread steered by its creator runs off the creator's CPU and settles back; one
    /// that settled before its creator steered it stays off that CPU until it settles
    /// again.
    #[test]
    fn a_started_thread_runs_off_its_creators_cpu_and_settles_back() {
        static PLACEMENT: Placement = Placement::new();
        let before = bits(&imp::allowed(0).unwrap());
        let (steered_tx, steered) = mpsc::channel();
        let (report, reports) = mpsc::channel();
        let thread = thread::spawn(move || {
            PLACEMENT.register();
            steered.recv().unwrap();
            let ran_on = imp::current_cpu();
            PLACEMENT.settle();
            report
                .send((ran_on, bits(&imp::allowed(0).unwrap())))
                .unwrap();
            // Settled already when its creator steers it a second time.
            steered.recv().unwrap();
            report
                .send((None, bits(&imp::allowed(0).unwrap())))
                .unwrap();
            PLACEMENT.settle();
            report
                .send((None, bits(&imp::allowed(0).unwrap())))
                .unwrap();
        });
        let avoided = PLACEMENT.steer_started(&thread);
        assert_eq!(PLACEMENT.steer_started(&thread), None, "steered twice");
        steered_tx.send(()).unwrap();
        let (ran_on, after) = reports.recv().unwrap();
        assert_eq!(after, before, "the allowed CPUs were not given back");
        let again = PLACEMENT.steer_started(&thread);
        steered_tx.send(()).unwrap();
        let (_, narrowed) = reports.recv().unwrap();
        let (_, settled) = reports.recv().unwrap();
        thread.join().unwrap();
        assert_eq!(settled, before, "the allowed CPUs were not given back");
        if before.len() >= 2 {
            let avoided = avoided.expect("not steered, with two CPUs allowed");
            assert_ne!(ran_on, Some(avoided), "started on its creator's CPU");
            let again = again.expect("not steered after settling");
            assert!(
                !narrowed.contains(&again),
                "{narrowed:?} still holds CPU {again}"
            );
            assert_eq!(narrowed.len(), before.len() - 1);
        } else {
            assert_eq!((avoided, again), (None, None));
            assert_eq!(narrowed, before);
        }
    }
}
