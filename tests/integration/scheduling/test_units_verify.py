"""systemd itself judges the units `memwarden install systemd` renders on this machine:
`systemd-analyze verify` accepts them, `systemd-analyze security --offline=yes` rates each
service's exposure at most 6.5, and `systemd-analyze calendar` reads every `OnCalendar=`.

Needs the `systemd-analyze` command (Debian/Ubuntu package `systemd`); `make test` installs it
when it is missing and it can (as root with apt-get, as on CI), and these tests skip without it.
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
MAX_EXPOSURE = 6.5
EXPOSURE = re.compile(r"Overall exposure level for \S+: (?P<level>\d+(\.\d+)?)")


def rendered_units(capsys, tmp_path: Path, *arguments: str) -> list[Path]:
    """Render the systemd units (dry run) with `arguments` before the command; write them out."""
    result = run_cli(capsys, *arguments, "install", "systemd", "--dry-run", "--json")
    assert result.exit_code == 0, result.stderr
    units = []
    for entry in result.json()["files"]:
        if entry["role"] == "unit":
            path = tmp_path / Path(entry["path"]).name
            path.write_text(entry["content"])
            units.append(path)
    return units


@pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed")
def test_rendered_services_exposure_is_at_most_6_5(capsys, tmp_path):
    services = [unit for unit in rendered_units(capsys, tmp_path) if unit.suffix == ".service"]
    assert len(services) == 5
    for service in services:
        completed = subprocess.run(
            [ANALYZE, "security", "--offline=yes", "--no-pager", str(service)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        match = EXPOSURE.search(completed.stdout)
        assert match, completed.stdout + completed.stderr
        assert float(match["level"]) <= MAX_EXPOSURE, f"{service.name}:\n{completed.stdout}"


@pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed")
def test_rendered_timers_calendar_expressions_are_what_systemd_reads(capsys, tmp_path):
    timers = [unit for unit in rendered_units(capsys, tmp_path) if unit.suffix == ".timer"]
    expressions = [
        line.removeprefix("OnCalendar=")
        for timer in timers
        for line in timer.read_text().splitlines()
        if line.startswith("OnCalendar=")
    ]
    assert len(expressions) == 2  # index (6 h) and maintain (daily)
    for expression in expressions:
        completed = subprocess.run(
            [ANALYZE, "calendar", expression], capture_output=True, text=True, timeout=30
        )
        assert completed.returncode == 0, completed.stderr
        assert "Next elapse:" in completed.stdout


@pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed")
def test_rendered_systemd_units_pass_systemd_analyze_verify(capsys, tmp_path):
    units = rendered_units(capsys, tmp_path)
    assert len(units) == 10
    completed = subprocess.run(
        [ANALYZE, "verify", *map(str, units)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
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
