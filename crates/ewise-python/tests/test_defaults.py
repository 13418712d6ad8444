"""The defaults table of docs/SEMANTICS.md section 8.2, column "Python `sign`,
`is_infinity`": every row read from the document and checked against what the package
does without options. A row or a cell this file does not know fails the test, so the
table and the package cannot drift apart unseen.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np
import pytest

import ewise
from gpu_support import child
from oracle import assert_same_bits

SEMANTICS = Path(__file__).resolve().parents[3] / "docs" / "SEMANTICS.md"
COLUMN = "Python `sign`, `is_infinity`"
MARKER = "<!-- defaults-table"


def table() -> dict[str, str]:
    """The column's cells by setting, from the marker to the next blank line."""
    lines = SEMANTICS.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(MARKER))
    rows = []
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    header, body = rows[0], rows[2:]
    assert rows[1][0].startswith("---"), rows[1]
    column = header.index(COLUMN)
    return {row[0]: row[column] for row in body}


TABLE = table()


def test_the_table_has_the_python_column():
    assert len(TABLE) >= 11, TABLE


def unknown(setting: str, cell: str) -> None:
    pytest.fail(f"docs/SEMANTICS.md 8.2, {COLUMN!r}, row {setting!r}: cell {cell!r} is not one this test knows")


def accepted(call) -> bool:
    """Whether ``call()`` runs; refusals are the typed errors the package documents."""
    try:
        call()
    except (TypeError, ewise.ValidationError):
        return False
    return True


def bfloat16(values):
    import ml_dtypes

    return np.array(values, ml_dtypes.bfloat16)


def extended_inputs():
    """Calls the extended rules accept and DirectML's strict rules at 6_4 refuse."""
    return {
        "float64 sign": lambda **k: ewise.sign(np.array([-2.0, 3.0]), **k),
        "float64 is_infinity": lambda **k: ewise.is_infinity(np.array([np.inf, 1.0]), **k),
        "bfloat16 sign": lambda **k: ewise.sign(bfloat16([-2.0, 3.0]), **k),
        "bfloat16 is_infinity": lambda **k: ewise.is_infinity(bfloat16([np.inf, 1.0]), **k),
        "mode neither": lambda **k: ewise.is_infinity(np.ones(2, np.float32), mode="neither", **k),
        "0-d": lambda **k: ewise.sign(np.float32(-2.0), **k),
        "empty": lambda **k: ewise.sign(np.zeros(0, np.float32), **k),
    }


ROWS = {}


def row(setting):
    def register(check):
        ROWS[setting] = check
        return check

    return register


@row("rules")
def check_rules(cell):
    results = {name: accepted(call) for name, call in extended_inputs().items()}
    if cell == "extended":
        assert all(results.values()), results
    elif cell == "strict":
        assert not any(results.values()), results
    else:
        unknown("rules", cell)


@row("rules with a feature level")
def check_rules_with_level(cell):
    if cell != "strict":
        unknown("rules with a feature level", cell)
    for name, call in extended_inputs().items():
        with pytest.raises((TypeError, ewise.ValidationError)):
            call(feature_level="6_4")
            pytest.fail(f"{name} was accepted with feature_level='6_4'")
    with pytest.raises(ewise.ValidationError, match="InfinityMode NEITHER is not supported without extensions"):
        ewise.is_infinity(np.ones((1, 1, 1, 2), np.float32), mode="neither", feature_level="6_4")
    with pytest.raises(ewise.ValidationError, match="FLOAT64"):
        ewise.sign(np.ones(2), feature_level="6_4")
    four_d = np.array([-2.0, 0.0, 3.0], np.float32).reshape(1, 1, 1, 3)
    assert_same_bits(ewise.sign(four_d, feature_level="6_4"), np.array([-1, 0, 1], np.float32).reshape(1, 1, 1, 3))


def check_input(setting, cell, calls):
    results = [accepted(call) for call in calls]
    if cell == "accepted":
        assert all(results), (setting, results)
    elif cell == "refused":
        assert not any(results), (setting, results)
    else:
        unknown(setting, cell)


@row("float64 input")
def check_float64(cell):
    x = np.array([-2.5, -0.0, np.inf, np.nan])
    check_input("float64 input", cell, [lambda: ewise.sign(x), lambda: ewise.is_infinity(x)])
    if cell == "accepted":
        assert_same_bits(ewise.sign(x), np.array([-1.0, 0.0, 1.0, 0.0]))
        assert_same_bits(ewise.is_infinity(x), np.array([0, 0, 1, 0], np.uint8))


@row("int64 input")
def check_int64(cell):
    x = np.array([-(2**62), 0, 7], np.int64)
    check_input("int64 input", cell, [lambda: ewise.sign(x)])
    if cell == "accepted":
        assert_same_bits(ewise.sign(x), np.array([-1, 0, 1], np.int64))


@row("bfloat16 input")
def check_bfloat16(cell):
    x = bfloat16([-2.0, -0.0, np.inf, np.nan])
    check_input("bfloat16 input", cell, [lambda: ewise.sign(x), lambda: ewise.is_infinity(x)])
    if cell == "accepted":
        assert_same_bits(ewise.sign(x), bfloat16([-1.0, 0.0, 1.0, 0.0]))
        assert_same_bits(ewise.is_infinity(x), np.array([0, 0, 1, 0], np.uint8))


@row("IS_INFINITY mode `neither`")
def check_neither(cell):
    x = np.array([np.inf, -np.inf, np.nan, 1.0], np.float32)
    check_input("IS_INFINITY mode `neither`", cell, [lambda: ewise.is_infinity(x, mode="neither")])
    if cell == "accepted":
        assert_same_bits(ewise.is_infinity(x, mode="neither"), np.zeros(4, np.uint8))
        assert_same_bits(ewise.is_infinity(x, mode="neither", dtype=bool), np.zeros(4, bool))
        strided = np.repeat(x, 3)[::-3]
        assert_same_bits(ewise.is_infinity(strided, mode="neither"), np.zeros(4, np.uint8))
        assert_same_bits(ewise.is_infinity(np.float64(np.inf), mode="neither"), np.uint8(0))


@row("SIGN NaN policy")
def check_nan_policy(cell):
    nan = np.array([0x7FC0_0001, 0xFFC0_0002], np.uint32).view(np.float32)
    if cell == "zero":
        expected = np.zeros(2, np.float32)
    elif cell == "propagate":
        expected = nan
    else:
        unknown("SIGN NaN policy", cell)
    assert_same_bits(ewise.sign(nan), expected)
    assert_same_bits(ewise.sign(nan.astype(np.float64)), expected.astype(np.float64))


@row("IS_INFINITY mode")
def check_mode(cell):
    x = np.array([np.inf, -np.inf, np.nan, -0.0], np.float32)
    if cell not in ("either", "positive", "negative", "neither"):
        unknown("IS_INFINITY mode", cell)
    assert_same_bits(ewise.is_infinity(x), ewise.is_infinity(x, mode=cell))
    assert len({ewise.is_infinity(x, mode=m).tobytes() for m in ("either", "positive", "negative", "neither")}) == 4


@row("IS_INFINITY output")
def check_output(cell):
    y = ewise.is_infinity(np.array([np.inf, 1.0], np.float32))
    expected = {"uint8": np.uint8, "bool": np.bool_}.get(cell)
    if expected is None:
        unknown("IS_INFINITY output", cell)
    assert y.dtype == expected, y.dtype
    assert_same_bits(y, np.array([1, 0], expected))


@row("device")
def check_device(cell):
    if cell not in ("cpu", "gpu"):
        unknown("device", cell)
    import inspect

    for function in (ewise.sign, ewise.is_infinity):
        assert inspect.signature(function).parameters["device"].default == cell
    # With no GPU reachable, a call without device= runs and one with device="gpu" fails.
    code = """
import numpy as np, ewise
x = np.array([-1.0, np.inf], np.float32)
print(ewise.sign(x).tolist(), ewise.is_infinity(x).tolist())
try:
    ewise.sign(x, device="gpu")
except ewise.GpuError:
    print("gpu refused")
"""
    done = child(code, EWISE_GPU_ADAPTER="no adapter is called this", EWISE_GPU_BACKEND=None)
    assert done.returncode == 0, done.stderr
    expected = "[-1.0, 1.0] [0, 1]\n" + ("gpu refused\n" if cell == "cpu" else "")
    assert done.stdout == expected, done.stdout


WARNING_CHILD = """
import json, sys, warnings
import numpy as np, ewise
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        adapter = ewise.gpu_adapter()
    except ewise.GpuError as e:
        print(json.dumps({"error": str(e)}))
        sys.exit(0)
    x = np.array([-2.0, np.inf], np.float32)
    sign = ewise.sign(x, device="gpu").tolist()
    inf = ewise.is_infinity(x, device="gpu").tolist()
print(json.dumps({
    "adapter": adapter,
    "results": [sign, inf],
    "warnings": [[w.category.__module__ + "." + w.category.__qualname__, str(w.message)] for w in caught],
}))
"""

SOFTWARE = re.compile(r"llvmpipe|lavapipe|swiftshader|warp|software", re.IGNORECASE)


@row("software renderer chosen unasked")
def check_software_renderer(cell):
    found = re.fullmatch(r"warning \(`([\w.]+)`\)", cell)
    if found is None:
        unknown("software renderer chosen unasked", cell)
    category = found.group(1)
    assert category == "ewise.SoftwareRendererWarning"
    assert issubclass(ewise.SoftwareRendererWarning, RuntimeWarning)
    done = child(WARNING_CHILD, EWISE_GPU_ADAPTER=None)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    if "error" in report:
        if os.environ.get("EWISE_REQUIRE_GPU") == "1":
            pytest.fail(f"EWISE_REQUIRE_GPU=1 but no GPU adapter: {report['error']}")
        pytest.skip(f"no GPU adapter at all, so no software renderer to warn of: {report['error']}")
    assert report["results"] == [[-1.0, 1.0], [0, 1]], report
    if not SOFTWARE.search(report["adapter"]):
        assert report["warnings"] == [], report
        pytest.skip(f"a hardware adapter ({report['adapter']}): no software renderer to warn of")
    # Once per process, when the device is opened, of the class the table names.
    assert [w[0] for w in report["warnings"]] == [category], report
    message = report["warnings"][0][1]
    assert "software renderer" in message and "EWISE_GPU_ADAPTER" in message, message
    # Naming the adapter (as the message says) silences it.
    name = report["adapter"].split()[0]
    named = child(WARNING_CHILD, EWISE_GPU_ADAPTER=name)
    assert named.returncode == 0, named.stderr
    assert json.loads(named.stdout)["warnings"] == [], named.stdout


def test_the_software_renderer_warning_with_pytest_warns():
    """In a new process, ``pytest.warns`` sees the warning the first GPU call gives."""
    code = """
import numpy as np, pytest, ewise
try:
    with pytest.warns(ewise.SoftwareRendererWarning, match="software renderer"):
        ewise.sign(np.ones(2, np.float32), device="gpu")
except ewise.GpuError as e:
    print("no adapter:", e)
except pytest.fail.Exception as e:
    print("no warning:", e)
else:
    print("warned")
"""
    done = child(code, EWISE_GPU_ADAPTER=None)
    assert done.returncode == 0, done.stderr
    if done.stdout.startswith("no adapter"):
        pytest.skip(done.stdout.strip())
    if done.stdout.startswith("no warning"):
        adapter = child("import ewise; print(ewise.gpu_adapter())", EWISE_GPU_ADAPTER=None).stdout
        if not SOFTWARE.search(adapter):
            pytest.skip(f"a hardware adapter ({adapter.strip()}): nothing to warn of")
    assert done.stdout == "warned\n", done.stdout


@pytest.mark.parametrize("setting", list(TABLE))
def test_row(setting):
    if setting not in ROWS:
        pytest.fail(f"docs/SEMANTICS.md 8.2 has a row {setting!r} that this test does not know")
    ROWS[setting](TABLE[setting])


# ----------------------------------------------- options given None or a wrong type


@pytest.mark.parametrize(
    ("call", "keyword", "accepted"),
    [
        (lambda x: ewise.sign(x, nan=None), "nan=None", '"zero", "propagate"'),
        (lambda x: ewise.sign(x, nan=1), "nan=1", '"zero", "propagate"'),
        (lambda x: ewise.is_infinity(x, mode=None), "mode=None", '"either", "positive", "negative", "neither"'),
        (lambda x: ewise.sign(x, device=None), "device=None", '"cpu", "gpu"'),
        (lambda x: ewise.isinf(x, device=0), "device=0", '"cpu", "gpu"'),
        (lambda x: ewise.sign(x, feature_level=64), "feature_level=64", "or None for the extended rules"),
        (lambda x: ewise.sign(x, threads="2"), "threads='2'", "an int of at least 1, or None"),
        (lambda x: ewise.sign(x, threads=2.0), "threads=2.0", "an int of at least 1, or None"),
        (lambda x: ewise.isinf(x, detect_positive=None), "detect_positive=None", "True, False"),
        (lambda x: ewise.isinf(x, detect_negative=1), "detect_negative=1", "True, False"),
        (lambda x: ewise.onnx.run(b"", {}, nan=None), "nan=None", '"zero", "propagate"'),
    ],
)
def test_wrong_types_name_the_keyword(call, keyword, accepted):
    with pytest.raises(TypeError) as info:
        call(np.ones(2, np.float32))
    message = str(info.value)
    assert message.startswith(keyword + " is not "), message
    assert f"(accepted: {accepted}" in message or accepted in message, message


def test_none_means_not_given_where_the_signature_says_so():
    x = np.array([-2.0, np.inf], np.float32)
    assert_same_bits(ewise.sign(x, out=None, feature_level=None, threads=None), ewise.sign(x))
    assert_same_bits(ewise.is_infinity(x, dtype=None, out=None, feature_level=None), ewise.is_infinity(x))
    assert_same_bits(ewise.isinf(x, out=None, threads=None), ewise.isinf(x))
    assert_same_bits(ewise.isinf(x, detect_positive=np.bool_(False)), np.array([False, False]))
