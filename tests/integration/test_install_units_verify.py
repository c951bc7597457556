"""`systemd-analyze verify` accepts the units `memwarden install systemd` renders on this machine.

Needs the `systemd-analyze` command (Debian/Ubuntu package `systemd`); skipped without it.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from support.cli import run_cli

ANALYZE = shutil.which("systemd-analyze")


@pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed")
def test_rendered_systemd_units_pass_systemd_analyze_verify(capsys, tmp_path):
    result = run_cli(capsys, "install", "systemd", "--dry-run", "--json")
    assert result.exit_code == 0, result.stderr
    units = []
    for entry in result.json()["files"]:
        if entry["role"] == "unit":
            path = tmp_path / Path(entry["path"]).name
            path.write_text(entry["content"])
            units.append(str(path))
    assert len(units) == 10
    completed = subprocess.run(
        [ANALYZE, "verify", *units], capture_output=True, text=True, timeout=60, check=False
    )
    ours = [line for line in completed.stderr.splitlines() if "memwarden" in line]
    assert completed.returncode == 0, completed.stderr
    assert ours == []
