"""The benchmarks name memwarden's modules as they are: `make bench` is run rarely, and a module
moved or removed would fail it only then."""

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"

# In an interpreter of its own: bench/harness.py and tests/e2e/harness.py share a module name.
CHECK = """
import importlib, importlib.util, pathlib, sys
sys.path.insert(0, ".")
for path in sorted(pathlib.Path(".").glob("*.py")):
    importlib.import_module(path.stem)
from bench_checkpoint import FIRST_RUN_IMPORTS
names = [name.strip() for name in FIRST_RUN_IMPORTS.split(",")]
missing = [name for name in names if importlib.util.find_spec(name) is None]
sys.exit(f"not modules of memwarden: {missing}" if missing else 0)
"""


def test_bench_modules_import_and_name_modules_that_exist():
    result = subprocess.run(
        [sys.executable, "-c", CHECK], cwd=BENCH, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
