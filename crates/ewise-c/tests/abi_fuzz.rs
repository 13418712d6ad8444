//! The `c_abi` fuzz target's body (`tests/abi_fuzz/body.rs`) on deterministic
//! pseudo-random inputs, so that stable CI runs it without cargo-fuzz: random DML_*
//! structs, NULL pointers, buffers, bindings and release orders through ewise-c's real
//! `extern "C"` functions on the CPU device, every status, message and byte checked
//! against the body's model. `EWISE_ABI_FUZZ_CASES` sets the number of cases (default
//! 5000); `EWISE_ABI_FUZZ_INPUT` (hex) replays one input, such as a fuzz artifact
//! (`xxd -p crates/ewise-c/fuzz/artifacts/c_abi/crash-…`).

#[path = "abi_fuzz/body.rs"]
mod body;

use std::collections::BTreeMap;
use std::panic::{catch_unwind, resume_unwind};

use body::{check, Event, Rng};

fn hex(data: &[u8]) -> String {
    data.iter().map(|b| format!("{b:02x}")).collect()
}

/// Runs one input, printing it in hex when it fails.
fn run(case: &str, data: &[u8]) -> Vec<Event> {
    match catch_unwind(|| check(data)) {
        Ok(events) => events,
        Err(panic) => {
            eprintln!(
                "abi_fuzz: {case} failed; replay with EWISE_ABI_FUZZ_INPUT={}",
                hex(data)
            );
            resume_unwind(panic)
        }
    }
}

#[test]
fn random_structs_bindings_and_release_orders_keep_the_c_abi_contract() {
    if let Ok(input) = std::env::var("EWISE_ABI_FUZZ_INPUT") {
        let input = input.trim();
        let data: Vec<u8> = (0..input.len() / 2)
            .map(|i| u8::from_str_radix(&input[2 * i..2 * i + 2], 16).expect("hex"))
            .collect();
        eprintln!("abi_fuzz: replayed: {:?}", run("the given input", &data));
        return;
    }
    let cases: usize = std::env::var("EWISE_ABI_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5000);
    let mut rng = Rng(0x5EED_C0DE_ABCD_EF01);
    let mut seen: BTreeMap<Event, usize> = BTreeMap::new();
    for case in 0..cases {
        let len = (rng.next() % 320) as usize;
        // Mostly small bytes (the ordinary, valid choices), some of any value: random
        // bytes alone would make nearly every description fail somewhere.
        let data: Vec<u8> = (0..len)
            .map(|_| {
                let r = rng.next();
                if r.is_multiple_of(4) {
                    (r >> 8) as u8
                } else {
                    ((r >> 8) as u8) % 48
                }
            })
            .collect();
        for event in run(&format!("case {case}"), &data) {
            *seen.entry(event).or_default() += 1;
        }
    }
    eprintln!("abi_fuzz: {cases} cases: {seen:?}");
    // Every path is reached, the interesting ones more than a handful of times.
    let at_least = |event: Event, n: usize| {
        let got = seen.get(&event).copied().unwrap_or(0);
        assert!(
            got >= n * cases / 3000,
            "{event:?} reached {got} times in {cases} cases"
        );
    };
    at_least(Event::DeviceRefused, 20);
    at_least(Event::QueryAnswered, 50);
    at_least(Event::QueryRefused, 20);
    at_least(Event::HostRan, 50);
    at_least(Event::HostRanInPlace, 10);
    at_least(Event::HostRefused, 50);
    at_least(Event::OperatorCreated, 200);
    at_least(Event::OperatorRefusedInvalid, 200);
    at_least(Event::OperatorRefusedUnsupported, 20);
    at_least(Event::Compiled, 100);
    at_least(Event::CompileRefused, 20);
    at_least(Event::BufferRefused, 20);
    at_least(Event::BufferProbed, 50);
    at_least(Event::Executed, 100);
    at_least(Event::ExecutedStrided, 20);
    at_least(Event::ExecutedInPlace, 10);
    at_least(Event::ExecutedAliased, 5);
    at_least(Event::ExecutedAfterDeviceRelease, 20);
    at_least(Event::ExecutionRefused, 100);
}

/// The empty input is the plain valid program: a strict 6_4 device, a one-element
/// FLOAT32 SIGN, owned buffers, one execution.
#[test]
fn the_empty_input_executes() {
    let events = run("the empty input", &[]);
    assert!(events.contains(&Event::Executed), "{events:?}");
}

/// Inputs the fuzzer once failed on, kept as cases: a description whose bytes moved
/// overflow u64, which split's byte counts multiplied without saturating (2026-11-27).
const FOUND: &[&[u8]] = &[&[
    1, 1, 1, 1, 1, 1, 1, 129, 1, 230, 230, 230, 96, 230, 230, 230, 230, 230, 230, 230, 230, 230,
    230, 230, 230, 230, 47, 230, 1, 0, 0, 0, 0, 0, 0, 41, 230, 230, 230, 230, 230, 230, 230, 230,
    230, 230, 230, 230, 0, 7, 230, 230, 230, 230, 230, 230, 230, 230, 230, 230, 230, 230, 230, 230,
    230, 230, 230, 230, 230, 230, 230, 230, 255, 255, 255, 56, 130, 130, 130, 130, 130, 130, 130,
    101, 230, 230, 92, 92, 92, 92, 92, 92, 92, 92, 92, 92, 92, 168, 168, 168, 168, 92, 28, 92, 92,
    92, 92, 92, 92, 92, 92, 92, 92, 92, 92, 92, 230, 230, 230, 230, 230, 230, 230, 230, 230, 230,
    230, 230, 230, 91, 1, 1, 1, 8, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 183, 1, 1, 1,
    92, 168, 2, 73, 36, 146, 73, 36, 146, 73, 168, 168, 168, 168, 168, 168, 168, 168, 168, 168,
    168, 168, 168, 168, 168, 168, 168, 168, 168, 168, 168, 168, 168, 168, 92, 28, 92, 92, 92, 162,
    92, 92, 92, 92, 92, 92, 92, 92, 92, 230, 230, 230, 230, 230, 230, 230, 230, 230, 230, 230, 230,
    230, 91, 1, 1, 1, 8, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 183, 1, 1, 1, 1, 1, 1,
    1,
]];

#[test]
fn inputs_the_fuzzer_found_keep_the_contract() {
    for (k, data) in FOUND.iter().enumerate() {
        run(&format!("found input {k}"), data);
    }
}
