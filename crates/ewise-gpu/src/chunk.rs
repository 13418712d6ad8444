//! Splitting a walk into chunks that each fit one binding window and one dispatch grid.
//!
//! A chunk is a block of the simplified walk: a range of indices along each dimension.
//! A [`Plan`] cuts every dimension into blocks of one length (the last block of a
//! dimension may be shorter) and stores only the walk and a block length per dimension;
//! chunk `k` is found arithmetically from `k`. Making a plan and finding one chunk take
//! time and memory in the walk's dimension count only, whatever its element and chunk
//! counts.
//!
//! Two cuts are considered and the one with fewer chunks is taken:
//! - nested: indices of the outer dimensions one at a time, down to the first dimension
//!   whose single index (with every dimension inside it whole) fits; that dimension in
//!   runs of as many indices as fit. Every chunk is then a run of whole inner blocks, so
//!   a packed output stays packed in each chunk.
//! - tiled: blocks along every dimension, the dimension that spans the most bytes in
//!   either tensor halved until the block fits, then each dimension, innermost first,
//!   grown back as far as the block still fits. Transposed and far-strided layouts need
//!   far fewer tiles than nested chunks.

use ewise_core::layout::Dim;

/// A block of the walk that one dispatch runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Chunk {
    /// The block's dimensions, outermost first, as many as the walk's (size 1 where the
    /// block holds one index of a dimension).
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
    /// The block `dims` whose first elements are at `in_first` and `out_first`.
    fn of(dims: Vec<Dim>, in_first: u64, out_first: u64) -> Chunk {
        Chunk {
            count: dims.iter().map(|d| d.size).product(),
            in_span: span(&dims, |d| d.in_stride),
            out_span: span(&dims, |d| d.out_stride),
            dims,
            in_first,
            out_first,
        }
    }

    /// The same block with only columns `from..from + len` of its innermost dimension,
    /// whose strides must be 1 in both tensors (`len` at least 1).
    pub(crate) fn columns(&self, from: u64, len: u64) -> Chunk {
        let mut dims = self.dims.clone();
        if let Some(inner) = dims.last_mut() {
            debug_assert!(
                inner.in_stride == 1 && inner.out_stride == 1 && from + len <= inner.size
            );
            inner.size = len;
        }
        Chunk::of(dims, self.in_first + from, self.out_first + from)
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
    /// Whether a block of `block[d]` indices along each dimension of `dims` fits. Sums
    /// saturate, so blocks of any size are judged without overflow.
    fn fits(&self, dims: &[Dim], block: &[u64]) -> bool {
        let mut count = 1u64;
        let (mut in_span, mut out_span) = (1u64, 1u64);
        for (d, &b) in dims.iter().zip(block) {
            count = count.saturating_mul(b);
            in_span = in_span.saturating_add((b - 1).saturating_mul(d.in_stride));
            out_span = out_span.saturating_add((b - 1).saturating_mul(d.out_stride));
        }
        count <= self.elements
            && in_span.saturating_mul(self.sizes.0) <= self.bytes
            && out_span.saturating_mul(self.sizes.1) <= self.bytes
    }

    /// Bytes that one more index along `d` adds to the wider of the two tensors' spans.
    fn weight(&self, d: &Dim) -> u64 {
        d.in_stride
            .saturating_mul(self.sizes.0)
            .max(d.out_stride.saturating_mul(self.sizes.1))
    }
}

/// How a walk is split: the walk and the block length along each of its dimensions.
/// Chunks are numbered in walking order of their blocks (the innermost dimension's
/// blocks fastest).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    dims: Vec<Dim>,
    /// Indices of each dimension per block, from 1 to its size.
    block: Vec<u64>,
    /// Chunks: the product of each dimension's block count (0 for an empty walk).
    len: u64,
}

impl Plan {
    /// The plan of the walk `dims` (outermost first, as [`ewise_core::layout::simplify`]
    /// gives) within `limits`: the nested cut where it gives no more chunks than tiling,
    /// the tiled cut otherwise. `limits` must admit one element. Takes time and memory
    /// in the number of dimensions only.
    pub(crate) fn new(dims: &[Dim], limits: Limits) -> Plan {
        if dims.iter().any(|d| d.size == 0) {
            return Plan {
                dims: dims.to_vec(),
                block: vec![1; dims.len()],
                len: 0,
            };
        }
        let nested = Plan::with_blocks(dims, nested_blocks(dims, limits));
        if nested.len <= 1 {
            return nested;
        }
        let tiled = Plan::with_blocks(dims, tiled_blocks(dims, limits));
        if tiled.len < nested.len {
            tiled
        } else {
            nested
        }
    }

    fn with_blocks(dims: &[Dim], block: Vec<u64>) -> Plan {
        let len = dims
            .iter()
            .zip(&block)
            .fold(1u64, |n, (d, &b)| n.saturating_mul(d.size.div_ceil(b)));
        Plan {
            dims: dims.to_vec(),
            block,
            len,
        }
    }

    /// Whether every chunk is a run of whole blocks of the dimensions inside one
    /// dimension (the nested cut): every dimension inside the innermost cut one is
    /// whole and every dimension outside it holds one index per chunk, so a packed
    /// output is packed in every chunk too.
    pub(crate) fn is_nested(&self) -> bool {
        let cut = self
            .dims
            .iter()
            .zip(&self.block)
            .rposition(|(d, &b)| b < d.size);
        cut.is_none_or(|c| self.block[..c].iter().all(|&b| b == 1))
    }

    /// Chunks in the plan (0 for an empty walk; saturating at `u64::MAX`).
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// Chunk `k` (below [`Plan::len`]).
    pub(crate) fn chunk(&self, mut k: u64) -> Chunk {
        let mut dims = self.dims.clone();
        let (mut in_first, mut out_first) = (0u64, 0u64);
        for (d, &b) in dims.iter_mut().zip(&self.block).rev() {
            let blocks = d.size.div_ceil(b);
            let first = (k % blocks) * b;
            k /= blocks;
            in_first += first * d.in_stride;
            out_first += first * d.out_stride;
            d.size = b.min(d.size - first);
        }
        Chunk::of(dims, in_first, out_first)
    }

    /// Every chunk, in order, each made when it is reached.
    pub(crate) fn chunks(&self) -> impl Iterator<Item = Chunk> + '_ {
        (0..self.len).map(|k| self.chunk(k))
    }
}

/// The nested cut's blocks: 1 for the dimensions before the first whose single index
/// fits with every dimension inside it whole, as many indices of that one as fit, the
/// rest whole.
fn nested_blocks(dims: &[Dim], limits: Limits) -> Vec<u64> {
    let mut block: Vec<u64> = dims.iter().map(|d| d.size).collect();
    for p in 0..dims.len() {
        block[p] = 1;
        if limits.fits(dims, &block) {
            block[p] = grow(dims, &block, p, limits);
            return block;
        }
    }
    block
}

/// The tiled cut's blocks: the dimension with the heaviest block halved until the block
/// fits (by bytes spanned while the spans exceed the limit, by indices while only the
/// element count does), then each dimension, innermost first, grown as far as it fits.
fn tiled_blocks(dims: &[Dim], limits: Limits) -> Vec<u64> {
    let mut block: Vec<u64> = dims.iter().map(|d| d.size).collect();
    let elements_only = |block: &[u64]| {
        let bytes_only = Limits {
            elements: u64::MAX,
            ..limits
        };
        bytes_only.fits(dims, block)
    };
    while !limits.fits(dims, &block) {
        let by_bytes = !elements_only(&block);
        let heaviest = (0..dims.len()).filter(|&d| block[d] > 1).max_by_key(|&d| {
            if by_bytes {
                (block[d] - 1).saturating_mul(limits.weight(&dims[d]))
            } else {
                block[d]
            }
        });
        match heaviest {
            Some(d) => block[d] = block[d].div_ceil(2),
            None => break,
        }
    }
    for d in (0..dims.len()).rev() {
        block[d] = grow(dims, &block, d, limits);
    }
    block
}

/// The most indices along dimension `d`, from `block[d]` to its size, with which
/// `block` fits (`block` itself must fit).
fn grow(dims: &[Dim], block: &[u64], d: usize, limits: Limits) -> u64 {
    let mut trial = block.to_vec();
    let (mut low, mut high) = (block[d], dims[d].size);
    while low < high {
        let mid = low + (high - low).div_ceil(2);
        trial[d] = mid;
        if limits.fits(dims, &trial) {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    low
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

    fn covers(dims: &[Dim], l: Limits, plan: &Plan) {
        let mut got: Vec<(u64, u64)> = plan
            .chunks()
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

    #[test]
    fn chunks_cover_the_walk_within_limits() {
        let cases: [(&[Dim], Limits); 7] = [
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
            (
                &[Dim::new(40, 1, 40), Dim::new(40, 40, 1)],
                limits(256, 1 << 20, (1, 1)),
            ),
            (
                &[Dim::new(5, 0, 60), Dim::new(6, 1000, 10), Dim::new(9, 1, 1)],
                limits(100, 30, (2, 1)),
            ),
        ];
        for (dims, l) in cases {
            let plan = Plan::new(dims, l);
            covers(dims, l, &plan);
            let nested = Plan::with_blocks(dims, nested_blocks(dims, l));
            assert!(nested.is_nested(), "{nested:?}");
            covers(dims, l, &nested);
            covers(dims, l, &Plan::with_blocks(dims, tiled_blocks(dims, l)));
            assert!(plan.len() <= nested.len());
        }
    }

    #[test]
    fn transposes_are_tiled_and_far_strides_cost_no_memory() {
        // 4096 x 4096 bytes, transposed, in windows of 64 KiB: whole rows of the output
        // read 4096 windows of the input each, tiles of 16 x 16 read 16.
        let dims = [Dim::new(4096, 1, 4096), Dim::new(4096, 4096, 1)];
        let l = limits(1 << 16, 1 << 31, (1, 1));
        let plan = Plan::new(&dims, l);
        let nested = Plan::with_blocks(&dims, nested_blocks(&dims, l));
        assert!(!plan.is_nested());
        assert!(plan.len() <= 256 * 256 * 2, "{}", plan.len());
        assert!(nested.len() >= 4096 * 256, "{}", nested.len());
        // 65535 x 65535 float32 elements 2^26 apart along the output's rows: one
        // element per nested chunk, columns of 513 output rows per tile; planned and
        // looked up without walking them.
        let far = [Dim::new(65535, 1, 65535), Dim::new(65535, 1 << 26, 1)];
        let l = limits(128 << 20, 1 << 31, (4, 4));
        let plan = Plan::new(&far, l);
        assert_eq!(plan.len(), 128 * 65535);
        let nested = Plan::with_blocks(&far, nested_blocks(&far, l));
        assert_eq!(nested.len(), 65535 * 65535);
        let last = plan.chunk(plan.len() - 1);
        assert_eq!(last.in_first + last.in_span - 1, 65534 + (65534 << 26));
        assert_eq!(last.out_first + last.out_span, 65535 * 65535);
    }

    #[test]
    fn columns_keep_the_rows_and_narrow_the_innermost_dimension() {
        let chunk = Plan::new(
            &[Dim::new(3, 0, 24), Dim::new(5, 8, 20), Dim::new(10, 1, 1)],
            limits(1 << 20, 1 << 20, (4, 4)),
        )
        .chunk(0);
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
        assert_eq!(Plan::new(&dims, limits(1 << 20, 1 << 20, (4, 4))).len(), 1);
        assert_eq!(
            Plan::new(&[Dim::new(0, 1, 1)], limits(64, 64, (4, 4))).len(),
            0
        );
    }
}
