"""What a checkpoint killed part way leaves: every file old or new and whole, every daily-log
entry exactly once after the next run, no temp file left over.

The kills here are real (SIGKILL of a `memwarden checkpoint` process) and placed on purpose:
the process kills itself right after a chosen rename, so each window is hit every time.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.cli import run_cli, run_subprocess
from support.deployments import make_generated_fleet
from support.fsyncs import record_fsyncs

AGENTS = ["alpha", "beta", "gamma"]
ENTRY_MARK = "· checkpoint ·"
# Run memwarden's CLI in a child that kills itself (SIGKILL) right after the `after`-th rename
# onto a daily log (`YYYY-MM-DD.md`), before anything else happens.
KILL_AFTER_DAILY_RENAME = """
import os, re, signal, sys
from memwarden.cli import main

after = int(sys.argv[1])
real_replace = os.replace
done = 0

def replace(source, target, *args, **kwargs):
    global done
    real_replace(source, target, *args, **kwargs)
    if re.fullmatch(r"\\d{4}-\\d{2}-\\d{2}\\.md", os.path.basename(os.fspath(target))):
        done += 1
        if done == after:
            os.kill(os.getpid(), signal.SIGKILL)

os.replace = replace
sys.exit(main(sys.argv[2:]))
"""


@pytest.fixture
def fleet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, Path]]:
    monkeypatch.setenv("MEMWARDEN_HISTORY_ENABLED", "false")
    monkeypatch.setenv("MEMWARDEN_CHECKPOINT_WORKERS", "1")
    return make_generated_fleet(tmp_path, AGENTS, int(time.time() * 1000))


def daily_entries(workspace: Path) -> int:
    return sum(path.read_text().count(ENTRY_MARK) for path in daily_logs(workspace))


def daily_logs(workspace: Path) -> list[Path]:
    return sorted((workspace / "memory").glob("20??-??-??.md"))


def temp_files(workspace: Path) -> list[str]:
    return sorted(path.name for path in (workspace / "memory").rglob(".*.tmp"))


def killed_checkpoint(state_dir: Path, after: int) -> int:
    completed = subprocess.run(
        [
            sys.executable,
            "-c",
            KILL_AFTER_DAILY_RENAME,
            str(after),
            "--state-dir",
            str(state_dir),
            "checkpoint",
            "-q",
        ],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=60,
        check=False,
    )
    return completed.returncode


@pytest.mark.parametrize("after", [1, 2])
def test_checkpoint_killed_after_a_daily_log_rename_rerun_logs_each_entry_once(fleet, after):
    state_dir, workspaces = fleet
    assert killed_checkpoint(state_dir, after) == -9  # SIGKILL, as planned

    rerun = run_subprocess("--state-dir", state_dir, "checkpoint", "-q")

    assert rerun.exit_code == 0, rerun.stderr
    assert {agent: daily_entries(workspaces[agent]) for agent in AGENTS} == dict.fromkeys(AGENTS, 1)
    assert [name for agent in AGENTS for name in temp_files(workspaces[agent])] == []


def memory_files(workspaces: dict[str, Path]) -> dict[str, bytes]:
    return {
        str(path): path.read_bytes()
        for workspace in workspaces.values()
        for path in sorted((workspace / "memory").rglob("*"))
        if path.is_file()
    }


def pending_renames() -> int:
    from memwarden.checkpoint.commit.journal import pending_count
    from memwarden.store.state import StateDB

    databases = list((Path(os.environ["XDG_STATE_HOME"]) / "memwarden").rglob("state.db"))
    assert len(databases) == 1
    state = StateDB(databases[0])
    try:
        return pending_count(state)
    finally:
        state.close()


def test_checkpoint_dry_run_leaves_a_killed_runs_journal_as_it_is(fleet, capsys):
    state_dir, workspaces = fleet
    assert killed_checkpoint(state_dir, 1) == -9
    before, pending = memory_files(workspaces), pending_renames()
    assert pending > 0

    dry = run_cli(capsys, "--state-dir", state_dir, "checkpoint", "--dry-run")

    assert dry.exit_code == 0, dry.stderr
    assert f"journal: {pending} rename(s) left by a stopped checkpoint" in dry.stdout
    assert memory_files(workspaces) == before
    assert pending_renames() == pending
    done = run_cli(capsys, "--state-dir", state_dir, "checkpoint")
    assert "journal: finished what a stopped checkpoint left" in done.stdout
    assert [daily_entries(workspaces[agent]) for agent in AGENTS] == [1, 1, 1]


def test_checkpoint_agent_whose_files_cannot_be_put_in_place_does_not_stop_the_others(
    fleet, capsys, monkeypatch
):
    from memwarden.checkpoint.commit import journal

    state_dir, workspaces = fleet
    real_place = journal.place

    def place(staged, *, verify, real_root=None):
        if staged.agent_id == "beta":
            raise PermissionError(13, "Permission denied", staged.target)
        return real_place(staged, verify=verify, real_root=real_root)

    monkeypatch.setattr(journal, "place", place)
    first = run_cli(capsys, "--state-dir", state_dir, "checkpoint")

    assert first.exit_code == 1
    assert any("checkpoint of agent beta" in line for line in first.messages), first.stderr
    assert [daily_entries(workspaces[agent]) for agent in AGENTS] == [1, 0, 1]
    monkeypatch.setattr(journal, "place", real_place)
    second = run_cli(capsys, "--state-dir", state_dir, "checkpoint")
    assert second.exit_code == 0, second.stderr
    assert [daily_entries(workspaces[agent]) for agent in AGENTS] == [1, 1, 1]
    assert [name for agent in AGENTS for name in temp_files(workspaces[agent])] == []


def test_checkpoint_fsyncs_every_file_and_folder_it_writes_before_it_clears_the_journal(
    fleet, capsys, monkeypatch
):
    from memwarden.checkpoint.commit import journal

    state_dir, workspaces = fleet
    fsynced = record_fsyncs(monkeypatch)
    flushed_before_clear = []
    real_clear = journal.clear

    def clear(*args):
        flushed_before_clear.extend(fsynced)
        real_clear(*args)

    monkeypatch.setattr(journal, "clear", clear)
    done = run_cli(capsys, "--state-dir", state_dir, "checkpoint")

    assert done.exit_code == 0, done.stderr
    for agent in AGENTS:
        memory = Path(os.path.realpath(workspaces[agent] / "memory"))
        written = [path for path in memory.rglob("*") if path.is_file()]
        assert len(written) >= 3  # handoff, daily log, bootstrap manifest
        for path in written:  # through its temp file, beside it
            assert any(
                Path(flushed).parent == path.parent
                and Path(flushed).name.startswith(f".{path.name}.")
                for flushed in flushed_before_clear
            ), path
        assert str(memory) in flushed_before_clear  # the renames into it
    assert pending_renames() == 0


def test_checkpoint_whose_renames_cannot_be_flushed_leaves_them_to_the_next_run(
    fleet, capsys, monkeypatch
):
    from memwarden.indexing.manifest import MANIFEST_NAME

    state_dir, workspaces = fleet
    real_fsync = os.fsync

    def failing_on_folders(descriptor):
        if stat.S_ISDIR(os.fstat(descriptor).st_mode):
            raise OSError(5, "Input/output error")
        real_fsync(descriptor)

    monkeypatch.setattr(os, "fsync", failing_on_folders)
    first = run_cli(capsys, "--state-dir", state_dir, "checkpoint")

    assert first.exit_code == 1
    failed = [line for line in first.messages if "put in place again by the next run" in line]
    assert len(failed) == len(AGENTS), first.messages
    assert all("input/output error" in line.lower() for line in failed), failed
    assert pending_renames() > 0  # the journal keeps the agents whose renames it flushes
    monkeypatch.setattr(os, "fsync", real_fsync)
    for agent in AGENTS:  # as a power cut before the flush may leave them
        (workspaces[agent] / "memory" / MANIFEST_NAME).write_text("")
    second = run_cli(capsys, "--state-dir", state_dir, "checkpoint")

    assert second.exit_code == 0, second.stderr
    assert "journal: finished what a stopped checkpoint left" in second.stdout
    assert pending_renames() == 0
    for agent in AGENTS:
        assert (workspaces[agent] / "memory" / MANIFEST_NAME).read_text().startswith("{")
    assert [daily_entries(workspaces[agent]) for agent in AGENTS] == [1, 1, 1]
