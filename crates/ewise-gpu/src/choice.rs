//! The order adapters are tried in, and what a build that passed some over says about
//! them.
//!
//! A build tries the adapters one after the other: the first that opens a device and
//! compiles ewise's kernels runs the device. An adapter can be listed and still be
//! unusable: a Direct3D 12 driver without a shader compiler that knows wgpu's shader
//! model (wine's FXC, a Windows machine without DXC), a broken driver, a device lost at
//! creation. The next one in the order is then tried, and the device says which it
//! passed over ([`crate::GpuDevice::fallback_warning`]); when none works, the error
//! names each and why ([`crate::GpuError::NoUsableAdapter`]).

use std::fmt;
use std::future::Future;

use crate::device::AdapterSummary;

/// An adapter that was tried and could not be used, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdapterFailure {
    /// The adapter.
    pub adapter: AdapterSummary,
    /// What failed: opening a device, or compiling a kernel on it (wgpu's message).
    pub reason: String,
}

/// `ADAPTER: REASON`.
impl fmt::Display for AdapterFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.adapter, self.reason)
    }
}

/// `A: why; B: why`.
pub(crate) fn join(failures: &[AdapterFailure]) -> String {
    failures
        .iter()
        .map(AdapterFailure::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// The indices of `infos` in the order a build tries them.
///
/// With `name`, the adapters whose name contains it (case-insensitive), in wgpu's
/// order, software ones included. Without, every adapter by device type (discrete,
/// integrated, virtual, other, then software renderers), wgpu's order within a type: a
/// software renderer is tried only after every hardware adapter has failed.
pub(crate) fn order(infos: &[wgpu::AdapterInfo], name: Option<&str>) -> Vec<usize> {
    if let Some(name) = name {
        let name = name.to_lowercase();
        return infos
            .iter()
            .enumerate()
            .filter(|(_, i)| i.name.to_lowercase().contains(&name))
            .map(|(k, _)| k)
            .collect();
    }
    let rank = |t: wgpu::DeviceType| match t {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Other => 3,
        wgpu::DeviceType::Cpu => 4,
    };
    let mut order: Vec<usize> = (0..infos.len()).collect();
    order.sort_by_key(|&k| rank(infos[k].device_type));
    order
}

/// Opens the adapters of `order` one after the other with `open` until one succeeds:
/// its value, with every adapter passed over before it and why; or every failure.
pub(crate) async fn first_usable<T, F, Fut>(
    order: &[usize],
    summary: impl Fn(usize) -> AdapterSummary,
    mut open: F,
) -> Result<(T, Vec<AdapterFailure>), Vec<AdapterFailure>>
where
    F: FnMut(usize) -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let mut failures = Vec::new();
    for &index in order {
        match open(index).await {
            Ok(value) => return Ok((value, failures)),
            Err(reason) => failures.push(AdapterFailure {
                adapter: summary(index),
                reason,
            }),
        }
    }
    Err(failures)
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    fn info(name: &str, device_type: wgpu::DeviceType) -> wgpu::AdapterInfo {
        wgpu::AdapterInfo {
            name: name.to_string(),
            vendor: 0,
            device: 0,
            device_type,
            device_pci_bus_id: String::new(),
            driver: String::new(),
            driver_info: String::new(),
            backend: wgpu::Backend::Vulkan,
            subgroup_min_size: 4,
            subgroup_max_size: 128,
            transient_saves_memory: None,
            limit_bucket: None,
        }
    }

    fn wine() -> Vec<wgpu::AdapterInfo> {
        use wgpu::DeviceType::*;
        vec![
            info("llvmpipe (LLVM 15.0.6, 256 bits)", Cpu),
            info("NVIDIA GeForce GTX 470", IntegratedGpu),
            info("Virtual", VirtualGpu),
            info("Big", DiscreteGpu),
        ]
    }

    #[test]
    fn hardware_comes_first_by_type_and_software_last() {
        assert_eq!(order(&wine(), None), vec![3, 1, 2, 0]);
        assert_eq!(order(&wine()[..2], None), vec![1, 0]);
        assert_eq!(order(&wine()[..1], None), vec![0]);
        assert_eq!(order(&[], None), Vec::<usize>::new());
    }

    #[test]
    fn a_name_keeps_the_matching_adapters_in_wgpus_order() {
        assert_eq!(order(&wine(), Some("LLVMPIPE")), vec![0]);
        assert_eq!(order(&wine(), Some("i")), vec![0, 1, 2, 3]);
        assert_eq!(order(&wine(), Some("BIG")), vec![3]);
        assert_eq!(order(&wine(), Some("g")), vec![1, 3]);
        assert_eq!(order(&wine(), Some("nothing")), Vec::<usize>::new());
    }

    #[test]
    fn the_first_usable_adapter_wins_and_those_before_it_are_named() {
        let infos = wine();
        let summary = |k: usize| AdapterSummary::of(&infos[k]);
        let mut tried = Vec::new();
        let got = crate::signal::block_on(first_usable(&[3, 1, 0], summary, |k| {
            tried.push(k);
            async move {
                match k {
                    0 => Ok("lavapipe"),
                    1 => Err("Parent device is lost".to_string()),
                    _ => Err("no device".to_string()),
                }
            }
        }));
        assert_eq!(tried, vec![3, 1, 0]);
        let (value, passed) = got.unwrap();
        assert_eq!(value, "lavapipe");
        assert_eq!(
            join(&passed),
            "Big (Vulkan, DiscreteGpu): no device; \
             NVIDIA GeForce GTX 470 (Vulkan, IntegratedGpu): Parent device is lost"
        );
    }

    #[test]
    fn when_none_is_usable_every_failure_is_kept_in_order() {
        let infos = wine();
        let summary = |k: usize| AdapterSummary::of(&infos[k]);
        let got = crate::signal::block_on(first_usable(&[1, 0], summary, |k| async move {
            Err::<(), _>(format!("failure {k}"))
        }));
        let failures = got.unwrap_err();
        assert_eq!(failures.len(), 2);
        assert_eq!(failures[0].reason, "failure 1");
        assert_eq!(failures[1].adapter.name, "llvmpipe (LLVM 15.0.6, 256 bits)");
        let none = crate::signal::block_on(first_usable(&[], summary, |_| async {
            Ok::<(), String>(())
        }));
        assert_eq!(none.unwrap_err(), Vec::new());
    }
}
