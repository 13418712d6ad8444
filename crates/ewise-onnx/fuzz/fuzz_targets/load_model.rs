//! Any bytes: loading never panics; a model that loads also runs on small inputs of its
//! declared types without panicking.
#![no_main]

use ewise_onnx::{Dim, Model, Tensor};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(model) = Model::from_bytes(data, None) else {
        return;
    };
    let inputs: Option<Vec<(String, Tensor)>> = model
        .inputs()
        .iter()
        .map(|info| {
            let shape: Vec<usize> = match &info.shape {
                Some(dims) => dims
                    .iter()
                    .map(|d| match d {
                        Dim::Fixed(n) => *n,
                        _ => 2,
                    })
                    .collect(),
                None => vec![3],
            };
            let count = shape.iter().try_fold(1usize, |a, &n| a.checked_mul(n))?;
            if count > 1 << 16 {
                return None;
            }
            let size = info.data_type.size_in_bytes()? as usize;
            let bytes: Vec<u8> = (0..count * size).map(|i| (i * 37 + 11) as u8).collect();
            Tensor::new(info.data_type, shape, bytes)
                .ok()
                .map(|t| (info.name.clone(), t))
        })
        .collect();
    if let Some(inputs) = inputs {
        let _ = model.run(inputs);
    }
});
