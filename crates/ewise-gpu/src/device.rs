//! The GPU device: adapter choice, the wgpu device and queue, limits, the DirectML
//! feature level, and the cache of compiled pipelines.

use std::collections::HashMap;
use std::fmt;
#[cfg(target_arch = "wasm32")]
use std::future::Future;
#[cfg(target_arch = "wasm32")]
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use ewise_core::{
    validate, DeviceOptions, Extensions, FeatureLevel, NanPolicy, OperatorDesc, TensorRole,
};

use crate::choice::{self, AdapterFailure};
use crate::error::{GpuError, Result};
use crate::operator::GpuOperator;
use crate::shader::{self, KernelKey};
use crate::signal;
use crate::staging::{Direction, StagingPool};
use crate::tuning::Tuning;

/// Environment variable naming the backends to try, as a comma list (`vulkan`, `metal`,
/// `dx12`), when the builder names none. Set to nothing but spaces and commas, it counts
/// as unset. (On wasm32 no environment is read: the browser's WebGPU is the backend.)
pub const BACKEND_ENV: &str = "EWISE_GPU_BACKEND";

/// The backends ewise runs on, by the names [`BACKEND_ENV`] takes.
#[cfg(not(target_arch = "wasm32"))]
const BACKENDS: [(wgpu::Backends, &str); 3] = [
    (wgpu::Backends::VULKAN, "vulkan"),
    (wgpu::Backends::METAL, "metal"),
    (wgpu::Backends::DX12, "dx12"),
];

/// The backend ewise runs on in a browser: its WebGPU.
#[cfg(target_arch = "wasm32")]
const BACKENDS: [(wgpu::Backends, &str); 1] = [(wgpu::Backends::BROWSER_WEBGPU, "webgpu")];

/// Every backend ewise runs on.
fn supported_backends() -> wgpu::Backends {
    BACKENDS
        .iter()
        .fold(wgpu::Backends::empty(), |all, (b, _)| all | *b)
}

/// The backends of `backends` that ewise runs on, named as [`BACKEND_ENV`] takes them
/// (`"vulkan, metal, dx12"`), or `"none"`. Other wgpu backends are left out.
pub fn backend_names(backends: wgpu::Backends) -> String {
    let names: Vec<&str> = BACKENDS
        .iter()
        .filter(|(b, _)| backends.contains(*b))
        .map(|(_, name)| *name)
        .collect();
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

/// Environment variable holding part of the adapter's name to pick (case-insensitive),
/// when the builder names none. Naming a software adapter (`llvmpipe`) selects it.
pub const ADAPTER_ENV: &str = "EWISE_GPU_ADAPTER";

/// What to install on Linux (and other Unix systems) when no adapter is found.
#[cfg(not(target_arch = "wasm32"))]
const LINUX_HINT: &str = "Install a GPU driver with Vulkan (Mesa's for AMD and Intel, \
    NVIDIA's own); on a machine without a GPU, Mesa's software Vulkan driver lavapipe \
    (Debian, Ubuntu: apt-get install mesa-vulkan-drivers libvulkan1; Fedora, RHEL: dnf \
    install mesa-vulkan-drivers vulkan-loader) runs everything, slowly; select it with \
    EWISE_GPU_ADAPTER=llvmpipe or allow_software";

/// What to install on Windows when no adapter is found.
#[cfg(not(target_arch = "wasm32"))]
const WINDOWS_HINT: &str = "Install your GPU vendor's driver with Direct3D 12 or Vulkan \
    support (AMD, Intel, NVIDIA, Qualcomm: from the vendor or Windows Update); on a \
    machine without a GPU, a software renderer runs everything, slowly: Microsoft's WARP \
    (d3d10warp.dll, part of Windows, through Direct3D 12; select it with \
    EWISE_GPU_BACKEND=dx12 and EWISE_GPU_ADAPTER=\"Microsoft Basic Render Driver\") or \
    Mesa's lavapipe for Windows (a Vulkan driver; select it with \
    EWISE_GPU_ADAPTER=llvmpipe), or allow_software";

/// What a Mac needs when no adapter is found.
#[cfg(not(target_arch = "wasm32"))]
const MACOS_HINT: &str = "ewise runs on Metal, which every Mac that runs macOS 10.13 or \
    later has; a virtual machine without GPU access has no Metal device: run on the CPU \
    device instead";

/// What to install, for the system this was built for.
#[cfg(not(target_arch = "wasm32"))]
const HINT: &str = if cfg!(windows) {
    WINDOWS_HINT
} else if cfg!(target_os = "macos") {
    MACOS_HINT
} else {
    LINUX_HINT
};

#[cfg(target_arch = "wasm32")]
const HINT: &str = "WebGPU needs a browser that offers navigator.gpu, on a page served \
    from a secure context (https or localhost); headless Chromium without a GPU offers \
    its software adapter (SwiftShader) with --enable-unsafe-webgpu; Deno's WebGPU needs a \
    GPU driver with Vulkan (Metal on a Mac, Direct3D 12 on Windows), or Mesa's lavapipe \
    (Vulkan) or llvmpipe (OpenGL) without a GPU";

/// What the chosen adapter is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdapterSummary {
    /// The adapter's name, e.g. `NVIDIA H100 80GB HBM3` or `llvmpipe (LLVM 15.0.6, 256 bits)`.
    pub name: String,
    /// The graphics API it runs through.
    pub backend: wgpu::Backend,
    /// Discrete, integrated, virtual, CPU (software) or other.
    pub device_type: wgpu::DeviceType,
    /// The driver's name.
    pub driver: String,
    /// The driver's version text.
    pub driver_info: String,
}

impl AdapterSummary {
    pub(crate) fn of(info: &wgpu::AdapterInfo) -> AdapterSummary {
        AdapterSummary {
            name: info.name.clone(),
            backend: info.backend,
            device_type: info.device_type,
            driver: info.driver.clone(),
            driver_info: info.driver_info.clone(),
        }
    }

    /// True for software renderers (lavapipe, llvmpipe, WARP): correct, but not a GPU.
    pub fn is_software(&self) -> bool {
        self.device_type == wgpu::DeviceType::Cpu
    }
}

/// `name (backend, type[, software][, driver DRIVER INFO])`: an empty name is "an
/// unnamed adapter" and the driver part is left out when the adapter names no driver
/// (as WebGPU's adapters do).
impl fmt::Display for AdapterSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.name.trim();
        let name = if name.is_empty() {
            "an unnamed adapter"
        } else {
            name
        };
        let software = if self.is_software() { ", software" } else { "" };
        write!(
            f,
            "{name} ({:?}, {:?}{software}",
            self.backend, self.device_type
        )?;
        let driver = format!("{} {}", self.driver.trim(), self.driver_info.trim());
        match driver.trim() {
            "" => f.write_str(")"),
            driver => write!(f, ", driver {driver})"),
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod hint_tests {
    use super::{ADAPTER_ENV, LINUX_HINT, MACOS_HINT, WINDOWS_HINT};

    #[test]
    fn each_system_is_told_what_it_installs() {
        for package in [
            "mesa-vulkan-drivers",
            "apt-get",
            "dnf",
            "lavapipe",
            "Vulkan",
        ] {
            assert!(LINUX_HINT.contains(package), "{package}: {LINUX_HINT}");
        }
        for name in ["Direct3D 12", "Vulkan", "WARP", "d3d10warp.dll", "lavapipe"] {
            assert!(WINDOWS_HINT.contains(name), "{name}: {WINDOWS_HINT}");
        }
        for debian in ["apt-get", "mesa-vulkan-drivers", "libvulkan1"] {
            assert!(!WINDOWS_HINT.contains(debian), "{debian}: {WINDOWS_HINT}");
            assert!(!MACOS_HINT.contains(debian), "{debian}: {MACOS_HINT}");
        }
        assert!(LINUX_HINT.contains(ADAPTER_ENV) && WINDOWS_HINT.contains(ADAPTER_ENV));
        assert!(MACOS_HINT.contains("Metal"), "{MACOS_HINT}");
    }
}

#[cfg(test)]
mod adapter_tests {
    use super::AdapterSummary;

    #[test]
    fn an_adapter_without_a_name_or_driver_is_shown_without_blanks() {
        let mut a = AdapterSummary {
            name: String::new(),
            backend: wgpu::Backend::BrowserWebGpu,
            device_type: wgpu::DeviceType::Cpu,
            driver: String::new(),
            driver_info: String::new(),
        };
        assert_eq!(
            a.to_string(),
            "an unnamed adapter (BrowserWebGpu, Cpu, software)"
        );
        a.name = "llvmpipe (LLVM 15.0.6, 256 bits)".into();
        a.backend = wgpu::Backend::Vulkan;
        a.driver = "llvmpipe".into();
        a.driver_info = "Mesa 25.0.7".into();
        assert_eq!(
            a.to_string(),
            "llvmpipe (LLVM 15.0.6, 256 bits) (Vulkan, Cpu, software, driver llvmpipe Mesa 25.0.7)"
        );
        a.driver_info.clear();
        assert!(a.to_string().ends_with(", driver llvmpipe)"));
    }
}

/// Options for creating a [`GpuDevice`]: the [`DeviceOptions`] every backend takes, and
/// the choice of adapter and binding size.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GpuDeviceBuilder {
    backends: Option<wgpu::Backends>,
    adapter: Option<String>,
    allow_software: bool,
    options: DeviceOptions,
    max_binding_size: Option<u64>,
    max_workgroups: Option<u32>,
}

impl GpuDeviceBuilder {
    /// The backends to try (default: [`BACKEND_ENV`] if set, else all ewise runs on).
    /// Of wgpu's backends, only Vulkan, Metal and DX12 are ever searched.
    pub fn backends(mut self, backends: wgpu::Backends) -> Self {
        self.backends = Some(backends);
        self
    }

    /// Part of the adapter's name to pick, case-insensitive (default: [`ADAPTER_ENV`] if
    /// set, else the best adapter: discrete, then integrated, then virtual GPUs).
    pub fn adapter(mut self, name: impl Into<String>) -> Self {
        self.adapter = Some(name.into());
        self
    }

    /// Whether a software adapter (lavapipe, llvmpipe, WARP) is taken without
    /// [`GpuDevice::software_warning`] when no name is given (default false). Either way
    /// software adapters are tried last, after every hardware adapter has failed or
    /// where none exists.
    pub fn allow_software(mut self, allow: bool) -> Self {
        self.allow_software = allow;
        self
    }

    /// The feature level, minimum level, extensions and NaN policy together, replacing
    /// any set before.
    pub fn options(mut self, options: DeviceOptions) -> Self {
        self.options = options;
        self
    }

    /// The highest DirectML feature level the device supports
    /// ([`DeviceOptions::feature_level`]).
    pub fn feature_level(mut self, level: FeatureLevel) -> Self {
        self.options = self.options.feature_level(level);
        self
    }

    /// The minimum level the caller needs ([`DeviceOptions::min_feature_level`]);
    /// [`GpuDeviceBuilder::build`] and [`GpuDeviceBuilder::from_wgpu`] fail below it.
    pub fn min_feature_level(mut self, level: FeatureLevel) -> Self {
        self.options = self.options.min_feature_level(level);
        self
    }

    /// Whether operators may use the ewise extensions ([`DeviceOptions::extensions`]).
    pub fn extensions(mut self, extensions: Extensions) -> Self {
        self.options = self.options.extensions(extensions);
        self
    }

    /// The NaN policy new SIGN operators start with ([`DeviceOptions::nan_policy`]).
    pub fn nan_policy(mut self, policy: NanPolicy) -> Self {
        self.options = self.options.nan_policy(policy);
        self
    }

    /// Caps the bytes one binding window may span below the adapter's limit, so that
    /// splitting large tensors can be tested on small ones. Values below 256 bytes plus
    /// the adapter's storage offset alignment are raised to that.
    pub fn max_binding_size(mut self, bytes: u64) -> Self {
        self.max_binding_size = Some(bytes);
        self
    }

    /// Caps the workgroups one dispatch may launch along each grid dimension below the
    /// adapter's limit (at least 1), so that grids of two dimensions, which long runs
    /// take on real hardware, can be tested on small tensors.
    pub fn max_workgroups_per_dimension(mut self, workgroups: u32) -> Self {
        self.max_workgroups = Some(workgroups.max(1));
        self
    }

    /// Chooses an adapter and opens a device on it, with timestamp queries
    /// ([`GpuDevice::has_timestamps`]) when the adapter offers them. Options that
    /// [`DeviceOptions::check`] refuses fail first, with its error in [`GpuError::Op`].
    /// [`GpuDeviceBuilder::build_async`], waited for on this thread.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn build(self) -> Result<GpuDevice> {
        signal::block_on(self.build_async())
    }

    /// As [`GpuDeviceBuilder::build`], without blocking: the adapter search and the
    /// device request are awaited. On wasm32 the browser's WebGPU gives one adapter
    /// (`navigator.gpu.requestAdapter()`, high-performance preferred), which the name
    /// and software rules then accept or refuse ([`GpuError::NoAdapter`] where it gives
    /// none); no environment variable is read there.
    pub async fn build_async(self) -> Result<GpuDevice> {
        self.options.check()?;
        crate::instance::check_wgpu_env()?;
        let (backends, from_env) = match self.backends {
            Some(b) => (b & supported_backends(), false),
            None => match backends_from_env()? {
                Some(b) => (b, true),
                None => (supported_backends(), false),
            },
        };
        let name = self
            .adapter
            .clone()
            .or_else(|| std::env::var(ADAPTER_ENV).ok().filter(|s| !s.is_empty()));
        let instance = crate::instance::instance(backends);
        let adapters = find_adapters(&instance, backends).await;
        let infos: Vec<wgpu::AdapterInfo> = adapters.iter().map(|a| a.get_info()).collect();
        let order = choice::order(&infos, name.as_deref());
        if order.is_empty() {
            let compiler = std::env::var(crate::instance::DX12_COMPILER_ENV)
                .ok()
                .filter(|_| backends.contains(wgpu::Backends::DX12));
            return Err(no_adapter(
                (backends, from_env),
                name.as_deref(),
                compiler.as_deref(),
                &infos,
            ));
        }
        let summary = |index: usize| AdapterSummary::of(&infos[index]);
        let asked_software = name.is_some() || self.allow_software;
        let opened = choice::first_usable(&order, summary, |index| {
            self.open(&adapters[index], summary(index), asked_software)
        })
        .await;
        match opened {
            Ok((mut device, passed_over)) => {
                if let Some(shared) = Arc::get_mut(&mut device.shared) {
                    shared.passed_over = passed_over;
                }
                Ok(device)
            }
            Err(failures) => Err(GpuError::NoUsableAdapter {
                failures,
                hint: HINT,
            }),
        }
    }

    /// A device on `adapter`, once it has opened one and compiled a kernel on it; wgpu's
    /// message where either fails.
    async fn open(
        &self,
        adapter: &wgpu::Adapter,
        summary: AdapterSummary,
        asked_software: bool,
    ) -> std::result::Result<GpuDevice, String> {
        let unasked_software = summary.is_software() && !asked_software;
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("ewise"),
                required_features: adapter.features() & wgpu::Features::TIMESTAMP_QUERY,
                required_limits: adapter.limits(),
                experimental_features: wgpu::ExperimentalFeatures::disabled(),
                memory_hints: memory_hints(),
                trace: wgpu::Trace::Off,
            })
            .await
            .map_err(|e| format!("no device: {e}"))?;
        let uncaptured = Arc::new(Mutex::new(None));
        let sink = Arc::clone(&uncaptured);
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            if let Ok(mut slot) = sink.lock() {
                slot.get_or_insert(e.to_string());
            }
        }));
        let device = GpuDevice::assemble(
            device,
            queue,
            (summary, unasked_software),
            self,
            Some(uncaptured),
        );
        device.probe().await.map_err(|e| match e {
            GpuError::Wgpu { message, .. } => format!("a kernel did not compile: {message}"),
            other => other.to_string(),
        })?;
        Ok(device)
    }

    /// Wraps a wgpu device and queue the caller already has, so that the operators run on
    /// the caller's own buffers ([`crate::GpuBuffer::from_wgpu`]). The device keeps the
    /// caller's uncaptured-error handler; errors of ewise's own work are caught in error
    /// scopes and returned. Options that [`DeviceOptions::check`] refuses fail, with its
    /// error in [`GpuError::Op`].
    pub fn from_wgpu(
        self,
        device: wgpu::Device,
        queue: wgpu::Queue,
        adapter: &wgpu::AdapterInfo,
    ) -> Result<GpuDevice> {
        self.options.check()?;
        Ok(GpuDevice::assemble(
            device,
            queue,
            (AdapterSummary::of(adapter), false),
            &self,
            None,
        ))
    }
}

/// [`GpuError::NoAdapter`] for a search of `backends` (named by [`BACKEND_ENV`] when
/// `from_env`) for an adapter whose name contains `name`, with the Direct3D 12 shader
/// compiler `dx12_compiler` asked for (wgpu's Direct3D 12 backend lists no adapter when
/// the compiler asked for cannot be loaded), which found `infos`.
fn no_adapter(
    (backends, from_env): (wgpu::Backends, bool),
    name: Option<&str>,
    dx12_compiler: Option<&str>,
    infos: &[wgpu::AdapterInfo],
) -> GpuError {
    let found = if infos.is_empty() {
        "none".to_string()
    } else {
        infos
            .iter()
            .map(|i| AdapterSummary::of(i).to_string())
            .collect::<Vec<_>>()
            .join("; ")
    };
    GpuError::NoAdapter {
        tried: format!(
            "backends {}{}; adapter name {}",
            backend_names(backends),
            if from_env {
                format!(" ({BACKEND_ENV})")
            } else {
                String::new()
            },
            name.map_or("any".to_string(), |n| format!("containing {n:?}")),
        ) + &dx12_compiler.map_or(String::new(), |c| {
            format!(
                "; Direct3D 12 shader compiler {} ({}; dxc needs dxcompiler.dll where the program finds DLLs)",
                ewise_core::text::quoted(c),
                crate::instance::DX12_COMPILER_ENV
            )
        }),
        found,
        hint: HINT,
    }
}

/// The adapters wgpu finds, as [`GpuDevice::new`] and [`GpuDeviceBuilder::build`] see
/// them, and which one a default build would choose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdapterList {
    /// The backends searched ([`BACKEND_ENV`] if set, else every one ewise runs on);
    /// [`backend_names`] names them.
    pub backends: wgpu::Backends,
    /// Whether [`BACKEND_ENV`] chose `backends` (it is set and names at least one).
    pub from_env: bool,
    /// The adapter name filter in force ([`ADAPTER_ENV`]), if any.
    pub filter: Option<String>,
    /// Every adapter found, in wgpu's order.
    pub adapters: Vec<AdapterSummary>,
    /// The indices in `adapters` a default build tries, in the order it tries them: the
    /// first that opens a device and compiles ewise's kernels runs it.
    pub order: Vec<usize>,
    /// The index in `adapters` of the one a default build tries first (`order[0]`), if
    /// any.
    pub chosen: Option<usize>,
    /// What to install when `adapters` is empty.
    pub hint: &'static str,
}

/// Lists the adapters on the backends [`BACKEND_ENV`] names (all compiled in when unset),
/// marking the one [`GpuDevice::builder`]`().build()` would choose under
/// [`ADAPTER_ENV`]. Opens no device. [`adapters_async`], waited for on this thread.
#[cfg(not(target_arch = "wasm32"))]
pub fn adapters() -> Result<AdapterList> {
    signal::block_on(adapters_async())
}

/// As [`adapters`], without blocking; on wasm32, the one adapter the browser gives, if
/// any.
pub async fn adapters_async() -> Result<AdapterList> {
    crate::instance::check_wgpu_env()?;
    let from_env = backends_from_env()?;
    let backends = from_env.unwrap_or(supported_backends());
    let filter = std::env::var(ADAPTER_ENV).ok().filter(|s| !s.is_empty());
    let instance = crate::instance::instance(backends);
    let infos: Vec<wgpu::AdapterInfo> = find_adapters(&instance, backends)
        .await
        .iter()
        .map(|a| a.get_info())
        .collect();
    let order = choice::order(&infos, filter.as_deref());
    Ok(AdapterList {
        backends,
        from_env: from_env.is_some(),
        filter,
        adapters: infos.iter().map(AdapterSummary::of).collect(),
        chosen: order.first().copied(),
        order,
        hint: HINT,
    })
}

/// The adapters of `backends` on `instance`, in wgpu's order: every one found natively;
/// in a browser, the one `requestAdapter()` gives (none when it gives null).
async fn find_adapters(instance: &wgpu::Instance, backends: wgpu::Backends) -> Vec<wgpu::Adapter> {
    #[cfg(not(target_arch = "wasm32"))]
    {
        instance.enumerate_adapters(backends).await
    }
    #[cfg(target_arch = "wasm32")]
    {
        if backends.is_empty() {
            return Vec::new();
        }
        let options = wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            ..Default::default()
        };
        instance
            .request_adapter(&options)
            .await
            .into_iter()
            .collect()
    }
}

/// The backends named by [`BACKEND_ENV`], if it names any.
fn backends_from_env() -> Result<Option<wgpu::Backends>> {
    match std::env::var(BACKEND_ENV) {
        Ok(value) => parse_backends(&value),
        Err(_) => Ok(None),
    }
}

/// The backends a [`BACKEND_ENV`] value names: a comma list of `vulkan` (`vk`), `metal`
/// (`mtl`) and `dx12` (`d3d12`), any case, spaces around names ignored; `None` when it
/// names none (empty, or only spaces and commas).
fn parse_backends(value: &str) -> Result<Option<wgpu::Backends>> {
    let mut backends = wgpu::Backends::empty();
    let mut named = false;
    for part in value.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        named = true;
        backends |= match part.to_ascii_lowercase().as_str() {
            "vulkan" | "vk" => wgpu::Backends::VULKAN,
            "metal" | "mtl" => wgpu::Backends::METAL,
            "dx12" | "d3d12" => wgpu::Backends::DX12,
            _ => {
                return Err(GpuError::Environment {
                    variable: BACKEND_ENV,
                    value: ewise_core::text::clip(value).into_owned(),
                    accepted: "a comma list of vulkan, metal, dx12",
                })
            }
        };
    }
    Ok(named.then_some(backends))
}

/// Limits that shape how operators are split and dispatched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DispatchLimits {
    /// Bytes one storage binding may span.
    pub binding: u64,
    /// What a storage binding's offset must be a multiple of.
    pub storage_alignment: u64,
    /// What a uniform binding's offset must be a multiple of.
    pub uniform_alignment: u64,
    /// Workgroups along one grid dimension.
    pub workgroups: u32,
    /// Bytes of the largest buffer the device creates (its `max_buffer_size`).
    pub buffer: u64,
}

pub(crate) struct Shared {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub adapter: AdapterSummary,
    /// Whether the adapter is a software renderer that the caller did not ask for.
    unasked_software: bool,
    /// The adapters tried before this one, which could not be used.
    passed_over: Vec<AdapterFailure>,
    pub limits: DispatchLimits,
    options: DeviceOptions,
    pipelines: Mutex<HashMap<KernelKey, Arc<wgpu::ComputePipeline>>>,
    /// The kernels' tuning constants for operators compiled from now on.
    tuning: Mutex<Tuning>,
    /// Download staging buffers kept between reads.
    pub downloads: StagingPool,
    /// Upload staging buffers kept (mapped) between writes.
    pub uploads: StagingPool,
    /// The first error that reached the device's uncaptured-error handler (for devices
    /// ewise opened itself).
    uncaptured: Option<Arc<Mutex<Option<String>>>>,
    /// The error scopes of synchronous calls, popped but not yet settled: in a browser
    /// a scope's error comes through a promise, settled at the next awaited call.
    #[cfg(target_arch = "wasm32")]
    scopes: Mutex<Vec<Scopes>>,
    /// The id of the process that created the device.
    pub pid: u32,
}

/// What a popped error scope resolves to.
#[cfg(target_arch = "wasm32")]
type ScopeError = Pin<Box<dyn Future<Output = Option<wgpu::Error>>>>;

/// The validation and out-of-memory scopes of one synchronous call, and what it did.
#[cfg(target_arch = "wasm32")]
struct Scopes {
    during: &'static str,
    validation: ScopeError,
    memory: ScopeError,
}

/// What [`GpuDevice::pipeline`]'s errors say they were doing.
const BUILDING_PIPELINE: &str = "building a compute pipeline";

/// A submission to the device's queue, to wait for.
#[derive(Debug)]
pub(crate) struct Submission {
    #[cfg(not(target_arch = "wasm32"))]
    index: wgpu::SubmissionIndex,
    /// Completed when the queue's work up to this submission is done.
    #[cfg(target_arch = "wasm32")]
    done: signal::Signal<()>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        if forked(self.pid) {
            let pipelines = self.pipelines.get_mut().unwrap_or_else(|e| e.into_inner());
            let staging = (self.downloads.take_all(), self.uploads.take_all());
            std::mem::forget((
                self.device.clone(),
                self.queue.clone(),
                pipelines.clone(),
                staging,
            ));
        }
    }
}

/// Whether this process was forked from the one with id `pid`, which created the wgpu
/// objects in question. Their driver state belongs to that parent (its locks may be held
/// by threads the child does not have), so the child never calls into it, not even to
/// release them: a `Drop` that sees this leaks the objects instead, by forgetting a
/// clone of each handle (one more reference that is never released).
pub(crate) fn forked(pid: u32) -> bool {
    process_id() != pid
}

/// This process's id; 0 on wasm32, which has one process and no ids.
pub(crate) fn process_id() -> u32 {
    #[cfg(not(target_arch = "wasm32"))]
    {
        std::process::id()
    }
    #[cfg(target_arch = "wasm32")]
    {
        0
    }
}

/// A GPU that behaves as a DirectML device of one feature level. Cheap to clone: clones
/// share the wgpu device, its queue and the pipeline cache.
///
/// A device belongs to the process that created it. In a process forked from that one,
/// every call that would reach the GPU through the device, its operators, buffers,
/// timers and streams returns [`GpuError::Forked`] at once, and dropping them leaks
/// their wgpu objects instead of releasing them in the parent's driver state; a device
/// created in the child works normally.
#[derive(Clone)]
pub struct GpuDevice {
    pub(crate) shared: Arc<Shared>,
}

impl fmt::Debug for GpuDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GpuDevice")
            .field("adapter", &self.shared.adapter)
            .field("level", &self.shared.options.level)
            .field("extensions", &self.shared.options.extensions)
            .finish()
    }
}

impl GpuDevice {
    #[cfg_attr(
        target_arch = "wasm32",
        allow(
            clippy::arc_with_non_send_sync,
            reason = "wgpu's WebGPU objects are neither Send nor Sync; a browser runs one thread"
        )
    )]
    fn assemble(
        device: wgpu::Device,
        queue: wgpu::Queue,
        (adapter, unasked_software): (AdapterSummary, bool),
        options: &GpuDeviceBuilder,
        uncaptured: Option<Arc<Mutex<Option<String>>>>,
    ) -> GpuDevice {
        let l = device.limits();
        let storage_alignment = u64::from(l.min_storage_buffer_offset_alignment);
        // Kernels index words with 32 bits: windows stay below 4 GiB.
        let mut binding = l
            .max_storage_buffer_binding_size
            .min(l.max_buffer_size)
            .min(u64::from(u32::MAX));
        if let Some(cap) = options.max_binding_size {
            binding = binding.min(cap.max(256 + storage_alignment));
        }
        GpuDevice {
            shared: Arc::new(Shared {
                device,
                queue,
                adapter,
                unasked_software,
                passed_over: Vec::new(),
                limits: DispatchLimits {
                    binding: binding & !3,
                    storage_alignment,
                    uniform_alignment: u64::from(l.min_uniform_buffer_offset_alignment),
                    workgroups: options
                        .max_workgroups
                        .map_or(l.max_compute_workgroups_per_dimension, |cap| {
                            cap.min(l.max_compute_workgroups_per_dimension)
                        }),
                    buffer: l.max_buffer_size,
                },
                options: options.options,
                pipelines: Mutex::new(HashMap::new()),
                tuning: Mutex::new(Tuning::default()),
                downloads: StagingPool::new(Direction::Download),
                uploads: StagingPool::new(Direction::Upload),
                uncaptured,
                #[cfg(target_arch = "wasm32")]
                scopes: Mutex::new(Vec::new()),
                pid: process_id(),
            }),
        }
    }

    /// The best hardware adapter (or what [`BACKEND_ENV`] and [`ADAPTER_ENV`] ask for)
    /// as a strict DirectML device at feature level 6_4.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn new() -> Result<GpuDevice> {
        GpuDevice::builder().build()
    }

    /// As [`GpuDevice::new`], without blocking ([`GpuDeviceBuilder::build_async`]).
    pub async fn new_async() -> Result<GpuDevice> {
        GpuDevice::builder().build_async().await
    }

    /// Options for a device.
    pub fn builder() -> GpuDeviceBuilder {
        GpuDeviceBuilder::default()
    }

    /// Which adapter runs this device's work.
    pub fn adapter(&self) -> &AdapterSummary {
        &self.shared.adapter
    }

    /// The warning each front end gives, once per device, when this device runs on a
    /// software renderer (lavapipe, llvmpipe, WARP, SwiftShader) that was chosen because no
    /// hardware adapter exists or none could be used, rather than asked for by name
    /// ([`ADAPTER_ENV`] or [`GpuDeviceBuilder::adapter`]) or with
    /// [`GpuDeviceBuilder::allow_software`]; `None` otherwise (and for devices made with
    /// [`GpuDeviceBuilder::from_wgpu`]). One sentence, without a prefix, naming the adapter
    /// and how to silence it (docs/SEMANTICS.md section 8.1).
    pub fn software_warning(&self) -> Option<String> {
        let why = if self.shared.passed_over.is_empty() {
            "no GPU was found"
        } else {
            "no GPU could be used"
        };
        self.shared.unasked_software.then(|| {
            format!(
                "the GPU device runs on {}, a software renderer chosen because {why}: its results are exact but it is slower than the CPU device; name it with {ADAPTER_ENV} (or allow software renderers) to silence this",
                self.shared.adapter
            )
        })
    }

    /// The adapters this device's build tried before the one it runs on, which could not
    /// open a device or compile ewise's kernels, each with wgpu's reason, in the order
    /// tried (empty when the first worked).
    pub fn passed_over(&self) -> &[AdapterFailure] {
        &self.shared.passed_over
    }

    /// The line each front end gives, once per device, when its build passed adapters
    /// over ([`GpuDevice::passed_over`]): one sentence, without a prefix, naming each with
    /// its reason and the adapter the device runs on; `None` when the first adapter tried
    /// was used.
    pub fn fallback_warning(&self) -> Option<String> {
        (!self.shared.passed_over.is_empty()).then(|| {
            format!(
                "the GPU device runs on {}, the next adapter in ewise's order, because {} could not be used ({})",
                self.shared.adapter,
                if self.shared.passed_over.len() == 1 {
                    "the one before it"
                } else {
                    "the ones before it"
                },
                choice::join(&self.shared.passed_over)
            )
        })
    }

    /// The wgpu device, for callers who make their own buffers and encoders.
    pub fn wgpu_device(&self) -> &wgpu::Device {
        &self.shared.device
    }

    /// The wgpu queue that [`crate::GpuCompiledOperator::execute`] submits to.
    pub fn wgpu_queue(&self) -> &wgpu::Queue {
        &self.shared.queue
    }

    /// Whether the device has timestamp queries (`wgpu::Features::TIMESTAMP_QUERY`),
    /// which [`crate::GpuTimer`] uses to measure GPU time.
    pub fn has_timestamps(&self) -> bool {
        self.shared
            .device
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY)
    }

    /// Waits until all work submitted to the device's queue so far, and every buffer
    /// write queued before this call ([`crate::GpuBuffer::write`]), has finished.
    /// [`GpuDevice::synchronize_async`], waited for on this thread.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn synchronize(&self) -> Result<()> {
        signal::block_on(self.synchronize_async())
    }

    /// As [`GpuDevice::synchronize`], as a future. Like every `_async` entry point of
    /// this crate, natively it waits inside wgpu's `Device::poll` when polled (blocking
    /// the polling thread until the GPU is done); on wasm32 it yields to the browser's
    /// event loop until WebGPU reports the work done, and also returns the errors of
    /// synchronous calls on the device since the last awaited one (WebGPU reports those
    /// through promises).
    pub async fn synchronize_async(&self) -> Result<()> {
        let during = "synchronizing with the GPU";
        self.check_process()?;
        self.catch(during, || {
            self.shared.queue.submit([]);
        })?;
        self.idle(during).await
    }

    /// Bytes one binding window spans at most: tensors that span more are split.
    pub fn max_binding_size(&self) -> u64 {
        self.shared.limits.binding
    }

    /// The options the device was created with.
    pub fn options(&self) -> DeviceOptions {
        self.shared.options
    }

    /// The device's feature level.
    pub fn feature_level(&self) -> FeatureLevel {
        self.shared.options.level
    }

    /// Whether the device accepts the ewise extensions.
    pub fn extensions(&self) -> Extensions {
        self.shared.options.extensions
    }

    /// The NaN policy new SIGN operators start with.
    pub fn nan_policy(&self) -> NanPolicy {
        self.shared.options.nan_policy
    }

    /// `DML_FEATURE_FEATURE_LEVELS`: the highest of `requested` that this device supports.
    pub fn check_feature_levels(&self, requested: &[FeatureLevel]) -> Option<FeatureLevel> {
        requested
            .iter()
            .copied()
            .filter(|&l| l <= self.shared.options.level)
            .max()
    }

    /// Validates `desc` at this device's level and creates the operator.
    ///
    /// A tensor whose TotalTensorSizeInBytes, in whole 4-byte words, exceeds the
    /// device's largest buffer (`max_buffer_size`) could never be bound, and is refused
    /// with [`GpuError::BufferTooLarge`] once the description is otherwise valid.
    pub fn create_operator(&self, desc: &OperatorDesc) -> Result<GpuOperator> {
        self.check_process()?;
        let options = &self.shared.options;
        validate(desc, options.level, options.extensions)?;
        self.check_buffer_sizes(desc)?;
        Ok(GpuOperator::new(
            self.clone(),
            desc.clone(),
            options.nan_policy,
        ))
    }

    /// [`GpuError::BufferTooLarge`] for the first tensor of `desc` (input, then output)
    /// that no buffer of this device can hold.
    fn check_buffer_sizes(&self, desc: &OperatorDesc) -> Result<()> {
        let limit = self.shared.limits.buffer;
        for tensor in [TensorRole::Input, TensorRole::Output] {
            let bytes = desc
                .tensor(tensor)
                .total_tensor_size_in_bytes
                .div_ceil(4)
                .saturating_mul(4);
            if bytes > limit {
                return Err(GpuError::BufferTooLarge {
                    operator: desc.operator_type(),
                    tensor,
                    bytes,
                    limit,
                });
            }
        }
        Ok(())
    }

    /// Sets the kernels' tuning constants for the operators this device (and its
    /// clones) compiles from now on; operators compiled before keep theirs. For
    /// measurements only: every tuning gives the same bits. [`GpuError::InvalidTuning`]
    /// where a value is out of range ([`Tuning::validated`]).
    #[doc(hidden)]
    pub fn set_tuning(&self, tuning: Tuning) -> Result<()> {
        let tuning = tuning.validated()?;
        *self.shared.tuning.lock().unwrap_or_else(|e| e.into_inner()) = tuning;
        Ok(())
    }

    /// The tuning operators compiled now take ([`GpuDevice::set_tuning`]).
    #[doc(hidden)]
    pub fn tuning(&self) -> Tuning {
        *self.shared.tuning.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The pipeline for `key`, built on first use.
    pub(crate) fn pipeline(&self, key: &KernelKey) -> Result<Arc<wgpu::ComputePipeline>> {
        self.check_process()?;
        let mut cache = self
            .shared
            .pipelines
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(p) = cache.get(key) {
            return Ok(Arc::clone(p));
        }
        let device = &self.shared.device;
        let pipeline = self.catch(BUILDING_PIPELINE, || {
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("ewise kernel"),
                source: wgpu::ShaderSource::Wgsl(shader::source(key).into()),
            });
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some("ewise kernel"),
                layout: None,
                module: &module,
                entry_point: Some("main"),
                compilation_options: Default::default(),
                cache: None,
            })
        })?;
        let pipeline = Arc::new(pipeline);
        cache.insert(*key, Arc::clone(&pipeline));
        Ok(pipeline)
    }

    /// Builds the kernels of [`shader::probe_keys`] (kept for the operators that need
    /// them), with any error they meet.
    async fn probe(&self) -> Result<()> {
        for key in shader::probe_keys() {
            self.pipeline(&key)?;
        }
        #[cfg(target_arch = "wasm32")]
        self.settle().await?;
        Ok(())
    }

    /// [`GpuError::Forked`] in a process forked from the one that created the device:
    /// the entry points of the device, its operators and buffers call this before
    /// anything reaches wgpu. A front end that guards the device's objects with locks of
    /// its own calls it before taking them too, since a parent thread may have held one
    /// at the fork: the child then gets the error at once instead of waiting forever.
    pub fn check_process(&self) -> Result<()> {
        check_process(self.shared.pid)
    }

    /// Runs `f` inside validation and out-of-memory error scopes; the first error either
    /// catches (or that reached the uncaptured handler meanwhile) is returned. A panic
    /// inside wgpu (wgpu-core 30 unwraps some allocations, e.g. the command encoder of
    /// queue writes, and panics when host memory runs out) is returned as an error too,
    /// after the scopes are closed.
    pub(crate) fn catch<T>(&self, during: &'static str, f: impl FnOnce() -> T) -> Result<T> {
        self.check_process()?;
        let device = &self.shared.device;
        let memory = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let value = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        let (validation, memory) = (validation.pop(), memory.pop());
        #[cfg(not(target_arch = "wasm32"))]
        let first = signal::block_on(validation).or(signal::block_on(memory));
        #[cfg(target_arch = "wasm32")]
        let first: Option<wgpu::Error> = {
            let scopes = Scopes {
                during,
                validation: Box::pin(validation),
                memory: Box::pin(memory),
            };
            self.shared
                .scopes
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(scopes);
            None
        };
        let value = value.map_err(|panic| GpuError::Wgpu {
            during,
            message: format!("wgpu panicked: {}", panic_message(&*panic)),
        })?;
        if let Some(e) = first {
            return Err(GpuError::Wgpu {
                during,
                message: e.to_string(),
            });
        }
        self.take_uncaptured(during)?;
        Ok(value)
    }

    /// The first error of the synchronous calls' scopes not yet settled (in a browser,
    /// they come through promises), as a [`GpuError::Wgpu`] of the call that got it;
    /// every pending scope is settled either way. An error while building a pipeline
    /// empties the pipeline cache, so that no later call reuses the invalid pipeline. (Natively [`GpuDevice::catch`] settles
    /// its scopes at once.)
    #[cfg(target_arch = "wasm32")]
    async fn settle(&self) -> Result<()> {
        let pending =
            std::mem::take(&mut *self.shared.scopes.lock().unwrap_or_else(|e| e.into_inner()));
        let mut first = None;
        for scopes in pending {
            let validation = scopes.validation.await;
            let error = validation.or(scopes.memory.await);
            if error.is_some() && scopes.during == BUILDING_PIPELINE {
                self.shared
                    .pipelines
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .clear();
            }
            if let (None, Some(e)) = (&first, error) {
                first = Some(GpuError::Wgpu {
                    during: scopes.during,
                    message: e.to_string(),
                });
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// An error that reached the uncaptured handler, as a [`GpuError::Wgpu`].
    pub(crate) fn take_uncaptured(&self, during: &'static str) -> Result<()> {
        if let Some(slot) = &self.shared.uncaptured {
            if let Some(message) = slot.lock().unwrap_or_else(|e| e.into_inner()).take() {
                return Err(GpuError::Wgpu { during, message });
            }
        }
        Ok(())
    }

    /// Waits until the queue's work so far has finished.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn wait(&self, during: &'static str) -> Result<()> {
        self.check_process()?;
        self.shared
            .device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| GpuError::Wgpu {
                during,
                message: e.to_string(),
            })?;
        self.take_uncaptured(during)
    }

    /// Waits until the submission `index` has finished.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn wait_for(
        &self,
        index: wgpu::SubmissionIndex,
        during: &'static str,
    ) -> Result<()> {
        self.check_process()?;
        self.shared
            .device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(index),
                timeout: None,
            })
            .map_err(|e| GpuError::Wgpu {
                during,
                message: e.to_string(),
            })?;
        self.take_uncaptured(during)
    }

    /// Until the queue's work so far has finished: natively [`GpuDevice::wait`]; in a
    /// browser, awaiting WebGPU's `onSubmittedWorkDone`, then the pending error scopes
    /// and any uncaptured error.
    pub(crate) async fn idle(&self, during: &'static str) -> Result<()> {
        #[cfg(not(target_arch = "wasm32"))]
        {
            self.wait(during)
        }
        #[cfg(target_arch = "wasm32")]
        {
            self.check_process()?;
            let (sender, done) = signal::signal();
            self.shared
                .queue
                .on_submitted_work_done(move || sender.send(()));
            self.finished(done, during).await
        }
    }

    /// `index`, a submission just made to the device's queue, as one to wait for.
    pub(crate) fn submission(&self, index: wgpu::SubmissionIndex) -> Submission {
        #[cfg(not(target_arch = "wasm32"))]
        {
            Submission { index }
        }
        #[cfg(target_arch = "wasm32")]
        {
            let _ = index;
            let (sender, done) = signal::signal();
            self.shared
                .queue
                .on_submitted_work_done(move || sender.send(()));
            Submission { done }
        }
    }

    /// Until `submission` has finished: natively [`GpuDevice::wait_for`]; in a browser,
    /// as [`GpuDevice::idle`].
    pub(crate) async fn wait_submission(
        &self,
        submission: Submission,
        during: &'static str,
    ) -> Result<()> {
        #[cfg(not(target_arch = "wasm32"))]
        {
            self.wait_for(submission.index, during)
        }
        #[cfg(target_arch = "wasm32")]
        {
            self.check_process()?;
            self.finished(submission.done, during).await
        }
    }

    /// Awaits `done`, then the pending error scopes and any uncaptured error.
    #[cfg(target_arch = "wasm32")]
    async fn finished(&self, done: signal::Signal<()>, during: &'static str) -> Result<()> {
        let reported = done.await;
        self.settle().await?;
        self.take_uncaptured(during)?;
        reported.ok_or_else(|| GpuError::Wgpu {
            during,
            message: "the device dropped the report of finished work".to_string(),
        })
    }

    /// Maps the first `len` bytes of `buffer` (a `MAP_READ` buffer whose contents were
    /// submitted) for reading, awaiting wgpu's report: natively after waiting for the
    /// queue's work ([`GpuDevice::wait`]), which runs the report; in a browser as the
    /// event loop delivers it, then the pending error scopes and any uncaptured error.
    pub(crate) async fn map_read(
        &self,
        buffer: &wgpu::Buffer,
        len: u64,
        during: &'static str,
    ) -> Result<()> {
        let (sender, mapped) = signal::signal();
        buffer.map_async(wgpu::MapMode::Read, ..len, move |r| sender.send(r));
        #[cfg(not(target_arch = "wasm32"))]
        self.wait(during)?;
        let report = mapped.await;
        #[cfg(target_arch = "wasm32")]
        {
            self.settle().await?;
            self.take_uncaptured(during)?;
        }
        match report {
            Some(Ok(())) => Ok(()),
            Some(Err(e)) => Err(GpuError::Wgpu {
                during,
                message: e.to_string(),
            }),
            None => Err(GpuError::Wgpu {
                during,
                message: "the device dropped the mapping's report".to_string(),
            }),
        }
    }
}

/// How wgpu's allocator is asked to place buffers: in memory blocks of 4 to 8 MiB (host
/// memory: 4 MiB), so that every larger buffer (a stream's chunk buffers, staging, the
/// caller's large buffers) has memory of its own, given back when the buffer goes.
/// With wgpu's default blocks of up to 256 MiB, buffers that outlive others (a kept
/// stream's) pin partly used blocks, and the memory a device holds after concurrent
/// calls depended on where the allocator had placed them (tests/c/pools.c measured
/// 200 to 384 MiB above one call). At most one empty block per memory type is kept.
fn memory_hints() -> wgpu::MemoryHints {
    const MIB: u64 = 1 << 20;
    wgpu::MemoryHints::Manual {
        suballocated_device_memory_block_size: 4 * MIB..8 * MIB,
    }
}

/// [`GpuError::Forked`] unless this is the process with id `created`.
pub(crate) fn check_process(created: u32) -> Result<()> {
    let current = process_id();
    if current == created {
        Ok(())
    } else {
        Err(GpuError::Forked { created, current })
    }
}

/// The text a panic carried, if it was a string.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

#[cfg(all(test, not(target_arch = "wasm32")))]
pub(crate) mod tests {
    use super::*;

    /// An extended device on any adapter, software ones included; `None` without one,
    /// unless `EWISE_REQUIRE_GPU=1` asks for a failure.
    pub(crate) fn any_device() -> Option<GpuDevice> {
        let built = GpuDevice::builder()
            .allow_software(true)
            .extensions(Extensions::Enabled)
            .build();
        match built {
            Ok(d) => Some(d),
            Err(GpuError::NoAdapter { .. })
                if std::env::var("EWISE_REQUIRE_GPU").map_or(true, |v| v != "1") =>
            {
                None
            }
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn the_options_setters_and_options_give_the_same_builder() {
        let options = DeviceOptions::default()
            .feature_level(FeatureLevel::L4_0)
            .min_feature_level(FeatureLevel::L3_0)
            .extensions(Extensions::Enabled)
            .nan_policy(NanPolicy::Propagate);
        let chained = GpuDevice::builder()
            .feature_level(FeatureLevel::L4_0)
            .min_feature_level(FeatureLevel::L3_0)
            .extensions(Extensions::Enabled)
            .nan_policy(NanPolicy::Propagate);
        assert_eq!(GpuDevice::builder().options(options), chained);
        assert_eq!(chained.options, options);
        assert_eq!(GpuDevice::builder().options, DeviceOptions::default());
    }

    #[test]
    fn options_below_their_minimum_fail_before_any_adapter_search() {
        let options = DeviceOptions::default()
            .feature_level(FeatureLevel::L2_0)
            .min_feature_level(FeatureLevel::L4_0);
        let err = GpuDevice::builder()
            .backends(wgpu::Backends::empty())
            .options(options)
            .build()
            .unwrap_err();
        assert_eq!(err, GpuError::Op(options.check().unwrap_err()));
        assert_eq!(
            err.to_string(),
            "device creation failed: minimum feature level 4_0 is above the highest this device supports (2_0)"
        );
    }

    #[test]
    fn backend_lists_without_names_count_as_unset() {
        for value in ["", ",", " , ", " ", ",,, ,"] {
            assert_eq!(parse_backends(value), Ok(None), "{value:?}");
        }
        assert_eq!(
            parse_backends(" Vulkan , ,dx12"),
            Ok(Some(wgpu::Backends::VULKAN | wgpu::Backends::DX12))
        );
        assert_eq!(
            parse_backends("vk,mtl,d3d12"),
            Ok(Some(supported_backends()))
        );
        let err = parse_backends("vulkan, gl").unwrap_err();
        assert_eq!(
            err.to_string(),
            "EWISE_GPU_BACKEND=vulkan, gl is not understood (accepted: a comma list of vulkan, metal, dx12)"
        );
    }

    #[test]
    fn backends_are_named_as_the_environment_takes_them() {
        assert_eq!(backend_names(wgpu::Backends::all()), "vulkan, metal, dx12");
        assert_eq!(backend_names(supported_backends()), "vulkan, metal, dx12");
        assert_eq!(
            backend_names(wgpu::Backends::METAL | wgpu::Backends::GL),
            "metal"
        );
        assert_eq!(backend_names(wgpu::Backends::GL), "none");
        assert_eq!(backend_names(wgpu::Backends::empty()), "none");
    }

    #[test]
    fn a_missing_adapter_names_the_backends_searched() {
        let text = no_adapter((wgpu::Backends::all(), false), None, None, &[]).to_string();
        assert!(
            text.starts_with(
                "no GPU adapter found: tried backends vulkan, metal, dx12; adapter name any; \
                 found none. Install"
            ),
            "{text}"
        );
        for raw in ["Backends(", "NOOP", "GL", "BROWSER", "0x0"] {
            assert!(!text.contains(raw), "{raw} in {text}");
        }
        let text =
            no_adapter((wgpu::Backends::VULKAN, true), Some("llvmpipe"), None, &[]).to_string();
        assert!(
            text.contains(
                "tried backends vulkan (EWISE_GPU_BACKEND); adapter name containing \"llvmpipe\"; found none"
            ),
            "{text}"
        );
        let text = no_adapter((wgpu::Backends::empty(), false), None, None, &[]).to_string();
        assert!(text.contains("tried backends none;"), "{text}");
        let text = no_adapter((wgpu::Backends::DX12, true), None, Some("dxc"), &[]).to_string();
        assert!(
            text.contains(
                "tried backends dx12 (EWISE_GPU_BACKEND); adapter name any; Direct3D 12 shader compiler \"dxc\" (WGPU_DX12_COMPILER; dxc needs dxcompiler.dll"
            ),
            "{text}"
        );
    }
}
