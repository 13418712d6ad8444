//! The order in which a streamed source's element positions are visited: every node is
//! element-wise, so any order gives the same elements, and the order is chosen for the
//! arrays' memory. The views of the input and of the outputs are re-described alike
//! ([`plan`]) so that a C-order walk of the new description follows the input's memory
//! order; where an output's memory runs across it (a Fortran-order output of a C-order
//! input), the positions are visited in tiles ([`Walk`]) that keep the pages a chunk
//! touches in both arrays few.

use crate::layout::{may_share_elements, Dims, View};

/// A source's positions, in tiles visited in C order of the tile grid, each walked in
/// C order of its views (from [`plan`]).
#[derive(Debug, Clone)]
pub(crate) struct Walk {
    shape: Dims<usize>,
    tile: Dims<usize>,
}

impl Walk {
    /// How many tiles there are: 1 for a walk without tiles.
    pub fn tiles(&self) -> usize {
        self.shape
            .iter()
            .zip(&self.tile)
            .map(|(&size, &tile)| size.div_ceil(tile.max(1)))
            .product()
    }

    /// Tile `t`: its first position and its sizes (smaller at the far edges).
    pub fn tile(&self, t: usize) -> (Dims<usize>, Dims<usize>) {
        let mut origin: Dims<usize> = smallvec::smallvec![0; self.shape.len()];
        let mut sizes = self.shape.clone();
        let mut rest = t;
        for k in (0..self.shape.len()).rev() {
            let (size, tile) = (self.shape[k], self.tile[k].max(1));
            let count = size.div_ceil(tile);
            origin[k] = rest % count * tile;
            sizes[k] = tile.min(size - origin[k]);
            rest /= count;
        }
        (origin, sizes)
    }
}

/// The part of `view` from position `origin`, of `sizes`.
pub(crate) fn sub(view: &View, origin: &[usize], sizes: &[usize]) -> View {
    let offset: isize = origin
        .iter()
        .zip(&view.strides)
        .map(|(&i, &stride)| i as isize * stride)
        .sum();
    View {
        data: view.data.wrapping_add_signed(offset),
        shape: Dims::from_slice(sizes),
        strides: view.strides.clone(),
        item: view.item,
    }
}

/// Re-describes `views` (one shape: the input's first, then the outputs') for the walk
/// and plans it, in tiles of about `chunk` elements where the views disagree on their
/// innermost axis. The order is the input's memory order ([`reorder`]), or the first
/// output's where the input repeats elements (a zero stride); it stays C order, without
/// tiles, where an output's elements may share memory, so that each shared place ends
/// with its last element in C order, as numpy writes it.
pub(crate) fn plan(views: &mut [&mut View], chunk: usize) -> Walk {
    let shared = views.iter().skip(1).any(|v| may_share_elements(v));
    if shared {
        let shape = views[0].shape.clone();
        return Walk {
            tile: shape.clone(),
            shape,
        };
    }
    if let Some(reference) = views.iter().find(|v| !repeats(v)).map(|v| (**v).clone()) {
        reorder(&reference, views);
    }
    let shape = views[0].shape.clone();
    let mut fast: Dims<usize> = views.iter().filter_map(|v| fastest(v)).collect();
    fast.sort_unstable_by_key(|&k| (shape[k], k));
    fast.dedup();
    let mut tile = shape.clone();
    if fast.iter().any(|&k| k + 1 != shape.len()) {
        tile.iter_mut().for_each(|t| *t = 1);
        let mut room = chunk.max(1);
        for (i, &k) in fast.iter().enumerate() {
            let side = root(room, fast.len() - i).clamp(1, shape[k]);
            tile[k] = side;
            room = (room / side).max(1);
        }
    }
    Walk { shape, tile }
}

/// Whether `view` repeats elements along some axis (a zero stride).
fn repeats(view: &View) -> bool {
    view.shape
        .iter()
        .zip(&view.strides)
        .any(|(&size, &stride)| size > 1 && stride == 0)
}

/// The axis along which `view` steps least (the last of equals), among those of more
/// than one element and a non-zero step.
fn fastest(view: &View) -> Option<usize> {
    (0..view.shape.len())
        .filter(|&k| view.shape[k] > 1 && view.strides[k] != 0)
        .min_by_key(|&k| (view.strides[k].unsigned_abs(), std::cmp::Reverse(k)))
}

/// The largest integer whose `n`-th power is at most `x`.
fn root(x: usize, n: usize) -> usize {
    let mut r = (x as f64).powf(1.0 / n as f64).round() as usize;
    while r > 1 && r.checked_pow(n as u32).is_none_or(|p| p > x) {
        r -= 1;
    }
    while (r + 1).checked_pow(n as u32).is_some_and(|p| p <= x) {
        r += 1;
    }
    r.max(1)
}

/// Whether `view`'s elements are packed in C order from `view.data` up (axes of size 1
/// aside), so that elements `[start, start + n)` are `n` consecutive elements.
pub(crate) fn packed(view: &View) -> bool {
    let mut expected = view.item as isize;
    for (&size, &stride) in view.shape.iter().zip(&view.strides).rev() {
        if size == 1 {
            continue;
        }
        if stride != expected {
            return false;
        }
        expected *= size as isize;
    }
    true
}

/// Re-describes `views` (of one shape) so that their C order is `reference`'s memory
/// order: axes of size 1 dropped, every view walked backwards along the axes `reference`
/// steps backwards along, and the axes ordered by `reference`'s step, widest first (ties
/// in C order). Element `i` of every view is still one element position (the same in
/// each), so an element-wise computation between them is unchanged; a `reference` in
/// memory order (C- or Fortran-contiguous, reversed or not) becomes [`packed`].
fn reorder(reference: &View, views: &mut [&mut View]) {
    let mut axes: Dims<usize> = (0..reference.shape.len())
        .filter(|&k| reference.shape[k] > 1)
        .collect();
    axes.sort_by_key(|&k| std::cmp::Reverse(reference.strides[k].unsigned_abs()));
    for view in views.iter_mut() {
        for &k in &axes {
            if reference.strides[k] < 0 {
                let stride = view.strides[k];
                view.data = view
                    .data
                    .wrapping_add_signed((view.shape[k] - 1) as isize * stride);
                view.strides[k] = -stride;
            }
        }
        let (shape, strides) = axes
            .iter()
            .map(|&k| (view.shape[k], view.strides[k]))
            .unzip();
        (view.shape, view.strides) = (shape, strides);
    }
}
