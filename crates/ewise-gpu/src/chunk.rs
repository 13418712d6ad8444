//! Splitting a walk into chunks that each fit one binding window and one dispatch grid.
//!
//! A chunk is a block of the simplified walk: a range of indices along one dimension
//! with every index of the dimensions inside it. Chunks are found outermost first: when
//! the whole walk spans more bytes than a binding may (in either tensor) or has more
//! elements than one grid may, it is cut into runs of rows of its outermost dimension;
//! when even one row is too large, each row is split in turn.

use ewise_core::layout::Dim;

/// A block of the walk that one dispatch runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Chunk {
    /// The block's dimensions, outermost first, padded in front with size-1 dimensions
    /// to the walk's dimension count.
    pub dims: Vec<Dim>,
    /// The element offset of the block's first element from the input tensor's base.
    pub in_first: u64,
    /// The same in the output tensor.
    pub out_first: u64,
    /// Elements in the block.
    pub count: u64,
    /// Input elements from the first to one past the last the block reads.
    pub in_span: u64,
    /// Output elements from the first to one past the last the block writes.
    pub out_span: u64,
}

impl Chunk {
    /// The same block with only columns `from..from + len` of its innermost dimension,
    /// whose strides must be 1 in both tensors (`len` at least 1).
    pub(crate) fn columns(&self, from: u64, len: u64) -> Chunk {
        let mut dims = self.dims.clone();
        let inner = dims.last_mut().expect("a chunk has a dimension");
        debug_assert!(inner.in_stride == 1 && inner.out_stride == 1 && from + len <= inner.size);
        inner.size = len;
        Chunk {
            count: dims.iter().map(|d| d.size).product(),
            in_span: span(&dims, |d| d.in_stride),
            out_span: span(&dims, |d| d.out_stride),
            dims,
            in_first: self.in_first + from,
            out_first: self.out_first + from,
        }
    }
}

/// Elements from the first to one past the last, along `stride` of each dimension.
fn span(dims: &[Dim], stride: impl Fn(&Dim) -> u64) -> u64 {
    dims.iter().map(|d| (d.size - 1) * stride(d)).sum::<u64>() + 1
}

/// Limits one chunk must respect.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Bytes each tensor's part of a chunk may span.
    pub bytes: u64,
    /// Elements one chunk may hold.
    pub elements: u64,
    /// Input and output element sizes.
    pub sizes: (u64, u64),
}

impl Limits {
    fn fits(&self, dims: &[Dim]) -> bool {
        let count: u64 = dims.iter().map(|d| d.size).product();
        count <= self.elements
            && span(dims, |d| d.in_stride) * self.sizes.0 <= self.bytes
            && span(dims, |d| d.out_stride) * self.sizes.1 <= self.bytes
    }
}

/// Splits the walk `dims` (outermost first, as [`ewise_core::layout::simplify`] gives)
/// into chunks within `limits`, in walking order. Empty for an empty walk. `limits`
/// must admit one element.
pub(crate) fn split(dims: &[Dim], limits: Limits) -> Vec<Chunk> {
    let mut chunks = Vec::new();
    if dims.iter().all(|d| d.size > 0) {
        split_into(dims, (0, 0), dims.len(), limits, &mut chunks);
    }
    chunks
}

fn split_into(
    dims: &[Dim],
    (in_first, out_first): (u64, u64),
    padded: usize,
    limits: Limits,
    chunks: &mut Vec<Chunk>,
) {
    let mut push = |block: Vec<Dim>, in_first: u64, out_first: u64| {
        let mut padded_dims = vec![Dim::new(1, 0, 0); padded - block.len()];
        padded_dims.extend_from_slice(&block);
        chunks.push(Chunk {
            count: block.iter().map(|d| d.size).product(),
            in_span: span(&block, |d| d.in_stride),
            out_span: span(&block, |d| d.out_stride),
            dims: padded_dims,
            in_first,
            out_first,
        });
    };
    if limits.fits(dims) {
        push(dims.to_vec(), in_first, out_first);
        return;
    }
    let (outer, rest) = (dims[0], &dims[1..]);
    let row = |rows: u64| {
        let mut block = Vec::with_capacity(dims.len());
        block.push(Dim {
            size: rows,
            ..outer
        });
        block.extend_from_slice(rest);
        block
    };
    if !limits.fits(&row(1)) {
        for k in 0..outer.size {
            let at = (
                in_first + k * outer.in_stride,
                out_first + k * outer.out_stride,
            );
            split_into(rest, at, padded, limits, chunks);
        }
        return;
    }
    let (mut low, mut high) = (1u64, outer.size);
    while low < high {
        let mid = low + (high - low).div_ceil(2);
        if limits.fits(&row(mid)) {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    let mut k = 0;
    while k < outer.size {
        let rows = low.min(outer.size - k);
        push(
            row(rows),
            in_first + k * outer.in_stride,
            out_first + k * outer.out_stride,
        );
        k += rows;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(bytes: u64, elements: u64, sizes: (u64, u64)) -> Limits {
        Limits {
            bytes,
            elements,
            sizes,
        }
    }

    /// Every element of the walk lands in exactly one chunk, at the same offsets.
    fn offsets(dims: &[Dim], base: (u64, u64)) -> Vec<(u64, u64)> {
        let mut v = vec![base];
        for d in dims {
            v = v
                .iter()
                .flat_map(|&(a, b)| {
                    (0..d.size).map(move |k| (a + k * d.in_stride, b + k * d.out_stride))
                })
                .collect();
        }
        v
    }

    #[test]
    fn chunks_cover_the_walk_within_limits() {
        let cases: [(&[Dim], Limits); 5] = [
            (&[Dim::new(1000, 1, 1)], limits(256, 1 << 20, (4, 1))),
            (
                &[Dim::new(7, 40, 1), Dim::new(30, 1, 7)],
                limits(100, 1 << 20, (2, 2)),
            ),
            (
                &[Dim::new(3, 1000, 10), Dim::new(4, 0, 1)],
                limits(64, 5, (8, 8)),
            ),
            (&[Dim::new(50, 1, 1)], limits(1 << 20, 16, (1, 1))),
            (
                &[Dim::new(2, 1 << 20, 3), Dim::new(3, 1, 1)],
                limits(32, 1 << 20, (1, 1)),
            ),
        ];
        for (dims, l) in cases {
            let chunks = split(dims, l);
            let mut got: Vec<(u64, u64)> = chunks
                .iter()
                .flat_map(|c| {
                    assert!(c.count <= l.elements, "{c:?}");
                    assert!(c.in_span * l.sizes.0 <= l.bytes, "{c:?}");
                    assert!(c.out_span * l.sizes.1 <= l.bytes, "{c:?}");
                    assert_eq!(c.dims.len(), dims.len());
                    offsets(&c.dims, (c.in_first, c.out_first))
                })
                .collect();
            let mut want = offsets(dims, (0, 0));
            got.sort_unstable();
            want.sort_unstable();
            assert_eq!(got, want, "{dims:?}");
        }
    }

    #[test]
    fn columns_keep_the_rows_and_narrow_the_innermost_dimension() {
        let chunk = split(
            &[Dim::new(3, 0, 24), Dim::new(5, 8, 20), Dim::new(10, 1, 1)],
            limits(1 << 20, 1 << 20, (4, 4)),
        )
        .remove(0);
        let cols = chunk.columns(7, 3);
        assert_eq!(cols.dims[2], Dim::new(3, 1, 1));
        assert_eq!((cols.in_first, cols.out_first, cols.count), (7, 7, 45));
        assert_eq!(
            (cols.in_span, cols.out_span),
            (4 * 8 + 3, 2 * 24 + 4 * 20 + 3)
        );
        let mut want: Vec<(u64, u64)> = offsets(&chunk.dims[..2], (0, 0))
            .into_iter()
            .flat_map(|(a, b)| (7..10).map(move |c| (a + c, b + c)))
            .collect();
        let mut got = offsets(&cols.dims, (cols.in_first, cols.out_first));
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want);
    }

    #[test]
    fn small_walks_are_one_chunk_and_empty_ones_none() {
        let dims = [Dim::new(6, 1, 1)];
        assert_eq!(split(&dims, limits(1 << 20, 1 << 20, (4, 4))).len(), 1);
        assert!(split(&[Dim::new(0, 1, 1)], limits(64, 64, (4, 4))).is_empty());
    }
}
