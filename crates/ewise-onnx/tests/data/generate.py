"""Writes the backend-style test cases under python/ with the onnx package (onnx 1.22).

Run from this directory with the virtualenv that scripts/onnx-conformance.sh creates:
    ../../../../target/onnx-venv/bin/python generate.py
The cases exercise how onnx itself encodes tensors (typed fields from
helper.make_tensor, external data from save_model) and shapes (dim_param). Expected
outputs follow docs/SEMANTICS.md: Sign gives -1/+1, +0 for both zeros, NaN unchanged
(Propagate); IsInf tests the bit pattern per format.
"""
import os
import shutil

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "python")


def sign(x):
    np.seterr(invalid="ignore")
    one = np.array(1, dtype=x.dtype)
    zero = np.array(0, dtype=x.dtype)
    if x.dtype.kind in "ui":
        return np.where(x > zero, one, np.where(x < zero, -one if x.dtype.kind == "i" else zero, zero)).astype(x.dtype)
    nan = np.isnan(x.astype(np.float64))
    return np.where(x > zero, one, np.where(x < zero, -one, np.where(nan, x, zero))).astype(x.dtype)


def isinf(x, pos=True, neg=True):
    v = x.astype(np.float64)
    return (np.isposinf(v) & pos) | (np.isneginf(v) & neg)


def tensor_type(elem, shape):
    return helper.make_tensor_value_info("", elem, shape).type


def value(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def write_case(name, model, data_sets, **save_args):
    case = os.path.join(OUT, name)
    shutil.rmtree(case, ignore_errors=True)
    os.makedirs(case)
    onnx.checker.check_model(model)
    onnx.save_model(model, os.path.join(case, "model.onnx"), **save_args)
    for k, (inputs, outputs) in enumerate(data_sets):
        d = os.path.join(case, f"test_data_set_{k}")
        os.makedirs(d)
        for i, t in enumerate(inputs):
            with open(os.path.join(d, f"input_{i}.pb"), "wb") as f:
                f.write(t.SerializeToString())
        for i, t in enumerate(outputs):
            with open(os.path.join(d, f"output_{i}.pb"), "wb") as f:
                f.write(t.SerializeToString())


def typed_initializers():
    nan_payload = np.array([0x7E01], dtype=np.uint16).view(np.float16)[0]
    inits = [
        ("f16", TensorProto.FLOAT16, np.array([[-0.0, 0.0, nan_payload], [np.inf, -6e-8, 65504]], dtype=np.float16)),
        ("bf16", TensorProto.BFLOAT16, np.array([-0.0, 1.5, -np.inf, np.nan], dtype=ml_dtypes.bfloat16)),
        ("f32", TensorProto.FLOAT, np.array([-1e-45, 0.0, -0.0, 3.0], dtype=np.float32)),
        ("f64", TensorProto.DOUBLE, np.array([-5e-324, np.nan, -0.0], dtype=np.float64)),
        ("i8", TensorProto.INT8, np.array([-128, 0, 127, -1], dtype=np.int8)),
        ("i16", TensorProto.INT16, np.array([-32768, 5], dtype=np.int16)),
        ("i32", TensorProto.INT32, np.array([-(2**31), 0, 7], dtype=np.int32)),
        ("i64", TensorProto.INT64, np.array([-(2**63), 2**63 - 1], dtype=np.int64)),
        ("u8", TensorProto.UINT8, np.array([0, 255], dtype=np.uint8)),
        ("u16", TensorProto.UINT16, np.array([65535, 0], dtype=np.uint16)),
        ("u32", TensorProto.UINT32, np.array([4294967295, 0], dtype=np.uint32)),
        ("u64", TensorProto.UINT64, np.array([2**64 - 1, 0], dtype=np.uint64)),
    ]
    initializers, nodes, outputs, expected = [], [], [], []
    for name, elem, array in inits:
        t = helper.make_tensor(f"w_{name}", elem, array.shape, array, raw=False)
        assert not t.raw_data
        initializers.append(t)
        decoded = numpy_helper.to_array(t)
        nodes.append(helper.make_node("Sign", [f"w_{name}"], [f"y_{name}"]))
        outputs.append(value(f"y_{name}", elem, list(array.shape)))
        expected.append(numpy_helper.from_array(sign(decoded), f"y_{name}"))
    f8 = np.array([0x7C, 0xFC, 0x7B, 0x7D, 0x00, 0x80], dtype=np.uint8)
    # make_tensor saturates float8 values (inf becomes the largest finite value), so
    # the second tensor fills int32_data directly to keep the infinities.
    by_helper = helper.make_tensor("w_f8", TensorProto.FLOAT8E5M2, [6], f8.view(ml_dtypes.float8_e5m2), raw=False)
    direct = TensorProto(name="w_f8b", data_type=TensorProto.FLOAT8E5M2, dims=[6], int32_data=f8.tolist())
    for t in (by_helper, direct):
        assert not t.raw_data
        initializers.append(t)
        y = "y_" + t.name[2:]
        nodes.append(helper.make_node("IsInf", [t.name], [y]))
        outputs.append(value(y, TensorProto.BOOL, [6]))
        expected.append(numpy_helper.from_array(isinf(numpy_helper.to_array(t)), y))
    x_vals = np.array([-2.5, np.nan, 0.0, -0.0], dtype=np.float32)
    x = helper.make_tensor("x", TensorProto.FLOAT, [4], x_vals, raw=False)
    assert list(x.float_data) and not x.raw_data
    nodes.append(helper.make_node("Sign", ["x"], ["y_x"]))
    outputs.append(value("y_x", TensorProto.FLOAT, ["N"]))
    expected.append(numpy_helper.from_array(sign(x_vals), "y_x"))
    graph = helper.make_graph(nodes, "typed", [value("x", TensorProto.FLOAT, ["N"])], outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    write_case("typed_initializers", model, [([x], expected)])


def external_data():
    w = np.array([[np.inf, -np.inf, 0, 1, np.nan]] * 4, dtype=np.float32)
    v = np.array([-3.0, -0.0, 2.0], dtype=np.float64)
    graph = helper.make_graph(
        [
            helper.make_node("IsInf", ["w"], ["w_inf"], detect_negative=0),
            helper.make_node("Sign", ["v"], ["v_sign"]),
            helper.make_node("Sign", ["x"], ["x_sign"]),
        ],
        "external",
        [value("x", TensorProto.FLOAT16, [2])],
        [
            value("w_inf", TensorProto.BOOL, [4, 5]),
            value("v_sign", TensorProto.DOUBLE, [3]),
            value("x_sign", TensorProto.FLOAT16, [2]),
        ],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(v, "v")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    x = np.array([-7.0, 0.25], dtype=np.float16)
    expected = [
        numpy_helper.from_array(isinf(w, True, False), "w_inf"),
        numpy_helper.from_array(sign(v), "v_sign"),
        numpy_helper.from_array(sign(x), "x_sign"),
    ]
    write_case(
        "external_data",
        model,
        [([numpy_helper.from_array(x, "x")], expected)],
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location="weights.bin",
        size_threshold=0,
    )
    loaded = onnx.load(os.path.join(OUT, "external_data", "model.onnx"), load_external_data=False)
    assert all(t.data_location == TensorProto.EXTERNAL for t in loaded.graph.initializer)


def dim_param_chain():
    graph = helper.make_graph(
        [
            helper.make_node("Sign", ["x"], ["a"], name="sign_x"),
            helper.make_node("IsInf", ["a"], ["b"], name="isinf_a"),
            helper.make_node("IsInf", ["x"], ["c"], name="isinf_x", detect_positive=0),
            helper.make_node("Sign", ["a"], ["d"], name="sign_a"),
        ],
        "chain",
        [value("x", TensorProto.DOUBLE, ["N", 3])],
        [
            value("b", TensorProto.BOOL, ["N", 3]),
            value("c", TensorProto.BOOL, ["N", 3]),
            value("d", TensorProto.DOUBLE, ["N", 3]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    sets = []
    for x in (
        np.array([[-np.inf, np.inf, np.nan], [-0.0, 5e-324, -1e308]], dtype=np.float64),
        np.zeros((0, 3), dtype=np.float64),
    ):
        a = sign(x)
        sets.append(
            (
                [numpy_helper.from_array(x, "x")],
                [
                    numpy_helper.from_array(isinf(a), "b"),
                    numpy_helper.from_array(isinf(x, False, True), "c"),
                    numpy_helper.from_array(sign(a), "d"),
                ],
            )
        )
    write_case("dim_param_chain", model, sets)


def float8_all_patterns():
    formats = [
        (TensorProto.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fn),
        (TensorProto.FLOAT8E4M3FNUZ, ml_dtypes.float8_e4m3fnuz),
        (TensorProto.FLOAT8E5M2, ml_dtypes.float8_e5m2),
        (TensorProto.FLOAT8E5M2FNUZ, ml_dtypes.float8_e5m2fnuz),
    ]
    bits = np.arange(256, dtype=np.uint8).reshape(16, 16)
    nodes, inputs, outputs, data_in, data_out = [], [], [], [], []
    for k, (elem, np_type) in enumerate(formats):
        nodes.append(helper.make_node("IsInf", [f"x{k}"], [f"y{k}"]))
        inputs.append(value(f"x{k}", elem, [16, 16]))
        outputs.append(value(f"y{k}", TensorProto.BOOL, [16, 16]))
        t = helper.make_tensor(f"x{k}", elem, [16, 16], bits.tobytes(), raw=True)
        data_in.append(t)
        data_out.append(numpy_helper.from_array(isinf(bits.view(np_type)), f"y{k}"))
    graph = helper.make_graph(nodes, "float8", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    write_case("float8_all_patterns", model, [(data_in, data_out)])


if __name__ == "__main__":
    typed_initializers()
    external_data()
    dim_param_chain()
    float8_all_patterns()
    print("onnx", onnx.__version__, "wrote", sorted(os.listdir(OUT)))
