//! The `load_tree` fuzz target's body (`tests/tree_fuzz`) on deterministic
//! pseudo-random inputs, so that stable CI runs it: trees of files, directories, FIFOs
//! and links inside and out, and models claiming ranges in them. Set
//! `EWISE_LOAD_TREE_CASES` for more cases than the default 2000.
#![cfg(unix)]

mod tree_fuzz;

use std::collections::BTreeMap;
use std::sync::mpsc;
use std::time::Duration;

use tree_fuzz::{check, Outcome};

/// xorshift64*: a fixed, dependency-free byte stream.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

#[test]
fn random_trees_and_claims_keep_the_loaders_contract() {
    let cases: usize = std::env::var("EWISE_LOAD_TREE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let (progress, report) = mpsc::channel();
    let worker = std::thread::spawn(move || {
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
        let mut outcomes: BTreeMap<Outcome, usize> = BTreeMap::new();
        for _ in 0..cases {
            let len = (rng.next() % 160) as usize;
            let data: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            *outcomes.entry(check(&data)).or_default() += 1;
            let _ = progress.send(None);
        }
        let _ = progress.send(Some(outcomes));
    });
    let outcomes = loop {
        match report.recv_timeout(Duration::from_secs(60)) {
            Ok(Some(outcomes)) => break outcomes,
            Ok(None) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => match worker.join() {
                Err(panic) => std::panic::resume_unwind(panic),
                Ok(()) => unreachable!("the worker reports before it ends"),
            },
            Err(mpsc::RecvTimeoutError::Timeout) => {
                panic!("one case took over 60 s: a load blocked")
            }
        }
    };
    for outcome in [Outcome::Ran, Outcome::Refused, Outcome::Failed] {
        assert!(
            outcomes.get(&outcome).copied().unwrap_or(0) >= cases / 50,
            "too few cases ended {outcome:?}: {outcomes:?}"
        );
    }
}
