//! A forked child completes every CPU call: after its parent used the helper threads
//! (1 MiB SIGN) and the pool (64 MiB SIGN) with several thread counts, with nothing
//! running at the fork and with parent threads mid-execution, and in a grandchild.
//!
//! Its own harness (no libtest threads, whose locks a child could inherit held): the
//! parent waits for each child for at most [`TIMEOUT`], then kills it and fails.

/// Set (to the reason) where fork cannot be tested: scripts/cross-check.sh sets it
/// under qemu-user, whose TCG aborts in a forked child of a multi-threaded process.
#[cfg(unix)]
const SKIP_ENV: &str = "EWISE_FORK_TESTS_SKIP";

#[cfg(unix)]
fn main() {
    if let Some(why) = std::env::var_os(SKIP_ENV) {
        println!("fork: SKIPPED ({SKIP_ENV}): {}", why.to_string_lossy());
        return;
    }
    unix::main();
}

#[cfg(not(unix))]
fn main() {
    println!("fork: no fork() on this platform");
}

#[cfg(unix)]
mod unix {
    use std::panic::{self, AssertUnwindSafe};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::thread;
    use std::time::{Duration, Instant};

    use ewise_cpu::baseline::{self, CopyKind};
    use ewise_cpu::{
        max_threads, reference, CompiledOperator, DataType, Device, NanPolicy, OperatorDesc,
        Parallelism, TensorDesc, MEDIUM_THRESHOLD_BYTES, PARALLEL_THRESHOLD_BYTES,
    };

    /// How long a child may take.
    const TIMEOUT: Duration = Duration::from_secs(60);
    /// How long a child waits for its own child.
    const GRANDCHILD_TIMEOUT: Duration = Duration::from_secs(40);

    /// Input bytes of the medium case: float32 SIGN moving 2 MiB, on the helpers.
    const MEDIUM: usize = 1 << 20;
    /// Input bytes of the large case: moving 128 MiB, on the pool.
    const LARGE: usize = 64 << 20;

    /// Inputs and their expected outputs, the large one the medium one repeated.
    struct Data {
        medium: (Vec<u8>, Vec<u8>),
        large: (Vec<u8>, Vec<u8>),
    }

    fn desc(bytes: usize) -> OperatorDesc {
        let t = TensorDesc::new(DataType::Float32, &[(bytes / 4) as u32]);
        OperatorDesc::sign(t.clone(), t)
    }

    fn data() -> Data {
        let specials = [
            f32::NAN.to_bits(),
            0xffc0_0001,
            f32::INFINITY.to_bits(),
            f32::NEG_INFINITY.to_bits(),
            0,
            0x8000_0000,
            1,
            0x8000_0001,
            1.0f32.to_bits(),
            (-2.5f32).to_bits(),
        ];
        let mut seed = 0x5eed_u64;
        let input: Vec<u8> = (0..MEDIUM / 4)
            .flat_map(|i| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let bits = if i % 97 == 0 {
                    specials[(i / 97) % specials.len()]
                } else {
                    (seed >> 32) as u32
                };
                bits.to_ne_bytes()
            })
            .collect();
        let mut expected = vec![0u8; MEDIUM];
        reference::run(&desc(MEDIUM), NanPolicy::Zero, &input, &mut expected).unwrap();
        let large = (
            input.repeat(LARGE / MEDIUM),
            expected.repeat(LARGE / MEDIUM),
        );
        Data {
            medium: (input, expected),
            large,
        }
    }

    fn counts() -> Vec<Parallelism> {
        let mut counts = vec![Parallelism::Auto];
        counts.extend([2, 3, 5, max_threads()].map(Parallelism::threads));
        counts
    }

    fn compile(bytes: usize, parallelism: Parallelism) -> CompiledOperator {
        Device::new()
            .create_operator(&desc(bytes))
            .unwrap()
            .with_parallelism(parallelism)
            .compile()
            .unwrap()
    }

    /// The medium and large operator of each thread count.
    fn compile_all() -> Vec<CompiledOperator> {
        counts()
            .into_iter()
            .flat_map(|p| [compile(MEDIUM, p), compile(LARGE, p)])
            .collect()
    }

    fn check(op: &CompiledOperator, data: &Data) -> Result<(), String> {
        let bytes = op.input_desc().total_tensor_size_in_bytes as usize;
        let (input, expected) = if bytes == MEDIUM {
            &data.medium
        } else {
            &data.large
        };
        let mut got = vec![0u8; input.len()];
        op.execute_slices(input, &mut got)
            .map_err(|e| e.to_string())?;
        match got.iter().zip(expected).position(|(g, e)| g != e) {
            None => Ok(()),
            Some(at) => Err(format!(
                "{bytes} bytes on {} threads: wrong byte at {at}",
                op.threads()
            )),
        }
    }

    /// What a child runs: operators compiled before the fork, new ones, and the
    /// baseline copy and read, on every thread count.
    fn work(before: &[CompiledOperator], data: &Data) -> Result<(), String> {
        for op in before {
            check(op, data)?;
        }
        for op in compile_all() {
            check(&op, data)?;
        }
        let mut copy = vec![0u8; LARGE];
        for threads in [2, 3, max_threads()] {
            baseline::copy(&mut copy, &data.large.0, CopyKind::Plain, threads);
            if copy != data.large.0 {
                return Err(format!("baseline copy on {threads} threads"));
            }
            if baseline::read(&data.large.0, threads) != baseline::read(&data.medium.0, 1) {
                return Err(format!("baseline read on {threads} threads"));
            }
        }
        Ok(())
    }

    /// Forks a child that runs `f` and exits with 0 when it succeeds.
    fn spawn(f: impl FnOnce() -> Result<(), String>) -> libc::pid_t {
        // SAFETY: the child only runs `f` and exits without returning into the caller.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid > 0 {
            return pid;
        }
        let code = match panic::catch_unwind(AssertUnwindSafe(f)) {
            Ok(Ok(())) => 0,
            Ok(Err(e)) => {
                eprintln!("child {}: {e}", std::process::id());
                1
            }
            Err(_) => 2,
        };
        // SAFETY: ends the child without running the parent's exit handlers.
        unsafe { libc::_exit(code) }
    }

    /// Waits up to `timeout` for `pid` to exit with 0; kills it after that.
    fn wait(pid: libc::pid_t, timeout: Duration, what: &str) -> Result<(), String> {
        let start = Instant::now();
        loop {
            let mut status = 0;
            // SAFETY: `pid` is this process's child and `status` a valid out-pointer.
            let done = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
            if done == pid {
                return if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
                    Ok(())
                } else {
                    Err(format!("{what}: child failed (wait status {status:#x})"))
                };
            }
            if done < 0 {
                return Err(format!("{what}: waitpid failed"));
            }
            if start.elapsed() >= timeout {
                // SAFETY: as above; the child is killed and reaped.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                    libc::waitpid(pid, &mut status, 0);
                }
                return Err(format!(
                    "{what}: child hung after fork (killed after {timeout:?})"
                ));
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    pub(super) fn main() {
        assert!(MEDIUM as u64 * 2 >= MEDIUM_THRESHOLD_BYTES);
        assert!((MEDIUM as u64 * 2) < PARALLEL_THRESHOLD_BYTES);
        assert!(LARGE as u64 * 2 >= PARALLEL_THRESHOLD_BYTES);
        let data = Arc::new(data());
        let before = Arc::new(compile_all());
        assert!(before
            .iter()
            .all(|op| op.threads() > 1 || max_threads() == 1));

        let start = Instant::now();
        work(&before, &data).unwrap();
        let pid = spawn(|| {
            work(&before, &data)?;
            let pid = spawn(|| work(&before, &data));
            wait(pid, GRANDCHILD_TIMEOUT, "grandchild")
        });
        wait(pid, TIMEOUT, "quiet parent").unwrap();
        println!(
            "fork: quiet parent, child and grandchild ok ({:?})",
            start.elapsed()
        );

        for round in 0..8u64 {
            let start = Instant::now();
            let stop = Arc::new(AtomicBool::new(false));
            let started = Arc::new(AtomicUsize::new(0));
            let running = Arc::new(AtomicUsize::new(0));
            let busy: Vec<_> = [MEDIUM, LARGE, LARGE]
                .into_iter()
                .enumerate()
                .map(|(k, bytes)| {
                    let (stop, data) = (stop.clone(), data.clone());
                    let (started, running) = (started.clone(), running.clone());
                    thread::spawn(move || {
                        let ops: Vec<_> = counts().into_iter().map(|p| compile(bytes, p)).collect();
                        let mut i = k;
                        while !stop.load(Ordering::Relaxed) {
                            started.fetch_add(1, Ordering::Relaxed);
                            running.fetch_add(1, Ordering::Relaxed);
                            check(&ops[i % ops.len()], &data).unwrap();
                            running.fetch_sub(1, Ordering::Relaxed);
                            i += 1;
                        }
                    })
                })
                .collect();
            while started.load(Ordering::Relaxed) < 3 {
                thread::yield_now();
            }
            thread::sleep(Duration::from_micros(round * round * 500));
            let mid_execution = running.load(Ordering::Relaxed);
            let pid = spawn(|| work(&before, &data));
            stop.store(true, Ordering::Relaxed);
            for t in busy {
                t.join().unwrap();
            }
            wait(pid, TIMEOUT, &format!("busy parent, round {round}")).unwrap();
            println!(
                "fork: busy parent, round {round} ({mid_execution} executions running at \
                 the fork): child ok ({:?})",
                start.elapsed()
            );
        }
    }
}
