//! Transposes of element matrices held in byte slices, for transposed layouts.
//!
//! The layout walker maps contiguous input runs into a cache-resident tile and then
//! writes the tile's transpose to the output with [`transpose`]. On x86-64 the work is
//! done in square blocks of 16-byte rows transposed in registers with unpack
//! instructions: SSE2 (part of the x86-64 baseline) everywhere, and with AVX2, two blocks
//! at once, one in each 128-bit lane. Neighbouring blocks make one 64-byte line of each
//! destination row, and every line is written at once from registers, with streaming
//! stores if asked. Elsewhere, and on the fringes that do not fill a block, elements are
//! copied one by one.

use std::ops::Range;

/// The signature of [`transpose`] and its variants.
pub(crate) type Transpose = fn(usize, (&[u8], usize), (&mut [u8], usize), (usize, usize), bool);

/// Writes the transpose of a matrix of `size`-byte elements: `src` holds `rows` rows of
/// `cols` elements, row `i` starting at byte `i * src_pitch`; element `(i, j)` goes to
/// byte `j * dst_pitch + i * size` of `dst`. Bytes of `dst` between its rows are left
/// as they were. With `stream`, destination rows are written with streaming stores where
/// `dst` and `dst_pitch` are 64-byte aligned, so that the pieces of one tile fill whole
/// cache lines (the caller issues the fence); elsewhere with plain stores, as streaming
/// stores of parts of lines reach memory as partial writes: a float32 SIGN of a 1024 x
/// 1024 transposed view into numpy's output (16 bytes past a line) ran at 3.2 GB/s
/// streaming against 11.8 plain on Emerald Rapids. Uses the x86-64 baseline only.
///
/// # Panics
/// If `size` is not 1, 2, 4 or 8, or either slice is too short for its matrix; callers
/// compute both from validated layouts.
pub(crate) fn transpose(
    size: usize,
    src: (&[u8], usize),
    dst: (&mut [u8], usize),
    shape: (usize, usize),
    stream: bool,
) {
    transpose_on(false, size, src, dst, shape, stream);
}

/// [`transpose`] with AVX2 register blocks where the matrix holds them.
///
/// # Safety
/// The CPU must support AVX2.
///
/// # Panics
/// As [`transpose`].
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
pub(crate) unsafe fn transpose_avx2(
    size: usize,
    src: (&[u8], usize),
    dst: (&mut [u8], usize),
    shape: (usize, usize),
    stream: bool,
) {
    transpose_on(true, size, src, dst, shape, stream);
}

/// [`transpose`], with AVX2 blocks if `wide` (which the caller has checked the CPU for).
fn transpose_on(
    wide: bool,
    size: usize,
    (src, src_pitch): (&[u8], usize),
    (dst, dst_pitch): (&mut [u8], usize),
    (rows, cols): (usize, usize),
    stream: bool,
) {
    if rows == 0 || cols == 0 {
        return;
    }
    assert!(
        (rows - 1) * src_pitch + cols * size <= src.len()
            && (cols - 1) * dst_pitch + rows * size <= dst.len(),
        "transpose: matrix outside its slices"
    );
    let aligned = |to: usize| dst.as_ptr().align_offset(to) == 0 && dst_pitch % to == 0;
    let stream = stream && aligned(64);
    let wide = wide && (!stream || aligned(32));
    let m = Matrices {
        src,
        src_pitch,
        dst,
        dst_pitch,
        rows,
        cols,
    };
    match (size, stream) {
        (1, false) => m.run::<1, false>(wide),
        (1, true) => m.run::<1, true>(wide),
        (2, false) => m.run::<2, false>(wide),
        (2, true) => m.run::<2, true>(wide),
        (4, false) => m.run::<4, false>(wide),
        (4, true) => m.run::<4, true>(wide),
        (8, false) => m.run::<8, false>(wide),
        (8, true) => m.run::<8, true>(wide),
        _ => panic!("transpose: element size {size}"),
    }
}

/// A source matrix and its destination, checked to fit their slices.
struct Matrices<'a, 'b> {
    src: &'a [u8],
    src_pitch: usize,
    dst: &'b mut [u8],
    dst_pitch: usize,
    rows: usize,
    cols: usize,
}

impl Matrices<'_, '_> {
    /// Transposes the whole matrix: first the part made of AVX2 lines (if `wide`), then
    /// the rest, below it and to its right, with SSE2 blocks and single elements.
    fn run<const N: usize, const STREAM: bool>(mut self, wide: bool) {
        let (rows, cols) = if wide {
            self.wide::<N, STREAM>()
        } else {
            (0, 0)
        };
        if rows < self.rows {
            self.part::<N>((rows, 0), (self.rows - rows, self.cols))
                .narrow::<N, STREAM>();
        }
        if rows > 0 && cols < self.cols {
            self.part::<N>((0, cols), (rows, self.cols - cols))
                .narrow::<N, STREAM>();
        }
    }

    /// The sub-matrix of `rows x cols` elements from source row and column `first`.
    /// The caller keeps it inside this matrix, with `rows` and `cols` at least 1.
    fn part<const N: usize>(
        &mut self,
        (i, j): (usize, usize),
        (rows, cols): (usize, usize),
    ) -> Matrices<'_, '_> {
        Matrices {
            src: &self.src[i * self.src_pitch + j * N..],
            src_pitch: self.src_pitch,
            dst: &mut self.dst[j * self.dst_pitch + i * N..],
            dst_pitch: self.dst_pitch,
            rows,
            cols,
        }
    }

    /// Transposes with SSE2 blocks where they fit and single elements elsewhere.
    fn narrow<const N: usize, const STREAM: bool>(mut self) {
        let (full_rows, full_cols) = self.blocks::<N, STREAM>();
        if full_cols < self.cols {
            self.elements::<N>(0..full_rows, full_cols..self.cols);
        }
        self.elements::<N>(full_rows..self.rows, 0..self.cols);
    }

    /// Transposes the elements of these source rows and columns one by one.
    fn elements<const N: usize>(&mut self, rows: Range<usize>, cols: Range<usize>) {
        for i in rows {
            for j in cols.clone() {
                let from = i * self.src_pitch + j * N;
                let to = j * self.dst_pitch + i * N;
                self.dst[to..to + N].copy_from_slice(&self.src[from..from + N]);
            }
        }
    }

    /// Transposes the part made of whole AVX2 lines; returns its rows and columns.
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    fn wide<const N: usize, const STREAM: bool>(&mut self) -> (usize, usize) {
        // SAFETY: `wide` is only true when the caller of `transpose_on` checked that the
        // CPU has AVX2 (`transpose_avx2`'s contract).
        unsafe {
            match N {
                1 => self.wide_blocks_of::<avx2::Bytes, STREAM>(),
                2 => self.wide_blocks_of::<avx2::Words, STREAM>(),
                4 => self.wide_blocks_of::<avx2::Dwords, STREAM>(),
                _ => self.wide_blocks_of::<avx2::Qwords, STREAM>(),
            }
        }
    }

    /// Without AVX2 blocks, nothing is done here.
    #[cfg(not(target_arch = "x86_64"))]
    fn wide<const N: usize, const STREAM: bool>(&mut self) -> (usize, usize) {
        (0, 0)
    }

    /// As [`Matrices::blocks_of`], with AVX2 lines: each covers `4 * B::ROWS` source
    /// rows, and only whole lines are done. The caller guarantees AVX2 and, with
    /// `STREAM`, 32-byte alignment of `dst` and its pitch.
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    #[target_feature(enable = "avx2")]
    unsafe fn wide_blocks_of<B: avx2::Block, const STREAM: bool>(&mut self) -> (usize, usize) {
        let (tall, wide) = (4 * B::ROWS, B::COLS);
        let (full_rows, full_cols) = (self.rows / tall * tall, self.cols / wide * wide);
        let (src, sp) = (self.src.as_ptr(), self.src_pitch);
        let (dst, dp) = (self.dst.as_mut_ptr(), self.dst_pitch);
        for j in (0..full_cols).step_by(wide) {
            for i in (0..full_rows).step_by(tall) {
                // SAFETY: the line reads source rows `i..i + tall` (`<= full_rows <=
                // rows`), 16 bytes each from column `j`, with `j + wide <= full_cols <=
                // cols` and `16 = wide * size`, inside the matrix `transpose_on`
                // checked against `src`. It writes destination rows `j..j + wide`, 64
                // bytes (`tall` elements) each from column `i`, inside the checked
                // `dst`, through the pointer of `self`'s exclusive borrow. Streaming
                // needs 32-byte alignment: the caller's, and `i * size` is a multiple
                // of 64.
                unsafe { avx2::line::<B, STREAM>((src, sp), (dst, dp), (i, j)) };
            }
        }
        (full_rows, full_cols)
    }

    /// Transposes the part made of whole register blocks; returns its rows and columns.
    #[cfg(target_arch = "x86_64")]
    fn blocks<const N: usize, const STREAM: bool>(&mut self) -> (usize, usize) {
        match N {
            1 => self.blocks_of::<sse2::Bytes, STREAM>(),
            2 => self.blocks_of::<sse2::Words, STREAM>(),
            4 => self.blocks_of::<sse2::Dwords, STREAM>(),
            _ => self.blocks_of::<sse2::Qwords, STREAM>(),
        }
    }

    /// Without register blocks, everything is left to the element-by-element fringe.
    #[cfg(not(target_arch = "x86_64"))]
    fn blocks<const N: usize, const STREAM: bool>(&mut self) -> (usize, usize) {
        (0, 0)
    }

    /// Destination rows in bands of one block's width. Each band is filled left to
    /// right a line at a time: the four blocks of a line are transposed in registers,
    /// then each destination row of the band receives its whole line, so the output is
    /// written as a few sequential streams of whole lines.
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    fn blocks_of<B: sse2::Block, const STREAM: bool>(&mut self) -> (usize, usize) {
        let (tall, wide) = (B::ROWS, B::COLS);
        let (full_rows, full_cols) = (self.rows / tall * tall, self.cols / wide * wide);
        let (src, sp) = (self.src.as_ptr(), self.src_pitch);
        let (dst, dp) = (self.dst.as_mut_ptr(), self.dst_pitch);
        for j in (0..full_cols).step_by(wide) {
            let mut i = 0;
            // SAFETY: a block starting at source row `r` and column `j` reads rows
            // `r..r + tall` with `r + tall <= full_rows <= rows`, each `wide` elements
            // from column `j` with `j + wide <= full_cols <= cols`, so inside the matrix
            // that `transpose` checked against `src`. Its stores go to destination rows
            // `j..j + wide` (< cols), `tall` elements (16 bytes) from column `r`, inside
            // the checked `dst`, which is written through the pointer of `self`'s
            // exclusive borrow. Streaming stores are only chosen for 16-byte aligned
            // `dst` and pitch, and every `r * N` is a multiple of 16.
            unsafe {
                while i + 4 * tall <= full_rows {
                    sse2::line::<B, STREAM, 4>((src, sp), (dst, dp), (i, j));
                    i += 4 * tall;
                }
                while i + tall <= full_rows {
                    sse2::line::<B, STREAM, 1>((src, sp), (dst, dp), (i, j));
                    i += tall;
                }
            }
        }
        (full_rows, full_cols)
    }
}

/// One round of a transpose network: each neighbouring pair `(v[2k], v[2k + 1])` is
/// interleaved at one lane width into `k` (low halves) and `k + len / 2` (high halves).
/// After `log2(len)` rounds at doubling widths, register `m` holds destination row
/// `bit_reverse(m)`. (AVX2 unpacks work within 128-bit lanes, so the same network
/// transposes the block in each lane.)
#[cfg(target_arch = "x86_64")]
macro_rules! round {
    ($v:expr, $lo:ident, $hi:ident) => {{
        let v = $v;
        let half = v.len() / 2;
        let mut out = v;
        for k in 0..half {
            out[k] = $lo(v[2 * k], v[2 * k + 1]);
            out[k + half] = $hi(v[2 * k], v[2 * k + 1]);
        }
        out
    }};
}

// The helpers below fill arrays with loops of constant bounds rather than
// `std::array::from_fn`, whose closures the compiler may leave out of line: a call per
// block, with the registers passed through memory, halved the speed of bytes.

/// `v` reordered so that destination row `bit_reverse(m)` held in register `m` lands at
/// index `bit_reverse(m)`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn in_row_order<T: Copy, const K: usize>(v: [T; K]) -> [T; K] {
    let bits = K.trailing_zeros();
    let mut out = v;
    for (m, x) in v.into_iter().enumerate() {
        out[m.reverse_bits() >> (usize::BITS - bits)] = x;
    }
    out
}

/// Register transposes of small blocks with SSE2 unpack instructions, each giving 16
/// bytes of several destination rows.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_loadl_epi64, _mm_loadu_si128, _mm_setzero_si128, _mm_storeu_si128,
        _mm_stream_si128, _mm_unpackhi_epi16, _mm_unpackhi_epi32, _mm_unpackhi_epi64,
        _mm_unpacklo_epi16, _mm_unpacklo_epi32, _mm_unpacklo_epi64, _mm_unpacklo_epi8,
    };

    use super::in_row_order;

    /// One register block of `16 / ROWS`-byte elements.
    pub(super) trait Block {
        /// Source rows read: 16 bytes of each destination row.
        const ROWS: usize;
        /// Source columns read: destination rows written.
        const COLS: usize;
        /// The transposed rows, in destination order.
        type Rows: AsRef<[__m128i]> + Copy;
        /// Reads `ROWS` rows of `16 * COLS / ROWS` bytes at `src + k * sp` and returns
        /// the `COLS` transposed rows of 16 bytes. The caller guarantees the rows are
        /// readable.
        unsafe fn load(src: *const u8, sp: usize) -> Self::Rows;
    }

    /// Two 8 x 8 byte blocks, one above the other: 16 source rows of 8 bytes give 8
    /// destination rows of 16 bytes (a 16 x 16 block would hold a line of 16 rows in
    /// 64 registers; this holds one of 8 rows in 32).
    pub(super) struct Bytes;
    pub(super) struct Words;
    pub(super) struct Dwords;
    pub(super) struct Qwords;

    /// `K` rows of 16 bytes at `src + k * sp`.
    #[inline(always)]
    unsafe fn rows<const K: usize>(src: *const u8, sp: usize) -> [__m128i; K] {
        let mut r = [_mm_setzero_si128(); K];
        for (k, x) in r.iter_mut().enumerate() {
            *x = _mm_loadu_si128(src.add(k * sp).cast());
        }
        r
    }

    /// An 8 x 8 byte block from 8 rows of 8 bytes at `src + k * sp`: destination rows
    /// `2m` and `2m + 1` as the low and high halves of register `m`.
    #[inline(always)]
    unsafe fn bytes_8x8(src: *const u8, sp: usize) -> [__m128i; 4] {
        let mut r = [_mm_setzero_si128(); 8];
        for (k, x) in r.iter_mut().enumerate() {
            *x = _mm_loadl_epi64(src.add(k * sp).cast());
        }
        let mut p = [_mm_setzero_si128(); 4];
        for (k, x) in p.iter_mut().enumerate() {
            *x = _mm_unpacklo_epi8(r[2 * k], r[2 * k + 1]);
        }
        let (q0, q1) = (
            _mm_unpacklo_epi16(p[0], p[1]),
            _mm_unpackhi_epi16(p[0], p[1]),
        );
        let (q2, q3) = (
            _mm_unpacklo_epi16(p[2], p[3]),
            _mm_unpackhi_epi16(p[2], p[3]),
        );
        [
            _mm_unpacklo_epi32(q0, q2),
            _mm_unpackhi_epi32(q0, q2),
            _mm_unpacklo_epi32(q1, q3),
            _mm_unpackhi_epi32(q1, q3),
        ]
    }

    impl Block for Bytes {
        const ROWS: usize = 16;
        const COLS: usize = 8;
        type Rows = [__m128i; 8];
        #[inline(always)]
        unsafe fn load(src: *const u8, sp: usize) -> [__m128i; 8] {
            let (a, b) = (bytes_8x8(src, sp), bytes_8x8(src.add(8 * sp), sp));
            let mut out = [_mm_setzero_si128(); 8];
            for m in 0..4 {
                out[2 * m] = _mm_unpacklo_epi64(a[m], b[m]);
                out[2 * m + 1] = _mm_unpackhi_epi64(a[m], b[m]);
            }
            out
        }
    }

    impl Block for Words {
        const ROWS: usize = 8;
        const COLS: usize = 8;
        type Rows = [__m128i; 8];
        #[inline(always)]
        unsafe fn load(src: *const u8, sp: usize) -> [__m128i; 8] {
            let r = rows::<8>(src, sp);
            let a = round!(r, _mm_unpacklo_epi16, _mm_unpackhi_epi16);
            let b = round!(a, _mm_unpacklo_epi32, _mm_unpackhi_epi32);
            in_row_order(round!(b, _mm_unpacklo_epi64, _mm_unpackhi_epi64))
        }
    }

    impl Block for Dwords {
        const ROWS: usize = 4;
        const COLS: usize = 4;
        type Rows = [__m128i; 4];
        #[inline(always)]
        unsafe fn load(src: *const u8, sp: usize) -> [__m128i; 4] {
            let r = rows::<4>(src, sp);
            let a = round!(r, _mm_unpacklo_epi32, _mm_unpackhi_epi32);
            in_row_order(round!(a, _mm_unpacklo_epi64, _mm_unpackhi_epi64))
        }
    }

    impl Block for Qwords {
        const ROWS: usize = 2;
        const COLS: usize = 2;
        type Rows = [__m128i; 2];
        #[inline(always)]
        unsafe fn load(src: *const u8, sp: usize) -> [__m128i; 2] {
            let [r0, r1] = rows::<2>(src, sp);
            [_mm_unpacklo_epi64(r0, r1), _mm_unpackhi_epi64(r0, r1)]
        }
    }

    /// Transposes `Q` blocks, source rows `i..i + Q * ROWS` at columns `j..j + COLS`,
    /// and writes destination rows `j..j + COLS`, each as `Q * 16` consecutive bytes
    /// at column `i`. The caller guarantees every block is inside
    /// the source matrix and every row piece inside the destination, and, with
    /// `STREAM`, 16-byte alignment of each destination piece.
    #[inline(always)]
    pub(super) unsafe fn line<B: Block, const STREAM: bool, const Q: usize>(
        (src, sp): (*const u8, usize),
        (dst, dp): (*mut u8, usize),
        (i, j): (usize, usize),
    ) {
        let n = 16 / B::ROWS;
        let first = B::load(src.add(i * sp + j * n), sp);
        let mut blocks = [first; Q];
        for (q, block) in blocks.iter_mut().enumerate().skip(1) {
            *block = B::load(src.add((i + q * B::ROWS) * sp + j * n), sp);
        }
        for k in 0..B::COLS {
            let row = dst.add((j + k) * dp + i * n);
            for (q, block) in blocks.iter().enumerate() {
                let at = row.add(q * 16).cast();
                let v = block.as_ref()[k];
                if STREAM {
                    _mm_stream_si128(at, v);
                } else {
                    _mm_storeu_si128(at, v);
                }
            }
        }
    }
}

/// Register transposes with AVX2: each 256-bit register holds a row of two SSE2-sized
/// square blocks, one per 128-bit lane, the second block from the source rows just
/// below the first. Unpacks work within lanes, so one network transposes both blocks
/// and leaves 32 consecutive bytes of a destination row in each register.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx2 {
    use std::arch::x86_64::{
        __m256i, _mm256_castsi128_si256, _mm256_inserti128_si256, _mm256_setzero_si256,
        _mm256_storeu_si256, _mm256_stream_si256, _mm256_unpackhi_epi16, _mm256_unpackhi_epi32,
        _mm256_unpackhi_epi64, _mm256_unpackhi_epi8, _mm256_unpacklo_epi16, _mm256_unpacklo_epi32,
        _mm256_unpacklo_epi64, _mm256_unpacklo_epi8, _mm_loadu_si128,
    };

    use super::in_row_order;

    /// A pair of square blocks of `16 / ROWS`-byte elements, `ROWS` x `ROWS` each.
    pub(super) trait Block {
        /// Source rows of each block: the pair reads `2 * ROWS` rows.
        const ROWS: usize;
        /// Source columns read (16 bytes of each source row): destination rows written.
        const COLS: usize;
        /// The transposed rows, in destination order, 32 bytes each.
        type Rows: AsRef<[__m256i]> + Copy;
        /// Whether a line holds the first pair's rows in memory while it transposes the
        /// second: two pairs of 16 registers do not fit the 16 AVX2 registers, and the
        /// compiler's own spills were much slower.
        const STAGED: bool = false;
        /// Reads `2 * ROWS` rows of 16 bytes at `src + k * sp` and returns the `COLS`
        /// transposed rows of 32 bytes. The caller guarantees AVX2 and that the rows
        /// are readable.
        unsafe fn load(src: *const u8, sp: usize) -> Self::Rows;
    }

    /// 16 x 16 byte blocks, built from two halves of 8 source rows each.
    pub(super) struct Bytes;
    pub(super) struct Words;
    pub(super) struct Dwords;
    pub(super) struct Qwords;

    /// Source rows `0..8` (low lanes) and `16..24` (high lanes), 16 bytes each at
    /// `src + k * sp`, three rounds into a network: register `m` holds destination rows
    /// `2 p` and `2 p + 1` with `p = bit_reverse(m)`, 8 bytes each, in each lane.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn bytes_8x16(src: *const u8, sp: usize) -> [__m256i; 8] {
        // SAFETY: the caller guarantees rows `0..24` are readable.
        let r = unsafe { rows_apart::<8>(src, sp, 16) };
        let a = round!(r, _mm256_unpacklo_epi8, _mm256_unpackhi_epi8);
        let b = round!(a, _mm256_unpacklo_epi16, _mm256_unpackhi_epi16);
        in_row_order(round!(b, _mm256_unpacklo_epi32, _mm256_unpackhi_epi32))
    }

    impl Block for Bytes {
        const ROWS: usize = 16;
        const COLS: usize = 16;
        type Rows = [__m256i; 16];
        const STAGED: bool = true;
        #[inline]
        #[target_feature(enable = "avx2")]
        unsafe fn load(src: *const u8, sp: usize) -> [__m256i; 16] {
            // SAFETY: forwarded from the caller (rows `0..32`).
            let (a, b) = unsafe { (bytes_8x16(src, sp), bytes_8x16(src.add(8 * sp), sp)) };
            let mut out = [_mm256_setzero_si256(); 16];
            for p in 0..8 {
                out[2 * p] = _mm256_unpacklo_epi64(a[p], b[p]);
                out[2 * p + 1] = _mm256_unpackhi_epi64(a[p], b[p]);
            }
            out
        }
    }

    /// `K` registers: source row `k` at `src + k * sp` in the low lane, row `K + k` in
    /// the high lane, 16 bytes each.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn rows<const K: usize>(src: *const u8, sp: usize) -> [__m256i; K] {
        // SAFETY: forwarded from the caller.
        unsafe { rows_apart::<K>(src, sp, K) }
    }

    /// `K` registers: source row `k` in the low lane and row `apart + k` in the high
    /// lane, 16 bytes each. The caller guarantees those rows are readable.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn rows_apart<const K: usize>(src: *const u8, sp: usize, apart: usize) -> [__m256i; K] {
        let mut r = [_mm256_setzero_si256(); K];
        for (k, x) in r.iter_mut().enumerate() {
            // SAFETY: the caller guarantees rows `k` and `apart + k` are readable.
            let (low, high) = unsafe {
                (
                    _mm_loadu_si128(src.add(k * sp).cast()),
                    _mm_loadu_si128(src.add((apart + k) * sp).cast()),
                )
            };
            *x = _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(low), high);
        }
        r
    }

    impl Block for Words {
        const ROWS: usize = 8;
        const COLS: usize = 8;
        type Rows = [__m256i; 8];
        #[inline]
        #[target_feature(enable = "avx2")]
        unsafe fn load(src: *const u8, sp: usize) -> [__m256i; 8] {
            // SAFETY: forwarded from the caller.
            let r = unsafe { rows::<8>(src, sp) };
            let a = round!(r, _mm256_unpacklo_epi16, _mm256_unpackhi_epi16);
            let b = round!(a, _mm256_unpacklo_epi32, _mm256_unpackhi_epi32);
            in_row_order(round!(b, _mm256_unpacklo_epi64, _mm256_unpackhi_epi64))
        }
    }

    impl Block for Dwords {
        const ROWS: usize = 4;
        const COLS: usize = 4;
        type Rows = [__m256i; 4];
        #[inline]
        #[target_feature(enable = "avx2")]
        unsafe fn load(src: *const u8, sp: usize) -> [__m256i; 4] {
            // SAFETY: forwarded from the caller.
            let r = unsafe { rows::<4>(src, sp) };
            let a = round!(r, _mm256_unpacklo_epi32, _mm256_unpackhi_epi32);
            in_row_order(round!(a, _mm256_unpacklo_epi64, _mm256_unpackhi_epi64))
        }
    }

    impl Block for Qwords {
        const ROWS: usize = 2;
        const COLS: usize = 2;
        type Rows = [__m256i; 2];
        #[inline]
        #[target_feature(enable = "avx2")]
        unsafe fn load(src: *const u8, sp: usize) -> [__m256i; 2] {
            // SAFETY: forwarded from the caller.
            let [r0, r1] = unsafe { rows::<2>(src, sp) };
            [_mm256_unpacklo_epi64(r0, r1), _mm256_unpackhi_epi64(r0, r1)]
        }
    }

    /// The first pair's rows of a staged line, aligned for whole-register moves.
    #[repr(C, align(32))]
    struct Staged([__m256i; 16]);

    /// Transposes two pairs of blocks, source rows `i..i + 4 * ROWS` at columns
    /// `j..j + COLS`, and writes destination rows `j..j + COLS`, each as 64 consecutive
    /// bytes at column `i`. The caller guarantees AVX2, every block inside the source
    /// matrix and every row piece inside the destination, and, with `STREAM`, 32-byte
    /// alignment of each destination piece.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn line<B: Block, const STREAM: bool>(
        (src, sp): (*const u8, usize),
        (dst, dp): (*mut u8, usize),
        (i, j): (usize, usize),
    ) {
        let n = 16 / B::ROWS;
        // SAFETY: the caller guarantees both pairs and every row piece are in bounds,
        // and the alignment streaming stores need.
        unsafe {
            let top = B::load(src.add(i * sp + j * n), sp);
            let mut staged = Staged([_mm256_setzero_si256(); 16]);
            if B::STAGED {
                for (k, &v) in top.as_ref().iter().enumerate() {
                    std::ptr::write_volatile(&mut staged.0[k], v);
                }
            }
            let bottom = B::load(src.add((i + 2 * B::ROWS) * sp + j * n), sp);
            for k in 0..B::COLS {
                let row = dst.add((j + k) * dp + i * n).cast::<__m256i>();
                let a = if B::STAGED {
                    std::ptr::read_volatile(&staged.0[k])
                } else {
                    top.as_ref()[k]
                };
                let b = bottom.as_ref()[k];
                if STREAM {
                    _mm256_stream_si256(row, a);
                    _mm256_stream_si256(row.add(1), b);
                } else {
                    _mm256_storeu_si256(row, a);
                    _mm256_storeu_si256(row.add(1), b);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::transpose_on;

    /// Whether this machine runs the AVX2 blocks.
    fn has_avx2() -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            std::arch::is_x86_feature_detected!("avx2")
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    }

    /// Every element size, shapes with and without fringes, padded pitches, unaligned
    /// and 64-byte aligned destinations, plain and streaming, SSE2 and (where the CPU
    /// has it) AVX2 blocks: equal to the element-by-element definition, with the
    /// padding between destination rows untouched.
    #[test]
    fn matches_the_definition() {
        let wides: &[bool] = if has_avx2() { &[false, true] } else { &[false] };
        for size in [1, 2, 4, 8] {
            for (rows, cols) in [
                (1, 1),
                (3, 5),
                (16, 16),
                (17, 33),
                (40, 9),
                (64, 48),
                (96, 20),
                (128, 40),
                (130, 70),
            ] {
                for (pad, offset) in [(0, 0), (16, 0), (7, 3), (32, 16), (64, 0)] {
                    let src_pitch = cols * size + pad;
                    let dst_pitch = rows * size + pad;
                    let src: Vec<u8> = (0..rows * src_pitch).map(|k| (k * 7 + 1) as u8).collect();
                    let mut want = vec![0xEEu8; cols * dst_pitch + 16];
                    for i in 0..rows {
                        for j in 0..cols {
                            let (from, to) = (i * src_pitch + j * size, j * dst_pitch + i * size);
                            want[to..to + size].copy_from_slice(&src[from..from + size]);
                        }
                    }
                    for (&wide, stream) in wides.iter().flat_map(|w| [(w, false), (w, true)]) {
                        let mut buf = vec![0xEEu8; 64 + offset + cols * dst_pitch + 16];
                        let start = buf.as_ptr().align_offset(64) + offset;
                        let dst = &mut buf[start..start + want.len()];
                        transpose_on(
                            wide,
                            size,
                            (&src, src_pitch),
                            (dst, dst_pitch),
                            (rows, cols),
                            stream,
                        );
                        assert!(
                            dst == &want[..],
                            "size {size}, {rows}x{cols}, pad {pad}, offset {offset}, \
                             stream {stream}, wide {wide}"
                        );
                    }
                }
            }
        }
    }
}
