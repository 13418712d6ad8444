//! Download staging buffers kept for reuse: [`GpuBuffer::read_range`] takes one,
//! copies the range into it, maps it and gives it back, so that repeated reads do not
//! create and destroy a mappable buffer each time.
//!
//! A device keeps at most [`KEPT`] of them, none above [`MAX_KEPT_BYTES`]; new ones are
//! sized up to a power of two (at least [`MIN_BYTES`]) so that reads of nearby lengths
//! share them. A read larger than [`MAX_KEPT_BYTES`] gets a buffer of its own size,
//! dropped after use.
//!
//! [`GpuBuffer::read_range`]: crate::GpuBuffer::read_range

use std::sync::{Mutex, PoisonError};

/// Staging buffers a device keeps between reads.
pub const KEPT: usize = 2;

/// The largest staging buffer a device keeps: bounded host-visible memory per device.
pub const MAX_KEPT_BYTES: u64 = 64 << 20;

/// The smallest staging buffer made.
pub const MIN_BYTES: u64 = 64 << 10;

/// The free staging buffers of one device.
#[derive(Debug, Default)]
pub(crate) struct StagingPool {
    free: Mutex<Vec<wgpu::Buffer>>,
}

impl StagingPool {
    /// A free buffer of at least `len` bytes (the smallest that fits), or a new one
    /// (`MAP_READ | COPY_DST`, [`size_for`] bytes) from `device`.
    pub fn take(&self, device: &wgpu::Device, len: u64) -> wgpu::Buffer {
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        let sizes: Vec<u64> = free.iter().map(wgpu::Buffer::size).collect();
        if let Some(i) = pick(&sizes, len) {
            return free.swap_remove(i);
        }
        drop(free);
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("ewise download"),
            size: size_for(len),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// Takes `buffer` back, unmapped, for later reads: kept if it is small enough,
    /// in place of the smallest kept one when [`KEPT`] are already kept.
    pub fn give_back(&self, buffer: wgpu::Buffer) {
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        let sizes: Vec<u64> = free.iter().map(wgpu::Buffer::size).collect();
        match keep(&sizes, buffer.size()) {
            Keep::Add => free.push(buffer),
            Keep::Replace(i) => free[i] = buffer,
            Keep::Drop => {}
        }
    }

    /// The kept buffers, taken out (for a forked child, which must not release them).
    pub fn take_all(&mut self) -> Vec<wgpu::Buffer> {
        std::mem::take(self.free.get_mut().unwrap_or_else(PoisonError::into_inner))
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
