//! The body of the `c_abi` fuzz target (`crates/ewise-c/fuzz`), which the stable test
//! `tests/abi_fuzz.rs` also runs on deterministic pseudo-random inputs.
//!
//! Bytes decide everything a C caller hands to ewise-c's real `extern "C"` functions on
//! the CPU device: the device desc (feature level, Extensions, NanPolicy, Kind, values
//! that are no enumerator), feature-support queries, `ewise_sign` / `ewise_is_infinity`
//! over overlapping host memory, the `DML_*` structs of an operator (operator type, the
//! SIGN and IS_INFINITY descs, InfinityMode, each tensor's DML_TENSOR_DESC Type, its
//! DML_BUFFER_TENSOR_DESC's DataType, Flags, DimensionCount 0 to 72 and any u32, Sizes,
//! Strides NULL or not, lying TotalTensorSizeInBytes, GuaranteedBaseOffsetAlignment),
//! NULL in every pointer position, owned / wrapped / foreign buffers, bindings with any
//! offset and size (in place, overlapping, disjoint in one buffer, two wrapped buffers
//! over overlapping memory of one allocation), buffer reads and writes, and the order in
//! which every handle is released (the device before its children, the operator before
//! the execution).
//!
//! Checked for every call: the status is a known one and never EWISE_ERROR_INTERNAL;
//! `ewise_last_error` is a valid NUL-terminated UTF-8 string, non-empty after a failure
//! and "" after EWISE_OK; `ewise_status_hresult` maps the status; the status is one the
//! model below allows (an independent reading of ewise.h and docs/SEMANTICS.md sections 3 to
//! 5: OK exactly when no rule is broken, otherwise the class of a broken rule); an
//! out-pointer is written only on success. Memory: every byte of every buffer, of the
//! wrapped allocation and of the host-call memory is compared after each call with a
//! model: an OK execution writes exactly the elements of the output's strided layout,
//! each the scalar reference (`ewise::reference`) of the input element at the same index
//! read before the call, and leaves every other byte alone; a refused call changes
//! nothing.
#![allow(clippy::too_many_arguments)]

use std::ffi::{c_void, CStr};
use std::ptr::{null, null_mut, NonNull};

use ewise::reference::{is_infinity_bits, sign_bits};
use ewise::{DataType, InfinityMode, NanPolicy};
use ewise_c::types::*;
use ewise_c::{
    ewise_buffer, ewise_buffer_read, ewise_buffer_write, ewise_check_feature_support,
    ewise_compile_operator, ewise_compiled_operator, ewise_create_buffer, ewise_create_device,
    ewise_create_operator, ewise_device, ewise_execute, ewise_is_infinity, ewise_last_error,
    ewise_operator, ewise_release_buffer, ewise_release_compiled_operator, ewise_release_device,
    ewise_release_operator, ewise_sign, ewise_status_hresult, ewise_version,
    ewise_wrap_host_memory,
};

/// What one input reached, for the stable driver's coverage counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Event {
    DeviceRefused,
    QueryAnswered,
    QueryRefused,
    HostRan,
    HostRanInPlace,
    HostRefused,
    OperatorCreated,
    OperatorRefusedInvalid,
    OperatorRefusedUnsupported,
    Compiled,
    CompileRefused,
    BufferRefused,
    BufferProbed,
    Executed,
    ExecutedStrided,
    ExecutedInPlace,
    ExecutedAliased,
    ExecutedAfterDeviceRelease,
    ExecutionRefused,
}

// ---------------------------------------------------------------------------------------
// Bytes in
// ---------------------------------------------------------------------------------------

/// The input, read front to back; zeros once it runs out, and every choice maps 0 to
/// its ordinary, valid case, so a short input is a plain valid program.
struct Input<'a> {
    data: &'a [u8],
}

impl Input<'_> {
    fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.byte(), self.byte()])
    }

    fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.byte(), self.byte(), self.byte(), self.byte()])
    }

    fn u64(&mut self) -> u64 {
        u64::from(self.u32()) | (u64::from(self.u32()) << 32)
    }

    /// True for about `n` bytes out of 256 (never once the input runs out).
    fn rare(&mut self, n: u8) -> bool {
        self.byte() > 255 - n
    }

    /// One of `items`, the first once the input runs out.
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.byte() as usize % items.len()]
    }
}

/// xorshift64*: buffer contents, so that they do not depend on how long the input is
/// (and the stable test's inputs).
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Random bytes mixed with the patterns that matter (infinities, NaNs, signed zeros,
    /// subnormals, integer extremes, float8 infinities) at every width.
    fn fill(&mut self, bytes: &mut [u8]) {
        const W64: [u64; 8] = [
            0x7FF0_0000_0000_0000,
            0xFFF0_0000_0000_0000,
            0x7FF8_0000_0000_0000,
            0xFFF8_0000_0000_0123,
            0x8000_0000_0000_0000,
            1,
            0x8000_0000_0000_0001,
            0x3FF0_0000_0000_0000,
        ];
        const W32: [u32; 10] = [
            0x7F80_0000,
            0xFF80_0000,
            0x7FC0_0000,
            0xFFC0_0001,
            0x8000_0000,
            1,
            0x8000_0001,
            0x7F7F_FFFF,
            0xBF80_0000,
            0x7F80_0001,
        ];
        const W16: [u16; 12] = [
            0x7C00, 0xFC00, 0x7E00, 0xFE01, 0x8000, 0x0001, 0x7F80, 0xFF80, 0x7FC0, 0xFF81, 0x8001,
            0x7BFF,
        ];
        const W8: [u8; 9] = [0x7C, 0xFC, 0x7F, 0xFF, 0x80, 0x00, 0x01, 0x7D, 0xFE];
        for chunk in bytes.chunks_mut(8) {
            let r = self.next();
            let pick = |table_len: usize, shift: u32| (r >> shift) as usize % table_len;
            let word: [u8; 8] = match r % 8 {
                0..=2 => self.next().to_ne_bytes(),
                3 => W64[pick(W64.len(), 8)].to_ne_bytes(),
                4 => {
                    let (a, b) = (W32[pick(W32.len(), 8)], W32[pick(W32.len(), 16)]);
                    (u64::from(a) | (u64::from(b) << 32)).to_ne_bytes()
                }
                5 => {
                    let mut w = [0u8; 8];
                    for (i, half) in w.chunks_mut(2).enumerate() {
                        half.copy_from_slice(&W16[pick(W16.len(), 8 + 8 * i as u32)].to_ne_bytes());
                    }
                    w
                }
                6 => std::array::from_fn(|i| W8[pick(W8.len(), 8 + 6 * i as u32)]),
                _ => [0; 8],
            };
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
    }
}

// ---------------------------------------------------------------------------------------
// The model: ewise.h and docs/SEMANTICS.md sections 3 to 5, written out independently
// ---------------------------------------------------------------------------------------

const F32: u32 = DML_TENSOR_DATA_TYPE_FLOAT32;
const F16: u32 = DML_TENSOR_DATA_TYPE_FLOAT16;
const U32: u32 = DML_TENSOR_DATA_TYPE_UINT32;
const U16: u32 = DML_TENSOR_DATA_TYPE_UINT16;
const U8: u32 = DML_TENSOR_DATA_TYPE_UINT8;
const I32: u32 = DML_TENSOR_DATA_TYPE_INT32;
const I16: u32 = DML_TENSOR_DATA_TYPE_INT16;
const I8: u32 = DML_TENSOR_DATA_TYPE_INT8;
const F64: u32 = DML_TENSOR_DATA_TYPE_FLOAT64;
const U64: u32 = DML_TENSOR_DATA_TYPE_UINT64;
const I64: u32 = DML_TENSOR_DATA_TYPE_INT64;
const U4: u32 = DML_TENSOR_DATA_TYPE_UINT4;
const I4: u32 = DML_TENSOR_DATA_TYPE_INT4;
const BF16: u32 = EWISE_TENSOR_DATA_TYPE_BFLOAT16;
const BOOL: u32 = EWISE_TENSOR_DATA_TYPE_BOOL;
const F8A: u32 = EWISE_TENSOR_DATA_TYPE_FLOAT8E4M3FN;
const F8B: u32 = EWISE_TENSOR_DATA_TYPE_FLOAT8E4M3FNUZ;
const F8C: u32 = EWISE_TENSOR_DATA_TYPE_FLOAT8E5M2;
const F8D: u32 = EWISE_TENSOR_DATA_TYPE_FLOAT8E5M2FNUZ;

/// Every data type number (UNKNOWN 0 is none).
const ALL_TYPES: [u32; 19] = [
    F32, F16, U32, U16, U8, I32, I16, I8, F64, U64, I64, U4, I4, BF16, BOOL, F8A, F8B, F8C, F8D,
];
const SIGN_TYPES_PREFERRED: [u32; 12] = [F32, F16, I8, I16, I32, I64, U8, U16, U32, U64, F64, BF16];
const INF_INPUT_PREFERRED: [u32; 8] = [F32, F16, F64, BF16, F8A, F8B, F8C, F8D];
const INF_OUTPUT_PREFERRED: [u32; 4] = [U8, U8, U8, BOOL];

/// DML_FEATURE_LEVEL values, the latest first.
const LEVELS: [u32; 15] = [
    0x6400, 0x6300, 0x6200, 0x6100, 0x6000, 0x5200, 0x5100, 0x5000, 0x4100, 0x4000, 0x3100, 0x3000,
    0x2100, 0x2000, 0x1000,
];
const L2_0: u32 = 0x2000;
const L2_1: u32 = 0x2100;
const L3_0: u32 = 0x3000;
const L4_1: u32 = 0x4100;

/// Sizes and Strides arrays hold at most this many entries (more than the 64 dimensions
/// a device with Extensions accepts); a larger DimensionCount must be refused before
/// its arrays are read.
const ARRAY_CAP: usize = 72;
/// Buffers are at most this long; a binding that needs more meets a shorter buffer.
const BUFFER_CAP: u64 = 1 << 17;
/// Output layouts up to this many elements are checked for shared addresses one by one.
const OVERLAP_CHECK: u128 = 1 << 16;

fn known_type(raw: u32) -> bool {
    ALL_TYPES.contains(&raw)
}

fn element_size(raw: u32) -> Option<u64> {
    match raw {
        F64 | U64 | I64 => Some(8),
        F32 | U32 | I32 => Some(4),
        F16 | U16 | I16 | BF16 => Some(2),
        U8 | I8 | BOOL | F8A | F8B | F8C | F8D => Some(1),
        _ => None,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Sign,
    IsInfinity,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Input,
    Output,
}

/// What a created device validates at.
#[derive(Debug, Clone, Copy)]
struct Rules {
    level: u32,
    extensions: bool,
    policy: NanPolicy,
}

impl Rules {
    fn introduced(self, op: Op) -> bool {
        self.level
            >= match op {
                Op::Sign => L2_0,
                Op::IsInfinity => L2_1,
            }
    }

    /// docs/SEMANTICS.md section 3's tables, and ewise.h's extension types.
    fn accepts(self, op: Op, role: Role, raw: u32) -> bool {
        let ext = self.extensions;
        match (op, role) {
            (Op::Sign, _) if ext => SIGN_TYPES_PREFERRED.contains(&raw),
            (Op::Sign, _) => match raw {
                F32 | F16 => true,
                I32 | I16 | I8 | U32 | U16 | U8 => self.level >= L2_1,
                I64 | U64 => self.level >= L4_1,
                _ => false,
            },
            (Op::IsInfinity, Role::Input) if ext => INF_INPUT_PREFERRED.contains(&raw),
            (Op::IsInfinity, Role::Input) => matches!(raw, F32 | F16),
            (Op::IsInfinity, Role::Output) if ext => matches!(raw, U8 | BOOL),
            (Op::IsInfinity, Role::Output) => raw == U8,
        }
    }

    fn dimensions(self) -> (u32, u32) {
        if self.extensions {
            (0, 64)
        } else if self.level < L3_0 {
            (4, 4)
        } else {
            (1, 8)
        }
    }

    /// DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT's answer for a known type.
    fn supports(self, raw: u32) -> bool {
        (self.introduced(Op::Sign) && self.accepts(Op::Sign, Role::Input, raw))
            || (self.introduced(Op::IsInfinity)
                && (self.accepts(Op::IsInfinity, Role::Input, raw)
                    || self.accepts(Op::IsInfinity, Role::Output, raw)))
    }
}

/// The kinds of failure a call may answer, each with the rule broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Invalid,
    Unsupported,
    OutOfMemory,
    /// A rule whose refusal is allowed but not required (EWISE_OK or INVALID_ARGUMENT).
    MaybeInvalid,
}

/// The rules a call breaks, in the model's view.
#[derive(Debug, Default)]
struct Expect {
    faults: Vec<(Class, String)>,
}

impl Expect {
    fn add(&mut self, class: Class, why: impl Into<String>) {
        self.faults.push((class, why.into()));
    }

    fn invalid(&mut self, why: impl Into<String>) {
        self.add(Class::Invalid, why);
    }

    fn unsupported(&mut self, why: impl Into<String>) {
        self.add(Class::Unsupported, why);
    }

    /// Whether a definite fault is recorded (so the call must fail).
    fn fails(&self) -> bool {
        self.faults.iter().any(|(c, _)| *c != Class::MaybeInvalid)
    }

    fn allows(&self, status: EWISE_STATUS) -> bool {
        let has = |class| self.faults.iter().any(|(c, _)| *c == class);
        match status {
            EWISE_OK => !self.fails(),
            EWISE_ERROR_INVALID_ARGUMENT => has(Class::Invalid) || has(Class::MaybeInvalid),
            EWISE_ERROR_NOT_SUPPORTED => has(Class::Unsupported),
            EWISE_ERROR_OUT_OF_MEMORY => has(Class::OutOfMemory),
            _ => false,
        }
    }
}

/// This thread's last message, checked to be a valid string.
fn last_error(call: &str) -> String {
    let p = ewise_last_error();
    assert!(!p.is_null(), "{call}: ewise_last_error() is NULL");
    // SAFETY: ewise_last_error's promise: a NUL-terminated string, valid until the next
    // status-returning call on this thread.
    let text = unsafe { CStr::from_ptr(p) };
    text.to_str()
        .unwrap_or_else(|_| panic!("{call}: ewise_last_error() is not UTF-8: {text:?}"))
        .to_owned()
}

/// Checks one status against the contract and the model; `context` describes the call
/// (built only on failure).
fn answered(
    call: &str,
    status: EWISE_STATUS,
    expect: &Expect,
    context: &dyn Fn() -> String,
) -> EWISE_STATUS {
    let message = last_error(call);
    let fail = |what: String| -> ! {
        panic!(
            "{call}: {what}\n  status {status}, message {message:?}\n  model's faults: {:?}\n  \
             call: {}",
            expect.faults,
            context()
        )
    };
    if status > EWISE_ERROR_INTERNAL {
        fail("a status that is no EWISE_STATUS".into());
    }
    if status == EWISE_ERROR_INTERNAL {
        fail("EWISE_ERROR_INTERNAL (a bug, a caught panic)".into());
    }
    if status == EWISE_OK && !message.is_empty() {
        fail("EWISE_OK with a non-empty ewise_last_error()".into());
    }
    if status != EWISE_OK && message.is_empty() {
        fail("a failure without a message".into());
    }
    let hresult = [0, 0x8007_0057_u32, 0x887A_0004, 0x8007_000E, 0x887A_0005][status as usize];
    if ewise_status_hresult(status) != hresult as i32 {
        fail(format!(
            "ewise_status_hresult gives {:#x}",
            ewise_status_hresult(status)
        ));
    }
    if !expect.allows(status) {
        fail("a status the model does not allow".into());
    }
    status
}

/// The value an out-pointer holds before a call: it must still hold it after a failure.
fn sentinel<T>() -> *mut T {
    NonNull::<T>::dangling().as_ptr()
}

fn check_out<T>(call: &str, status: EWISE_STATUS, out: *mut T) {
    if status == EWISE_OK {
        assert!(
            out != sentinel() && !out.is_null(),
            "{call}: EWISE_OK without a handle"
        );
    } else {
        assert!(
            out == sentinel(),
            "{call}: status {status} but the out-pointer was written"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Descriptions
// ---------------------------------------------------------------------------------------

/// One tensor as the bytes chose it, with the storage its C structs point into.
#[derive(Debug, Clone)]
struct TensorGen {
    /// The operator desc's pointer to the DML_TENSOR_DESC is not NULL.
    present: bool,
    /// DML_TENSOR_DESC.Type.
    tensor_type: u32,
    /// DML_TENSOR_DESC.Desc is not NULL.
    desc_present: bool,
    data_type: u32,
    flags: u32,
    dimension_count: u32,
    /// None: Sizes NULL; otherwise min(DimensionCount, ARRAY_CAP) entries.
    sizes: Option<Vec<u32>>,
    strides: Option<Vec<u32>>,
    total: u64,
    alignment: u32,
}

/// DimensionCount and sizes shared by an operator's two tensors (unless mutated).
#[derive(Debug, Clone)]
struct Shape {
    dimension_count: u32,
    sizes: Vec<u32>,
}

fn gen_shape(inp: &mut Input, rules: Rules) -> Shape {
    let b = inp.byte();
    let four_only = rules.dimensions() == (4, 4);
    let dimension_count = match b {
        0..=199 if four_only && b < 150 => 4,
        0..=199 => 1 + u32::from(b % 4),
        200..=217 => 0,
        218..=237 => 5 + u32::from(b % 4),
        238..=251 => 9 + u32::from(inp.byte()) % 64,
        _ => inp.pick(&[u32::MAX, 65, 1 << 31, 1000]),
    };
    let n = (dimension_count as usize).min(ARRAY_CAP);
    let sizes = (0..n)
        .map(|i| {
            let b = inp.byte();
            match b {
                // More dimensions, smaller sizes: executions stay a few KiB.
                0..=199 if n > 4 => 1 + u32::from(b % 2),
                0..=199 if i == 0 => 1 + u32::from(b % 6),
                0..=199 => 1 + u32::from(b % 4),
                200..=214 => 0,
                215..=234 => 5 + u32::from(b % 12),
                235..=249 => u32::from(inp.u16()) + 1,
                _ => inp.pick(&[u32::MAX, 1 << 31, 65536, 3 << 20]),
            }
        })
        .collect();
    Shape {
        dimension_count,
        sizes,
    }
}

/// Row-major packed strides over `sizes`, wrapping in u32 (the model computes with
/// whatever the caller gives).
fn packed(sizes: &[u32]) -> Vec<u32> {
    let mut strides = vec![0u32; sizes.len()];
    let mut acc = 1u32;
    for (s, &n) in strides.iter_mut().zip(sizes).rev() {
        *s = acc;
        acc = acc.wrapping_mul(n.max(1));
    }
    strides
}

fn gen_strides(inp: &mut Input, sizes: &[u32]) -> Option<Vec<u32>> {
    let b = inp.byte();
    let strides = match b {
        0..=119 => return None,
        120..=151 => packed(sizes),
        152..=175 => {
            // Column-major (a transpose).
            let mut reversed: Vec<u32> = sizes.iter().rev().copied().collect();
            reversed = packed(&reversed);
            reversed.reverse();
            reversed
        }
        176..=199 => {
            // Padded rows: packed over larger sizes.
            let padded: Vec<u32> = sizes
                .iter()
                .map(|&n| n.saturating_add(u32::from(inp.byte() % 3)))
                .collect();
            packed(&padded)
        }
        200..=227 => sizes.iter().map(|_| u32::from(inp.byte() % 7)).collect(),
        228..=243 => {
            // Broadcast some dimensions.
            let mut s = packed(sizes);
            for v in &mut s {
                if inp.byte() % 2 == 1 {
                    *v = 0;
                }
            }
            s
        }
        _ => sizes
            .iter()
            .map(|_| match inp.byte() % 4 {
                0 => inp.u32(),
                1 => u32::MAX,
                _ => u32::from(inp.u16()),
            })
            .collect(),
    };
    Some(strides)
}

fn gen_type(inp: &mut Input, preferred: &[u32]) -> u32 {
    let b = inp.byte();
    match b {
        0..=179 => preferred[b as usize % preferred.len()],
        180..=241 => ALL_TYPES[b as usize % ALL_TYPES.len()],
        242..=247 => 0,
        _ => inp.u32(),
    }
}

/// DMLCalcBufferTensorSize (ewise.h's formula), None on overflow or a type without a
/// byte size.
fn min_size(raw: u32, sizes: &[u32], strides: Option<&[u32]>) -> Option<u64> {
    let es = u128::from(element_size(raw)?);
    if sizes.contains(&0) {
        return Some(0);
    }
    let elements = match strides {
        None => sizes
            .iter()
            .try_fold(1u128, |acc, &n| acc.checked_mul(u128::from(n)))?,
        Some(strides) => {
            1 + sizes
                .iter()
                .zip(strides)
                .map(|(&n, &s)| u128::from(n - 1) * u128::from(s))
                .sum::<u128>()
        }
    };
    let bytes = elements.checked_mul(es)?;
    u64::try_from(bytes.div_ceil(4) * 4).ok()
}

fn gen_tensor(inp: &mut Input, shape: &Shape, data_type: u32) -> TensorGen {
    let strides = gen_strides(inp, &shape.sizes);
    let exact = if shape.dimension_count as usize <= ARRAY_CAP {
        min_size(data_type, &shape.sizes, strides.as_deref())
    } else {
        None
    };
    let b = inp.byte();
    let total = match b {
        0..=179 => exact.unwrap_or(64),
        180..=207 => exact
            .unwrap_or(0)
            .saturating_add(1 + u64::from(inp.byte() % 64)),
        208..=227 => exact
            .unwrap_or(0)
            .saturating_sub(1 + u64::from(inp.byte() % 8)),
        228..=235 => 0,
        236..=243 => u64::MAX,
        _ => inp.u64(),
    };
    let b = inp.byte();
    let alignment = match b {
        0..=199 => 0,
        200..=241 => 1 << (b % 8),
        _ => inp.u32(),
    };
    let b = inp.byte();
    let flags = match b {
        0..=245 => DML_TENSOR_FLAG_NONE,
        246..=250 => DML_TENSOR_FLAG_OWNED_BY_DML,
        _ => inp.u32(),
    };
    let present = !inp.rare(3);
    let tensor_type = if inp.rare(3) {
        inp.pick(&[DML_TENSOR_TYPE_INVALID, 2, u32::MAX])
    } else {
        DML_TENSOR_TYPE_BUFFER
    };
    let desc_present = !inp.rare(3);
    let sizes = (!inp.rare(3)).then(|| shape.sizes.clone());
    TensorGen {
        present,
        tensor_type,
        desc_present,
        data_type,
        flags,
        dimension_count: shape.dimension_count,
        sizes,
        strides,
        total,
        alignment,
    }
}

/// A tensor as created: what executions are checked against.
#[derive(Debug, Clone)]
struct TensorModel {
    data_type: DataType,
    element_size: u64,
    sizes: Vec<u32>,
    /// Effective strides in elements (packed ones when Strides is NULL).
    strides: Vec<u64>,
    strided: bool,
    total: u64,
    /// Binding offsets must be multiples of this.
    alignment: u64,
}

impl TensorModel {
    fn of(t: &TensorGen) -> TensorModel {
        let sizes = t.sizes.clone().unwrap_or_default();
        let strides = match &t.strides {
            Some(s) => s.iter().map(|&v| u64::from(v)).collect(),
            None => {
                let mut s = vec![0u64; sizes.len()];
                let mut acc = 1u64;
                for (v, &n) in s.iter_mut().zip(&sizes).rev() {
                    *v = acc;
                    acc = acc.saturating_mul(u64::from(n));
                }
                s
            }
        };
        TensorModel {
            data_type: DataType::from_raw(t.data_type).expect("a created tensor's type"),
            element_size: element_size(t.data_type).expect("a created tensor's type"),
            sizes,
            strides,
            strided: t.strides.is_some(),
            total: t.total,
            alignment: match t.alignment {
                0 => 16,
                a => u64::from(a),
            },
        }
    }
}

/// Whether two elements of an output layout share an address: None when too many to
/// check and the strides do not nest (ewise may refuse those either way).
fn output_overlaps(sizes: &[u32], strides: &[u32]) -> Option<bool> {
    let count = sizes
        .iter()
        .fold(1u128, |acc, &n| acc.saturating_mul(u128::from(n)));
    if count == 0 {
        return Some(false);
    }
    let mut dims: Vec<(u128, u128)> = sizes
        .iter()
        .zip(strides)
        .filter(|(&n, _)| n > 1)
        .map(|(&n, &s)| (u128::from(n), u128::from(s)))
        .collect();
    if count <= OVERLAP_CHECK {
        let mut addresses = vec![0u128];
        for &(n, s) in &dims {
            addresses = addresses
                .iter()
                .flat_map(|&a| (0..n).map(move |i| a + i * s))
                .collect();
        }
        addresses.sort_unstable();
        return Some(addresses.windows(2).any(|w| w[0] == w[1]));
    }
    dims.sort_by_key(|&(_, s)| s);
    let mut extent = 0u128;
    for &(n, s) in &dims {
        if s <= extent {
            return None;
        }
        extent += (n - 1) * s;
    }
    Some(false)
}

/// The model of one tensor of `ewise_create_operator`; true when its arrays were
/// readable and it can be compared with the other tensor.
fn tensor_faults(t: &TensorGen, op: Op, role: Role, rules: Rules, e: &mut Expect) -> bool {
    let name = format!("{op:?} {role:?}");
    if !t.present {
        e.invalid(format!("{name}: DML_TENSOR_DESC* NULL"));
        return false;
    }
    if t.tensor_type != DML_TENSOR_TYPE_BUFFER {
        e.invalid(format!("{name}: DML_TENSOR_DESC.Type {}", t.tensor_type));
        return false;
    }
    if !t.desc_present {
        e.invalid(format!("{name}: DML_TENSOR_DESC.Desc NULL"));
        return false;
    }
    if !known_type(t.data_type) {
        e.invalid(format!("{name}: DataType {} is no type", t.data_type));
    } else if !rules.accepts(op, role, t.data_type) {
        e.unsupported(format!("{name}: DataType {} not accepted", t.data_type));
    }
    if t.flags != 0 {
        e.invalid(format!("{name}: Flags {:#x}", t.flags));
    }
    let (lo, hi) = rules.dimensions();
    if t.dimension_count < lo || t.dimension_count > hi {
        e.invalid(format!(
            "{name}: DimensionCount {} outside {lo}..={hi}",
            t.dimension_count
        ));
        // Above the maximum the arrays must not even be read.
        if t.dimension_count > hi {
            return false;
        }
    }
    // Sizes NULL is fine for DimensionCount 0: no entry is read.
    let sizes: &[u32] = match &t.sizes {
        Some(sizes) => sizes,
        None if t.dimension_count > 0 => {
            e.invalid(format!("{name}: Sizes NULL"));
            return false;
        }
        None => &[],
    };
    if !rules.extensions {
        if sizes.contains(&0) {
            e.invalid(format!("{name}: a size of 0"));
        }
        let count = sizes
            .iter()
            .fold(1u128, |acc, &n| acc.saturating_mul(u128::from(n)));
        if count > u128::from(u32::MAX) {
            e.invalid(format!("{name}: {count} elements"));
        }
    }
    if let (Role::Output, Some(strides)) = (role, &t.strides) {
        let empty = sizes.contains(&0);
        if sizes.iter().zip(strides).any(|(&n, &s)| s == 0 && n > 1) {
            let class = if empty {
                Class::MaybeInvalid
            } else {
                Class::Invalid
            };
            e.add(class, format!("{name}: an output stride of 0"));
        }
        match output_overlaps(sizes, strides) {
            Some(false) => {}
            Some(true) => e.invalid(format!("{name}: output elements share addresses")),
            None => e.add(
                Class::MaybeInvalid,
                format!("{name}: output overlap unknown"),
            ),
        }
    }
    if element_size(t.data_type).is_some() {
        match min_size(t.data_type, sizes, t.strides.as_deref()) {
            Some(required) if required <= isize::MAX as u64 => {
                if t.total < required {
                    e.invalid(format!(
                        "{name}: TotalTensorSizeInBytes {} below {required}",
                        t.total
                    ));
                }
            }
            _ => e.invalid(format!("{name}: the byte size overflows")),
        }
        let es = element_size(t.data_type).unwrap_or(1);
        let a = t.alignment;
        if a != 0 && (!a.is_power_of_two() || u64::from(a) < es) {
            e.invalid(format!("{name}: GuaranteedBaseOffsetAlignment {a}"));
        }
    }
    true
}

/// An operator as the bytes chose it.
#[derive(Debug, Clone)]
struct OpGen {
    device_null: bool,
    desc_null: bool,
    inner_null: bool,
    out_null: bool,
    operator_type: u32,
    op: Op,
    input: TensorGen,
    output: TensorGen,
    mode: u32,
}

fn gen_mode(inp: &mut Input) -> u32 {
    let b = inp.byte();
    match b {
        0..=209 => u32::from(b % 3),
        210..=234 => EWISE_IS_INFINITY_MODE_NEITHER,
        _ => inp.pick(&[3, 999, 1001, u32::MAX, 0x8000_0000]),
    }
}

fn gen_operator(inp: &mut Input, rules: Rules) -> OpGen {
    let b = inp.byte();
    let (operator_type, op) = match b {
        0..=119 => (DML_OPERATOR_ELEMENT_WISE_SIGN, Op::Sign),
        120..=241 => (DML_OPERATOR_ELEMENT_WISE_IS_INFINITY, Op::IsInfinity),
        _ => (inp.pick(&[0, 1, 78, 80, 99, 101, u32::MAX]), Op::Sign),
    };
    let shape = gen_shape(inp, rules);
    let (in_type, out_type) = match op {
        Op::Sign => {
            let t = gen_type(inp, &SIGN_TYPES_PREFERRED);
            let out = if inp.rare(12) {
                gen_type(inp, &ALL_TYPES)
            } else {
                t
            };
            (t, out)
        }
        Op::IsInfinity => (
            gen_type(inp, &INF_INPUT_PREFERRED),
            gen_type(inp, &INF_OUTPUT_PREFERRED),
        ),
    };
    let input = gen_tensor(inp, &shape, in_type);
    let out_shape = if inp.rare(10) {
        gen_shape(inp, rules)
    } else {
        shape
    };
    let output = gen_tensor(inp, &out_shape, out_type);
    OpGen {
        device_null: inp.rare(3),
        desc_null: inp.rare(3),
        inner_null: inp.rare(3),
        out_null: inp.rare(3),
        operator_type,
        op,
        input,
        output,
        mode: gen_mode(inp),
    }
}

fn expect_operator(g: &OpGen, rules: Rules) -> Expect {
    let mut e = Expect::default();
    if g.device_null {
        e.invalid("device NULL");
    }
    if g.out_null {
        e.invalid("op NULL");
    }
    if g.desc_null {
        e.invalid("desc NULL");
    }
    if e.fails() {
        return e;
    }
    if g.operator_type != DML_OPERATOR_ELEMENT_WISE_SIGN
        && g.operator_type != DML_OPERATOR_ELEMENT_WISE_IS_INFINITY
    {
        e.unsupported(format!("operator type {}", g.operator_type));
        return e;
    }
    if g.inner_null {
        e.invalid("DML_OPERATOR_DESC.Desc NULL");
        return e;
    }
    if !rules.introduced(g.op) {
        e.unsupported(format!("{:?} not introduced at {:#x}", g.op, rules.level));
    }
    if g.op == Op::IsInfinity {
        let neither = g.mode == EWISE_IS_INFINITY_MODE_NEITHER;
        if !(g.mode <= 2 || neither) {
            e.invalid(format!("InfinityMode {}", g.mode));
        } else if neither && !rules.extensions {
            e.invalid("InfinityMode NEITHER on a strict device");
        }
    }
    let a = tensor_faults(&g.input, g.op, Role::Input, rules, &mut e);
    let b = tensor_faults(&g.output, g.op, Role::Output, rules, &mut e);
    if a && b {
        let (i, o) = (&g.input, &g.output);
        if g.op == Op::Sign
            && known_type(i.data_type)
            && known_type(o.data_type)
            && i.data_type != o.data_type
        {
            e.invalid("SIGN: input and output data types differ");
        }
        let sizes = |t: &TensorGen| t.sizes.clone().unwrap_or_default();
        if i.dimension_count != o.dimension_count || sizes(i) != sizes(o) {
            e.invalid("input and output sizes differ");
        }
    }
    e
}

/// Builds the C structs of `g` and calls `ewise_create_operator`.
fn create_operator(
    g: &OpGen,
    device: *mut ewise_device,
    rules: Rules,
) -> (EWISE_STATUS, *mut ewise_operator) {
    let arrays = |t: &TensorGen| {
        (
            t.sizes.as_ref().map_or(null(), |v| v.as_ptr()),
            t.strides.as_ref().map_or(null(), |v| v.as_ptr()),
        )
    };
    let buffer_desc = |t: &TensorGen| {
        let (sizes, strides) = arrays(t);
        DML_BUFFER_TENSOR_DESC {
            DataType: t.data_type,
            Flags: t.flags,
            DimensionCount: t.dimension_count,
            Sizes: sizes,
            Strides: strides,
            TotalTensorSizeInBytes: t.total,
            GuaranteedBaseOffsetAlignment: t.alignment,
        }
    };
    let (in_buffer, out_buffer) = (buffer_desc(&g.input), buffer_desc(&g.output));
    let tensor = |t: &TensorGen, b: &DML_BUFFER_TENSOR_DESC| DML_TENSOR_DESC {
        Type: t.tensor_type,
        Desc: if t.desc_present {
            (b as *const DML_BUFFER_TENSOR_DESC).cast()
        } else {
            null()
        },
    };
    let (in_tensor, out_tensor) = (tensor(&g.input, &in_buffer), tensor(&g.output, &out_buffer));
    let tensor_ptr = |t: &TensorGen, d: &DML_TENSOR_DESC| {
        if t.present {
            d as *const DML_TENSOR_DESC
        } else {
            null()
        }
    };
    let (in_ptr, out_ptr) = (
        tensor_ptr(&g.input, &in_tensor),
        tensor_ptr(&g.output, &out_tensor),
    );
    let sign = DML_ELEMENT_WISE_SIGN_OPERATOR_DESC {
        InputTensor: in_ptr,
        OutputTensor: out_ptr,
    };
    let is_inf = DML_ELEMENT_WISE_IS_INFINITY_OPERATOR_DESC {
        InputTensor: in_ptr,
        OutputTensor: out_ptr,
        InfinityMode: g.mode,
    };
    let inner: *const c_void = if g.inner_null {
        null()
    } else if g.operator_type == DML_OPERATOR_ELEMENT_WISE_SIGN {
        (&sign as *const DML_ELEMENT_WISE_SIGN_OPERATOR_DESC).cast()
    } else {
        // IS_INFINITY's desc, and for any other type something valid to (not) read.
        (&is_inf as *const DML_ELEMENT_WISE_IS_INFINITY_OPERATOR_DESC).cast()
    };
    let desc = DML_OPERATOR_DESC {
        Type: g.operator_type,
        Desc: inner,
    };
    let mut op = sentinel::<ewise_operator>();
    // SAFETY: every non-NULL pointer points to a live struct of its type, and Sizes /
    // Strides to DimensionCount entries, or ARRAY_CAP when DimensionCount is larger than
    // any device accepts (refused before the arrays are read).
    let status = unsafe {
        ewise_create_operator(
            if g.device_null { null_mut() } else { device },
            if g.desc_null { null() } else { &desc },
            if g.out_null { null_mut() } else { &mut op },
        )
    };
    let expect = expect_operator(g, rules);
    answered("ewise_create_operator", status, &expect, &|| {
        format!("{g:#?}\n  device rules {rules:?}")
    });
    check_out("ewise_create_operator", status, op);
    (status, if status == EWISE_OK { op } else { null_mut() })
}

// ---------------------------------------------------------------------------------------
// Memory: buffers and the model of every byte
// ---------------------------------------------------------------------------------------

/// Host memory owned by the harness through a raw pointer (ewise may read and write it
/// through wrapped buffers), freed on drop.
struct Raw {
    ptr: *mut u8,
    len: usize,
}

impl Raw {
    fn new(len: usize, rng: &mut Rng) -> Raw {
        let mut v = vec![0u8; len.max(1)];
        rng.fill(&mut v);
        let len = v.len();
        let ptr = Box::into_raw(v.into_boxed_slice()).cast::<u8>();
        Raw { ptr, len }
    }

    fn snapshot(&self) -> Vec<u8> {
        // SAFETY: the allocation is live; no call into ewise runs meanwhile.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }.to_vec()
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        // SAFETY: from Box::into_raw of a boxed slice of `len` bytes.
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(self.ptr, self.len)) });
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// ewise_create_buffer on the device.
    Owned,
    /// ewise_wrap_host_memory over the arena at `at`.
    Wrapped { at: usize },
    /// ewise_create_buffer on the second device.
    Foreign,
}

#[derive(Debug)]
struct Buf {
    handle: *mut ewise_buffer,
    kind: Kind,
    len: u64,
    /// Model of an owned or foreign buffer's bytes (wrapped ones live in the arena).
    bytes: Vec<u8>,
}

/// Every buffer, the wrapped arena, and the model of their bytes.
struct Memory {
    bufs: Vec<Buf>,
    arena: Raw,
    arena_model: Vec<u8>,
}

impl Memory {
    /// Reads every live buffer and the arena and compares them with the model.
    fn verify(&self, after: &str, context: &dyn Fn() -> String) {
        for (i, b) in self.bufs.iter().enumerate() {
            if b.handle.is_null() || matches!(b.kind, Kind::Wrapped { .. }) {
                continue;
            }
            let mut actual = vec![0u8; b.len as usize];
            // SAFETY: a live handle and `len` writable bytes.
            let status =
                unsafe { ewise_buffer_read(b.handle, 0, actual.as_mut_ptr().cast(), b.len) };
            answered(
                "ewise_buffer_read (verify)",
                status,
                &Expect::default(),
                context,
            );
            compare(
                after,
                &format!("buffer {i} ({:?})", b.kind),
                &b.bytes,
                &actual,
                context,
            );
        }
        compare(
            after,
            "the wrapped allocation",
            &self.arena_model,
            &self.arena.snapshot(),
            context,
        );
    }

    /// The model bytes of buffer `i`.
    fn model_mut(&mut self, i: usize) -> &mut [u8] {
        let len = self.bufs[i].len as usize;
        match self.bufs[i].kind {
            Kind::Wrapped { at } => &mut self.arena_model[at..at + len],
            _ => &mut self.bufs[i].bytes,
        }
    }
}

fn compare(after: &str, what: &str, expected: &[u8], actual: &[u8], context: &dyn Fn() -> String) {
    if expected == actual {
        return;
    }
    let diffs: Vec<String> = expected
        .iter()
        .zip(actual)
        .enumerate()
        .filter(|(_, (e, a))| e != a)
        .take(8)
        .map(|(i, (e, a))| format!("byte {i}: expected {e:#04x}, got {a:#04x}"))
        .collect();
    panic!(
        "after {after}: {what} differs from the model ({} bytes differ; first: {})\n  {}",
        expected.iter().zip(actual).filter(|(e, a)| e != a).count(),
        diffs.join(", "),
        context()
    );
}

fn read_bits(bytes: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    if cfg!(target_endian = "little") {
        b[..bytes.len()].copy_from_slice(bytes);
        u64::from_le_bytes(b)
    } else {
        b[8 - bytes.len()..].copy_from_slice(bytes);
        u64::from_be_bytes(b)
    }
}

fn write_bits(bytes: &mut [u8], value: u64) {
    let n = bytes.len();
    if cfg!(target_endian = "little") {
        bytes.copy_from_slice(&value.to_le_bytes()[..n]);
    } else {
        bytes.copy_from_slice(&value.to_be_bytes()[8 - n..]);
    }
}

/// The scalar reference of one element.
fn reference(op: Op, data_type: DataType, bits: u64, policy: NanPolicy, mode: InfinityMode) -> u64 {
    match op {
        Op::Sign => sign_bits(data_type, bits, policy),
        Op::IsInfinity => is_infinity_bits(data_type, bits, mode).map(u64::from),
    }
    .unwrap_or_else(|| panic!("no reference for {op:?} of {data_type:?}: a model bug"))
}

// ---------------------------------------------------------------------------------------
// The program
// ---------------------------------------------------------------------------------------

/// Runs one input; panics on any broken contract. Returns what it reached.
pub fn check(data: &[u8]) -> Vec<Event> {
    let mut inp = Input { data };
    let mut events = Vec::new();
    let seed = inp.u64();
    let mut rng = Rng((seed ^ 0x9E37_79B9_7F4A_7C15) | 1);

    // ewise_version: a static NUL-terminated string.
    // SAFETY: ewise_version's promise.
    let version = unsafe { CStr::from_ptr(ewise_version()) };
    assert_eq!(version.to_str().ok(), Some("0.1.0"), "ewise_version");

    let Some((device, rules)) = create_device(&mut inp, &mut events) else {
        null_device_calls();
        return events;
    };
    let other = if inp.rare(40) {
        let desc = EWISE_DEVICE_DESC {
            Kind: EWISE_DEVICE_CPU,
            FeatureLevel: 0x6400,
            Extensions: 1,
            NanPolicy: EWISE_NAN_ZERO,
        };
        let mut d = sentinel::<ewise_device>();
        // SAFETY: valid pointers.
        let status = unsafe { ewise_create_device(&desc, &mut d) };
        answered(
            "ewise_create_device (second)",
            status,
            &Expect::default(),
            &|| format!("{desc:?}"),
        );
        d
    } else {
        null_mut()
    };

    for _ in 0..inp.byte() % 3 {
        feature_query(&mut inp, device, rules, &mut events);
    }
    for _ in 0..inp.byte() % 3 {
        host_call(&mut inp, device, rules, &mut rng, &mut events);
    }

    // The operator and its compiled form.
    let g = gen_operator(&mut inp, rules);
    let (status, op) = create_operator(&g, device, rules);
    let model = if op.is_null() {
        events.push(if status == EWISE_ERROR_NOT_SUPPORTED {
            Event::OperatorRefusedUnsupported
        } else {
            Event::OperatorRefusedInvalid
        });
        None
    } else {
        events.push(Event::OperatorCreated);
        Some(OpModel {
            op: g.op,
            input: TensorModel::of(&g.input),
            output: TensorModel::of(&g.output),
            mode: InfinityMode::ALL
                .into_iter()
                .find(|m| m.raw() == g.mode)
                .unwrap_or(InfinityMode::Either),
            policy: rules.policy,
        })
    };
    let compiled = compile(&mut inp, device, other, op, &mut events);
    let model = model.filter(|_| !compiled.is_null());

    // Buffers and bindings.
    let plan = gen_plan(&mut inp, model.as_ref(), !other.is_null());
    let mut memory = create_buffers(&mut inp, &plan, device, other, &mut rng, &mut events);
    for _ in 0..inp.byte() % 3 {
        probe_buffer(&mut inp, &mut memory, &mut events);
    }

    // Handles given up before the executions: the children keep the device alive.
    let mut device = device;
    let mut op = op;
    let mut other = other;
    let device_released = inp.byte() >= 128;
    if device_released {
        // SAFETY: a live handle, not used again.
        unsafe { ewise_release_device(device) };
        device = null_mut();
    }
    if inp.byte() >= 128 {
        // SAFETY: NULL or a live handle, not used again.
        unsafe { ewise_release_operator(op) };
        op = null_mut();
    }
    if inp.byte() >= 128 {
        // SAFETY: NULL or a live handle, not used again.
        unsafe { ewise_release_device(other) };
        other = null_mut();
    }

    for _ in 0..1 + inp.byte() % 2 {
        execute(
            &mut inp,
            compiled,
            model.as_ref(),
            &plan,
            &mut memory,
            device_released,
            &mut events,
        );
    }

    // Everything else, in an order the bytes choose.
    let mut handles: Vec<Handle> = vec![
        Handle::Device(device),
        Handle::Device(other),
        Handle::Operator(op),
        Handle::Compiled(compiled),
    ];
    handles.extend(memory.bufs.iter().map(|b| Handle::Buffer(b.handle)));
    for i in (1..handles.len()).rev() {
        let j = inp.byte() as usize % (i + 1);
        handles.swap(i, j);
    }
    for h in handles {
        // SAFETY: each handle is NULL or live, and released once.
        unsafe {
            match h {
                Handle::Device(p) => ewise_release_device(p),
                Handle::Operator(p) => ewise_release_operator(p),
                Handle::Compiled(p) => ewise_release_compiled_operator(p),
                Handle::Buffer(p) => ewise_release_buffer(p),
            }
        }
    }
    // The wrapped memory is still the harness's, untouched by the releases.
    compare(
        "the releases",
        "the wrapped allocation",
        &memory.arena_model,
        &memory.arena.snapshot(),
        &|| String::new(),
    );
    events
}

enum Handle {
    Device(*mut ewise_device),
    Operator(*mut ewise_operator),
    Compiled(*mut ewise_compiled_operator),
    Buffer(*mut ewise_buffer),
}

#[derive(Debug, Clone)]
struct OpModel {
    op: Op,
    input: TensorModel,
    output: TensorModel,
    mode: InfinityMode,
    policy: NanPolicy,
}

fn create_device(inp: &mut Input, events: &mut Vec<Event>) -> Option<(*mut ewise_device, Rules)> {
    let b = inp.byte();
    let level = match b {
        0..=95 => LEVELS[0],
        96..=249 => LEVELS[b as usize % LEVELS.len()],
        _ => inp.pick(&[0, 0x1234, 0x6500, 0x2001, 0x7000, u32::MAX]),
    };
    let b = inp.byte();
    let extensions = match b {
        0..=119 => 0,
        120..=249 => 1,
        _ => inp.u32(),
    };
    let b = inp.byte();
    let nan = match b {
        0..=119 => EWISE_NAN_ZERO,
        120..=249 => EWISE_NAN_PROPAGATE,
        _ => inp.u32(),
    };
    // Never EWISE_DEVICE_GPU: the CPU device only.
    let kind = if inp.rare(4) {
        inp.u32() | 2
    } else {
        EWISE_DEVICE_CPU
    };
    let desc = EWISE_DEVICE_DESC {
        Kind: kind,
        FeatureLevel: level,
        Extensions: extensions,
        NanPolicy: nan,
    };
    let (desc_null, out_null) = (inp.rare(3), inp.rare(3));
    let mut e = Expect::default();
    if desc_null {
        e.invalid("desc NULL");
    }
    if out_null {
        e.invalid("device NULL");
    }
    if !desc_null && !out_null {
        // 0 is the latest level, 6_4: a zeroed description is DirectML's defaults.
        if level != 0 && !LEVELS.contains(&level) {
            e.invalid(format!("FeatureLevel {level:#x}"));
        }
        if extensions > 1 {
            e.invalid(format!("Extensions {extensions}"));
        }
        if nan > 1 {
            e.invalid(format!("NanPolicy {nan}"));
        }
        if kind > 1 {
            e.invalid(format!("Kind {kind}"));
        }
    }
    let mut device = sentinel::<ewise_device>();
    // SAFETY: NULL or valid pointers.
    let status = unsafe {
        ewise_create_device(
            if desc_null { null() } else { &desc },
            if out_null { null_mut() } else { &mut device },
        )
    };
    answered("ewise_create_device", status, &e, &|| {
        format!("{desc:?} desc_null {desc_null} out_null {out_null}")
    });
    check_out("ewise_create_device", status, device);
    if status != EWISE_OK {
        events.push(Event::DeviceRefused);
        return None;
    }
    let rules = Rules {
        level: if level == 0 { LEVELS[0] } else { level },
        extensions: extensions == 1,
        policy: if nan == EWISE_NAN_PROPAGATE {
            NanPolicy::Propagate
        } else {
            NanPolicy::Zero
        },
    };
    Some((device, rules))
}

/// Every device-taking function given a NULL device.
fn null_device_calls() {
    let invalid = {
        let mut e = Expect::default();
        e.invalid("device NULL");
        e
    };
    let none = &|| "NULL device".to_string();
    let mut op = sentinel::<ewise_operator>();
    let mut buffer = sentinel::<ewise_buffer>();
    let mut compiled = sentinel::<ewise_compiled_operator>();
    let mut bytes = [0u8; 8];
    let p = bytes.as_mut_ptr();
    // SAFETY: NULL handles, valid other pointers.
    unsafe {
        let s = ewise_create_operator(null_mut(), null(), &mut op);
        answered("ewise_create_operator", s, &invalid, none);
        let s = ewise_create_buffer(null_mut(), 16, &mut buffer);
        answered("ewise_create_buffer", s, &invalid, none);
        let s = ewise_wrap_host_memory(null_mut(), p.cast(), 8, &mut buffer);
        answered("ewise_wrap_host_memory", s, &invalid, none);
        let s = ewise_compile_operator(null_mut(), null_mut(), 0, &mut compiled);
        answered("ewise_compile_operator", s, &invalid, none);
        let s = ewise_sign(null_mut(), F32, p.cast(), p.cast(), 2);
        answered("ewise_sign", s, &invalid, none);
        let s = ewise_is_infinity(null_mut(), F32, 0, p.cast(), p, 1);
        answered("ewise_is_infinity", s, &invalid, none);
        let s = ewise_execute(null_mut(), null(), null());
        answered("ewise_execute", s, &invalid, none);
        let s = ewise_buffer_read(null_mut(), 0, p.cast(), 1);
        answered("ewise_buffer_read", s, &invalid, none);
        let s = ewise_buffer_write(null_mut(), 0, p.cast(), 1);
        answered("ewise_buffer_write", s, &invalid, none);
        ewise_release_device(null_mut());
        ewise_release_operator(null_mut());
        ewise_release_compiled_operator(null_mut());
        ewise_release_buffer(null_mut());
    }
    assert_eq!(op, sentinel());
    assert_eq!(buffer, sentinel());
    assert_eq!(compiled, sentinel());
    assert_eq!(bytes, [0; 8]);
}

fn feature_query(
    inp: &mut Input,
    device: *mut ewise_device,
    rules: Rules,
    events: &mut Vec<Event>,
) {
    let b = inp.byte();
    let feature = match b {
        0..=119 => DML_FEATURE_FEATURE_LEVELS,
        120..=241 => DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT,
        _ => inp.pick(&[2, 3, u32::MAX]),
    };
    let requested: Vec<u32> = (0..1 + inp.byte() % 4)
        .map(|_| {
            if inp.rare(8) {
                inp.pick(&[0, 0x2200, 0x6500, u32::MAX])
            } else {
                inp.pick(&LEVELS)
            }
        })
        .collect();
    let count = if inp.rare(6) {
        0
    } else {
        requested.len() as u32
    };
    let list_null = inp.rare(6);
    let levels = DML_FEATURE_QUERY_FEATURE_LEVELS {
        RequestedFeatureLevelCount: count,
        RequestedFeatureLevels: if list_null {
            null()
        } else {
            requested.as_ptr()
        },
    };
    let data_type = gen_type(inp, &ALL_TYPES);
    let type_query = DML_FEATURE_QUERY_TENSOR_DATA_TYPE_SUPPORT {
        DataType: data_type,
    };
    // Room for either answer; 0xEEEEEEEE until written.
    let mut support = [0xEEEE_EEEEu32; 2];
    let (query, q_size, s_size): (*const c_void, usize, usize) =
        if feature == DML_FEATURE_FEATURE_LEVELS {
            (
                (&levels as *const DML_FEATURE_QUERY_FEATURE_LEVELS).cast(),
                size_of::<DML_FEATURE_QUERY_FEATURE_LEVELS>(),
                size_of::<DML_FEATURE_DATA_FEATURE_LEVELS>(),
            )
        } else {
            (
                (&type_query as *const DML_FEATURE_QUERY_TENSOR_DATA_TYPE_SUPPORT).cast(),
                size_of::<DML_FEATURE_QUERY_TENSOR_DATA_TYPE_SUPPORT>(),
                size_of::<DML_FEATURE_DATA_TENSOR_DATA_TYPE_SUPPORT>(),
            )
        };
    // A wrong size is never larger than the memory behind the pointer.
    let q_given = if inp.rare(8) {
        (q_size as u32).saturating_sub(1 + u32::from(inp.byte() % 4))
    } else {
        q_size as u32
    };
    let s_given = if inp.rare(8) {
        inp.pick(&[0, 1, 3])
    } else {
        s_size as u32
    };
    let (device_null, query_null, support_null) = (inp.rare(4), inp.rare(4), inp.rare(4));

    let mut e = Expect::default();
    if device_null {
        e.invalid("device NULL");
    } else if feature > 1 {
        e.invalid(format!("feature {feature}"));
    } else if q_given as usize != q_size || s_given as usize != s_size {
        e.invalid("query_size or support_size");
    } else if query_null || support_null {
        e.invalid("query or support NULL");
    } else if feature == DML_FEATURE_FEATURE_LEVELS {
        let given = &requested[..count as usize];
        if count == 0 || list_null {
            e.invalid("no levels requested");
        } else if given.iter().any(|l| !LEVELS.contains(l)) {
            e.invalid("a requested level that is none");
        } else if !given.iter().any(|&l| l <= rules.level) {
            e.unsupported("no requested level at or below the device's");
        }
    } else if !known_type(data_type) {
        e.invalid(format!("DataType {data_type}"));
    }
    // SAFETY: NULL or valid pointers; the sizes never exceed the memory behind them.
    let status = unsafe {
        ewise_check_feature_support(
            if device_null { null_mut() } else { device },
            feature,
            q_given,
            if query_null { null() } else { query },
            s_given,
            if support_null {
                null_mut()
            } else {
                support.as_mut_ptr().cast()
            },
        )
    };
    let context = || {
        format!(
            "feature {feature} sizes {q_given}/{s_given} levels {requested:x?} count {count} \
             list_null {list_null} type {data_type} nulls {device_null}/{query_null}/\
             {support_null} device {rules:?}"
        )
    };
    answered("ewise_check_feature_support", status, &e, &context);
    if status != EWISE_OK {
        events.push(Event::QueryRefused);
        assert_eq!(
            support,
            [0xEEEE_EEEE; 2],
            "support written by a failed query: {}",
            context()
        );
        return;
    }
    events.push(Event::QueryAnswered);
    let expected = if feature == DML_FEATURE_FEATURE_LEVELS {
        requested[..count as usize]
            .iter()
            .copied()
            .filter(|&l| l <= rules.level)
            .max()
            .expect("checked above")
    } else {
        u32::from(rules.supports(data_type))
    };
    assert_eq!(
        support,
        [expected, 0xEEEE_EEEE],
        "ewise_check_feature_support's answer: {}",
        context()
    );
}

fn host_call(
    inp: &mut Input,
    device: *mut ewise_device,
    rules: Rules,
    rng: &mut Rng,
    events: &mut Vec<Event>,
) {
    let op = if inp.byte() < 128 {
        Op::Sign
    } else {
        Op::IsInfinity
    };
    let data_type = match op {
        Op::Sign => gen_type(inp, &SIGN_TYPES_PREFERRED),
        Op::IsInfinity => gen_type(inp, &INF_INPUT_PREFERRED),
    };
    let mode = gen_mode(inp);
    let b = inp.byte();
    let count: u64 = match b {
        0..=247 => u64::from(b % 41),
        248..=251 => 1 << 63,
        252..=253 => u64::MAX,
        _ => (1 << 63) | inp.u64(),
    };
    // Memory for the elements the call may touch (refused huge counts touch none).
    let es = element_size(data_type).unwrap_or(8) as usize;
    let out_es = match op {
        Op::Sign => es,
        Op::IsInfinity => 1,
    };
    let n = if count > 40 { 4 } else { count as usize };
    let (in_len, out_len) = (n * es, n * out_es);
    let a0 = inp.byte() as usize % 16;
    let gap = inp.byte() as usize % 9;
    let delta = 1 + inp.byte() as usize % (in_len.max(out_len).max(1));
    let (a, b) = match inp.byte() % 8 {
        0..=2 => (a0, a0 + in_len + gap),
        3 => (a0 + out_len + gap, a0),
        4 | 5 => (a0, a0),
        6 => (a0, a0 + delta),
        _ => (a0 + delta, a0),
    };
    let memory = Raw::new(a.max(b) + in_len.max(out_len) + 16, rng);
    let (device_null, input_null, output_null) = (inp.rare(3), inp.rare(3), inp.rare(3));
    let before = memory.snapshot();

    let mut e = Expect::default();
    if device_null {
        e.invalid("device NULL");
    } else if !known_type(data_type) {
        e.invalid(format!("type {data_type}"));
    } else if op == Op::IsInfinity && !(mode <= 2 || mode == EWISE_IS_INFINITY_MODE_NEITHER) {
        e.invalid(format!("mode {mode}"));
    } else if input_null || output_null {
        e.invalid("input or output NULL");
    } else {
        if !rules.introduced(op) {
            e.unsupported(format!("{op:?} not introduced"));
        }
        if !rules.accepts(op, Role::Input, data_type) {
            e.unsupported(format!("{op:?} of type {data_type}"));
        }
        if op == Op::IsInfinity && mode == EWISE_IS_INFINITY_MODE_NEITHER && !rules.extensions {
            e.invalid("NEITHER on a strict device");
        }
        let real_es = element_size(data_type).unwrap_or(1);
        let too_big = |per: u64| count.checked_mul(per).is_none_or(|v| v > isize::MAX as u64);
        if !e.fails() && (too_big(real_es) || too_big(if op == Op::Sign { real_es } else { 1 })) {
            e.invalid("element_count overflows");
        }
        if !e.fails() && count > 0 {
            let (ia, ib) = (a, a + in_len);
            let (oa, ob) = (b, b + out_len);
            let overlap = ia < ob && oa < ib;
            let same = a == b && in_len == out_len;
            if overlap && !(same && op == Op::Sign) {
                e.invalid("input and output overlap");
            }
        }
    }
    // SAFETY: non-NULL pointers point into `memory` with room for `count` elements
    // whenever count is small; huge counts are refused before any access.
    let status = unsafe {
        let dev = if device_null { null_mut() } else { device };
        let input: *const c_void = if input_null {
            null()
        } else {
            memory.ptr.add(a).cast()
        };
        let output = if output_null {
            null_mut()
        } else {
            memory.ptr.add(b)
        };
        match op {
            Op::Sign => ewise_sign(dev, data_type, input, output.cast(), count),
            Op::IsInfinity => ewise_is_infinity(dev, data_type, mode, input, output, count),
        }
    };
    let context = || {
        format!(
            "{op:?} type {data_type} mode {mode} count {count} input at {a} output at {b} \
             nulls {device_null}/{input_null}/{output_null} device {rules:?}"
        )
    };
    let name = match op {
        Op::Sign => "ewise_sign",
        Op::IsInfinity => "ewise_is_infinity",
    };
    answered(name, status, &e, &context);
    let mut expected = before.clone();
    if status == EWISE_OK {
        events.push(if a == b && count > 0 {
            Event::HostRanInPlace
        } else {
            Event::HostRan
        });
        let t = DataType::from_raw(data_type).expect("accepted");
        let m = InfinityMode::ALL
            .into_iter()
            .find(|m| m.raw() == mode)
            .unwrap_or(InfinityMode::Either);
        for i in 0..n {
            let bits = read_bits(&before[a + i * es..a + (i + 1) * es]);
            let r = reference(op, t, bits, rules.policy, m);
            write_bits(&mut expected[b + i * out_es..b + (i + 1) * out_es], r);
        }
    } else {
        events.push(Event::HostRefused);
    }
    compare(
        name,
        "its host memory",
        &expected,
        &memory.snapshot(),
        &context,
    );
}

fn compile(
    inp: &mut Input,
    device: *mut ewise_device,
    other: *mut ewise_device,
    op: *mut ewise_operator,
    events: &mut Vec<Event>,
) -> *mut ewise_compiled_operator {
    let b = inp.byte();
    let flags = match b {
        0..=231 => u32::from(b & 7),
        _ => inp.u32() | 8,
    };
    let b = inp.byte();
    let (dev, which) = match b {
        0..=239 => (device, "its device"),
        240..=247 => (null_mut(), "NULL"),
        _ => (other, "another device"),
    };
    let (op_null, out_null) = (inp.rare(3), inp.rare(3));
    let op_given = if op_null { null_mut() } else { op };
    let mut e = Expect::default();
    if dev.is_null() {
        e.invalid("device NULL");
    }
    if op_given.is_null() {
        e.invalid("op NULL");
    }
    if out_null {
        e.invalid("compiled NULL");
    }
    if !e.fails() {
        if dev != device {
            e.invalid("op of another device");
        }
        if flags & !7 != 0 {
            e.invalid(format!("flags {flags:#x}"));
        }
    }
    let mut compiled = sentinel::<ewise_compiled_operator>();
    // SAFETY: NULL or live handles, a valid out-pointer or NULL.
    let status = unsafe {
        ewise_compile_operator(
            dev,
            op_given,
            flags,
            if out_null { null_mut() } else { &mut compiled },
        )
    };
    answered("ewise_compile_operator", status, &e, &|| {
        format!("flags {flags:#x} device {which} op {op_given:?} out_null {out_null}")
    });
    check_out("ewise_compile_operator", status, compiled);
    if status == EWISE_OK {
        events.push(Event::Compiled);
        compiled
    } else {
        events.push(Event::CompileRefused);
        null_mut()
    }
}

/// Where the bindings go and how long the buffers are.
#[derive(Debug, Clone)]
struct Plan {
    /// Buffer kinds and lengths.
    buffers: Vec<(Kind, u64)>,
    /// Length of the arena the wrapped buffers lie in.
    arena_len: usize,
    /// (buffer index, offset, size) of the input and the output.
    input: (usize, u64, u64),
    output: (usize, u64, u64),
}

fn gen_offset(inp: &mut Input, alignment: u64) -> u64 {
    let b = inp.byte();
    match b {
        0..=199 => alignment * u64::from(b % 4),
        200..=229 => alignment * u64::from(b % 3) + 1 + u64::from(inp.byte() % 15),
        230..=249 => u64::from(inp.u16()),
        _ => inp.pick(&[u64::MAX, u64::MAX - 15, 1 << 63, 1 << 40]),
    }
}

fn gen_size(inp: &mut Input, total: u64) -> u64 {
    let b = inp.byte();
    match b {
        0..=179 => total,
        180..=219 => total.saturating_add(u64::from(b % 40)),
        220..=239 => total.saturating_sub(1 + u64::from(b % 4)),
        240..=247 => u64::MAX,
        _ => inp.u64(),
    }
}

fn round_up(v: u64, a: u64) -> u64 {
    v.div_ceil(a).saturating_mul(a)
}

fn gen_plan(inp: &mut Input, model: Option<&OpModel>, has_other: bool) -> Plan {
    let (in_total, out_total, in_align, out_align) = match model {
        Some(m) => (
            m.input.total,
            m.output.total,
            m.input.alignment,
            m.output.alignment,
        ),
        None => (64, 64, 16, 16),
    };
    let mut in_off = gen_offset(inp, in_align);
    let mut in_size = gen_size(inp, in_total);
    let mut out_off = gen_offset(inp, out_align);
    let mut out_size = gen_size(inp, out_total);
    let kind = |inp: &mut Input| match inp.byte() {
        0..=189 => Kind::Owned,
        190..=239 => Kind::Wrapped { at: 0 },
        _ if has_other => Kind::Foreign,
        _ => Kind::Owned,
    };
    let b = inp.byte();
    let (kinds, input_buf, output_buf, shift) = match b % 6 {
        // Two buffers.
        0 | 1 => (vec![kind(inp), kind(inp)], 0, 1, None),
        // One buffer, disjoint ranges, either first.
        2 => {
            if inp.byte().is_multiple_of(2) {
                out_off =
                    round_up(in_off.saturating_add(in_size), out_align).saturating_add(out_off);
            } else {
                in_off =
                    round_up(out_off.saturating_add(out_size), in_align).saturating_add(in_off);
            }
            (vec![kind(inp)], 0, 0, None)
        }
        // One buffer, one range (SIGN in place; IS_INFINITY refused).
        3 => {
            out_off = in_off;
            in_size = in_size.max(out_size);
            out_size = in_size;
            (vec![kind(inp)], 0, 0, None)
        }
        // One buffer, ranges that start a few alignment units apart.
        4 => {
            out_off = in_off.saturating_add(out_align * u64::from(inp.byte() % 3));
            (vec![kind(inp)], 0, 0, None)
        }
        // Two wrapped buffers over memory of one allocation, shifted by `shift` bytes.
        _ => {
            let d: i64 = match inp.byte() % 6 {
                0 => 0,
                1 => 16,
                2 => (in_off as i64).wrapping_sub(out_off as i64),
                3 => i64::from(inp.byte() % 128) - 64,
                4 => 4096,
                _ => -4096,
            };
            let w = Kind::Wrapped { at: 0 };
            (
                vec![w, w],
                0,
                1,
                Some(d.clamp(-(BUFFER_CAP as i64), BUFFER_CAP as i64)),
            )
        }
    };
    // Lengths: enough for every range placed in the buffer (plus slack), or short.
    let mut ends = vec![0u64; kinds.len()];
    for (buf, off, size) in [
        (input_buf, in_off, in_size),
        (output_buf, out_off, out_size),
    ] {
        let end = off.checked_add(size).filter(|&e| e <= BUFFER_CAP);
        ends[buf] = match (ends[buf], end) {
            (u64::MAX, _) | (_, None) => u64::MAX,
            (e, Some(f)) => e.max(f),
        };
    }
    let lens: Vec<u64> = ends
        .iter()
        .map(|&end| {
            if end == u64::MAX {
                1 + u64::from(inp.u16() % 512)
            } else if inp.rare(12) {
                end.saturating_sub(1 + u64::from(inp.byte() % 8)).max(1)
            } else {
                (end + u64::from(inp.byte() % 48)).max(1)
            }
        })
        .collect();
    // Wrapped buffers' places in the arena.
    let mut cursor = 0usize;
    let mut buffers = Vec::new();
    let mut previous_at = 0usize;
    for (i, (k, &len)) in kinds.iter().zip(&lens).enumerate() {
        let k = match k {
            Kind::Wrapped { .. } => {
                let at = match (i, shift) {
                    (1, Some(d)) => (previous_at as i64 + d) as usize,
                    (0, Some(d)) => cursor + (-d).max(0) as usize + inp.byte() as usize % 16,
                    _ => cursor + inp.byte() as usize % 16,
                };
                previous_at = at;
                cursor = cursor.max(at + len as usize);
                Kind::Wrapped { at }
            }
            other => *other,
        };
        buffers.push((k, len));
    }
    Plan {
        buffers,
        arena_len: cursor + 16,
        input: (input_buf, in_off, in_size),
        output: (output_buf, out_off, out_size),
    }
}

fn create_buffers(
    inp: &mut Input,
    plan: &Plan,
    device: *mut ewise_device,
    other: *mut ewise_device,
    rng: &mut Rng,
    events: &mut Vec<Event>,
) -> Memory {
    let arena = Raw::new(plan.arena_len, rng);
    let arena_model = arena.snapshot();
    let mut bufs = Vec::new();
    for &(kind, len) in &plan.buffers {
        let (device_null, out_null) = (inp.rare(2), inp.rare(2));
        let lie = inp.rare(4);
        let mut e = Expect::default();
        if device_null {
            e.invalid("device NULL");
        }
        if out_null {
            e.invalid("buffer NULL");
        }
        let mut handle = sentinel::<ewise_buffer>();
        let out = if out_null {
            null_mut()
        } else {
            &mut handle as *mut *mut ewise_buffer
        };
        let (status, given) = match kind {
            Kind::Owned | Kind::Foreign => {
                let dev = match (device_null, kind) {
                    (true, _) => null_mut(),
                    (_, Kind::Foreign) => other,
                    _ => device,
                };
                // Larger than isize::MAX: refused before any allocation is tried.
                let given = if lie {
                    inp.pick(&[0, 1 << 63, u64::MAX])
                } else {
                    len
                };
                if !e.fails() {
                    if given == 0 {
                        e.invalid("size 0");
                    } else if given > isize::MAX as u64 {
                        e.add(Class::OutOfMemory, "too large");
                    }
                }
                // SAFETY: NULL or live handles, NULL or a valid out-pointer.
                (unsafe { ewise_create_buffer(dev, given, out) }, given)
            }
            Kind::Wrapped { at } => {
                let dev = if device_null { null_mut() } else { device };
                let (data, given) = if lie {
                    match inp.byte() % 4 {
                        0 => (null_mut(), len),
                        1 => (arena.ptr, 0),
                        2 => (arena.ptr, 1 << 63),
                        _ => (arena.ptr, u64::MAX),
                    }
                } else {
                    // SAFETY: inside the arena.
                    (unsafe { arena.ptr.add(at) }, len)
                };
                if !e.fails() {
                    if data.is_null() {
                        e.invalid("data NULL");
                    } else if given == 0 {
                        e.invalid("size 0");
                    } else if given > isize::MAX as u64 {
                        e.invalid("size past the address space");
                    }
                }
                // SAFETY: `data` points to `given` bytes of the arena, or the call is
                // refused before the memory is used (NULL, 0, past the address space).
                (
                    unsafe { ewise_wrap_host_memory(dev, data.cast(), given, out) },
                    given,
                )
            }
        };
        let call = match kind {
            Kind::Wrapped { .. } => "ewise_wrap_host_memory",
            _ => "ewise_create_buffer",
        };
        answered(call, status, &e, &|| {
            format!("{kind:?} size {given} nulls {device_null}/{out_null}")
        });
        check_out(call, status, handle);
        if status != EWISE_OK {
            events.push(Event::BufferRefused);
            handle = null_mut();
        }
        bufs.push(Buf {
            handle,
            kind,
            len,
            bytes: vec![0; len as usize],
        });
    }
    let mut memory = Memory {
        bufs,
        arena,
        arena_model,
    };
    // New buffers are zero; then give the owned ones contents.
    memory.verify("creating the buffers", &|| format!("{plan:?}"));
    for i in 0..memory.bufs.len() {
        let b = &memory.bufs[i];
        if b.handle.is_null() || matches!(b.kind, Kind::Wrapped { .. }) {
            continue;
        }
        let mut content = vec![0u8; b.len as usize];
        rng.fill(&mut content);
        // SAFETY: a live handle; `content` holds `len` bytes.
        let status = unsafe { ewise_buffer_write(b.handle, 0, content.as_ptr().cast(), b.len) };
        answered("ewise_buffer_write", status, &Expect::default(), &|| {
            format!("{plan:?}")
        });
        memory.bufs[i].bytes = content;
    }
    memory.verify("filling the buffers", &|| format!("{plan:?}"));
    memory
}

/// One ewise_buffer_read or ewise_buffer_write with any offset and size.
fn probe_buffer(inp: &mut Input, memory: &mut Memory, events: &mut Vec<Event>) {
    if memory.bufs.is_empty() {
        return;
    }
    let i = inp.byte() as usize % memory.bufs.len();
    let write = inp.byte() % 2 == 1;
    let handle = if inp.rare(8) {
        null_mut()
    } else {
        memory.bufs[i].handle
    };
    let len = memory.bufs[i].len;
    let b = inp.byte();
    let offset = match b {
        0..=199 => u64::from(inp.u16()) % (len + 1),
        200..=239 => len + u64::from(b % 4),
        _ => inp.pick(&[u64::MAX, u64::MAX - 3, 1 << 63]),
    };
    // `bytes` never exceeds the memory behind the pointer.
    let bytes = u64::from(inp.u16()) % (len + 17);
    let mut host = vec![0u8; bytes as usize];
    let mut rng = Rng(u64::from(inp.u32()) | 1);
    rng.fill(&mut host);
    let host_null = inp.rare(8);
    let mut e = Expect::default();
    if handle.is_null() {
        e.invalid("buffer NULL");
    } else if host_null {
        e.invalid("src or dst NULL");
    } else if offset.checked_add(bytes).is_none_or(|end| end > len) {
        e.invalid("range past the buffer's end");
    }
    let host_copy = host.clone();
    // SAFETY: NULL or a live handle; the host pointer holds `bytes` bytes.
    let status = unsafe {
        if write {
            let src = if host_null { null() } else { host.as_ptr() };
            ewise_buffer_write(handle, offset, src.cast(), bytes)
        } else {
            let dst = if host_null {
                null_mut()
            } else {
                host.as_mut_ptr()
            };
            ewise_buffer_read(handle, offset, dst.cast(), bytes)
        }
    };
    let context = || {
        format!(
            "{} buffer {i} ({:?}, {len} bytes) offset {offset} bytes {bytes} nulls {}/{host_null}",
            if write { "write" } else { "read" },
            memory.bufs[i].kind,
            handle.is_null()
        )
    };
    let call = if write {
        "ewise_buffer_write"
    } else {
        "ewise_buffer_read"
    };
    answered(call, status, &e, &context);
    let context = context();
    if status == EWISE_OK {
        events.push(Event::BufferProbed);
        let range = offset as usize..(offset + bytes) as usize;
        let model = memory.model_mut(i);
        if write {
            model[range].copy_from_slice(&host_copy);
        } else {
            compare(call, "the bytes read", &model[range], &host, &|| {
                context.clone()
            });
        }
    } else {
        compare(call, "the host memory", &host_copy, &host, &|| {
            context.clone()
        });
    }
    memory.verify(call, &|| context.clone());
}

fn execute(
    inp: &mut Input,
    compiled: *mut ewise_compiled_operator,
    model: Option<&OpModel>,
    plan: &Plan,
    memory: &mut Memory,
    device_released: bool,
    events: &mut Vec<Event>,
) {
    let (compiled_null, in_null, out_null) = (inp.rare(3), inp.rare(3), inp.rare(3));
    let (in_buffer_null, out_buffer_null) = (inp.rare(3), inp.rare(3));
    let compiled = if compiled_null { null_mut() } else { compiled };
    let binding = |(buf, off, size): (usize, u64, u64), null: bool| EWISE_BUFFER_BINDING {
        Buffer: if null {
            null_mut()
        } else {
            memory.bufs[buf].handle
        },
        Offset: off,
        SizeInBytes: size,
    };
    let input = binding(plan.input, in_buffer_null);
    let output = binding(plan.output, out_buffer_null);

    let mut e = Expect::default();
    let mut placement = None;
    match model {
        _ if compiled.is_null() => e.invalid("compiled NULL"),
        _ if in_null || out_null => e.invalid("binding NULL"),
        _ if input.Buffer.is_null() || output.Buffer.is_null() => e.invalid("Buffer NULL"),
        None => unreachable!("a compiled operator has a model"),
        Some(m) => {
            let (ib, ob) = (&memory.bufs[plan.input.0], &memory.bufs[plan.output.0]);
            if ib.kind == Kind::Foreign || ob.kind == Kind::Foreign {
                e.invalid("a buffer of another device");
            } else {
                for (name, t, b, buf) in [
                    ("input", &m.input, &input, ib),
                    ("output", &m.output, &output, ob),
                ] {
                    if b.Offset % t.alignment != 0 {
                        e.invalid(format!(
                            "{name} Offset {} not a multiple of {}",
                            b.Offset, t.alignment
                        ));
                    }
                    if b.SizeInBytes < t.total {
                        e.invalid(format!(
                            "{name} SizeInBytes {} below {}",
                            b.SizeInBytes, t.total
                        ));
                    }
                    if b.Offset
                        .checked_add(b.SizeInBytes)
                        .is_none_or(|end| end > buf.len)
                    {
                        e.invalid(format!("{name} range past the buffer's {} bytes", buf.len));
                    }
                }
                if !e.fails() {
                    placement = Some(hazard(m.op, plan, memory, &input, &output, &mut e));
                }
            }
        }
    }

    // SAFETY: NULL or live handles; bindings name live buffers or NULL.
    let status = unsafe {
        ewise_execute(
            compiled,
            if in_null { null() } else { &input },
            if out_null { null() } else { &output },
        )
    };
    let context = || {
        format!(
            "operator {model:#?}\n  input {input:?}\n  output {output:?}\n  plan {plan:?}\n  \
             nulls compiled {compiled_null} bindings {in_null}/{out_null}"
        )
    };
    answered("ewise_execute", status, &e, &context);
    if status == EWISE_OK {
        let m = model.expect("executed");
        events.push(Event::Executed);
        if m.input.strided || m.output.strided {
            events.push(Event::ExecutedStrided);
        }
        if device_released {
            events.push(Event::ExecutedAfterDeviceRelease);
        }
        match placement {
            Some(Placement::InPlace) => events.push(Event::ExecutedInPlace),
            Some(Placement::Aliased) => events.push(Event::ExecutedAliased),
            _ => {}
        }
        run_reference(m, plan, memory);
    } else {
        events.push(Event::ExecutionRefused);
    }
    memory.verify("ewise_execute", &context);
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Placement {
    Separate,
    InPlace,
    /// Two buffers whose memory overlaps, disjoint ranges.
    Aliased,
}

/// docs/SEMANTICS.md section 5's hazards between two checked bindings.
fn hazard(
    op: Op,
    plan: &Plan,
    memory: &Memory,
    input: &EWISE_BUFFER_BINDING,
    output: &EWISE_BUFFER_BINDING,
    e: &mut Expect,
) -> Placement {
    let (ib, ob) = (&memory.bufs[plan.input.0], &memory.bufs[plan.output.0]);
    let base = |b: &Buf| match b.kind {
        Kind::Wrapped { at } => at as u64,
        _ => 0,
    };
    let shared = if plan.input.0 == plan.output.0 {
        true
    } else if let (Kind::Wrapped { at: a }, Kind::Wrapped { at: b }) = (ib.kind, ob.kind) {
        (a as u64) < b as u64 + ob.len && (b as u64) < a as u64 + ib.len
    } else {
        false
    };
    if !shared {
        return Placement::Separate;
    }
    let (i0, o0) = (base(ib) + input.Offset, base(ob) + output.Offset);
    let (i1, o1) = (i0 + input.SizeInBytes, o0 + output.SizeInBytes);
    if i0 == o0 && i1 == o1 && input.SizeInBytes > 0 {
        if op == Op::IsInfinity {
            e.invalid("IS_INFINITY in place");
        }
        return Placement::InPlace;
    }
    if i0 < o1 && o0 < i1 {
        if input.SizeInBytes == 0 || output.SizeInBytes == 0 {
            e.add(Class::MaybeInvalid, "an empty range inside the other");
        } else {
            e.invalid("input and output ranges overlap");
        }
    }
    if plan.input.0 == plan.output.0 {
        Placement::Separate
    } else {
        Placement::Aliased
    }
}

/// Applies the reference to the model: every output element of the strided layout
/// from the input element at the same index, as the memory was before the call.
fn run_reference(m: &OpModel, plan: &Plan, memory: &mut Memory) {
    let before_in = memory.model_mut(plan.input.0)[plan.input.1 as usize..].to_vec();
    let out_base = plan.output.1 as usize;
    let out = &mut memory.model_mut(plan.output.0)[out_base..];
    let sizes = &m.input.sizes;
    // Executed layouts fit their buffers, so a non-empty count is small.
    let count: u64 = if sizes.contains(&0) {
        0
    } else {
        sizes.iter().map(|&n| u64::from(n)).product()
    };
    let (ies, oes) = (
        m.input.element_size as usize,
        m.output.element_size as usize,
    );
    let mut index = vec![0u32; sizes.len()];
    for _ in 0..count {
        let at = |strides: &[u64]| -> usize {
            index
                .iter()
                .zip(strides)
                .map(|(&i, &s)| u64::from(i) * s)
                .sum::<u64>() as usize
        };
        let (ia, oa) = (at(&m.input.strides) * ies, at(&m.output.strides) * oes);
        let bits = read_bits(&before_in[ia..ia + ies]);
        let r = reference(m.op, m.input.data_type, bits, m.policy, m.mode);
        write_bits(&mut out[oa..oa + oes], r);
        for d in (0..sizes.len()).rev() {
            index[d] += 1;
            if index[d] < sizes[d] {
                break;
            }
            index[d] = 0;
        }
    }
}
