//! A software renderer is never used unseen: [`GpuDevice::software_warning`] speaks
//! exactly when one was chosen because no GPU exists, and is silent when it was asked for.
//! One test, so that changing the environment races with nothing.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use ewise_gpu::{GpuDevice, ADAPTER_ENV};

#[test]
fn a_software_renderer_chosen_unasked_is_reported_and_one_asked_for_is_not() {
    std::env::remove_var(ADAPTER_ENV);
    let Some(default) = common::device_or_skip(GpuDevice::builder().build()) else {
        return;
    };
    let adapter = default.adapter().clone();
    match default.software_warning() {
        Some(text) => {
            assert!(adapter.is_software(), "{adapter}: {text}");
            assert!(text.contains(&adapter.to_string()), "{text}");
            assert!(text.contains(ADAPTER_ENV), "{text}");
        }
        None => assert!(
            !adapter.is_software(),
            "{adapter} was chosen unasked, silently"
        ),
    }
    let allowed = GpuDevice::builder().allow_software(true).build().unwrap();
    assert_eq!(allowed.software_warning(), None, "{}", allowed.adapter());
    let named = GpuDevice::builder()
        .adapter(adapter.name.clone())
        .build()
        .unwrap();
    assert_eq!(named.software_warning(), None, "{}", named.adapter());
    std::env::set_var(ADAPTER_ENV, &adapter.name);
    let from_env = GpuDevice::builder().build();
    std::env::remove_var(ADAPTER_ENV);
    assert_eq!(from_env.unwrap().software_warning(), None);
}
