"""`systemd-analyze verify` accepts the units `memwarden install systemd` renders on this machine.

Needs the `systemd-analyze` command (Debian/Ubuntu package `systemd`); skipped without it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from support.cli import run_cli
from support.deployments import make_file_era_state

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


@pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed")
def test_rendered_systemd_hardening_block_uncommented_passes_verify(capsys, tmp_path):
    state = make_file_era_state(tmp_path)  # its workspace has no memory/ yet: a `-` path
    result = run_cli(
        capsys, "--state-dir", state.state_dir, "install", "systemd", "--dry-run", "--json"
    )
    assert result.exit_code == 0, result.stderr
    units = []
    for entry in result.json()["files"]:
        if entry["role"] == "unit":
            text = entry["content"]
            if entry["path"].endswith(".service"):  # the hardening block: `# Setting=value`
                text = re.sub(r"^# (?=[A-Z][A-Za-z]+=\S)", "", text, flags=re.MULTILINE)
            path = tmp_path / Path(entry["path"]).name
            path.write_text(text)
            units.append(str(path))
    texts = [Path(unit).read_text() for unit in units]
    assert any("\nProtectHome=read-only\n" in text for text in texts)
    assert any(f"\nReadWritePaths=-{state.workspace / 'memory'}\n" in text for text in texts)
    completed = subprocess.run(
        [ANALYZE, "verify", *units], capture_output=True, text=True, timeout=60, check=False
    )
    ours = [line for line in completed.stderr.splitlines() if "memwarden" in line]
    assert completed.returncode == 0, completed.stderr
    assert ours == []
