//! A range of a numpy array's elements in C order (row-major flat indices, whatever the
//! array's strides), copied into a packed buffer ([`gather`]) or back from one
//! ([`scatter`]), each element optionally byte-swapped on the way.

use std::ptr;

use crate::layout::{Dims, View};

/// The addresses a [`gather`] or [`scatter`] touched: from `low` to one past `high`'s
/// last byte (`low == high` when nothing was touched).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Touched {
    pub low: usize,
    pub high: usize,
}

/// Copies elements `[start, start + n)` of `view`, in C order, into `into`, which holds
/// exactly `n` packed elements; each element's bytes are reversed when `swap`.
///
/// # Safety
/// `view` must describe readable memory (a live array's), `start + n` at most its element
/// count, and `into` must not overlap it.
pub(crate) unsafe fn gather(view: &View, start: usize, into: &mut [u8], swap: bool) -> Touched {
    let item = view.item;
    let n = into.len() / item;
    let dst = into.as_mut_ptr();
    let mut done = 0usize;
    runs(view, start, n, |address, step, len| {
        // SAFETY: the run lies in `view`'s memory (by the caller), the destination in
        // `into` (`done + len <= n`); the two do not overlap (by the caller).
        unsafe {
            copy_run(
                address as *const u8,
                step,
                dst.add(done * item),
                item as isize,
                len,
                item,
                swap,
            )
        };
        done += len;
    })
}

/// Copies the `n` packed elements of `from` into elements `[start, start + n)` of `view`,
/// in C order (where elements share memory, each shared place ends with the last one
/// written); each element's bytes are reversed when `swap`.
///
/// # Safety
/// `view` must describe writable memory (a live array's) that nothing references,
/// `start + n` at most its element count, and `from` must not overlap it.
pub(crate) unsafe fn scatter(view: &View, start: usize, from: &[u8], swap: bool) -> Touched {
    let item = view.item;
    let n = from.len() / item;
    let src = from.as_ptr();
    let mut done = 0usize;
    runs(view, start, n, |address, step, len| {
        // SAFETY: as in `gather`, with the roles exchanged.
        unsafe {
            copy_run(
                src.add(done * item),
                item as isize,
                address as *mut u8,
                step,
                len,
                item,
                swap,
            )
        };
        done += len;
    })
}

/// `view`'s axes for a C-order walk: axes of size 1 dropped, and an axis merged into the
/// next outer one where the outer steps exactly over it (so a C-contiguous array, of any
/// byte order, is one axis).
fn walk_axes(view: &View) -> (Dims<usize>, Dims<isize>) {
    let (mut shape, mut strides): (Dims<usize>, Dims<isize>) = (Dims::new(), Dims::new());
    for (&size, &stride) in view.shape.iter().zip(&view.strides) {
        if size == 1 {
            continue;
        }
        match (shape.last_mut(), strides.last_mut()) {
            (Some(outer_size), Some(outer_stride)) if *outer_stride == size as isize * stride => {
                *outer_size *= size;
                *outer_stride = stride;
            }
            _ => {
                shape.push(size);
                strides.push(stride);
            }
        }
    }
    (shape, strides)
}

/// Calls `f(address, step, len)` for runs of consecutive elements along the innermost
/// axis that together are elements `[start, start + n)` of `view` in C order, in that
/// order; returns the addresses they cover. Nothing is dereferenced: `view.data` may
/// be any base the addresses are computed from.
pub(crate) fn runs(
    view: &View,
    start: usize,
    n: usize,
    mut f: impl FnMut(usize, isize, usize),
) -> Touched {
    let mut touched = Touched {
        low: usize::MAX,
        high: 0,
    };
    let mut cover = |address: usize, step: isize, len: usize| {
        let last = address.wrapping_add_signed((len as isize - 1) * step);
        touched.low = touched.low.min(address.min(last));
        touched.high = touched.high.max(address.max(last) + view.item);
    };
    if n == 0 {
        return Touched { low: 0, high: 0 };
    }
    let (shape, strides) = walk_axes(view);
    let Some(inner) = shape.len().checked_sub(1) else {
        cover(view.data, 0, 1);
        f(view.data, 0, 1);
        return touched;
    };
    let mut index: Dims<usize> = smallvec::smallvec![0; shape.len()];
    let mut rest = start;
    for k in (0..shape.len()).rev() {
        index[k] = rest % shape[k];
        rest /= shape[k];
    }
    let mut offset: isize = index
        .iter()
        .zip(&strides)
        .map(|(&i, &stride)| i as isize * stride)
        .sum();
    let mut left = n;
    loop {
        let len = (shape[inner] - index[inner]).min(left);
        let address = view.data.wrapping_add_signed(offset);
        cover(address, strides[inner], len);
        f(address, strides[inner], len);
        left -= len;
        if left == 0 {
            return touched;
        }
        index[inner] += len;
        offset += len as isize * strides[inner];
        let mut k = inner;
        while k > 0 && index[k] == shape[k] {
            offset -= shape[k] as isize * strides[k];
            index[k] = 0;
            k -= 1;
            index[k] += 1;
            offset += strides[k];
        }
    }
}

/// An element type moved whole, with its bytes reversed on demand.
trait Element: Copy {
    fn swapped(self) -> Self;
}

macro_rules! element {
    ($($t:ty),*) => {$(
        impl Element for $t {
            fn swapped(self) -> Self {
                self.swap_bytes()
            }
        }
    )*};
}
element!(u8, u16, u32, u64);

/// Copies `len` elements of `item` bytes from `src` to `dst`, stepping `src_step` and
/// `dst_step` bytes, reversing each element's bytes when `swap`.
///
/// # Safety
/// Every element read must be readable, every element written writable, and no element
/// written may overlap one read.
unsafe fn copy_run(
    src: *const u8,
    src_step: isize,
    dst: *mut u8,
    dst_step: isize,
    len: usize,
    item: usize,
    swap: bool,
) {
    let packed = item as isize;
    // SAFETY: by the caller, for each case.
    unsafe {
        if !swap && src_step == packed && dst_step == packed {
            return ptr::copy_nonoverlapping(src, dst, len * item);
        }
        match item {
            1 => run::<u8>(src, src_step, dst, dst_step, len, swap),
            2 => run::<u16>(src, src_step, dst, dst_step, len, swap),
            4 => run::<u32>(src, src_step, dst, dst_step, len, swap),
            8 => run::<u64>(src, src_step, dst, dst_step, len, swap),
            _ => {
                for i in 0..len as isize {
                    let (from, to) = (src.offset(i * src_step), dst.offset(i * dst_step));
                    ptr::copy_nonoverlapping(from, to, item);
                    if swap {
                        std::slice::from_raw_parts_mut(to, item).reverse();
                    }
                }
            }
        }
    }
}

/// [`copy_run`] for elements of `T`'s size, at any alignment.
///
/// # Safety
/// As for [`copy_run`].
unsafe fn run<T: Element>(
    src: *const u8,
    src_step: isize,
    dst: *mut u8,
    dst_step: isize,
    len: usize,
    swap: bool,
) {
    for i in 0..len as isize {
        // SAFETY: by the caller.
        unsafe {
            let value = ptr::read_unaligned(src.offset(i * src_step) as *const T);
            let value = if swap { value.swapped() } else { value };
            ptr::write_unaligned(dst.offset(i * dst_step) as *mut T, value);
        }
    }
}
