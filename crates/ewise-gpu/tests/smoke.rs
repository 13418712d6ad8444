mod common;
use common::*;
use ewise_core::{DataType, NanPolicy, OperatorDesc, TensorDesc};

#[test]
fn smoke() {
    let Some(device) = device() else { return };
    for dt in [
        DataType::Float32,
        DataType::Int8,
        DataType::Float16,
        DataType::Int64,
    ] {
        let t = TensorDesc::new(dt, &[3, 5]);
        let desc = OperatorDesc::sign(t.clone(), t.clone());
        let n = t.total_tensor_size_in_bytes as usize;
        let start = vec![noise(n + 64, 1), noise(n + 64, 2)];
        let run = Run {
            in_offset: 16,
            out_offset: 32,
            one_buffer: false,
        };
        let (g, c) = both(device, &desc, NanPolicy::Propagate, &start, run);
        assert_eq!(g.unwrap(), c.unwrap(), "{dt:?}");
    }
}
