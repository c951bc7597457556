"""`checkpoint --session KEY` (the hook's run before a compaction, which takes no job lock)
beside the scheduled checkpoint, as real processes started together, many times: every new
message is logged in the daily log exactly once."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import orjson

from support.cli import run_subprocess
from support.deployments import make_generated_fleet
from support.transcripts import transcript_lines

BATCHES = 20
FIRST_TURNS = 3  # what make_generated_fleet writes
REQUEST = re.compile(r"^- \d\d:\d\d user: user message (\d+)\b", re.MULTILINE)


def start(state_dir: Path, *arguments: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "memwarden", "--state-dir", str(state_dir), "checkpoint"]
    return subprocess.Popen(
        [*command, "-q", *arguments],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )


def append_turn(transcript: Path, turn: int, session_id: str) -> None:
    """Append turn `turn` (a request and its reply) to the transcript, as the gateway does."""
    lines = list(transcript_lines(turn + 1, session_id=session_id))[-2:]
    with transcript.open("ab") as handle:
        handle.write(b"".join(orjson.dumps(line) + b"\n" for line in lines))


def test_checkpoint_session_beside_the_scheduled_run_logs_every_message_once(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMWARDEN_HISTORY_ENABLED", "false")
    names = ["main", "peer1", "peer2", "peer3"]
    state_dir, workspaces = make_generated_fleet(tmp_path, names, int(time.time() * 1000))
    session_id = "00000000-0000-4000-8000-000000000000"
    transcript = state_dir / "agents" / "main" / "sessions" / f"{session_id}.jsonl"
    first = run_subprocess("--state-dir", state_dir, "checkpoint", "-q")
    assert first.exit_code == 0, first.stderr

    for turn in range(FIRST_TURNS, FIRST_TURNS + BATCHES):
        append_turn(transcript, turn, session_id)
        scheduled = start(state_dir)
        hook = start(state_dir, "--session", "agent:main:main", "--force")
        for process in (scheduled, hook):
            _, stderr = process.communicate(timeout=60)
            assert process.returncode == 0, stderr

    logs = "".join(path.read_text() for path in (workspaces["main"] / "memory").glob("20*.md"))
    logged = Counter(int(turn) for turn in REQUEST.findall(logs))
    expected = Counter(range(FIRST_TURNS + BATCHES))
    assert logged == expected, f"logged twice: {sorted(+(logged - expected))}"
