//! Tensors: the values a model takes and gives, and their decoding from `TensorProto`
//! (raw little-endian data, the typed repeated fields, or an external file).

use ewise_cpu::text::quoted;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use ewise_cpu::half::{bf16, f16};
use ewise_cpu::DataType;
use prost::Message;

use crate::dtype;
use crate::error::{Error, Result};
use crate::external::{Extent, Location, Reader};
use crate::files;
use crate::proto::{DataLocation, TensorProto};

/// A dense tensor: element type, shape and packed row-major element bytes in the
/// machine's native byte order (little-endian on every platform ewise targets).
///
/// Invariant, checked by [`Tensor::new`] and by [`crate::Model::run`] for tensors built
/// field by field: `data.len()` equals the product of `shape` times the element size.
/// A scalar has an empty shape and one element; a shape containing 0 is empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tensor {
    /// The element type.
    pub data_type: DataType,
    /// The size of each dimension.
    pub shape: Vec<usize>,
    /// The elements' bytes.
    pub data: Vec<u8>,
}

/// A Rust type that stands for one tensor element type: `f32`, `f64`, [`struct@f16`], [`struct@bf16`],
/// the 8- to 64-bit integers and `bool`. Sealed.
pub trait Scalar: Copy + sealed::Sealed {
    /// The element type.
    const DATA_TYPE: DataType;
    /// Appends this value's native-endian bytes.
    fn put(self, out: &mut Vec<u8>);
    /// Reads a value from exactly `size_of::<Self>()` native-endian bytes.
    fn get(bytes: &[u8]) -> Self;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! scalar {
    ($($t:ty => $d:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl Scalar for $t {
            const DATA_TYPE: DataType = DataType::$d;
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_ne_bytes());
            }
            fn get(bytes: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(bytes);
                <$t>::from_ne_bytes(a)
            }
        }
    )*};
}

scalar! {
    f32 => Float32, f64 => Float64, f16 => Float16, bf16 => Bfloat16,
    i8 => Int8, i16 => Int16, i32 => Int32, i64 => Int64,
    u8 => Uint8, u16 => Uint16, u32 => Uint32, u64 => Uint64,
}

impl sealed::Sealed for bool {}
impl Scalar for bool {
    const DATA_TYPE: DataType = DataType::Bool;
    fn put(self, out: &mut Vec<u8>) {
        out.push(u8::from(self));
    }
    fn get(bytes: &[u8]) -> Self {
        bytes[0] != 0
    }
}

/// Formats a shape as `[2, 3]`.
pub(crate) fn shape_text(shape: &[usize]) -> String {
    format!("{shape:?}")
}

/// The number of bytes a tensor of this type and shape holds; `None` on overflow or for
/// types without a byte size.
pub(crate) fn byte_len(data_type: DataType, shape: &[usize]) -> Option<usize> {
    let size = usize::try_from(data_type.size_in_bytes()?).ok()?;
    shape.iter().try_fold(size, |acc, &d| acc.checked_mul(d))
}

impl Tensor {
    /// A tensor from native-endian element bytes; fails unless `data` holds exactly the
    /// elements `shape` needs.
    pub fn new(data_type: DataType, shape: Vec<usize>, data: Vec<u8>) -> Result<Tensor> {
        let tensor = Tensor {
            data_type,
            shape,
            data,
        };
        tensor.check("")?;
        Ok(tensor)
    }

    /// A tensor of `values`; fails unless there are exactly as many as `shape` needs.
    pub fn from_values<T: Scalar>(shape: Vec<usize>, values: &[T]) -> Result<Tensor> {
        let mut data = Vec::with_capacity(std::mem::size_of_val(values));
        for &v in values {
            v.put(&mut data);
        }
        Tensor::new(T::DATA_TYPE, shape, data)
    }

    /// A 0-dimensional tensor holding one value.
    pub fn scalar<T: Scalar>(value: T) -> Tensor {
        let mut data = Vec::new();
        value.put(&mut data);
        Tensor {
            data_type: T::DATA_TYPE,
            shape: Vec::new(),
            data,
        }
    }

    /// The elements as `T`, or `None` when `T` is not this tensor's element type or the
    /// data length is inconsistent.
    pub fn values<T: Scalar>(&self) -> Option<Vec<T>> {
        let size = std::mem::size_of::<T>();
        if T::DATA_TYPE != self.data_type || !self.data.len().is_multiple_of(size) {
            return None;
        }
        Some(self.data.chunks_exact(size).map(T::get).collect())
    }

    /// The number of elements (1 for a scalar), or `None` on overflow.
    pub fn element_count(&self) -> Option<usize> {
        self.shape
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d))
    }

    /// Checks the invariant: `data` holds exactly the elements `shape` needs, and the
    /// element type has a whole-byte size. `name` goes into the error.
    pub fn check(&self, name: &str) -> Result<()> {
        let expected = byte_len(self.data_type, &self.shape).ok_or_else(|| Error::TooLarge {
            what: format!("tensor {} of {}", quoted(name), dtype::name(self.data_type)),
            shape: shape_text(&self.shape),
            limit: "its byte size does not fit in this machine's address space",
        })?;
        if self.data.len() != expected {
            return Err(Error::InvalidTensor {
                name: name.to_string(),
                reason: format!(
                    "data holds {} bytes, but shape {} of {} needs {expected}",
                    self.data.len(),
                    shape_text(&self.shape),
                    dtype::name(self.data_type)
                ),
            });
        }
        Ok(())
    }

    /// Decodes a `TensorProto`. External data (`data_location = EXTERNAL`) is read from
    /// `location` relative to `base_dir` (the model's directory), which must then be
    /// given: a regular file inside `base_dir`, reached without following any symbolic
    /// link below it (see [`Error::ExternalDataRefused`]), holding the range claimed
    /// (checked before allocating; an allocation that fails is [`Error::OutOfMemory`]).
    ///
    /// Accepted data: `raw_data` (little-endian, exactly the tensor's byte size), or the
    /// typed field ONNX assigns to the element type (`float_data` for float,
    /// `double_data` for double, `int64_data` for int64, `uint64_data` for uint32 and
    /// uint64, `int32_data` for the other integer types, bool, and the bit patterns of
    /// float16, bfloat16 and float8), holding exactly one entry per element, each in
    /// the type's range. Anything else is an [`Error::InvalidTensor`].
    pub fn from_proto(proto: &TensorProto, base_dir: Option<&Path>) -> Result<Tensor> {
        let head = TensorHead::parse(proto)?;
        let data = head.data(&mut Reader::new(base_dir))?;
        Ok(Tensor {
            data_type: head.data_type,
            shape: head.shape,
            data: Arc::unwrap_or_clone(data),
        })
    }

    /// Encodes as a `TensorProto` named `name`, with the data in `raw_data`
    /// (little-endian). Fails for types ONNX has no number for.
    pub fn to_proto(&self, name: &str) -> Result<TensorProto> {
        self.check(name)?;
        let data_type =
            dtype::to_onnx(self.data_type).ok_or_else(|| Error::UnsupportedElementType {
                what: format!("tensor {}", quoted(name)),
                given: self.data_type.name().to_string(),
                supported: supported_types(),
            })?;
        let dims = self
            .shape
            .iter()
            .map(|&d| {
                i64::try_from(d).map_err(|_| Error::TooLarge {
                    what: format!("tensor {}", quoted(name)),
                    shape: shape_text(&self.shape),
                    limit: "a dimension exceeds the int64 range of TensorProto.dims",
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(TensorProto {
            dims,
            data_type,
            name: name.to_string(),
            raw_data: from_little_endian(self.data_type, self.data.clone()),
            ..TensorProto::default()
        })
    }

    /// Reads a serialized `TensorProto` file (such as the `input_0.pb` files of ONNX's
    /// backend tests) and returns its name and value. External data is looked up beside
    /// the file.
    pub fn load_pb(path: &Path) -> Result<(String, Tensor)> {
        let bytes = files::read_file(path)?;
        let proto = TensorProto::decode(bytes.as_slice()).map_err(|source| Error::Decode {
            what: path.display().to_string(),
            message: "TensorProto",
            source,
        })?;
        let tensor = Tensor::from_proto(&proto, path.parent())?;
        Ok((proto.name, tensor))
    }
}

/// A `TensorProto` checked without reading any file or decoding any element: its
/// element type, shape, byte size and where its data is.
#[derive(Debug, Clone)]
pub(crate) struct TensorHead<'a> {
    /// The tensor's name.
    pub name: &'a str,
    /// The element type.
    pub data_type: DataType,
    /// The shape.
    pub shape: Vec<usize>,
    payload: Payload<'a>,
}

/// Where a tensor's data is.
#[derive(Debug, Clone)]
enum Payload<'a> {
    /// `raw_data`, of the right length.
    Raw(&'a [u8]),
    /// The typed field for the element type, with one entry per element.
    Typed {
        fields: TypedFields<'a>,
        count: usize,
    },
    /// An external file.
    External(Location<'a>),
}

impl<'a> TensorHead<'a> {
    /// Checks everything [`Tensor::from_proto`] checks that needs neither a file nor a
    /// pass over the elements: the element type, the dims and the byte size they give,
    /// the data location, which field holds data and its length, and the external data
    /// entries (the location's form, offset and length).
    pub fn parse(proto: &'a TensorProto) -> Result<TensorHead<'a>> {
        let name = proto.name.as_str();
        let invalid = |reason: String| Error::InvalidTensor {
            name: name.to_string(),
            reason,
        };
        let data_type =
            dtype::from_onnx(proto.data_type).ok_or_else(|| Error::UnsupportedElementType {
                what: format!("tensor {}", quoted(name)),
                given: dtype::onnx_name(proto.data_type),
                supported: supported_types(),
            })?;
        if proto.segment.is_some() {
            return Err(Error::Unsupported {
                feature: format!("segmented tensor data (tensor {})", quoted(name)),
            });
        }
        let mut shape = Vec::with_capacity(proto.dims.len());
        for (i, &d) in proto.dims.iter().enumerate() {
            let d = usize::try_from(d)
                .map_err(|_| invalid(format!("dims[{i}] is {d} (sizes must be >= 0)")))?;
            shape.push(d);
        }
        let expected = byte_len(data_type, &shape).ok_or_else(|| Error::TooLarge {
            what: format!("tensor {} of {}", quoted(name), dtype::name(data_type)),
            shape: shape_text(&shape),
            limit: "its byte size does not fit in this machine's address space",
        })?;
        let count = expected / usize::try_from(data_type.size_in_bytes().unwrap_or(1)).unwrap_or(1);
        let location = DataLocation::try_from(proto.data_location).map_err(|_| {
            invalid(format!(
                "data_location is {} (accepted: 0 DEFAULT, 1 EXTERNAL)",
                proto.data_location
            ))
        })?;
        let fields = TypedFields::of(proto);
        let payload = if location == DataLocation::External {
            if !proto.raw_data.is_empty() || fields.first_nonempty().is_some() {
                return Err(invalid(
                    "data_location is EXTERNAL but the message also holds data".into(),
                ));
            }
            Payload::External(Location::parse(proto, expected)?)
        } else if !proto.raw_data.is_empty() {
            if let Some(field) = fields.first_nonempty() {
                return Err(invalid(format!(
                    "both raw_data and {field} hold data (exactly one may)"
                )));
            }
            if proto.raw_data.len() != expected {
                return Err(invalid(format!(
                    "raw_data has {} bytes, but shape {} of {} needs {expected}",
                    proto.raw_data.len(),
                    shape_text(&shape),
                    dtype::name(data_type)
                )));
            }
            Payload::Raw(&proto.raw_data)
        } else {
            check_typed(data_type, &fields, count).map_err(invalid)?;
            Payload::Typed { fields, count }
        };
        Ok(TensorHead {
            name,
            data_type,
            shape,
            payload,
        })
    }

    /// The elements' native-order bytes: decoded from the message, or read through
    /// `reader` (which shares a range read before).
    pub fn data(&self, reader: &mut Reader<'_>) -> Result<Arc<Vec<u8>>> {
        match &self.payload {
            Payload::Raw(raw) => {
                let mut data = Vec::new();
                data.try_reserve_exact(raw.len())
                    .map_err(|_| Error::OutOfMemory {
                        what: format!("the raw_data of tensor {}", quoted(self.name)),
                        bytes: u64::try_from(raw.len()).unwrap_or(u64::MAX),
                    })?;
                data.extend_from_slice(raw);
                Ok(Arc::new(from_little_endian(self.data_type, data)))
            }
            Payload::Typed { fields, count } => {
                Ok(Arc::new(decode_typed(self.data_type, fields, *count)))
            }
            Payload::External(location) => {
                let le = reader.read(self.name, location)?;
                Ok(native_from_shared(self.data_type, le))
            }
        }
    }

    /// For external data, its range opened and checked through `reader` but not read
    /// ([`Reader::describe`]); `None` for data the message holds.
    pub fn describe(&self, reader: &mut Reader<'_>) -> Result<Option<Arc<Extent>>> {
        match &self.payload {
            Payload::External(location) => reader.describe(self.name, location).map(Some),
            _ => Ok(None),
        }
    }
}

/// Converts whole elements of `data_type` read as stored (little-endian) to native
/// order, in place: nothing to do on a little-endian machine.
pub(crate) fn native_in_place(data_type: DataType, bytes: &mut [u8]) {
    if cfg!(target_endian = "big") {
        let size = usize::try_from(data_type.size_in_bytes().unwrap_or(1)).unwrap_or(1);
        if size > 1 {
            for chunk in bytes.chunks_exact_mut(size) {
                chunk.reverse();
            }
        }
    }
}

/// [`from_little_endian`] for bytes that may be shared: the same bytes on a
/// little-endian machine, a converted copy on a big-endian one.
fn native_from_shared(data_type: DataType, le: Arc<Vec<u8>>) -> Arc<Vec<u8>> {
    if cfg!(target_endian = "big") && data_type.size_in_bytes().unwrap_or(1) > 1 {
        Arc::new(from_little_endian(data_type, Vec::clone(&le)))
    } else {
        le
    }
}

impl fmt::Display for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "tensor({}) {}",
            dtype::name(self.data_type),
            shape_text(&self.shape)
        )
    }
}

/// The ONNX names of every element type a tensor may hold.
pub(crate) fn supported_types() -> String {
    let types: Vec<DataType> = DataType::ALL
        .into_iter()
        .filter(|&t| dtype::to_onnx(t).is_some())
        .collect();
    dtype::names(&types)
}

/// Converts packed little-endian element bytes to native order (and back: the swap is
/// its own inverse).
fn from_little_endian(data_type: DataType, mut bytes: Vec<u8>) -> Vec<u8> {
    native_in_place(data_type, &mut bytes);
    bytes
}

/// The typed repeated fields of a `TensorProto`, with their schema names.
#[derive(Debug, Clone, Copy)]
struct TypedFields<'a> {
    proto: &'a TensorProto,
}

impl<'a> TypedFields<'a> {
    fn of(proto: &'a TensorProto) -> Self {
        TypedFields { proto }
    }

    fn lengths(&self) -> [(&'static str, usize); 6] {
        let p = self.proto;
        [
            ("float_data", p.float_data.len()),
            ("int32_data", p.int32_data.len()),
            ("string_data", p.string_data.len()),
            ("int64_data", p.int64_data.len()),
            ("double_data", p.double_data.len()),
            ("uint64_data", p.uint64_data.len()),
        ]
    }

    fn first_nonempty(&self) -> Option<&'static str> {
        self.lengths()
            .into_iter()
            .find(|&(_, n)| n > 0)
            .map(|(name, _)| name)
    }

    fn other_than(&self, field: &str) -> Option<&'static str> {
        self.lengths()
            .into_iter()
            .find(|&(name, n)| n > 0 && name != field)
            .map(|(name, _)| name)
    }
}

/// The typed field ONNX stores elements of `data_type` in.
fn typed_field(data_type: DataType) -> &'static str {
    match data_type {
        DataType::Float32 => "float_data",
        DataType::Float64 => "double_data",
        DataType::Int64 => "int64_data",
        DataType::Uint32 | DataType::Uint64 => "uint64_data",
        _ => "int32_data",
    }
}

/// The range an `int32_data` entry must lie in for `data_type`.
fn int32_range(data_type: DataType) -> (i64, i64) {
    match data_type {
        DataType::Int8 => (i8::MIN.into(), i8::MAX.into()),
        DataType::Int16 => (i16::MIN.into(), i16::MAX.into()),
        DataType::Int32 => (i32::MIN.into(), i32::MAX.into()),
        DataType::Bool => (0, 1),
        DataType::Uint16 | DataType::Float16 | DataType::Bfloat16 => (0, u16::MAX.into()),
        _ => (0, u8::MAX.into()),
    }
}

/// Checks that the typed field for `data_type`, and no other, holds `count` entries,
/// each in the type's range.
fn check_typed(
    data_type: DataType,
    fields: &TypedFields<'_>,
    count: usize,
) -> std::result::Result<(), String> {
    let field = typed_field(data_type);
    if let Some(other) = fields.other_than(field) {
        return Err(format!(
            "{} data is in {other} (accepted: raw_data or {field})",
            dtype::name(data_type)
        ));
    }
    let given = fields
        .lengths()
        .into_iter()
        .find(|&(name, _)| name == field)
        .map_or(0, |(_, n)| n);
    if given != count {
        return Err(if given == 0 {
            format!("no data for {count} elements (raw_data and {field} are empty)")
        } else {
            format!("{field} has {given} entries, but the shape needs {count}")
        });
    }
    let p = fields.proto;
    match data_type {
        DataType::Float32 | DataType::Float64 | DataType::Int64 | DataType::Uint64 => {}
        DataType::Uint32 => {
            if let Some((i, v)) = p
                .uint64_data
                .iter()
                .enumerate()
                .find(|&(_, &v)| u32::try_from(v).is_err())
            {
                return Err(format!("uint64_data[{i}] is {v}, outside the uint32 range"));
            }
        }
        _ => {
            let (lo, hi) = int32_range(data_type);
            if let Some((i, v)) = p
                .int32_data
                .iter()
                .enumerate()
                .find(|&(_, &v)| i64::from(v) < lo || i64::from(v) > hi)
            {
                return Err(format!(
                    "int32_data[{i}] is {v}, outside {lo} to {hi} for {}",
                    dtype::name(data_type)
                ));
            }
        }
    }
    Ok(())
}

/// The native-order bytes of the elements in the typed field for `data_type`, which
/// [`check_typed`] has accepted (entries out of range would be clamped).
fn decode_typed(data_type: DataType, fields: &TypedFields<'_>, count: usize) -> Vec<u8> {
    let p = fields.proto;
    let size = usize::try_from(data_type.size_in_bytes().unwrap_or(1)).unwrap_or(1);
    let mut out = Vec::with_capacity(count.saturating_mul(size));
    match data_type {
        DataType::Float32 => p.float_data.iter().for_each(|v| v.put(&mut out)),
        DataType::Float64 => p.double_data.iter().for_each(|v| v.put(&mut out)),
        DataType::Int64 => p.int64_data.iter().for_each(|v| v.put(&mut out)),
        DataType::Uint64 => p.uint64_data.iter().for_each(|v| v.put(&mut out)),
        DataType::Uint32 => p
            .uint64_data
            .iter()
            .for_each(|&v| u32::try_from(v).unwrap_or(u32::MAX).put(&mut out)),
        _ => {
            for &v in &p.int32_data {
                let bytes = v.to_le_bytes();
                let mut le = bytes[..size.min(4)].to_vec();
                if cfg!(target_endian = "big") {
                    le.reverse();
                }
                out.extend_from_slice(&le);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proto(data_type: i32, dims: &[i64]) -> TensorProto {
        TensorProto {
            data_type,
            dims: dims.to_vec(),
            name: "t".into(),
            ..TensorProto::default()
        }
    }

    #[test]
    fn int32_data_holds_narrow_types_and_bit_patterns() {
        let mut p = proto(10, &[2]);
        p.int32_data = vec![0x3C00, 0xFC00];
        let t = Tensor::from_proto(&p, None).unwrap();
        assert_eq!(t.values::<f16>().unwrap(), [f16::ONE, f16::NEG_INFINITY]);
        let mut p = proto(3, &[3]);
        p.int32_data = vec![-128, 0, 127];
        let t = Tensor::from_proto(&p, None).unwrap();
        assert_eq!(t.values::<i8>().unwrap(), [-128, 0, 127]);
        let mut p = proto(19, &[1]);
        p.int32_data = vec![0x7C];
        assert_eq!(Tensor::from_proto(&p, None).unwrap().data, [0x7C]);
    }

    #[test]
    fn out_of_range_typed_values_are_refused() {
        let mut p = proto(3, &[1]);
        p.int32_data = vec![128];
        let err = Tensor::from_proto(&p, None).unwrap_err().to_string();
        assert!(
            err.contains("int32_data[0] is 128, outside -128 to 127 for int8"),
            "{err}"
        );
        let mut p = proto(9, &[1]);
        p.int32_data = vec![2];
        assert!(Tensor::from_proto(&p, None).is_err());
        let mut p = proto(12, &[1]);
        p.uint64_data = vec![1 << 32];
        assert!(Tensor::from_proto(&p, None).is_err());
    }

    #[test]
    fn data_in_the_wrong_field_or_both_is_refused() {
        let mut p = proto(1, &[1]);
        p.double_data = vec![1.0];
        let err = Tensor::from_proto(&p, None).unwrap_err().to_string();
        assert!(err.contains("float data is in double_data"), "{err}");
        let mut p = proto(1, &[1]);
        p.float_data = vec![1.0];
        p.raw_data = 1f32.to_le_bytes().to_vec();
        assert!(Tensor::from_proto(&p, None).is_err());
    }

    #[test]
    fn huge_claimed_shapes_fail_before_allocating() {
        let p = proto(11, &[i64::MAX, i64::MAX]);
        assert!(matches!(
            Tensor::from_proto(&p, None),
            Err(Error::TooLarge { .. })
        ));
        let p = proto(11, &[1 << 40]);
        assert!(Tensor::from_proto(&p, None).is_err());
        let p = proto(1, &[-1]);
        assert!(Tensor::from_proto(&p, None).is_err());
    }

    #[test]
    fn proto_round_trip_keeps_bits() {
        let t = Tensor::from_values(vec![2, 1], &[f32::from_bits(0x7FC0_0001), -0.0]).unwrap();
        let back = Tensor::from_proto(&t.to_proto("x").unwrap(), None).unwrap();
        assert_eq!(back, t);
    }
}
