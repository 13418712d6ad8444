//! Bytes decide a directory tree (files, directories, FIFOs, links in and out) and a
//! model claiming external data in it: `Model::load` never panics, never blocks, and
//! never returns bytes from outside the model's directory or through a link. The body
//! is `tests/tree_fuzz`, which `tests/load_tree.rs` also runs on stable.
#![no_main]

#[path = "../../tests/tree_fuzz/mod.rs"]
mod tree_fuzz;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    tree_fuzz::check(data);
});
