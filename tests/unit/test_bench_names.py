"""The benchmarks name memwarden's modules as they are: `make bench` is run rarely, and a module
moved or removed would fail it only then."""

import importlib
import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module", autouse=True)
def bench_on_path():
    sys.path.insert(0, str(BENCH))
    yield
    sys.path.remove(str(BENCH))


@pytest.mark.parametrize("module", sorted(path.stem for path in BENCH.glob("*.py")))
def test_bench_module_imports(module):
    importlib.import_module(module)


def test_bench_first_run_imports_are_modules_of_memwarden():
    from bench_checkpoint import FIRST_RUN_IMPORTS

    names = [name.strip() for name in FIRST_RUN_IMPORTS.split(",")]
    assert [name for name in names if importlib.util.find_spec(name) is None] == []
