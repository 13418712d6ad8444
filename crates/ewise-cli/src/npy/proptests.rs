use proptest::prelude::*;

use super::{ElementType, Header, TypeStr, MAGIC};

fn preamble(major: u8, text_len: usize) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&[major, 0]);
    if major == 1 {
        out.extend_from_slice(&(text_len as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(text_len as u32).to_le_bytes());
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = Header::parse(&bytes);
    }

    #[test]
    fn arbitrary_text_after_a_valid_preamble_never_panics(
        major in 1u8..=3,
        text in proptest::collection::vec(
            prop_oneof![
                Just(b'{'), Just(b'}'), Just(b'('), Just(b')'), Just(b'['), Just(b']'),
                Just(b'\''), Just(b'"'), Just(b':'), Just(b','), Just(b' '), Just(b'\\'),
                Just(b'-'), b'0'..=b'9', b'a'..=b'z', any::<u8>(),
            ],
            0..200,
        ),
    ) {
        let mut bytes = preamble(major, text.len());
        bytes.extend_from_slice(&text);
        let _ = Header::parse(&bytes);
    }

    #[test]
    fn mutated_numpy_headers_never_panic(
        position in 0usize..128,
        byte in any::<u8>(),
        cut in 0usize..140,
    ) {
        let header = Header { descr: "<f4".into(), fortran_order: true, shape: vec![2, 3] };
        let mut bytes = header.to_bytes();
        if let Some(b) = bytes.get_mut(position) {
            *b = byte;
        }
        bytes.truncate(cut);
        if let Ok(parsed) = Header::parse(&bytes) {
            let _ = ElementType::from_descr(&parsed.header.descr, None);
        }
    }

    #[test]
    fn written_headers_read_back(
        shape in proptest::collection::vec(0u64..100_000, 0..4),
        last in proptest::option::of(any::<u64>()),
        fortran_order in any::<bool>(),
        descr in "[<>|][fiubV][0-9]{1,3}",
    ) {
        let mut header = Header { descr, fortran_order, shape };
        header.shape.extend(last);
        if header.element_count().is_none() {
            header.shape.pop();
        }
        let bytes = header.to_bytes();
        prop_assert_eq!(bytes.len() % 64, 0);
        let parsed = Header::parse(&bytes).unwrap();
        prop_assert_eq!(parsed.data_offset, bytes.len() as u64);
        prop_assert_eq!(parsed.header, header);
    }

    #[test]
    fn any_descr_text_round_trips(descr in "\\PC{0,100}|[\\x00-\\x7f]{0,20}|.{0,20}") {
        let header = Header { descr, fortran_order: false, shape: vec![3] };
        let parsed = Header::parse(&header.to_bytes()).unwrap();
        prop_assert_eq!(parsed.header, header);
    }

    #[test]
    fn arbitrary_type_strings_never_panic(descr in ".{0,12}") {
        let _ = TypeStr::parse(&descr);
        let _ = ElementType::from_descr(&descr, Some(ewise_cpu::DataType::Bfloat16));
    }
}
