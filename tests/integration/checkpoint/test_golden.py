"""Every file `memwarden checkpoint` writes, byte for byte, against golden copies.

The golden copies in tests/golden/checkpoint/ were recorded from the code before the checkpoint
was optimised for speed (issue 15): a change that makes it faster must leave every written byte
as it was. Scenarios: a small fleet built by bench/fleet.py as the benchmark builds its own
(agents of both storage eras, a big main session and a cron session each, secrets now and then)
checkpointed four times (first run, one new turn each, nothing new, fourteen new turns), and
each real capture (tests/fixtures: 2026.9.6 SQLite era, its zstd row, 2026.7.35 file era)
checkpointed once.
History snapshots are off (they write nothing in the workspace); the clock is pinned.

After changing what the checkpoint writes on purpose, regenerate them and review the diff:

    UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/integration/checkpoint/test_golden.py
"""

from __future__ import annotations

import os
import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memwarden.process.runtime import JobContext
from support.cli import run_cli
from support.deployments import FIXTURES, make_file_era_state, make_sqlite_era_state

REPO = Path(__file__).resolve().parents[3]
GOLDEN = REPO / "tests" / "golden" / "checkpoint"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
NOW = datetime(2026, 11, 22, 6, 0, tzinfo=UTC)

sys.path.insert(0, str(REPO / "bench"))
from fleet import FleetSpec, append_turns, build_fleet  # noqa: E402

# Small enough to be quick; under checkpoint's FIRST_SIGHT_WHOLE_BYTES, so the first run reads
# each conversation whole (its daily log only the recent lines' messages).
FLEET = FleetSpec(agents=6, transcript_bytes=300_000)


@pytest.fixture(autouse=True)
def pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(JobContext, "now", lambda self: NOW)
    monkeypatch.setenv("MEMWARDEN_HISTORY_ENABLED", "false")


def written(workspaces: dict[str, Path]) -> dict[str, bytes]:
    """Return every file under the workspaces, by `<agent>/<path in its workspace>`."""
    found = {}
    for agent, workspace in sorted(workspaces.items()):
        for path in sorted(workspace.rglob("*")):
            if path.is_file():
                found[f"{agent}/{path.relative_to(workspace)}"] = path.read_bytes()
    return found


def check(name: str, files: dict[str, bytes]) -> None:
    """Compare `files` with the golden copies of scenario `name` (or record them)."""
    folder = GOLDEN / name
    if UPDATE:
        shutil.rmtree(folder, ignore_errors=True)
        for relative, content in files.items():
            (folder / relative).parent.mkdir(parents=True, exist_ok=True)
            (folder / relative).write_bytes(content)
    assert folder.is_dir(), f"no golden copies in {folder}: run with UPDATE_GOLDEN=1"
    golden = {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }
    assert sorted(files) == sorted(golden)
    for relative, content in files.items():
        assert content.decode() == golden[relative].decode(), relative


def test_bench_fleet_writes_the_golden_files_run_after_run(tmp_path, capsys):
    fleet = build_fleet(tmp_path, FLEET, now=NOW)
    arguments = ("-q", "--state-dir", fleet.state_dir, "checkpoint")

    # Fourteen turns bring turn 46 into most agents' window: its request holds a secret.
    for scenario, turns in (
        ("first-run", 0),
        ("one-new-turn", 1),
        ("nothing-new", 0),
        ("fourteen-new-turns", 14),
    ):
        if turns:
            append_turns(fleet, turns=turns)
        result = run_cli(capsys, *arguments)
        assert result.exit_code == 0, result.stderr
        check(f"fleet/{scenario}", written(fleet.workspaces))


def test_sqlite_era_capture_writes_the_golden_files(tmp_path, capsys):
    state = make_sqlite_era_state(tmp_path)

    result = run_cli(capsys, "-q", "--state-dir", state.state_dir, "checkpoint")

    assert result.exit_code == 0, result.stderr
    check("openclaw-2026.9.6", written({"main": state.workspace}))


def test_sqlite_era_zstd_capture_writes_the_golden_files(tmp_path, capsys):
    state = make_sqlite_era_state(tmp_path)
    shutil.copy2(FIXTURES / "openclaw-2026.9.6-zstd" / "openclaw-agent.sqlite", state.sqlite_path)

    result = run_cli(capsys, "-q", "--state-dir", state.state_dir, "checkpoint")

    assert result.exit_code == 0, result.stderr
    check("openclaw-2026.9.6-zstd", written({"main": state.workspace}))


def test_file_era_capture_writes_the_golden_files(tmp_path, capsys):
    state = make_file_era_state(tmp_path)

    result = run_cli(capsys, "-q", "--state-dir", state.state_dir, "checkpoint")

    assert result.exit_code == 0, result.stderr
    check("openclaw-2026.7.35", written({"main": state.workspace}))
