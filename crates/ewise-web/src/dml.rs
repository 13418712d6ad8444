//! The DirectML-style exports, mirroring `ewise_cpu`: a [`WebDevice`] of one feature
//! level validates descriptions ([`WebTensorDesc`]) into a [`WebOperator`], which
//! compiles into a [`WebCompiledOperator`] that executes with buffer bindings, with the
//! rules and messages of the Rust API (docs/SEMANTICS.md sections 3 to 5).
//!
//! JavaScript buffers are `Uint8Array` views, each with the identity of its
//! `ArrayBuffer` (`memories`): views of one `ArrayBuffer` are one memory for the hazard
//! rules, as the C ABI treats two wrapped buffers over the same host addresses.
//!
//! What the GPU's DirectML-style exports (`crate::gpu`) share with these lives here:
//! device options ([`WebDeviceOptions`]), operator descriptions (`operator_desc`),
//! feature levels (`feature_levels`), bindings (`bind`) and writing an output's
//! elements back (`write_elements`).

use ewise_core::{
    calc_buffer_tensor_size, layout, Bindings, BufferBinding, DataType, DeviceOptions, Extensions,
    FeatureLevel, NanPolicy, OperatorDesc, OperatorType, Placement, TensorDesc, TensorFlags,
};
use ewise_cpu::{BufferRef, CompiledOperator, Device, Operator};
use js_sys::{Array, DataView, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::array::{copy_in, copy_out, infinity_mode, nan_policy, view};
use crate::blocks;
use crate::error::{self, argument, validation};

/// The feature level written `text` (`4_1`, `4.1`, `0x4100`, `DML_FEATURE_LEVEL_4_1`).
fn feature_level(what: &str, text: &str) -> Result<FeatureLevel, JsValue> {
    text.parse()
        .map_err(|e: ewise_core::ParseFeatureLevelError| argument(what, &e.to_string()))
}

/// The data type named `name` (DirectML's name without the prefix, any case).
fn data_type_named(name: &str) -> Result<DataType, JsValue> {
    DataType::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = DataType::ALL.iter().map(|t| t.name()).collect();
        argument(
            "dataType",
            &format!(
                "unknown data type \"{}\" (accepted: {})",
                ewise_core::text::clip(name),
                names.join(", ")
            ),
        )
    })
}

/// The number of a NaN policy (0 zero, 1 propagate), as [`nan_policy`] reads it.
pub(crate) fn policy_number(policy: NanPolicy) -> u32 {
    match policy {
        NanPolicy::Zero => 0,
        NanPolicy::Propagate => 1,
    }
}

/// The feature levels written `levels`, for `checkFeatureLevels`.
pub(crate) fn feature_levels(levels: &[String]) -> Result<Vec<FeatureLevel>, JsValue> {
    levels.iter().map(|l| feature_level("levels", l)).collect()
}

/// SIGN (`operator` 0) or IS_INFINITY (1, with `mode`: 0 EITHER, 1 POSITIVE,
/// 2 NEGATIVE, 1000 NEITHER) of `input` and `output`, not yet validated.
pub(crate) fn operator_desc(
    operator: u32,
    input: &WebTensorDesc,
    output: &WebTensorDesc,
    mode: u32,
) -> Result<OperatorDesc, JsValue> {
    let (input, output) = (input.desc.clone(), output.desc.clone());
    match operator {
        0 => Ok(OperatorDesc::sign(input, output)),
        1 => Ok(OperatorDesc::is_infinity(
            input,
            output,
            infinity_mode(mode)?,
        )),
        _ => Err(argument(
            "type",
            &format!(
                "operator {operator} is not 0 (ELEMENT_WISE_SIGN) or 1 (ELEMENT_WISE_IS_INFINITY)"
            ),
        )),
    }
}

/// A device's feature level, minimum level, extensions and NaN policy, checked as
/// device creation checks them; what `WebDevice` and the GPU's `requestGpuDevice` take.
#[wasm_bindgen]
pub struct WebDeviceOptions {
    options: DeviceOptions,
}

#[wasm_bindgen]
impl WebDeviceOptions {
    /// The options of a device at `feature_level` (default 6_4), refused
    /// (`FeatureLevelUnavailable`) when it is below `min_feature_level`, with the ewise
    /// extensions when `extensions`, giving new SIGN operators NaN policy `nan` (0 zero,
    /// 1 propagate).
    #[wasm_bindgen(constructor)]
    pub fn new(
        feature_level: Option<String>,
        min_feature_level: Option<String>,
        extensions: bool,
        nan: u32,
    ) -> Result<WebDeviceOptions, JsValue> {
        let mut options = DeviceOptions::default()
            .extensions(if extensions {
                Extensions::Enabled
            } else {
                Extensions::Disabled
            })
            .nan_policy(nan_policy(nan)?);
        if let Some(level) = feature_level {
            options = options.feature_level(self::feature_level("options.featureLevel", &level)?);
        }
        if let Some(level) = min_feature_level {
            options =
                options.min_feature_level(self::feature_level("options.minFeatureLevel", &level)?);
        }
        options.check().map_err(|e| validation(&e))?;
        Ok(WebDeviceOptions { options })
    }
}

impl WebDeviceOptions {
    /// The checked options.
    pub(crate) fn options(&self) -> DeviceOptions {
        self.options
    }
}

/// `DML_BUFFER_TENSOR_DESC`: a data type, sizes, optional strides (in elements), the
/// total size in bytes (DMLCalcBufferTensorSize's when not given), the guaranteed base
/// offset alignment and the flags. Nothing is checked until an operator is created.
#[wasm_bindgen]
pub struct WebTensorDesc {
    desc: TensorDesc,
}

#[wasm_bindgen]
impl WebTensorDesc {
    /// A description; `total_tensor_size_in_bytes` `undefined` means the minimum.
    #[wasm_bindgen(constructor)]
    pub fn new(
        data_type: &str,
        sizes: Vec<u32>,
        strides: Option<Vec<u32>>,
        total_tensor_size_in_bytes: Option<u64>,
        guaranteed_base_offset_alignment: u32,
        flags: u32,
    ) -> Result<WebTensorDesc, JsValue> {
        let data_type = data_type_named(data_type)?;
        let mut desc = match &strides {
            Some(s) => TensorDesc::strided(data_type, &sizes, s),
            None => TensorDesc::new(data_type, &sizes),
        };
        if let Some(total) = total_tensor_size_in_bytes {
            desc.total_tensor_size_in_bytes = total;
        }
        desc.guaranteed_base_offset_alignment = guaranteed_base_offset_alignment;
        desc.flags = TensorFlags(flags);
        Ok(WebTensorDesc { desc })
    }

    /// The data type's name (`FLOAT32`).
    #[wasm_bindgen(getter, js_name = dataType)]
    pub fn data_type(&self) -> String {
        self.desc.data_type.name().to_string()
    }

    /// The sizes.
    #[wasm_bindgen(getter)]
    pub fn sizes(&self) -> Vec<u32> {
        self.desc.sizes.clone()
    }

    /// The strides, or `undefined` for packed row-major.
    #[wasm_bindgen(getter)]
    pub fn strides(&self) -> Option<Vec<u32>> {
        self.desc.strides.clone()
    }

    /// TotalTensorSizeInBytes.
    #[wasm_bindgen(getter, js_name = totalTensorSizeInBytes)]
    pub fn total_tensor_size_in_bytes(&self) -> u64 {
        self.desc.total_tensor_size_in_bytes
    }

    /// GuaranteedBaseOffsetAlignment.
    #[wasm_bindgen(getter, js_name = guaranteedBaseOffsetAlignment)]
    pub fn guaranteed_base_offset_alignment(&self) -> u32 {
        self.desc.guaranteed_base_offset_alignment
    }

    /// The flags.
    #[wasm_bindgen(getter)]
    pub fn flags(&self) -> u32 {
        self.desc.flags.0
    }
}

/// `DMLCalcBufferTensorSize`: the minimum bytes a tensor of `data_type` with `sizes` and
/// `strides` spans, or `undefined` when it has none (a type without a byte size,
/// strides of another count, more than 2^64 bytes).
#[wasm_bindgen(js_name = calcBufferTensorSize)]
pub fn calc_buffer_size(
    data_type: &str,
    sizes: Vec<u32>,
    strides: Option<Vec<u32>>,
) -> Result<Option<u64>, JsValue> {
    Ok(calc_buffer_tensor_size(
        data_type_named(data_type)?,
        &sizes,
        strides.as_deref(),
    ))
}

/// A CPU device that behaves as a DirectML device of one feature level.
#[wasm_bindgen]
pub struct WebDevice {
    device: Device,
}

#[wasm_bindgen]
impl WebDevice {
    /// A device with `options`.
    #[wasm_bindgen(constructor)]
    pub fn new(options: &WebDeviceOptions) -> Result<WebDevice, JsValue> {
        let device = Device::builder()
            .options(options.options())
            .build()
            .map_err(|e| validation(&e))?;
        Ok(WebDevice { device })
    }

    /// The feature level (`6_4`).
    #[wasm_bindgen(getter, js_name = featureLevel)]
    pub fn feature_level(&self) -> String {
        self.device.feature_level().to_string()
    }

    /// Whether the ewise extensions are enabled.
    #[wasm_bindgen(getter)]
    pub fn extensions(&self) -> bool {
        self.device.extensions() == Extensions::Enabled
    }

    /// The NaN policy new SIGN operators start with (0 zero, 1 propagate).
    #[wasm_bindgen(getter, js_name = nanPolicy)]
    pub fn nan_policy(&self) -> u32 {
        policy_number(self.device.options().nan_policy)
    }

    /// `DML_FEATURE_FEATURE_LEVELS`: the highest of `levels` at or below the device's
    /// level, or `undefined` when all are above it.
    #[wasm_bindgen(js_name = checkFeatureLevels)]
    pub fn check_feature_levels(&self, levels: Vec<String>) -> Result<Option<String>, JsValue> {
        let levels = feature_levels(&levels)?;
        Ok(self
            .device
            .check_feature_levels(&levels)
            .map(|l| l.to_string()))
    }

    /// Validates SIGN (`operator` 0) or IS_INFINITY (1, with `mode`: 0 EITHER,
    /// 1 POSITIVE, 2 NEGATIVE, 1000 NEITHER) of `input` and `output` at the device's
    /// level, with the rules' first error.
    #[wasm_bindgen(js_name = createOperator)]
    pub fn create_operator(
        &self,
        operator: u32,
        input: &WebTensorDesc,
        output: &WebTensorDesc,
        mode: u32,
    ) -> Result<WebOperator, JsValue> {
        let desc = operator_desc(operator, input, output, mode)?;
        let operator = self
            .device
            .create_operator(&desc)
            .map_err(|e| validation(&e))?;
        Ok(WebOperator { operator })
    }
}

/// A validated operator, not yet compiled.
#[wasm_bindgen]
pub struct WebOperator {
    operator: Operator,
}

#[wasm_bindgen]
impl WebOperator {
    /// The NaN policy (0 zero, 1 propagate).
    #[wasm_bindgen(getter, js_name = nanPolicy)]
    pub fn nan_policy(&self) -> u32 {
        policy_number(self.operator.nan_policy())
    }

    /// This operator with NaN policy `nan` (0 zero, 1 propagate).
    #[wasm_bindgen(js_name = withNanPolicy)]
    pub fn with_nan_policy(&self, nan: u32) -> Result<WebOperator, JsValue> {
        Ok(WebOperator {
            operator: self.operator.clone().with_nan_policy(nan_policy(nan)?),
        })
    }

    /// The operator, compiled.
    pub fn compile(&self) -> Result<WebCompiledOperator, JsValue> {
        let compiled = self.operator.compile().map_err(|e| validation(&e))?;
        Ok(WebCompiledOperator { compiled })
    }
}

/// A compiled operator: executes any number of times.
#[wasm_bindgen]
pub struct WebCompiledOperator {
    compiled: CompiledOperator,
}

/// Bindings from `(buffer, offset, size)` triples.
fn bindings(what: &str, flat: &[u64]) -> Result<Vec<BufferBinding>, JsValue> {
    if !flat.len().is_multiple_of(3) {
        return Err(argument(
            what,
            &format!(
                "{what} must hold (buffer, offset, size) triples; got {} numbers",
                flat.len()
            ),
        ));
    }
    Ok(flat
        .chunks_exact(3)
        .map(|t| {
            let buffer = usize::try_from(t[0]).unwrap_or(usize::MAX);
            BufferBinding::new(buffer, t[1], t[2])
        })
        .collect())
}

/// One bound range: `len` bytes at `at` of `view`.
pub(crate) struct Range {
    /// The bound buffer.
    pub view: Uint8Array,
    /// The range's first byte in `view`.
    pub at: usize,
    /// The range's length in bytes.
    pub len: usize,
}

/// Checked bindings: the input's and the output's range, and how they relate.
pub(crate) struct Bound {
    /// The input binding's range.
    pub input: Range,
    /// The output binding's range.
    pub output: Range,
    /// Separate, disjoint, or in place (identical ranges, SIGN).
    pub placement: Placement,
}

/// The bindings of an execution of `operator` on tensors `descs` (input, output), with
/// `CompiledOperator::execute`'s checks and errors: `buffers` is an `Array` of
/// `Uint8Array`s, `memories[i]` identifies the `ArrayBuffer` of `buffers[i]`, and
/// `inputs` and `outputs` hold (buffer index, offset, size in bytes) triples. Bindings
/// to one buffer, or to views of one `ArrayBuffer` (then compared, and named in
/// messages, by their offsets in it), may overlap only in identical ranges, which run
/// in place (SIGN); any other overlap is a `Hazard`.
pub(crate) fn bind(
    operator: OperatorType,
    descs: (&TensorDesc, &TensorDesc),
    buffers: &JsValue,
    memories: &[u32],
    (inputs, outputs): (&[u64], &[u64]),
) -> Result<Bound, JsValue> {
    let buffers = buffers
        .dyn_ref::<Array>()
        .filter(|_| Array::is_array(buffers))
        .ok_or_else(|| argument("buffers", "buffers must be an Array of Uint8Arrays"))?;
    let views = buffers
        .iter()
        .enumerate()
        .map(|(i, b)| {
            b.dyn_into::<Uint8Array>()
                .map_err(|_| argument("buffers", &format!("buffers[{i}] is not a Uint8Array")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if memories.len() != views.len() {
        return Err(argument(
            "memories",
            &format!("{} memories for {} buffers", memories.len(), views.len()),
        ));
    }
    let (inputs, outputs) = (bindings("inputs", inputs)?, bindings("outputs", outputs)?);
    let lens: Vec<u64> = views.iter().map(|v| u64::from(v.length())).collect();
    let bound = ewise_core::check_bindings(
        operator,
        descs,
        (&inputs, &outputs),
        |i| lens.get(i).copied(),
        lens.len(),
    )
    .map_err(|e| validation(&e))?;
    let (inb, outb) = (bound.input, bound.output);
    let in_place = operator == OperatorType::ElementWiseSign;
    // check_bindings found both buffers, so these indices exist.
    let (Some(in_view), Some(out_view)) = (views.get(inb.buffer), views.get(outb.buffer)) else {
        return Err(argument("buffers", "a bound buffer is missing"));
    };
    let placement = if inb.buffer == outb.buffer {
        bound
            .placement(operator, in_place)
            .map_err(|e| validation(&e))?
    } else if memories.get(inb.buffer) == memories.get(outb.buffer) {
        // Two views of one ArrayBuffer: their ranges within it, named by the input's
        // buffer index.
        let at = |v: &Uint8Array, b: BufferBinding| {
            let offset = u64::from(v.byte_offset()) + b.offset;
            BufferBinding::new(inb.buffer, offset, b.size_in_bytes)
        };
        let absolute = Bindings {
            input: at(in_view, inb),
            output: at(out_view, outb),
        };
        absolute
            .placement(operator, in_place)
            .map_err(|e| validation(&e))?
    } else {
        Placement::Separate
    };
    // Ranges lie inside their buffers (check_bindings), so they fit in usize.
    let range = |view: &Uint8Array, b: BufferBinding| Range {
        view: view.clone(),
        at: b.offset as usize,
        len: b.size_in_bytes as usize,
    };
    Ok(Bound {
        input: range(in_view, inb),
        output: range(out_view, outb),
        placement,
    })
}

/// Writes the bytes of `desc`'s elements from `result` (the tensor's bytes from its
/// base) into `view` from byte `at`, one contiguous run of elements at a time: no other
/// byte of `view` is read or written, so the bytes between strided elements keep what
/// anyone else writes there meanwhile. `result` is the tensor's exact span, or shorter
/// for a tensor whose span does not fit it (then only the elements inside it are
/// written).
pub(crate) fn write_elements(
    view: &Uint8Array,
    at: usize,
    desc: &TensorDesc,
    result: &[u8],
) -> Result<(), JsValue> {
    let len = view.length() as usize;
    // One DataView call writes an element of up to 4 bytes (two one of 8): much less
    // than a subarray and a copy per element.
    let data = (len > 0).then(|| DataView::new(&view.buffer(), view.byte_offset() as usize, len));
    element_runs(desc, |start, end| {
        let (Some(bytes), Some(to)) = (result.get(start..end), at.checked_add(start)) else {
            return Ok(());
        };
        let fits = to.checked_add(bytes.len()).is_some_and(|end| end <= len);
        let le = true;
        match (data.as_ref().filter(|_| fits), bytes) {
            (Some(d), &[a]) => d.set_uint8(to, a),
            (Some(d), &[a, b]) => d.set_uint16_endian(to, u16::from_le_bytes([a, b]), le),
            (Some(d), &[a, b, c, e]) => {
                d.set_uint32_endian(to, u32::from_le_bytes([a, b, c, e]), le);
            }
            (Some(d), &[a, b, c, e, f, g, h, i]) => {
                d.set_uint32_endian(to, u32::from_le_bytes([a, b, c, e]), le);
                d.set_uint32_endian(to + 4, u32::from_le_bytes([f, g, h, i]), le);
            }
            _ => copy_out(view, to, bytes)?,
        }
        Ok(())
    })
}

/// Calls `each(start, end)` for each contiguous run of bytes of `desc`'s elements,
/// counted from the tensor's base (runs past `usize` are skipped), stopping at its
/// first error.
fn element_runs(
    desc: &TensorDesc,
    mut each: impl FnMut(usize, usize) -> Result<(), JsValue>,
) -> Result<(), JsValue> {
    let size = desc.data_type.size_in_bytes().unwrap_or(1);
    let Some(strides) = desc.effective_strides() else {
        return Ok(());
    };
    let dims = layout::simplify(&desc.sizes, &strides, &strides);
    let Some((inner, outer)) = dims.split_last() else {
        return Ok(());
    };
    if inner.size == 0 {
        return Ok(());
    }
    // A contiguous innermost dimension is one run of bytes; otherwise one per element.
    let (run, runs, step) = if inner.out_stride == 1 {
        (inner.size.saturating_mul(size), 1, 0)
    } else {
        (size, inner.size, inner.out_stride.saturating_mul(size))
    };
    // One index per dimension of a validated description: a few words.
    let mut index = vec![0u64; outer.len()];
    loop {
        let base = outer
            .iter()
            .zip(&index)
            .fold(0u64, |acc, (d, &i)| {
                acc.saturating_add(i.saturating_mul(d.out_stride))
            })
            .saturating_mul(size);
        for k in 0..runs {
            let start = base.saturating_add(k.saturating_mul(step));
            let end = start.saturating_add(run);
            if let (Ok(start), Ok(end)) = (usize::try_from(start), usize::try_from(end)) {
                each(start, end)?;
            }
        }
        let mut d = outer.len();
        loop {
            let Some(dim) = d.checked_sub(1).and_then(|i| outer.get(i)) else {
                return Ok(());
            };
            d -= 1;
            let Some(i) = index.get_mut(d) else {
                return Ok(());
            };
            *i += 1;
            if *i < dim.size {
                break;
            }
            *i = 0;
        }
    }
}

/// Whether `compiled` (SIGN) places every element at the same bytes in its input and
/// output, so that running in place needs no second copy.
fn same_layout(compiled: &CompiledOperator) -> bool {
    let desc = OperatorDesc::sign(
        compiled.input_desc().clone(),
        compiled.output_desc().clone(),
    );
    layout::Layouts::of(&desc).is_ok_and(|l| l.same_layout)
}

/// The first `min(len, span)` bytes of `view` from `at`, copied: what an execution
/// reads of a tensor whose exact span is `span` (`None`: none fits, copy all).
pub(crate) fn span_of(
    view: &Uint8Array,
    at: usize,
    len: usize,
    span: Option<u64>,
    for_what: &str,
) -> Result<Vec<u8>, JsValue> {
    let mut bytes = error::zeroed(span_len(len, span), for_what)?;
    copy_in(view, at, &mut bytes)?;
    Ok(bytes)
}

/// `view`'s bytes from its start, as many as `span` (all where it is shorter), copied.
pub(crate) fn head_of(
    view: &Uint8Array,
    span: Option<u64>,
    for_what: &str,
) -> Result<Vec<u8>, JsValue> {
    span_of(view, 0, view.length() as usize, span, for_what)
}

/// What `executeSlices` hands an operator from `input_desc` to `output_desc`, on either
/// backend: a copy of the input's span and a zeroed buffer the length of the output's
/// span (of each, as much as its view holds); allocation failure is `OutOfMemoryError`.
pub(crate) fn slices_of(
    input: &Uint8Array,
    output: &Uint8Array,
    input_desc: &TensorDesc,
    output_desc: &TensorDesc,
) -> Result<(Vec<u8>, Vec<u8>), JsValue> {
    let src = head_of(
        input,
        input_desc.exact_span_in_bytes(),
        "a copy of the input",
    )?;
    let out_len = span_len(output.length() as usize, output_desc.exact_span_in_bytes());
    Ok((src, error::zeroed(out_len, "the output's span")?))
}

/// `min(len, span)` (`len` where there is no span).
pub(crate) fn span_len(len: usize, span: Option<u64>) -> usize {
    span.map_or(len, |span| {
        usize::try_from(span).map_or(len, |span| span.min(len))
    })
}

#[wasm_bindgen]
impl WebCompiledOperator {
    /// `ELEMENT_WISE_SIGN` or `ELEMENT_WISE_IS_INFINITY`.
    #[wasm_bindgen(getter, js_name = operatorType)]
    pub fn operator_type(&self) -> String {
        self.compiled.operator_type().name().to_string()
    }

    /// Runs with bindings into `buffers` (`Uint8Array`s; `memories[i]` identifies the
    /// `ArrayBuffer` of `buffers[i]`): `inputs` and `outputs` hold (buffer index,
    /// offset, size in bytes) triples, checked as `CompiledOperator::execute` checks
    /// them (`bind`). The input binding's range is copied whole before anything is
    /// written (so views of one memory that this cannot tell apart, such as two
    /// `SharedArrayBuffer` objects of one shared memory, give the result of reading the
    /// input first), and only the output elements' bytes are written.
    pub fn execute(
        &self,
        buffers: &JsValue,
        memories: Vec<u32>,
        inputs: Vec<u64>,
        outputs: Vec<u64>,
    ) -> Result<(), JsValue> {
        let c = &self.compiled;
        let Bound {
            input,
            output,
            placement,
        } = bind(
            c.operator_type(),
            (c.input_desc(), c.output_desc()),
            buffers,
            &memories,
            (&inputs, &outputs),
        )?;
        let mut src = error::zeroed(input.len, "a copy of the input binding's range")?;
        copy_in(&input.view, input.at, &mut src)?;
        let one = |len: usize| [BufferBinding::new(0, 0, len as u64)];
        if placement == Placement::InPlace && same_layout(c) {
            c.execute(
                &mut [BufferRef::ReadWrite(&mut src)],
                &one(input.len),
                &one(output.len),
            )
            .map_err(|e| validation(&e))?;
            return write_elements(&output.view, output.at, c.output_desc(), &src);
        }
        // In place with layouts that differ runs from the copy of the input into a
        // second one, so every allocation here is fallible.
        let mut dst = error::zeroed(output.len, "the output binding's range")?;
        c.execute(
            &mut [BufferRef::ReadOnly(&src), BufferRef::ReadWrite(&mut dst)],
            &one(input.len),
            &[BufferBinding::new(1, 0, output.len as u64)],
        )
        .map_err(|e| validation(&e))?;
        write_elements(&output.view, output.at, c.output_desc(), &dst)
    }

    /// Runs with bindings into WasmArrays, where they lie, with no copy: `addresses[i]`
    /// is the first byte of the WasmArray that is buffer `i` (an address that starts no
    /// live WasmArray is an `ArgumentError`). The bindings are checked as [`Self::execute`]
    /// checks them, one array named twice being one memory; identical ranges of one
    /// array run in place (SIGN), and only the output elements' bytes are written.
    #[wasm_bindgen(js_name = executeBlocks)]
    pub fn execute_blocks(
        &self,
        addresses: Vec<u32>,
        inputs: Vec<u64>,
        outputs: Vec<u64>,
    ) -> Result<(), JsValue> {
        let c = &self.compiled;
        let operator = c.operator_type();
        let arrays = blocks::buffers_at(&addresses)?;
        let (inputs, outputs) = (bindings("inputs", &inputs)?, bindings("outputs", &outputs)?);
        let bound = ewise_core::check_bindings(
            operator,
            (c.input_desc(), c.output_desc()),
            (&inputs, &outputs),
            |i| arrays.get(i).map(|a| a.1),
            arrays.len(),
        )
        .map_err(|e| validation(&e))?;
        let (inb, outb) = (bound.input, bound.output);
        // check_bindings found both buffers.
        let (Some(&(a, _)), Some(&(b, _))) = (arrays.get(inb.buffer), arrays.get(outb.buffer))
        else {
            return Err(argument("buffers", "a bound buffer is missing"));
        };
        let run = |buffers: &mut [BufferRef<'_>], out_buffer: usize| {
            c.execute(
                buffers,
                &[blocks::rebound(inb, 0)],
                &[blocks::rebound(outb, out_buffer)],
            )
            .map_err(|e| validation(&e))
        };
        if a == b {
            // One array, perhaps named by two buffer indices: its ranges are compared as
            // one buffer's, named by the input's index.
            let one = Bindings {
                input: inb,
                output: blocks::rebound(outb, inb.buffer),
            };
            one.placement(operator, operator == OperatorType::ElementWiseSign)
                .map_err(|e| validation(&e))?;
            return blocks::with_buffers(&[a], |buffers| run(buffers, 0));
        }
        blocks::with_buffers(&[a, b], |buffers| run(buffers, 1))
    }

    /// `CompiledOperator::execute_slices`: bytes starting at each tensor's base, each
    /// holding at least its exact span (else `BytesTooShort`); views that share memory
    /// give the result of reading the whole input first.
    #[wasm_bindgen(js_name = executeSlices)]
    pub fn execute_slices(&self, input: &JsValue, output: &JsValue) -> Result<(), JsValue> {
        let (input, output) = (view(input, "input")?, view(output, "output")?);
        let c = &self.compiled;
        let (src, mut dst) = slices_of(input, output, c.input_desc(), c.output_desc())?;
        c.execute_slices(&src, &mut dst)
            .map_err(|e| validation(&e))?;
        write_elements(output, 0, c.output_desc(), &dst)
    }

    /// `CompiledOperator::execute_in_place_slice`: SIGN over `data`, whose output
    /// elements replace the input's (`InPlaceUnsupported` for IS_INFINITY or layouts
    /// that differ); only the elements' bytes are written.
    #[wasm_bindgen(js_name = executeInPlace)]
    pub fn execute_in_place(&self, data: &JsValue) -> Result<(), JsValue> {
        let data = view(data, "data")?;
        let c = &self.compiled;
        let mut bytes = head_of(
            data,
            c.input_desc().exact_span_in_bytes(),
            "a copy of the data",
        )?;
        c.execute_in_place_slice(&mut bytes)
            .map_err(|e| validation(&e))?;
        write_elements(data, 0, c.output_desc(), &bytes)
    }
}
