//! `include/ewise.h` against the Rust side and against directml.h.
//!
//! For every DML struct and ewise's two structs, a generated C11 file asserts at compile
//! time that `sizeof`, `_Alignof`, and each field's `offsetof` and `sizeof` equal the
//! Rust side's (`ewise_c::types`); that every enum constant equals the table of
//! directml.h's values kept below (which the Rust constants must equal too); that every
//! enum is as large as its Rust alias; and that the functions have the issue's exact
//! signatures. The same file is compiled as C11 and as C++17, the header alone as C99,
//! and a C++ program that includes a directml.h stand-in first checks the header then
//! takes DirectML's definitions. Compiler: `cc` and `c++` (env `CC`, `CXX`). Without a C
//! compiler the test says so in one line and passes, unless `CI=true` or
//! `EWISE_REQUIRE_CC=1`.

use std::ffi::CStr;
use std::fmt::Write as _;
use std::mem::{align_of, offset_of, size_of};
use std::path::{Path, PathBuf};
use std::process::Command;

use ewise_c::types::*;
use ewise_c::{ewise_buffer, ewise_compiled_operator, ewise_device, ewise_operator};

/// directml.h's values (DirectX-Headers' DirectML.h, DML_TARGET_VERSION 0x6400), kept
/// here by hand: the header and the Rust constants must both equal them.
const DIRECTML_H: &[(&str, u32)] = &[
    ("DML_TENSOR_DATA_TYPE_UNKNOWN", 0),
    ("DML_TENSOR_DATA_TYPE_FLOAT32", 1),
    ("DML_TENSOR_DATA_TYPE_FLOAT16", 2),
    ("DML_TENSOR_DATA_TYPE_UINT32", 3),
    ("DML_TENSOR_DATA_TYPE_UINT16", 4),
    ("DML_TENSOR_DATA_TYPE_UINT8", 5),
    ("DML_TENSOR_DATA_TYPE_INT32", 6),
    ("DML_TENSOR_DATA_TYPE_INT16", 7),
    ("DML_TENSOR_DATA_TYPE_INT8", 8),
    ("DML_TENSOR_DATA_TYPE_FLOAT64", 9),
    ("DML_TENSOR_DATA_TYPE_UINT64", 10),
    ("DML_TENSOR_DATA_TYPE_INT64", 11),
    ("DML_TENSOR_DATA_TYPE_UINT4", 12),
    ("DML_TENSOR_DATA_TYPE_INT4", 13),
    ("DML_TENSOR_TYPE_INVALID", 0),
    ("DML_TENSOR_TYPE_BUFFER", 1),
    ("DML_TENSOR_FLAG_NONE", 0),
    ("DML_TENSOR_FLAG_OWNED_BY_DML", 1),
    ("DML_OPERATOR_INVALID", 0),
    ("DML_OPERATOR_ELEMENT_WISE_SIGN", 79),
    ("DML_OPERATOR_ELEMENT_WISE_IS_INFINITY", 100),
    ("DML_IS_INFINITY_MODE_EITHER", 0),
    ("DML_IS_INFINITY_MODE_POSITIVE", 1),
    ("DML_IS_INFINITY_MODE_NEGATIVE", 2),
    ("DML_FEATURE_LEVEL_1_0", 0x1000),
    ("DML_FEATURE_LEVEL_2_0", 0x2000),
    ("DML_FEATURE_LEVEL_2_1", 0x2100),
    ("DML_FEATURE_LEVEL_3_0", 0x3000),
    ("DML_FEATURE_LEVEL_3_1", 0x3100),
    ("DML_FEATURE_LEVEL_4_0", 0x4000),
    ("DML_FEATURE_LEVEL_4_1", 0x4100),
    ("DML_FEATURE_LEVEL_5_0", 0x5000),
    ("DML_FEATURE_LEVEL_5_1", 0x5100),
    ("DML_FEATURE_LEVEL_5_2", 0x5200),
    ("DML_FEATURE_LEVEL_6_0", 0x6000),
    ("DML_FEATURE_LEVEL_6_1", 0x6100),
    ("DML_FEATURE_LEVEL_6_2", 0x6200),
    ("DML_FEATURE_LEVEL_6_3", 0x6300),
    ("DML_FEATURE_LEVEL_6_4", 0x6400),
    ("DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT", 0),
    ("DML_FEATURE_FEATURE_LEVELS", 1),
    ("DML_EXECUTION_FLAG_NONE", 0),
    ("DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION", 1),
    ("DML_EXECUTION_FLAG_DISABLE_META_COMMANDS", 2),
    ("DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE", 4),
];

/// ewise's own values, as the issue and the contract fix them.
const EWISE_VALUES: &[(&str, u32)] = &[
    ("EWISE_OK", 0),
    ("EWISE_ERROR_INVALID_ARGUMENT", 1),
    ("EWISE_ERROR_NOT_SUPPORTED", 2),
    ("EWISE_ERROR_OUT_OF_MEMORY", 3),
    ("EWISE_ERROR_DEVICE_UNAVAILABLE", 4),
    ("EWISE_ERROR_INTERNAL", 5),
    ("EWISE_DEVICE_CPU", 0),
    ("EWISE_DEVICE_GPU", 1),
    ("EWISE_NAN_ZERO", 0),
    ("EWISE_NAN_PROPAGATE", 1),
    ("EWISE_TENSOR_DATA_TYPE_BFLOAT16", 1000),
    ("EWISE_TENSOR_DATA_TYPE_BOOL", 1001),
    ("EWISE_TENSOR_DATA_TYPE_FLOAT8E4M3FN", 1002),
    ("EWISE_TENSOR_DATA_TYPE_FLOAT8E4M3FNUZ", 1003),
    ("EWISE_TENSOR_DATA_TYPE_FLOAT8E5M2", 1004),
    ("EWISE_TENSOR_DATA_TYPE_FLOAT8E5M2FNUZ", 1005),
    ("EWISE_IS_INFINITY_MODE_NEITHER", 1000),
    ("EWISE_VERSION_MAJOR", 0),
    ("EWISE_VERSION_MINOR", 1),
    ("EWISE_VERSION_PATCH", 0),
];

/// One C struct as Rust lays it out.
struct Layout {
    name: &'static str,
    size: usize,
    align: usize,
    /// Name, offset and size of each field, in declaration order.
    fields: Vec<(&'static str, usize, usize)>,
}

/// The size of the field a projection returns.
fn field_size<T, F>(_: fn(&T) -> &F) -> usize {
    size_of::<F>()
}

macro_rules! layout {
    ($t:ident { $($f:ident),* $(,)? }) => {
        Layout {
            name: stringify!($t),
            size: size_of::<$t>(),
            align: align_of::<$t>(),
            fields: vec![$((stringify!($f), offset_of!($t, $f), field_size(|s: &$t| &s.$f))),*],
        }
    };
}

/// Every struct of the header, every field named (a field the Rust side lacks, or
/// names differently, fails to compile here; one the C side lacks fails in C).
fn layouts() -> Vec<Layout> {
    vec![
        layout!(DML_BUFFER_TENSOR_DESC {
            DataType,
            Flags,
            DimensionCount,
            Sizes,
            Strides,
            TotalTensorSizeInBytes,
            GuaranteedBaseOffsetAlignment,
        }),
        layout!(DML_TENSOR_DESC { Type, Desc }),
        layout!(DML_OPERATOR_DESC { Type, Desc }),
        layout!(DML_ELEMENT_WISE_SIGN_OPERATOR_DESC {
            InputTensor,
            OutputTensor
        }),
        layout!(DML_ELEMENT_WISE_IS_INFINITY_OPERATOR_DESC {
            InputTensor,
            OutputTensor,
            InfinityMode,
        }),
        layout!(DML_FEATURE_QUERY_TENSOR_DATA_TYPE_SUPPORT { DataType }),
        layout!(DML_FEATURE_DATA_TENSOR_DATA_TYPE_SUPPORT { IsSupported }),
        layout!(DML_FEATURE_QUERY_FEATURE_LEVELS {
            RequestedFeatureLevelCount,
            RequestedFeatureLevels,
        }),
        layout!(DML_FEATURE_DATA_FEATURE_LEVELS {
            MaxSupportedFeatureLevel
        }),
        layout!(EWISE_DEVICE_DESC {
            Kind,
            FeatureLevel,
            Extensions,
            NanPolicy
        }),
        layout!(EWISE_BUFFER_BINDING {
            Buffer,
            Offset,
            SizeInBytes
        }),
    ]
}

/// The Rust constants, by their C names, with their values.
fn rust_constants() -> Vec<(&'static str, u32)> {
    macro_rules! named {
        ($($c:ident),* $(,)?) => { vec![$((stringify!($c), $c)),*] };
    }
    let mut v: Vec<(&'static str, u32)> = named![
        DML_TENSOR_DATA_TYPE_UNKNOWN,
        DML_TENSOR_DATA_TYPE_FLOAT32,
        DML_TENSOR_DATA_TYPE_FLOAT16,
        DML_TENSOR_DATA_TYPE_UINT32,
        DML_TENSOR_DATA_TYPE_UINT16,
        DML_TENSOR_DATA_TYPE_UINT8,
        DML_TENSOR_DATA_TYPE_INT32,
        DML_TENSOR_DATA_TYPE_INT16,
        DML_TENSOR_DATA_TYPE_INT8,
        DML_TENSOR_DATA_TYPE_FLOAT64,
        DML_TENSOR_DATA_TYPE_UINT64,
        DML_TENSOR_DATA_TYPE_INT64,
        DML_TENSOR_DATA_TYPE_UINT4,
        DML_TENSOR_DATA_TYPE_INT4,
        DML_TENSOR_TYPE_INVALID,
        DML_TENSOR_TYPE_BUFFER,
        DML_TENSOR_FLAG_NONE,
        DML_TENSOR_FLAG_OWNED_BY_DML,
        DML_OPERATOR_INVALID,
        DML_OPERATOR_ELEMENT_WISE_SIGN,
        DML_OPERATOR_ELEMENT_WISE_IS_INFINITY,
        DML_IS_INFINITY_MODE_EITHER,
        DML_IS_INFINITY_MODE_POSITIVE,
        DML_IS_INFINITY_MODE_NEGATIVE,
        DML_FEATURE_LEVEL_1_0,
        DML_FEATURE_LEVEL_2_0,
        DML_FEATURE_LEVEL_2_1,
        DML_FEATURE_LEVEL_3_0,
        DML_FEATURE_LEVEL_3_1,
        DML_FEATURE_LEVEL_4_0,
        DML_FEATURE_LEVEL_4_1,
        DML_FEATURE_LEVEL_5_0,
        DML_FEATURE_LEVEL_5_1,
        DML_FEATURE_LEVEL_5_2,
        DML_FEATURE_LEVEL_6_0,
        DML_FEATURE_LEVEL_6_1,
        DML_FEATURE_LEVEL_6_2,
        DML_FEATURE_LEVEL_6_3,
        DML_FEATURE_LEVEL_6_4,
        DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT,
        DML_FEATURE_FEATURE_LEVELS,
        DML_EXECUTION_FLAG_NONE,
        DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION,
        DML_EXECUTION_FLAG_DISABLE_META_COMMANDS,
        DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE,
        EWISE_OK,
        EWISE_ERROR_INVALID_ARGUMENT,
        EWISE_ERROR_NOT_SUPPORTED,
        EWISE_ERROR_OUT_OF_MEMORY,
        EWISE_ERROR_DEVICE_UNAVAILABLE,
        EWISE_ERROR_INTERNAL,
        EWISE_DEVICE_CPU,
        EWISE_DEVICE_GPU,
        EWISE_NAN_ZERO,
        EWISE_NAN_PROPAGATE,
        EWISE_TENSOR_DATA_TYPE_BFLOAT16,
        EWISE_TENSOR_DATA_TYPE_BOOL,
        EWISE_TENSOR_DATA_TYPE_FLOAT8E4M3FN,
        EWISE_TENSOR_DATA_TYPE_FLOAT8E4M3FNUZ,
        EWISE_TENSOR_DATA_TYPE_FLOAT8E5M2,
        EWISE_TENSOR_DATA_TYPE_FLOAT8E5M2FNUZ,
    ];
    // No constant in ewise_c::types: ewise's own number for the extension mode.
    v.push((
        "EWISE_IS_INFINITY_MODE_NEITHER",
        ewise::InfinityMode::Neither.raw(),
    ));
    let version = |part: &str| part.parse::<u32>().expect("a numeric version part");
    v.push((
        "EWISE_VERSION_MAJOR",
        version(env!("CARGO_PKG_VERSION_MAJOR")),
    ));
    v.push((
        "EWISE_VERSION_MINOR",
        version(env!("CARGO_PKG_VERSION_MINOR")),
    ));
    v.push((
        "EWISE_VERSION_PATCH",
        version(env!("CARGO_PKG_VERSION_PATCH")),
    ));
    v
}

/// Each C enum type with the size of its Rust alias.
fn enum_sizes() -> Vec<(&'static str, usize)> {
    macro_rules! sized {
        ($($t:ident),* $(,)?) => { vec![$((stringify!($t), size_of::<$t>())),*] };
    }
    sized![
        DML_TENSOR_DATA_TYPE,
        DML_TENSOR_TYPE,
        DML_TENSOR_FLAGS,
        DML_OPERATOR_TYPE,
        DML_IS_INFINITY_MODE,
        DML_FEATURE_LEVEL,
        DML_FEATURE,
        DML_EXECUTION_FLAGS,
        EWISE_STATUS,
        EWISE_DEVICE_KIND,
        EWISE_NAN_POLICY,
    ]
}

/// The issue's signatures, as C function pointer declarations (name, declaration of a
/// pointer `p` of the right type).
const SIGNATURES: &[(&str, &str)] = &[
    ("ewise_last_error", "const char *(*p)(void)"),
    ("ewise_status_hresult", "int32_t (*p)(EWISE_STATUS)"),
    ("ewise_version", "const char *(*p)(void)"),
    ("ewise_create_device", "EWISE_STATUS (*p)(const EWISE_DEVICE_DESC *, ewise_device **)"),
    (
        "ewise_check_feature_support",
        "EWISE_STATUS (*p)(ewise_device *, DML_FEATURE, uint32_t, const void *, uint32_t, void *)",
    ),
    (
        "ewise_create_operator",
        "EWISE_STATUS (*p)(ewise_device *, const DML_OPERATOR_DESC *, ewise_operator **)",
    ),
    (
        "ewise_compile_operator",
        "EWISE_STATUS (*p)(ewise_device *, ewise_operator *, DML_EXECUTION_FLAGS, ewise_compiled_operator **)",
    ),
    ("ewise_create_buffer", "EWISE_STATUS (*p)(ewise_device *, uint64_t, ewise_buffer **)"),
    (
        "ewise_wrap_host_memory",
        "EWISE_STATUS (*p)(ewise_device *, void *, uint64_t, ewise_buffer **)",
    ),
    ("ewise_buffer_write", "EWISE_STATUS (*p)(ewise_buffer *, uint64_t, const void *, uint64_t)"),
    ("ewise_buffer_read", "EWISE_STATUS (*p)(ewise_buffer *, uint64_t, void *, uint64_t)"),
    (
        "ewise_execute",
        "EWISE_STATUS (*p)(ewise_compiled_operator *, const EWISE_BUFFER_BINDING *, const EWISE_BUFFER_BINDING *)",
    ),
    (
        "ewise_sign",
        "EWISE_STATUS (*p)(ewise_device *, DML_TENSOR_DATA_TYPE, const void *, void *, uint64_t)",
    ),
    (
        "ewise_is_infinity",
        "EWISE_STATUS (*p)(ewise_device *, DML_TENSOR_DATA_TYPE, DML_IS_INFINITY_MODE, const void *, uint8_t *, uint64_t)",
    ),
    ("ewise_release_device", "void (*p)(ewise_device *)"),
    ("ewise_release_operator", "void (*p)(ewise_operator *)"),
    ("ewise_release_compiled_operator", "void (*p)(ewise_compiled_operator *)"),
    ("ewise_release_buffer", "void (*p)(ewise_buffer *)"),
];

/// The Rust functions have the same signatures (a mismatch fails to compile).
#[test]
fn rust_signatures_match_the_header() {
    use std::ffi::{c_char, c_void};
    let _: unsafe extern "C" fn() -> *const c_char = ewise_c::ewise_last_error;
    let _: unsafe extern "C" fn(EWISE_STATUS) -> i32 = ewise_c::ewise_status_hresult;
    let _: unsafe extern "C" fn() -> *const c_char = ewise_c::ewise_version;
    let _: unsafe extern "C" fn(*const EWISE_DEVICE_DESC, *mut *mut ewise_device) -> EWISE_STATUS =
        ewise_c::ewise_create_device;
    let _: unsafe extern "C" fn(
        *mut ewise_device,
        DML_FEATURE,
        u32,
        *const c_void,
        u32,
        *mut c_void,
    ) -> EWISE_STATUS = ewise_c::ewise_check_feature_support;
    let _: unsafe extern "C" fn(
        *mut ewise_device,
        *const DML_OPERATOR_DESC,
        *mut *mut ewise_operator,
    ) -> EWISE_STATUS = ewise_c::ewise_create_operator;
    let _: unsafe extern "C" fn(
        *mut ewise_device,
        *mut ewise_operator,
        DML_EXECUTION_FLAGS,
        *mut *mut ewise_compiled_operator,
    ) -> EWISE_STATUS = ewise_c::ewise_compile_operator;
    let _: unsafe extern "C" fn(*mut ewise_device, u64, *mut *mut ewise_buffer) -> EWISE_STATUS =
        ewise_c::ewise_create_buffer;
    let _: unsafe extern "C" fn(
        *mut ewise_device,
        *mut c_void,
        u64,
        *mut *mut ewise_buffer,
    ) -> EWISE_STATUS = ewise_c::ewise_wrap_host_memory;
    let _: unsafe extern "C" fn(*mut ewise_buffer, u64, *const c_void, u64) -> EWISE_STATUS =
        ewise_c::ewise_buffer_write;
    let _: unsafe extern "C" fn(*mut ewise_buffer, u64, *mut c_void, u64) -> EWISE_STATUS =
        ewise_c::ewise_buffer_read;
    let _: unsafe extern "C" fn(
        *mut ewise_compiled_operator,
        *const EWISE_BUFFER_BINDING,
        *const EWISE_BUFFER_BINDING,
    ) -> EWISE_STATUS = ewise_c::ewise_execute;
    let _: unsafe extern "C" fn(
        *mut ewise_device,
        DML_TENSOR_DATA_TYPE,
        *const c_void,
        *mut c_void,
        u64,
    ) -> EWISE_STATUS = ewise_c::ewise_sign;
    let _: unsafe extern "C" fn(
        *mut ewise_device,
        DML_TENSOR_DATA_TYPE,
        DML_IS_INFINITY_MODE,
        *const c_void,
        *mut u8,
        u64,
    ) -> EWISE_STATUS = ewise_c::ewise_is_infinity;
    let _: unsafe extern "C" fn(*mut ewise_device) = ewise_c::ewise_release_device;
    let _: unsafe extern "C" fn(*mut ewise_operator) = ewise_c::ewise_release_operator;
    let _: unsafe extern "C" fn(*mut ewise_compiled_operator) =
        ewise_c::ewise_release_compiled_operator;
    let _: unsafe extern "C" fn(*mut ewise_buffer) = ewise_c::ewise_release_buffer;
}

/// The Rust constants equal the tables, and ewise's own numbers (its data types, levels,
/// operators and modes) equal directml.h's.
#[test]
fn rust_constants_equal_the_tables() {
    let rust = rust_constants();
    let tables: Vec<(&str, u32)> = DIRECTML_H.iter().chain(EWISE_VALUES).copied().collect();
    assert_eq!(
        rust.len(),
        tables.len(),
        "every table entry has one Rust constant"
    );
    for (name, value) in &tables {
        let got = rust
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("{name}: no Rust constant of that name"))
            .1;
        assert_eq!(
            got, *value,
            "{name}: Rust {got}, directml.h / contract {value}"
        );
    }
    for (name, value) in &tables {
        if let Some(t) = name.strip_prefix("DML_TENSOR_DATA_TYPE_") {
            let dt = ewise::DataType::from_raw(*value).unwrap_or_else(|| panic!("{name}"));
            assert_eq!(dt.to_string(), t, "{name} = {value} in ewise");
        }
        if let Some(t) = name.strip_prefix("EWISE_TENSOR_DATA_TYPE_") {
            let dt = ewise::DataType::from_raw(*value).unwrap_or_else(|| panic!("{name}"));
            assert_eq!(dt.to_string(), t, "{name} = {value} in ewise");
        }
        if let Some(l) = name.strip_prefix("DML_FEATURE_LEVEL_") {
            let level = ewise::FeatureLevel::from_raw(*value).unwrap_or_else(|| panic!("{name}"));
            assert_eq!(level.to_string(), l, "{name} = {value:#x} in ewise");
        }
        if let Some(m) = name.strip_prefix("DML_IS_INFINITY_MODE_") {
            let mode = ewise::InfinityMode::ALL
                .into_iter()
                .find(|x| x.raw() == *value);
            assert_eq!(
                mode.map(|x| x.to_string()).as_deref(),
                Some(m),
                "{name} in ewise"
            );
        }
    }
    assert_eq!(ewise::FeatureLevel::ALL.len(), 15);
    assert_eq!(
        ewise::OperatorType::ElementWiseSign.raw(),
        DML_OPERATOR_ELEMENT_WISE_SIGN
    );
    assert_eq!(
        ewise::OperatorType::ElementWiseIsInfinity.raw(),
        DML_OPERATOR_ELEMENT_WISE_IS_INFINITY
    );
}

/// The version: header macros, Cargo's version and `ewise_version()` agree.
#[test]
fn version_agrees() {
    let header = std::fs::read_to_string(header_dir().join("ewise.h")).expect("ewise.h");
    let string = header
        .lines()
        .find_map(|l| l.strip_prefix("#define EWISE_VERSION_STRING "))
        .expect("#define EWISE_VERSION_STRING in ewise.h")
        .trim()
        .trim_matches('"')
        .to_string();
    assert_eq!(string, env!("CARGO_PKG_VERSION"));
    // SAFETY: ewise_version returns a static NUL-terminated string.
    let lib = unsafe { CStr::from_ptr(ewise_c::ewise_version()) };
    assert_eq!(lib.to_str().unwrap(), string);
}

fn header_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("include")
}

/// The C11 / C++17 source asserting every layout, value, size and signature.
fn checks_source() -> String {
    let mut s = String::new();
    s.push_str(
        "/* generated by crates/ewise-c/tests/layout.rs */\n\
         #include <stddef.h>\n\
         #include \"ewise.h\"\n\
         #ifdef __cplusplus\n\
         #define EW_ASSERT(c, m) static_assert(c, m)\n\
         #define EW_ALIGNOF(t) alignof(t)\n\
         #else\n\
         #define EW_ASSERT(c, m) _Static_assert(c, m)\n\
         #define EW_ALIGNOF(t) _Alignof(t)\n\
         #endif\n\
         #define EW_FIELD_SIZE(t, f) sizeof(((t *)0)->f)\n\n",
    );
    for l in layouts() {
        let n = l.name;
        writeln!(
            s,
            "EW_ASSERT(sizeof({n}) == {}, \"sizeof({n}) is {} in Rust\");",
            l.size, l.size
        )
        .unwrap();
        writeln!(
            s,
            "EW_ASSERT(EW_ALIGNOF({n}) == {}, \"alignof({n}) is {} in Rust\");",
            l.align, l.align
        )
        .unwrap();
        for (f, off, size) in &l.fields {
            writeln!(
                s,
                "EW_ASSERT(offsetof({n}, {f}) == {off}, \"offsetof({n}, {f}) is {off} in Rust\");"
            )
            .unwrap();
            writeln!(
                s,
                "EW_ASSERT(EW_FIELD_SIZE({n}, {f}) == {size}, \"sizeof {n}.{f} is {size} in Rust\");"
            )
            .unwrap();
        }
        // The fields named above are all there is: their sizes and padding fill the struct.
        let end = l.fields.last().map(|(_, o, sz)| o + sz).unwrap_or(0);
        assert!(
            end <= l.size && l.size - end < l.align,
            "{n}: fields named cover the struct"
        );
    }
    s.push('\n');
    for (name, value) in DIRECTML_H.iter().chain(EWISE_VALUES) {
        writeln!(
            s,
            "EW_ASSERT({name} == {value}u, \"{name} is {value} in directml.h / the contract\");"
        )
        .unwrap();
    }
    s.push('\n');
    for (name, size) in enum_sizes() {
        writeln!(
            s,
            "EW_ASSERT(sizeof({name}) == {size}, \"sizeof({name}) is {size} in Rust\");"
        )
        .unwrap();
    }
    s.push_str("\nvoid ewise_layout_signatures(void);\nvoid ewise_layout_signatures(void) {\n");
    for (name, decl) in SIGNATURES {
        writeln!(s, "    {{ {decl} = &{name}; (void)p; }}").unwrap();
    }
    s.push_str("}\n");
    s
}

/// A stand-in for the real directml.h (C++ only, as it is): its include guard, Windows
/// types and DirectML's own enum and struct definitions, so that the header must take
/// them instead of its own.
const DIRECTML_STANDIN: &str = r#"
#ifndef DIRECTML_H
#define DIRECTML_H
typedef unsigned int UINT;
typedef unsigned long long UINT64;
typedef int BOOL;
enum DML_TENSOR_DATA_TYPE { DML_TENSOR_DATA_TYPE_UNKNOWN, DML_TENSOR_DATA_TYPE_FLOAT32,
    DML_TENSOR_DATA_TYPE_FLOAT16, DML_TENSOR_DATA_TYPE_UINT32, DML_TENSOR_DATA_TYPE_UINT16,
    DML_TENSOR_DATA_TYPE_UINT8, DML_TENSOR_DATA_TYPE_INT32, DML_TENSOR_DATA_TYPE_INT16,
    DML_TENSOR_DATA_TYPE_INT8, DML_TENSOR_DATA_TYPE_FLOAT64, DML_TENSOR_DATA_TYPE_UINT64,
    DML_TENSOR_DATA_TYPE_INT64, DML_TENSOR_DATA_TYPE_UINT4, DML_TENSOR_DATA_TYPE_INT4 };
enum DML_TENSOR_TYPE { DML_TENSOR_TYPE_INVALID, DML_TENSOR_TYPE_BUFFER };
enum DML_TENSOR_FLAGS { DML_TENSOR_FLAG_NONE = 0x0, DML_TENSOR_FLAG_OWNED_BY_DML = 0x1 };
struct DML_BUFFER_TENSOR_DESC { DML_TENSOR_DATA_TYPE DataType; DML_TENSOR_FLAGS Flags;
    UINT DimensionCount; const UINT* Sizes; const UINT* Strides;
    UINT64 TotalTensorSizeInBytes; UINT GuaranteedBaseOffsetAlignment; };
struct DML_TENSOR_DESC { DML_TENSOR_TYPE Type; const void* Desc; };
enum DML_OPERATOR_TYPE { DML_OPERATOR_INVALID, DML_OPERATOR_ELEMENT_WISE_IDENTITY,
    DML_OPERATOR_ELEMENT_WISE_SIGN = 79, DML_OPERATOR_ELEMENT_WISE_IS_INFINITY = 100 };
struct DML_OPERATOR_DESC { DML_OPERATOR_TYPE Type; const void* Desc; };
enum DML_IS_INFINITY_MODE { DML_IS_INFINITY_MODE_EITHER = 0, DML_IS_INFINITY_MODE_POSITIVE = 1,
    DML_IS_INFINITY_MODE_NEGATIVE = 2 };
struct DML_ELEMENT_WISE_SIGN_OPERATOR_DESC { const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* OutputTensor; };
struct DML_ELEMENT_WISE_IS_INFINITY_OPERATOR_DESC { const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* OutputTensor; DML_IS_INFINITY_MODE InfinityMode; };
enum DML_FEATURE_LEVEL { DML_FEATURE_LEVEL_1_0 = 0x1000, DML_FEATURE_LEVEL_2_0 = 0x2000,
    DML_FEATURE_LEVEL_2_1 = 0x2100, DML_FEATURE_LEVEL_3_0 = 0x3000, DML_FEATURE_LEVEL_3_1 = 0x3100,
    DML_FEATURE_LEVEL_4_0 = 0x4000, DML_FEATURE_LEVEL_4_1 = 0x4100, DML_FEATURE_LEVEL_5_0 = 0x5000,
    DML_FEATURE_LEVEL_5_1 = 0x5100, DML_FEATURE_LEVEL_5_2 = 0x5200, DML_FEATURE_LEVEL_6_0 = 0x6000,
    DML_FEATURE_LEVEL_6_1 = 0x6100, DML_FEATURE_LEVEL_6_2 = 0x6200, DML_FEATURE_LEVEL_6_3 = 0x6300,
    DML_FEATURE_LEVEL_6_4 = 0x6400 };
enum DML_FEATURE { DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT, DML_FEATURE_FEATURE_LEVELS };
struct DML_FEATURE_QUERY_TENSOR_DATA_TYPE_SUPPORT { DML_TENSOR_DATA_TYPE DataType; };
struct DML_FEATURE_DATA_TENSOR_DATA_TYPE_SUPPORT { BOOL IsSupported; };
struct DML_FEATURE_QUERY_FEATURE_LEVELS { UINT RequestedFeatureLevelCount;
    const DML_FEATURE_LEVEL* RequestedFeatureLevels; };
struct DML_FEATURE_DATA_FEATURE_LEVELS { DML_FEATURE_LEVEL MaxSupportedFeatureLevel; };
enum DML_EXECUTION_FLAGS { DML_EXECUTION_FLAG_NONE = 0, DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION = 0x1,
    DML_EXECUTION_FLAG_DISABLE_META_COMMANDS = 0x2, DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE = 0x4 };
/* DEFINE_ENUM_FLAG_OPERATORS(DML_EXECUTION_FLAGS), in short */
inline DML_EXECUTION_FLAGS operator|(DML_EXECUTION_FLAGS a, DML_EXECUTION_FLAGS b) {
    return DML_EXECUTION_FLAGS(unsigned(a) | unsigned(b)); }
#endif
"#;

/// A C++ program that included directml.h first: ewise.h takes DirectML's definitions
/// (no redefinition) and ewise's signatures line up with them.
fn directml_first_source() -> String {
    let mut s = String::from("/* generated by crates/ewise-c/tests/layout.rs */\n");
    s.push_str(DIRECTML_STANDIN);
    s.push_str(
        "#include \"ewise.h\"\n\
         int main() {\n\
             EWISE_DEVICE_DESC d = {EWISE_DEVICE_CPU, DML_FEATURE_LEVEL_6_4, 0, EWISE_NAN_ZERO};\n\
             DML_EXECUTION_FLAGS f = DML_EXECUTION_FLAG_DISABLE_META_COMMANDS | DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE;\n\
             DML_TENSOR_DATA_TYPE t = EWISE_TENSOR_DATA_TYPE_BFLOAT16;\n\
             ewise_device *device = nullptr;\n\
             ewise_operator *op = nullptr;\n\
             ewise_compiled_operator *compiled = nullptr;\n\
             (void)d; (void)t; (void)device; (void)op; (void)compiled; (void)f;\n\
             DML_OPERATOR_DESC desc = {DML_OPERATOR_ELEMENT_WISE_SIGN, nullptr};\n\
             (void)desc;\n",
    );
    for (name, decl) in SIGNATURES {
        writeln!(s, "    {{ {decl} = &{name}; (void)p; }}").unwrap();
    }
    s.push_str("    return 0;\n}\n");
    s
}

/// The header alone, as C99 with a program using it.
const C99_SOURCE: &str = "#include \"ewise.h\"\n\
    int main(void) {\n\
        EWISE_DEVICE_DESC d = {EWISE_DEVICE_CPU, DML_FEATURE_LEVEL_6_4, 0, EWISE_NAN_ZERO};\n\
        DML_TENSOR_DATA_TYPE t = EWISE_TENSOR_DATA_TYPE_BOOL;\n\
        (void)d; (void)t;\n\
        return 0;\n\
    }\n";

/// The compiler a variable names, or its default.
fn compiler(var: &str, default: &str) -> String {
    std::env::var(var)
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| default.into())
}

/// Whether a missing compiler fails the test rather than skipping it: under
/// `EWISE_REQUIRE_CC=1`, and under `CI=true` except on Windows, where CI runs these tests
/// under wine, which has no compiler (scripts/windows-c-test.sh compiles the header and
/// the C tests with mingw-w64 on the host instead).
fn compiler_required() -> bool {
    (cfg!(not(windows)) && std::env::var("CI").is_ok_and(|v| v == "true"))
        || std::env::var("EWISE_REQUIRE_CC").is_ok_and(|v| v == "1")
}

/// Whether `cmd` runs (`cmd --version`).
fn available(cmd: &str) -> bool {
    let mut parts = cmd.split_whitespace();
    let Some(program) = parts.next() else {
        return false;
    };
    Command::new(program)
        .args(parts)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Compiles `source` (written to `file`) with `cmd` and `args`; panics with the
/// compiler's output on failure.
fn compile(cmd: &str, args: &[&str], file: &Path, source: &str) {
    std::fs::write(file, source).expect("write the generated source");
    let mut parts = cmd.split_whitespace();
    let program = parts.next().expect("a compiler");
    let out = Command::new(program)
        .args(parts)
        .args(args)
        .arg("-I")
        .arg(header_dir())
        .arg(file)
        .output()
        .unwrap_or_else(|e| panic!("{cmd}: {e}"));
    assert!(
        out.status.success(),
        "{cmd} {} {} failed:\n{}{}",
        args.join(" "),
        file.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

const WARNINGS: &[&str] = &["-Wall", "-Wextra", "-Werror", "-pedantic"];

#[test]
fn header_matches_rust_and_directml() {
    let cc = compiler("CC", "cc");
    let cxx = compiler("CXX", "c++");
    let (have_cc, have_cxx) = (available(&cc), available(&cxx));
    if !have_cc || !have_cxx {
        let missing = [(have_cc, &cc), (have_cxx, &cxx)]
            .iter()
            .filter(|(ok, _)| !ok)
            .map(|(_, c)| c.as_str())
            .collect::<Vec<_>>()
            .join(" and ");
        let line = format!(
            "layout: SKIPPED: no C/C++ compiler ({missing} not found; set CC / CXX, or install \
             gcc and g++)"
        );
        if compiler_required() {
            panic!("{line}, which CI=true / EWISE_REQUIRE_CC=1 requires");
        }
        eprintln!("{line}");
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ewise-c-layout");
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let checks = checks_source();

    let mut c11 = vec!["-std=c11", "-fsyntax-only"];
    c11.extend(WARNINGS);
    compile(&cc, &c11, &dir.join("checks.c"), &checks);

    let mut cxx17 = vec!["-x", "c++", "-std=c++17", "-fsyntax-only"];
    cxx17.extend(WARNINGS);
    compile(&cxx, &cxx17, &dir.join("checks.cpp"), &checks);

    let mut c99 = vec!["-std=c99", "-fsyntax-only"];
    c99.extend(WARNINGS);
    compile(&cc, &c99, &dir.join("c99.c"), C99_SOURCE);

    compile(
        &cxx,
        &cxx17,
        &dir.join("directml_first.cpp"),
        &directml_first_source(),
    );
}

/// The checks would catch a mismatch: a wrong offset in the generated source fails.
#[test]
fn a_wrong_layout_fails_to_compile() {
    let cc = compiler("CC", "cc");
    if !available(&cc) {
        if compiler_required() {
            panic!("layout: no C compiler ({cc}), which CI=true / EWISE_REQUIRE_CC=1 requires");
        }
        eprintln!("layout: SKIPPED: no C compiler ({cc} not found)");
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ewise-c-layout");
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let at = offset_of!(DML_BUFFER_TENSOR_DESC, TotalTensorSizeInBytes);
    let wrong = checks_source().replace(
        &format!("offsetof(DML_BUFFER_TENSOR_DESC, TotalTensorSizeInBytes) == {at}"),
        &format!(
            "offsetof(DML_BUFFER_TENSOR_DESC, TotalTensorSizeInBytes) == {}",
            at + 4
        ),
    );
    assert_ne!(
        wrong,
        checks_source(),
        "the offset to falsify is in the checks"
    );
    let file = dir.join("wrong.c");
    std::fs::write(&file, wrong).unwrap();
    let mut parts = cc.split_whitespace();
    let out = Command::new(parts.next().unwrap())
        .args(parts)
        .args(["-std=c11", "-fsyntax-only", "-I"])
        .arg(header_dir())
        .arg(&file)
        .output()
        .expect("run the C compiler");
    assert!(
        !out.status.success(),
        "a wrong offset must fail the static assertions"
    );
}
