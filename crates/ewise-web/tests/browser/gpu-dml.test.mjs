// The DirectML-style API on the GPU in a browser with WebGPU: GpuDevice.createOperator,
// GpuOperator and GpuCompiledOperator's execute, executeSlices and executeInPlace, bit
// for bit against the CPU's CompiledOperator (every byte of every buffer) and the
// reference (every output element, every byte between them), for every type, NaN
// policy and infinity mode: packed and strided tensors (broadcast inputs, outputs with
// gaps, permuted 4-D layouts), bindings at offsets, in place, several dispatches and
// binding windows, one large tensor; the same errors as the CPU, with nothing written.

import { test } from "../../browser/harness.mjs";
import * as assert from "../../browser/assert.mjs";
import * as ewise from "../../pkg/ewise.js";
import { TYPES, allPatterns, firstMismatch, isInfinityOf, patternsOf, signOf, valuesOf, widePatterns } from "../reference.mjs";

const { Device, OperatorDesc, tensorDesc, ValidationError, ArgumentError, GpuError } = ewise;

const FLOATS = ["float32", "float64", "float16", "bfloat16"];
const MODES = ["either", "positive", "negative", "neither"];
const bind = (buffer, offset, sizeInBytes) => ({ buffer, offset, sizeInBytes });

/** Each case: [operator, type, NaN policy or infinity mode]. */
const CASES = [
  ...Object.keys(TYPES).flatMap((type) => ["zero", "propagate"].map((nan) => ["sign", type, nan])),
  ...FLOATS.flatMap((type) => MODES.map((mode) => ["isInfinity", type, mode])),
];

// ------------------------------------------------------------------------- helpers

/** A deterministic byte generator (xorshift32). */
function junk(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return s & 0xff;
  };
}

function filled(length, seed) {
  const next = junk(seed);
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = next();
  return bytes;
}

/** `count` patterns of `type`: its specials first (zeros, ones, extremes, infinities,
 * NaNs with payloads, both signs), then patterns spread over the whole range. */
function sample(type, count) {
  const t = TYPES[type];
  if (t.bits > 16) return widePatterns(type, count);
  const all = allPatterns(t.bits);
  const n = all.length;
  const sign = n >> 1;
  const specials = [0, 1, n - 1, sign, sign - 1, sign + 1];
  if (t.kind === "float") {
    for (const p of [t.one, t.minusOne, t.inf, t.minusInf, t.inf + 1n, t.inf | (1n << BigInt(t.mant - 1)), t.inf | 0x15n]) {
      specials.push(Number(p), Number(p) ^ sign);
    }
  }
  const out = new (all.constructor)(count);
  for (let i = 0; i < count; i++) out[i] = i < specials.length ? specials[i] : (i * 40503 + 17) % n;
  return out;
}

const dmlName = (type) => type.toUpperCase();

/** The operator description of `kind` over `type` with these layouts. */
function describe(kind, type, sizes, inStrides, outStrides) {
  const input = tensorDesc(dmlName(type), sizes, inStrides);
  if (kind === "sign") return OperatorDesc.sign(input, tensorDesc(dmlName(type), sizes, outStrides));
  return OperatorDesc.isInfinity(input, tensorDesc("UINT8", sizes, outStrides), "EITHER");
}

/** The CPU's and the GPU's compiled operator for one case. */
function compileBoth(cpu, gpu, kind, type, param, desc) {
  const d = kind === "sign" ? desc : { ...desc, mode: param.toUpperCase() };
  const c = cpu.createOperator(d);
  const g = gpu.createOperator(d);
  if (kind === "sign") return [c.withNanPolicy(param).compile(), g.withNanPolicy(param).compile()];
  return [c.compile(), g.compile()];
}

function getPattern(view, at, bits) {
  switch (bits) {
    case 8: return BigInt(view.getUint8(at));
    case 16: return BigInt(view.getUint16(at, true));
    case 32: return BigInt(view.getUint32(at, true));
    default: return view.getBigUint64(at, true);
  }
}

function setPattern(view, at, bits, p) {
  switch (bits) {
    case 8: view.setUint8(at, Number(p)); break;
    case 16: view.setUint16(at, Number(p), true); break;
    case 32: view.setUint32(at, Number(p), true); break;
    default: view.setBigUint64(at, p, true);
  }
}

/** The strides of a description (packed row-major when it has none). */
function stridesOf(desc) {
  if (desc.strides) return desc.strides;
  const strides = [];
  let acc = 1;
  for (let i = desc.sizes.length - 1; i >= 0; i--) {
    strides[i] = acc;
    acc *= desc.sizes[i];
  }
  return strides;
}

/** The reference's result of one case: `output` (the output tensor's bytes from its
 * base, before) with every element replaced by SIGN or IS_INFINITY of the input element
 * at the same indices in `input` (the input tensor's bytes from its base). */
function expected(kind, type, param, desc, input, output) {
  const bits = TYPES[type].bits;
  const outBits = kind === "sign" ? bits : 8;
  const result = output.slice();
  const src = new DataView(input.buffer, input.byteOffset, input.byteLength);
  const dst = new DataView(result.buffer);
  const sizes = desc.input.sizes;
  const [si, so] = [stridesOf(desc.input), stridesOf(desc.output)];
  if (sizes.includes(0)) return result;
  const index = sizes.map(() => 0);
  for (;;) {
    let a = 0;
    let b = 0;
    for (let d = 0; d < sizes.length; d++) {
      a += index[d] * si[d];
      b += index[d] * so[d];
    }
    const p = getPattern(src, a * (bits / 8), bits);
    const r = kind === "sign" ? signOf(type, p, param) : BigInt(isInfinityOf(type, p, param));
    setPattern(dst, b * (outBits / 8), outBits, r);
    let d = sizes.length - 1;
    while (d >= 0 && ++index[d] === sizes[d]) index[d--] = 0;
    if (d < 0) return result;
  }
}

/** An input tensor's bytes: every element slot of its total size holds a pattern of
 * `sample`, so every element a layout reads is one. */
function inputBytes(type, total, seed) {
  const size = TYPES[type].bits / 8;
  const bytes = filled(total, seed);
  const patterns = sample(type, Math.floor(total / size));
  bytes.set(new Uint8Array(patterns.buffer, 0, patterns.byteLength));
  return bytes;
}

/** Snapshots of the bytes of `buffers` (ArrayBuffers or views). */
function snapshot(buffers) {
  return buffers.map((b) => (b instanceof ArrayBuffer ? new Uint8Array(b.slice(0)) : new Uint8Array(b.buffer, b.byteOffset, b.byteLength).slice()));
}

function bytesOf(b) {
  return b instanceof ArrayBuffer ? new Uint8Array(b) : new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/**
 * Runs `cpuOp.execute` and `gpuOp.execute` on two equal sets of buffers from `make()`
 * (which returns { buffers, inputs, outputs, input: [view, at], output: [view, at] }),
 * checks that every buffer ends with the same bytes, and that the output tensor's bytes
 * are the reference's. Returns the GPU's set.
 */
async function executeBoth(label, [cpuOp, gpuOp], c, make) {
  const cpuRun = make();
  const gpuRun = make();
  const [inView, inAt] = gpuRun.input;
  const [outView, outAt] = gpuRun.output;
  const inSpan = new Uint8Array(inView.buffer, inView.byteOffset + inAt, c.desc.input.totalTensorSizeInBytes).slice();
  const outLength = c.desc.output.totalTensorSizeInBytes;
  const outBefore = new Uint8Array(outView.buffer, outView.byteOffset + outAt, outLength).slice();
  cpuOp.execute(cpuRun.buffers, cpuRun.inputs, cpuRun.outputs);
  const pending = gpuOp.execute(gpuRun.buffers, gpuRun.inputs, gpuRun.outputs);
  assert.ok(pending instanceof Promise, `${label}: execute returns a promise`);
  await pending;
  cpuRun.buffers.forEach((b, i) => assert.sameBytes(bytesOf(gpuRun.buffers[i]), bytesOf(b), `${label}: buffer ${i}, GPU against CPU`));
  const want = expected(c.kind, c.type, c.param, c.desc, inSpan, outBefore);
  assert.sameBytes(new Uint8Array(outView.buffer, outView.byteOffset + outAt, outLength), want, `${label}: output against the reference`);
  return gpuRun;
}

/** The layouts every case runs: 4-D sizes, input strides, output strides. */
const LAYOUTS = {
  // A broadcast input (0 strides) into rows padded by 3 elements.
  broadcast: [[2, 3, 4, 5], [0, 5, 0, 1], [96, 32, 8, 1]],
  // A gapped, column-major input into a dense permuted output.
  permuted: [[2, 3, 4, 5], [1, 3, 10, 41], [60, 1, 15, 3]],
  // A packed input into an output with gaps between all elements, at odd byte strides.
  gaps: [[2, 3, 4, 5], undefined, [130, 43, 11, 2]],
};

/** The same kinds of layouts over 13 800 elements. */
const LARGER_LAYOUTS = {
  broadcast: [[5, 6, 20, 23], [0, 23, 0, 1], [3120, 520, 26, 1]],
  permuted: [[5, 6, 20, 23], [1, 6, 37, 741], [138, 1, 690, 6]],
  gaps: [[5, 6, 20, 23], undefined, [5645, 941, 47, 2]],
};

// --------------------------------------------------------------------------- tests

let gpu;
let cpu;
test("requestGpu({ extensions: true }): the CPU device's options and getters", async () => {
  gpu = await ewise.requestGpu({ extensions: true });
  cpu = new Device({ extensions: true });
  assert.ok(gpu instanceof ewise.GpuDevice);
  assert.equal(gpu.featureLevel, "6_4");
  assert.equal(gpu.extensions, true);
  assert.equal(gpu.nanPolicy, "zero");
  const strict = await ewise.requestGpu({ featureLevel: "3_1", minFeatureLevel: "2_0", nanPolicy: "propagate" });
  const strictCpu = new Device({ featureLevel: "3_1", minFeatureLevel: "2_0", nanPolicy: "propagate" });
  for (const key of ["featureLevel", "extensions", "nanPolicy"]) assert.equal(strict[key], strictCpu[key], key);
  for (const levels of [["2_0", "4_1", "3_0"], ["4_1"], [0x3100, "6.4"], []]) {
    assert.equal(strict.checkFeatureLevels(levels), strictCpu.checkFeatureLevels(levels), levels.join());
  }
  assert.throws(() => strict.checkFeatureLevels("3_0"), (e) => e instanceof ArgumentError && e.message === "GpuDevice.checkFeatureLevels: levels must be an array of feature levels; got the string \"3_0\"");
  const t = tensorDesc("FLOAT32", [4]);
  const op = strict.createOperator(OperatorDesc.sign(t, t));
  assert.ok(op instanceof ewise.GpuOperator);
  assert.equal(op.nanPolicy, "propagate", "new SIGN operators take the device's policy");
  assert.equal(op.withNanPolicy("zero").nanPolicy, "zero");
  assert.equal(op.desc.type, "ELEMENT_WISE_SIGN");
  const compiled = op.compile();
  assert.ok(compiled instanceof ewise.GpuCompiledOperator);
  assert.equal(compiled.operatorType, "ELEMENT_WISE_SIGN");
  assert.equal(compiled.dispatches, 1);
  const x = new Float32Array([-3, NaN, -0, 2]);
  await compiled.executeInPlace(x);
  assert.sameBytes(x, new Float32Array([-1, NaN, 0, 1]), "the device's NaN policy");
});

test("the array-style sign and isInfinity keep the CPU's bits on a strict device", async () => {
  const strict = await ewise.requestGpu({ featureLevel: "1_0", maxWorkgroupsPerDimension: 3, maxBindingSize: 2048 });
  const x = valuesOf("float64", widePatterns("float64", 5000));
  assert.sameBytes(await strict.sign(x, { nan: "propagate" }), ewise.sign(x, { nan: "propagate" }), "float64 SIGN");
  const b = valuesOf("bfloat16", allPatterns(16));
  assert.sameBytes(await strict.isInfinity(b, { dtype: "bfloat16", mode: "negative" }), ewise.isInfinity(b, { dtype: "bfloat16", mode: "negative" }), "bfloat16 IS_INFINITY");
  const t = tensorDesc("FLOAT32", [1, 1, 1, 2]);
  let want;
  try {
    Device.withFeatureLevel("1_0").createOperator(OperatorDesc.sign(t, t));
  } catch (e) {
    want = e;
  }
  assert.equal(want?.kind, "OperatorNotAvailable");
  assert.throws(() => strict.createOperator(OperatorDesc.sign(t, t)),
    (e) => e instanceof ValidationError && e.message === want.message, "its DirectML-style operators are validated at 1_0");
});

for (const [kind, type, param] of CASES) {
  test(`${kind} ${type} ${param}: packed, strided, at offsets, slices: the CPU's bytes and the reference's`, async () => {
    const size = TYPES[type].bits / 8;
    // Packed: every pattern of 8- and 16-bit types, 20 000 of the others.
    const n = TYPES[type].bits <= 16 ? 1 << TYPES[type].bits : 20_000;
    const desc = describe(kind, type, [n]);
    const c = { kind, type, param, desc };
    const ops = compileBoth(cpu, gpu, kind, type, param, desc);
    const [inTotal, outTotal] = [desc.input.totalTensorSizeInBytes, desc.output.totalTensorSizeInBytes];
    await executeBoth("packed, two buffers at offset 0", ops, c, () => {
      const input = inputBytes(type, inTotal, 1);
      const output = filled(outTotal, 2);
      return { buffers: [input, output], inputs: [bind(0, 0, inTotal)], outputs: [bind(1, 0, outTotal)], input: [input, 0], output: [output, 0] };
    });
    await executeBoth("packed, one buffer, disjoint ranges at offsets, bound beyond the tensor", ops, c, () => {
      const memory = filled(48 + inTotal + 64 + outTotal + 80, 3);
      memory.set(inputBytes(type, inTotal, 4), 48);
      const outAt = 48 + Math.ceil((inTotal + 32) / 16) * 16;
      return { buffers: [memory], inputs: [bind(0, 48, inTotal + 16)], outputs: [bind(0, outAt, outTotal + 32)], input: [memory, 48], output: [memory, outAt] };
    });
    const pattern = sample(type, n);
    const x = valuesOf(type, pattern);
    const y = new Uint8Array(outTotal);
    await ops[1].executeSlices(x, y);
    const want = new Uint8Array(outTotal);
    ops[0].executeSlices(x, want);
    assert.sameBytes(y, want, "executeSlices, GPU against CPU");
    const got = kind === "sign" ? patternsOf(valuesOf(type, new (pattern.constructor)(y.buffer))) : y;
    const f = kind === "sign" ? (p) => signOf(type, p, param) : (p) => isInfinityOf(type, p, param);
    assert.equal(firstMismatch(pattern, got, f), null, "executeSlices against the reference");

    for (const [name, [sizes, inStrides, outStrides]] of Object.entries(LAYOUTS)) {
      const d = describe(kind, type, sizes, inStrides, outStrides);
      const cs = { kind, type, param, desc: d };
      const strided = compileBoth(cpu, gpu, kind, type, param, d);
      const [it, ot] = [d.input.totalTensorSizeInBytes, d.output.totalTensorSizeInBytes];
      await executeBoth(`${name}: two views of one ArrayBuffer, at offsets`, strided, cs, () => {
        const memory = filled(16 + it + 48 + ot + 16 + 40, 5);
        const inView = new Uint8Array(memory.buffer, 16);
        inView.set(inputBytes(type, it, 6), 16);
        const outStart = Math.ceil((32 + it) / 16) * 16 + 32;
        const outView = new DataView(memory.buffer, outStart - 16);
        return { buffers: [inView, outView], inputs: [bind(0, 16, it)], outputs: [bind(1, 16, ot)], input: [inView, 16], output: [outView, 16] };
      });
      // executeSlices: the bytes between the output's elements are kept.
      const src = inputBytes(type, it, 7);
      const [gOut, cOut] = [filled(ot, 8), filled(ot, 8)];
      const before = gOut.slice();
      await strided[1].executeSlices(src, gOut);
      strided[0].executeSlices(src, cOut);
      assert.sameBytes(gOut, cOut, `${name}: executeSlices, GPU against CPU`);
      assert.sameBytes(gOut, expected(kind, type, param, d, src, before), `${name}: executeSlices against the reference`);
    }
    void size;
  });
}

test("in place: identical ranges (one buffer, two views of one ArrayBuffer), executeInPlace, layouts that differ", async () => {
  for (const type of Object.keys(TYPES)) {
    for (const nan of ["zero", "propagate"]) {
      const n = 3001;
      const desc = describe("sign", type, [n]);
      const c = { kind: "sign", type, param: nan, desc };
      const ops = compileBoth(cpu, gpu, "sign", type, nan, desc);
      const total = desc.input.totalTensorSizeInBytes;
      await executeBoth(`${type} ${nan}: one buffer, identical ranges`, ops, c, () => {
        const memory = filled(32 + total + 16, 9);
        memory.set(inputBytes(type, total, 10), 32);
        return { buffers: [memory], inputs: [bind(0, 32, total)], outputs: [bind(0, 32, total)], input: [memory, 32], output: [memory, 32] };
      });
      await executeBoth(`${type} ${nan}: two views of one ArrayBuffer naming the same bytes`, ops, c, () => {
        const memory = filled(64 + total, 11);
        memory.set(inputBytes(type, total, 12), 48);
        const other = new Uint8Array(memory.buffer, 16);
        return { buffers: [memory, other], inputs: [bind(0, 48, total)], outputs: [bind(1, 32, total)], input: [memory, 48], output: [other, 32] };
      });
      const x = valuesOf(type, sample(type, n));
      const [g, w] = [x.slice(), x.slice()];
      await ops[1].executeInPlace(g);
      ops[0].executeInPlace(w);
      assert.sameBytes(g, w, `${type} ${nan}: executeInPlace`);
    }
  }
  // Layouts that differ over one range: the whole input is read before anything is written.
  for (const type of ["int8", "float16", "float32", "float64"]) {
    const input = tensorDesc(dmlName(type), [6, 7], [1, 6]);
    const output = tensorDesc(dmlName(type), [6, 7]);
    const desc = OperatorDesc.sign(input, output);
    const ops = compileBoth(cpu, gpu, "sign", type, "propagate", desc);
    const total = input.totalTensorSizeInBytes;
    await executeBoth(`${type}: a transposed input over its own output`, ops, { kind: "sign", type, param: "propagate", desc }, () => {
      const memory = inputBytes(type, total + 16, 13);
      return { buffers: [memory], inputs: [bind(0, 0, total)], outputs: [bind(0, 0, total)], input: [memory, 0], output: [memory, 0] };
    });
    const data = inputBytes(type, total, 14);
    await assert.rejects(ops[1].executeInPlace(data), (e) => {
      let cpuError;
      try {
        ops[0].executeInPlace(data.slice());
      } catch (error) {
        cpuError = error;
      }
      return e instanceof ValidationError && e.kind === "InPlaceUnsupported" && e.message === cpuError.message;
    });
  }
});

test("several dispatches and binding windows: small caps, every layout, the CPU's bytes", async () => {
  const capped = await ewise.requestGpu({ extensions: true, maxWorkgroupsPerDimension: 2, maxBindingSize: 1024 });
  assert.ok(capped.maxBindingSize >= 1024 && capped.maxBindingSize <= 1024 + 256 + 256, `maxBindingSize ${capped.maxBindingSize}`);
  const cases = [["sign", "float32", "propagate"], ["sign", "int8", "zero"], ["sign", "float64", "zero"], ["sign", "bfloat16", "propagate"],
    ["isInfinity", "float16", "either"], ["isInfinity", "float64", "negative"]];
  for (const [kind, type, param] of cases) {
    const n = 50_000;
    const desc = describe(kind, type, [n]);
    const ops = compileBoth(cpu, capped, kind, type, param, desc);
    assert.ok(ops[1].dispatches > 8, `${kind} ${type}: ${ops[1].dispatches} dispatches`);
    const [it, ot] = [desc.input.totalTensorSizeInBytes, desc.output.totalTensorSizeInBytes];
    await executeBoth(`${kind} ${type} packed`, ops, { kind, type, param, desc }, () => {
      const memory = filled(16 + it + ot + 32, 15);
      memory.set(inputBytes(type, it, 16), 16);
      const outAt = Math.ceil((16 + it) / 16) * 16;
      return { buffers: [memory], inputs: [bind(0, 16, it)], outputs: [bind(0, outAt, ot)], input: [memory, 16], output: [memory, outAt] };
    });
    for (const [name, [sizes, inStrides, outStrides]] of Object.entries(LARGER_LAYOUTS)) {
      const d = describe(kind, type, sizes, inStrides, outStrides);
      const strided = compileBoth(cpu, capped, kind, type, param, d);
      assert.ok(strided[1].dispatches > 1, `${name}: ${strided[1].dispatches} dispatches`);
      const [si, so] = [d.input.totalTensorSizeInBytes, d.output.totalTensorSizeInBytes];
      await executeBoth(`${kind} ${type} ${name}`, strided, { kind, type, param, desc: d }, () => {
        const input = inputBytes(type, si, 17);
        const output = filled(so + 16, 18);
        return { buffers: [input, output], inputs: [bind(0, 0, si)], outputs: [bind(1, 16, so)], input: [input, 0], output: [output, 16] };
      });
    }
  }
  const t = describe("sign", "int16", [40_000]);
  const [c, g] = compileBoth(cpu, capped, "sign", "int16", "zero", t);
  const x = valuesOf("int16", sample("int16", 40_000));
  const [gx, cx] = [x.slice(), x.slice()];
  await g.executeInPlace(gx);
  c.executeInPlace(cx);
  assert.sameBytes(gx, cx, "executeInPlace over many windows");
});

test("large tensors: more than 65535 * 256 float32 elements, packed; 16.8 Mi int8 into every other byte", async () => {
  const n = 65535 * 256 + 4099;
  const desc = describe("sign", "float32", [n]);
  const ops = compileBoth(cpu, gpu, "sign", "float32", "propagate", desc);
  const bytes = n * 4;
  const make = () => {
    const input = new Uint32Array(n);
    let s = 0x2545f491;
    for (let i = 0; i < n; i++) {
      s ^= s << 13;
      s ^= s >>> 17;
      s ^= s << 5;
      input[i] = i % 3 === 0 ? (s & 0x807fffff) | 0x7f800000 : s;
    }
    input.set(widePatterns("float32", 64));
    return { buffers: [input, new Float32Array(n).fill(7)], inputs: [bind(0, 0, bytes)], outputs: [bind(1, 0, bytes)] };
  };
  const [c, g] = [make(), make()];
  const start = performance.now();
  await ops[1].execute(g.buffers, g.inputs, g.outputs);
  const ms = performance.now() - start;
  ops[0].execute(c.buffers, c.inputs, c.outputs);
  assert.sameBytes(g.buffers[1], c.buffers[1], `GPU against CPU (${ops[1].dispatches} dispatches, ${Math.round(ms)} ms)`);
  console.log(`gpu-dml: SIGN of ${n} float32 elements on ${gpu.adapter}: ${Math.round(ms)} ms, ${ops[1].dispatches} dispatch(es)`);
  const inf = compileBoth(cpu, gpu, "isInfinity", "float32", "positive", describe("isInfinity", "float32", [n]));
  const [gf, cf] = [new Uint8Array(n), new Uint8Array(n)];
  await inf[1].executeSlices(g.buffers[0], gf);
  inf[0].executeSlices(c.buffers[0], cf);
  assert.sameBytes(gf, cf, "IS_INFINITY, GPU against CPU");

  // Strided: 4100 x 4099 int8 elements into every other byte, a row kernel's grid.
  const d = describe("sign", "int8", [4100, 4099], undefined, [8200, 2]);
  const strided = compileBoth(cpu, gpu, "sign", "int8", "zero", d);
  const src = new Uint8Array(g.buffers[0].buffer, 0, d.input.totalTensorSizeInBytes);
  const [go, co] = [filled(d.output.totalTensorSizeInBytes, 25), filled(d.output.totalTensorSizeInBytes, 25)];
  const t0 = performance.now();
  await strided[1].executeSlices(src, go);
  const stridedMs = performance.now() - t0;
  strided[0].executeSlices(src, co);
  assert.sameBytes(go, co, `strided int8, GPU against CPU (${strided[1].dispatches} dispatches, ${Math.round(stridedMs)} ms)`);
  console.log(`gpu-dml: strided SIGN of ${4100 * 4099} int8 elements: ${Math.round(stridedMs)} ms, ${strided[1].dispatches} dispatch(es)`);
});

/** The CPU's error for `f(cpuOp)` and the GPU's rejection for `f(gpuOp)`: the same class,
 * kind and message (the GPU's method named for the CPU's), and no byte of `buffers`
 * changed on the GPU's side. */
async function sameError(label, [cpuOp, gpuOp], buffers, f) {
  let cpuError;
  try {
    f(cpuOp, snapshot(buffers).map((b) => b));
  } catch (e) {
    cpuError = e;
  }
  assert.ok(cpuError instanceof ewise.EwiseError, `${label}: the CPU refuses it (${cpuError})`);
  const before = snapshot(buffers);
  let pending;
  try {
    pending = f(gpuOp, buffers);
  } catch (e) {
    assert.ok(false, `${label}: the GPU threw synchronously (${e.name}: ${e.message}) instead of rejecting`);
  }
  assert.ok(pending instanceof Promise, `${label}: a promise`);
  await assert.rejects(pending, (e) => {
    assert.equal(e.constructor, cpuError.constructor, `${label}: class (${e.name}: ${e.message})`);
    assert.equal(e.kind, cpuError.kind, `${label}: kind`);
    assert.equal(e.message, cpuError.message.replace(/^CompiledOperator\./, "GpuCompiledOperator."), `${label}: message`);
    return true;
  });
  snapshot(buffers).forEach((b, i) => assert.sameBytes(b, before[i], `${label}: buffer ${i} unchanged`));
}

test("errors: the CPU's classes, kinds and messages, as rejections, with nothing written", async () => {
  const t = tensorDesc("FLOAT32", [2, 3]);
  const sign = compileBoth(cpu, gpu, "sign", "float32", "zero", OperatorDesc.sign(t, t));
  const inf = compileBoth(cpu, gpu, "isInfinity", "float32", "either", OperatorDesc.isInfinity(t, tensorDesc("UINT8", [2, 3])));
  const fresh = () => [filled(64, 20), filled(64, 21)];
  const b = fresh();
  const bad = [
    ["no input binding", sign, (op, bs) => op.execute(bs, [], [bind(1, 0, 24)])],
    ["two output bindings", sign, (op, bs) => op.execute(bs, [bind(0, 0, 24)], [bind(1, 0, 24), bind(1, 32, 24)])],
    ["a buffer index out of range", sign, (op, bs) => op.execute(bs, [bind(0, 0, 24)], [bind(2, 0, 24)])],
    ["an unaligned offset", sign, (op, bs) => op.execute(bs, [bind(0, 8, 24)], [bind(1, 0, 24)])],
    ["a binding smaller than the tensor", sign, (op, bs) => op.execute(bs, [bind(0, 0, 20)], [bind(1, 0, 24)])],
    ["a range outside its buffer", sign, (op, bs) => op.execute(bs, [bind(0, 0, 24)], [bind(1, 48, 24)])],
    ["a partial overlap in one buffer", sign, (op, bs) => op.execute(bs, [bind(0, 0, 24)], [bind(0, 16, 24)])],
    ["a partial overlap of two views of one ArrayBuffer", sign, (op, bs) => op.execute([bs[0], new Uint8Array(bs[0].buffer, 16)], [bind(0, 0, 24)], [bind(1, 0, 24)])],
    ["identical ranges for IS_INFINITY", inf, (op, bs) => op.execute(bs, [bind(0, 0, 24)], [bind(0, 0, 24)])],
    ["buffers not an array", sign, (op, bs) => op.execute(bs[0], [bind(0, 0, 24)], [bind(1, 0, 24)])],
    ["a buffer that is an Array", sign, (op, bs) => op.execute([bs[0], [1, 2]], [bind(0, 0, 24)], [bind(1, 0, 24)])],
    ["a binding with an unknown field", sign, (op, bs) => op.execute(bs, [bind(0, 0, 24)], [{ buffer: 1, size: 24 }])],
    ["a negative offset", sign, (op, bs) => op.execute(bs, [bind(0, -16, 24)], [bind(1, 0, 24)])],
    ["a size of 2^64", sign, (op, bs) => op.execute(bs, [bind(0, 0, 24)], [bind(1, 0n, 1n << 64n)])],
    ["executeSlices: a short input", sign, (op, bs) => op.executeSlices(bs[0].subarray(0, 20), bs[1])],
    ["executeSlices: a short output", inf, (op, bs) => op.executeSlices(bs[0], bs[1].subarray(0, 5))],
    ["executeSlices: an output that is no buffer", sign, (op, bs) => op.executeSlices(bs[0], [0])],
    ["executeInPlace: IS_INFINITY", inf, (op, bs) => op.executeInPlace(bs[0])],
    ["executeInPlace: short data", sign, (op, bs) => op.executeInPlace(bs[0].subarray(0, 8))],
    ["executeInPlace: no data", sign, (op) => op.executeInPlace(null)],
  ];
  for (const [label, ops, f] of bad) await sameError(label, ops, b, f);

  // Descriptions: createOperator throws the CPU's errors (synchronously, as the CPU's).
  const strictCpu = Device.withFeatureLevel("3_0");
  const strictGpu = await ewise.requestGpu({ featureLevel: "3_0" });
  const descs = [
    OperatorDesc.isInfinity(tensorDesc("FLOAT32", [4]), tensorDesc("FLOAT32", [4])),
    OperatorDesc.sign(tensorDesc("BFLOAT16", [4]), tensorDesc("BFLOAT16", [4])),
    OperatorDesc.sign(tensorDesc("INT8", [2]), tensorDesc("INT16", [2])),
    OperatorDesc.sign(tensorDesc("FLOAT32", [3, 2]), tensorDesc("FLOAT32", [3, 2], [1, 2])),
    OperatorDesc.sign({ ...tensorDesc("FLOAT32", [4]), totalTensorSizeInBytes: 8 }, tensorDesc("FLOAT32", [4])),
    OperatorDesc.sign(tensorDesc("FLOAT32", [1, 1, 1, 1, 1, 1, 1, 1, 2]), tensorDesc("FLOAT32", [1, 1, 1, 1, 1, 1, 1, 1, 2])),
    { type: "SIGN", input: t, output: t },
  ];
  for (const desc of descs) {
    let want;
    try {
      strictCpu.createOperator(desc);
    } catch (e) {
      want = e;
    }
    assert.ok(want instanceof ewise.EwiseError, `the CPU refuses ${JSON.stringify(desc)}`);
    assert.throws(() => strictGpu.createOperator(desc), (e) => e.constructor === want.constructor && e.kind === want.kind
      && e.message === want.message.replace(/^Device\./, "GpuDevice."), want.message);
  }
  const g = gpu.createOperator(OperatorDesc.sign(t, t));
  assert.throws(() => g.withNanPolicy("Propagate"), (e) => e instanceof ArgumentError && /^GpuOperator\.withNanPolicy: policy must be "zero" or "propagate"/.test(e.message));

  // Tensors too large for WebAssembly (the CPU's TensorTooLarge), and for the GPU's
  // largest buffer (a GpuError of kind BufferTooLarge where the adapter's is smaller than
  // 2 000 000 000 bytes): errors, never a crash.
  const huge = tensorDesc("FLOAT64", [0x7fffffff, 8]);
  let tooLarge;
  try {
    cpu.createOperator(OperatorDesc.sign(huge, huge));
  } catch (e) {
    tooLarge = e;
  }
  assert.equal(tooLarge?.kind, "TensorTooLarge");
  assert.throws(() => gpu.createOperator(OperatorDesc.sign(huge, huge)), (e) => e instanceof ValidationError && e.message === tooLarge.message);
  const big = tensorDesc("FLOAT32", [500_000_000]);
  try {
    gpu.createOperator(OperatorDesc.sign(big, big));
  } catch (e) {
    assert.ok(e instanceof GpuError && e.kind === "BufferTooLarge", `${e.name}: ${e.message}`);
    assert.match(e.message, /^ELEMENT_WISE_SIGN: InputTensor needs a buffer of 2000000000 bytes, larger than this GPU's largest buffer \(\d+ bytes\)$/);
  }
  // The module still works.
  const x = new Float32Array([-2, 5, -0, NaN, Infinity, -1e-45]);
  const y = new Float32Array(6);
  await sign[1].executeSlices(x, y);
  assert.sameBytes(y, new Float32Array([-1, 1, 0, 0, 1, -1]));
});

test("while the GPU runs: an output detached meanwhile rejects and is not written; bytes between elements changed meanwhile are kept", async () => {
  const d = describe("sign", "int8", [64, 63], undefined, [128, 2]);
  const [, g] = compileBoth(cpu, gpu, "sign", "int8", "zero", d);
  const input = inputBytes("int8", d.input.totalTensorSizeInBytes, 22);
  const total = d.output.totalTensorSizeInBytes;
  const output = filled(total, 23);
  const pending = g.execute([input, output], [bind(0, 0, input.length)], [bind(1, 0, total)]);
  const moved = structuredClone(output.buffer, { transfer: [output.buffer] });
  const kept = new Uint8Array(moved).slice();
  await assert.rejects(pending, (e) => e instanceof ArgumentError && /detached/.test(e.message));
  assert.sameBytes(new Uint8Array(moved), kept, "the transferred memory is not written");

  const out = filled(total, 24);
  const before = out.slice();
  const running = g.execute([input, out], [bind(0, 0, input.length)], [bind(1, 0, total)]);
  for (let i = 1; i < total; i += 2) out[i] = 0x5a;
  await running;
  const want = expected("sign", "int8", "zero", d, input, before);
  for (let i = 1; i < total; i += 2) want[i] = 0x5a;
  assert.sameBytes(out, want, "elements written, gaps as changed meanwhile");
});

test("the README's example", async () => {
  const device = await ewise.requestGpu({ featureLevel: "6_4", nanPolicy: "propagate" });
  const input = tensorDesc("FLOAT32", [2, 3], [0, 1]);
  const output = tensorDesc("FLOAT32", [2, 3], [4, 1]);
  const op = device.createOperator(OperatorDesc.sign(input, output)).compile();
  const memory = new ArrayBuffer(64);
  new Float32Array(memory).fill(9);
  new Float32Array(memory, 0, 3).set([-2, NaN, 5]);
  await op.execute([memory], [{ buffer: 0, offset: 0, sizeInBytes: 12 }], [{ buffer: 0, offset: 16, sizeInBytes: 28 }]);
  assert.sameBytes(new Float32Array(memory, 16), new Float32Array([-1, NaN, 1, 9, -1, NaN, 1, 9, 9, 9, 9, 9]));
});
