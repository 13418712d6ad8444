//! Where helper threads run: a helper woken by a caller leaves the caller's CPU.
//!
//! Linux places a woken thread on its waker's CPU when it judges the two to share a
//! cache ("wake affine"); where the guest's scheduler sees each virtual CPU as its own
//! cache domain (as on the 2-CPU Zen 4 VM of docs/PERFORMANCE.md), no idle CPU is looked
//! for, so a helper woken by a caller ran on the caller's CPU: it took turns with the
//! caller instead of working beside it, and spun there for its [`crate::helper::SPIN`]
//! after each job. Seen from Python: int8 SIGN of 1 Mi elements ran at one thread's
//! 82-91 GB/s after each pause of the caller, and at 133-151 with the helper pinned
//! elsewhere.
//!
//! [`move_off`] moves the calling thread to another of its allowed CPUs and gives it back
//! the CPUs it was allowed before, so nothing stays pinned: the system may place it
//! anywhere again later. Elsewhere than Linux both functions do nothing.

/// No CPU known.
pub(crate) const NO_CPU: u32 = u32::MAX;

/// The CPU the calling thread runs on, or [`NO_CPU`].
pub(crate) fn current_cpu() -> u32 {
    imp::current_cpu()
}

/// Moves the calling thread off `cpu` if it runs there and may run elsewhere, then
/// restores its set of allowed CPUs. Failures (a set the system will not report or
/// take, a CPU beyond the set's size) leave the thread where it is.
pub(crate) fn move_off(cpu: u32) {
    if cpu != NO_CPU && current_cpu() == cpu {
        imp::move_off(cpu);
    }
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
mod imp {
    use std::mem::{size_of, zeroed};

    use super::NO_CPU;

    pub(super) fn current_cpu() -> u32 {
        // SAFETY: no arguments; it returns a CPU number or -1.
        let cpu = unsafe { libc::sched_getcpu() };
        u32::try_from(cpu).unwrap_or(NO_CPU)
    }

    pub(super) fn move_off(cpu: u32) {
        let cpu = cpu as usize;
        let size = size_of::<libc::cpu_set_t>();
        // SAFETY: cpu_set_t is plain bits; every pointer is to a live local of `size`
        // bytes; CPU_ISSET and CPU_CLR take indices below CPU_SETSIZE, checked first.
        unsafe {
            let mut allowed: libc::cpu_set_t = zeroed();
            if libc::sched_getaffinity(0, size, &mut allowed) != 0
                || cpu >= libc::CPU_SETSIZE as usize
                || !libc::CPU_ISSET(cpu, &allowed)
            {
                return;
            }
            let mut others = allowed;
            libc::CPU_CLR(cpu, &mut others);
            if libc::CPU_COUNT(&others) == 0 {
                return;
            }
            if libc::sched_setaffinity(0, size, &others) == 0 {
                libc::sched_setaffinity(0, size, &allowed);
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::NO_CPU;

    pub(super) fn current_cpu() -> u32 {
        NO_CPU
    }

    pub(super) fn move_off(_cpu: u32) {}
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #![allow(unsafe_code)]

    use super::*;

    fn allowed() -> Vec<usize> {
        // SAFETY: as in `imp::move_off`.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            assert_eq!(
                libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set),
                0
            );
            (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| libc::CPU_ISSET(c, &set))
                .collect()
        }
    }

    /// The thread leaves the CPU (seen at least once in 20 tries: the system may move it
    /// back as soon as the set is restored) and keeps every CPU it was allowed.
    #[test]
    fn a_thread_moves_off_its_cpu_and_keeps_its_allowed_cpus() {
        std::thread::spawn(|| {
            let before = allowed();
            assert_ne!(current_cpu(), NO_CPU);
            let mut moved = false;
            for _ in 0..20 {
                let cpu = current_cpu();
                move_off(cpu);
                moved |= current_cpu() != cpu;
                assert_eq!(allowed(), before);
            }
            assert!(
                moved || before.len() < 2,
                "never left its CPU ({before:?} allowed)"
            );
            move_off(NO_CPU);
            move_off(u32::MAX - 1);
            assert_eq!(allowed(), before);
        })
        .join()
        .unwrap();
    }
}
