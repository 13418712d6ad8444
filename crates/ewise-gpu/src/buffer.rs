//! GPU buffers: made by ewise or wrapped from the caller's own `wgpu::Buffer`.

use wgpu::util::DeviceExt;

use crate::device::{self, GpuDevice};
use crate::error::{GpuError, Result};
#[cfg(not(target_arch = "wasm32"))]
use crate::signal;
use crate::staging;

/// Usages of buffers that ewise makes: bound as storage, uploaded to and downloaded from.
pub const BUFFER_USAGES: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE
    .union(wgpu::BufferUsages::COPY_SRC)
    .union(wgpu::BufferUsages::COPY_DST);

/// A buffer on a GPU device, the unit that bindings refer to (by index in an execution's
/// buffer list). Its length is what bindings are checked against; the memory behind it
/// is rounded up to whole 4-byte words.
///
/// In a process forked from the one that made it, every transfer fails with
/// [`GpuError::Forked`], and dropping it leaks the wgpu buffer rather than releasing it.
#[derive(Debug, Clone)]
pub struct GpuBuffer {
    buffer: wgpu::Buffer,
    len: u64,
    /// The id of the process that made or wrapped it.
    pid: u32,
}

impl Drop for GpuBuffer {
    fn drop(&mut self) {
        if device::forked(self.pid) {
            std::mem::forget(self.buffer.clone());
        }
    }
}

impl GpuBuffer {
    /// A buffer of `len` zero bytes on `device`.
    pub fn zeroed(device: &GpuDevice, len: u64) -> Result<GpuBuffer> {
        let buffer = device.catch("creating a buffer", || {
            device.wgpu_device().create_buffer(&wgpu::BufferDescriptor {
                label: Some("ewise buffer"),
                size: len.div_ceil(4).max(1) * 4,
                usage: BUFFER_USAGES,
                mapped_at_creation: false,
            })
        })?;
        Ok(GpuBuffer::of(buffer, len))
    }

    fn of(buffer: wgpu::Buffer, len: u64) -> GpuBuffer {
        GpuBuffer {
            buffer,
            len,
            pid: device::process_id(),
        }
    }

    /// [`GpuError::Forked`] in a process forked from the one that made the buffer.
    pub(crate) fn check_process(&self) -> Result<()> {
        device::check_process(self.pid)
    }

    /// A buffer holding a copy of `bytes` (uploaded when the device's queue next runs).
    pub fn from_bytes(device: &GpuDevice, bytes: &[u8]) -> Result<GpuBuffer> {
        device.check_process()?;
        let mut padded = bytes.to_vec();
        padded.resize(bytes.len().div_ceil(4).max(1) * 4, 0);
        let buffer = device.catch("creating a buffer", || {
            device
                .wgpu_device()
                .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("ewise buffer"),
                    contents: &padded,
                    usage: BUFFER_USAGES,
                })
        })?;
        Ok(GpuBuffer::of(buffer, bytes.len() as u64))
    }

    /// Wraps a caller's buffer, made on the same wgpu device as the [`GpuDevice`] it will
    /// be used with, without copying. It needs the `STORAGE` usage (plus `COPY_SRC` to
    /// be read back with [`GpuBuffer::read`], `COPY_DST` to be written with
    /// [`GpuBuffer::write`]) and a size that is a multiple of 4 bytes.
    pub fn from_wgpu(buffer: wgpu::Buffer) -> Result<GpuBuffer> {
        if !buffer.usage().contains(wgpu::BufferUsages::STORAGE) {
            return Err(GpuError::ForeignBuffer {
                reason: format!(
                    "its usages {:?} lack STORAGE, which binding it to a compute kernel needs",
                    buffer.usage()
                ),
            });
        }
        if !buffer.size().is_multiple_of(4) {
            return Err(GpuError::ForeignBuffer {
                reason: format!(
                    "its size {} is not a multiple of 4 bytes, which its last word's binding needs",
                    buffer.size()
                ),
            });
        }
        let len = buffer.size();
        Ok(GpuBuffer::of(buffer, len))
    }

    /// The length in bytes that bindings are checked against.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when the buffer holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The wgpu buffer behind it.
    pub fn wgpu_buffer(&self) -> &wgpu::Buffer {
        &self.buffer
    }

    fn transfer_range(&self, what: &'static str, offset: u64, len: u64) -> Result<u64> {
        let end = offset.checked_add(len).filter(|&e| e <= self.len);
        let whole = offset.is_multiple_of(4) && (len.is_multiple_of(4) || end == Some(self.len));
        match end {
            Some(_) if whole => Ok(len.div_ceil(4) * 4),
            _ => Err(GpuError::Transfer {
                what,
                offset,
                len,
                buffer_len: self.len,
            }),
        }
    }

    /// Writes `bytes` at `offset` (a multiple of 4; the length too, unless it reaches
    /// the buffer's end), in queue order: before work submitted after this call. Writes
    /// of 64 KiB or more go through the device's kept upload buffers, mapped ahead of
    /// use, and are submitted at once; smaller ones are staged by wgpu and submitted
    /// with the next submission.
    pub fn write(&self, device: &GpuDevice, offset: u64, bytes: &[u8]) -> Result<()> {
        self.check_process()?;
        device.check_process()?;
        let padded_len = self.transfer_range("upload", offset, bytes.len() as u64)?;
        if bytes.is_empty() {
            return Ok(());
        }
        let whole = bytes.len() / 4 * 4;
        let mut tail = [0u8; 4];
        tail[..bytes.len() - whole].copy_from_slice(&bytes[whole..]);
        let tail = &tail[..padded_len as usize - whole];
        if padded_len >= staging::MIN_BYTES {
            return self.write_staged(device, offset, &bytes[..whole], tail);
        }
        device.catch("uploading to a buffer", || {
            let queue = device.wgpu_queue();
            if whole > 0 {
                queue.write_buffer(&self.buffer, offset, &bytes[..whole]);
            }
            if !tail.is_empty() {
                queue.write_buffer(&self.buffer, offset + whole as u64, tail);
            }
        })
    }

    /// Writes `whole` then `tail` at `offset` through a kept upload buffer.
    fn write_staged(
        &self,
        device: &GpuDevice,
        offset: u64,
        whole: &[u8],
        tail: &[u8],
    ) -> Result<()> {
        let during = "uploading to a buffer";
        let len = (whole.len() + tail.len()) as u64;
        let wgpu_device = device.wgpu_device();
        let pool = &device.shared.uploads;
        let staging = device.catch(during, || pool.take(wgpu_device, len))?;
        {
            let mut view = staging
                .get_mapped_range_mut(..len)
                .map_err(|e| GpuError::Wgpu {
                    during,
                    message: e.to_string(),
                })?;
            view.slice(..whole.len()).copy_from_slice(whole);
            view.slice(whole.len()..).copy_from_slice(tail);
        }
        device.catch(during, || {
            staging.unmap();
            let mut encoder = wgpu_device.create_command_encoder(&Default::default());
            encoder.copy_buffer_to_buffer(&staging, 0, &self.buffer, offset, len);
            device.wgpu_queue().submit([encoder.finish()]);
            pool.give_back(staging);
        })
    }

    /// All of the buffer's bytes, after the work submitted so far.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn read(&self, device: &GpuDevice) -> Result<Vec<u8>> {
        self.read_range(device, 0, self.len)
    }

    /// As [`GpuBuffer::read`], as a future (see [`GpuDevice::synchronize_async`] for how
    /// it waits).
    pub async fn read_async(&self, device: &GpuDevice) -> Result<Vec<u8>> {
        self.read_range_async(device, 0, self.len).await
    }

    /// `len` bytes from `offset` (a multiple of 4; the length too, unless it reaches the
    /// buffer's end), after the work submitted so far.
    /// [`GpuBuffer::read_range_async`], waited for on this thread.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn read_range(&self, device: &GpuDevice, offset: u64, len: u64) -> Result<Vec<u8>> {
        signal::block_on(self.read_range_async(device, offset, len))
    }

    /// As [`GpuBuffer::read_range`], as a future (see [`GpuDevice::synchronize_async`]
    /// for how it waits).
    pub async fn read_range_async(
        &self,
        device: &GpuDevice,
        offset: u64,
        len: u64,
    ) -> Result<Vec<u8>> {
        self.check_process()?;
        device.check_process()?;
        let padded_len = self.transfer_range("download", offset, len)?;
        if len == 0 {
            return Ok(Vec::new());
        }
        let during = "downloading a buffer";
        let wgpu_device = device.wgpu_device();
        let pool = &device.shared.downloads;
        let staging = device.catch(during, || {
            let staging = pool.take(wgpu_device, padded_len);
            let mut encoder = wgpu_device.create_command_encoder(&Default::default());
            encoder.copy_buffer_to_buffer(&self.buffer, offset, &staging, 0, padded_len);
            device.wgpu_queue().submit([encoder.finish()]);
            staging
        })?;
        device.map_read(&staging, padded_len, during).await?;
        let bytes = {
            let view = staging
                .get_mapped_range(..padded_len)
                .map_err(|e| GpuError::Wgpu {
                    during,
                    message: e.to_string(),
                })?;
            let mut bytes = Vec::new();
            bytes
                .try_reserve_exact(len as usize)
                .map_err(|_| GpuError::OutOfHostMemory { bytes: len, during })?;
            bytes.extend_from_slice(&view[..len as usize]);
            bytes
        };
        staging.unmap();
        pool.give_back(staging);
        Ok(bytes)
    }
}
