"""Run locks: a second process is refused at once with exit 75, and a dead holder frees it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from memwarden.process.errors import LockHeld
from memwarden.process.locks import RunLock
from support.cli import run_subprocess
from support.deployments import make_sqlite_era_state

HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from memwarden.process.locks import RunLock
    with RunLock(Path(sys.argv[1]), sys.argv[2]):
        print("held", flush=True)
        sys.stdin.readline()
    """
)


def hold_lock(folder, name):
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(folder), name],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout.readline().strip() == "held"
    return process


def test_run_lock_held_by_other_process_raises_lock_held(tmp_path):
    holder = hold_lock(tmp_path, "checkpoint")
    try:
        with pytest.raises(LockHeld, match=rf"checkpoint is already running \(pid {holder.pid}"):
            RunLock(tmp_path, "checkpoint").acquire()
    finally:
        holder.communicate("\n", timeout=10)
    with RunLock(tmp_path, "checkpoint"):
        pass


def test_run_lock_of_killed_holder_is_free_again(tmp_path):
    holder = hold_lock(tmp_path, "rotate")
    holder.kill()
    holder.wait(timeout=10)
    with RunLock(tmp_path, "rotate") as lock:
        assert lock.path.read_text().strip().isdigit()


def test_run_lock_different_jobs_do_not_block_each_other(tmp_path):
    with RunLock(tmp_path, "checkpoint") as first, RunLock(tmp_path, "health") as second:
        assert first.path.read_text().strip() == second.path.read_text().strip() == str(os.getpid())


def test_cli_job_while_locked_exits_75_with_message(tmp_path, isolated_env):
    locks = isolated_env / ".local" / "state" / "memwarden" / "locks"
    holder = hold_lock(locks, "checkpoint")
    try:
        result = run_subprocess(
            "--state-dir",
            make_sqlite_era_state(tmp_path).state_dir,
            "checkpoint",
            env=dict(os.environ),
        )
    finally:
        holder.communicate("\n", timeout=10)
    assert result.exit_code == 75, result.stderr
    assert "checkpoint is already running" in result.stderr


def test_cli_locked_with_json_prints_error_document(tmp_path, isolated_env):
    locks = isolated_env / ".local" / "state" / "memwarden" / "locks"
    holder = hold_lock(locks, "checkpoint")
    try:
        state_dir = make_sqlite_era_state(tmp_path).state_dir
        result = run_subprocess(
            "--state-dir", state_dir, "checkpoint", "--json", env=dict(os.environ)
        )
    finally:
        holder.communicate("\n", timeout=10)
    assert result.exit_code == 75
    document = result.json()
    assert (document["job"], document["exit_code"]) == ("checkpoint", 75)
    assert "already running" in document["error"][0]


def test_cli_checkpoint_of_one_session_is_not_turned_away_by_the_job_lock(tmp_path, isolated_env):
    state = make_sqlite_era_state(tmp_path)
    locks = isolated_env / ".local" / "state" / "memwarden" / "locks"
    holder = hold_lock(locks, "checkpoint")
    env = dict(os.environ, MEMWARDEN_HISTORY_ENABLED="false")
    try:
        result = run_subprocess(
            "--state-dir", state.state_dir, "checkpoint", "--session", "agent:main:main", env=env
        )
    finally:
        holder.communicate("\n", timeout=10)
    assert result.exit_code == 0, result.stderr
    assert (state.workspace / "memory" / "ACTIVE_CONTEXT.md").exists()
