"""memwarden's modules import only what a wheel install brings: the dev tools (json5, pytest,
build, prometheus_client…) are not there on an operator's machine."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEV_ONLY = ("json5", "pytest", "build", "prometheus_client", "ruff")


def test_dev_only_packages_are_not_runtime_dependencies():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = " ".join(project["dependencies"]).lower()
    for name in DEV_ONLY:
        assert f'"{name}' not in runtime and not runtime.startswith(name)


def test_every_module_imports_without_the_dev_only_packages():
    blocked = ", ".join(repr(name) for name in DEV_ONLY)
    program = f"""
import importlib, pkgutil, sys
for name in ({blocked},):
    sys.modules[name] = None  # an import of it raises ImportError
import memwarden
failed = []
for module in pkgutil.walk_packages(memwarden.__path__, "memwarden."):
    if module.name == "memwarden.__main__":  # runs the command line
        continue
    try:
        importlib.import_module(module.name)
    except ImportError as error:
        failed.append(f"{{module.name}}: {{error}}")
print("\\n".join(failed))
"""
    completed = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=True
    )
    assert completed.stdout.strip() == ""
