"""Golden files of the rendered timers: systemd/ and launchd/ at the top of the repository hold
the samples a person reads, tests/golden/cron/ the crontab block; all are rendered here from the
templates in src/memwarden/templates/units/ and must match byte for byte.

After changing a template on purpose, regenerate them and review the diff:

    UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/unit/scheduling/test_units_golden.py
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memwarden.scheduling.jobs import OFFSETS, SUMMARIES, ScheduledJob
from memwarden.scheduling.units import (
    UnitSpec,
    cron_block,
    launchd_files,
    runner_file,
    systemd_files,
)

REPO = Path(__file__).resolve().parents[3]
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
INTERVALS = {"checkpoint": 20, "rotate": 30, "index": 360, "health": 5, "maintain": 1440}
JOBS = tuple(
    ScheduledJob(name, minutes, SUMMARIES[name], OFFSETS[name])
    for name, minutes in INTERVALS.items()
)


def sample_writable_paths(home: str, storage: str) -> dict[str, tuple[str, ...]]:
    """What each job writes with the default settings, one file-era agent `main`, no memory/ yet
    (`-`: a folder missing at install)."""
    own = (storage,)
    memory = f"-{home}/.openclaw/workspace/memory"
    sessions = f"{home}/.openclaw/agents/main/sessions"
    return {
        "checkpoint": (*own, memory),
        "rotate": (*own, memory),
        "index": (*own, memory),
        "health": own,
        "maintain": (*own, memory, sessions),
    }


def sample_spec(home: str) -> UnitSpec:
    """The spec the samples are rendered from: user alice with the default settings."""
    storage = f"{home}/.local/state/memwarden"
    return UnitSpec(
        jobs=JOBS,
        executable=Path(f"{home}/.local/bin/memwarden"),
        secrets_file=Path(f"{home}/.config/memwarden/secrets.env"),
        storage_dir=Path(storage),
        log_dir=Path(f"{storage}/logs"),
        environment=(
            ("MEMWARDEN_GENERAL_STORAGE_DIR", storage),
            ("PATH", f"{home}/.local/bin:/usr/local/bin:/usr/bin:/bin"),
        ),
        systemd_dir=REPO / "systemd",
        launchd_dir=REPO / "launchd",
        launchd_label="org.memwarden",
        writable_paths=sample_writable_paths(home, storage),
    )


def golden_files() -> dict[Path, str]:
    linux = sample_spec("/home/alice")
    mac = sample_spec("/Users/alice")
    files = {planned.path: planned.content for planned in systemd_files(linux)}
    for planned in launchd_files(mac):
        path = REPO / "launchd" / planned.path.name
        files[path] = planned.content
    files[REPO / "tests/golden/cron/crontab"] = cron_block(linux)
    runner = runner_file(linux, "cron")
    files[REPO / "tests/golden/cron" / runner.path.name] = runner.content
    return files


@pytest.mark.parametrize("path", sorted(golden_files()), ids=lambda path: path.name)
def test_rendered_unit_matches_golden_file(path):
    rendered = golden_files()[path]
    if UPDATE:
        path.write_text(rendered, encoding="utf-8")
    assert path.exists(), f"{path} missing: run with UPDATE_GOLDEN=1 to create it"
    assert path.read_text(encoding="utf-8") == rendered


def test_sample_folders_hold_no_stale_units():
    expected = {path.name for path in golden_files()}
    for folder in (REPO / "systemd", REPO / "launchd", REPO / "tests/golden/cron"):
        present = {path.name for path in folder.iterdir() if path.name != "README.md"}
        assert present <= expected, f"stale files in {folder}: {sorted(present - expected)}"
