// Types of the npm package `ewise` (ewise.js).

/** What `init` may load the WebAssembly module from. */
export type InitSource =
  | string
  | URL
  | Request
  | Response
  | Promise<Response>
  | BufferSource
  | WebAssembly.Module;

/**
 * Loads and instantiates the WebAssembly module; every other function needs it done.
 * With no argument it finds `ewise_web_bg.wasm` beside the entry module (`fetch` in a
 * browser, the file system in Node). In Node a `file:` URL or a path string is read from
 * the file system too; other URLs are fetched. Every failure is a `LoadError` with the
 * reason as `cause`. Calling it again returns the same promise.
 */
export function init(source?: InitSource): Promise<void>;

/** Arrays `sign` takes (`Float16Array` where the runtime has it). */
export type SignArray =
  | Int8Array
  | Uint8Array
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | BigInt64Array
  | BigUint64Array
  | Float32Array
  | Float64Array;

/** Arrays `isInfinity` takes: `Uint16Array` holds float16 or bfloat16 bit patterns and
 * needs `dtype`. */
export type FloatArray = Float32Array | Float64Array | Uint16Array;

/** Element types; "float16" and "bfloat16" are given as `Uint16Array` bit patterns (or,
 * for "float16", a `Float16Array`). */
export type DType =
  | "int8"
  | "uint8"
  | "int16"
  | "uint16"
  | "int32"
  | "uint32"
  | "int64"
  | "uint64"
  | "float16"
  | "bfloat16"
  | "float32"
  | "float64";

/** What SIGN gives for NaN: +0 ("zero", DirectML's formula) or the NaN itself, bit for
 * bit ("propagate", ONNX's reference and numpy). */
export type NanPolicy = "zero" | "propagate";

/** Which infinities IS_INFINITY detects; "neither" detects none. */
export type InfinityMode = "either" | "positive" | "negative" | "neither";

export interface SignOptions<T> {
  /** Default "zero". */
  nan?: NanPolicy;
  /** The element type; needed only for float16 and bfloat16 in a `Uint16Array`. Null
   * is the same as leaving it out. */
  dtype?: DType | null;
  /** Where to write: an array of `x`'s type and length, or `x` itself (in place). Null
   * is the same as leaving it out. */
  out?: T | null;
}

export interface IsInfinityOptions {
  /** Default "either". */
  mode?: InfinityMode;
  /** "float16" or "bfloat16" for a `Uint16Array` of bit patterns. Null is the same as
   * leaving it out. */
  dtype?: DType | null;
  /** Where to write: a `Uint8Array` of `x`'s length. Null is the same as leaving it
   * out. */
  out?: Uint8Array | null;
}

/**
 * The sign of each element: -1, +0 or +1 of `x`'s type (+0 for -0; NaN as `nan` says;
 * the most negative integer gives -1). Returns `options.out` or a new array of `x`'s
 * type. However `out` overlaps `x` (in one buffer, or in two SharedArrayBuffer objects
 * of one memory), the result is that of reading all of `x` first.
 */
export function sign<T extends SignArray>(x: T, options?: SignOptions<T>): T;
/** On a WasmArray, where it lies (no copy), into a JavaScript array of its type. */
export function sign<T extends SignArray>(x: WasmArray<T>, options: Omit<SignOptions<T>, "out"> & { out: T }): T;
/** On a WasmArray, where it lies (no copy), into a WasmArray of its type, or without
 * `out` into a new WasmArray. */
export function sign<T extends SignArray>(
  x: WasmArray<T>,
  options?: Omit<SignOptions<T>, "out"> & { out?: WasmArray<T> | null },
): WasmArray<T>;
/** From a JavaScript array into a WasmArray: one copy, SIGN in place there. */
export function sign<T extends SignArray>(x: T, options: Omit<SignOptions<T>, "out"> & { out: WasmArray<T> }): WasmArray<T>;

/** 1 where an element of `x` is an infinity `mode` selects, else 0. Returns
 * `options.out` or a new `Uint8Array`. */
export function isInfinity(x: FloatArray, options?: IsInfinityOptions): Uint8Array;
/** On a WasmArray, where it lies, into a JavaScript `Uint8Array`. */
export function isInfinity(
  x: WasmArray<FloatArray>,
  options: Omit<IsInfinityOptions, "out"> & { out: Uint8Array },
): Uint8Array;
/** On a WasmArray, where it lies, into a WasmArray, or without `out` a new one. */
export function isInfinity(
  x: WasmArray<FloatArray>,
  options?: Omit<IsInfinityOptions, "out"> & { out?: WasmArray<Uint8Array> | null },
): WasmArray<Uint8Array>;
/** From a JavaScript array into a WasmArray. */
export function isInfinity(
  x: FloatArray,
  options: Omit<IsInfinityOptions, "out"> & { out: WasmArray<Uint8Array> },
): WasmArray<Uint8Array>;

/** The typed array constructors `alloc` takes. */
export type SignArrayConstructor =
  | Int8ArrayConstructor
  | Uint8ArrayConstructor
  | Int16ArrayConstructor
  | Uint16ArrayConstructor
  | Int32ArrayConstructor
  | Uint32ArrayConstructor
  | BigInt64ArrayConstructor
  | BigUint64ArrayConstructor
  | Float32ArrayConstructor
  | Float64ArrayConstructor;

/** The typed array each dtype name gives (bit patterns in a `Uint16Array` for
 * "float16" and "bfloat16"). */
export interface DTypeArrays {
  int8: Int8Array;
  uint8: Uint8Array;
  int16: Int16Array;
  uint16: Uint16Array;
  int32: Int32Array;
  uint32: Uint32Array;
  int64: BigInt64Array;
  uint64: BigUint64Array;
  float16: Uint16Array;
  bfloat16: Uint16Array;
  float32: Float32Array;
  float64: Float64Array;
}

/**
 * A typed array in ewise's WebAssembly memory, made by `alloc`: `sign`, `isInfinity`
 * and `CompiledOperator.execute` run on it where it lies, with no copy in or out.
 * `array` is a view of its elements, made again after the memory grew (which detaches
 * older views: take `array` again rather than keeping it across calls). `free()`
 * releases it; a FinalizationRegistry frees one collected unfreed, as a backstop. Any
 * use after `free()`, through it or a view it handed out, is an `ArgumentError`. Where
 * the runtime has `Symbol.dispose`, that method frees it too (`using a = alloc(...)`).
 */
export class WasmArray<T extends SignArray = SignArray> {
  private constructor();
  /** The elements, over the module's memory as it is now. */
  readonly array: T;
  readonly length: number;
  readonly dtype: DType;
  readonly byteLength: number;
  /** Whether `free()` was called. */
  readonly freed: boolean;
  /** Releases the memory; every later use is refused. Calling it again does nothing. */
  free(): void;
}

/** A new WasmArray of `length` zeroed elements of `type`: a typed array constructor or
 * a dtype name. An `OutOfMemoryError` where the module's memory cannot grow to hold
 * it. */
export function alloc<C extends SignArrayConstructor>(type: C, length: number): WasmArray<InstanceType<C>>;
export function alloc<D extends DType>(type: D, length: number): WasmArray<DTypeArrays[D]>;

/** Every error ewise throws; `kind` says which, more finely than the class. */
export class EwiseError extends Error {
  readonly kind: string;
}
/** A description, binding or array that the rules refuse: the Rust error's message;
 * `kind` is its variant ("UnsupportedDataType", "SliceLength", "Hazard", ...). */
export class ValidationError extends EwiseError {}
/** An argument of the wrong type or value, or an unknown option: `kind` names the
 * argument ("x", "options.nan", ...). What inspecting an argument threw (a revoked
 * Proxy, a getter that throws) is one too, with that as `cause` (`kind` "arguments"
 * where no single argument is to blame). */
export class ArgumentError extends EwiseError {}
/** The GPU could not be had or failed; `kind` is "NoAdapter", "NoUsableAdapter", "Wgpu",
 * ... */
export class GpuError extends EwiseError {}
/** There is no WebGPU here (`kind` "WebGpuUnavailable"). */
export class WebGpuUnavailableError extends GpuError {}
/** Memory could not be allocated: WebAssembly memory for a copy, or a JavaScript array
 * sized by the caller's data (a result, a staging copy), whose RangeError is then the
 * `cause`. */
export class OutOfMemoryError extends EwiseError {}
/** `init` could not load the WebAssembly module (`kind` "Load", or "Compile" for bytes
 * that are no module of this build); `cause` says why. */
export class LoadError extends EwiseError {}

// ------------------------------------------------------------ DirectML-style API

/** `DML_TENSOR_DATA_TYPE` names (any case is accepted). */
export type DataType =
  | "FLOAT32"
  | "FLOAT16"
  | "UINT32"
  | "UINT16"
  | "UINT8"
  | "INT32"
  | "INT16"
  | "INT8"
  | "FLOAT64"
  | "UINT64"
  | "INT64"
  | "UINT4"
  | "INT4"
  | "BFLOAT16"
  | "BOOL"
  | "FLOAT8E4M3FN"
  | "FLOAT8E4M3FNUZ"
  | "FLOAT8E5M2"
  | "FLOAT8E5M2FNUZ"
  | "UNKNOWN";

/** A feature level: "6_4", "6.4", "DML_FEATURE_LEVEL_6_4" or 0x6400. */
export type FeatureLevel = string | number;

/** `DML_BUFFER_TENSOR_DESC`. Omitted fields: no strides (packed row-major), the
 * minimum total size, no alignment promise, flags 0. */
export interface TensorDesc {
  dataType: DataType;
  sizes: readonly number[];
  strides?: readonly number[];
  totalTensorSizeInBytes?: number | bigint;
  guaranteedBaseOffsetAlignment?: number;
  flags?: number;
}

/** `DMLCalcBufferTensorSize`, or null when the tensor has no size. */
export function calcBufferTensorSize(
  dataType: DataType,
  sizes: readonly number[],
  strides?: readonly number[],
): number | bigint | null;

/** A complete description with the minimum total size. */
export function tensorDesc(
  dataType: DataType,
  sizes: readonly number[],
  strides?: readonly number[],
): Required<Omit<TensorDesc, "strides">> & { strides?: number[] };

export type OperatorDescription =
  | { type: "ELEMENT_WISE_SIGN"; input: TensorDesc; output: TensorDesc }
  | {
      type: "ELEMENT_WISE_IS_INFINITY";
      input: TensorDesc;
      output: TensorDesc;
      mode?: "EITHER" | "POSITIVE" | "NEGATIVE" | "NEITHER";
    };

export const OperatorDesc: {
  sign(input: TensorDesc, output: TensorDesc): OperatorDescription;
  isInfinity(
    input: TensorDesc,
    output: TensorDesc,
    mode?: "EITHER" | "POSITIVE" | "NEGATIVE" | "NEITHER",
  ): OperatorDescription;
};

/** `DML_BUFFER_BINDING`: bytes `offset .. offset + sizeInBytes` of buffer number
 * `buffer` (offset default 0). */
export interface BufferBinding {
  buffer: number;
  offset?: number | bigint;
  sizeInBytes: number | bigint;
}

export function bufferBinding(
  buffer: number,
  offset: number | bigint,
  sizeInBytes: number | bigint,
): BufferBinding;

export interface DeviceOptions {
  /** Default "6_4". */
  featureLevel?: FeatureLevel;
  /** Creating the device fails when its level is below this one. */
  minFeatureLevel?: FeatureLevel;
  /** The ewise extensions (float64, bfloat16, 0 to 64 dimensions, ...); default false. */
  extensions?: boolean;
  /** The NaN policy of new SIGN operators; default "zero". */
  nanPolicy?: NanPolicy;
}

/** A CPU device that validates as a DirectML device of one feature level. */
export class Device {
  constructor(options?: DeviceOptions);
  static withFeatureLevel(level: FeatureLevel): Device;
  readonly featureLevel: string;
  readonly extensions: boolean;
  readonly nanPolicy: NanPolicy;
  /** The highest of `levels` at or below the device's level, or null. */
  checkFeatureLevels(levels: readonly FeatureLevel[]): string | null;
  /** Validates `desc` at the device's level (throws the rules' first `ValidationError`). */
  createOperator(desc: OperatorDescription): Operator;
}

/** A validated operator, not yet compiled. */
export class Operator {
  private constructor();
  readonly desc: OperatorDescription;
  readonly nanPolicy: NanPolicy;
  withNanPolicy(policy: NanPolicy): Operator;
  compile(): CompiledOperator;
}

/** Memory a binding may name: a binding's offset counts from a view's first byte. */
export type BufferSourceLike = ArrayBuffer | SharedArrayBuffer | ArrayBufferView;
/** What the CPU's `CompiledOperator.execute` binds: JavaScript memory, or WasmArrays
 * (every buffer of one execution), run on where they lie. */
export type ExecuteBuffers = readonly BufferSourceLike[] | readonly WasmArray[];

/** A compiled operator: executes any number of times. */
export class CompiledOperator {
  private constructor();
  readonly operatorType: "ELEMENT_WISE_SIGN" | "ELEMENT_WISE_IS_INFINITY";
  /** Runs with exactly one input and one output binding, checked as DirectML checks
   * them; buffers over one ArrayBuffer are one memory (identical ranges run in place,
   * other overlaps are hazards); over two SharedArrayBuffer objects, which may be one
   * memory, the input is read whole before any output is written. Only the output
   * elements' bytes are written. WasmArrays (all the buffers, or none) are run on
   * where they lie. */
  execute(
    buffers: ExecuteBuffers,
    inputs: readonly BufferBinding[],
    outputs: readonly BufferBinding[],
  ): void;
  /** Runs on bytes from each tensor's base, each holding its tensor's exact span. */
  executeSlices(input: BufferSourceLike, output: BufferSourceLike): void;
  /** SIGN in place (same layouts). */
  executeInPlace(data: BufferSourceLike): void;
}

// ------------------------------------------------------------------------------ GPU

export interface GpuOptions extends DeviceOptions {
  /** A software adapter (SwiftShader): `true` takes it silently, `false` refuses it
   * (`GpuError` of kind "NoAdapter"); left out, it is taken with one `console.warn`
   * ("ewise: warning: ...") per device. */
  allowSoftware?: boolean;
  /** Caps the workgroups one dispatch launches per grid dimension below the adapter's
   * limit (a positive integer up to 2^32 - 1), so that small tensors take several
   * dispatches or two-dimensional grids. */
  maxWorkgroupsPerDimension?: number;
  /** Caps the bytes one binding window spans below the adapter's limit (a positive
   * integer; raised to 256 bytes plus the adapter's storage offset alignment), so that
   * small tensors take several windows. */
  maxBindingSize?: number | bigint;
}

/**
 * A GPU device over WebGPU. Its array-style operations give the CPU functions' bits
 * whatever the device's options; its DirectML-style operators are validated at its
 * `featureLevel`, `extensions` and `nanPolicy`, as a CPU `Device`'s.
 */
export class GpuDevice {
  private constructor();
  /** The adapter: name, backend, type and driver. */
  readonly adapter: string;
  /** Whether the adapter is a software renderer (SwiftShader: WebGPU's fallback
   * adapter). */
  readonly isSoftware: boolean;
  /** The bytes one binding window spans at most (the adapter's limit or the cap). */
  readonly maxBindingSize: number | bigint;
  readonly featureLevel: string;
  readonly extensions: boolean;
  readonly nanPolicy: NanPolicy;
  sign<T extends SignArray>(x: T, options?: SignOptions<T>): Promise<T>;
  /** WasmArrays as `x` and `out` are copied across (the GPU is not in that memory);
   * without `out`, the result is a new WasmArray. */
  sign<T extends SignArray>(
    x: WasmArray<T>,
    options?: Omit<SignOptions<T>, "out"> & { out?: WasmArray<T> | null },
  ): Promise<WasmArray<T>>;
  isInfinity(x: FloatArray, options?: IsInfinityOptions): Promise<Uint8Array>;
  isInfinity(
    x: WasmArray<FloatArray>,
    options?: Omit<IsInfinityOptions, "out"> & { out?: WasmArray<Uint8Array> | null },
  ): Promise<WasmArray<Uint8Array>>;
  /** The highest of `levels` at or below the device's level, or null. */
  checkFeatureLevels(levels: readonly FeatureLevel[]): string | null;
  /** Validates `desc` at the device's level (throws the rules' first `ValidationError`,
   * or a `GpuError` of kind "BufferTooLarge" for a tensor larger than the GPU's
   * largest buffer). */
  createOperator(desc: OperatorDescription): GpuOperator;
}

/**
 * A GPU device through WebGPU. The options are checked first (`ArgumentError`, or
 * `ValidationError` of kind "FeatureLevelUnavailable"); then it rejects with
 * `WebGpuUnavailableError` where there is no `navigator.gpu` (Node, or a browser
 * without WebGPU or outside a secure context), and with `GpuError` of kind "NoAdapter"
 * where WebGPU gives no adapter, or only a software one under `allowSoftware: false`. A
 * software adapter taken without `allowSoftware` is reported once per device with
 * `console.warn("ewise: warning: ...")`.
 */
export function requestGpu(options?: GpuOptions): Promise<GpuDevice>;

/** A validated GPU operator, not yet compiled. */
export class GpuOperator {
  private constructor();
  readonly desc: OperatorDescription;
  readonly nanPolicy: NanPolicy;
  withNanPolicy(policy: NanPolicy): GpuOperator;
  compile(): GpuCompiledOperator;
}

/**
 * A compiled GPU operator: executes any number of times. Every error is the returned
 * promise's rejection, and bindings are checked (with the CPU's errors and messages)
 * before anything is copied or run; the input is read when the method is called, and
 * the output's elements (only them) are written when the GPU has finished, or nothing
 * at all on an error.
 */
export class GpuCompiledOperator {
  private constructor();
  readonly operatorType: "ELEMENT_WISE_SIGN" | "ELEMENT_WISE_IS_INFINITY";
  /** How many dispatches one execution records (0 for empty tensors). */
  readonly dispatches: number;
  /** As `CompiledOperator.execute`, on the GPU. */
  execute(
    buffers: readonly BufferSourceLike[],
    inputs: readonly BufferBinding[],
    outputs: readonly BufferBinding[],
  ): Promise<void>;
  /** As `CompiledOperator.executeSlices`, on the GPU. */
  executeSlices(input: BufferSourceLike, output: BufferSourceLike): Promise<void>;
  /** As `CompiledOperator.executeInPlace`, on the GPU. */
  executeInPlace(data: BufferSourceLike): Promise<void>;
}
