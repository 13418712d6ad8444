//! Bytes decide DML_* descriptor structs, NULL pointers, buffers (owned, wrapped over
//! overlapping memory of one allocation, of another device), bindings and the order in
//! which handles are released, and drive ewise-c's real `extern "C"` functions on the
//! CPU device: every status is a known one with its message and agrees with the model
//! of ewise.h's rules, every out-pointer is written only on success, and every byte of
//! every buffer after an execution is the scalar reference's. The body is
//! `tests/abi_fuzz/body.rs`, which `tests/abi_fuzz.rs` also runs on stable.
#![no_main]

#[path = "../../tests/abi_fuzz/body.rs"]
mod body;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = body::check(data);
});
