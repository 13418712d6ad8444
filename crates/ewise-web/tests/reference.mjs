// An independent reference for the tests, written from docs/SEMANTICS.md sections 1 and
// 2 (the tables of results and infinities), on bit patterns as BigInts; it calls
// nothing of the package. Also: loading the built package, and test inputs.

/** The built package's entry module: EWISE_WEB_PKG (a directory), else ../pkg. In a
 * browser (no `process`), ../pkg as served beside the tests. */
export async function loadPackage() {
  if (typeof process === "undefined") return import(new URL("../pkg/ewise.js", import.meta.url).href);
  const { pathToFileURL } = await import("node:url");
  const dir = process.env.EWISE_WEB_PKG;
  const url = dir ? pathToFileURL(`${dir.replace(/\/$/, "")}/ewise.js`) : new URL("../pkg/ewise.js", import.meta.url);
  return import(url.href);
}

/** Each element type: width in bits, kind, the typed array holding its bit patterns
 * (unsigned), the typed array of its own values, and for floats the +1, -1, +inf and
 * -inf patterns of sections 1.1 and 1.3 and the exponent and mantissa widths of 2.3. */
export const TYPES = {
  int8: { bits: 8, kind: "int", array: Int8Array },
  uint8: { bits: 8, kind: "uint", array: Uint8Array },
  int16: { bits: 16, kind: "int", array: Int16Array },
  uint16: { bits: 16, kind: "uint", array: Uint16Array },
  int32: { bits: 32, kind: "int", array: Int32Array },
  uint32: { bits: 32, kind: "uint", array: Uint32Array },
  int64: { bits: 64, kind: "int", array: BigInt64Array },
  uint64: { bits: 64, kind: "uint", array: BigUint64Array },
  float16: { bits: 16, kind: "float", array: Uint16Array, exp: 5, mant: 10, one: 0x3c00n, minusOne: 0xbc00n, inf: 0x7c00n, minusInf: 0xfc00n },
  bfloat16: { bits: 16, kind: "float", array: Uint16Array, exp: 8, mant: 7, one: 0x3f80n, minusOne: 0xbf80n, inf: 0x7f80n, minusInf: 0xff80n },
  float32: { bits: 32, kind: "float", array: Float32Array, exp: 8, mant: 23, one: 0x3f800000n, minusOne: 0xbf800000n, inf: 0x7f800000n, minusInf: 0xff800000n },
  float64: { bits: 64, kind: "float", array: Float64Array, exp: 11, mant: 52, one: 0x3ff0000000000000n, minusOne: 0xbff0000000000000n, inf: 0x7ff0000000000000n, minusInf: 0xfff0000000000000n },
};

const UNSIGNED = { 8: Uint8Array, 16: Uint16Array, 32: Uint32Array, 64: BigUint64Array };

/** The typed array of unsigned patterns for `bits`. */
export function patternArray(bits) {
  return UNSIGNED[bits];
}

function mask(bits) {
  return (1n << BigInt(bits)) - 1n;
}

/** Whether pattern `p` of float type `t` is a NaN: exponent all ones, mantissa not 0. */
function isNan(t, p) {
  const mant = p & mask(t.mant);
  const exp = (p >> BigInt(t.mant)) & mask(t.exp);
  return exp === mask(t.exp) && mant !== 0n;
}

/** SIGN of pattern `p` (a BigInt of the type's width) under `nan`, as a pattern. */
export function signOf(type, p, nan) {
  const t = TYPES[type];
  const width = BigInt(t.bits);
  const one = t.kind === "float" ? t.one : 1n;
  const minusOne = t.kind === "float" ? t.minusOne : mask(t.bits);
  const negative = (p >> (width - 1n)) & 1n;
  if (t.kind === "uint") return p === 0n ? 0n : 1n;
  if (t.kind === "int") return p === 0n ? 0n : negative ? minusOne : one;
  if (isNan(t, p)) return nan === "propagate" ? p : 0n;
  if ((p & mask(t.bits - 1)) === 0n) return 0n; // +0 and -0
  return negative ? minusOne : one;
}

/** IS_INFINITY of pattern `p` in `mode`: 1 or 0. */
export function isInfinityOf(type, p, mode) {
  const t = TYPES[type];
  const pos = p === t.inf;
  const neg = p === t.minusInf;
  switch (mode) {
    case "either": return pos || neg ? 1 : 0;
    case "positive": return pos ? 1 : 0;
    case "negative": return neg ? 1 : 0;
    case "neither": return 0;
    default: throw new Error(`no mode ${mode}`);
  }
}

/** Every pattern of an 8- or 16-bit type, in order. */
export function allPatterns(bits) {
  const a = new UNSIGNED[bits](1 << bits);
  for (let i = 0; i < a.length; i++) a[i] = i;
  return a;
}

/** A small deterministic generator (xorshift64*), giving BigInt words. */
export function random(seed = 0x9e3779b97f4a7c15n) {
  let s = seed & mask(64);
  return () => {
    s ^= s >> 12n;
    s ^= (s << 25n) & mask(64);
    s ^= s >> 27n;
    return (s * 0x2545f4914f6cdd1dn) & mask(64);
  };
}

/** `count` patterns of a 32- or 64-bit type: every special of section 2.3 (zeros,
 * smallest and largest subnormals and normals, ones, infinities, quiet and signalling
 * NaNs with payloads, the integers' extremes) of both signs, then random words, a third
 * of them with the exponent forced to all zeros or all ones. */
export function widePatterns(type, count) {
  const t = TYPES[type];
  const bits = t.bits;
  const out = new (UNSIGNED[bits])(count);
  const sign = 1n << BigInt(bits - 1);
  const specials = [0n, 1n, 2n, mask(bits), sign, sign - 1n, sign + 1n, 0x7fn, 0x80n, 0xffn, 0x7fffn, 0x8000n];
  if (t.kind === "float") {
    const m = BigInt(t.mant);
    const expAll = mask(t.exp) << m;
    for (const p of [
      0n, 1n, mask(t.mant), 1n << m, t.one, expAll - 1n, t.inf, t.inf + 1n, t.inf | (1n << (m - 1n)),
      expAll | mask(t.mant), expAll | 0x5an, (t.one - 1n), t.one + 1n,
    ]) {
      specials.push(p, p | sign);
    }
  }
  let i = 0;
  for (const p of specials) if (i < count) out[i++] = bits === 64 ? p & mask(64) : Number(p & mask(bits));
  const next = random(BigInt(bits) * 7919n + BigInt(type.length));
  while (i < count) {
    let p = next() & mask(bits);
    if (t.kind === "float" && i % 3 === 0) {
      const m = BigInt(t.mant);
      const expField = mask(t.exp) << m;
      p = (i % 2 ? p | expField : p & ~expField) & mask(bits);
    }
    out[i++] = bits === 64 ? p : Number(p);
  }
  return out;
}

/** The patterns of `values` (a typed array) as an unsigned typed array view. */
export function patternsOf(values) {
  const U = UNSIGNED[values.BYTES_PER_ELEMENT * 8];
  return new U(values.buffer, values.byteOffset, values.length);
}

/** A view of the patterns `patterns` as `type`'s own typed array. */
export function valuesOf(type, patterns) {
  const A = TYPES[type].array;
  return new A(patterns.buffer, patterns.byteOffset, patterns.length);
}

/** The first index where `got` (patterns) differs from `want(p)` over `input`
 * (patterns), with both patterns in hexadecimal, or null. */
export function firstMismatch(input, got, want) {
  for (let i = 0; i < input.length; i++) {
    const w = want(BigInt(input[i]));
    if (BigInt(got[i]) !== BigInt(w)) {
      return `element ${i}: input 0x${BigInt(input[i]).toString(16)} gave 0x${BigInt(got[i]).toString(16)}, want 0x${BigInt(w).toString(16)}`;
    }
  }
  return null;
}
