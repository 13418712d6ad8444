//! A column-major (`fortran_order`) input file handed out row-major, range by range, in
//! bounded memory, with positioned reads.
//!
//! Axes of length 1 are dropped. For a split axis `j` of the remaining shape
//! `(d0, ..., dk)`, the array is a sequence of matrices, one per row-major index over the
//! axes before `j`: a matrix's rows are the indices on axis `j` and its columns the
//! row-major indices over the axes after `j`, so that its elements in row-major order are
//! the next part of the output. In the file, consecutive rows of a matrix column lie
//! `u = d0 * ... * d(j-1)` elements apart (contiguous for `j = 0`). A panel holds
//! consecutive rows of one matrix, all its columns: each column's part is read with one
//! read when `u` is 1; otherwise it is gathered from reads of the span it lies in (`u`
//! times its bytes), or read element by element. The panel is then transposed into the
//! ranges asked for, tile by tile in cache; ranges asked for in order reuse it, so each
//! panel is read once.
//!
//! Memory is the panel's budget (plus, where a column's part is a multiple of 1 KiB, a
//! cache line per column, so that a tile's columns do not share cache sets) and a
//! [`GATHER_BYTES`] gather buffer, never the array's size. Splits whose matrix row does
//! not fit the budget are not considered; among the others, the split and the way columns
//! are read are chosen by a cost model of read calls and bytes read. A `(R, C)` matrix of
//! which several rows fit is read in panels of as many rows as fit, one read per column
//! (for float32 `(16384, 16384)` and 4 MiB: panels of 64 rows, reads of 256 bytes); one
//! whose single row exceeds the budget, such as `(2, 100_000_000)`, is split at axis 1
//! into two matrices of one column, each gathered at a stride of 2 from long reads.
//!
//! Only regular files can be read out of order: a pipe's column-major data is read and
//! reordered whole by the caller.

use std::fs::File;
use std::io;
use std::ops::Range;

use anyhow::{anyhow, Result};
use ewise_cli::npy::swap_bytes;

use crate::input::NpyInput;
use crate::paths::describe_io;
use crate::positioned::ReadAt;

/// Bytes of data a panel holds at most, unless a larger budget is given.
pub(super) const PANEL_BYTES: usize = 4 << 20;

/// Bytes of the buffer that elements at a stride are gathered from.
const GATHER_BYTES: usize = 256 << 10;

/// What one read call costs, in bytes read: a short positioned read from the page cache
/// takes about as long as copying 4 KiB.
const CALL_BYTES: f64 = 4096.0;

/// Columns of the tiles a panel is transposed in.
const TILE_COLS: usize = 64;

/// Whether positioned reads of `file` are possible here: it is a regular file, on a
/// platform with positioned reads.
pub(super) fn positioned(file: &File) -> bool {
    cfg!(any(unix, windows)) && file.metadata().is_ok_and(|m| m.is_file())
}

/// Whether a column-major array of `shape` is stored in another order than row-major: it
/// has elements and more than one axis longer than 1.
pub(super) fn reorders(shape: &[usize]) -> bool {
    !shape.contains(&0) && shape.iter().filter(|&&d| d > 1).count() > 1
}

/// How the part of a column in a panel is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reads {
    /// One read: the column is contiguous (split axis 0).
    Contiguous,
    /// Reads of the spans the strided elements lie in, at most the gather buffer each.
    Gather,
    /// One read per element.
    Each,
}

/// Where an array's elements are and how they are read: see the module docs.
#[derive(Debug, Clone)]
struct Plan {
    /// Rows of each matrix: the length of the split axis.
    rows: usize,
    /// Columns of each matrix: the product of `inner`.
    cols: usize,
    /// Rows per panel, from 1 to `rows` (0 for an empty array).
    height: usize,
    /// Elements between consecutive rows of a column in the file: the product of `outer`.
    unit: usize,
    /// Lengths of the axes before the split axis, with their column-major strides.
    outer: Vec<(usize, usize)>,
    /// Lengths of the axes after the split axis, with their column-major strides in
    /// columns of a matrix.
    inner: Vec<(usize, usize)>,
    reads: Reads,
}

impl Plan {
    /// The plan splitting `dims` (no axis of length 1) at axis `j`, with panels of
    /// `height` rows whose columns are read as `reads` says.
    fn new(dims: &[usize], j: usize, height: usize, reads: Reads) -> Plan {
        let strides = |axes: &[usize]| {
            let mut stride = 1;
            axes.iter()
                .map(|&d| {
                    let s = stride;
                    stride *= d;
                    (d, s)
                })
                .collect::<Vec<_>>()
        };
        Plan {
            rows: dims[j],
            cols: dims[j + 1..].iter().product(),
            height,
            unit: dims[..j].iter().product(),
            outer: strides(&dims[..j]),
            inner: strides(&dims[j + 1..]),
            reads,
        }
    }

    /// Every way to read an array of `shape`, elements of `size` bytes, with panels of at
    /// most `panel` bytes (at least one element), in the order of their split axis.
    /// `None` if the array has more elements than a `usize` counts.
    fn all(shape: &[usize], size: usize, panel: usize) -> Option<Vec<Plan>> {
        shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d))?;
        let mut dims: Vec<usize> = shape.iter().copied().filter(|&d| d != 1).collect();
        if dims.contains(&0) {
            dims = vec![0];
        } else if dims.is_empty() {
            dims = vec![1];
        }
        let most = (panel / size.max(1)).max(1);
        let mut plans = Vec::new();
        for j in 0..dims.len() {
            let cols: usize = dims[j + 1..].iter().product();
            if cols > most {
                continue;
            }
            let height = dims[j].min(most / cols.max(1));
            let reads: &[Reads] = if j == 0 {
                &[Reads::Contiguous]
            } else {
                &[Reads::Gather, Reads::Each]
            };
            plans.extend(reads.iter().map(|&r| Plan::new(&dims, j, height, r)));
        }
        Some(plans)
    }

    /// The plan of [`Plan::all`] with the least estimated cost per element, with a
    /// gather buffer of `gather` bytes.
    fn best(shape: &[usize], size: usize, panel: usize, gather: usize) -> Option<Plan> {
        Plan::all(shape, size, panel)?
            .into_iter()
            .map(|p| (p.cost(size, gather), p))
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, p)| p)
    }

    /// Estimated cost of reading one element, in bytes read (a call counted as
    /// [`CALL_BYTES`]).
    fn cost(&self, size: usize, gather: usize) -> f64 {
        let run = if self.height == self.rows {
            self.rows * self.cols
        } else {
            self.height
        }
        .max(1) as f64;
        let size = size.max(1);
        let (calls, bytes) = match self.reads {
            Reads::Contiguous => (1.0 / run, size),
            Reads::Each => (1.0, size),
            Reads::Gather => {
                let per_call = (gather / size).saturating_sub(1) / self.unit + 1;
                (1.0 / run.min(per_call as f64), self.unit * size)
            }
        };
        calls * CALL_BYTES + bytes as f64
    }

    /// Elements of each matrix.
    fn matrix(&self) -> usize {
        self.rows * self.cols
    }

    /// The file element of row 0, column 0 of matrix `m`.
    fn corner(&self, m: usize) -> usize {
        let mut rest = m;
        let mut at = 0;
        for &(d, stride) in self.outer.iter().rev() {
            at += rest % d * stride;
            rest /= d;
        }
        at
    }
}

/// The columns of a matrix in the file for a range of its columns in row-major order.
struct Columns<'a> {
    inner: &'a [(usize, usize)],
    index: &'a mut Vec<usize>,
}

impl Columns<'_> {
    /// Fills `out` with the file columns of the row-major columns from `first` on.
    fn fill(&mut self, first: usize, out: &mut [usize]) {
        self.index.clear();
        self.index.resize(self.inner.len(), 0);
        let mut rest = first;
        let mut at = 0;
        for (i, &(d, stride)) in self.index.iter_mut().zip(self.inner).rev() {
            *i = rest % d;
            rest /= d;
            at += *i * stride;
        }
        for slot in out {
            *slot = at;
            for (i, &(d, stride)) in self.index.iter_mut().zip(self.inner).rev() {
                *i += 1;
                at += stride;
                if *i < d {
                    break;
                }
                *i = 0;
                at -= d * stride;
            }
        }
    }
}

/// Rows of one matrix in the panel.
#[derive(Debug, Clone, Copy)]
struct Held {
    /// The matrix's index.
    matrix: usize,
    /// Its first row held.
    first: usize,
    /// How many rows are held.
    rows: usize,
    /// Elements from one column's start in the panel to the next's.
    pitch: usize,
}

/// Reads a column-major array's elements in row-major order, any range at a time,
/// holding one panel: see the module docs.
pub(super) struct ColumnMajor {
    plan: Plan,
    /// Bytes per element.
    size: usize,
    /// The panel: column after column of the rows held, in the file's order of columns.
    panel: Vec<u8>,
    /// The buffer elements at a stride are gathered from.
    gather: Vec<u8>,
    /// What the panel holds, if it holds anything.
    held: Option<Held>,
    /// Scratch index for [`Columns`].
    index: Vec<usize>,
}

impl ColumnMajor {
    /// A reader of a column-major array of `shape`, elements of `size` bytes, whose panel
    /// holds at most `budget` bytes (at least one element) plus a cache line per column,
    /// and whose gather buffer, if it needs one, [`GATHER_BYTES`].
    pub(super) fn new(shape: &[usize], size: usize, budget: usize) -> Result<ColumnMajor> {
        let plan = Plan::best(shape, size, budget, GATHER_BYTES).ok_or_else(|| {
            anyhow!("shape {shape:?} holds more elements than this machine can count")
        })?;
        ColumnMajor::with_plan(plan, size, GATHER_BYTES)
    }

    /// A reader that follows `plan`, gathering through a buffer of `gather` bytes.
    fn with_plan(plan: Plan, size: usize, gather: usize) -> Result<ColumnMajor> {
        let padded = plan.cols > 1 && plan.height * size >= 1024;
        let pitch = plan.height + if padded { most_padding(size) } else { 0 };
        let panel_len = pitch * plan.cols * size;
        let gather_len = if plan.reads == Reads::Gather {
            gather.max(size)
        } else {
            0
        };
        let mut panel = Vec::new();
        let mut buffer = Vec::new();
        panel
            .try_reserve_exact(panel_len)
            .and_then(|()| buffer.try_reserve_exact(gather_len))
            .map_err(|_| {
                anyhow!("cannot allocate {panel_len} bytes to reorder a column-major input")
            })?;
        panel.resize(panel_len, 0);
        buffer.resize(gather_len, 0);
        Ok(ColumnMajor {
            plan,
            size,
            panel,
            gather: buffer,
            held: None,
            index: Vec::new(),
        })
    }

    /// Fills `out` with the row-major elements from element `start` on of `input`'s data,
    /// in this machine's byte order. Errors name no file.
    pub(super) fn read(&mut self, input: &NpyInput, start: usize, out: &mut [u8]) -> Result<()> {
        self.fill(&input.file, input.data_offset, start, out)
            .map_err(|e| {
                if e.kind() == io::ErrorKind::UnexpectedEof {
                    let available = input
                        .file
                        .metadata()
                        .map_or(0, |m| m.len().saturating_sub(input.data_offset));
                    anyhow!(
                        "truncated: shape {} of '{}' needs {} bytes of data, but only {available} follow the header",
                        input.header.shape_text(),
                        input.header.descr,
                        input.count.saturating_mul(self.size as u64)
                    )
                } else {
                    anyhow!(describe_io("read failed", &e))
                }
            })?;
        if input.element.needs_swap() {
            swap_bytes(out, self.size);
        }
        Ok(())
    }

    /// Fills `out` with the row-major elements from element `start` on of the array
    /// whose data begins at byte `base` of `src`, in the file's byte order.
    fn fill<R: ReadAt + ?Sized>(
        &mut self,
        src: &R,
        base: u64,
        start: usize,
        out: &mut [u8],
    ) -> io::Result<()> {
        let size = self.size;
        let (matrix, cols) = (self.plan.matrix(), self.plan.cols);
        let n = out.len() / size;
        let mut done = 0;
        while done < n {
            let p = start + done;
            let (m, rem) = (p / matrix, p % matrix);
            let row = rem / cols;
            let held = match self.held {
                Some(h) if h.matrix == m && (h.first..h.first + h.rows).contains(&row) => h,
                _ => self.load(src, base, m, row)?,
            };
            let local = rem - held.first * cols;
            let take = (held.rows * cols - local).min(n - done);
            self.transpose(held, local, &mut out[done * size..(done + take) * size]);
            done += take;
        }
        Ok(())
    }

    /// Reads rows `first..` of matrix `m` into the panel, as many as it holds.
    fn load<R: ReadAt + ?Sized>(
        &mut self,
        src: &R,
        base: u64,
        m: usize,
        first: usize,
    ) -> io::Result<Held> {
        self.held = None;
        let plan = &self.plan;
        let size = self.size;
        let rows = plan.height.min(plan.rows - first);
        let pitch = rows + padding(rows, plan.rows, plan.cols, size);
        let corner = plan.corner(m) + plan.unit * first;
        let mut runs = Runs {
            src,
            base,
            size,
            unit: plan.unit,
            reads: plan.reads,
            gather: &mut self.gather,
        };
        if rows == plan.rows && pitch == rows {
            runs.read(corner, &mut self.panel[..plan.matrix() * size])?;
        } else {
            let step = plan.unit * plan.rows;
            for (c, part) in self
                .panel
                .chunks_mut(pitch * size)
                .take(plan.cols)
                .enumerate()
            {
                runs.read(corner + c * step, &mut part[..rows * size])?;
            }
        }
        let held = Held {
            matrix: m,
            first,
            rows,
            pitch,
        };
        self.held = Some(held);
        Ok(held)
    }

    /// Writes into `out` the elements of the panel (holding `held`) from row-major
    /// position `local` on.
    fn transpose(&mut self, held: Held, local: usize, out: &mut [u8]) {
        let cols = self.plan.cols;
        let size = self.size;
        if cols == 1 || held.rows == 1 && self.plan.inner.len() <= 1 {
            out.copy_from_slice(&self.panel[local * size..local * size + out.len()]);
            return;
        }
        let mut tiles = Tiles {
            panel: &self.panel,
            pitch: held.pitch,
            columns: Columns {
                inner: &self.plan.inner,
                index: &mut self.index,
            },
        };
        let (mut row, col) = (local / cols, local % cols);
        let end = local + out.len() / size;
        let (last, tail) = (end / cols, end % cols);
        if row == last {
            tiles.rect(size, row..row + 1, col..tail, out);
            return;
        }
        let mut out = out;
        if col > 0 {
            let (head, rest) = out.split_at_mut((cols - col) * size);
            tiles.rect(size, row..row + 1, col..cols, head);
            out = rest;
            row += 1;
        }
        let (body, rest) = out.split_at_mut((last - row) * cols * size);
        tiles.rect(size, row..last, 0..cols, body);
        if tail > 0 {
            tiles.rect(size, last..last + 1, 0..tail, rest);
        }
    }
}

/// Elements added after each column of a panel of `cols` columns holding `rows` of a
/// matrix's `all` rows, elements of `size` bytes: one cache line where a column's part
/// is a multiple of 1 KiB (so that a tile's columns do not share cache sets), unless the
/// panel holds the whole matrix, read in one run, and a column's part is under 4 KiB
/// (reading it column by column would cost more calls than the padding saves).
fn padding(rows: usize, all: usize, cols: usize, size: usize) -> usize {
    let bytes = rows * size;
    let by_column = rows < all || bytes >= 4096;
    if cols > 1 && by_column && bytes >= 1024 && bytes.is_multiple_of(1024) {
        most_padding(size)
    } else {
        0
    }
}

/// The most elements [`padding`] adds after a column.
fn most_padding(size: usize) -> usize {
    (64 / size).max(1)
}

/// Strided runs of elements read from a file.
struct Runs<'a, R: ?Sized> {
    src: &'a R,
    /// Byte offset of element 0.
    base: u64,
    size: usize,
    /// Elements between consecutive elements of a run.
    unit: usize,
    reads: Reads,
    gather: &'a mut [u8],
}

impl<R: ReadAt + ?Sized> Runs<'_, R> {
    /// Fills `dst` with the elements `first`, `first + unit`, ... of the file.
    fn read(&mut self, first: usize, dst: &mut [u8]) -> io::Result<()> {
        let size = self.size;
        let at = |e: usize| self.base + e as u64 * size as u64;
        match self.reads {
            _ if self.unit == 1 => self.src.read_exact_at(dst, at(first)),
            Reads::Contiguous | Reads::Each => {
                for (t, d) in dst.chunks_exact_mut(size).enumerate() {
                    self.src.read_exact_at(d, at(first + t * self.unit))?;
                }
                Ok(())
            }
            Reads::Gather => {
                let per_read = (self.gather.len() / size - 1) / self.unit + 1;
                let stride = self.unit * size;
                for (k, piece) in dst.chunks_mut(per_read * size).enumerate() {
                    let span = (piece.len() / size - 1) * stride + size;
                    let buf = &mut self.gather[..span];
                    self.src
                        .read_exact_at(buf, at(first + k * per_read * self.unit))?;
                    for (d, s) in piece.chunks_exact_mut(size).zip(buf.chunks(stride)) {
                        d.copy_from_slice(&s[..size]);
                    }
                }
                Ok(())
            }
        }
    }
}

/// A panel, transposed into row-major output tile by tile.
struct Tiles<'a> {
    panel: &'a [u8],
    /// Elements from one column's start to the next's.
    pitch: usize,
    columns: Columns<'a>,
}

impl Tiles<'_> {
    /// Writes rows `rows` by row-major columns `cols` of the panel, row after row, into
    /// `out`, elements of `size` bytes.
    fn rect(&mut self, size: usize, rows: Range<usize>, cols: Range<usize>, out: &mut [u8]) {
        match size {
            1 => self.rect_of(1, rows, cols, out),
            2 => self.rect_of(2, rows, cols, out),
            4 => self.rect_of(4, rows, cols, out),
            8 => self.rect_of(8, rows, cols, out),
            _ => self.rect_of(size, rows, cols, out),
        }
    }

    /// [`Tiles::rect`], inlined so that a constant `size` makes each element one move.
    /// Tiles are written row by row: each output row's part is written whole, while the
    /// tile's columns stay in cache.
    #[inline(always)]
    fn rect_of(&mut self, size: usize, rows: Range<usize>, cols: Range<usize>, out: &mut [u8]) {
        let width = cols.len();
        let step = self.pitch * size;
        let in_order = self.columns.inner.len() <= 1;
        let mut file_cols = [0usize; TILE_COLS];
        for c0 in cols.clone().step_by(TILE_COLS) {
            let c1 = (c0 + TILE_COLS).min(cols.end);
            let file_cols = &mut file_cols[..c1 - c0];
            if !in_order {
                self.columns.fill(c0, file_cols);
            }
            for row in rows.clone() {
                let to = ((row - rows.start) * width + c0 - cols.start) * size;
                let line = &mut out[to..to + (c1 - c0) * size];
                if in_order {
                    let from = (c0 * self.pitch + row) * size;
                    let span = &self.panel[from..from + (c1 - c0 - 1) * step + size];
                    for (e, s) in line.chunks_exact_mut(size).zip(span.chunks(step)) {
                        e.copy_from_slice(&s[..size]);
                    }
                } else {
                    for (e, &fc) in line.chunks_exact_mut(size).zip(file_cols.iter()) {
                        let from = fc * step + row * size;
                        e.copy_from_slice(&self.panel[from..from + size]);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::inputs::fortran_to_c;
    use super::*;
    use proptest::prelude::*;

    impl ReadAt for [u8] {
        fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
            let from = usize::try_from(offset).map_err(|_| io::ErrorKind::UnexpectedEof)?;
            let src = self
                .get(from..from + buf.len())
                .ok_or(io::ErrorKind::UnexpectedEof)?;
            buf.copy_from_slice(src);
            Ok(())
        }
    }

    /// The row-major bytes read by `reader` from `file` (data at byte `base`) in ranges
    /// of the given lengths, taken in turn.
    fn read_all(
        reader: &mut ColumnMajor,
        file: &[u8],
        base: u64,
        total: usize,
        lengths: &[usize],
    ) -> Vec<u8> {
        let size = reader.size;
        let mut out = vec![0u8; total * size];
        let mut done = 0;
        for &len in lengths.iter().cycle() {
            if done == total {
                break;
            }
            let n = len.min(total - done);
            reader
                .fill(file, base, done, &mut out[done * size..(done + n) * size])
                .unwrap();
            done += n;
        }
        out
    }

    fn check(shape: &[usize], size: usize, panel: usize, gather: usize, lengths: &[usize]) {
        let total: usize = shape.iter().product();
        let data: Vec<u8> = (0..total * size).map(|i| (i * 7 + i / 251) as u8).collect();
        let base = 3;
        let mut file = vec![0xA5u8; base];
        file.extend_from_slice(&data);
        let expected = fortran_to_c(&data, shape, size);
        let plans = Plan::all(shape, size, panel).unwrap();
        assert!(!plans.is_empty(), "no plan for {shape:?}");
        for plan in plans {
            let described = format!("{plan:?}");
            let mut reader = ColumnMajor::with_plan(plan, size, gather).unwrap();
            assert!(
                reader.panel.len() <= panel.max(size * reader.plan.cols) + 64 * reader.plan.cols
            );
            let got = read_all(&mut reader, &file, base as u64, total, lengths);
            assert!(
                got == expected,
                "shape {shape:?}, size {size}, panel {panel}, gather {gather}, lengths {lengths:?}, {described}"
            );
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn every_plan_gives_the_row_major_order(
            shape in prop::collection::vec(prop_oneof![Just(0usize), Just(1), 2usize..7], 1..=5),
            size in prop::sample::select(vec![1usize, 2, 4, 8]),
            panel in 1usize..96,
            gather in 1usize..48,
            lengths in prop::collection::vec(1usize..200, 1..6),
        ) {
            check(&shape, size, panel * size, gather * size, &lengths);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        #[test]
        fn panels_of_padded_columns_give_the_row_major_order(
            rows in 1usize..6000,
            rest in prop::collection::vec(1usize..40, 1..=2),
            size in prop::sample::select(vec![1usize, 2, 4, 8]),
            kib in 1usize..6,
            lengths in prop::collection::vec(1usize..5000, 1..4),
        ) {
            let cols: usize = rest.iter().product();
            prop_assume!(rows * cols <= 1 << 19);
            let shape: Vec<usize> = std::iter::once(rows).chain(rest).collect();
            check(&shape, size, kib * 1024 * cols, 1024, &lengths);
        }
    }

    #[test]
    fn matrices_small_and_large_against_the_budget() {
        check(&[2, 3], 4, 4096, 64, &[1, 5]);
        check(&[5, 7], 1, 7, 3, &[3]);
        check(&[2, 1000], 4, 64, 16, &[37, 1000]);
        check(&[1000, 2], 8, 64, 24, &[999]);
        check(&[33, 65], 2, 4096, 64, &[100, 1]);
        check(&[3, 1, 4, 1, 5], 4, 40, 8, &[7]);
        check(&[2, 2, 2, 2, 2, 2, 2, 2, 2, 2], 1, 16, 4, &[13]);
        check(&[1, 1, 6], 2, 4, 2, &[4]);
        check(&[4, 0, 3], 4, 8, 8, &[1]);
        check(&[512, 8], 4, 512 * 8 * 4, 64, &[1000]);
        check(&[2048, 6], 1, 2048 * 6, 64, &[777]);
        check(&[3000, 5], 2, 1024 * 5 * 2, 64, &[4096, 5]);
        check(&[256, 3, 5], 4, 256 * 15 * 4, 256, &[999]);
        check(&[516, 3], 4, 260 * 3 * 4, 64, &[1000]);
        check(&[1024, 8], 4, 1024 * 8 * 4, 64, &[1000]);
        check(&[4096, 3], 1, 4096 * 3, 64, &[5000]);
        check(&[2, 516, 3], 4, 260 * 3 * 4, 64, &[1000]);
    }

    #[test]
    fn plans_chosen() {
        let best = |shape: &[usize]| Plan::best(shape, 4, PANEL_BYTES, GATHER_BYTES).unwrap();
        let square = best(&[16384, 16384]);
        assert_eq!(
            (square.unit, square.height, square.reads),
            (1, 64, Reads::Contiguous)
        );
        let wide = best(&[2, 100_000_000]);
        assert_eq!((wide.unit, wide.cols, wide.reads), (2, 1, Reads::Gather));
        let small = best(&[300, 200]);
        assert_eq!((small.height, small.rows), (300, 300));
        let cube = best(&[2, 1000, 1000]);
        assert_eq!((cube.unit, cube.rows, cube.height), (2, 1000, 1000));
        assert!(Plan::best(&[usize::MAX, 2], 4, PANEL_BYTES, GATHER_BYTES).is_none());
    }

    #[test]
    fn a_file_shorter_than_its_shape_is_an_unexpected_end() {
        let mut reader =
            ColumnMajor::with_plan(Plan::best(&[4, 4], 4, 32, 16).unwrap(), 4, 16).unwrap();
        let file = [0u8; 60];
        let mut out = [0u8; 64];
        let err = reader.fill(&file[..], 0, 0, &mut out).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    }
}
