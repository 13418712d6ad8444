//! The chunk loop of a streamed ONNX run ([`stream_source`]): one source's elements read
//! a chunk at a time from where they are (an array, the model's memory, or an external
//! data file the model keeps open), run through the model's plan
//! ([`Streaming::run_chunk`]), and written where its outputs go.

use ewise_cpu::text::quoted;
use ewise_onnx::{DataType, Scratch, Streaming};
use pyo3::exceptions::PyMemoryError;
use pyo3::prelude::*;

use super::resident;
use super::strided::{self, Touched};
use super::walk;
use crate::layout::{Dims, View};
use crate::{onnx, OnnxError};

/// Bytes of one chunk: its input, its outputs and the plan's scratch buffers together
/// (the chunk of the `ewise run` command), but never fewer elements than
/// [`Streaming::MIN_CHUNK_ELEMENTS`] ([`Streaming::chunk_elements`]).
const CHUNK_BYTES: usize = 4 << 20;

/// Bytes (inputs and outputs) of the chunks run without the GIL between two checks for
/// signals: milliseconds of work.
const SIGNAL_BYTES: usize = 64 << 20;

/// How far apart, relative to its own bytes, the bytes a chunk touched in one array may
/// lie for its pages to be released after it. A chunk spread wider (an array walked
/// across its layout, such as a Fortran-order output of a C-order input) touches pages
/// that later chunks touch again: releasing them would fault them in again and again.
const RELEASE_SPREAD: usize = 8;

/// A caller's array (or a new one) as the loop reads or writes it.
#[derive(Debug, Clone)]
pub(crate) struct Region {
    pub view: View,
    /// Whether its elements are in the opposite of the machine's byte order.
    pub swapped: bool,
    /// Whether its memory is a shared file mapping whose pages are released after each
    /// chunk ([`resident::release`]).
    pub file_backed: bool,
}

impl Region {
    /// Releases the pages of `touched`, the bytes a chunk of `n` elements read or wrote,
    /// where they are in a shared file mapping and the chunk was dense enough (at most
    /// [`RELEASE_SPREAD`] times its own bytes) that the walk is done with them.
    fn release(&self, touched: Touched, n: usize) {
        let dense = touched.high - touched.low <= RELEASE_SPREAD.saturating_mul(n * self.view.item);
        if self.file_backed && dense {
            // SAFETY: `file_backed` is set only for shared file mappings.
            unsafe { resident::release(touched.low, touched.high) };
        }
    }
}

/// Where a source's elements come from.
pub(crate) enum Feed<'a> {
    /// Packed native bytes the model holds (an initializer or an input's default).
    Held(&'a [u8]),
    /// An initializer or input default the model keeps in an external data file, read
    /// with [`Streaming::read_initializer`].
    External,
    /// A caller's array; `gather` asks for each chunk to be copied out before the
    /// outputs are written, even where it could be read in place (an output array is
    /// this very memory).
    Array { region: Region, gather: bool },
}

/// One array of the loop, and the buffer its chunks go through unless it is read or
/// written in place.
struct Side {
    region: Region,
    buffer: Option<Vec<u8>>,
}

impl Side {
    /// `region`, in place when `in_place`, else with a buffer of `len` bytes allocated
    /// fallibly.
    fn new(region: Region, in_place: bool, len: usize, what: &str) -> PyResult<Side> {
        let buffer = match in_place {
            true => None,
            false => Some(allocate(len, what)?),
        };
        Ok(Side { region, buffer })
    }

    /// Elements `[start, start + n)` of `view` (a tile of the region), packed, in native
    /// byte order, and the bytes of the array they were read from.
    ///
    /// # Safety
    /// `view` must be a live array's memory of at least `start + n` elements, packed if
    /// there is no buffer, that nothing writes while the slice lives.
    unsafe fn read(&mut self, view: &View, start: usize, n: usize) -> (&[u8], Touched) {
        let item = view.item;
        match &mut self.buffer {
            None => {
                let low = view.data + start * item;
                // SAFETY: by the caller; chunks are never empty.
                let bytes = unsafe { std::slice::from_raw_parts(low as *const u8, n * item) };
                let touched = Touched {
                    low,
                    high: low + n * item,
                };
                (bytes, touched)
            }
            Some(buffer) => {
                let into = &mut buffer[..n * item];
                // SAFETY: by the caller; the buffer is the loop's own.
                let touched = unsafe { strided::gather(view, start, into, self.region.swapped) };
                (into, touched)
            }
        }
    }

    /// The bytes the plan writes elements `[start, start + n)` of `view` into.
    ///
    /// # Safety
    /// `view` must be a live, writable array's memory of at least `start + n` elements,
    /// packed if there is no buffer, that nothing else references while the slice lives.
    unsafe fn slice(&mut self, view: &View, start: usize, n: usize) -> &mut [u8] {
        let item = view.item;
        match &mut self.buffer {
            // SAFETY: by the caller; chunks are never empty.
            None => unsafe {
                std::slice::from_raw_parts_mut((view.data + start * item) as *mut u8, n * item)
            },
            Some(buffer) => &mut buffer[..n * item],
        }
    }

    /// Completes elements `[start, start + n)` of `view` after the plan wrote them:
    /// scattered from the buffer, then the pages released.
    ///
    /// # Safety
    /// As for [`Side::slice`], with no slice of it alive.
    unsafe fn finish(&mut self, view: &View, start: usize, n: usize) {
        let item = view.item;
        let touched = match &self.buffer {
            None => Touched {
                low: view.data + start * item,
                high: view.data + (start + n) * item,
            },
            // SAFETY: by the caller; the buffer is the loop's own.
            Some(buffer) => unsafe {
                strided::scatter(view, start, &buffer[..n * item], self.region.swapped)
            },
        };
        self.region.release(touched, n);
    }
}

/// The source side of the loop.
enum Input {
    /// An array, or bytes the model holds, read in place or through a buffer.
    Memory(Side),
    /// A source in an external data file: `view` describes it as a C-contiguous array
    /// whose addresses are byte offsets into the source (from 0), re-described for the
    /// walk like the outputs; each chunk's runs are read into `buffer`.
    External { view: View, buffer: Vec<u8> },
}

impl Input {
    /// The view of the whole source, as the walk re-described it.
    fn view(&self) -> &View {
        match self {
            Input::Memory(side) => &side.region.view,
            Input::External { view, .. } => view,
        }
    }
}

/// Bytes per element of `data_type` (1 for a type without a whole-byte size, which
/// the model's checks refuse).
fn element_size(data_type: DataType) -> usize {
    data_type
        .size_in_bytes()
        .and_then(|s| usize::try_from(s).ok())
        .unwrap_or(1)
}

/// Strides in bytes of a C-contiguous array of `shape` and `item` bytes per element.
fn c_strides(shape: &[usize], item: usize) -> Dims<isize> {
    let mut strides: Dims<isize> = smallvec::smallvec![0; shape.len()];
    let mut step = item as isize;
    for k in (0..shape.len()).rev() {
        strides[k] = step;
        step *= shape[k].max(1) as isize;
    }
    strides
}

/// Computes every element of source `s`'s outputs ([`Streaming::outputs_of`]), reading
/// `feed` and writing `sinks` (one per output, in that order; each a live, writable
/// array of its output's shape and type that shares no byte with `feed`'s array or with
/// another sink, unless `feed` asks to be gathered because a sink is exactly its
/// memory).
///
/// The element positions are visited in the order [`walk::plan`] chooses (every node
/// being element-wise, any order gives the same elements), in chunks of at most
/// [`CHUNK_BYTES`] of input, outputs and scratch together. An array packed in that
/// order and in the machine's byte order is read or written in place; others go a chunk
/// at a time through a buffer. A source in an external data file ([`Feed::External`])
/// is walked as a C-contiguous array and each chunk read from the file into a buffer,
/// one positioned read per run of consecutive elements, so only chunks of it are ever
/// in memory. The GIL is released while chunks run; signals are checked every
/// [`SIGNAL_BYTES`], raising their exception there, with the chunks done written.
/// Every chunk runs on the CPU, bit for bit as the whole-array run.
pub(crate) fn stream_source(
    py: Python<'_>,
    plan: &Streaming,
    s: usize,
    feed: Feed<'_>,
    sinks: Vec<Region>,
    scratch: &mut Scratch,
) -> PyResult<()> {
    let source = &plan.sources()[s];
    let in_item = element_size(source.data_type);
    let per_element = plan
        .outputs_of(s)
        .iter()
        .map(|&o| element_size(plan.outputs()[o].data_type))
        .fold(in_item, usize::saturating_add);
    if source.elements == 0 {
        return Ok(());
    }
    let chunk = plan.chunk_elements(s, CHUNK_BYTES, Streaming::MIN_CHUNK_ELEMENTS);
    let name = quoted(&source.name);
    let packed_view = |data: usize| View {
        data,
        shape: Dims::from_slice(&source.shape),
        strides: c_strides(&source.shape, in_item),
        item: in_item,
    };
    let (mut input, gather) = match feed {
        Feed::Held(bytes) if bytes.len() != source.elements.saturating_mul(in_item) => {
            return Err(OnnxError::new_err(format!(
                "the data of {name} holds {} bytes, not the {} elements its shape needs",
                bytes.len(),
                source.elements
            )))
        }
        Feed::Held(bytes) => {
            let region = Region {
                view: packed_view(bytes.as_ptr() as usize),
                swapped: false,
                file_backed: false,
            };
            (Some(region), false)
        }
        Feed::Array { region, gather } => (Some(region), gather),
        Feed::External => (None, false),
    };
    let mut external = packed_view(0);
    let mut outputs = sinks;
    let walk = {
        let input_view = match input.as_mut() {
            Some(region) => &mut region.view,
            None => &mut external,
        };
        let mut views: Vec<&mut View> = std::iter::once(input_view)
            .chain(outputs.iter_mut().map(|r| &mut r.view))
            .collect();
        walk::plan(&mut views, chunk)
    };
    let tiled = walk.tiles() > 1;
    let in_place = |r: &Region| !tiled && !r.swapped && walk::packed(&r.view);
    let what = format!("input {name}");
    let mut input = match input {
        Some(region) => {
            let direct = !gather && in_place(&region);
            Input::Memory(Side::new(region, direct, chunk * in_item, &what)?)
        }
        None => Input::External {
            view: external,
            buffer: allocate(chunk * in_item, &what)?,
        },
    };
    let mut outputs = outputs
        .into_iter()
        .zip(plan.outputs_of(s))
        .map(|(region, &o)| {
            let output = &plan.outputs()[o];
            let len = chunk * element_size(output.data_type);
            let direct = in_place(&region);
            Side::new(
                region,
                direct,
                len,
                &format!("output {}", quoted(&output.name)),
            )
        })
        .collect::<PyResult<Vec<Side>>>()?;

    let mut at = (0usize, 0usize);
    while at.0 < walk.tiles() {
        py.check_signals()?;
        at = py
            .detach(|| {
                let (mut tile, mut start) = at;
                let mut moved = 0usize;
                while tile < walk.tiles() && moved < SIGNAL_BYTES {
                    let (origin, sizes) = walk.tile(tile);
                    let elements: usize = sizes.iter().product();
                    let n = chunk.min(elements - start);
                    // SAFETY: the sides are the live arrays the caller describes, in
                    // one walk; what may alias is gathered or copied by the caller.
                    unsafe {
                        run_chunk(
                            plan,
                            s,
                            (&origin, &sizes, start, n),
                            &mut input,
                            &mut outputs,
                            scratch,
                        )?
                    };
                    moved = moved.saturating_add(n.saturating_mul(per_element));
                    start += n;
                    if start == elements {
                        (tile, start) = (tile + 1, 0);
                    }
                }
                Ok((tile, start))
            })
            .map_err(onnx::error)?;
    }
    Ok(())
}

/// A zeroed buffer of `len` bytes for a chunk of `what`, allocated fallibly.
fn allocate(len: usize, what: &str) -> PyResult<Vec<u8>> {
    let mut buffer = Vec::new();
    buffer.try_reserve_exact(len).map_err(|_| {
        PyMemoryError::new_err(format!("cannot allocate {len} bytes for a chunk of {what}"))
    })?;
    buffer.resize(len, 0);
    Ok(buffer)
}

/// Reads elements `[start, start + n)` of `view` (a tile of an [`Input::External`]
/// source's view, whose addresses are byte offsets into the source) into `into`, packed
/// in that order: one [`Streaming::read_initializer`] per run of consecutive elements.
fn read_external(
    plan: &Streaming,
    s: usize,
    view: &View,
    start: usize,
    into: &mut [u8],
) -> Result<(), ewise_onnx::Error> {
    let item = view.item;
    let n = into.len() / item;
    let mut done = 0usize;
    let mut result = Ok(());
    strided::runs(view, start, n, |address, step, len| {
        if result.is_err() {
            return;
        }
        if step == item as isize || len == 1 {
            let out = &mut into[done * item..(done + len) * item];
            result = plan.read_initializer(s, address / item, out);
        } else {
            for i in 0..len {
                let at = address.wrapping_add_signed(i as isize * step) / item;
                let out = &mut into[(done + i) * item..(done + i + 1) * item];
                result = plan.read_initializer(s, at, out);
                if result.is_err() {
                    return;
                }
            }
        }
        done += len;
    });
    result
}

/// Runs elements `[start, start + n)` of the tile at `origin` of `sizes`, from `input`
/// into `outputs`.
///
/// # Safety
/// As for [`Side::read`] and [`Side::slice`]: the input's slice and the outputs' slices
/// never share a byte.
unsafe fn run_chunk(
    plan: &Streaming,
    s: usize,
    (origin, sizes, start, n): (&[usize], &[usize], usize, usize),
    input: &mut Input,
    outputs: &mut [Side],
    scratch: &mut Scratch,
) -> Result<(), ewise_onnx::Error> {
    let in_view = walk::sub(input.view(), origin, sizes);
    let out_views: Vec<View> = outputs
        .iter()
        .map(|o| walk::sub(&o.region.view, origin, sizes))
        .collect();
    // SAFETY: by the caller.
    unsafe {
        let (bytes, read) = match &mut *input {
            Input::Memory(side) => {
                let (bytes, read) = side.read(&in_view, start, n);
                (bytes, Some(read))
            }
            Input::External { buffer, .. } => {
                let into = &mut buffer[..n * in_view.item];
                read_external(plan, s, &in_view, start, into)?;
                (&*into, None)
            }
        };
        let mut slices: Vec<&mut [u8]> = outputs
            .iter_mut()
            .zip(&out_views)
            .map(|(o, view)| o.slice(view, start, n))
            .collect();
        plan.run_chunk(s, bytes, &mut slices, scratch)?;
        drop(slices);
        for (output, view) in outputs.iter_mut().zip(&out_views) {
            output.finish(view, start, n);
        }
        if let (Input::Memory(side), Some(read)) = (input, read) {
            side.region.release(read, n);
        }
    }
    Ok(())
}
