// Reading and writing numpy's .npy format (versions 1.0, 2.0 and 3.0) for the page's
// element types, in the browser or in Node. Arrays come back as typed arrays in the
// host's byte order (little-endian on every platform browsers run on); files are
// written little-endian, with the header numpy and `ewise` (the CLI) write.

/** The most data bytes a file may hold here: 1 GiB. */
export const MAX_DATA_BYTES = 2 ** 30;

/** The longest header text accepted; real headers are a few hundred bytes. */
export const MAX_HEADER_BYTES = 2 ** 20;

/** The most dimensions numpy allows. */
export const MAX_DIMENSIONS = 64;

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59];
const ALIGNMENT = 64;
const MAX_NESTING = 64;

/**
 * The element types this module reads and writes: bytes per element, numpy's kind
 * character, and the typed array that holds them (float16 and bfloat16 as Uint16Array
 * bit patterns, bool as a Uint8Array of 0 and 1).
 */
export const DTYPES = Object.freeze({
  int8: { size: 1, kind: "i", array: Int8Array },
  uint8: { size: 1, kind: "u", array: Uint8Array },
  int16: { size: 2, kind: "i", array: Int16Array },
  uint16: { size: 2, kind: "u", array: Uint16Array },
  int32: { size: 4, kind: "i", array: Int32Array },
  uint32: { size: 4, kind: "u", array: Uint32Array },
  int64: { size: 8, kind: "i", array: BigInt64Array },
  uint64: { size: 8, kind: "u", array: BigUint64Array },
  float16: { size: 2, kind: "f", array: Uint16Array },
  bfloat16: { size: 2, kind: "V", array: Uint16Array },
  float32: { size: 4, kind: "f", array: Float32Array },
  float64: { size: 8, kind: "f", array: Float64Array },
  bool: { size: 1, kind: "b", array: Uint8Array },
});

/** What `parseNpy` accepts as `descr`, in words, for messages. */
export const ACCEPTED_DESCRS =
  "|i1 |u1 <i2 <u2 <i4 <u4 <i8 <u8 <f2 <f4 <f8 |b1 (either byte order, '<' or '>'), and 2-byte void '<V2' (how ml_dtypes saves bfloat16) read as bfloat16";

/** A .npy file that cannot be read or written; `code` names what was wrong. */
export class NpyError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}
Object.defineProperty(NpyError.prototype, "name", { value: "NpyError", configurable: true, writable: true });

/** numpy's type string for `dtype`, little-endian (`|` for one-byte types). */
export function descrOf(dtype) {
  const t = DTYPES[dtype];
  if (t === undefined) {
    throw new NpyError("dtype", `unknown dtype ${JSON.stringify(dtype)} (known: ${Object.keys(DTYPES).join(", ")})`);
  }
  return `${t.size === 1 ? "|" : "<"}${t.kind}${t.size}`;
}

/** A shape as Python prints a tuple: `()`, `(5,)`, `(2, 3)`. */
export function formatShape(shape) {
  return shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(", ")})`;
}

/**
 * Throws NpyError "too-large" when a file of `fileBytes` bytes cannot hold data this
 * module would read (more than MAX_DATA_BYTES after the longest header); lets a caller
 * refuse a file before reading it.
 */
export function checkFileSize(fileBytes) {
  if (fileBytes > MAX_DATA_BYTES + MAX_HEADER_BYTES + 12) {
    throw new NpyError("too-large", `the file is ${sizeText(fileBytes)}, more than the ${sizeText(MAX_DATA_BYTES)} of data this page reads (split the array, or use the ewise CLI, which streams files of any size)`);
  }
}

/** `n` bytes in words: "1.5 MiB (1572864 bytes)". */
export function sizeText(n) {
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let unit = "";
  for (const u of units) {
    if (v < 1024) break;
    v /= 1024;
    unit = u;
  }
  return unit === "" ? `${n} bytes` : `${Number(v.toPrecision(3))} ${unit} (${n} bytes)`;
}

// --------------------------------------------------------------------------- reading

/**
 * Parses a whole .npy file. `options.as` reinterprets the elements: "bfloat16" reads
 * 2-byte items (raw `V2` ones included, which otherwise are refused) as bfloat16 bit
 * patterns. Returns `{ version, descr, dtype, byteOrder, fortranOrder, shape, count,
 * dataOffset, data }`: `version` "1.0", "2.0" or "3.0"; `descr` as the file spells it;
 * `byteOrder` "<", ">" or "|"; `shape` an array of numbers; `data` a typed array of
 * DTYPES[dtype].array in the host's byte order (a view of the file's memory when it
 * is little-endian and aligned, else a byte-swapped or aligned copy). Throws NpyError
 * for every file it cannot read, with a message that says what was wrong and what is
 * accepted.
 */
export function parseNpy(file, options = {}) {
  const bytes = asBytes(file);
  const as = options.as;
  if (as !== undefined && as !== "bfloat16") {
    throw new NpyError("option", `options.as must be "bfloat16" or undefined; got ${JSON.stringify(as)}`);
  }
  const head = parseHeaderBytes(bytes);
  const { header, version, dataOffset } = head;
  const element = elementType(header.descr, as);
  const count = header.shape.reduce((a, b) => a * b, 1n);
  const needed = count * BigInt(element.size);
  if (needed > BigInt(MAX_DATA_BYTES)) {
    throw new NpyError("too-large", `shape ${formatShape(header.shape)} of '${header.descr}' is ${sizeText(Number(needed))} of data, more than the ${sizeText(MAX_DATA_BYTES)} this page reads (split the array, or use the ewise CLI, which streams files of any size)`);
  }
  const available = BigInt(bytes.length - dataOffset);
  if (available !== needed) {
    const shape = `shape ${formatShape(header.shape)} of '${header.descr}' (${count} elements of ${element.size} bytes) needs ${needed} bytes of data after the header`;
    throw new NpyError(
      "data-length",
      available < needed
        ? `truncated data: ${shape}, but the file has only ${available}`
        : `${shape}, but the file has ${available}: ${available - needed} bytes more than the header describes`,
    );
  }
  const n = Number(count);
  return {
    version,
    descr: header.descr,
    dtype: element.dtype,
    byteOrder: element.order,
    fortranOrder: header.fortranOrder,
    shape: header.shape.map(Number),
    count: n,
    dataOffset,
    data: elementsOf(bytes, dataOffset, n, element),
  };
}

/**
 * Parses only the magic, version and header of a .npy file (the data may be absent).
 * Returns `{ version, dataOffset, header: { descr, fortranOrder, shape } }` with the
 * shape as bigints; throws NpyError as `parseNpy` does.
 */
export function parseHeaderBytes(file) {
  const bytes = asBytes(file);
  if (bytes.length === 0) throw badMagic(bytes);
  const compared = Math.min(bytes.length, MAGIC.length);
  for (let i = 0; i < compared; i++) {
    if (bytes[i] !== MAGIC[i]) throw badMagic(bytes);
  }
  if (bytes.length < 10) {
    throw new NpyError("too-short", `truncated: the file is ${bytes.length} bytes, too short for a .npy header (the magic string, version and header length take at least 10)`);
  }
  const [major, minor] = [bytes[6], bytes[7]];
  if (!((major === 1 || major === 2 || major === 3) && minor === 0)) {
    throw new NpyError("version", `unsupported .npy format version ${major}.${minor} (supported: 1.0, 2.0, 3.0)`);
  }
  const field = major === 1 ? 2 : 4;
  if (bytes.length < 8 + field) {
    throw new NpyError("too-short", `truncated: the file is ${bytes.length} bytes, too short for a version ${major}.0 header length (${8 + field} bytes)`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const declared = field === 2 ? view.getUint16(8, true) : view.getUint32(8, true);
  if (declared > MAX_HEADER_BYTES) {
    throw new NpyError("header-too-long", `the header declares ${declared} bytes of text, more than any real header needs (at most ${MAX_HEADER_BYTES} accepted)`);
  }
  const start = 8 + field;
  const available = bytes.length - start;
  if (available < declared) {
    throw new NpyError("header-truncated", `truncated header: it declares ${declared} bytes of text, but only ${available} follow`);
  }
  const raw = bytes.subarray(start, start + declared);
  let text;
  if (major === 3) {
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(raw);
    } catch {
      throw new NpyError("header-encoding", "the header text is not valid UTF-8 (format version 3.0 requires it)");
    }
  } else {
    text = latin1(raw);
  }
  return { version: `${major}.0`, dataOffset: start + declared, header: parseHeaderText(text) };
}

function badMagic(bytes) {
  const first = Array.from(bytes.subarray(0, 8), (b) => b.toString(16).padStart(2, "0")).join(" ");
  const zip = bytes[0] === 0x50 && bytes[1] === 0x4b;
  return new NpyError(
    "bad-magic",
    `not a .npy file: it does not start with the magic string \\x93NUMPY (it starts with ${first || "nothing: the file is empty"})${zip ? "; it looks like a zip archive, perhaps an .npz: extract the .npy files from it" : ""}`,
  );
}

function latin1(raw) {
  let s = "";
  for (let i = 0; i < raw.length; i += 8192) {
    s += String.fromCharCode.apply(null, raw.subarray(i, i + 8192));
  }
  return s;
}

function asBytes(file) {
  if (file instanceof Uint8Array) return file;
  if (file instanceof ArrayBuffer) return new Uint8Array(file);
  if (ArrayBuffer.isView(file)) return new Uint8Array(file.buffer, file.byteOffset, file.byteLength);
  throw new NpyError("argument", "a .npy file must be given as an ArrayBuffer or a Uint8Array");
}

/**
 * Parses the header text (the Python dict literal after the length field) into
 * `{ descr, fortranOrder, shape }`, `shape` as bigints. Throws NpyError.
 */
export function parseHeaderText(text) {
  const value = new LiteralParser(text).parseAll();
  if (value.type !== "dict") {
    throw new NpyError("not-a-dict", `the header is ${kindOf(value)}, not a dict (it must be a dict with the keys 'descr', 'fortran_order' and 'shape')`);
  }
  const found = {};
  for (const [key, v] of value.entries) {
    const name = key.type === "str" ? key.value : null;
    if (name !== "descr" && name !== "fortran_order" && name !== "shape") {
      throw new NpyError("unexpected-key", `the header has an unexpected key ${repr(key)} (only 'descr', 'fortran_order' and 'shape' are allowed)`);
    }
    if (Object.hasOwn(found, name)) {
      throw new NpyError("duplicate-key", `the header gives the key '${name}' twice`);
    }
    found[name] = v;
  }
  for (const key of ["descr", "fortran_order", "shape"]) {
    if (!Object.hasOwn(found, key)) {
      throw new NpyError("missing-key", `the header has no '${key}' key (it needs 'descr', 'fortran_order' and 'shape')`);
    }
  }
  const descr = descrText(found.descr);
  if (found.fortran_order.type !== "bool") {
    throw badValue("fortran_order", found.fortran_order, "True or False");
  }
  const shape = found.shape;
  if (shape.type !== "tuple" && shape.type !== "list") throw badValue("shape", shape, "a tuple of non-negative integers");
  if (shape.items.length > MAX_DIMENSIONS) {
    throw new NpyError("dimensions", `the shape has ${shape.items.length} dimensions (numpy allows at most ${MAX_DIMENSIONS})`);
  }
  for (const item of shape.items) {
    if (item.type !== "int" || item.value < 0n) throw badValue("shape", shape, "a tuple of non-negative integers");
  }
  const sizes = shape.items.map((i) => i.value);
  const axis = sizes.findIndex((d) => d > BigInt(Number.MAX_SAFE_INTEGER));
  if (axis >= 0) {
    throw new NpyError("dimension-too-large", `shape ${formatShape(sizes)}: dimension ${axis} has ${sizes[axis]} elements, more than this page counts exactly (2^53 - 1), whatever the other dimensions are`);
  }
  return { descr, fortranOrder: found.fortran_order.value, shape: shape.items.map((i) => i.value) };
}

function descrText(value) {
  if (value.type === "str") return value.value;
  if (value.type === "list") {
    const fields = value.items;
    const single = fields.length === 1 && fields[0].type === "tuple" && fields[0].items.length === 2 &&
      fields[0].items[0].type === "str" && fields[0].items[0].value === "" && fields[0].items[1].type === "str";
    if (single && /^[<>|=]?V\d+$/.test(fields[0].items[1].value)) return fields[0].items[1].value;
    throw new NpyError("structured", `structured dtypes (a list of fields in 'descr': ${repr(value)}) are not supported; save a plain numeric array (accepted: ${ACCEPTED_DESCRS})`);
  }
  throw badValue("descr", value, "a type string such as '<f4'");
}

function badValue(key, value, expected) {
  return new NpyError("bad-value", `the header's '${key}' is ${repr(value)}, but must be ${expected}`);
}

function unsupported(descr, reason) {
  return new NpyError("unsupported-dtype", `dtype '${descr}' (${reason}) is not supported (accepted: ${ACCEPTED_DESCRS})`);
}

/** `descr` as an element type: `{ dtype, size, order }`. */
function elementType(descr, as) {
  const m = /^([<>|=]?)([A-Za-z?])(\d*)$/.exec(descr);
  if (m === null) {
    throw new NpyError("bad-descr", `'descr' ${JSON.stringify(descr)} is not a numpy type string such as '<f4' (accepted: ${ACCEPTED_DESCRS})`);
  }
  const [, orderChar, kind, digits] = m;
  if (kind === "O") {
    throw new NpyError("object", `dtype '${descr}' is an object array (pickled Python objects), which is not numeric data and is never unpickled here; save a numeric array (accepted: ${ACCEPTED_DESCRS})`);
  }
  if (digits === "") {
    throw new NpyError("bad-descr", `'descr' ${JSON.stringify(descr)} gives no item size (numpy writes one, as in '<f4'; accepted: ${ACCEPTED_DESCRS})`);
  }
  const size = Number(digits);
  const order = orderChar === ">" ? ">" : orderChar === "|" || size === 1 ? "|" : "<";
  let dtype = null;
  if (kind === "V") {
    if (as !== "bfloat16") {
      const hint = size === 2 ? " (ml_dtypes saves bfloat16 this way): read it as bfloat16 if that is what it holds" : "; no type read here has that size";
      throw new NpyError("raw", `dtype '${descr}' holds raw ${size}-byte items, which do not say what they are${hint}`);
    }
  } else {
    const numeric = { f: { 2: "float16", 4: "float32", 8: "float64" }, i: { 1: "int8", 2: "int16", 4: "int32", 8: "int64" }, u: { 1: "uint8", 2: "uint16", 4: "uint32", 8: "uint64" }, b: { 1: "bool" } };
    const reasons = {
      c: "complex numbers", U: "Unicode strings", S: "byte strings", a: "byte strings", M: "dates", m: "time deltas",
      f: "a float size other than 2, 4 and 8 bytes", i: "an integer size other than 1, 2, 4 and 8 bytes",
      u: "an unsigned integer size other than 1, 2, 4 and 8 bytes", b: "a bool size other than 1 byte",
    };
    dtype = numeric[kind]?.[size] ?? null;
    if (dtype === null) throw unsupported(descr, reasons[kind] ?? "not a numeric type");
  }
  if (as === "bfloat16") {
    if (size !== 2) {
      throw new NpyError("as", `dtype '${descr}' has ${size}-byte items, so it cannot be read as bfloat16 (2 bytes)`);
    }
    dtype = "bfloat16";
  }
  return { dtype, size, order };
}

const HOST_LITTLE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function elementsOf(bytes, offset, n, element) {
  const Array_ = DTYPES[element.dtype].array;
  const size = element.size;
  const start = bytes.byteOffset + offset;
  const swap = size > 1 && (element.order !== ">") !== HOST_LITTLE;
  if (!swap && start % size === 0) return new Array_(bytes.buffer, start, n);
  const copy = new Uint8Array(n * size);
  const src = bytes.subarray(offset, offset + n * size);
  if (swap && size > 1) swapInto(copy, src, size);
  else copy.set(src);
  return new Array_(copy.buffer, 0, n);
}

function swapInto(dst, src, size) {
  for (let i = 0; i < src.length; i += size) {
    for (let j = 0; j < size; j++) dst[i + j] = src[i + size - 1 - j];
  }
}

// ------------------------------------------------------------ Python literal parser

/** The kind of a parsed value, as in messages: "a list", "the string 'x'". */
function kindOf(v) {
  switch (v.type) {
    case "dict": return "a dict";
    case "list": return "a list";
    case "tuple": return "a tuple";
    case "str": return `the string ${repr(v)}`;
    case "int": return `the integer ${v.value}`;
    case "bool": return v.value ? "True" : "False";
    default: return "None";
  }
}

/** A parsed value as Python's repr prints it, cut to stay on one line. */
function repr(v) {
  const s = reprFull(v);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

function reprFull(v) {
  switch (v.type) {
    case "str": return `'${v.value.replace(/\\/g, "\\\\").replace(/'/g, "\\'").replace(/\n/g, "\\n")}'`;
    case "int": return String(v.value);
    case "bool": return v.value ? "True" : "False";
    case "none": return "None";
    case "list": return `[${v.items.map(reprFull).join(", ")}]`;
    case "tuple": return v.items.length === 1 ? `(${reprFull(v.items[0])},)` : `(${v.items.map(reprFull).join(", ")})`;
    default: return `{${v.entries.map(([k, x]) => `${reprFull(k)}: ${reprFull(x)}`).join(", ")}}`;
  }
}

class LiteralParser {
  constructor(text) {
    this.text = text;
    this.pos = 0;
    this.depth = 0;
  }

  fail(expected) {
    throw new NpyError("header-syntax", `the header is not a valid Python literal: at character ${this.pos} of the header text, expected ${expected} (found ${this.pos < this.text.length ? JSON.stringify(this.text.slice(this.pos, this.pos + 12)) : "the end"})`);
  }

  skip() {
    while (this.pos < this.text.length && " \t\n\r\f\v".includes(this.text[this.pos])) this.pos++;
  }

  parseAll() {
    this.skip();
    const v = this.value();
    this.skip();
    if (this.pos !== this.text.length) this.fail("the end of the header");
    return v;
  }

  value() {
    this.skip();
    const c = this.text[this.pos];
    if (c === "{" || c === "(" || c === "[") {
      if (++this.depth > MAX_NESTING) this.fail(`at most ${MAX_NESTING} levels of nesting`);
      const v = c === "{" ? this.dict() : this.sequence(c === "(" ? ")" : "]");
      this.depth--;
      return v;
    }
    if (c === "'" || c === '"') return this.string(c);
    if (c !== undefined && /[-+0-9]/.test(c)) return this.integer();
    for (const [word, v] of [["True", { type: "bool", value: true }], ["False", { type: "bool", value: false }], ["None", { type: "none" }]]) {
      if (this.text.startsWith(word, this.pos) && !/\w/.test(this.text[this.pos + word.length] ?? "")) {
        this.pos += word.length;
        return v;
      }
    }
    return this.fail("a value (a dict, tuple, list, string, integer, True, False or None)");
  }

  dict() {
    this.pos++;
    const entries = [];
    for (;;) {
      this.skip();
      if (this.text[this.pos] === "}") {
        this.pos++;
        return { type: "dict", entries };
      }
      const key = this.value();
      this.skip();
      if (this.text[this.pos] !== ":") this.fail("':' after a dict key");
      this.pos++;
      entries.push([key, this.value()]);
      this.skip();
      if (this.text[this.pos] === ",") this.pos++;
      else if (this.text[this.pos] !== "}") this.fail("',' or '}' in a dict");
    }
  }

  sequence(close) {
    this.pos++;
    const items = [];
    let comma = false;
    for (;;) {
      this.skip();
      if (this.text[this.pos] === close) {
        this.pos++;
        const tuple = close === ")";
        if (tuple && items.length === 1 && !comma) return items[0];
        return { type: tuple ? "tuple" : "list", items };
      }
      items.push(this.value());
      this.skip();
      comma = false;
      if (this.text[this.pos] === ",") {
        this.pos++;
        comma = true;
      } else if (this.text[this.pos] !== close) {
        this.fail(`',' or '${close}'`);
      }
    }
  }

  string(quote) {
    const escapes = { n: "\n", t: "\t", r: "\r", "\\": "\\", "'": "'", '"': '"', 0: "\0" };
    let out = "";
    this.pos++;
    for (;;) {
      const c = this.text[this.pos];
      if (c === undefined || c === "\n") this.fail(`the closing ${quote} of a string`);
      this.pos++;
      if (c === quote) return { type: "str", value: out };
      if (c === "\\") {
        const e = this.text[this.pos++];
        if (e === "x" && /^[0-9a-fA-F]{2}$/.test(this.text.slice(this.pos, this.pos + 2))) {
          out += String.fromCharCode(parseInt(this.text.slice(this.pos, this.pos + 2), 16));
          this.pos += 2;
        } else if (e !== undefined && Object.hasOwn(escapes, e)) {
          out += escapes[e];
        } else {
          this.pos--;
          this.fail("a string escape (\\n, \\t, \\r, \\\\, \\', \\\", \\0 or \\xNN)");
        }
      } else {
        out += c;
      }
    }
  }

  integer() {
    const m = /^[-+]?\d+L?/.exec(this.text.slice(this.pos, this.pos + 400));
    if (m === null || /[.eEjJ_]/.test(this.text[this.pos + m[0].length] ?? "")) this.fail("an integer");
    this.pos += m[0].length;
    return { type: "int", value: BigInt(m[0].replace("L", "")) };
  }
}

// --------------------------------------------------------------------------- writing

/**
 * The header of a .npy file (magic, version, length, text padded with spaces and a
 * newline so the data starts at a multiple of 64 bytes), byte for byte as `ewise` (the
 * CLI) writes it. `descr` a numpy type string such as '<f4'; `shape` an array of
 * non-negative integers. `version` 1, 2 or 3, or omitted for 1.0 unless the text needs
 * a 4-byte length (2.0), or non-Latin-1 characters (3.0).
 */
export function npyHeader({ descr, shape, fortranOrder = false, version }) {
  if (typeof descr !== "string") throw new NpyError("argument", "npyHeader: descr must be a type string such as '<f4'");
  if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(Number(d)) && Number(d) >= 0)) {
    throw new NpyError("argument", "npyHeader: shape must be an array of non-negative integers");
  }
  if (typeof fortranOrder !== "boolean") throw new NpyError("argument", "npyHeader: fortranOrder must be true or false");
  const text = `{'descr': ${reprFull({ type: "str", value: descr })}, 'fortran_order': ${fortranOrder ? "True" : "False"}, 'shape': ${formatShape(shape.map(Number))}, }`;
  const wide = /[^\0-\xff]/.test(text);
  const major = version ?? (wide ? 3 : text.length + 1 + ALIGNMENT <= 0xffff ? 1 : 2);
  if (![1, 2, 3].includes(major)) throw new NpyError("argument", `npyHeader: version must be 1, 2 or 3; got ${version}`);
  if (wide && major !== 3) throw new NpyError("argument", "npyHeader: a header with characters beyond Latin-1 needs version 3");
  const body = major === 3 ? new TextEncoder().encode(text) : Uint8Array.from(text, (c) => c.charCodeAt(0));
  const prefix = major === 1 ? 10 : 12;
  const pad = (ALIGNMENT - ((prefix + body.length + 1) % ALIGNMENT)) % ALIGNMENT;
  const length = body.length + pad + 1;
  if (major === 1 && length > 0xffff) throw new NpyError("argument", "npyHeader: the header is too long for version 1.0");
  const out = new Uint8Array(prefix + length);
  out.set(MAGIC);
  out[6] = major;
  out[7] = 0;
  const view = new DataView(out.buffer);
  if (major === 1) view.setUint16(8, length, true);
  else view.setUint32(8, length, true);
  out.set(body, prefix);
  out.fill(0x20, prefix + body.length, out.length - 1);
  out[out.length - 1] = 0x0a;
  return out;
}

/**
 * The bytes of a .npy file holding `data`, a typed array of DTYPES[dtype].array in
 * the host's byte order with the product of `shape` elements, written little-endian
 * under descrOf(dtype). `fortranOrder` only sets the header's flag (the data is
 * written as given); `version` as in npyHeader.
 */
export function encodeNpy({ dtype, shape, data, fortranOrder = false, version }) {
  const t = DTYPES[dtype];
  if (t === undefined) throw new NpyError("dtype", `encodeNpy: unknown dtype ${JSON.stringify(dtype)}`);
  if (!(data instanceof t.array)) throw new NpyError("argument", `encodeNpy: data for ${dtype} must be a ${t.array.name}`);
  const count = shape.reduce((a, b) => a * Number(b), 1);
  if (data.length !== count) {
    throw new NpyError("argument", `encodeNpy: shape ${formatShape(shape)} has ${count} elements, data has ${data.length}`);
  }
  const header = npyHeader({ descr: descrOf(dtype), shape, fortranOrder, version });
  const out = new Uint8Array(header.length + data.byteLength);
  out.set(header);
  const body = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  if (HOST_LITTLE || t.size === 1) out.set(body, header.length);
  else swapInto(out.subarray(header.length), body, t.size);
  return out;
}
