//! Staging buffers kept for reuse, one pool per direction on each device.
//!
//! - Downloads: [`GpuBuffer::read_range`] takes an unmapped `MAP_READ` buffer, copies
//!   the range into it, maps it, reads it and gives it back unmapped.
//! - Uploads: [`GpuBuffer::write`] of at least [`MIN_BYTES`] takes a `MAP_WRITE` buffer
//!   that is already mapped, fills it, unmaps it and copies it into place; the pool asks
//!   for it to be mapped again, and takes it back once the mapping is done (after the
//!   copy has run, when the device is next polled). Uploads thus neither create a
//!   buffer nor wait for a mapping; smaller writes go through `Queue::write_buffer`.
//!
//! A pool keeps at most [`KEPT`] free buffers, none above [`MAX_KEPT_BYTES`]; new ones
//! are sized up to a power of two (at least [`MIN_BYTES`]) so that transfers of nearby
//! lengths share them. A transfer larger than [`MAX_KEPT_BYTES`] gets a buffer of its
//! own size, dropped after use.
//!
//! [`GpuBuffer::read_range`]: crate::GpuBuffer::read_range
//! [`GpuBuffer::write`]: crate::GpuBuffer::write

use std::sync::{Arc, Mutex, PoisonError};

/// Free staging buffers a pool keeps.
pub const KEPT: usize = 2;

/// The largest staging buffer a pool keeps: bounded host-visible memory per device.
pub const MAX_KEPT_BYTES: u64 = 64 << 20;

/// The smallest staging buffer made, and the smallest write that goes through one.
pub const MIN_BYTES: u64 = 64 << 10;

/// Which way a pool's buffers carry bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    /// `MAP_READ | COPY_DST`, kept unmapped.
    Download,
    /// `MAP_WRITE | COPY_SRC`, kept mapped.
    Upload,
}

/// The free staging buffers of one device for one direction.
#[derive(Debug)]
pub(crate) struct StagingPool {
    direction: Direction,
    free: Arc<Mutex<Vec<wgpu::Buffer>>>,
}

impl StagingPool {
    /// An empty pool of buffers for `direction`.
    pub fn new(direction: Direction) -> StagingPool {
        StagingPool {
            direction,
            free: Arc::default(),
        }
    }

    /// A free buffer of at least `len` bytes (the smallest that fits), or a new one
    /// of [`size_for`] bytes from `device`. An upload buffer comes mapped; when none
    /// fits, the device is polled once (without waiting) so that buffers whose mapping
    /// has finished come back first.
    pub fn take(&self, device: &wgpu::Device, len: u64) -> wgpu::Buffer {
        if let Some(buffer) = take_fitting(&self.free, len) {
            return buffer;
        }
        if self.direction == Direction::Upload && device.poll(wgpu::PollType::Poll).is_ok() {
            if let Some(buffer) = take_fitting(&self.free, len) {
                return buffer;
            }
        }
        let (label, usage, mapped) = match self.direction {
            Direction::Download => (
                "ewise download",
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                false,
            ),
            Direction::Upload => (
                "ewise upload",
                wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
                true,
            ),
        };
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: size_for(len),
            usage,
            mapped_at_creation: mapped,
        })
    }

    /// Takes `buffer` back after use, unmapped. A download buffer is kept at once if it
    /// is small enough, in place of the smallest kept one when [`KEPT`] are already
    /// kept; an upload buffer that would be kept is first mapped again, and kept (by the
    /// same rule) when that mapping finishes. Others are dropped.
    pub fn give_back(&self, buffer: wgpu::Buffer) {
        if self.direction == Direction::Download {
            return keep_in(&self.free, buffer);
        }
        let sizes = sizes(&self.free);
        if keep(&sizes, buffer.size()) == Keep::Drop {
            return;
        }
        let free = Arc::downgrade(&self.free);
        let mapped = buffer.clone();
        buffer.map_async(wgpu::MapMode::Write, .., move |report| {
            if let (Ok(()), Some(free)) = (report, free.upgrade()) {
                keep_in(&free, mapped);
            }
        });
    }

    /// The sizes of the free buffers.
    #[cfg(all(test, not(target_arch = "wasm32")))]
    pub fn free_sizes(&self) -> Vec<u64> {
        sizes(&self.free)
    }

    /// The kept buffers, taken out (for a forked child, which must not release them).
    pub fn take_all(&mut self) -> Vec<wgpu::Buffer> {
        std::mem::take(&mut *self.free.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// The sizes of the buffers in `free`.
fn sizes(free: &Mutex<Vec<wgpu::Buffer>>) -> Vec<u64> {
    let free = free.lock().unwrap_or_else(PoisonError::into_inner);
    free.iter().map(wgpu::Buffer::size).collect()
}

/// The smallest buffer in `free` of at least `len` bytes, taken out.
fn take_fitting(free: &Mutex<Vec<wgpu::Buffer>>, len: u64) -> Option<wgpu::Buffer> {
    let mut free = free.lock().unwrap_or_else(PoisonError::into_inner);
    let sizes: Vec<u64> = free.iter().map(wgpu::Buffer::size).collect();
    pick(&sizes, len).map(|i| free.swap_remove(i))
}

/// Puts `buffer` in `free` by the rule of [`keep`].
fn keep_in(free: &Mutex<Vec<wgpu::Buffer>>, buffer: wgpu::Buffer) {
    let mut free = free.lock().unwrap_or_else(PoisonError::into_inner);
    let sizes: Vec<u64> = free.iter().map(wgpu::Buffer::size).collect();
    match keep(&sizes, buffer.size()) {
        Keep::Add => free.push(buffer),
        Keep::Replace(i) => free[i] = buffer,
        Keep::Drop => {}
    }
}

/// The size of a new staging buffer for `len` bytes: the next power of two, at least
/// [`MIN_BYTES`], where that is at most [`MAX_KEPT_BYTES`]; `len` itself above.
pub fn size_for(len: u64) -> u64 {
    let rounded = len.max(MIN_BYTES).checked_next_power_of_two();
    rounded.filter(|&r| r <= MAX_KEPT_BYTES).unwrap_or(len)
}

/// Of free buffers of `sizes`, the smallest of at least `len` bytes.
fn pick(sizes: &[u64], len: u64) -> Option<usize> {
    (0..sizes.len())
        .filter(|&i| sizes[i] >= len)
        .min_by_key(|&i| sizes[i])
}

/// What becomes of a returned buffer of `size` bytes beside kept ones of `sizes`.
#[derive(Debug, PartialEq, Eq)]
enum Keep {
    Add,
    /// In place of the kept buffer at this index, the smallest, which is smaller.
    Replace(usize),
    Drop,
}

fn keep(sizes: &[u64], size: u64) -> Keep {
    if size > MAX_KEPT_BYTES {
        return Keep::Drop;
    }
    if sizes.len() < KEPT {
        return Keep::Add;
    }
    match (0..sizes.len()).min_by_key(|&i| sizes[i]) {
        Some(i) if sizes[i] < size => Keep::Replace(i),
        _ => Keep::Drop,
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::device::tests::any_device;
    use crate::GpuBuffer;

    #[test]
    fn new_buffers_round_up_to_powers_of_two_within_the_cap() {
        assert_eq!(size_for(0), MIN_BYTES);
        assert_eq!(size_for(4), MIN_BYTES);
        assert_eq!(size_for(MIN_BYTES + 4), 2 * MIN_BYTES);
        assert_eq!(size_for(MAX_KEPT_BYTES), MAX_KEPT_BYTES);
        assert_eq!(size_for(MAX_KEPT_BYTES - 4), MAX_KEPT_BYTES);
        assert_eq!(size_for(MAX_KEPT_BYTES + 4), MAX_KEPT_BYTES + 4);
        assert_eq!(size_for(u64::MAX - 3), u64::MAX - 3);
    }

    #[test]
    fn the_smallest_buffer_that_fits_is_taken() {
        assert_eq!(pick(&[], 4), None);
        assert_eq!(pick(&[1 << 20, 1 << 16], 4), Some(1));
        assert_eq!(pick(&[1 << 20, 1 << 16], 1 << 17), Some(0));
        assert_eq!(pick(&[1 << 20, 1 << 16], 1 << 21), None);
        assert_eq!(pick(&[1 << 16], 1 << 16), Some(0));
    }

    #[test]
    fn a_few_buffers_are_kept_the_largest_first() {
        assert_eq!(keep(&[], 1 << 16), Keep::Add);
        assert_eq!(keep(&[1 << 16], 1 << 20), Keep::Add);
        assert_eq!(keep(&[1 << 16, 1 << 20], 1 << 18), Keep::Replace(0));
        assert_eq!(keep(&[1 << 20, 1 << 16], 1 << 18), Keep::Replace(1));
        assert_eq!(keep(&[1 << 18, 1 << 20], 1 << 16), Keep::Drop);
        assert_eq!(keep(&[], MAX_KEPT_BYTES), Keep::Add);
        assert_eq!(keep(&[], MAX_KEPT_BYTES + 4), Keep::Drop);
    }

    #[test]
    fn transfers_take_kept_buffers_back_instead_of_making_new_ones() {
        let Some(device) = any_device() else { return };
        let (uploads, downloads) = (&device.shared.uploads, &device.shared.downloads);
        let buffer = GpuBuffer::zeroed(&device, 1 << 20).unwrap();
        buffer.write(&device, 0, &vec![7; 1 << 20]).unwrap();
        device.wait("test").unwrap();
        assert_eq!(uploads.free_sizes(), [1 << 20], "mapped again and kept");
        for k in 0..4u8 {
            let data = vec![k; 256 << 10];
            buffer.write(&device, 4096, &data).unwrap();
            assert_eq!(uploads.free_sizes(), [0u64; 0], "taken while in use");
            device.wait("test").unwrap();
            assert_eq!(uploads.free_sizes(), [1 << 20], "the same one back");
            assert_eq!(buffer.read_range(&device, 4096, 256 << 10).unwrap(), data);
            assert_eq!(downloads.free_sizes(), [256 << 10]);
        }
        buffer.write(&device, 0, &[1; 4096]).unwrap();
        device.wait("test").unwrap();
        assert_eq!(uploads.free_sizes(), [1 << 20], "small writes use none");
        let large = GpuBuffer::zeroed(&device, MAX_KEPT_BYTES + 4).unwrap();
        let data = vec![3; MAX_KEPT_BYTES as usize + 4];
        large.write(&device, 0, &data).unwrap();
        device.wait("test").unwrap();
        assert_eq!(uploads.free_sizes(), [1 << 20], "too large to keep");
        assert!(large.read(&device).unwrap() == data);
        assert_eq!(downloads.free_sizes(), [256 << 10]);
    }
}
