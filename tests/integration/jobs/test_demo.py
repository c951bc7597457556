"""`make demo` keeps working: every job runs on the sample deployment and shows what it wrote."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from memwarden.jobs import JOBS
from support.bootstrap_hook import NODE

REPO = Path(__file__).resolve().parents[3]


def test_demo_runs_every_job_and_writes_memory_files(tmp_path):
    demo = tmp_path / "demo"
    env = dict(os.environ, DEMO_DIR=str(demo))
    completed = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "demo.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    out = completed.stdout
    scheduled = [spec.name for spec in JOBS if spec.records_run]  # what "every job" means
    assert set(scheduled) == {"checkpoint", "rotate", "index", "health", "maintain"}
    for command in (*scheduled, "sessions", "history", "events", "status"):
        assert f"$ memwarden {command}" in out
    status = out[out.index("$ memwarden status") :]
    assert "never run" not in status
    assert "  maintain    ok" in status
    # The rotated conversation's next bootstrap carries its own handoff (the real hook, in
    # Node), and the hook's receipt of it is what status shows.
    if NODE is None:
        assert "node is not on PATH" in out
    else:
        injected = out[out.index("now carries, after its own files:") :]
        assert "memory/sessions/main.agentrpc.md: # Conversation Handoff" in injected
        assert "agent:main:agentrpc  whole" in status
    assert "checkpoint: 2 agent(s), 2 written" in out
    assert "rotated      agent:main:agentrpc" in out
    assert (
        "the gateway received sessions.reset for: agent:legacy:fixture, agent:main:agentrpc" in out
    )
    memory = demo / "workspaces" / "main" / "memory"
    # Each conversation has its own handoff: rotating agentrpc left main's alone.
    main = (memory / "ACTIVE_CONTEXT.md").read_text()
    assert "second message after reset" in main and "via agent rpc" not in main
    assert "via agent rpc" in (memory / "sessions" / "main.agentrpc.md").read_text()
    assert "MEMWARDEN_CHECKPOINT" not in (REPO / "scripts" / "demo.py").read_text()
    daily = "".join(path.read_text() for path in memory.glob("20??-??-??.md"))
    assert "user: second message after reset" in daily
    assert (memory / "INDEX.md").read_text().startswith("<!-- memwarden:index")
    assert "Traceback" not in completed.stderr
    assert not (demo / "home" / ".openclaw").exists()
    # The operator goes on exploring the demo from a shell, with the environment it printed.
    explore = demo / "env.sh"
    assert f". {os.path.relpath(explore)}" in out
    outside = tmp_path / "real-home"
    shell = subprocess.run(
        ["sh", "-c", f". {explore} && memwarden history list --json"],
        env={"PATH": "/usr/bin:/bin", "HOME": str(outside)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert shell.returncode == 0, shell.stderr
    assert '"main"' in shell.stdout
    assert not outside.exists(), "the demo's environment leaves the operator's own state alone"
