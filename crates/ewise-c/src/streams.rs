//! The GPU streams `ewise_sign` and `ewise_is_infinity` keep between calls: at most
//! [`KEPT_STREAMS`] streams holding at most [`KEPT_BYTES`] in all, whatever the number
//! of threads, types and modes that called.

use std::collections::VecDeque;

use ewise::gpu::stream::GpuStream;
use ewise::{DataType, InfinityMode};

/// The most idle streams a device keeps.
pub(crate) const KEPT_STREAMS: usize = 4;

/// The most bytes (GPU buffers and host staging, [`GpuStream::held_bytes`]) a device's
/// idle streams hold in all. A stream that alone holds more is released when its call
/// returns.
pub(crate) const KEPT_BYTES: u64 = 128 << 20;

/// The operator and input type of a kept GPU stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum StreamKey {
    Sign(DataType),
    IsInfinity(DataType, InfinityMode),
}

/// Idle streams, the most recently returned first. A call takes one of its key out
/// (or makes one) and gives it back when it is done; the pool then releases the least
/// recently returned streams beyond its bounds.
#[derive(Debug, Default)]
pub(crate) struct StreamPool {
    idle: VecDeque<(StreamKey, GpuStream)>,
}

impl StreamPool {
    /// An idle stream for `key`, taken out of the pool.
    pub(crate) fn take(&mut self, key: StreamKey) -> Option<GpuStream> {
        let at = self.idle.iter().position(|(k, _)| *k == key)?;
        self.idle.remove(at).map(|(_, stream)| stream)
    }

    /// Keeps `stream` as the most recently returned, and hands back the streams that
    /// no longer fit the bounds, for the caller to drop once it has let the pool go.
    #[must_use]
    pub(crate) fn give_back(&mut self, key: StreamKey, stream: GpuStream) -> Vec<GpuStream> {
        self.idle.push_front((key, stream));
        let mut released = Vec::new();
        while self.idle.len() > KEPT_STREAMS || self.held_bytes() > KEPT_BYTES {
            match self.idle.pop_back() {
                Some((_, stream)) => released.push(stream),
                None => break,
            }
        }
        released
    }

    /// The bytes the idle streams hold.
    pub(crate) fn held_bytes(&self) -> u64 {
        self.idle.iter().map(|(_, s)| s.held_bytes()).sum()
    }

    /// How many streams are idle.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.idle.len()
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::CStr;

    use super::*;
    use crate::types::*;
    use crate::{ewise_create_device, ewise_device, ewise_is_infinity, ewise_last_error};
    use crate::{ewise_release_device, ewise_sign};

    /// A GPU device through the C ABI, or `None` (with a line) where there is none and
    /// `EWISE_REQUIRE_GPU` is not 1.
    fn gpu() -> Option<*mut ewise_device> {
        let desc = EWISE_DEVICE_DESC {
            Kind: EWISE_DEVICE_GPU,
            FeatureLevel: DML_FEATURE_LEVEL_6_4,
            Extensions: 1,
            NanPolicy: EWISE_NAN_ZERO,
        };
        let mut device = std::ptr::null_mut();
        // SAFETY: valid pointers.
        if unsafe { ewise_create_device(&desc, &mut device) } == EWISE_OK {
            return Some(device);
        }
        // SAFETY: a NUL-terminated message.
        let why = unsafe { CStr::from_ptr(ewise_last_error()) }.to_string_lossy();
        assert_ne!(
            std::env::var("EWISE_REQUIRE_GPU").as_deref(),
            Ok("1"),
            "EWISE_REQUIRE_GPU=1 but: {why}"
        );
        eprintln!("SKIPPED: no GPU: {why}");
        None
    }

    fn pool(device: *mut ewise_device) -> (usize, u64) {
        // SAFETY: a live handle.
        let core = unsafe { &(*device).core };
        let pool = core.streams.lock().unwrap();
        (pool.len(), pool.held_bytes())
    }

    #[test]
    fn kept_streams_stay_within_count_and_bytes() {
        let Some(device) = gpu() else { return };
        let device_addr = device as usize;
        let threads: Vec<_> = (0..6)
            .map(|k| {
                std::thread::spawn(move || {
                    let mut x = vec![k as f32 - 2.0; 5 << 20];
                    let device = device_addr as *mut ewise_device;
                    let p = x.as_mut_ptr().cast();
                    // SAFETY: `x` holds the elements; in place.
                    let s = unsafe {
                        ewise_sign(device, DML_TENSOR_DATA_TYPE_FLOAT32, p, p, x.len() as u64)
                    };
                    assert_eq!(s, EWISE_OK);
                    let want: f32 = match k {
                        0 | 1 => -1.0,
                        2 => 0.0,
                        _ => 1.0,
                    };
                    assert!(x.iter().all(|v| v.to_bits() == want.to_bits()));
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        let (count, bytes) = pool(device);
        assert!(
            (1..=KEPT_STREAMS).contains(&count) && bytes <= KEPT_BYTES,
            "{count} streams, {bytes} bytes"
        );

        let input = vec![0u8; 1 << 20];
        let mut output = vec![0u8; 1 << 20];
        for t in [
            DML_TENSOR_DATA_TYPE_FLOAT32,
            DML_TENSOR_DATA_TYPE_FLOAT16,
            DML_TENSOR_DATA_TYPE_INT8,
            DML_TENSOR_DATA_TYPE_UINT16,
            DML_TENSOR_DATA_TYPE_INT32,
            DML_TENSOR_DATA_TYPE_UINT64,
        ] {
            let n = (input.len() / 8) as u64;
            // SAFETY: both hold at least `n` elements of 8 bytes or fewer.
            let s = unsafe {
                ewise_sign(
                    device,
                    t,
                    input.as_ptr().cast(),
                    output.as_mut_ptr().cast(),
                    n,
                )
            };
            assert_eq!(s, EWISE_OK);
            for mode in [DML_IS_INFINITY_MODE_EITHER, DML_IS_INFINITY_MODE_NEGATIVE] {
                if t == DML_TENSOR_DATA_TYPE_FLOAT32 || t == DML_TENSOR_DATA_TYPE_FLOAT16 {
                    // SAFETY: as above; one output byte per element.
                    let s = unsafe {
                        ewise_is_infinity(
                            device,
                            t,
                            mode,
                            input.as_ptr().cast(),
                            output.as_mut_ptr(),
                            n,
                        )
                    };
                    assert_eq!(s, EWISE_OK);
                }
            }
            let (count, bytes) = pool(device);
            assert!(
                count <= KEPT_STREAMS && bytes <= KEPT_BYTES,
                "{count} streams, {bytes} bytes"
            );
        }
        assert_eq!(pool(device).0, KEPT_STREAMS);
        // SAFETY: a live handle, not used again.
        unsafe { ewise_release_device(device) };
    }
}
