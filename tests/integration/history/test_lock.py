"""The memory lock: a checkpoint-like writer and a rewind in two processes never interleave."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memwarden.history.records import snapshots
from memwarden.history.rewind import rewind
from memwarden.history.snapshots import snapshot
from memwarden.history.store import shared_store
from memwarden.process.errors import LockHeld
from memwarden.process.locks import memory_lock
from memwarden.process.runtime import JobContext
from support.cli import run_subprocess
from support.deployments import make_sqlite_era_state
from support.history import config_with

# A checkpoint-like writer: takes agent main's memory lock, says so, rewrites MEMORY.md a few
# times (as a checkpoint writes ACTIVE_CONTEXT.md and the daily log), then waits for a line on
# stdin (or not) and releases the lock.
WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from memwarden.fs.files import atomic_write
    from memwarden.process.locks import memory_lock
    locks, memory, wait_for_stdin = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == "1"
    with memory_lock(locks, "main"):
        print("held", flush=True)
        for step in range(5):
            atomic_write(memory / "MEMORY.md", f"checkpoint step {step}\\n")
            time.sleep(0.05)
        if wait_for_stdin:
            sys.stdin.readline()
    """
)


@pytest.fixture
def gateway(tmp_path):
    return make_sqlite_era_state(tmp_path)


def make_context(gateway, wait_seconds: int) -> JobContext:
    config = config_with({"history.lock_wait_seconds": wait_seconds})
    return JobContext(config=config, env=dict(os.environ), state_dir_override=gateway.state_dir)


def start_writer(context: JobContext, memory: Path, wait_for_stdin: bool) -> subprocess.Popen:
    locks = context.storage_dir / "locks"
    process = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(locks), str(memory), "1" if wait_for_stdin else "0"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout.readline().strip() == "held"
    return process


def prepare(context: JobContext):
    agent = context.deployment.default_agent()
    agent.memory_dir.mkdir(parents=True, exist_ok=True)
    (agent.memory_dir / "MEMORY.md").write_bytes(b"good memory\n")
    good = snapshot(context, agent, "manual")
    (agent.memory_dir / "MEMORY.md").write_bytes(b"clobbered\n")
    return agent, good


def test_rewind_while_writer_holds_memory_lock_is_refused_and_changes_nothing(gateway):
    context = make_context(gateway, wait_seconds=0)
    agent, good = prepare(context)
    writer = start_writer(context, agent.memory_dir, wait_for_stdin=True)
    try:
        with pytest.raises(LockHeld, match="agent main: another run is changing its memory"):
            rewind(context, good.id)
    finally:
        writer.communicate("\n", timeout=30)
    assert (agent.memory_dir / "MEMORY.md").read_bytes() == b"checkpoint step 4\n"
    assert [s.id for s in snapshots(context.state)] == [good.id]
    context.close()


def test_rewind_waits_for_writer_then_saves_its_work_before_restoring(gateway):
    context = make_context(gateway, wait_seconds=30)
    agent, good = prepare(context)
    writer = start_writer(context, agent.memory_dir, wait_for_stdin=False)
    try:
        report = rewind(context, good.id)
    finally:
        writer.communicate(timeout=30)
    assert (agent.memory_dir / "MEMORY.md").read_bytes() == b"good memory\n"
    (pre_rewind,) = [s for s in snapshots(context.state) if s.id == report.undo_id]
    git = shared_store(context)
    saved = git.blobs([git.listing(pre_rewind.commit)["memory/MEMORY.md"][0]])
    # The rewind ran after the writer finished: its last write is in the undo snapshot.
    assert list(saved.values()) == [b"checkpoint step 4\n"]
    context.close()


def test_cli_rewind_while_memory_locked_exits_75(gateway, monkeypatch):
    context = make_context(gateway, wait_seconds=0)
    agent, good = prepare(context)
    monkeypatch.setenv("MEMWARDEN_HISTORY_LOCK_WAIT_SECONDS", "0")
    with memory_lock(context.storage_dir / "locks", "main"):
        result = run_subprocess(
            "--state-dir", gateway.state_dir, "history", "rewind", good.id, env=dict(os.environ)
        )
    assert result.exit_code == 75, result.stderr
    assert "agent main: another run is changing its memory" in result.stderr
    assert (agent.memory_dir / "MEMORY.md").read_bytes() == b"clobbered\n"
    context.close()


def test_snapshot_inside_memory_lock_of_same_process_is_reentrant(gateway):
    context = make_context(gateway, wait_seconds=0)
    agent = context.deployment.default_agent()
    with memory_lock(context.storage_dir / "locks", "main"):
        agent.memory_dir.mkdir(parents=True)
        (agent.memory_dir / "ACTIVE_CONTEXT.md").write_text("written under the lock\n")
        assert snapshot(context, agent, "checkpoint") is not None
    with memory_lock(context.storage_dir / "locks", "main"):
        pass
    context.close()
