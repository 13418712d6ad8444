// SIGN and IS_INFINITY in plain JavaScript (the contract of docs/SEMANTICS.md, on bit
// patterns), sample inputs, and how the page shows and counts values. Typed arrays are
// in the host's byte order, little-endian on every platform browsers run on.

import { DTYPES } from "./npy.js";

/** The element types SIGN takes. */
export const SIGN_DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "bfloat16", "float32", "float64"];

/** The element types IS_INFINITY takes. */
export const IS_INFINITY_DTYPES = ["float16", "bfloat16", "float32", "float64"];

/** The infinity modes of IS_INFINITY. */
export const MODES = ["either", "positive", "negative", "neither"];

/** The NaN policies of SIGN. */
export const NAN_POLICIES = ["zero", "propagate"];

function words(x) {
  return new Uint32Array(x.buffer, x.byteOffset, x.byteLength / 4);
}

function halves(x) {
  return new Uint16Array(x.buffer, x.byteOffset, x.byteLength / 2);
}

const HALF_FORMATS = { float16: { one: 0x3c00, inf: 0x7c00 }, bfloat16: { one: 0x3f80, inf: 0x7f80 } };

/**
 * SIGN of `x` (a typed array of DTYPES[dtype].array) into `out` (the same type and
 * length; may be `x`), bit for bit as ewise: -1, +0 or +1 of the type, +0 for -0, NaN
 * as `nan` says ("zero": +0; "propagate": the NaN's own bits). Returns `out`.
 */
export function jsSign(x, dtype, nan, out) {
  const n = x.length;
  const keep = nan === "propagate";
  if (!NAN_POLICIES.includes(nan)) throw new RangeError(`jsSign: nan must be "zero" or "propagate"; got ${nan}`);
  switch (dtype) {
    case "float32": {
      const a = words(x);
      const o = words(out);
      for (let i = 0; i < n; i++) {
        const b = a[i];
        const m = b & 0x7fffffff;
        o[i] = m === 0 ? 0 : m > 0x7f800000 ? (keep ? b : 0) : (b & 0x80000000) | 0x3f800000;
      }
      return out;
    }
    case "float64": {
      const a = words(x);
      const o = words(out);
      for (let i = 0; i < 2 * n; i += 2) {
        const lo = a[i];
        const hi = a[i + 1];
        const m = hi & 0x7fffffff;
        if (m === 0 && lo === 0) {
          o[i] = 0;
          o[i + 1] = 0;
        } else if (m > 0x7ff00000 || (m === 0x7ff00000 && lo !== 0)) {
          o[i] = keep ? lo : 0;
          o[i + 1] = keep ? hi : 0;
        } else {
          o[i] = 0;
          o[i + 1] = (hi & 0x80000000) | 0x3ff00000;
        }
      }
      return out;
    }
    case "float16":
    case "bfloat16": {
      const { one, inf } = HALF_FORMATS[dtype];
      const a = halves(x);
      const o = halves(out);
      for (let i = 0; i < n; i++) {
        const b = a[i];
        const m = b & 0x7fff;
        o[i] = m === 0 ? 0 : m > inf ? (keep ? b : 0) : (b & 0x8000) | one;
      }
      return out;
    }
    case "int64":
    case "uint64": {
      const a = words(x);
      const o = words(out);
      const signed = dtype === "int64";
      for (let i = 0; i < 2 * n; i += 2) {
        const lo = a[i];
        const hi = a[i + 1];
        const negative = signed && hi >= 0x80000000;
        o[i] = negative ? 0xffffffff : lo !== 0 || hi !== 0 ? 1 : 0;
        o[i + 1] = negative ? 0xffffffff : 0;
      }
      return out;
    }
    case "int8":
    case "int16":
    case "int32":
    case "uint8":
    case "uint16":
    case "uint32":
      for (let i = 0; i < n; i++) {
        const v = x[i];
        out[i] = v > 0 ? 1 : v < 0 ? -1 : 0;
      }
      return out;
    default:
      throw new RangeError(`jsSign: SIGN does not take ${dtype} (it takes ${SIGN_DTYPES.join(", ")})`);
  }
}

/**
 * IS_INFINITY of `x` (float16, bfloat16, float32 or float64) into `out`, a Uint8Array
 * of its length: 1 where the element is an infinity `mode` selects ("either",
 * "positive", "negative" or "neither"), else 0. Returns `out`.
 */
export function jsIsInfinity(x, dtype, mode, out) {
  if (!MODES.includes(mode)) throw new RangeError(`jsIsInfinity: mode must be ${MODES.join(", ")}; got ${mode}`);
  const pos = mode === "either" || mode === "positive";
  const neg = mode === "either" || mode === "negative";
  const n = x.length;
  switch (dtype) {
    case "float32": {
      const a = words(x);
      for (let i = 0; i < n; i++) out[i] = (pos && a[i] === 0x7f800000) || (neg && a[i] === 0xff800000) ? 1 : 0;
      return out;
    }
    case "float64": {
      const a = words(x);
      for (let i = 0; i < n; i++) {
        const hi = a[2 * i + 1];
        out[i] = a[2 * i] === 0 && ((pos && hi === 0x7ff00000) || (neg && hi === 0xfff00000)) ? 1 : 0;
      }
      return out;
    }
    case "float16":
    case "bfloat16": {
      const inf = HALF_FORMATS[dtype].inf;
      const a = halves(x);
      for (let i = 0; i < n; i++) out[i] = (pos && a[i] === inf) || (neg && a[i] === (inf | 0x8000)) ? 1 : 0;
      return out;
    }
    default:
      throw new RangeError(`jsIsInfinity: IS_INFINITY does not take ${dtype} (it takes ${IS_INFINITY_DTYPES.join(", ")})`);
  }
}

// --------------------------------------------------------------------------- samples

/** A deterministic generator of 32-bit words (xorshift32). */
function words32(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>>= 0);
  };
}

const SPECIAL_BITS = {
  float32: [
    0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000,
    0x7f800001, 0x7fc0beef, 0xffa5a5a5, 0x00000001, 0x80000001, 0x007fffff, 0x807fffff, 0x00800000,
    0x7f7fffff, 0xff7fffff, 0x3dcccccd, 0x40490fdb, 0xc0490fdb, 0x7149f2ca, 0xf149f2ca, 0x0da24260,
  ],
  float16: [
    0x0000, 0x8000, 0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01, 0x7e5a, 0xfd23, 0x0001,
    0x8001, 0x03ff, 0x83ff, 0x0400, 0x7bff, 0xfbff, 0x2e66, 0x4248, 0xc248, 0x7800, 0xf800, 0x1400,
  ],
  bfloat16: [
    0x0000, 0x8000, 0x3f80, 0xbf80, 0x7f80, 0xff80, 0x7fc0, 0xffc0, 0x7f81, 0x7fab, 0xffd5, 0x0001,
    0x8001, 0x007f, 0x807f, 0x0080, 0x7f7f, 0xff7f, 0x3dcd, 0x4049, 0xc049, 0x7149, 0xf149, 0x0da2,
  ],
};
const SPECIAL_F64 = [
  [0x00000000, 0x00000000], [0x80000000, 0x00000000], [0x3ff00000, 0], [0xbff00000, 0], [0x7ff00000, 0],
  [0xfff00000, 0], [0x7ff80000, 0], [0xfff80000, 0], [0x7ff00000, 1], [0x7ff8dead, 0xbeef0001],
  [0xfff4a5a5, 0xa5a5a5a5], [0, 1], [0x80000000, 1], [0x000fffff, 0xffffffff], [0x800fffff, 0xffffffff],
  [0x00100000, 0], [0x7fefffff, 0xffffffff], [0xffefffff, 0xffffffff], [0x3fb99999, 0x9999999a],
  [0x400921fb, 0x54442d18], [0xc00921fb, 0x54442d18], [0x7e37e43c, 0x8800759c], [0xfe37e43c, 0x8800759c],
  [0x01a56e1f, 0xc2f8f359],
];

function integerSpecials(dtype) {
  const bits = DTYPES[dtype].size * 8;
  if (dtype.startsWith("u")) {
    const max = 2n ** BigInt(bits) - 1n;
    return [0n, 1n, max, max - 1n, 2n, 3n, 100n, 2n ** BigInt(bits - 1), 2n ** BigInt(bits - 1) - 1n, 0n, 1n, 0n];
  }
  const max = 2n ** BigInt(bits - 1) - 1n;
  return [0n, 1n, -1n, -max - 1n, max, -max, 2n, -2n, 100n, -100n, 0n, -1n];
}

/**
 * A sample input of `count` elements of `dtype` (one of SIGN_DTYPES): first the values
 * that matter (±0, ±1, ±inf, NaNs of both signs with payloads, quiet and signalling,
 * subnormals, the largest values, the most negative integer ...), then deterministic
 * pseudo-random bit patterns. A typed array of DTYPES[dtype].array.
 */
export function sampleArray(dtype, count) {
  const t = DTYPES[dtype];
  if (t === undefined || !SIGN_DTYPES.includes(dtype)) throw new RangeError(`sampleArray: unknown dtype ${dtype}`);
  const x = randomArray(dtype, count, 0x5eed + t.size);
  if (dtype === "float64") {
    const w = words(x);
    SPECIAL_F64.slice(0, count).forEach(([hi, lo], i) => {
      w[2 * i] = lo;
      w[2 * i + 1] = hi;
    });
  } else if (SPECIAL_BITS[dtype]) {
    const view = t.size === 4 ? words(x) : halves(x);
    view.set(SPECIAL_BITS[dtype].slice(0, count));
  } else {
    const specials = integerSpecials(dtype).slice(0, count);
    specials.forEach((v, i) => {
      x[i] = t.size === 8 ? v : Number(v);
    });
  }
  return x;
}

/** `count` pseudo-random bit patterns of `dtype` from `seed`, as DTYPES[dtype].array. */
export function randomArray(dtype, count, seed = 1) {
  const t = DTYPES[dtype];
  const x = new t.array(count);
  const next = words32(seed);
  const w = new Uint32Array(x.buffer, 0, Math.floor(x.byteLength / 4));
  for (let i = 0; i < w.length; i++) w[i] = next();
  const tail = new Uint8Array(x.buffer, w.byteLength);
  for (let i = 0; i < tail.length; i++) tail[i] = next() & 0xff;
  return x;
}

// -------------------------------------------------------------------------- showing

const F32 = new Float32Array(1);
const F32_BITS = new Uint32Array(F32.buffer);

/** The number a float16 bit pattern stands for. */
export function float16Value(h) {
  const sign = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return sign * m * 2 ** -24;
  if (e === 31) return m === 0 ? sign * Infinity : NaN;
  return sign * (1 + m / 1024) * 2 ** (e - 15);
}

/** The number a bfloat16 bit pattern stands for. */
export function bfloat16Value(h) {
  F32_BITS[0] = h << 16;
  return F32[0];
}

function roundHalfEven(y) {
  const f = Math.floor(y);
  const d = y - f;
  return d > 0.5 || (d === 0.5 && f % 2 !== 0) ? f + 1 : f;
}

/** The bits of the nearest binary float with `e` exponent and `m` mantissa bits to a
 * finite non-NaN `x` (ties to even); used to find the shortest decimal that reads back. */
function nearestBits(x, e, m) {
  const bias = 2 ** (e - 1) - 1;
  const signBit = x < 0 || Object.is(x, -0) ? 2 ** (e + m) : 0;
  const a = Math.abs(x);
  const minNormal = 2 ** (1 - bias);
  if (a < minNormal) return signBit + roundHalfEven(a / 2 ** (1 - bias - m));
  let exp = Math.floor(Math.log2(a));
  if (2 ** exp > a) exp--;
  if (2 ** (exp + 1) <= a) exp++;
  if (exp > bias) return signBit + (2 ** e - 1) * 2 ** m;
  const bits = (exp + bias) * 2 ** m + roundHalfEven((a / 2 ** exp - 1) * 2 ** m);
  return signBit + Math.min(bits, (2 ** e - 1) * 2 ** m);
}

function shortest(v, digits, readsBack) {
  if (Number.isNaN(v)) return "NaN";
  if (v === Infinity) return "inf";
  if (v === -Infinity) return "-inf";
  if (Object.is(v, -0)) return "-0";
  for (let p = 1; p < digits; p++) {
    const s = String(Number(v.toPrecision(p)));
    if (readsBack(Number(s))) return s;
  }
  return String(Number(v.toPrecision(digits)));
}

/**
 * Element `i` of `x` (of `dtype`) as the page shows it: integers in decimal, floats as
 * the shortest decimal that reads back to the same value ("-0", "inf", "-inf", "NaN").
 */
export function formatValue(x, i, dtype) {
  switch (dtype) {
    case "float64":
      return shortest(x[i], 17, () => true);
    case "float32": {
      const v = x[i];
      return shortest(v, 9, (r) => Math.fround(r) === v);
    }
    case "float16": {
      const h = halves(x)[i];
      return shortest(float16Value(h), 5, (r) => nearestBits(r, 5, 10) === h);
    }
    case "bfloat16": {
      const h = halves(x)[i];
      return shortest(bfloat16Value(h), 4, (r) => nearestBits(r, 8, 7) === h);
    }
    case "bool":
      return x[i] ? "True" : "False";
    default:
      return String(x[i]);
  }
}

/** Element `i` of `x`'s bit pattern in hexadecimal, as many digits as its bytes hold
 * ("0x7fc00001"). */
export function formatBits(x, i, dtype) {
  const size = DTYPES[dtype].size;
  const bytes = new Uint8Array(x.buffer, x.byteOffset + i * size, size);
  let s = "";
  for (let j = size - 1; j >= 0; j--) s += bytes[j].toString(16).padStart(2, "0");
  return `0x${s}`;
}

/**
 * How many outputs of SIGN (`out` of `dtype`) are -1, 0 and +1, and how many are
 * neither (NaNs passed through under "propagate"): `{ "-1", "0", "+1", "NaN" }`.
 */
export function countSign(out, dtype) {
  const c = { "-1": 0, 0: 0, "+1": 0, NaN: 0 };
  const n = out.length;
  const size = DTYPES[dtype].size;
  if (size === 8) {
    const w = words(out);
    const one = dtype === "float64" ? 0x3ff00000 : 0;
    for (let i = 0; i < 2 * n; i += 2) {
      const lo = w[i];
      const hi = w[i + 1];
      if (lo === 0 && hi === 0) c[0]++;
      else if (dtype === "float64" ? lo === 0 && hi === one : lo === 1 && hi === 0) c["+1"]++;
      else if (dtype === "float64" ? lo === 0 && hi === (one | 0x80000000) >>> 0 : lo === 0xffffffff && hi === 0xffffffff) c["-1"]++;
      else c.NaN++;
    }
    return c;
  }
  const view = size === 4 ? words(out) : size === 2 ? halves(out) : new Uint8Array(out.buffer, out.byteOffset, n);
  const plus = { float32: 0x3f800000, float16: 0x3c00, bfloat16: 0x3f80 }[dtype] ?? 1;
  const minus = { float32: 0xbf800000, float16: 0xbc00, bfloat16: 0xbf80 }[dtype] ?? (size === 4 ? 0xffffffff : size === 2 ? 0xffff : 0xff);
  for (let i = 0; i < n; i++) {
    const b = view[i];
    if (b === 0) c[0]++;
    else if (b === plus) c["+1"]++;
    else if (b === minus) c["-1"]++;
    else c.NaN++;
  }
  return c;
}

/** How many outputs of IS_INFINITY (a Uint8Array) are 1 and 0: `{ "1", "0" }`. */
export function countIsInfinity(out) {
  let ones = 0;
  for (let i = 0; i < out.length; i++) ones += out[i];
  return { 1: ones, 0: out.length - ones };
}
