// A one-node ONNX model (Sign or IsInf on a 1-D tensor of any length), encoded as protobuf
// bytes here so that no model file is committed and no `onnx` package is needed.

/** ONNX TensorProto.DataType numbers of the element types the bench uses. */
export const ONNX_TYPES = { float32: 1, uint8: 2, int8: 3, bool: 9, float64: 11 };

function varint(value) {
  const bytes = [];
  let v = BigInt(value);
  if (v < 0n) throw new RangeError(`onnx-model: negative varint ${value}`);
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) b |= 0x80;
    bytes.push(b);
  } while (v !== 0n);
  return bytes;
}

function intField(field, value) {
  return [...varint((field << 3) | 0), ...varint(value)];
}

function bytesField(field, bytes) {
  return [...varint((field << 3) | 2), ...varint(bytes.length), ...bytes];
}

function stringField(field, text) {
  return bytesField(field, [...new TextEncoder().encode(text)]);
}

// ValueInfoProto { name = 1; type = 2 } / TypeProto { tensor_type = 1 } /
// TypeProto.Tensor { elem_type = 1; shape = 2 } / TensorShapeProto { dim = 1 } /
// Dimension { dim_param = 2 }: a 1-D tensor of symbolic length "n".
function valueInfo(name, elemType) {
  const dim = stringField(2, "n");
  const shape = bytesField(1, dim);
  const tensor = [...intField(1, elemType), ...bytesField(2, shape)];
  return [...stringField(1, name), ...bytesField(2, bytesField(1, tensor))];
}

/**
 * The bytes of a ModelProto (IR version 9, default-domain opset 20) whose graph is one
 * node: `op` ("Sign" or "IsInf", IsInf with its default attributes: both infinities) from
 * input "x" of element type `dtype` (a key of ONNX_TYPES) to output "y", both 1-D of
 * symbolic length. Throws a RangeError for another op or type.
 */
export function oneNodeModel(op, dtype) {
  if (op !== "Sign" && op !== "IsInf") throw new RangeError(`onnx-model: op must be Sign or IsInf; got ${op}`);
  const elemType = ONNX_TYPES[dtype];
  if (elemType === undefined) throw new RangeError(`onnx-model: no ONNX type for ${dtype}`);
  const outType = op === "Sign" ? elemType : ONNX_TYPES.bool;
  // NodeProto { input = 1; output = 2; name = 3; op_type = 4 }
  const node = [...stringField(1, "x"), ...stringField(2, "y"), ...stringField(3, "n0"), ...stringField(4, op)];
  // GraphProto { node = 1; name = 2; input = 11; output = 12 }
  const graph = [
    ...bytesField(1, node),
    ...stringField(2, "g"),
    ...bytesField(11, valueInfo("x", elemType)),
    ...bytesField(12, valueInfo("y", outType)),
  ];
  // OperatorSetIdProto { domain = 1; version = 2 }
  const opset = [...stringField(1, ""), ...intField(2, 20)];
  // ModelProto { ir_version = 1; producer_name = 2; graph = 7; opset_import = 8 }
  return new Uint8Array([
    ...intField(1, 9),
    ...stringField(2, "ewise-bench"),
    ...bytesField(7, graph),
    ...bytesField(8, opset),
  ]);
}
