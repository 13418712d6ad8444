//! The WebGPU exports: a [`WebGpuDevice`] over the browser's one adapter
//! (`ewise_gpu`, extensions enabled) whose SIGN and IS_INFINITY take the array exports'
//! arguments and resolve to the result's bytes, identical to the CPU's.
//!
//! The input is copied when the call is made; the promise resolves to a new
//! `Uint8Array` of the output's bytes, which the caller copies where it wants them (so
//! nothing is written into the caller's memory after it may have been transferred).

use ewise_core::{DataType, Error, InfinityMode, OperatorType};
use ewise_core::{Extensions, NanPolicy, OperatorDesc, TensorDesc, TensorRole};
use ewise_gpu::GpuDevice;
use js_sys::{Promise, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use crate::array::{copy_in, data_type, infinity_mode, nan_policy, view};
use crate::error::{self, validation};

/// The most input bytes one GPU execution takes: larger arrays run in pieces.
pub const GPU_PIECE_BYTES: usize = 32 << 20;

/// Opens a device on the adapter `navigator.gpu.requestAdapter()` gives, accepting a
/// software one (SwiftShader) when `allow_software`. Without an adapter: a `GpuError`
/// of kind `NoAdapter`. The caller checks that `navigator.gpu` exists first.
#[wasm_bindgen(js_name = requestGpuDevice)]
pub async fn request_gpu_device(allow_software: bool) -> Result<WebGpuDevice, JsValue> {
    let device = GpuDevice::builder()
        .extensions(Extensions::Enabled)
        .allow_software(allow_software)
        .build_async()
        .await
        .map_err(|e| error::gpu(&e))?;
    Ok(WebGpuDevice { device })
}

/// A GPU device with the ewise extensions enabled.
#[wasm_bindgen]
pub struct WebGpuDevice {
    device: GpuDevice,
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

    /// SIGN of `input`'s elements of type `data_type` under NaN policy `nan`, as
    /// `signBytes`: resolves to the output's bytes.
    #[wasm_bindgen(js_name = signBytes)]
    pub fn sign_bytes(
        &self,
        data_type: u32,
        nan: u32,
        input: &JsValue,
    ) -> Result<Promise, JsValue> {
        let input = view(input, "input")?;
        let (data_type, policy) = (self::data_type(data_type)?, nan_policy(nan)?);
        ewise_cpu::array::sign_bytes(data_type, &[], &mut [], policy)
            .map_err(|e| validation(&e))?;
        let (mut data, size) = elements_of(OperatorType::ElementWiseSign, data_type, input)?;
        let device = self.device.clone();
        Ok(future_to_promise(async move {
            for r in pieces(data.len() / size, size) {
                let piece = &mut data[r.start * size..r.end * size];
                sign_piece(&device, data_type, policy, r.len(), piece).await?;
            }
            Ok(Uint8Array::from(&data[..]).into())
        }))
    }

    /// IS_INFINITY of `input`'s elements of type `data_type` in mode `mode`, as
    /// `isInfinityBytes`: resolves to one byte (0 or 1) per element.
    #[wasm_bindgen(js_name = isInfinityBytes)]
    pub fn is_infinity_bytes(
        &self,
        data_type: u32,
        mode: u32,
        input: &JsValue,
    ) -> Result<Promise, JsValue> {
        let input = view(input, "input")?;
        let (data_type, mode) = (self::data_type(data_type)?, infinity_mode(mode)?);
        ewise_cpu::array::is_infinity_bytes(data_type, mode, &[], &mut [])
            .map_err(|e| validation(&e))?;
        let (data, size) = elements_of(OperatorType::ElementWiseIsInfinity, data_type, input)?;
        let count = data.len() / size;
        let mut out = error::zeroed(count, "the output of IS_INFINITY")?;
        let device = self.device.clone();
        Ok(future_to_promise(async move {
            for r in pieces(count, size) {
                let src = &data[r.start * size..r.end * size];
                is_infinity_piece(&device, data_type, mode, src, &mut out[r]).await?;
            }
            Ok(Uint8Array::from(&out[..]).into())
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
