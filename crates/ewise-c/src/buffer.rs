//! Buffers: bytes owned by ewise (CPU or GPU memory) or a caller's host memory, each
//! behind a lock that serialises the calls using it.

use std::sync::{Arc, Mutex, MutexGuard};

use ewise::gpu::GpuBuffer;

use crate::device::{Backend, DeviceCore};
use crate::status::{Failure, Outcome};

/// A caller's memory wrapped without copying.
#[derive(Debug)]
pub(crate) struct HostMemory {
    pub(crate) ptr: *mut u8,
    pub(crate) len: usize,
}

// SAFETY: the caller of `ewise_wrap_host_memory` promises the memory stays valid while
// the buffer lives and is used through it from any thread; ewise's own uses are
// serialised by the buffer's lock.
unsafe impl Send for HostMemory {}

/// Where a buffer's bytes are.
#[derive(Debug)]
pub(crate) enum Storage {
    Owned(Vec<u8>),
    Host(HostMemory),
    Gpu(GpuBuffer),
}

impl Storage {
    /// The bytes of a CPU buffer.
    pub(crate) fn host_bytes(&mut self) -> Option<&mut [u8]> {
        match self {
            Storage::Owned(v) => Some(v),
            // SAFETY: the wrapping promise (see `HostMemory`); the lock held by the
            // caller of this method keeps ewise's other uses away.
            Storage::Host(h) => Some(unsafe { std::slice::from_raw_parts_mut(h.ptr, h.len) }),
            Storage::Gpu(_) => None,
        }
    }

    /// The first byte of a CPU buffer.
    pub(crate) fn host_ptr(&mut self) -> Option<*mut u8> {
        match self {
            Storage::Owned(v) => Some(v.as_mut_ptr()),
            Storage::Host(h) => Some(h.ptr),
            Storage::Gpu(_) => None,
        }
    }

    /// The address range of wrapped host memory.
    pub(crate) fn host_range(&self) -> Option<std::ops::Range<usize>> {
        match self {
            Storage::Host(h) => Some(h.ptr as usize..h.ptr as usize + h.len),
            _ => None,
        }
    }
}

/// `ewise_buffer`: bytes on one device.
#[derive(Debug)]
pub struct ewise_buffer {
    pub(crate) device: Arc<DeviceCore>,
    pub(crate) len: u64,
    pub(crate) storage: Mutex<Storage>,
}

impl ewise_buffer {
    /// A zeroed buffer of `len` bytes on `device`.
    pub(crate) fn zeroed(device: &Arc<DeviceCore>, len: u64) -> Outcome<ewise_buffer> {
        if len == 0 {
            return Err(Failure::invalid(
                "size_in_bytes is 0 (a buffer holds at least 1 byte)",
            ));
        }
        let too_big =
            || Failure::out_of_memory(format!("a buffer of {len} bytes cannot be allocated"));
        let storage = match &device.backend {
            Backend::Cpu(_) => {
                let n = usize::try_from(len).map_err(|_| too_big())?;
                let mut v = Vec::new();
                v.try_reserve_exact(n).map_err(|_| too_big())?;
                v.resize(n, 0);
                Storage::Owned(v)
            }
            Backend::Gpu(d) => {
                let most = d.wgpu_device().limits().max_buffer_size;
                if len.div_ceil(4).saturating_mul(4) > most {
                    return Err(Failure::out_of_memory(format!(
                        "a buffer of {len} bytes is larger than this GPU's largest buffer \
                         ({most} bytes)"
                    )));
                }
                Storage::Gpu(GpuBuffer::zeroed(d, len)?)
            }
        };
        Ok(ewise_buffer {
            device: Arc::clone(device),
            len,
            storage: Mutex::new(storage),
        })
    }

    /// A buffer over a caller's `len` bytes at `ptr` (CPU devices only).
    pub(crate) fn wrap(device: &Arc<DeviceCore>, ptr: *mut u8, len: u64) -> Outcome<ewise_buffer> {
        if ptr.is_null() {
            return Err(Failure::invalid("data is NULL"));
        }
        if len == 0 {
            return Err(Failure::invalid(
                "size_in_bytes is 0 (a buffer holds at least 1 byte)",
            ));
        }
        if let Backend::Gpu(_) = device.backend {
            return Err(Failure::unsupported(
                "ewise_wrap_host_memory: a GPU device cannot use host memory in place; \
                 create a buffer with ewise_create_buffer and ewise_buffer_write to it",
            ));
        }
        let n = usize::try_from(len)
            .ok()
            .filter(|&n| (ptr as usize).checked_add(n).is_some() && n <= isize::MAX as usize)
            .ok_or_else(|| {
                Failure::invalid(format!(
                    "size_in_bytes {len} runs past the end of the address space"
                ))
            })?;
        Ok(ewise_buffer {
            device: Arc::clone(device),
            len,
            storage: Mutex::new(Storage::Host(HostMemory { ptr, len: n })),
        })
    }

    /// The storage, locked.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Storage> {
        self.storage.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Refuses `bytes` bytes at `offset` unless they lie inside the buffer.
    pub(crate) fn range(
        &self,
        what: &str,
        offset: u64,
        bytes: u64,
    ) -> Outcome<std::ops::Range<usize>> {
        match offset.checked_add(bytes) {
            Some(end) if end <= self.len => Ok(offset as usize..end as usize),
            _ => Err(Failure::invalid(format!(
                "{what}: {bytes} bytes at offset {offset} do not fit a buffer of {} bytes",
                self.len
            ))),
        }
    }

    /// Copies `len` bytes from `src` into the buffer at `offset`: at once on the CPU,
    /// as `memmove` does (`src` may lie inside the buffer's own wrapped memory); on a
    /// GPU, in queue order (the bytes are taken now and land before any later execution
    /// or read).
    ///
    /// # Safety
    /// `src` points to `len` readable bytes.
    pub(crate) unsafe fn write(&self, offset: u64, src: *const u8, len: u64) -> Outcome<()> {
        let range = self.range("ewise_buffer_write", offset, len)?;
        self.device.check_process()?;
        let mut storage = self.lock();
        if let Some(base) = storage.host_ptr() {
            // SAFETY: `range` lies inside the buffer's bytes and `src` holds `len` bytes
            // (the caller's promise); `ptr::copy` allows the two to overlap.
            unsafe { std::ptr::copy(src, base.add(range.start), range.len()) };
            return Ok(());
        }
        let (Storage::Gpu(buffer), Backend::Gpu(device)) = (&*storage, &self.device.backend) else {
            unreachable!("a buffer's storage matches its device");
        };
        if range.is_empty() {
            return Ok(());
        }
        // SAFETY: the caller's promise; a GPU buffer's bytes are not host memory, so the
        // slice aliases nothing ewise writes.
        let src = unsafe { std::slice::from_raw_parts(src, range.len()) };
        let words = self.words(&range);
        if words == range {
            buffer.write(device, offset, src)?;
        } else {
            let mut covering =
                buffer.read_range(device, words.start as u64, (words.end - words.start) as u64)?;
            let at = range.start - words.start;
            covering[at..at + src.len()].copy_from_slice(src);
            buffer.write(device, words.start as u64, &covering)?;
        }
        Ok(())
    }

    /// Copies `len` bytes of the buffer at `offset` into `dst`, after the work submitted
    /// so far; as `memmove` does on the CPU (`dst` may lie inside the buffer's own
    /// wrapped memory).
    ///
    /// # Safety
    /// `dst` points to `len` writable bytes.
    pub(crate) unsafe fn read(&self, offset: u64, dst: *mut u8, len: u64) -> Outcome<()> {
        let range = self.range("ewise_buffer_read", offset, len)?;
        self.device.check_process()?;
        let mut storage = self.lock();
        if let Some(base) = storage.host_ptr() {
            // SAFETY: `range` lies inside the buffer's bytes and `dst` holds `len` bytes
            // (the caller's promise); `ptr::copy` allows the two to overlap.
            unsafe { std::ptr::copy(base.add(range.start), dst, range.len()) };
            return Ok(());
        }
        let (Storage::Gpu(buffer), Backend::Gpu(device)) = (&*storage, &self.device.backend) else {
            unreachable!("a buffer's storage matches its device");
        };
        if range.is_empty() {
            return Ok(());
        }
        let words = self.words(&range);
        let covering =
            buffer.read_range(device, words.start as u64, (words.end - words.start) as u64)?;
        let at = range.start - words.start;
        // SAFETY: the caller's promise; `covering` is ewise's own allocation.
        unsafe { std::ptr::copy_nonoverlapping(covering[at..].as_ptr(), dst, range.len()) };
        Ok(())
    }

    /// The whole 4-byte words covering `range` (the last one cut at the buffer's end),
    /// the unit GPU transfers move.
    fn words(&self, range: &std::ops::Range<usize>) -> std::ops::Range<usize> {
        let start = range.start / 4 * 4;
        let end = (range.end.div_ceil(4) * 4).min(self.len as usize);
        start..end
    }
}
