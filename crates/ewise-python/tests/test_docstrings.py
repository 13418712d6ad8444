"""The examples in the package's docstrings run and give what they show: the Python
modules' and the compiled module's (whose functions are the public ones), as installed.
"""

import doctest
import importlib

import pytest

import ewise
from ewise import _ewise


@pytest.mark.parametrize("module", ["ewise", "ewise.onnx", "ewise._dask", "ewise._ewise"])
def test_docstring_examples(module: str) -> None:
    mod = importlib.import_module(module)
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = [t for t in finder.find(mod, module) if t.examples]
    for t in tests:
        runner.run(t)
    assert runner.failures == 0, f"{runner.failures} docstring example(s) failed in {module}"
    if module in ("ewise", "ewise._ewise", "ewise.onnx"):
        assert tests, f"{module} should have examples"


def test_native_functions_have_examples() -> None:
    names = {t.name.rsplit(".", 1)[-1] for t in doctest.DocTestFinder().find(_ewise) if t.examples}
    assert names >= {"sign", "is_infinity", "isinf"}


def test_public_functions_are_the_native_ones() -> None:
    assert ewise.sign is _ewise.sign
    assert ewise.sign.__text_signature__ == (
        '(x, *, nan="zero", out=None, feature_level=None, threads=None, device="cpu")'
    )
