//! Adapters that cannot be used are passed over in ewise's order, and said so: a default
//! build runs on the first adapter of [`ewise_gpu::AdapterList::order`] that opens a
//! device and compiles the kernels, [`GpuDevice::passed_over`] holds every adapter before
//! it with wgpu's reason, and [`GpuDevice::fallback_warning`] names them all.
//!
//! Under wine (scripts/windows-test.sh) the first adapter is wine's made-up Direct3D 12
//! one, on which no device opens ("Parent device is lost"); the script sets `EWISE_EXPECT_FALLBACK=1`, and
//! the test then fails unless something was passed over. One test, since it changes the
//! environment.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use ewise_gpu::{GpuDevice, GpuError, ADAPTER_ENV, BACKEND_ENV};

/// Set to 1 where the first adapter in ewise's order is known to be unusable.
const EXPECT_FALLBACK_ENV: &str = "EWISE_EXPECT_FALLBACK";

#[test]
fn unusable_adapters_are_passed_over_in_order_and_named() {
    std::env::remove_var(ADAPTER_ENV);
    std::env::remove_var(BACKEND_ENV);
    let list = ewise_gpu::adapters().unwrap();
    let Some(device) = common::device_or_skip(GpuDevice::builder().build()) else {
        return;
    };
    let used = list
        .order
        .iter()
        .position(|&k| list.adapters[k] == *device.adapter())
        .unwrap_or_else(|| panic!("{} is not in the order {list:?}", device.adapter()));
    let passed = device.passed_over();
    assert_eq!(passed.len(), used, "{passed:?} against {list:?}");
    for (failure, &k) in passed.iter().zip(&list.order) {
        assert_eq!(failure.adapter, list.adapters[k]);
        assert!(!failure.reason.trim().is_empty(), "{failure:?}");
    }
    match device.fallback_warning() {
        Some(text) => {
            assert!(!passed.is_empty(), "{text}");
            assert!(text.contains(&device.adapter().to_string()), "{text}");
            for failure in passed {
                assert!(text.contains(&failure.to_string()), "{failure} in {text}");
            }
        }
        None => assert!(passed.is_empty(), "{passed:?} passed over silently"),
    }
    println!(
        "fallback: runs on {}; passed over: {}",
        device.adapter(),
        device.fallback_warning().unwrap_or_else(|| "none".into())
    );
    if std::env::var(EXPECT_FALLBACK_ENV).as_deref() == Ok("1") {
        assert!(
            !passed.is_empty(),
            "{EXPECT_FALLBACK_ENV}=1, but the first adapter, {}, was used",
            device.adapter()
        );
    }

    // An unusable adapter asked for by name, alone: an error naming it and why.
    let Some(first) = passed.first() else {
        return;
    };
    let name = first.adapter.name.to_lowercase();
    let matching = list
        .adapters
        .iter()
        .filter(|a| a.name.to_lowercase().contains(&name))
        .count();
    if matching == 1 {
        let err = GpuDevice::builder()
            .adapter(first.adapter.name.clone())
            .build()
            .unwrap_err();
        assert!(matches!(err, GpuError::NoUsableAdapter { .. }), "{err}");
        let text = err.to_string();
        assert!(text.starts_with("no GPU adapter could be used: "), "{text}");
        assert!(text.contains(&first.adapter.to_string()), "{text}");
    }
}
