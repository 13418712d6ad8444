// The DirectML-style API: devices and feature levels, descriptions, validation with the
// Rust messages (docs/SEMANTICS.md sections 3 to 5), bindings, strides, in place and
// hazards, against the reference.

import { test } from "node:test";
import assert from "node:assert/strict";

import { loadPackage, patternsOf, signOf, widePatterns, valuesOf } from "./reference.mjs";

const ewise = await loadPackage();
await ewise.init();
const { Device, OperatorDesc, tensorDesc, calcBufferTensorSize, ValidationError, ArgumentError } = ewise;

function refused(f, cls, kind, text) {
  let caught;
  try {
    f();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof cls, `${caught?.name}: ${caught?.message}; expected ${cls.name}`);
  assert.equal(caught.kind, kind, caught.message);
  if (text instanceof RegExp) assert.match(caught.message, text);
  else assert.equal(caught.message, text);
}

const bind = (buffer, offset, sizeInBytes) => ({ buffer, offset, sizeInBytes });

test("devices: level, extensions, policy, feature-level queries", () => {
  const d = new Device();
  assert.equal(d.featureLevel, "6_4");
  assert.equal(d.extensions, false);
  assert.equal(d.nanPolicy, "zero");
  assert.equal(Device.withFeatureLevel("4.1").featureLevel, "4_1");
  assert.equal(new Device({ featureLevel: 0x3100 }).featureLevel, "3_1");
  assert.equal(new Device({ featureLevel: "DML_FEATURE_LEVEL_2_1", nanPolicy: "propagate", extensions: true }).nanPolicy, "propagate");
  assert.equal(Device.withFeatureLevel("3_0").checkFeatureLevels(["2_0", "4_1", "3_0"]), "3_0");
  assert.equal(Device.withFeatureLevel("2_0").checkFeatureLevels(["4_1"]), null);
  refused(() => new Device({ featureLevel: "3_0", minFeatureLevel: "4_1" }), ValidationError, "FeatureLevelUnavailable",
    "device creation failed: minimum feature level 4_1 is above the highest this device supports (3_0)");
  refused(() => new Device({ featureLevel: "7_0" }), ArgumentError, "options.featureLevel", /^unknown feature level '7_0' \(accepted: 1_0, 2_0/);
  refused(() => new Device({ level: "6_4" }), ArgumentError, "options", /unknown option "level" \(accepted: featureLevel, minFeatureLevel, extensions, nanPolicy\)/);
  refused(() => new Device({ extensions: "yes" }), ArgumentError, "options.extensions", /must be true or false/);
  refused(() => new Device({ nanPolicy: "nan" }), ArgumentError, "options.nanPolicy", /must be "zero" or "propagate"/);
});

test("DMLCalcBufferTensorSize: the examples of section 4.2", () => {
  assert.equal(calcBufferTensorSize("FLOAT32", [1, 2, 3, 4]), 96);
  assert.equal(calcBufferTensorSize("UINT8", [1, 1, 1, 5]), 8);
  assert.equal(calcBufferTensorSize("FLOAT16", [3]), 8);
  assert.equal(calcBufferTensorSize("INT8", []), 4);
  assert.equal(calcBufferTensorSize("FLOAT32", [2, 3], [8, 1]), 44);
  assert.equal(calcBufferTensorSize("UINT16", [5, 7], [0, 0]), 4);
  assert.equal(calcBufferTensorSize("float64", [3, 2], [1, 3]), 48);
  assert.equal(calcBufferTensorSize("FLOAT32", [2, 3], [1]), null);
  assert.equal(calcBufferTensorSize("UINT4", [2]), null);
  assert.deepEqual(tensorDesc("FLOAT32", [2, 3], [8, 1]), {
    dataType: "FLOAT32", sizes: [2, 3], strides: [8, 1], totalTensorSizeInBytes: 44, guaranteedBaseOffsetAlignment: 0, flags: 0,
  });
  refused(() => calcBufferTensorSize("FLOAT", [1]), ArgumentError, "dataType", /dataType must be a data type name \(FLOAT32, FLOAT16/);
  refused(() => calcBufferTensorSize("FLOAT32", [1, -1]), ArgumentError, "sizes", "calcBufferTensorSize: sizes[1] must be an integer from 0 to 4294967295; got number -1");
  refused(() => calcBufferTensorSize("FLOAT32", "1"), ArgumentError, "sizes", /sizes must be an array of integers/);
});

test("validation at each level, with the Rust messages (section 5.5)", () => {
  const t = (type, sizes, strides) => tensorDesc(type, sizes, strides);
  refused(() => Device.withFeatureLevel("2_1").createOperator(OperatorDesc.sign(t("FLOAT32", [1, 2, 3]), t("FLOAT32", [1, 2, 3]))),
    ValidationError, "UnsupportedDimensionCount", "ELEMENT_WISE_SIGN: InputTensor DimensionCount 3 is not supported at feature level 2_1 (supported: 4)");
  refused(() => Device.withFeatureLevel("4_1").createOperator(OperatorDesc.isInfinity(t("UINT8", [4]), t("UINT8", [4]))),
    ValidationError, "UnsupportedDataType", "ELEMENT_WISE_IS_INFINITY: InputTensor data type UINT8 is not supported at feature level 4_1 (supported: FLOAT32, FLOAT16)");
  refused(() => Device.withFeatureLevel("3_0").createOperator(OperatorDesc.isInfinity(t("FLOAT32", [4]), t("FLOAT32", [4]))),
    ValidationError, "UnsupportedDataType", "ELEMENT_WISE_IS_INFINITY: OutputTensor data type FLOAT32 is not supported at feature level 3_0 (supported: UINT8)");
  refused(() => Device.withFeatureLevel("2_0").createOperator(OperatorDesc.isInfinity(t("FLOAT32", [1, 1, 1, 4]), t("UINT8", [1, 1, 1, 4]))),
    ValidationError, "OperatorNotAvailable", "ELEMENT_WISE_IS_INFINITY is not supported at feature level 2_0 (introduced at feature level 2_1)");
  refused(() => new Device().createOperator(OperatorDesc.sign(t("FLOAT32", [3, 2]), t("FLOAT32", [3, 2], [1, 2]))),
    ValidationError, "OverlappingOutput", /^ELEMENT_WISE_SIGN: OutputTensor Strides \[1, 2\] place more than one element of Sizes \[3, 2\] at one address/);
  refused(() => new Device().createOperator(OperatorDesc.sign(t("FLOAT64", [2]), t("FLOAT64", [2]))),
    ValidationError, "UnsupportedDataType", /^ELEMENT_WISE_SIGN: InputTensor data type FLOAT64 is not supported at feature level 6_4 \(supported: /);
  refused(() => new Device().createOperator(OperatorDesc.sign(t("INT8", [2]), t("INT16", [2]))),
    ValidationError, "DataTypeMismatch", "ELEMENT_WISE_SIGN: OutputTensor data type INT16 does not match InputTensor data type INT8 (they must be equal)");
  refused(() => new Device().createOperator(OperatorDesc.isInfinity(t("FLOAT32", [2]), t("UINT8", [2]), "NEITHER")),
    ValidationError, "UnsupportedInfinityMode", "ELEMENT_WISE_IS_INFINITY: InfinityMode NEITHER is not supported without extensions (supported: EITHER, POSITIVE, NEGATIVE)");
  refused(() => new Device().createOperator(OperatorDesc.sign({ ...t("FLOAT32", [4]), totalTensorSizeInBytes: 8 }, t("FLOAT32", [4]))),
    ValidationError, "TotalSizeTooSmall", "ELEMENT_WISE_SIGN: InputTensor TotalTensorSizeInBytes 8 is too small (at least 16 required by its sizes, strides and data type)");
  refused(() => new Device().createOperator(OperatorDesc.sign({ ...t("FLOAT32", [4]), flags: 1 }, t("FLOAT32", [4]))),
    ValidationError, "UnsupportedFlags", /^ELEMENT_WISE_SIGN: InputTensor Flags/);
  refused(() => new Device().createOperator(OperatorDesc.sign({ ...t("FLOAT32", [4]), guaranteedBaseOffsetAlignment: 2 }, t("FLOAT32", [4]))),
    ValidationError, "InvalidAlignment", /GuaranteedBaseOffsetAlignment 2 is invalid/);
  const ext = new Device({ extensions: true });
  assert.equal(ext.createOperator(OperatorDesc.sign(t("FLOAT64", [2]), t("FLOAT64", [2]))).nanPolicy, "zero");
  ext.createOperator(OperatorDesc.isInfinity(t("BFLOAT16", []), t("BOOL", []), "neither")).compile();
});

test("argument errors of descriptions and operators", () => {
  const d = new Device();
  const t = tensorDesc("FLOAT32", [4]);
  refused(() => d.createOperator({ type: "SIGN", input: t, output: t }), ArgumentError, "desc.type", /desc.type must be "ELEMENT_WISE_SIGN" or "ELEMENT_WISE_IS_INFINITY"; got "SIGN"/);
  refused(() => d.createOperator({ ...OperatorDesc.sign(t, t), mode: "EITHER" }), ArgumentError, "desc.mode", /ELEMENT_WISE_SIGN has no mode/);
  refused(() => d.createOperator(OperatorDesc.isInfinity(t, t, "BOTH")), ArgumentError, "desc.mode", /desc.mode must be "EITHER", "POSITIVE", "NEGATIVE" or "NEITHER"; got "BOTH"/);
  refused(() => d.createOperator(OperatorDesc.sign(t, null)), ArgumentError, "desc.output", /desc.output must be a tensor description/);
  refused(() => d.createOperator(OperatorDesc.sign(t, 5)), ArgumentError, "desc.output", /desc.output must be an object such as \{ dataType: ... \}; got number 5/);
  refused(() => d.createOperator("sign"), ArgumentError, "desc", /desc must be an object/);
  refused(() => d.createOperator(OperatorDesc.sign(t, { ...t, stride: [1] })), ArgumentError, "desc.output", /^Device.createOperator: desc.output has an unknown field "stride" \(accepted: dataType, sizes, strides, totalTensorSizeInBytes, guaranteedBaseOffsetAlignment, flags\)$/);
  refused(() => d.createOperator(OperatorDesc.sign(t, { ...t, totalTensorSizeInBytes: -4 })), ArgumentError, "desc.output.totalTensorSizeInBytes", /non-negative integer/);
  refused(() => d.createOperator(OperatorDesc.sign(t, t)).withNanPolicy("Propagate"), ArgumentError, "policy", /must be "zero" or "propagate"/);
});

test("execute: every SIGN type, both policies, against the reference", () => {
  const types = { INT8: "int8", UINT8: "uint8", INT16: "int16", UINT16: "uint16", INT32: "int32", UINT32: "uint32", INT64: "int64", UINT64: "uint64", FLOAT16: "float16", BFLOAT16: "bfloat16", FLOAT32: "float32", FLOAT64: "float64" };
  const device = new Device({ extensions: true });
  for (const [dml, type] of Object.entries(types)) {
    for (const nan of ["zero", "propagate"]) {
      const n = 1000;
      const wide = type.includes("16") ? "float32" : type;
      let patterns = widePatterns(wide, n);
      if (type.includes("16")) patterns = Uint16Array.from(patterns, (p) => p & 0xffff);
      if (type.includes("8")) patterns = Uint8Array.from(widePatterns("int32", n), (p) => p & 0xff);
      const desc = tensorDesc(dml, [n]);
      const op = device.createOperator(OperatorDesc.sign(desc, desc)).withNanPolicy(nan).compile();
      assert.equal(op.operatorType, "ELEMENT_WISE_SIGN");
      const out = new Uint8Array(desc.totalTensorSizeInBytes);
      op.execute([valuesOf(type, patterns), out], [bind(0, 0, desc.totalTensorSizeInBytes)], [bind(1, 0, desc.totalTensorSizeInBytes)]);
      const got = patternsOf(new (patterns.constructor)(out.buffer, 0, n));
      assert.deepEqual(Array.from(got, BigInt), Array.from(patterns, (p) => signOf(type, BigInt(p), nan)), `${dml} ${nan}`);
    }
  }
});

test("strided: a transposed input into a padded output leaves the gaps as they were", () => {
  const device = new Device();
  const input = tensorDesc("FLOAT32", [2, 3], [1, 2]); // column-major 2x3
  const output = tensorDesc("FLOAT32", [2, 3], [4, 1]); // rows padded to 4
  const op = device.createOperator(OperatorDesc.sign(input, output)).compile();
  const x = new Float32Array([-1, 5, 0, -0, NaN, -7]); // x[i][j] at i + 2j
  const out = new Float32Array(8).fill(42);
  op.execute([x, out], [bind(0, 0, input.totalTensorSizeInBytes)], [bind(1, 0, output.totalTensorSizeInBytes)]);
  assert.deepEqual(Array.from(out), [-1, 0, 0, 42, 1, 0, -1, 42]);
});

test("bindings: offsets, buffer kinds, the binding rules in order", () => {
  const device = new Device();
  const t = tensorDesc("INT16", [4]); // 8 bytes
  const op = device.createOperator(OperatorDesc.sign(t, t)).compile();
  const memory = new ArrayBuffer(64);
  new Int16Array(memory, 16, 4).set([-3, 0, 3, -32768]);
  const out = new Uint8Array(48).fill(0xaa);
  op.execute([memory, new DataView(out.buffer)], [bind(0, 16, 8)], [bind(1, 32, 16)]);
  assert.deepEqual(Array.from(new Int16Array(out.buffer, 32, 4)), [-1, 0, 1, -1]);
  assert.ok(out.subarray(0, 32).every((b) => b === 0xaa) && out.subarray(40).every((b) => b === 0xaa), "bytes outside the elements are untouched");
  const v = new Int16Array(8);
  refused(() => op.execute([v, v], [], [bind(1, 0, 8)]), ValidationError, "BindingCount", "ELEMENT_WISE_SIGN: 0 input binding(s) given (exactly 1 required)");
  refused(() => op.execute([v, v], [bind(0, 0, 8)], [bind(1, 0, 8), bind(1, 0, 8)]), ValidationError, "BindingCount", "ELEMENT_WISE_SIGN: 2 output binding(s) given (exactly 1 required)");
  refused(() => op.execute([v], [bind(0, 0, 8)], [bind(2, 0, 8)]), ValidationError, "BindingBufferIndex", "ELEMENT_WISE_SIGN: OutputTensor binding refers to buffer 2, but only 1 buffer(s) were given");
  refused(() => op.execute([v, v], [bind(0, 4, 8)], [bind(1, 0, 8)]), ValidationError, "BindingOffsetAlignment",
    "ELEMENT_WISE_SIGN: InputTensor binding Offset 4 is not a multiple of 16 (16 bytes, or the tensor's GuaranteedBaseOffsetAlignment when given)");
  refused(() => op.execute([v, v], [bind(0, 0, 4)], [bind(1, 0, 8)]), ValidationError, "BindingTooSmall", "ELEMENT_WISE_SIGN: InputTensor binding SizeInBytes 4 is smaller than the tensor's TotalTensorSizeInBytes 8");
  refused(() => op.execute([v, v], [bind(0, 0, 8)], [bind(1, 16, 8)]), ValidationError, "BindingOutOfRange", "ELEMENT_WISE_SIGN: OutputTensor binding range Offset 16 + SizeInBytes 8 lies outside its buffer of 16 bytes");
  refused(() => op.execute([v, v], [bind(0, 0, 8)], [bind(1, 0n, 1n << 64n)]), ArgumentError, "outputs[0].sizeInBytes", /non-negative integer/);
  refused(() => op.execute([v, v], [bind(0, 0, 8)], [{ buffer: 1, size: 8 }]), ArgumentError, "outputs[0]", /outputs\[0\] has an unknown field "size" \(accepted: buffer, offset, sizeInBytes\)/);
  refused(() => op.execute([v, [1, 2]], [bind(0, 0, 8)], [bind(1, 0, 8)]), ArgumentError, "buffers[1]", /buffers\[1\] must be an ArrayBuffer, a typed array or a DataView; got an Array/);
  refused(() => op.execute(v, [bind(0, 0, 8)], [bind(1, 0, 8)]), ArgumentError, "buffers", /buffers must be an array/);
  op.execute([v, v], [bind(0, 0, 8)], [bind(1, 0, 18446744073709551615n - 18446744073709551607n)]);
});

test("in place and hazards: one buffer, or two views of one ArrayBuffer", () => {
  const device = new Device();
  const t = tensorDesc("FLOAT32", [4]);
  const sign = device.createOperator(OperatorDesc.sign(t, t)).compile();
  const a = new Float32Array([-2, 2, NaN, -0, 9, 9, 9, 9, 9, 9, 9, 9]);
  sign.execute([a], [bind(0, 16, 16)], [bind(0, 16, 16)]);
  assert.deepEqual(Array.from(a.subarray(0, 8)), [-2, 2, NaN, -0, 1, 1, 1, 1]);
  sign.execute([a, new Uint8Array(a.buffer)], [bind(0, 0, 16)], [bind(1, 0, 16)]);
  assert.deepEqual(Array.from(a.subarray(0, 4)), [-1, 1, 0, 0], "two views of one memory, identical ranges: in place");
  a.set([-5, 5, 0, -0]);
  refused(() => sign.execute([a], [bind(0, 0, 16)], [bind(0, 0, 32)]), ValidationError, "Hazard",
    /^ELEMENT_WISE_SIGN: InputTensor range \[0, \+16\) and OutputTensor range \[0, \+32\) in buffer 0 partially overlap/);
  sign.execute([a], [bind(0, 0, 16)], [bind(0, 16, 32)]);
  assert.deepEqual(Array.from(a.subarray(4, 8)), [-1, 1, 0, 0], "disjoint ranges of one buffer");
  refused(() => sign.execute([a, new Float32Array(a.buffer, 4)], [bind(0, 16, 16)], [bind(1, 16, 16)]), ValidationError, "Hazard",
    /^ELEMENT_WISE_SIGN: InputTensor range \[16, \+16\) and OutputTensor range \[20, \+16\) in buffer 0 partially overlap/);
  refused(() => sign.execute([a, a], [bind(0, 0, 16)], [bind(1, 0, 32)]), ValidationError, "Hazard", /partially overlap/);
  const inf = device.createOperator(OperatorDesc.isInfinity(t, tensorDesc("UINT8", [4]))).compile();
  refused(() => inf.execute([a], [bind(0, 0, 16)], [bind(0, 0, 16)]), ValidationError, "Hazard", /are identical, but this operator does not support in-place execution/);
  const bytes = new Float32Array([Infinity, 1, -Infinity, NaN, 0, 0, 0, 0]);
  inf.execute([bytes, bytes], [bind(0, 0, 16)], [bind(1, 16, 4)]);
  assert.deepEqual(Array.from(new Uint8Array(bytes.buffer, 16, 4)), [1, 0, 1, 0], "disjoint ranges of one buffer");
});

test("executeSlices and executeInPlace", () => {
  const device = new Device({ extensions: true });
  const t = tensorDesc("FLOAT64", [3]);
  const sign = device.createOperator(OperatorDesc.sign(t, t)).withNanPolicy("propagate").compile();
  const x = new Float64Array([-4, NaN, 0]);
  const out = new Float64Array(3);
  sign.executeSlices(x, out);
  assert.deepEqual(Array.from(out), [-1, NaN, 0]);
  sign.executeInPlace(x);
  assert.deepEqual(Array.from(x), [-1, NaN, 0]);
  refused(() => sign.executeSlices(new Float64Array(2), out), ValidationError, "BytesTooShort", "ELEMENT_WISE_SIGN: InputTensor data has 16 bytes, but its sizes, strides and data type need 24");
  const inf = device.createOperator(OperatorDesc.isInfinity(t, tensorDesc("UINT8", [3]))).compile();
  refused(() => inf.executeInPlace(x), ValidationError, "InPlaceUnsupported", "ELEMENT_WISE_IS_INFINITY: in-place execution is not possible here (the operator does not support in-place execution)");
  const flags = new Uint8Array(3);
  inf.executeSlices(new Float64Array([-Infinity, Infinity, NaN]), flags);
  assert.deepEqual(Array.from(flags), [1, 1, 0]);
});

test("executeSlices and executeInPlace name a bad argument", () => {
  const t = tensorDesc("FLOAT32", [2]);
  const op = new Device().createOperator(OperatorDesc.sign(t, t)).compile();
  refused(() => op.executeSlices(new Float32Array(2), [0, 0]), ArgumentError, "output", /^CompiledOperator.executeSlices: output must be an ArrayBuffer, a typed array or a DataView; got an Array/);
  refused(() => op.executeInPlace(null), ArgumentError, "data", /^CompiledOperator.executeInPlace: data must be an ArrayBuffer/);
  const gone = new Float32Array(2);
  structuredClone(gone.buffer, { transfer: [gone.buffer] });
  refused(() => op.executeInPlace(gone), ArgumentError, "data", /data's memory is detached/);
});
