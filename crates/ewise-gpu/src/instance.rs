//! The wgpu instance that adapters are searched on: made for compute only, so that on
//! Linux and the BSDs its Vulkan instance enables no window-system surface extension.
//!
//! wgpu enables `VK_KHR_xlib_surface`, `VK_KHR_xcb_surface` and `VK_KHR_wayland_surface`
//! on every Vulkan instance whose loader offers them. Mesa's implicit device-selection
//! layer (`VK_LAYER_MESA_device_select`, installed with Mesa's Vulkan drivers) reacts to
//! an instance with the Wayland or XCB one enabled by connecting to the Wayland
//! compositor or X server in every `vkEnumeratePhysicalDevices`, to put the display's
//! GPU first; where `XDG_RUNTIME_DIR` is unset, libwayland-client then prints
//! `error: XDG_RUNTIME_DIR is invalid or not set in the environment.` on standard error,
//! twice per adapter search. Nothing here presents to a window, so the Vulkan instance
//! is created through wgpu-hal without those three extensions, and the layer orders the
//! adapters as it does without a display (by the boot VGA device), which
//! [`crate::GpuDevice`]'s choice by device type and name does not depend on.
//!
//! wgpu's own environment variables for the instance are honoured as wgpu documents
//! them: its flags (`WGPU_VALIDATION`, `WGPU_DEBUG`, `WGPU_GPU_BASED_VALIDATION`...) and backend
//! options (`WGPU_DX12_COMPILER`: `fxc`, `dxc` with `dxcompiler.dll` on the search path,
//! or `auto`, the default, which takes DXC when it finds it and FXC otherwise; the other
//! `WGPU_DX12_*` and `WGPU_GLES_*`). The variables that choose adapters
//! (`WGPU_BACKEND`, `WGPU_ADAPTER_NAME`, `WGPU_POWER_PREF`) are not read: ewise's own
//! [`crate::BACKEND_ENV`] and [`crate::ADAPTER_ENV`] do that.
#![allow(unsafe_code)]

use crate::error::{GpuError, Result};

/// The wgpu variable that names the Direct3D 12 shader compiler.
pub(crate) const DX12_COMPILER_ENV: &str = "WGPU_DX12_COMPILER";

/// [`GpuError::Environment`] where a wgpu variable that ewise honours holds a value wgpu
/// does not understand (wgpu itself would only log it and go on with its default).
pub(crate) fn check_wgpu_env() -> Result<()> {
    if let Ok(value) = std::env::var(DX12_COMPILER_ENV) {
        if value.parse::<wgpu::Dx12Compiler>().is_err() {
            return Err(GpuError::Environment {
                variable: DX12_COMPILER_ENV,
                value: ewise_core::text::clip(&value).into_owned(),
                accepted: "fxc, dxc (or dynamicdxc), staticdxc, auto",
            });
        }
    }
    Ok(())
}

/// wgpu's default instance descriptor without display handle, with the flags and
/// backend options its environment variables set.
fn descriptor() -> wgpu::InstanceDescriptor {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.flags = desc.flags.with_env();
    desc.backend_options = desc.backend_options.with_env();
    desc
}

/// A wgpu instance with `backends`, without display handle or window-system surfaces:
/// the instance ewise searches adapters on, for a caller that makes its own wgpu device
/// to hand to [`crate::GpuDeviceBuilder::from_wgpu`] (exported as
/// `ewise_gpu::compute_instance`). On Linux it prints nothing where `XDG_RUNTIME_DIR`
/// is unset, unlike [`wgpu::Instance::new`] with Vulkan's surface extensions.
pub fn instance(backends: wgpu::Backends) -> wgpu::Instance {
    #[cfg(all(
        unix,
        not(target_vendor = "apple"),
        not(target_os = "android"),
        not(target_os = "netbsd"),
        not(target_arch = "wasm32")
    ))]
    if backends.contains(wgpu::Backends::VULKAN) {
        if let Some(instance) = vulkan_without_surfaces() {
            return instance;
        }
    }
    let mut desc = descriptor();
    desc.backends = backends;
    wgpu::Instance::new(desc)
}

/// A Vulkan-only instance, as [`wgpu::Instance::new`] makes it with [`descriptor`], less the window-system surface extensions; `None` where Vulkan cannot be
/// loaded (the caller then goes through [`wgpu::Instance::new`], which finds no Vulkan
/// adapter either). Vulkan is the only backend wgpu has on these platforms.
#[cfg(all(
    unix,
    not(target_vendor = "apple"),
    not(target_os = "android"),
    not(target_os = "netbsd"),
    not(target_arch = "wasm32")
))]
fn vulkan_without_surfaces() -> Option<wgpu::Instance> {
    use std::ffi::CStr;
    use wgpu::hal;

    const SURFACES: [&CStr; 3] = [
        c"VK_KHR_xlib_surface",
        c"VK_KHR_xcb_surface",
        c"VK_KHR_wayland_surface",
    ];
    let defaults = descriptor();
    let desc = hal::InstanceDescriptor {
        name: "wgpu",
        flags: defaults.flags,
        memory_budget_thresholds: defaults.memory_budget_thresholds,
        backend_options: defaults.backend_options,
        telemetry: None,
        display: None,
    };
    let callback: Box<hal::vulkan::CreateInstanceCallback> = Box::new(
        |args: hal::vulkan::CreateInstanceCallbackArgs<'_, '_, '_>| {
            args.extensions.retain(|name| !SURFACES.contains(name));
        },
    );
    // SAFETY: the descriptor is the one `wgpu::Instance::new` passes for `descriptor()`,
    // and the callback only leaves out the three surface
    // extensions. wgpu-hal 30 documents that the callback should not remove extensions;
    // it reads these three only in `create_surface_from_{xlib,xcb,wayland}`, each of which
    // checks the list of enabled extensions first and returns an error when its
    // extension is absent. The instance stays inside this crate (no `wgpu::Surface` is
    // ever created on it, and the devices opened on its adapters do not expose it).
    let raw = unsafe { hal::vulkan::Instance::init_with_callback(&desc, Some(callback)) }.ok()?;
    // SAFETY: `raw` is a valid wgpu-hal Vulkan instance, handed over with its ownership.
    Some(unsafe { wgpu::Instance::from_hal::<hal::api::Vulkan>(raw) })
}
