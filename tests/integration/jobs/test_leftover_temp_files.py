"""What a killed run leaves behind is cleaned up by the next run of the job that left it.

A run killed mid-write leaves its temp file: `.ACTIVE_CONTEXT.md.<8 random>.tmp` (or of
INDEX.md, a daily log) in memory/, and maintain's compression a 0-byte
`.<transcript>.gz.<pid>.tmp` in the gateway's sessions folder. The next checkpoint, index or
maintain removes those more than an hour old (a live write takes milliseconds), and nothing else.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memwarden.fs.files import atomic_write
from support.cli import run_subprocess
from support.deployments import make_file_era_state, make_sqlite_era_state

HOUR = 3600


def aged(path: Path, seconds: float, content: bytes = b"") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    moment = time.time() - seconds
    os.utime(path, (moment, moment))
    return path


def killed_mid_write(target: Path) -> Path:
    """Kill a process inside atomic_write, after its temp file is written and before the
    rename; return the temp file it left."""
    script = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from memwarden.fs import files\n"
        "def stop(*args):\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "os.replace = stop\n"
        "files.atomic_write(Path(sys.argv[1]), 'half a handoff')\n"
    )
    completed = subprocess.run([sys.executable, "-c", script, str(target)], check=False)
    assert completed.returncode == -signal.SIGKILL
    (left,) = [p for p in target.parent.iterdir() if p.name.startswith(f".{target.name}.")]
    return left


@pytest.fixture
def pinned(monkeypatch):
    monkeypatch.setenv("MEMWARDEN_CHECKPOINT_SESSIONS", "main")  # the capture is old


def test_checkpoint_removes_what_a_killed_write_left_in_memory(tmp_path, pinned):
    state = make_sqlite_era_state(tmp_path)
    memory = state.workspace / "memory"
    memory.mkdir()
    left = killed_mid_write(memory / "ACTIVE_CONTEXT.md")
    moment = time.time() - 2 * HOUR
    os.utime(left, (moment, moment))
    fresh = aged(memory / ".2026-11-22.md.k3j9x_2a.tmp", 60)  # a write going on right now
    agents_own = aged(memory / ".draft.tmp", 2 * HOUR)  # not memwarden's name
    notes = aged(memory / "notes.md.abcdefgh.tmp", 2 * HOUR)  # not hidden: not memwarden's

    result = run_subprocess("--state-dir", state.state_dir, "checkpoint")

    assert result.exit_code == 0, result.stderr
    assert not left.exists()
    assert fresh.exists() and agents_own.exists() and notes.exists()
    assert (memory / "ACTIVE_CONTEXT.md").read_text() != "half a handoff"


def test_index_removes_what_a_killed_write_left_in_memory(tmp_path):
    state = make_sqlite_era_state(tmp_path)
    memory = state.workspace / "memory"
    for number in range(30):
        atomic_write(memory / f"note-{number}.md", "[FACT] a fact\n" * 150)
    left = aged(memory / ".INDEX.md.q1w2e3r4.tmp", 2 * HOUR, b"# half an index")

    result = run_subprocess("--state-dir", state.state_dir, "index")

    assert result.exit_code == 0, result.stderr
    assert not left.exists()
    assert (memory / "INDEX.md").is_file()


def test_dry_run_removes_nothing(tmp_path, pinned):
    state = make_sqlite_era_state(tmp_path)
    left = aged(state.workspace / "memory" / ".ACTIVE_CONTEXT.md.q1w2e3r4.tmp", 2 * HOUR)
    result = run_subprocess("--state-dir", state.state_dir, "checkpoint", "--dry-run")
    assert result.exit_code == 0, result.stderr
    assert left.exists()


def test_maintain_removes_compression_leftovers_in_the_sessions_folder(tmp_path):
    state = make_file_era_state(tmp_path)
    sessions = state.sessions_dir
    transcript = next(sessions.glob("*.jsonl"))
    left = aged(sessions / f".{transcript.name}.gz.4242.tmp", 2 * HOUR)
    fresh = aged(sessions / f".{transcript.name}.gz.4343.tmp", 60)
    gateway_own = aged(sessions / ".sessions.json.4242.tmp", 2 * HOUR)  # not a compression

    dry_run = run_subprocess("--state-dir", state.state_dir, "maintain", "--dry-run")

    assert dry_run.exit_code == 0, dry_run.stderr
    assert left.exists()
    assert f"would remove 1 temp file(s) a killed run left: {left.name}" in dry_run.stdout

    result = run_subprocess("--state-dir", state.state_dir, "maintain")

    assert result.exit_code == 0, result.stderr
    assert not left.exists()
    assert fresh.exists() and gateway_own.exists()
    assert left.name in result.stdout


def immutable(path: Path, on: bool) -> None:
    """Set or clear `path`'s immutable attribute (root, on a file system that has it)."""
    completed = subprocess.run(
        ["chattr", "+i" if on else "-i", str(path)], capture_output=True, check=False
    )
    if completed.returncode != 0:
        pytest.skip(f"chattr is not available here: {completed.stderr.decode().strip()}")


def test_a_handoff_that_cannot_be_replaced_leaves_no_temp_file_run_after_run(tmp_path):
    state = make_sqlite_era_state(tmp_path)
    memory = state.workspace / "memory"
    first = run_subprocess("--state-dir", state.state_dir, "-q", "checkpoint")
    assert first.exit_code == 0, first.stderr
    handoff = memory / "ACTIVE_CONTEXT.md"
    immutable(handoff, True)
    try:
        for _run in range(3):
            result = run_subprocess("--state-dir", state.state_dir, "-q", "checkpoint", "--force")
            assert result.exit_code == 1
            assert f"{handoff}: operation not permitted" in result.stderr
            assert ".tmp" not in result.stderr
            assert [p.name for p in memory.iterdir() if p.name.endswith(".tmp")] == []
    finally:
        immutable(handoff, False)
    handoff.write_text("# an older handoff\n> - session: `agent:main:main`\n")

    result = run_subprocess("--state-dir", state.state_dir, "-q", "checkpoint")

    assert result.exit_code == 0, result.stderr
    assert "an older handoff" not in handoff.read_text(), "the next run rewrote the handoff"
    assert [p.name for p in memory.iterdir() if p.name.endswith(".tmp")] == []
