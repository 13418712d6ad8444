//! Adapter choice without a usable adapter: typed errors that say what was tried, never
//! a panic. One test, so that changing the environment races with nothing.
#![cfg(not(target_arch = "wasm32"))]

use ewise_gpu::{GpuDevice, GpuError, BACKEND_ENV};

#[test]
fn missing_adapters_and_bad_settings_are_typed_errors() {
    // A backend this platform does not have.
    let absent = if cfg!(target_os = "macos") {
        wgpu::Backends::DX12
    } else {
        wgpu::Backends::METAL
    };
    let err = GpuDevice::builder().backends(absent).build().unwrap_err();
    assert!(matches!(err, GpuError::NoAdapter { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains("found none"), "{text}");
    let what_to_install = if cfg!(windows) {
        ["Direct3D 12", "d3d10warp.dll"]
    } else if cfg!(target_os = "macos") {
        ["Metal", "CPU device"]
    } else {
        ["mesa-vulkan-drivers", "lavapipe"]
    };
    for name in what_to_install {
        assert!(text.contains(name), "{name}: {text}");
    }
    let err = GpuDevice::builder()
        .adapter("no adapter is called this")
        .build()
        .unwrap_err();
    assert!(matches!(err, GpuError::NoAdapter { .. }), "{err}");
    assert!(
        err.to_string().contains("\"no adapter is called this\""),
        "{err}"
    );
    std::env::set_var(BACKEND_ENV, "vulkan,glide");
    let err = GpuDevice::builder().build().unwrap_err();
    std::env::remove_var(BACKEND_ENV);
    assert_eq!(
        err.to_string(),
        "EWISE_GPU_BACKEND=vulkan,glide is not understood (accepted: a comma list of vulkan, metal, dx12)"
    );
}
