//! Blocks of WebAssembly memory that JavaScript holds as typed arrays (the package's
//! `WasmArray`): allocated and freed here, and run on where they lie, with no copy.
//!
//! A block is a `Vec<u64>` (8-byte aligned, for every element type) that does not move
//! while it lives; JavaScript makes its views from [`block_address`] over the module's
//! `memory.buffer`, and makes them again when the memory has grown (growth detaches the
//! old buffer). A block is named by an id (a slot and a generation, so an id kept after
//! its block was freed never names the block that later takes its slot) for freeing,
//! and by its address for running: an operand is a range of bytes that must lie inside
//! one live block, else the call is refused with nothing read or written.
//!
//! No `RefCell` borrow of the slab is held across a call into JavaScript: a block being
//! run on is taken out of its slot for the run (a call made meanwhile finds it absent,
//! as if freed) and put back after.

use std::cell::RefCell;
use std::collections::BTreeMap;

use ewise_core::{BufferBinding, OperatorType};
use ewise_cpu::BufferRef;
use js_sys::Uint8Array;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::array::{
    copy_in, copy_out, data_type, element_size, infinity_mode, nan_policy, same_count,
    with_staging, CHUNK_BYTES,
};
use crate::error::{self, argument, validation};

/// Slots per generation step: an id is `generation * SLOTS + slot`.
const SLOTS: u64 = 1 << 24;
/// The generations a slot goes through; a slot that used them all is retired. Ids stay
/// below 2^53, exact as JavaScript numbers.
const GENERATIONS: u64 = 1 << 29;
/// The most bytes one block holds (JavaScript's views of the memory count in 32 bits).
const MAX_BYTES: u64 = u32::MAX as u64;

#[derive(Default)]
struct Slot {
    /// The block (`None` while free, or while a run has it out).
    words: Option<Vec<u64>>,
    /// The bytes the block was allocated for (its words hold up to 7 more).
    bytes: usize,
    /// The address of its first byte (0 while free).
    address: usize,
    generation: u64,
    live: bool,
}

#[derive(Default)]
struct Slab {
    slots: Vec<Slot>,
    /// Free slots, reused last-freed first.
    free: Vec<usize>,
    /// Live blocks by address.
    by_address: BTreeMap<usize, usize>,
}

thread_local! {
    static SLAB: RefCell<Slab> = RefCell::new(Slab::default());
}

impl Slab {
    fn slot_of_id(&self, id: f64) -> Option<usize> {
        if !(id >= 0.0 && id < (SLOTS * GENERATIONS) as f64 && id.fract() == 0.0) {
            return None;
        }
        let id = id as u64;
        let (slot, generation) = ((id % SLOTS) as usize, id / SLOTS);
        self.slots
            .get(slot)
            .filter(|s| s.live && s.generation == generation)
            .map(|_| slot)
    }

    /// The live block holding `len` bytes from `address`, and their offset in it.
    fn find(&self, address: usize, len: usize) -> Option<(usize, usize)> {
        let (&start, &slot) = self.by_address.range(..=address).next_back()?;
        let offset = address - start;
        let s = self.slots.get(slot)?;
        let end = offset.checked_add(len)?;
        (s.live && end <= s.bytes).then_some((slot, offset))
    }
}

/// A block taken out of its slot for a run, put back by [`put_back`].
struct Taken {
    slot: usize,
    generation: u64,
    words: Vec<u64>,
}

impl Taken {
    fn bytes(&mut self) -> &mut [u8] {
        bytemuck::cast_slice_mut(&mut self.words)
    }
}

fn take(slot: usize) -> Option<Taken> {
    SLAB.with(|slab| {
        let mut slab = slab.borrow_mut();
        let s = slab.slots.get_mut(slot)?;
        let words = s.words.take()?;
        Some(Taken {
            slot,
            generation: s.generation,
            words,
        })
    })
}

/// Returns `taken` to its slot (dropped if the slot was freed meanwhile).
fn put_back(taken: Taken) {
    SLAB.with(|slab| {
        let mut slab = slab.borrow_mut();
        if let Some(s) = slab.slots.get_mut(taken.slot) {
            if s.live && s.generation == taken.generation && s.words.is_none() {
                s.words = Some(taken.words);
            }
        }
    });
}

fn freed(what: &str) -> JsValue {
    argument(
        what,
        &format!(
            "{what} lies in no live WasmArray: it was freed (use after free), or its range \
             runs past the array's end"
        ),
    )
}

/// Allocates a zeroed block of `bytes` bytes and returns its id; an `OutOfMemoryError`
/// when the module's memory cannot grow to hold it.
#[wasm_bindgen(js_name = blockAlloc)]
pub fn block_alloc(bytes: f64) -> Result<f64, JsValue> {
    if !(bytes >= 0.0 && bytes <= MAX_BYTES as f64 && bytes.fract() == 0.0) {
        return Err(argument(
            "length",
            &format!("a WasmArray of {bytes} bytes cannot be made: 0 to {MAX_BYTES} bytes"),
        ));
    }
    let bytes = bytes as usize;
    // At least one word, so that every live block has an address of its own.
    let words_len = bytes.div_ceil(8).max(1);
    let mut words = Vec::new();
    if words.try_reserve_exact(words_len).is_err() {
        return Err(error::js_error(
            error::OUT_OF_MEMORY,
            "OutOfMemory",
            &format!(
                "out of WebAssembly memory: a WasmArray of {bytes} bytes could not be allocated"
            ),
        ));
    }
    words.resize(words_len, 0u64);
    let address = words.as_ptr() as usize;
    SLAB.with(|slab| {
        let mut slab = slab.borrow_mut();
        let slot = match slab.free.pop() {
            Some(slot) => slot,
            None if (slab.slots.len() as u64) < SLOTS => {
                slab.slots.push(Slot::default());
                slab.slots.len() - 1
            }
            None => {
                return Err(argument(
                    "length",
                    &format!("too many live WasmArrays: at most {SLOTS}; free some first"),
                ))
            }
        };
        slab.by_address.insert(address, slot);
        let s = &mut slab.slots[slot];
        *s = Slot {
            words: Some(words),
            bytes,
            address,
            generation: s.generation,
            live: true,
        };
        Ok((s.generation * SLOTS + slot as u64) as f64)
    })
}

/// The byte address of block `id` in the module's memory; refused for an id that names
/// no live block.
#[wasm_bindgen(js_name = blockAddress)]
pub fn block_address(id: f64) -> Result<u32, JsValue> {
    SLAB.with(|slab| {
        let slab = slab.borrow();
        let slot = slab.slot_of_id(id).ok_or_else(|| freed("array"))?;
        Ok(slab.slots[slot].address as u32)
    })
}

/// Frees block `id`; false (and nothing done) when it names no live block.
#[wasm_bindgen(js_name = blockFree)]
pub fn block_free(id: f64) -> bool {
    let words = SLAB.with(|slab| {
        let mut slab = slab.borrow_mut();
        let slot = slab.slot_of_id(id)?;
        let s = &mut slab.slots[slot];
        let (address, words) = (s.address, s.words.take());
        s.live = false;
        s.address = 0;
        s.bytes = 0;
        s.generation += 1;
        let reusable = s.generation < GENERATIONS;
        slab.by_address.remove(&address);
        if reusable {
            slab.free.push(slot);
        }
        Some(words)
    });
    // Dropped outside the borrow; a block a run has out is dropped when it is put back.
    words.is_some()
}

/// The live WasmArrays, for tests of the package's bookkeeping.
#[wasm_bindgen(js_name = blockCount)]
pub fn block_count() -> u32 {
    SLAB.with(|slab| slab.borrow().by_address.len() as u32)
}

/// One operand: `len` bytes in a live block (found by address) or a whole view of
/// JavaScript memory.
enum Side<'a> {
    Block { slot: usize, offset: usize },
    View(&'a Uint8Array),
}

/// `value` (an address, or a `Uint8Array` of memory outside the module) as an operand
/// of `len` bytes named `what`: an address must start `len` bytes inside one live block,
/// a view must hold exactly `len` bytes.
fn side<'a>(value: &'a JsValue, len: usize, what: &str) -> Result<Side<'a>, JsValue> {
    if let Some(address) = value.as_f64() {
        return block_side(address, len, what);
    }
    let view = value
        .dyn_ref::<Uint8Array>()
        .ok_or_else(|| argument(what, &format!("{what} must be an address or a Uint8Array")))?;
    if view.length() as usize != len {
        return Err(argument(
            what,
            &format!(
                "{what} holds {} bytes, not the {len} its elements need",
                view.length()
            ),
        ));
    }
    Ok(Side::View(view))
}

/// A kernel from input bytes to output bytes (of one element count).
type Map<'k> = &'k dyn Fn(&[u8], &mut [u8]) -> Result<(), JsValue>;
/// A kernel in place on bytes.
type InPlace<'k> = &'k dyn Fn(&mut [u8]) -> Result<(), JsValue>;

/// The operand of `len` bytes at `address`, which must lie inside one live block.
fn block_side(address: f64, len: usize, what: &str) -> Result<Side<'static>, JsValue> {
    if !(address >= 0.0 && address <= MAX_BYTES as f64 && address.fract() == 0.0) {
        return Err(freed(what));
    }
    let found = SLAB.with(|slab| slab.borrow().find(address as usize, len));
    let (slot, offset) = found.ok_or_else(|| freed(what))?;
    Ok(Side::Block { slot, offset })
}

/// How one operation runs on an operand pair.
struct Kernel<'k> {
    in_size: usize,
    out_size: usize,
    /// Input bytes to output bytes (of one element count).
    map: Map<'k>,
    /// The same in place, where input and output are one range (SIGN).
    in_place: Option<InPlace<'k>>,
}

/// Runs `k` over `count` elements from `input` into `output`, as if the whole input
/// were read before any output is written; the views are JavaScript memory, the blocks
/// are run on where they lie.
fn run(input: Side, output: Side, count: usize, k: &Kernel) -> Result<(), JsValue> {
    let (in_len, out_len) = (count * k.in_size, count * k.out_size);
    match (input, output) {
        (Side::Block { slot: a, offset: i }, Side::Block { slot: b, offset: o }) => {
            let mut src = take(a).ok_or_else(|| freed("x"))?;
            if a == b {
                let result = within_one(src.bytes(), (i, in_len), (o, out_len), k);
                put_back(src);
                return result;
            }
            let Some(mut dst) = take(b) else {
                put_back(src);
                return Err(freed("options.out"));
            };
            let result = (k.map)(
                &src.bytes()[i..i + in_len],
                &mut dst.bytes()[o..o + out_len],
            );
            put_back(src);
            put_back(dst);
            result
        }
        (Side::Block { slot, offset }, Side::View(view)) => {
            let mut src = take(slot).ok_or_else(|| freed("x"))?;
            let result = block_to_view(&src.bytes()[offset..offset + in_len], view, count, k);
            put_back(src);
            result
        }
        (Side::View(view), Side::Block { slot, offset }) => {
            let mut dst = take(slot).ok_or_else(|| freed("options.out"))?;
            let result = view_to_block(view, &mut dst.bytes()[offset..offset + out_len], count, k);
            put_back(dst);
            result
        }
        (Side::View(_), Side::View(_)) => Err(argument(
            "x",
            "one of x and options.out must be a WasmArray here (the copying calls take two views)",
        )),
    }
}

/// `k` from bytes `i..i + in_len` of `block` into `o..o + out_len`: in place where they
/// are one range and `k` runs in place, split where they are disjoint, else from a copy
/// of the input.
fn within_one(
    block: &mut [u8],
    (i, in_len): (usize, usize),
    (o, out_len): (usize, usize),
    k: &Kernel,
) -> Result<(), JsValue> {
    if let (Some(in_place), true) = (k.in_place, i == o && in_len == out_len) {
        return in_place(&mut block[i..i + in_len]);
    }
    if i + in_len <= o {
        let (head, tail) = block.split_at_mut(o);
        return (k.map)(&head[i..i + in_len], &mut tail[..out_len]);
    }
    if o + out_len <= i {
        let (head, tail) = block.split_at_mut(i);
        return (k.map)(&tail[..in_len], &mut head[o..o + out_len]);
    }
    let mut copy = error::zeroed(in_len, "a copy of an input that its output overlaps")?;
    copy.copy_from_slice(&block[i..i + in_len]);
    (k.map)(&copy, &mut block[o..o + out_len])
}

/// Elements per chunk of the copying halves: at most [`CHUNK_BYTES`] of input.
fn per_chunk(in_size: usize, count: usize) -> usize {
    (CHUNK_BYTES / in_size).clamp(1, count.max(1))
}

/// `k` from `src` (a block's bytes) into the JavaScript memory of `view`: each chunk's
/// results staged, then copied out.
fn block_to_view(src: &[u8], view: &Uint8Array, count: usize, k: &Kernel) -> Result<(), JsValue> {
    let per = per_chunk(k.in_size, count);
    with_staging(per * k.out_size, |staging| {
        let mut first = 0;
        while first < count {
            let n = per.min(count - first);
            let dst = &mut staging[..n * k.out_size];
            (k.map)(&src[first * k.in_size..(first + n) * k.in_size], dst)?;
            copy_out(view, first * k.out_size, dst)?;
            first += n;
        }
        Ok(())
    })
}

/// `k` from the JavaScript memory of `view` into `dst` (a block's bytes): SIGN copies
/// each chunk into place and runs in place there; IS_INFINITY stages each chunk.
fn view_to_block(
    view: &Uint8Array,
    dst: &mut [u8],
    count: usize,
    k: &Kernel,
) -> Result<(), JsValue> {
    let per = per_chunk(k.in_size, count);
    if let (Some(in_place), true) = (k.in_place, k.in_size == k.out_size) {
        let mut first = 0;
        while first < count {
            let n = per.min(count - first);
            let chunk = &mut dst[first * k.in_size..(first + n) * k.in_size];
            copy_in(view, first * k.in_size, chunk)?;
            in_place(chunk)?;
            first += n;
        }
        return Ok(());
    }
    with_staging(per * k.in_size, |staging| {
        let mut first = 0;
        while first < count {
            let n = per.min(count - first);
            let src = &mut staging[..n * k.in_size];
            copy_in(view, first * k.in_size, src)?;
            (k.map)(src, &mut dst[first * k.out_size..(first + n) * k.out_size])?;
            first += n;
        }
        Ok(())
    })
}

/// `count * size`, refused past the 32-bit range JavaScript's views address.
fn byte_len(count: u32, size: usize, what: &str) -> Result<usize, JsValue> {
    (count as u64)
        .checked_mul(size as u64)
        .filter(|&n| n <= MAX_BYTES)
        .map(|n| n as usize)
        .ok_or_else(|| {
            argument(
                what,
                &format!("{count} elements of {size} bytes are more than 4 GiB"),
            )
        })
}

/// SIGN of `count` elements of type `data_type` under NaN policy `nan` (0 zero, 1
/// propagate), from `input` into `output` (of `out_count` elements: another count is
/// `SliceLength`, as the copying calls say it): each an address inside a live
/// WasmArray, or a `Uint8Array` of memory outside the module (at least one of them an
/// address). The same address and count for both is in place; other overlaps read the
/// input first. Refused, with nothing written: an address in no live block (or a range
/// running past its block's end), a view of another length, a type SIGN does not take.
#[wasm_bindgen(js_name = signAt)]
pub fn sign_at(
    data_type: u32,
    nan: u32,
    input: &JsValue,
    output: &JsValue,
    count: u32,
    out_count: u32,
) -> Result<(), JsValue> {
    sign_sides(data_type, nan, (count, out_count), |len| {
        Ok((side(input, len, "x")?, side(output, len, "options.out")?))
    })
}

/// [`sign_at`] with both operands in WasmArrays, at addresses `input` and `output`:
/// numbers alone cross into the module (the zero-copy calls' path).
#[wasm_bindgen(js_name = signBlocks)]
pub fn sign_blocks(
    data_type: u32,
    nan: u32,
    input: f64,
    output: f64,
    count: u32,
    out_count: u32,
) -> Result<(), JsValue> {
    sign_sides(data_type, nan, (count, out_count), |len| {
        Ok((
            block_side(input, len, "x")?,
            block_side(output, len, "options.out")?,
        ))
    })
}

/// SIGN on the operands `sides(byte length)` gives, after the arguments are checked.
fn sign_sides<'a>(
    data_type: u32,
    nan: u32,
    (count, out_count): (u32, u32),
    sides: impl FnOnce(usize) -> Result<(Side<'a>, Side<'a>), JsValue>,
) -> Result<(), JsValue> {
    let (data_type, policy) = (self::data_type(data_type)?, nan_policy(nan)?);
    ewise_cpu::array::sign_bytes(data_type, &[], &mut [], policy).map_err(|e| validation(&e))?;
    same_count(
        OperatorType::ElementWiseSign,
        out_count as usize,
        count as usize,
    )?;
    let size = element_size(data_type);
    let (input, output) = sides(byte_len(count, size, "x")?)?;
    let map = |src: &[u8], dst: &mut [u8]| {
        ewise_cpu::array::sign_bytes(data_type, src, dst, policy).map_err(|e| validation(&e))
    };
    let in_place = |data: &mut [u8]| {
        ewise_cpu::array::sign_bytes_in_place(data_type, data, policy).map_err(|e| validation(&e))
    };
    let k = Kernel {
        in_size: size,
        out_size: size,
        map: &map,
        in_place: Some(&in_place),
    };
    run(input, output, count as usize, &k)
}

/// IS_INFINITY of `count` elements of type `data_type` under mode `mode` (0 EITHER, 1
/// POSITIVE, 2 NEGATIVE, 1000 NEITHER), one byte per element, from `input` into
/// `output`, which are as [`sign_at`] takes them; refused as [`sign_at`] is.
#[wasm_bindgen(js_name = isInfinityAt)]
pub fn is_infinity_at(
    data_type: u32,
    mode: u32,
    input: &JsValue,
    output: &JsValue,
    count: u32,
    out_count: u32,
) -> Result<(), JsValue> {
    is_infinity_sides(data_type, mode, (count, out_count), |in_len| {
        Ok((
            side(input, in_len, "x")?,
            side(output, count as usize, "options.out")?,
        ))
    })
}

/// [`is_infinity_at`] with both operands in WasmArrays, as [`sign_blocks`].
#[wasm_bindgen(js_name = isInfinityBlocks)]
pub fn is_infinity_blocks(
    data_type: u32,
    mode: u32,
    input: f64,
    output: f64,
    count: u32,
    out_count: u32,
) -> Result<(), JsValue> {
    is_infinity_sides(data_type, mode, (count, out_count), |in_len| {
        Ok((
            block_side(input, in_len, "x")?,
            block_side(output, count as usize, "options.out")?,
        ))
    })
}

/// IS_INFINITY on the operands `sides(input byte length)` gives, after the arguments
/// are checked.
fn is_infinity_sides<'a>(
    data_type: u32,
    mode: u32,
    (count, out_count): (u32, u32),
    sides: impl FnOnce(usize) -> Result<(Side<'a>, Side<'a>), JsValue>,
) -> Result<(), JsValue> {
    let (data_type, mode) = (self::data_type(data_type)?, infinity_mode(mode)?);
    ewise_cpu::array::is_infinity_bytes(data_type, mode, &[], &mut [])
        .map_err(|e| validation(&e))?;
    same_count(
        OperatorType::ElementWiseIsInfinity,
        out_count as usize,
        count as usize,
    )?;
    let size = element_size(data_type);
    let (input, output) = sides(byte_len(count, size, "x")?)?;
    let map = |src: &[u8], dst: &mut [u8]| {
        ewise_cpu::array::is_infinity_bytes(data_type, mode, src, dst).map_err(|e| validation(&e))
    };
    let k = Kernel {
        in_size: size,
        out_size: 1,
        map: &map,
        in_place: None,
    };
    run(input, output, count as usize, &k)
}

/// The live blocks starting at `addresses` (the buffers of a DirectML-style execution,
/// each a WasmArray's first byte): their slots and lengths in bytes.
pub(crate) fn buffers_at(addresses: &[u32]) -> Result<Vec<(usize, u64)>, JsValue> {
    SLAB.with(|slab| {
        let slab = slab.borrow();
        addresses
            .iter()
            .enumerate()
            .map(|(i, &address)| {
                let slot = slab
                    .by_address
                    .get(&(address as usize))
                    .copied()
                    .ok_or_else(|| freed(&format!("buffers[{i}]")))?;
                Ok((slot, slab.slots[slot].bytes as u64))
            })
            .collect()
    })
}

/// Runs `f` with the blocks in `slots` (one or two, distinct) taken out as buffers,
/// the first read-only unless it is the only one; the blocks are put back after.
pub(crate) fn with_buffers<R>(
    slots: &[usize],
    f: impl FnOnce(&mut [BufferRef<'_>]) -> Result<R, JsValue>,
) -> Result<R, JsValue> {
    let mut taken = Vec::with_capacity(slots.len());
    for (i, &slot) in slots.iter().enumerate() {
        match take(slot) {
            Some(t) => taken.push(t),
            None => {
                taken.into_iter().for_each(put_back);
                return Err(freed(&format!("buffers[{i}]")));
            }
        }
    }
    let result = {
        let mut refs: Vec<BufferRef<'_>> = Vec::with_capacity(taken.len());
        let one = taken.len() == 1;
        for (i, t) in taken.iter_mut().enumerate() {
            let bytes = bytemuck::cast_slice_mut::<u64, u8>(&mut t.words);
            refs.push(if i == 0 && !one {
                BufferRef::ReadOnly(bytes)
            } else {
                BufferRef::ReadWrite(bytes)
            });
        }
        f(&mut refs)
    };
    taken.into_iter().for_each(put_back);
    result
}

/// A binding moved to buffer `buffer`.
pub(crate) fn rebound(b: BufferBinding, buffer: usize) -> BufferBinding {
    BufferBinding::new(buffer, b.offset, b.size_in_bytes)
}
