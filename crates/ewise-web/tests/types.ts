// Type-checked (never run) by scripts/web-test.sh when tsc is at hand: the README's uses
// compile against ewise.d.ts with --strict, and misuses do not.

import {
  ArgumentError, CompiledOperator, Device, EwiseError, GpuCompiledOperator, GpuDevice, GpuOperator,
  OperatorDesc, ValidationError, WebGpuUnavailableError, calcBufferTensorSize, init, isInfinity,
  WasmArray, alloc, requestGpu, sign, tensorDesc,
} from "../pkg/ewise.js";

export async function uses(): Promise<void> {
  await init();
  await init(new URL("https://example.com/ewise_web_bg.wasm"));
  const f: Float32Array = sign(new Float32Array([-2.5, NaN]), { nan: "propagate" });
  const i: BigInt64Array = sign(new BigInt64Array(2));
  const h: Uint16Array = sign(new Uint16Array([0xfc00]), { dtype: "float16" });
  const x = new Float64Array([3, -4]);
  const same: Float64Array = sign(x, { out: x });
  const flags: Uint8Array = isInfinity(new Float64Array([Infinity]), { mode: "positive" });
  const b: Uint8Array = isInfinity(new Uint16Array([0x7f80]), { dtype: "bfloat16", out: new Uint8Array(1) });
  void [f, i, h, same, flags, b];

  const wa: WasmArray<Float32Array> = alloc(Float32Array, 4);
  wa.array.set([-1, 2, NaN, -0]);
  const wr: WasmArray<Float32Array> = sign(wa, { out: wa });
  const wn: WasmArray<Float32Array> = sign(wa);
  const into: WasmArray<Float32Array> = sign(new Float32Array(4), { out: wa });
  const back: Float32Array = sign(wa, { out: new Float32Array(4) });
  const wf: WasmArray<Uint8Array> = isInfinity(wa);
  const bits: WasmArray<Uint16Array> = alloc("bfloat16", 2);
  const bf: Uint16Array = bits.array;
  const e: Float32Array = wn.array;
  const n: number = wa.length + wa.byteLength;
  wa.free();
  new Device().createOperator(OperatorDesc.sign(tensorDesc("FLOAT32", [4]), tensorDesc("FLOAT32", [4]))).compile()
    .execute([wr, wn], [{ buffer: 0, sizeInBytes: 16 }], [{ buffer: 1, sizeInBytes: 16 }]);
  void [into, back, wf, bf, e, n];

  try {
    const gpu: GpuDevice = await requestGpu({ allowSoftware: false });
    const name: string = gpu.adapter;
    const g: Int32Array = await gpu.sign(new Int32Array(3), { nan: "zero" });
    const gi: Uint8Array = await gpu.isInfinity(new Float32Array(3), { mode: "neither" });
    void [name, g, gi];

    const dml: GpuDevice = await requestGpu({
      featureLevel: "4_1", minFeatureLevel: 0x3000, extensions: true, nanPolicy: "propagate",
      maxWorkgroupsPerDimension: 4, maxBindingSize: 1024n,
    });
    const levels: [string, boolean, "zero" | "propagate", number | bigint, string | null] = [
      dml.featureLevel, dml.extensions, dml.nanPolicy, dml.maxBindingSize, dml.checkFeatureLevels(["3_0", 0x4100]),
    ];
    const t = tensorDesc("FLOAT32", [2, 3]);
    const op: GpuOperator = dml.createOperator(OperatorDesc.sign(t, t)).withNanPolicy("zero");
    const compiled: GpuCompiledOperator = op.compile();
    const count: number = compiled.dispatches;
    const buffer = new ArrayBuffer(64);
    const done: void = await compiled.execute([buffer], [{ buffer: 0, offset: 0, sizeInBytes: 24 }], [{ buffer: 0, offset: 32, sizeInBytes: 32n }]);
    await compiled.executeSlices(new Float32Array(6), new DataView(buffer));
    await compiled.executeInPlace(new Float32Array(6));
    void [levels, count, done];
  } catch (e) {
    if (e instanceof WebGpuUnavailableError || e instanceof ArgumentError || e instanceof ValidationError) {
      const kind: string = e.kind;
      void kind;
    }
    const base: boolean = e instanceof EwiseError && e instanceof Error;
    void base;
  }

  const device = new Device({ featureLevel: "4_1", extensions: false, nanPolicy: "zero" });
  const level: string = device.featureLevel;
  const t = tensorDesc("FLOAT32", [2, 3]);
  const strided = tensorDesc("FLOAT32", [2, 3], [1, 2]);
  const op: CompiledOperator = device
    .createOperator(OperatorDesc.sign(strided, t))
    .withNanPolicy("propagate")
    .compile();
  op.execute([new Float32Array(6), new Float32Array(6)], [{ buffer: 0, offset: 0, sizeInBytes: 24 }], [{ buffer: 1, sizeInBytes: 24n }]);
  const inf = Device.withFeatureLevel(0x6400).createOperator(OperatorDesc.isInfinity(t, tensorDesc("UINT8", [2, 3]), "NEGATIVE"));
  inf.compile().executeSlices(new Float32Array(6), new Uint8Array(6));
  const size: number | bigint | null = calcBufferTensorSize("UINT16", [5, 7], [0, 0]);
  void [level, size];
}

export function misuses(): void {
  // @ts-expect-error: a plain array is no typed array
  sign([1, 2]);
  // @ts-expect-error: an unknown NaN policy
  sign(new Float32Array(1), { nan: "keep" });
  // @ts-expect-error: out of another type than x
  sign(new Float32Array(1), { out: new Float64Array(1) });
  // @ts-expect-error: integers have no infinities
  isInfinity(new Int32Array(1));
  // @ts-expect-error: an unknown mode
  isInfinity(new Float32Array(1), { mode: "both" });
  // @ts-expect-error: an unknown option
  sign(new Float32Array(1), { policy: "zero" });
  // @ts-expect-error: an unknown data type
  tensorDesc("FLOAT", [1]);
  // @ts-expect-error: alloc takes typed array constructors and dtype names
  alloc(Array, 3);
  // @ts-expect-error: an unknown dtype name
  alloc("float8", 3);
  // @ts-expect-error: a WasmArray of integers has no infinities
  isInfinity(alloc(Int32Array, 1));
  // @ts-expect-error: WasmArray has no constructor to call
  void new WasmArray();
  // @ts-expect-error: an unknown GPU option
  void requestGpu({ adapter: "x" });
  // @ts-expect-error: a cap is a number
  void requestGpu({ maxWorkgroupsPerDimension: 4n });
}

export async function gpuMisuses(gpu: GpuDevice, compiled: GpuCompiledOperator): Promise<void> {
  // @ts-expect-error: a GPU execution is a promise, not a value
  const v: undefined = compiled.execute([], [], []);
  // @ts-expect-error: a GPU execution resolves to nothing
  const c: number = await gpu.createOperator(OperatorDesc.sign(tensorDesc("INT8", [1]), tensorDesc("INT8", [1]))).compile().executeInPlace(new Int8Array(1));
  // @ts-expect-error: GpuDevice has no constructor to call
  void new GpuDevice();
  void [v, c];
}
