//! Strided-layout walking: the one place that knows about strides.
//!
//! A [`Plan`] is made once per compiled operator. It drops dimensions of size 1, orders
//! the rest so the output's smallest stride is innermost, and merges neighbours that are
//! contiguous in both tensors; a packed tensor becomes a single run. Executing the plan
//! hands the kernel plain byte slices: contiguous runs directly, other runs (broadcast or
//! transposed inputs, padded outputs) gathered into and scattered from aligned chunks.

#[cfg(test)]
use ewise_core::layout::simplify;
pub(crate) use ewise_core::layout::Dim;
use ewise_core::support::MAX_EXTENDED_DIMENSIONS;

use crate::kernels::stream::{self, prefetch_l2};
use crate::kernels::Kernel;

/// Elements per gather/scatter chunk.
const CHUNK: usize = 512;

/// Where a run's input comes from.
pub(crate) enum Source<'a> {
    /// A separate input range.
    Separate(&'a [u8]),
    /// The output range itself, with the same layout (in-place execution).
    InPlace,
}

/// One piece of a split plan: its own walk, where its input starts, and the output
/// bytes it alone writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Part {
    pub plan: Plan,
    pub in_start: usize,
    pub out_start: usize,
    pub out_len: usize,
}

/// The walk over a pair of same-shaped layouts, outermost dimension first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    dims: Vec<Dim>,
    elements: u64,
}

impl Plan {
    /// The plan of a simplified walk over tensors of these sizes, for a validated
    /// description: its element count and byte span fit in memory.
    pub fn new(sizes: &[u32], walk: Vec<Dim>) -> Plan {
        Plan {
            dims: walk,
            elements: if sizes.contains(&0) {
                0
            } else {
                sizes.iter().map(|&s| u64::from(s)).product()
            },
        }
    }

    /// Splits the walk into at most `parts` pieces along the outermost dimension whose
    /// output bytes are disjoint and increasing, for threads; each piece moves at least
    /// `min_piece` bytes (its elements times `in_size + out_size`), so there are fewer
    /// pieces when the walk is small. Pieces start on multiples of 64 elements of a
    /// single run. Empty when the walk cannot be split that way (fewer than two pieces,
    /// or output layouts that interleave).
    pub fn split(
        &self,
        parts: usize,
        in_size: usize,
        out_size: usize,
        min_piece: u64,
    ) -> Vec<Part> {
        let Some((&outer, rest)) = self.dims.split_first() else {
            return Vec::new();
        };
        if self.elements == 0 {
            return Vec::new();
        }
        let granule = if rest.is_empty() { 64 } else { 1 };
        let units = outer.size.div_ceil(granule);
        let inner_elements = rest.iter().fold(1u64, |n, d| n.saturating_mul(d.size));
        let unit_bytes = granule
            .saturating_mul(inner_elements)
            .saturating_mul((in_size + out_size) as u64);
        let element_bytes = unit_bytes / granule;
        // Pieces but the last hold at least floor(units / parts) units; the last holds
        // what remains after the others. Byte counts saturate: a description may claim
        // more bytes moved than u64 holds, and such pieces are large enough anyway.
        let large_enough = |parts: u64| {
            let last = outer.size - units * (parts - 1) / parts * granule;
            (units / parts).saturating_mul(unit_bytes) >= min_piece
                && last.saturating_mul(element_bytes) >= min_piece
        };
        let mut parts = (parts as u64)
            .min(units)
            .min(units / min_piece.div_ceil(unit_bytes.max(1)).max(1));
        while parts >= 2 && !large_enough(parts) {
            parts -= 1;
        }
        if parts < 2 {
            return Vec::new();
        }
        let inner_span: u64 = rest.iter().map(|d| (d.size - 1) * d.out_stride).sum();
        let mut pieces = Vec::with_capacity(parts as usize);
        let mut start = 0u64;
        for k in 0..parts {
            let end = (units * (k + 1) / parts * granule).min(outer.size);
            let len = end - start;
            let mut dims = Vec::with_capacity(self.dims.len());
            dims.push(Dim { size: len, ..outer });
            dims.extend_from_slice(rest);
            let out_first = start * outer.out_stride;
            let out_last = out_first + (len - 1) * outer.out_stride + inner_span;
            pieces.push(Part {
                plan: Plan {
                    dims,
                    elements: len * inner_elements,
                },
                in_start: (start * outer.in_stride) as usize * in_size,
                out_start: out_first as usize * out_size,
                out_len: (out_last - out_first + 1) as usize * out_size,
            });
            start = end;
        }
        let disjoint = pieces
            .windows(2)
            .all(|w| w[0].out_start + w[0].out_len <= w[1].out_start);
        if disjoint {
            pieces
        } else {
            Vec::new()
        }
    }

    /// Runs `kernel` over every element. `src` and `dst` start at the tensors' bases and
    /// hold at least their minimum sizes (checked by validation and binding). With
    /// `stream`, contiguous runs are written with streaming stores.
    pub fn run(&self, kernel: &Kernel, src: Source<'_>, dst: &mut [u8], stream: bool) {
        if self.elements == 0 {
            return;
        }
        let n = self.dims.len();
        let inner = self.dims[n - 1];
        if n >= 2
            && inner.in_stride != 1
            && inner.out_stride == 1
            && self.dims[n - 2].in_stride == 1
        {
            if let Source::Separate(input) = src {
                let across = self.dims[n - 2];
                for_each_base(&self.dims[..n - 2], |bases| {
                    run_tiles(kernel, input, dst, (across, inner), bases, stream);
                });
                return;
            }
        }
        for_each_base(&self.dims[..n - 1], |bases| {
            run_row(kernel, &src, dst, inner, bases, stream);
        });
    }
}

/// Calls `f` with the (input, output) element offsets of every index of `dims`.
fn for_each_base(dims: &[Dim], mut f: impl FnMut((u64, u64))) {
    let mut index = [0u64; MAX_EXTENDED_DIMENSIONS as usize];
    let mut in_base = 0u64;
    let mut out_base = 0u64;
    loop {
        f((in_base, out_base));
        let mut d = dims.len();
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            index[d] += 1;
            in_base += dims[d].in_stride;
            out_base += dims[d].out_stride;
            if index[d] < dims[d].size {
                break;
            }
            in_base -= dims[d].in_stride * dims[d].size;
            out_base -= dims[d].out_stride * dims[d].size;
            index[d] = 0;
        }
    }
}

/// Mapped (output) bytes that one tile of a transposed walk holds in its buffer, at
/// most: the buffer stays in L1 or L2. A tile's input, at most [`TILE_RUNS`] runs of
/// [`TILE_RUN_BYTES`], is more for IS_INFINITY (4:1 for float32 inputs); it is
/// prefetched into L2, and larger tiles made IS_INFINITY of float32 and float64 ~12%
/// faster.
const TILE_BYTES: usize = 32768;

/// Output bytes of each output row that one tile writes, at most: two cache lines (one
/// for byte outputs, which [`TILE_RUNS`] limits), so rows are written as whole lines.
const TILE_ROW_BYTES: usize = 128;

/// Input runs (one per output column) in one tile at most: each comes from its own
/// input row, usually its own page, and 128 of them made byte outputs ~10% slower.
const TILE_RUNS: usize = 64;

/// Input bytes of one contiguous run handed to the kernel.
const TILE_RUN_BYTES: usize = 1024;

/// Output rows in one band of a transposed walk: the band's rows are written left to
/// right, tile after tile, before the next band starts, so the rows being written stay
/// few enough for the TLB and the write-combining buffers.
const TILE_BAND_ROWS: usize = 256;

/// Output rows written between two batches of prefetches for the next tile.
const TILE_PIECE_ROWS: usize = 32;

/// A transposed pair of dimensions: `across` is contiguous in the input, `inner` in the
/// output. The walk goes in bands of output rows, and each band in tiles: a tile maps
/// contiguous input runs along `across` into a buffer and writes the buffer's transpose
/// into whole lines of the output rows, a piece of rows at a time.
///
/// A tile whose runs lie apart in the input is mapped by one kernel call per run, and
/// between pieces a share of its input lines is prefetched into L2 while the tile before
/// it is written, so that reading it overlaps that writing. A tile whose runs follow one
/// another (it spans whole input rows, packed) is mapped by one kernel call, and nothing
/// is prefetched for it: its input is one sequential block, which the hardware
/// prefetcher follows (a 64 x 64 float64 transpose from Python took 2.8 us with a kernel
/// call and prefetches per run, 1.9 us without).
///
/// The buffer is the smallest of 2 KiB, 8 KiB and [`TILE_BYTES`] that holds one tile: it
/// is zeroed on every call, and zeroing 32 KiB took about 400 ns, a third of a Python
/// call on an 8 x 8 float64 transpose.
fn run_tiles(
    kernel: &Kernel,
    src: &[u8],
    dst: &mut [u8],
    dims: (Dim, Dim),
    bases: (u64, u64),
    stream: bool,
) {
    let (across, inner) = dims;
    let (os, cols) = (kernel.out_size, inner.size as usize);
    let width = tile_cols(os).min(cols);
    let need = tile_rows(kernel, width, TILE_BYTES).min(across.size as usize) * width * os;
    if need <= 2048 {
        run_tiles_in::<{ 2048 / 8 }>(kernel, src, dst, dims, bases, stream);
    } else if need <= 8192 {
        run_tiles_in::<{ 8192 / 8 }>(kernel, src, dst, dims, bases, stream);
    } else {
        run_tiles_in::<{ TILE_BYTES / 8 }>(kernel, src, dst, dims, bases, stream);
    }
}

/// Columns of one tile: input runs, each [`TILE_ROW_BYTES`] of output rows wide at most.
fn tile_cols(out_size: usize) -> usize {
    (TILE_ROW_BYTES / out_size).min(TILE_RUNS)
}

/// Rows of one tile (elements of each input run) whose `width` columns fit in `buffer`
/// bytes of output.
fn tile_rows(kernel: &Kernel, width: usize, buffer: usize) -> usize {
    (TILE_RUN_BYTES / kernel.in_size).min(buffer / (width.max(1) * kernel.out_size))
}

/// [`run_tiles`] with a buffer of `WORDS` words. Kept out of line so its large stack
/// frame costs nothing to calls that do not tile.
#[inline(never)]
fn run_tiles_in<const WORDS: usize>(
    kernel: &Kernel,
    src: &[u8],
    dst: &mut [u8],
    (across, inner): (Dim, Dim),
    (in_base, out_base): (u64, u64),
    stream: bool,
) {
    let (is, os) = (kernel.in_size, kernel.out_size);
    let tile_cols = tile_cols(os);
    let tile_rows = tile_rows(kernel, tile_cols.min(inner.size as usize), WORDS * 8);
    let band = TILE_BAND_ROWS.max(tile_rows) / tile_rows * tile_rows;
    let mut tmp = [0u64; WORDS];
    let tmp = bytemuck::cast_slice_mut::<u64, u8>(&mut tmp);
    let (rows, cols) = (across.size as usize, inner.size as usize);
    let in_pitch = inner.in_stride as usize * is;
    let out_pitch = across.out_stride as usize * os;
    let (in_base, out_base) = (in_base as usize * is, out_base as usize * os);
    // The first column of tiles is narrower where that puts the others' output on
    // whole cache lines (streaming stores need them).
    let lead = {
        let gap = dst.as_ptr().wrapping_add(out_base).align_offset(64);
        if gap % os == 0 {
            gap / os
        } else {
            0
        }
    };
    let width = |c0: usize| if c0 == 0 && lead > 0 { lead } else { tile_cols };
    // Tiles as (band start, first row, first column), in walking order.
    let next = |(b0, r0, c0): (usize, usize, usize)| {
        if r0 + tile_rows < rows.min(b0 + band) {
            Some((b0, r0 + tile_rows, c0))
        } else if c0 + width(c0) < cols {
            Some((b0, b0, c0 + width(c0)))
        } else if b0 + band < rows {
            Some((b0 + band, b0 + band, 0))
        } else {
            None
        }
    };
    let size =
        |(_, r0, c0): (usize, usize, usize)| (tile_rows.min(rows - r0), width(c0).min(cols - c0));
    let run = |r0: usize, c: usize, len: usize| {
        let at = in_base + r0 * is + c * in_pitch;
        &src[at..at + len * is]
    };
    // Whether a tile of `tr` rows has its runs one after another in the input.
    let packed = |tr: usize| in_pitch == tr * is;
    let mut tile = Some((0, 0, 0));
    while let Some(here) = tile {
        let (_, r0, c0) = here;
        tile = next(here);
        let (tr, tc) = size(here);
        let run_out = tr * os;
        if packed(tr) {
            (kernel.map)(run(r0, c0, tc * tr), &mut tmp[..tc * run_out]);
        } else {
            for c in 0..tc {
                (kernel.map)(
                    run(r0, c0 + c, tr),
                    &mut tmp[c * run_out..(c + 1) * run_out],
                );
            }
        }
        let ahead = tile
            .map(|t| (t, size(t)))
            .filter(|&(_, (ntr, _))| !packed(ntr));
        let run_lines = ahead.map_or(0, |(_, (ntr, _))| (ntr * is).div_ceil(64));
        let lines = ahead.map_or(0, |(_, (_, ntc))| ntc * run_lines);
        let pieces = tr.div_ceil(TILE_PIECE_ROWS);
        let at = out_base + r0 * out_pitch + c0 * os;
        for p in 0..pieces {
            if let Some(((_, nr0, nc0), (ntr, _))) = ahead {
                let (mut k, end) = (lines * p / pieces, lines * (p + 1) / pieces);
                while k < end {
                    let (c, first) = (k / run_lines, k % run_lines);
                    let n = (run_lines - first).min(end - k);
                    let r = run(nr0, nc0 + c, ntr);
                    prefetch_l2(&r[first * 64..((first + n) * 64).min(r.len())]);
                    k += n;
                }
            }
            let (a, b) = (p * TILE_PIECE_ROWS, ((p + 1) * TILE_PIECE_ROWS).min(tr));
            (kernel.transpose)(
                os,
                (&tmp[a * os..tc * run_out], run_out),
                (&mut dst[at + a * out_pitch..], out_pitch),
                (tc, b - a),
                stream,
            );
        }
    }
    if stream {
        stream::fence();
    }
}

fn run_row(
    kernel: &Kernel,
    src: &Source<'_>,
    dst: &mut [u8],
    row: Dim,
    (in_base, out_base): (u64, u64),
    stream: bool,
) {
    let (is, os) = (kernel.in_size, kernel.out_size);
    let len = row.size as usize;
    let in_at = in_base as usize * is;
    let out_at = out_base as usize * os;
    if row.in_stride == 1 && row.out_stride == 1 {
        let out = &mut dst[out_at..out_at + len * os];
        let (map, map_in_place) = if stream {
            (kernel.map_stream, kernel.map_in_place_stream)
        } else {
            (kernel.map, kernel.map_in_place)
        };
        match src {
            Source::Separate(input) => map(&input[in_at..in_at + len * is], out),
            Source::InPlace => match map_in_place {
                Some(f) => f(out),
                None => unreachable!("in-place plans are only made for in-place kernels"),
            },
        }
        return;
    }
    if let (0, 1, Source::Separate(input)) = (row.in_stride, row.out_stride, src) {
        let out = &mut dst[out_at..out_at + len * os];
        fill_broadcast(kernel, &input[in_at..in_at + is], out);
        return;
    }
    run_strided(kernel, src, dst, row, (in_at, out_at));
}

/// A contiguous output row whose input is one element repeated (stride 0): the
/// element is mapped once and its result copied along the row in doubling blocks.
fn fill_broadcast(kernel: &Kernel, element: &[u8], out: &mut [u8]) {
    let os = kernel.out_size;
    let mut one = [0u64; 1];
    let one = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut one)[..os];
    (kernel.map)(element, one);
    out[..os].copy_from_slice(one);
    let mut filled = os;
    while filled < out.len() {
        let n = filled.min(out.len() - filled);
        out.copy_within(..n, filled);
        filled += n;
    }
}

/// A row where either tensor is not contiguous: gathered into aligned chunks, mapped,
/// scattered. Kept out of line for its stack frame, like [`run_tiles`].
#[inline(never)]
fn run_strided(
    kernel: &Kernel,
    src: &Source<'_>,
    dst: &mut [u8],
    row: Dim,
    (in_at, out_at): (usize, usize),
) {
    let (is, os) = (kernel.in_size, kernel.out_size);
    let len = row.size as usize;
    let mut tmp_in = [0u64; CHUNK];
    let mut tmp_out = [0u64; CHUNK];
    let mut start = 0usize;
    while start < len {
        let n = CHUNK.min(len - start);
        let tin = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut tmp_in)[..n * is];
        let first_in = in_at + start * row.in_stride as usize * is;
        let in_step = row.in_stride as usize * is;
        match src {
            Source::Separate(input) => gather(tin, input, first_in, in_step, is),
            Source::InPlace => gather(tin, dst, first_in, in_step, is),
        }
        let tout = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut tmp_out)[..n * os];
        (kernel.map)(tin, tout);
        let first_out = out_at + start * row.out_stride as usize * os;
        scatter(tout, dst, first_out, row.out_stride as usize * os, os);
        start += n;
    }
}

fn gather(tmp: &mut [u8], src: &[u8], first: usize, step: usize, size: usize) {
    match size {
        1 => gather_n::<1>(tmp, src, first, step),
        2 => gather_n::<2>(tmp, src, first, step),
        4 => gather_n::<4>(tmp, src, first, step),
        _ => gather_n::<8>(tmp, src, first, step),
    }
}

fn gather_n<const N: usize>(tmp: &mut [u8], src: &[u8], first: usize, step: usize) {
    for (i, t) in tmp.chunks_exact_mut(N).enumerate() {
        let at = first + i * step;
        t.copy_from_slice(&src[at..at + N]);
    }
}

fn scatter(tmp: &[u8], dst: &mut [u8], first: usize, step: usize, size: usize) {
    match size {
        1 => scatter_n::<1>(tmp, dst, first, step),
        2 => scatter_n::<2>(tmp, dst, first, step),
        4 => scatter_n::<4>(tmp, dst, first, step),
        _ => scatter_n::<8>(tmp, dst, first, step),
    }
}

fn scatter_n<const N: usize>(tmp: &[u8], dst: &mut [u8], first: usize, step: usize) {
    for (i, t) in tmp.chunks_exact(N).enumerate() {
        let at = first + i * step;
        dst[at..at + N].copy_from_slice(t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_are_disjoint_and_cover_everything() {
        let p = Plan::new(&[1000], simplify(&[1000], &[1], &[1]));
        let parts = p.split(3, 4, 1, 0);
        assert_eq!(parts.len(), 3);
        assert_eq!(parts.iter().map(|x| x.plan.elements).sum::<u64>(), 1000);
        assert!(parts[..2].iter().all(|x| x.plan.elements % 64 == 0));
        assert_eq!(parts[1].in_start, parts[0].plan.elements as usize * 4);
        assert_eq!(parts[2].out_start + parts[2].out_len, 1000);
        let p = Plan::new(&[5, 7], simplify(&[5, 7], &[1, 5], &[8, 1]));
        let parts = p.split(2, 2, 2, 0);
        assert_eq!(parts.len(), 2);
        // Rows 0-1 of a padded 5x8 output, then rows 2-4.
        assert_eq!((parts[0].out_start, parts[0].out_len), (0, 2 * (8 + 7)));
        assert_eq!(
            (parts[1].out_start, parts[1].out_len),
            (2 * 8 * 2, 2 * (2 * 8 + 7))
        );
        assert_eq!(parts[1].in_start, 2 * 2);
        assert!(Plan::new(&[10], simplify(&[10], &[1], &[1]))
            .split(4, 1, 1, 0)
            .is_empty());
    }

    #[test]
    fn split_pieces_never_move_less_than_the_minimum() {
        let min = crate::MIN_PIECE_BYTES;
        let one_d = [
            1u32,
            63,
            64,
            65,
            4095,
            8191,
            8192,
            8193,
            16_385,
            100_000,
            1 << 20,
        ];
        let mut plans: Vec<Plan> = one_d
            .iter()
            .map(|&n| Plan::new(&[n], simplify(&[n], &[1], &[1])))
            .collect();
        for (rows, cols) in [
            (2u32, 40_000u32),
            (1000, 33),
            (33, 1000),
            (600, 200),
            (4097, 3),
        ] {
            let walk = simplify(&[rows, cols], &[1, u64::from(rows)], &[u64::from(cols), 1]);
            plans.push(Plan::new(&[rows, cols], walk));
        }
        for plan in &plans {
            for (in_size, out_size) in [(1, 1), (2, 2), (4, 1), (8, 8)] {
                for parts in [2, 3, 7, 64, 1000, 100_000] {
                    let pieces = plan.split(parts, in_size, out_size, min);
                    assert!(pieces.len() <= parts, "{plan:?}");
                    if pieces.is_empty() {
                        assert!(plan.elements < 1 << 16, "{plan:?} {parts}: not split");
                        continue;
                    }
                    let elements: u64 = pieces.iter().map(|p| p.plan.elements).sum();
                    assert_eq!(elements, plan.elements, "{plan:?} {parts}");
                    for p in &pieces {
                        let piece = p.plan.elements * (in_size + out_size) as u64;
                        assert!(piece >= min, "{plan:?} {parts}: a piece of {piece} bytes");
                    }
                }
            }
        }
    }
}
