//! Devices: the CPU or a GPU, validating at one feature level; what every child keeps
//! alive; and `ewise_check_feature_support`.

use std::io::Write as _;
use std::sync::{Arc, Mutex};

use ewise::gpu::GpuDevice;
use ewise::{
    DataType, Device, DeviceOptions, Extensions, FeatureLevel, InfinityMode, NanPolicy,
    OperatorDesc, OperatorSupport, OperatorType, TensorDesc,
};

use crate::convert::{self, Rules};
use crate::status::{deref, Failure, Outcome};
use crate::streams::StreamPool;
use crate::types::*;

/// The backend a device runs on.
#[derive(Debug)]
pub(crate) enum Backend {
    Cpu(Device),
    Gpu(GpuDevice),
}

/// What a device is, shared by its handle and every child (operators, compiled
/// operators, buffers): the device goes with the last of them.
#[derive(Debug)]
pub(crate) struct DeviceCore {
    pub(crate) backend: Backend,
    pub(crate) rules: Rules,
    pub(crate) nan_policy: NanPolicy,
    /// GPU streams kept for `ewise_sign` and `ewise_is_infinity`, bounded.
    pub(crate) streams: Mutex<StreamPool>,
    /// Whether each data type is accepted here (in the order of `DataType::ALL`): by
    /// SIGN, by IS_INFINITY as its input, by IS_INFINITY as its output.
    accepted: [[bool; 3]; DataType::ALL.len()],
}

/// `ewise_device`: a handle holding a device.
#[derive(Debug)]
pub struct ewise_device {
    pub(crate) core: Arc<DeviceCore>,
}

impl DeviceCore {
    /// The device `desc` asks for. `FeatureLevel` 0 is the latest level, 6_4, so that a
    /// zeroed description is DirectML's defaults (docs/SEMANTICS.md section 8.2): a CPU
    /// device, strict rules at 6_4, NaN policy Zero. A GPU device whose build passed
    /// adapters over writes [`GpuDevice::fallback_warning`] to stderr, and one that runs
    /// on a software renderer chosen unasked writes [`GpuDevice::software_warning`],
    /// each as one line, `ewise: warning: ...`, once per device.
    pub(crate) fn new(desc: &EWISE_DEVICE_DESC) -> Outcome<DeviceCore> {
        let level = match desc.FeatureLevel {
            0 => FeatureLevel::LATEST,
            raw => convert::feature_level(raw)?,
        };
        let extensions = match desc.Extensions {
            0 => Extensions::Disabled,
            1 => Extensions::Enabled,
            other => {
                return Err(Failure::invalid(format!(
                    "EWISE_DEVICE_DESC.Extensions {other} is neither 0 (strict DirectML \
                     rules) nor 1 (ewise extensions)"
                )))
            }
        };
        let nan_policy = match desc.NanPolicy {
            EWISE_NAN_ZERO => NanPolicy::Zero,
            EWISE_NAN_PROPAGATE => NanPolicy::Propagate,
            other => {
                return Err(Failure::invalid(format!(
                    "EWISE_DEVICE_DESC.NanPolicy {other} is neither EWISE_NAN_ZERO 0 nor \
                     EWISE_NAN_PROPAGATE 1"
                )))
            }
        };
        let options = DeviceOptions::default()
            .feature_level(level)
            .extensions(extensions)
            .nan_policy(nan_policy);
        let backend = match desc.Kind {
            EWISE_DEVICE_CPU => Backend::Cpu(Device::builder().options(options).build()?),
            EWISE_DEVICE_GPU => {
                let device = GpuDevice::builder().options(options).build()?;
                for text in [device.fallback_warning(), device.software_warning()]
                    .into_iter()
                    .flatten()
                {
                    // One write of the whole line; a closed stderr loses it, as C's does.
                    let line = format!("ewise: warning: {text}\n");
                    let _ = std::io::stderr().write_all(line.as_bytes());
                }
                Backend::Gpu(device)
            }
            other => {
                return Err(Failure::invalid(format!(
                    "EWISE_DEVICE_DESC.Kind {other} is neither EWISE_DEVICE_CPU 0 nor \
                     EWISE_DEVICE_GPU 1"
                )))
            }
        };
        let rules = Rules { level, extensions };
        let either = InfinityMode::Either;
        let accepted = DataType::ALL.map(|t| {
            [
                (OperatorType::ElementWiseSign, t, t),
                (OperatorType::ElementWiseIsInfinity, t, DataType::Uint8),
                (OperatorType::ElementWiseIsInfinity, DataType::Float32, t),
            ]
            .map(|(op, input, output)| {
                validate_one(&backend, rules, (op, either), (input, output)).is_ok()
            })
        });
        Ok(DeviceCore {
            backend,
            rules,
            nan_policy,
            streams: Mutex::new(StreamPool::default()),
            accepted,
        })
    }

    /// `EWISE_ERROR_DEVICE_UNAVAILABLE` in a process forked from the one that created
    /// this GPU device; called before any lock a parent thread may have held at the
    /// fork (buffers, kept streams), so that the child is refused at once.
    pub(crate) fn check_process(&self) -> Outcome<()> {
        match &self.backend {
            Backend::Gpu(d) => Ok(d.check_process()?),
            Backend::Cpu(_) => Ok(()),
        }
    }

    /// Refuses `operator` on `data_type` elements (IS_INFINITY in `mode`, to UINT8) when
    /// this device does not accept it, with the error a one-element operator's creation
    /// gives.
    pub(crate) fn check_type(
        &self,
        (operator, mode): (OperatorType, InfinityMode),
        data_type: DataType,
    ) -> Outcome<()> {
        let strict_mode = mode.is_extension() && self.rules.extensions == Extensions::Disabled;
        let ok = self
            .accepted(data_type)
            .is_some_and(|[sign, inf, _]| match operator {
                OperatorType::ElementWiseSign => sign,
                OperatorType::ElementWiseIsInfinity => inf && !strict_mode,
            });
        if ok {
            return Ok(());
        }
        let output = match operator {
            OperatorType::ElementWiseSign => data_type,
            OperatorType::ElementWiseIsInfinity => DataType::Uint8,
        };
        validate_one(
            &self.backend,
            self.rules,
            (operator, mode),
            (data_type, output),
        )?;
        Err(Failure::unsupported(format!(
            "{operator} has no kernel for data type {data_type}"
        )))
    }

    /// Whether SIGN or IS_INFINITY accepts `data_type` here, as an input or an output.
    fn supports_type(&self, data_type: DataType) -> bool {
        self.accepted(data_type)
            .is_some_and(|flags| flags.contains(&true))
    }

    /// What accepts `data_type` here: SIGN, IS_INFINITY's input, IS_INFINITY's output.
    fn accepted(&self, data_type: DataType) -> Option<[bool; 3]> {
        let i = DataType::ALL.iter().position(|&t| t == data_type)?;
        self.accepted.get(i).copied()
    }

    fn feature_level(&self) -> FeatureLevel {
        self.rules.level
    }
}

/// Validates a one-element `operator` (IS_INFINITY in `mode`) from `input` to `output`
/// elements on `backend`, with the fewest dimensions the device's level accepts
/// (exactly 4 before level 3_0).
fn validate_one(
    backend: &Backend,
    rules: Rules,
    (operator, mode): (OperatorType, InfinityMode),
    (input, output): (DataType, DataType),
) -> Outcome<()> {
    let dimensions = match rules.extensions {
        Extensions::Enabled => 1,
        Extensions::Disabled => OperatorSupport::of(operator)
            .row_at(rules.level)
            .map_or(1, |row| row.min_dimensions.max(1)),
    };
    let sizes = vec![1; dimensions as usize];
    let (input, output) = (
        TensorDesc::new(input, &sizes),
        TensorDesc::new(output, &sizes),
    );
    let desc = match operator {
        OperatorType::ElementWiseSign => OperatorDesc::sign(input, output),
        OperatorType::ElementWiseIsInfinity => OperatorDesc::is_infinity(input, output, mode),
    };
    match backend {
        Backend::Cpu(d) => d.create_operator(&desc).map(drop)?,
        Backend::Gpu(d) => d.create_operator(&desc).map(drop)?,
    }
    Ok(())
}

/// `ewise_check_feature_support`'s body.
///
/// # Safety
/// `query` points to `query_size` readable bytes and `support` to `support_size`
/// writable bytes; arrays inside the query hold the entries their counts say.
pub(crate) unsafe fn check_feature_support(
    core: &DeviceCore,
    feature: DML_FEATURE,
    (query_size, query): (u32, *const std::ffi::c_void),
    (support_size, support): (u32, *mut std::ffi::c_void),
) -> Outcome<()> {
    let sizes = |name: &str, q: usize, s: usize| -> Outcome<()> {
        if query_size as usize != q || support_size as usize != s {
            return Err(Failure::invalid(format!(
                "{name}: query_size {query_size} and support_size {support_size} must be \
                 {q} and {s} (the sizes of its query and data structs)"
            )));
        }
        Ok(())
    };
    match feature {
        DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT => {
            sizes(
                "DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT",
                size_of::<DML_FEATURE_QUERY_TENSOR_DATA_TYPE_SUPPORT>(),
                size_of::<DML_FEATURE_DATA_TENSOR_DATA_TYPE_SUPPORT>(),
            )?;
            // SAFETY: the caller promises a query of the size checked above.
            let q: &DML_FEATURE_QUERY_TENSOR_DATA_TYPE_SUPPORT =
                unsafe { deref(query.cast(), "query")? };
            let support = support.cast::<DML_FEATURE_DATA_TENSOR_DATA_TYPE_SUPPORT>();
            crate::status::out_ptr(support, "support")?;
            let data_type = convert::data_type(q.DataType)?;
            let answer = DML_FEATURE_DATA_TENSOR_DATA_TYPE_SUPPORT {
                IsSupported: i32::from(core.supports_type(data_type)),
            };
            // SAFETY: non-NULL, and the caller promises room for the struct; unaligned
            // writes accept any address.
            unsafe { support.write_unaligned(answer) };
            Ok(())
        }
        DML_FEATURE_FEATURE_LEVELS => {
            sizes(
                "DML_FEATURE_FEATURE_LEVELS",
                size_of::<DML_FEATURE_QUERY_FEATURE_LEVELS>(),
                size_of::<DML_FEATURE_DATA_FEATURE_LEVELS>(),
            )?;
            // SAFETY: the caller promises a query of the size checked above.
            let q: &DML_FEATURE_QUERY_FEATURE_LEVELS = unsafe { deref(query.cast(), "query")? };
            let support = support.cast::<DML_FEATURE_DATA_FEATURE_LEVELS>();
            crate::status::out_ptr(support, "support")?;
            if q.RequestedFeatureLevelCount == 0 || q.RequestedFeatureLevels.is_null() {
                return Err(Failure::invalid(
                    "DML_FEATURE_QUERY_FEATURE_LEVELS: RequestedFeatureLevelCount must be at \
                     least 1 and RequestedFeatureLevels not NULL",
                ));
            }
            // SAFETY: non-NULL, and the caller promises that many entries.
            let raw = unsafe {
                std::slice::from_raw_parts(
                    q.RequestedFeatureLevels,
                    q.RequestedFeatureLevelCount as usize,
                )
            };
            let requested = raw
                .iter()
                .map(|&l| convert::feature_level(l))
                .collect::<Outcome<Vec<FeatureLevel>>>()?;
            let own = core.feature_level();
            let best = requested.iter().copied().filter(|&l| l <= own).max();
            let Some(best) = best else {
                return Err(Failure::unsupported(format!(
                    "DML_FEATURE_FEATURE_LEVELS: none of the requested levels is at or below \
                     this device's level {own}"
                )));
            };
            let answer = DML_FEATURE_DATA_FEATURE_LEVELS {
                MaxSupportedFeatureLevel: best.raw(),
            };
            // SAFETY: non-NULL, and the caller promises room for the struct.
            unsafe { support.write_unaligned(answer) };
            Ok(())
        }
        other => Err(Failure::invalid(format!(
            "DML_FEATURE {other} is not a feature (accepted: \
             DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT 0, DML_FEATURE_FEATURE_LEVELS 1)"
        ))),
    }
}
