/*
 * ewise.h: the C ABI of ewise, DirectML's ELEMENT_WISE_SIGN and ELEMENT_WISE_IS_INFINITY,
 * bit-exact, on the CPU or on any GPU (through wgpu), on Linux, macOS and Windows.
 *
 * A program fills in DirectML's own descriptor structs (DML_BUFFER_TENSOR_DESC,
 * DML_TENSOR_DESC, DML_OPERATOR_DESC and the two operator descs) exactly as it would for
 * DirectML, and hands them to ewise's functions below. docs/C-API.md maps DirectML's
 * calls to these one by one.
 *
 * C99 and C++ (any standard from C++11). Link with `-lewise`:
 *     cc prog.c $(pkg-config --cflags --libs ewise)
 *
 * DirectML's types: when the real directml.h was included before this header (its
 * include guard DIRECTML_H is defined), this header uses DirectML's own definitions and
 * declares only ewise's part; otherwise it declares the subset of directml.h that ewise
 * needs, with directml.h's names, numeric values, field order and field sizes (UINT as
 * uint32_t, UINT64 as uint64_t, BOOL as int32_t). Include directml.h first or not at
 * all. This header defines no global names other than DML_*, EWISE_* and ewise_*.
 *
 * Every enum here is 4 bytes, as in DirectML (do not build with -fshort-enums). In C++,
 * this header's own enums have the fixed underlying type uint32_t, so values that are no
 * enumerator (the ewise extension data types, or a bad value in a test) are well defined.
 *
 * Conventions of every function that returns an EWISE_STATUS:
 *  - EWISE_OK (0) on success; otherwise the status says what kind of failure it was and
 *    ewise_last_error() gives a message naming the argument, field and value at fault.
 *  - Nothing that C hands in is undefined behaviour as long as every non-NULL pointer
 *    points to what the signature says (and at least as many bytes as the sizes given):
 *    NULL pointers, values that are no enumerator, sizes that overflow and bad bindings
 *    are reported as statuses, never a crash.
 *  - EWISE_ERROR_INTERNAL means a bug in ewise (a caught panic); please report it.
 *  - An out-pointer (device, op, compiled, buffer) is written only on success.
 *
 * Lifetimes: as with DirectML's COM objects, every object keeps its device alive. A
 * device may be released while its operators, compiled operators and buffers live: the
 * device goes with its last child. Each release function accepts NULL and does nothing
 * then. Releasing the same handle twice, or using a handle after releasing it, is the
 * caller's bug (undefined behaviour), as everywhere in C.
 *
 * Thread safety (as DirectML's): devices, operators and compiled operators may be used
 * from several threads at once. Calls on one buffer are serialised by a lock, so
 * concurrent use never corrupts memory, but what a reader sees while another thread
 * writes the same bytes is unspecified (as on D3D12). ewise_last_error() is per thread.
 * Releasing a handle while another thread uses that same handle is the caller's bug.
 * ewise_execute locks its two buffers in one order (by address) on every device, so
 * executions in opposite directions between two buffers never deadlock.
 *
 * Ends of life: every function may be called at any point of a thread's or process's
 * life, from pthread key destructors, C++ thread_local destructors and atexit handlers
 * included, and answers a status there as anywhere.
 *
 * fork(): in a process forked from the one that created a GPU device, every call using
 * that device or its children returns EWISE_ERROR_DEVICE_UNAVAILABLE at once, before
 * taking any lock a parent thread may have held.
 *
 * Memory kept between calls (GPU devices): at most 4 idle streams of ewise_sign and
 * ewise_is_infinity holding at most 128 MiB in all, and per transfer direction at most
 * 2 idle staging buffers of at most 64 MiB each, and at most one empty memory block per
 * memory type in wgpu's allocator (at most 8 MiB); all released with the device.
 */
#ifndef EWISE_H
#define EWISE_H

#include <stdint.h>

#define EWISE_VERSION_MAJOR 0
#define EWISE_VERSION_MINOR 1
#define EWISE_VERSION_PATCH 0
#define EWISE_VERSION_STRING "0.1.0"

/* Declaration decoration of every function: empty by default. A Windows program linking
 * the DLL may define EWISE_API as __declspec(dllimport) before including this header. */
#ifndef EWISE_API
#define EWISE_API
#endif

/* This header's own enums: 4 bytes; in C++ with the fixed underlying type uint32_t. */
#ifdef __cplusplus
#define EWISE_ENUM_UINT32 : uint32_t
#else
#define EWISE_ENUM_UINT32
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================================
 * DirectML's types (directml.h's subset that ewise uses)
 * ====================================================================================== */
#ifndef DIRECTML_H

/* The element type of a tensor. UINT4 and INT4 exist for DirectML's quantization
 * operators; no operator here accepts them. See also the ewise extension types
 * (EWISE_TENSOR_DATA_TYPE_*), accepted only by a device with Extensions = 1. */
typedef enum DML_TENSOR_DATA_TYPE EWISE_ENUM_UINT32 {
    DML_TENSOR_DATA_TYPE_UNKNOWN = 0,
    DML_TENSOR_DATA_TYPE_FLOAT32 = 1,
    DML_TENSOR_DATA_TYPE_FLOAT16 = 2,
    DML_TENSOR_DATA_TYPE_UINT32 = 3,
    DML_TENSOR_DATA_TYPE_UINT16 = 4,
    DML_TENSOR_DATA_TYPE_UINT8 = 5,
    DML_TENSOR_DATA_TYPE_INT32 = 6,
    DML_TENSOR_DATA_TYPE_INT16 = 7,
    DML_TENSOR_DATA_TYPE_INT8 = 8,
    DML_TENSOR_DATA_TYPE_FLOAT64 = 9,
    DML_TENSOR_DATA_TYPE_UINT64 = 10,
    DML_TENSOR_DATA_TYPE_INT64 = 11,
    DML_TENSOR_DATA_TYPE_UINT4 = 12,
    DML_TENSOR_DATA_TYPE_INT4 = 13
} DML_TENSOR_DATA_TYPE;

/* The kind of a DML_TENSOR_DESC: only BUFFER exists. */
typedef enum DML_TENSOR_TYPE EWISE_ENUM_UINT32 {
    DML_TENSOR_TYPE_INVALID = 0,
    DML_TENSOR_TYPE_BUFFER = 1
} DML_TENSOR_TYPE;

/* Bit flags of a DML_BUFFER_TENSOR_DESC. */
typedef enum DML_TENSOR_FLAGS EWISE_ENUM_UINT32 {
    DML_TENSOR_FLAG_NONE = 0x0,
    DML_TENSOR_FLAG_OWNED_BY_DML = 0x1
} DML_TENSOR_FLAGS;

/* A tensor laid out in a buffer (directml.h's DML_BUFFER_TENSOR_DESC).
 * Sizes: DimensionCount entries, each at least 1 (strict rules).
 * Strides: NULL (packed row-major, the last dimension contiguous) or DimensionCount
 *   entries counted in elements; a stride of 0 broadcasts an input (never an output).
 * TotalTensorSizeInBytes: at least DMLCalcBufferTensorSize's value: (the element count
 *   without strides, or 1 + the sum of (Sizes[i] - 1) * Strides[i] with strides) times
 *   the element size, rounded up to a multiple of 4.
 * GuaranteedBaseOffsetAlignment: 0, or a power of two no smaller than the element size
 *   that every binding offset of this tensor is then required to be a multiple of. */
typedef struct DML_BUFFER_TENSOR_DESC {
    DML_TENSOR_DATA_TYPE DataType;
    DML_TENSOR_FLAGS Flags;
    uint32_t DimensionCount;
    const uint32_t *Sizes;
    const uint32_t *Strides;
    uint64_t TotalTensorSizeInBytes;
    uint32_t GuaranteedBaseOffsetAlignment;
} DML_BUFFER_TENSOR_DESC;

/* A tensor: Type DML_TENSOR_TYPE_BUFFER and Desc a const DML_BUFFER_TENSOR_DESC *. */
typedef struct DML_TENSOR_DESC {
    DML_TENSOR_TYPE Type;
    const void *Desc;
} DML_TENSOR_DESC;

/* The operators. DirectML defines many more DML_OPERATOR_* values (ELEMENT_WISE_IDENTITY
 * = 1 and on); they are not declared here, and ewise_create_operator answers
 * EWISE_ERROR_NOT_SUPPORTED for any of them. */
typedef enum DML_OPERATOR_TYPE EWISE_ENUM_UINT32 {
    DML_OPERATOR_INVALID = 0,
    DML_OPERATOR_ELEMENT_WISE_SIGN = 79,
    DML_OPERATOR_ELEMENT_WISE_IS_INFINITY = 100
} DML_OPERATOR_TYPE;

/* An operator: Type, and Desc pointing to that operator's own desc struct
 * (DML_ELEMENT_WISE_SIGN_OPERATOR_DESC for 79, DML_ELEMENT_WISE_IS_INFINITY_OPERATOR_DESC
 * for 100). */
typedef struct DML_OPERATOR_DESC {
    DML_OPERATOR_TYPE Type;
    const void *Desc;
} DML_OPERATOR_DESC;

/* Which infinities ELEMENT_WISE_IS_INFINITY reports as 1. */
typedef enum DML_IS_INFINITY_MODE EWISE_ENUM_UINT32 {
    DML_IS_INFINITY_MODE_EITHER = 0,
    DML_IS_INFINITY_MODE_POSITIVE = 1,
    DML_IS_INFINITY_MODE_NEGATIVE = 2
} DML_IS_INFINITY_MODE;

/* ELEMENT_WISE_SIGN (from feature level 2_0): per element -1, +0 or +1 in the input's
 * type (NaN: see EWISE_NAN_POLICY). Input and output have the same data type, dimension
 * count and sizes. In place when both are bound to the same buffer range. */
typedef struct DML_ELEMENT_WISE_SIGN_OPERATOR_DESC {
    const DML_TENSOR_DESC *InputTensor;
    const DML_TENSOR_DESC *OutputTensor;
} DML_ELEMENT_WISE_SIGN_OPERATOR_DESC;

/* ELEMENT_WISE_IS_INFINITY (from feature level 2_1): per element 1 or 0, output UINT8,
 * the same dimension count and sizes as the input. Never in place. */
typedef struct DML_ELEMENT_WISE_IS_INFINITY_OPERATOR_DESC {
    const DML_TENSOR_DESC *InputTensor;
    const DML_TENSOR_DESC *OutputTensor;
    DML_IS_INFINITY_MODE InfinityMode;
} DML_ELEMENT_WISE_IS_INFINITY_OPERATOR_DESC;

/* DirectML's feature levels; each a strict superset of the ones below it. */
typedef enum DML_FEATURE_LEVEL EWISE_ENUM_UINT32 {
    DML_FEATURE_LEVEL_1_0 = 0x1000,
    DML_FEATURE_LEVEL_2_0 = 0x2000,
    DML_FEATURE_LEVEL_2_1 = 0x2100,
    DML_FEATURE_LEVEL_3_0 = 0x3000,
    DML_FEATURE_LEVEL_3_1 = 0x3100,
    DML_FEATURE_LEVEL_4_0 = 0x4000,
    DML_FEATURE_LEVEL_4_1 = 0x4100,
    DML_FEATURE_LEVEL_5_0 = 0x5000,
    DML_FEATURE_LEVEL_5_1 = 0x5100,
    DML_FEATURE_LEVEL_5_2 = 0x5200,
    DML_FEATURE_LEVEL_6_0 = 0x6000,
    DML_FEATURE_LEVEL_6_1 = 0x6100,
    DML_FEATURE_LEVEL_6_2 = 0x6200,
    DML_FEATURE_LEVEL_6_3 = 0x6300,
    DML_FEATURE_LEVEL_6_4 = 0x6400
} DML_FEATURE_LEVEL;

/* What ewise_check_feature_support is asked about. */
typedef enum DML_FEATURE EWISE_ENUM_UINT32 {
    DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT = 0,
    DML_FEATURE_FEATURE_LEVELS = 1
} DML_FEATURE;

/* Query and answer of DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT. */
typedef struct DML_FEATURE_QUERY_TENSOR_DATA_TYPE_SUPPORT {
    DML_TENSOR_DATA_TYPE DataType;
} DML_FEATURE_QUERY_TENSOR_DATA_TYPE_SUPPORT;

typedef struct DML_FEATURE_DATA_TENSOR_DATA_TYPE_SUPPORT {
    int32_t IsSupported; /* directml.h: BOOL */
} DML_FEATURE_DATA_TENSOR_DATA_TYPE_SUPPORT;

/* Query and answer of DML_FEATURE_FEATURE_LEVELS. */
typedef struct DML_FEATURE_QUERY_FEATURE_LEVELS {
    uint32_t RequestedFeatureLevelCount;
    const DML_FEATURE_LEVEL *RequestedFeatureLevels;
} DML_FEATURE_QUERY_FEATURE_LEVELS;

typedef struct DML_FEATURE_DATA_FEATURE_LEVELS {
    DML_FEATURE_LEVEL MaxSupportedFeatureLevel;
} DML_FEATURE_DATA_FEATURE_LEVELS;

/* Bit flags of ewise_compile_operator (IDMLDevice::CompileOperator's). */
typedef enum DML_EXECUTION_FLAGS EWISE_ENUM_UINT32 {
    DML_EXECUTION_FLAG_NONE = 0,
    DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION = 0x1,
    DML_EXECUTION_FLAG_DISABLE_META_COMMANDS = 0x2,
    DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE = 0x4
} DML_EXECUTION_FLAGS;

#endif /* !DIRECTML_H */

/* ======================================================================================
 * ewise
 * ====================================================================================== */

/* The ewise extension data types: ewise's numbers, in a DML_TENSOR_DATA_TYPE field or
 * argument, accepted only by a device created with Extensions = 1 (a strict device
 * answers EWISE_ERROR_NOT_SUPPORTED, as DirectML would). SIGN takes BFLOAT16 (and, as an
 * extension, FLOAT64); IS_INFINITY takes BFLOAT16 and the four FLOAT8 types as input and
 * UINT8 or BOOL (one byte, 0 or 1) as output. (C++ with the real directml.h: DirectML's
 * enum has no fixed underlying type and these numbers lie outside its range.) */
#ifdef __cplusplus
#define EWISE_DATA_TYPE_(value) (static_cast<DML_TENSOR_DATA_TYPE>(value))
#else
#define EWISE_DATA_TYPE_(value) ((DML_TENSOR_DATA_TYPE)(value))
#endif
#define EWISE_TENSOR_DATA_TYPE_BFLOAT16 EWISE_DATA_TYPE_(1000)
#define EWISE_TENSOR_DATA_TYPE_BOOL EWISE_DATA_TYPE_(1001)
#define EWISE_TENSOR_DATA_TYPE_FLOAT8E4M3FN EWISE_DATA_TYPE_(1002)
#define EWISE_TENSOR_DATA_TYPE_FLOAT8E4M3FNUZ EWISE_DATA_TYPE_(1003)
#define EWISE_TENSOR_DATA_TYPE_FLOAT8E5M2 EWISE_DATA_TYPE_(1004)
#define EWISE_TENSOR_DATA_TYPE_FLOAT8E5M2FNUZ EWISE_DATA_TYPE_(1005)

/* The ewise extension IS_INFINITY mode, accepted only by a device created with
 * Extensions = 1: every output 0. It is ONNX IsInf with detect_positive = 0 and
 * detect_negative = 0, which DirectML has no mode for. */
#ifdef __cplusplus
#define EWISE_IS_INFINITY_MODE_NEITHER (static_cast<DML_IS_INFINITY_MODE>(1000))
#else
#define EWISE_IS_INFINITY_MODE_NEITHER ((DML_IS_INFINITY_MODE)1000)
#endif

/* What a function returns. The HRESULT DirectML returns in the same case is in the
 * comment (ewise_status_hresult gives it as a number). */
typedef enum EWISE_STATUS EWISE_ENUM_UINT32 {
    EWISE_OK = 0,
    EWISE_ERROR_INVALID_ARGUMENT = 1,   /* DirectML: E_INVALIDARG */
    EWISE_ERROR_NOT_SUPPORTED = 2,      /* DXGI_ERROR_UNSUPPORTED: level, type, operator */
    EWISE_ERROR_OUT_OF_MEMORY = 3,      /* E_OUTOFMEMORY */
    EWISE_ERROR_DEVICE_UNAVAILABLE = 4, /* no adapter, device lost (DXGI_ERROR_DEVICE_REMOVED) */
    EWISE_ERROR_INTERNAL = 5            /* a bug: never expected (E_FAIL) */
} EWISE_STATUS;

/* Where a device runs. */
typedef enum EWISE_DEVICE_KIND EWISE_ENUM_UINT32 {
    EWISE_DEVICE_CPU = 0,
    EWISE_DEVICE_GPU = 1 /* through wgpu: Vulkan, Metal or Direct3D 12 */
} EWISE_DEVICE_KIND;

/* What SIGN gives for a NaN input (floating-point types only). */
typedef enum EWISE_NAN_POLICY EWISE_ENUM_UINT32 {
    EWISE_NAN_ZERO = 0,     /* DirectML's: NaN gives +0 */
    EWISE_NAN_PROPAGATE = 1 /* ONNX's and numpy's: the input NaN, bit for bit */
} EWISE_NAN_POLICY;

/* How to create a device (DMLCreateDevice1's arguments, ewise's way).
 * A zeroed description ({0}, memset 0) is DirectML's defaults: a CPU device, strict rules
 * at DML_FEATURE_LEVEL_6_4 (FeatureLevel 0 means 6_4, the latest), NaN policy Zero
 * (docs/SEMANTICS.md section 8.2).
 * Software renderers: a Kind GPU device that finds no hardware adapter and opens a software
 * one (lavapipe, llvmpipe, WARP, SwiftShader) without being asked writes one line to stderr
 * when it is created, "ewise: warning: the GPU device runs on <adapter>, a software
 * renderer ...": C has no other channel for it. Its results are exact but slower than the
 * CPU device's. To choose that adapter knowingly and silence the line, name it in the
 * environment variable EWISE_GPU_ADAPTER (e.g. EWISE_GPU_ADAPTER=llvmpipe).
 * Adapters that cannot be used: a Kind GPU device tries the adapters in ewise's order
 * (discrete, integrated, virtual, software renderers last); one that cannot open a device
 * or compile the kernels (a broken driver, a Direct3D 12 shader compiler that is missing or
 * too old) is passed over for the next, with one stderr line when the device is created,
 * "ewise: warning: the GPU device runs on <adapter>, the next adapter in ewise's order,
 * because ... could not be used (<each adapter>: <why>)". When none can be used the status
 * message names each adapter and why. */
typedef struct EWISE_DEVICE_DESC {
    EWISE_DEVICE_KIND Kind;
    DML_FEATURE_LEVEL FeatureLevel;   /* the level the device validates at; 0: 6_4 */
    uint32_t Extensions;              /* 0: strict DirectML rules; 1: ewise extensions */
    EWISE_NAN_POLICY NanPolicy;
} EWISE_DEVICE_DESC;

/* Opaque handles, each released by its ewise_release_* function. */
typedef struct ewise_device ewise_device;
typedef struct ewise_operator ewise_operator;
typedef struct ewise_compiled_operator ewise_compiled_operator;
typedef struct ewise_buffer ewise_buffer;

/* One binding of ewise_execute: DML_BUFFER_BINDING with an ewise_buffer for the resource.
 * The tensor's bytes are Buffer's [Offset, Offset + SizeInBytes). */
typedef struct EWISE_BUFFER_BINDING {
    ewise_buffer *Buffer;
    uint64_t Offset;
    uint64_t SizeInBytes;
} EWISE_BUFFER_BINDING;

/* --------------------------------------------------------------------------------------
 * Statuses and version
 * -------------------------------------------------------------------------------------- */

/* This thread's last message: "" after a call that returned EWISE_OK, otherwise what went
 * wrong in the last call that returned a status (naming the operator, tensor, field, the
 * value given and what is accepted). Never NULL, never dangling: the string belongs to
 * ewise and stays valid until this thread's next call of a function that returns an
 * EWISE_STATUS (or the thread's end); copy it to keep it. At most 1023 bytes: a longer
 * message is cut at a character boundary and ends with "...". Functions returning no status (the releases, ewise_version,
 * ewise_status_hresult, ewise_last_error) leave it alone.
 * Thread safety: any thread; each thread has its own message. */
EWISE_API const char *ewise_last_error(void);

/* The HRESULT DirectML returns where ewise returns `status` (negative, as HRESULTs are):
 * EWISE_OK 0 (S_OK), INVALID_ARGUMENT 0x80070057 (E_INVALIDARG), NOT_SUPPORTED 0x887A0004
 * (DXGI_ERROR_UNSUPPORTED), OUT_OF_MEMORY 0x8007000E (E_OUTOFMEMORY), DEVICE_UNAVAILABLE
 * 0x887A0005 (DXGI_ERROR_DEVICE_REMOVED), INTERNAL 0x80004005 (E_FAIL); any other value
 * 0x80070057 (E_INVALIDARG). Thread safety: any thread. */
EWISE_API int32_t ewise_status_hresult(EWISE_STATUS status);

/* The library's version, "0.1.0" (EWISE_VERSION_STRING of the header it was built with):
 * a static string, never NULL, never freed. Compare with EWISE_VERSION_MAJOR / _MINOR /
 * _PATCH to detect a header and library mismatch. Thread safety: any thread. */
EWISE_API const char *ewise_version(void);

/* --------------------------------------------------------------------------------------
 * Device
 * -------------------------------------------------------------------------------------- */

/* DMLCreateDevice1: creates a device that validates at desc->FeatureLevel, with
 * DirectML's strict rules (Extensions = 0) or ewise's extensions (Extensions = 1: the
 * EWISE_TENSOR_DATA_TYPE_* types, FLOAT64 SIGN, 0 to 64 dimensions, zero-sized
 * dimensions), and desc->NanPolicy for SIGN of NaN. A GPU device takes the adapter that
 * ewise's Rust GpuDevice::builder() takes (environment EWISE_GPU_BACKEND and
 * EWISE_GPU_ADAPTER choose one); on a software renderer chosen unasked it writes the
 * warning line described at EWISE_DEVICE_DESC to stderr. On success *device is a new device; release it with
 * ewise_release_device.
 * Returns:
 *  EWISE_OK;
 *  EWISE_ERROR_INVALID_ARGUMENT: desc or device NULL; Kind not 0 or 1; FeatureLevel not
 *    0 or one of the 15 DML_FEATURE_LEVEL values; Extensions not 0 or 1; NanPolicy not 0
 *    or 1;
 *  EWISE_ERROR_DEVICE_UNAVAILABLE: Kind GPU and no usable adapter (or its device could
 *    not be opened);
 *  EWISE_ERROR_OUT_OF_MEMORY: no memory for the device;
 *  EWISE_ERROR_INTERNAL: a bug.
 * Thread safety: any thread; the device may then be used from several threads at once. */
EWISE_API EWISE_STATUS ewise_create_device(const EWISE_DEVICE_DESC *desc, ewise_device **device);

/* IDMLDevice::CheckFeatureSupport.
 *  DML_FEATURE_FEATURE_LEVELS: query is a DML_FEATURE_QUERY_FEATURE_LEVELS, support a
 *    DML_FEATURE_DATA_FEATURE_LEVELS; MaxSupportedFeatureLevel becomes the highest
 *    requested level at or below the device's FeatureLevel.
 *  DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT: query is a
 *    DML_FEATURE_QUERY_TENSOR_DATA_TYPE_SUPPORT, support a
 *    DML_FEATURE_DATA_TENSOR_DATA_TYPE_SUPPORT; IsSupported becomes 1 when SIGN or
 *    IS_INFINITY on this device (its level and Extensions) accepts the type as an
 *    input or an output, else 0 (UINT4 and INT4: 0; an extension type on a strict
 *    device: 0; BOOL with Extensions = 1: 1, as IS_INFINITY's output).
 * query_size and support_size are the sizeof of those structs.
 * Returns:
 *  EWISE_OK (support written);
 *  EWISE_ERROR_INVALID_ARGUMENT: device, query or support NULL; feature not 0 or 1;
 *    query_size or support_size not the sizeof of the feature's query or data struct;
 *    RequestedFeatureLevelCount 0, RequestedFeatureLevels NULL, or a requested level
 *    that is none of the 15; a DataType that is no data type at all (neither 0..13 nor an
 *    extension number; UNKNOWN 0 too);
 *  EWISE_ERROR_NOT_SUPPORTED: FEATURE_LEVELS and no requested level at or below the
 *    device's level;
 *  EWISE_ERROR_INTERNAL: a bug.
 * Thread safety: any thread, concurrently with any other use of the device. */
EWISE_API EWISE_STATUS ewise_check_feature_support(ewise_device *device, DML_FEATURE feature,
    uint32_t query_size, const void *query, uint32_t support_size, void *support);

/* --------------------------------------------------------------------------------------
 * Operators
 * -------------------------------------------------------------------------------------- */

/* IDMLDevice::CreateOperator: validates desc at the device's feature level exactly as
 * DirectML (and ewise's Rust Device::create_operator) does, and on success makes *op a
 * new operator. Everything desc points to is read during the call only; it may be freed
 * or changed afterwards. Release the operator with ewise_release_operator.
 * Dimension counts (strict rules): exactly 4 at feature levels 2_0 to 2_1 (SIGN) or 2_1
 * (IS_INFINITY), 1 to 8 from 3_0; with Extensions = 1, 0 to 64. Data types (strict):
 * SIGN FLOAT32, FLOAT16 from 2_0; INT32, INT16, INT8, UINT32, UINT16, UINT8 from 2_1;
 * INT64, UINT64 from 4_1. IS_INFINITY FLOAT32, FLOAT16 in, UINT8 out.
 * Returns:
 *  EWISE_OK;
 *  EWISE_ERROR_INVALID_ARGUMENT: device, desc, desc->Desc, the tensor desc pointers, a
 *    DML_TENSOR_DESC's Desc, or Sizes (with DimensionCount > 0) NULL; Type of a
 *    DML_TENSOR_DESC not DML_TENSOR_TYPE_BUFFER; a data type that is no data type
 *    (UNKNOWN 0 too); Flags other than DML_TENSOR_FLAG_NONE (ewise has no
 *    initialisation-time binding, so DML_TENSOR_FLAG_OWNED_BY_DML is refused too);
 *    InfinityMode not 0..2 (nor EWISE_IS_INFINITY_MODE_NEITHER with Extensions = 1),
 *    or EWISE_IS_INFINITY_MODE_NEITHER on a strict device; a dimension
 *    count outside the level's range; a size of 0 (strict rules); an element count, size
 *    product or byte span that overflows (strict: more than 2^32 - 1 elements);
 *    TotalTensorSizeInBytes below the minimum; a bad GuaranteedBaseOffsetAlignment; output
 *    strides that make two output elements share an address (a 0 stride included);
 *    input and output sizes, dimension counts or (SIGN) data types that differ;
 *  EWISE_ERROR_NOT_SUPPORTED: an operator type other than 79 and 100 (the message names
 *    it); an operator not yet introduced at the device's level (SIGN before 2_0,
 *    IS_INFINITY before 2_1); a data type the device's level and Extensions do not accept
 *    for the operator (UINT4 and INT4 always; integers for IS_INFINITY; an extension type
 *    on a strict device; INT8 SIGN at 2_0);
 *  EWISE_ERROR_OUT_OF_MEMORY: no memory for the operator;
 *  EWISE_ERROR_INTERNAL: a bug.
 * Thread safety: any thread, concurrently with any other use of the device. */
EWISE_API EWISE_STATUS ewise_create_operator(ewise_device *device, const DML_OPERATOR_DESC *desc,
    ewise_operator **op);

/* IDMLDevice::CompileOperator: chooses the kernel once (on a GPU device, builds its
 * pipeline) and on success makes *compiled a new compiled operator that executes op's
 * description. The compiled operator holds all it needs: op may be released afterwards.
 * flags: any combination of the DML_EXECUTION_FLAG_* bits, accepted and without effect
 * (ewise's results are exact whatever ALLOW_HALF_PRECISION_COMPUTATION says; it has no
 * meta commands and no descriptors). Release with ewise_release_compiled_operator.
 * Returns:
 *  EWISE_OK;
 *  EWISE_ERROR_INVALID_ARGUMENT: device, op or compiled NULL; op created on another
 *    device; flags with bits outside 0x7;
 *  EWISE_ERROR_DEVICE_UNAVAILABLE: the GPU device was lost;
 *  EWISE_ERROR_OUT_OF_MEMORY: no memory for the compiled operator;
 *  EWISE_ERROR_INTERNAL: a bug.
 * Thread safety: any thread, concurrently with any other use of the device or of op. */
EWISE_API EWISE_STATUS ewise_compile_operator(ewise_device *device, ewise_operator *op,
    DML_EXECUTION_FLAGS flags, ewise_compiled_operator **compiled);

/* --------------------------------------------------------------------------------------
 * Buffers (ID3D12Resource buffers, ewise's way)
 * -------------------------------------------------------------------------------------- */

/* Creates a buffer of exactly size_in_bytes bytes, all zero, in the device's memory (host
 * memory for a CPU device, GPU memory for a GPU device); on success *buffer is it.
 * Release with ewise_release_buffer.
 * Returns:
 *  EWISE_OK;
 *  EWISE_ERROR_INVALID_ARGUMENT: device or buffer NULL; size_in_bytes 0;
 *  EWISE_ERROR_OUT_OF_MEMORY: the memory cannot be allocated (for example 1 << 62 bytes
 *    on the CPU; on a GPU, more than the device's largest buffer);
 *  EWISE_ERROR_DEVICE_UNAVAILABLE: the GPU device was lost;
 *  EWISE_ERROR_INTERNAL: a bug.
 * Thread safety: any thread, concurrently with any other use of the device. */
EWISE_API EWISE_STATUS ewise_create_buffer(ewise_device *device, uint64_t size_in_bytes,
    ewise_buffer **buffer);

/* CPU device: makes *buffer a buffer over the caller's size_in_bytes bytes at data, zero
 * copy: ewise_execute reads and writes them in place. The caller keeps that memory alive,
 * and changed by no one else while ewise uses it, until the buffer is released
 * (ewise_release_buffer does not free it). GPU device: EWISE_ERROR_NOT_SUPPORTED (use
 * ewise_create_buffer and ewise_buffer_write).
 * Returns:
 *  EWISE_OK;
 *  EWISE_ERROR_INVALID_ARGUMENT: device, data or buffer NULL; size_in_bytes 0;
 *  EWISE_ERROR_NOT_SUPPORTED: a GPU device;
 *  EWISE_ERROR_INTERNAL: a bug.
 * Thread safety: any thread, concurrently with any other use of the device. */
EWISE_API EWISE_STATUS ewise_wrap_host_memory(ewise_device *device, void *data,
    uint64_t size_in_bytes, ewise_buffer **buffer);

/* Copies bytes bytes from src into the buffer at offset (an upload), synchronously: when
 * it returns, the bytes are in the buffer. bytes 0 is EWISE_OK (src must still be
 * non-NULL). As memmove: src may overlap the buffer's own wrapped host memory.
 * Returns:
 *  EWISE_OK;
 *  EWISE_ERROR_INVALID_ARGUMENT: buffer or src NULL; offset + bytes past the buffer's end
 *    (or overflowing);
 *  EWISE_ERROR_DEVICE_UNAVAILABLE: the GPU device was lost;
 *  EWISE_ERROR_OUT_OF_MEMORY: no memory for a staging copy;
 *  EWISE_ERROR_INTERNAL: a bug.
 * Thread safety: any thread; calls on one buffer are serialised (see the top of this
 * file). */
EWISE_API EWISE_STATUS ewise_buffer_write(ewise_buffer *buffer, uint64_t offset,
    const void *src, uint64_t bytes);

/* Copies bytes bytes of the buffer from offset into dst (a readback), synchronously.
 * bytes 0 is EWISE_OK (dst must still be non-NULL). As memmove: dst may overlap the
 * buffer's own wrapped host memory.
 * Returns:
 *  EWISE_OK;
 *  EWISE_ERROR_INVALID_ARGUMENT: buffer or dst NULL; offset + bytes past the buffer's end
 *    (or overflowing);
 *  EWISE_ERROR_DEVICE_UNAVAILABLE: the GPU device was lost;
 *  EWISE_ERROR_OUT_OF_MEMORY: no memory for a staging copy;
 *  EWISE_ERROR_INTERNAL: a bug.
 * Thread safety: any thread; calls on one buffer are serialised (see the top of this
 * file). */
EWISE_API EWISE_STATUS ewise_buffer_read(ewise_buffer *buffer, uint64_t offset, void *dst,
    uint64_t bytes);

/* --------------------------------------------------------------------------------------
 * Execution
 * -------------------------------------------------------------------------------------- */

/* Binds one input and one output and runs the compiled operator: the work of
 * IDMLBindingTable::BindInputs / BindOutputs, IDMLCommandRecorder::RecordDispatch,
 * ID3D12CommandQueue::ExecuteCommandLists and the fence wait, in one synchronous call:
 * when it returns, the output holds the results. Binding rules (docs/SEMANTICS.md section 5):
 * each Offset a multiple of 16 (or of the tensor's GuaranteedBaseOffsetAlignment when
 * given); each SizeInBytes at least the tensor's TotalTensorSizeInBytes; each range inside
 * its buffer; input and output on the operator's device; input and output may share a
 * buffer only in disjoint ranges, or (SIGN only) in exactly the same range (Offset and
 * SizeInBytes equal), which runs in place.
 * Returns:
 *  EWISE_OK;
 *  EWISE_ERROR_INVALID_ARGUMENT: compiled, input, output or a binding's Buffer NULL; an
 *    Offset not a multiple of 16 (or of GuaranteedBaseOffsetAlignment); SizeInBytes below
 *    TotalTensorSizeInBytes; a range past its buffer's end; a buffer of another device
 *    than the compiled operator's; input and output ranges of one buffer that overlap
 *    without being equal, or that are equal for IS_INFINITY;
 *  EWISE_ERROR_DEVICE_UNAVAILABLE: the GPU device was lost;
 *  EWISE_ERROR_OUT_OF_MEMORY: no memory for the execution;
 *  EWISE_ERROR_INTERNAL: a bug.
 * Thread safety: any thread; one compiled operator may execute on several threads at once
 * (what an output holds when two executions write the same bytes at once is
 * unspecified). */
EWISE_API EWISE_STATUS ewise_execute(ewise_compiled_operator *compiled,
    const EWISE_BUFFER_BINDING *input, const EWISE_BUFFER_BINDING *output);

/* --------------------------------------------------------------------------------------
 * One call over host memory
 * -------------------------------------------------------------------------------------- */

/* SIGN of element_count contiguous elements of type `type` from input into output, on
 * the device (a GPU device uploads, runs and reads back), with the device's NanPolicy.
 * Any alignment. output == input runs in place. The type is validated exactly as for a
 * one-element SIGN operator on this device (its level and Extensions). element_count 0
 * is EWISE_OK (the pointers must still be non-NULL).
 * Returns:
 *  EWISE_OK;
 *  EWISE_ERROR_INVALID_ARGUMENT: device, input or output NULL; a type that is no data
 *    type; input and output ranges that overlap without being equal; element_count times
 *    the element size overflowing;
 *  EWISE_ERROR_NOT_SUPPORTED: a type SIGN does not accept on this device, or SIGN not
 *    introduced at its level;
 *  EWISE_ERROR_OUT_OF_MEMORY, EWISE_ERROR_DEVICE_UNAVAILABLE (GPU): as for buffers;
 *  EWISE_ERROR_INTERNAL: a bug.
 * Thread safety: any thread, concurrently with any other use of the device; nothing else
 * may write input or touch output during the call. */
EWISE_API EWISE_STATUS ewise_sign(ewise_device *device, DML_TENSOR_DATA_TYPE type,
    const void *input, void *output, uint64_t element_count);

/* IS_INFINITY of element_count contiguous elements of type `type` from input into
 * output, one byte (0 or 1) per element, with mode, on the device. Any alignment. Never
 * in place. The type is validated exactly as for a one-element IS_INFINITY operator
 * with a UINT8 output on this device. element_count 0 is EWISE_OK (the pointers must
 * still be non-NULL).
 * Returns:
 *  EWISE_OK;
 *  EWISE_ERROR_INVALID_ARGUMENT: device, input or output NULL; a type that is no data
 *    type; mode not 0..2 (nor EWISE_IS_INFINITY_MODE_NEITHER on a device with
 *    Extensions = 1); input and output ranges that overlap at all; element_count
 *    times the element size overflowing;
 *  EWISE_ERROR_NOT_SUPPORTED: a type IS_INFINITY does not accept on this device, or
 *    IS_INFINITY not introduced at its level;
 *  EWISE_ERROR_OUT_OF_MEMORY, EWISE_ERROR_DEVICE_UNAVAILABLE (GPU): as for buffers;
 *  EWISE_ERROR_INTERNAL: a bug.
 * Thread safety: any thread, concurrently with any other use of the device; nothing else
 * may write input or touch output during the call. */
EWISE_API EWISE_STATUS ewise_is_infinity(ewise_device *device, DML_TENSOR_DATA_TYPE type,
    DML_IS_INFINITY_MODE mode, const void *input, uint8_t *output, uint64_t element_count);

/* --------------------------------------------------------------------------------------
 * Release (IUnknown::Release of the last reference)
 * -------------------------------------------------------------------------------------- */

/* Each gives up the caller's handle; NULL does nothing. A device lives on while any of
 * its operators, compiled operators or buffers lives, and goes with the last of them, so
 * children and their device may be released in any order. Releasing a handle twice, or
 * using it afterwards, is the caller's bug. A wrapped buffer (ewise_wrap_host_memory)
 * never frees the caller's memory. Thread safety: any thread, but not while another
 * thread uses the same handle. */
EWISE_API void ewise_release_device(ewise_device *device);
EWISE_API void ewise_release_operator(ewise_operator *op);
EWISE_API void ewise_release_compiled_operator(ewise_compiled_operator *compiled);
EWISE_API void ewise_release_buffer(ewise_buffer *buffer);

/* Fails to compile (a negative array size) where an enum is not 4 bytes, as it is in
 * DirectML and in the library (for example under -fshort-enums). */
typedef char ewise_enums_are_4_bytes_[(sizeof(DML_TENSOR_DATA_TYPE) == 4 &&
    sizeof(DML_FEATURE_LEVEL) == 4 && sizeof(DML_OPERATOR_TYPE) == 4 &&
    sizeof(DML_IS_INFINITY_MODE) == 4 && sizeof(EWISE_STATUS) == 4 &&
    sizeof(EWISE_DEVICE_KIND) == 4 && sizeof(EWISE_NAN_POLICY) == 4) ? 1 : -1];

#ifdef __cplusplus
} /* extern "C" */
#endif

#if defined(__cplusplus) && !defined(DIRECTML_H)
/* directml.h's DEFINE_ENUM_FLAG_OPERATORS for the two flag enums, so that C++ written
 * for DirectML (DML_EXECUTION_FLAG_A | DML_EXECUTION_FLAG_B) builds against this header. */
extern "C++" {
constexpr inline DML_TENSOR_FLAGS operator|(DML_TENSOR_FLAGS a, DML_TENSOR_FLAGS b) {
    return static_cast<DML_TENSOR_FLAGS>(static_cast<uint32_t>(a) | static_cast<uint32_t>(b));
}
constexpr inline DML_TENSOR_FLAGS operator&(DML_TENSOR_FLAGS a, DML_TENSOR_FLAGS b) {
    return static_cast<DML_TENSOR_FLAGS>(static_cast<uint32_t>(a) & static_cast<uint32_t>(b));
}
constexpr inline DML_TENSOR_FLAGS operator^(DML_TENSOR_FLAGS a, DML_TENSOR_FLAGS b) {
    return static_cast<DML_TENSOR_FLAGS>(static_cast<uint32_t>(a) ^ static_cast<uint32_t>(b));
}
constexpr inline DML_TENSOR_FLAGS operator~(DML_TENSOR_FLAGS a) {
    return static_cast<DML_TENSOR_FLAGS>(~static_cast<uint32_t>(a));
}
inline DML_TENSOR_FLAGS &operator|=(DML_TENSOR_FLAGS &a, DML_TENSOR_FLAGS b) { return a = a | b; }
inline DML_TENSOR_FLAGS &operator&=(DML_TENSOR_FLAGS &a, DML_TENSOR_FLAGS b) { return a = a & b; }
inline DML_TENSOR_FLAGS &operator^=(DML_TENSOR_FLAGS &a, DML_TENSOR_FLAGS b) { return a = a ^ b; }
constexpr inline DML_EXECUTION_FLAGS operator|(DML_EXECUTION_FLAGS a, DML_EXECUTION_FLAGS b) {
    return static_cast<DML_EXECUTION_FLAGS>(static_cast<uint32_t>(a) | static_cast<uint32_t>(b));
}
constexpr inline DML_EXECUTION_FLAGS operator&(DML_EXECUTION_FLAGS a, DML_EXECUTION_FLAGS b) {
    return static_cast<DML_EXECUTION_FLAGS>(static_cast<uint32_t>(a) & static_cast<uint32_t>(b));
}
constexpr inline DML_EXECUTION_FLAGS operator^(DML_EXECUTION_FLAGS a, DML_EXECUTION_FLAGS b) {
    return static_cast<DML_EXECUTION_FLAGS>(static_cast<uint32_t>(a) ^ static_cast<uint32_t>(b));
}
constexpr inline DML_EXECUTION_FLAGS operator~(DML_EXECUTION_FLAGS a) {
    return static_cast<DML_EXECUTION_FLAGS>(~static_cast<uint32_t>(a));
}
inline DML_EXECUTION_FLAGS &operator|=(DML_EXECUTION_FLAGS &a, DML_EXECUTION_FLAGS b) { return a = a | b; }
inline DML_EXECUTION_FLAGS &operator&=(DML_EXECUTION_FLAGS &a, DML_EXECUTION_FLAGS b) { return a = a & b; }
inline DML_EXECUTION_FLAGS &operator^=(DML_EXECUTION_FLAGS &a, DML_EXECUTION_FLAGS b) { return a = a ^ b; }
} /* extern "C++" */
#endif

#undef EWISE_ENUM_UINT32

#endif /* EWISE_H */
