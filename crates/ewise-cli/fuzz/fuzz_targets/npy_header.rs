//! Any bytes given to the `.npy` header parser: no panic, and every header it accepts
//! is written back and read again unchanged.
#![no_main]

use ewise_cli::npy::{ElementType, Header};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(parsed) = Header::parse(data) {
        let _ = ElementType::from_descr(&parsed.header.descr, None);
        let again = Header::parse(&parsed.header.to_bytes()).expect("a written header reads back");
        assert_eq!(again.header, parsed.header);
    }
});
