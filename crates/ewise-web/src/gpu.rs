//! The WebGPU exports: a [`WebGpuDevice`] over the browser's one adapter (`ewise_gpu`)
//! with two faces on one WebGPU device. Its SIGN and IS_INFINITY take the array
//! exports' arguments and write the result's bytes, identical to the CPU's (with the
//! extensions enabled, whatever the device's options), into an array the caller gives. Its DirectML-style
//! operators ([`WebGpuOperator`], [`WebGpuCompiledOperator`]) are validated at the
//! device's options and bound as the CPU's (`crate::dml`), with the same errors.
//!
//! Inputs are copied when a call is made and nothing is written into the caller's
//! memory until the GPU has finished: the array calls write the output's bytes into a
//! `Uint8Array` the caller allocated for them and copies where it wants them; the
//! DirectML-style executions write the output's elements into the caller's buffer
//! when the GPU is done, and only them (the bytes between elements keep what they hold
//! then), or reject and write nothing.

use ewise_core::{DataType, Error, InfinityMode, OperatorType};
use ewise_core::{Extensions, NanPolicy, OperatorDesc, TensorDesc, TensorRole};
use ewise_gpu::{GpuCompiledOperator, GpuDevice, GpuDeviceBuilder, GpuOperator};
use js_sys::{Promise, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use crate::array::{copy_in, data_type, infinity_mode, nan_policy, same_count, view};
use crate::dml::{self, bind, head_of, policy_number, span_len, span_of, write_elements};
use crate::dml::{Bound, WebDeviceOptions};
use crate::error::{self, argument, validation};

/// The most input bytes one GPU execution of the array calls takes: larger arrays run
/// in pieces.
pub const GPU_PIECE_BYTES: usize = 32 << 20;

/// Opens a device on the adapter `navigator.gpu.requestAdapter()` gives, with `options`
/// for its DirectML-style operators. A software adapter (SwiftShader), which is then the
/// only one, is taken either way: `allow_software` (`GpuDeviceBuilder::allow_software`)
/// says whether it was asked for, and so whether the device's `softwareWarning` is
/// set (the caller refuses it where it must). `max_workgroups` and `max_binding_size` (positive, else an
/// `ArgumentError`) cap the workgroups per grid dimension and the bytes of one binding
/// window below the adapter's limits (`GpuDeviceBuilder::max_workgroups_per_dimension`
/// and `max_binding_size`; a binding size below 256 bytes plus the adapter's storage
/// offset alignment is raised to that), for both faces. Without an adapter: a
/// `GpuError` of kind `NoAdapter`. The caller checks that `navigator.gpu` exists first.
#[wasm_bindgen(js_name = requestGpuDevice)]
pub fn request_gpu_device(
    allow_software: bool,
    options: &WebDeviceOptions,
    max_workgroups: Option<u32>,
    max_binding_size: Option<u64>,
) -> Result<Promise, JsValue> {
    let mut builder = GpuDevice::builder().allow_software(allow_software);
    if let Some(workgroups) = max_workgroups {
        positive(workgroups.into(), "maxWorkgroupsPerDimension")?;
        builder = builder.max_workgroups_per_dimension(workgroups);
    }
    if let Some(bytes) = max_binding_size {
        positive(bytes, "maxBindingSize")?;
        builder = builder.max_binding_size(bytes);
    }
    let arrays: GpuDeviceBuilder = builder.clone().extensions(Extensions::Enabled);
    let builder = builder.options(options.options());
    Ok(future_to_promise(async move {
        let device = builder.build_async().await.map_err(|e| error::gpu(&e))?;
        let wgpu = device.wgpu_device();
        let arrays = arrays
            .from_wgpu(
                wgpu.clone(),
                device.wgpu_queue().clone(),
                &wgpu.adapter_info(),
            )
            .map_err(|e| error::gpu(&e))?;
        Ok(WebGpuDevice { device, arrays }.into())
    }))
}

/// An `ArgumentError` for `options.NAME` unless `value` is positive.
fn positive(value: u64, name: &str) -> Result<(), JsValue> {
    if value == 0 {
        return Err(argument(
            &format!("options.{name}"),
            &format!("{name} must be positive"),
        ));
    }
    Ok(())
}

/// A GPU device: DirectML-style operators at its options, and the array calls.
#[wasm_bindgen]
pub struct WebGpuDevice {
    /// The device at the options it was requested with.
    device: GpuDevice,
    /// The same WebGPU device with the extensions enabled, for the array calls.
    arrays: GpuDevice,
}

/// The elements in `input` (whole `size`-byte elements, else `PartialElement`), copied.
fn elements_of(
    operator: OperatorType,
    data_type: DataType,
    input: &Uint8Array,
) -> Result<(Vec<u8>, usize), JsValue> {
    let size = data_type.size_in_bytes().unwrap_or(1) as usize;
    let bytes = input.length() as usize;
    if !bytes.is_multiple_of(size) {
        return Err(validation(&Error::PartialElement {
            operator,
            tensor: TensorRole::Input,
            bytes,
            element_size: size,
        }));
    }
    let mut copy = error::zeroed(bytes, "a copy of the input for the GPU")?;
    copy_in(input, 0, &mut copy)?;
    Ok((copy, size))
}

/// `result`, the array the array calls' output is written into, when it holds `len`
/// bytes; else an `ArgumentError`. The caller allocates it, so that its allocation
/// failing is an error there rather than a JavaScript exception inside the module.
fn result_of(result: &Uint8Array, len: usize) -> Result<Uint8Array, JsValue> {
    if result.length() as usize != len {
        return Err(argument(
            "result",
            &format!(
                "result holds {} bytes, not the {len} the output needs",
                result.length()
            ),
        ));
    }
    Ok(result.clone())
}

/// Element counts of the pieces of `count` elements of `size` bytes.
fn pieces(count: usize, size: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    let per = (GPU_PIECE_BYTES / size).max(1);
    (0..count.div_ceil(per)).map(move |k| k * per..((k + 1) * per).min(count))
}

#[wasm_bindgen]
impl WebGpuDevice {
    /// The adapter: name, backend, type and driver.
    #[wasm_bindgen(getter)]
    pub fn adapter(&self) -> String {
        self.device.adapter().to_string()
    }

    /// Whether the adapter is a software renderer (SwiftShader; WebGPU's fallback
    /// adapter).
    #[wasm_bindgen(getter, js_name = isSoftware)]
    pub fn is_software(&self) -> bool {
        self.device.adapter().is_software()
    }

    /// The sentence to warn with once for this device when it runs on a software
    /// renderer that was not asked for (`GpuDevice::software_warning`), else `undefined`.
    #[wasm_bindgen(getter, js_name = softwareWarning)]
    pub fn software_warning(&self) -> Option<String> {
        self.device.software_warning()
    }

    /// The bytes one binding window spans at most (the adapter's limit, or the cap).
    #[wasm_bindgen(getter, js_name = maxBindingSize)]
    pub fn max_binding_size(&self) -> u64 {
        self.device.max_binding_size()
    }

    /// The feature level of the DirectML-style operators (`6_4`).
    #[wasm_bindgen(getter, js_name = featureLevel)]
    pub fn feature_level(&self) -> String {
        self.device.feature_level().to_string()
    }

    /// Whether the DirectML-style operators may use the ewise extensions.
    #[wasm_bindgen(getter)]
    pub fn extensions(&self) -> bool {
        self.device.extensions() == Extensions::Enabled
    }

    /// The NaN policy new SIGN operators start with (0 zero, 1 propagate).
    #[wasm_bindgen(getter, js_name = nanPolicy)]
    pub fn nan_policy(&self) -> u32 {
        policy_number(self.device.nan_policy())
    }

    /// `DML_FEATURE_FEATURE_LEVELS`: the highest of `levels` at or below the device's
    /// level, or `undefined` when all are above it.
    #[wasm_bindgen(js_name = checkFeatureLevels)]
    pub fn check_feature_levels(&self, levels: Vec<String>) -> Result<Option<String>, JsValue> {
        let levels = dml::feature_levels(&levels)?;
        Ok(self
            .device
            .check_feature_levels(&levels)
            .map(|l| l.to_string()))
    }

    /// Validates SIGN (`operator` 0) or IS_INFINITY (1, with `mode`) of `input` and
    /// `output` at the device's level, as `WebDevice::create_operator`; a tensor larger
    /// than the GPU's largest buffer is then a `GpuError` of kind `BufferTooLarge`.
    #[wasm_bindgen(js_name = createOperator)]
    pub fn create_operator(
        &self,
        operator: u32,
        input: &dml::WebTensorDesc,
        output: &dml::WebTensorDesc,
        mode: u32,
    ) -> Result<WebGpuOperator, JsValue> {
        let desc = dml::operator_desc(operator, input, output, mode)?;
        let operator = self
            .device
            .create_operator(&desc)
            .map_err(|e| error::gpu(&e))?;
        Ok(WebGpuOperator { operator })
    }

    /// SIGN of `input`'s elements of type `data_type` under NaN policy `nan`, as
    /// `signBytes`, into an output of `output_elements` elements (the same count, else
    /// the CPU's `SliceLength` error, before anything runs): the output's bytes are
    /// written into `result` (the caller's allocation, as long as `input`, else an
    /// `ArgumentError`) when the GPU is done.
    #[wasm_bindgen(js_name = signBytes)]
    pub fn sign_bytes(
        &self,
        data_type: u32,
        nan: u32,
        input: &JsValue,
        output_elements: usize,
        result: &Uint8Array,
    ) -> Result<Promise, JsValue> {
        let input = view(input, "input")?;
        let (data_type, policy) = (self::data_type(data_type)?, nan_policy(nan)?);
        ewise_cpu::array::sign_bytes(data_type, &[], &mut [], policy)
            .map_err(|e| validation(&e))?;
        let (mut data, size) = elements_of(OperatorType::ElementWiseSign, data_type, input)?;
        same_count(
            OperatorType::ElementWiseSign,
            output_elements,
            data.len() / size,
        )?;
        let result = result_of(result, data.len())?;
        let device = self.arrays.clone();
        Ok(future_to_promise(async move {
            for r in pieces(data.len() / size, size) {
                let piece = &mut data[r.start * size..r.end * size];
                sign_piece(&device, data_type, policy, r.len(), piece).await?;
            }
            result.copy_from(&data);
            Ok(JsValue::UNDEFINED)
        }))
    }

    /// IS_INFINITY of `input`'s elements of type `data_type` in mode `mode`, as
    /// `isInfinityBytes`, into an output of `output_elements` elements (checked as
    /// `signBytes` does): one byte (0 or 1) per element is written into `result` (the
    /// caller's allocation, one byte per element, else an `ArgumentError`) when the GPU
    /// is done.
    #[wasm_bindgen(js_name = isInfinityBytes)]
    pub fn is_infinity_bytes(
        &self,
        data_type: u32,
        mode: u32,
        input: &JsValue,
        output_elements: usize,
        result: &Uint8Array,
    ) -> Result<Promise, JsValue> {
        let input = view(input, "input")?;
        let (data_type, mode) = (self::data_type(data_type)?, infinity_mode(mode)?);
        ewise_cpu::array::is_infinity_bytes(data_type, mode, &[], &mut [])
            .map_err(|e| validation(&e))?;
        let (data, size) = elements_of(OperatorType::ElementWiseIsInfinity, data_type, input)?;
        let count = data.len() / size;
        same_count(OperatorType::ElementWiseIsInfinity, output_elements, count)?;
        let result = result_of(result, count)?;
        let mut out = error::zeroed(count, "the output of IS_INFINITY")?;
        let device = self.arrays.clone();
        Ok(future_to_promise(async move {
            for r in pieces(count, size) {
                let src = &data[r.start * size..r.end * size];
                is_infinity_piece(&device, data_type, mode, src, &mut out[r]).await?;
            }
            result.copy_from(&out);
            Ok(JsValue::UNDEFINED)
        }))
    }
}

/// The 1-D description of `count` elements (a piece, so below 2^32).
fn line(data_type: DataType, count: usize) -> TensorDesc {
    TensorDesc::new(data_type, &[u32::try_from(count).unwrap_or(u32::MAX)])
}

async fn sign_piece(
    device: &GpuDevice,
    data_type: DataType,
    policy: NanPolicy,
    count: usize,
    data: &mut [u8],
) -> Result<(), JsValue> {
    let t = line(data_type, count);
    let op = device
        .create_operator(&OperatorDesc::sign(t.clone(), t))
        .and_then(|op| op.with_nan_policy(policy).compile())
        .map_err(|e| error::gpu(&e))?;
    op.execute_in_place_slice_async(data)
        .await
        .map_err(|e| error::gpu(&e))
}

async fn is_infinity_piece(
    device: &GpuDevice,
    data_type: DataType,
    mode: InfinityMode,
    input: &[u8],
    output: &mut [u8],
) -> Result<(), JsValue> {
    let desc = OperatorDesc::is_infinity(
        line(data_type, output.len()),
        line(DataType::Uint8, output.len()),
        mode,
    );
    let op = device
        .create_operator(&desc)
        .and_then(|op| op.compile())
        .map_err(|e| error::gpu(&e))?;
    op.execute_slices_async(input, output)
        .await
        .map_err(|e| error::gpu(&e))
}

/// A validated GPU operator, not yet compiled.
#[wasm_bindgen]
pub struct WebGpuOperator {
    operator: GpuOperator,
}

#[wasm_bindgen]
impl WebGpuOperator {
    /// The NaN policy (0 zero, 1 propagate).
    #[wasm_bindgen(getter, js_name = nanPolicy)]
    pub fn nan_policy(&self) -> u32 {
        policy_number(self.operator.nan_policy())
    }

    /// This operator with NaN policy `nan` (0 zero, 1 propagate).
    #[wasm_bindgen(js_name = withNanPolicy)]
    pub fn with_nan_policy(&self, nan: u32) -> Result<WebGpuOperator, JsValue> {
        Ok(WebGpuOperator {
            operator: self.operator.clone().with_nan_policy(nan_policy(nan)?),
        })
    }

    /// The operator, compiled: its kernel chosen and its walk split into dispatches
    /// that fit the device's binding and grid limits (and caps).
    pub fn compile(&self) -> Result<WebGpuCompiledOperator, JsValue> {
        let compiled = self.operator.compile().map_err(|e| error::gpu(&e))?;
        Ok(WebGpuCompiledOperator { compiled })
    }
}

/// A compiled GPU operator: executes any number of times, each execution a promise.
#[wasm_bindgen]
pub struct WebGpuCompiledOperator {
    compiled: GpuCompiledOperator,
}

#[wasm_bindgen]
impl WebGpuCompiledOperator {
    /// `ELEMENT_WISE_SIGN` or `ELEMENT_WISE_IS_INFINITY`.
    #[wasm_bindgen(getter, js_name = operatorType)]
    pub fn operator_type(&self) -> String {
        self.compiled.operator_type().name().to_string()
    }

    /// How many dispatches one execution records (more than one when the tensors span
    /// more than one binding window or grid; 0 for empty tensors).
    #[wasm_bindgen(getter)]
    pub fn dispatches(&self) -> f64 {
        self.compiled.dispatches() as f64
    }

    /// As `WebCompiledOperator::execute`, on the GPU: the same arguments, checks and
    /// errors, thrown before anything is copied or run. The input's exact span is read
    /// when this is called; the promise resolves when the output's elements are
    /// written, or rejects (a `GpuError`, an `OutOfMemoryError`, or an `ArgumentError`
    /// when the output buffer was detached or shrunk meanwhile) with nothing written.
    pub fn execute(
        &self,
        buffers: &JsValue,
        memories: Vec<u32>,
        inputs: Vec<u64>,
        outputs: Vec<u64>,
    ) -> Result<Promise, JsValue> {
        let c = &self.compiled;
        let (in_desc, out_desc) = (c.input_desc(), c.output_desc());
        // In place (identical ranges, SIGN), the input is read whole into `src` before
        // any output is written, as the CPU runs layouts that differ in place.
        let Bound { input, output, .. } = bind(
            c.operator_type(),
            (in_desc, out_desc),
            buffers,
            &memories,
            (&inputs, &outputs),
        )?;
        let (in_span, out_span) = (
            in_desc.exact_span_in_bytes(),
            out_desc.exact_span_in_bytes(),
        );
        let src = span_of(
            &input.view,
            input.at,
            input.len,
            in_span,
            "a copy of the input",
        )?;
        let mut dst = error::zeroed(span_len(output.len, out_span), "the output's span")?;
        let compiled = c.clone();
        Ok(future_to_promise(async move {
            compiled
                .execute_slices_async(&src, &mut dst)
                .await
                .map_err(|e| error::gpu(&e))?;
            write_elements(&output.view, output.at, compiled.output_desc(), &dst)?;
            Ok(JsValue::UNDEFINED)
        }))
    }

    /// `GpuCompiledOperator::execute_slices_async`: bytes starting at each tensor's
    /// base, each holding at least its exact span (else the promise rejects with
    /// `BytesTooShort`); the input is read when this is called (views that share memory
    /// give the result of reading the whole input first), the output's elements are
    /// written when the GPU is done.
    #[wasm_bindgen(js_name = executeSlices)]
    pub fn execute_slices(&self, input: &JsValue, output: &JsValue) -> Result<Promise, JsValue> {
        let (input, output) = (
            view(input, "input")?.clone(),
            view(output, "output")?.clone(),
        );
        let c = &self.compiled;
        let (src, mut dst) = dml::slices_of(&input, &output, c.input_desc(), c.output_desc())?;
        let compiled = c.clone();
        Ok(future_to_promise(async move {
            compiled
                .execute_slices_async(&src, &mut dst)
                .await
                .map_err(|e| error::gpu(&e))?;
            write_elements(&output, 0, compiled.output_desc(), &dst)?;
            Ok(JsValue::UNDEFINED)
        }))
    }

    /// `GpuCompiledOperator::execute_in_place_slice_async`: SIGN over `data`, whose
    /// output elements replace the input's when the GPU is done (the promise rejects
    /// with `InPlaceUnsupported` for IS_INFINITY or layouts that differ, and with
    /// `BytesTooShort` for data shorter than the span).
    #[wasm_bindgen(js_name = executeInPlace)]
    pub fn execute_in_place(&self, data: &JsValue) -> Result<Promise, JsValue> {
        let data = view(data, "data")?.clone();
        let c = &self.compiled;
        let mut bytes = head_of(
            &data,
            c.input_desc().exact_span_in_bytes(),
            "a copy of the data",
        )?;
        let compiled = c.clone();
        Ok(future_to_promise(async move {
            compiled
                .execute_in_place_slice_async(&mut bytes)
                .await
                .map_err(|e| error::gpu(&e))?;
            write_elements(&data, 0, compiled.output_desc(), &bytes)?;
            Ok(JsValue::UNDEFINED)
        }))
    }
}
