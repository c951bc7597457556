"""Retention: prune by age and by count, keep the newest, repack the store, dry run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta

import pytest

from memwarden.history.git import BATCH_REFS
from memwarden.history.records import find, snapshots
from memwarden.history.retention import prune
from memwarden.history.rewind import rewind
from memwarden.history.snapshots import snapshot
from memwarden.history.store import shared_store
from memwarden.process.errors import UsageError
from memwarden.process.runtime import JobContext
from support.deployments import make_sqlite_era_state
from support.history import config_with, write_tree

START = datetime(2026, 10, 1, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def gateway(tmp_path):
    return make_sqlite_era_state(tmp_path)


def make_context(gateway, clock, **overrides) -> JobContext:
    config = config_with(overrides)
    return JobContext(
        config=config, env=dict(os.environ), state_dir_override=gateway.state_dir, clock=clock
    )


def take_daily(context, clock, days: int) -> list[str]:
    """One snapshot a day for `days` days, each with a new version of MEMORY.md."""
    agent = context.deployment.default_agent()
    agent.memory_dir.mkdir(parents=True, exist_ok=True)
    ids = []
    for day in range(days):
        clock.now = START + timedelta(days=day)
        (agent.memory_dir / "MEMORY.md").write_text(f"day {day}\n" + "same text line\n" * 200)
        ids.append(snapshot(context, agent, "checkpoint").id)
    return ids


def test_prune_drops_snapshots_past_retention_days(gateway):
    clock = Clock()
    context = make_context(gateway, clock, **{"history.retention_days": 5})
    ids = take_daily(context, clock, 8)
    clock.now = START + timedelta(days=8)
    result = prune(context)
    kept = [s.id for s in snapshots(context.state)]
    # Days 3..7 are at most 5 days old; days 0..2 are past retention.
    assert kept == list(reversed(ids[3:]))
    assert sorted(result.data["agents"]["main"]["pruned"]) == sorted(ids[:3])
    assert (result.data["pruned"], result.data["kept"]) == (3, 5)
    with pytest.raises(UsageError, match="no such snapshot"):
        find(context.state, ids[0])
    context.close()


def test_prune_keeps_at_most_max_snapshots_per_agent(gateway):
    clock = Clock()
    context = make_context(gateway, clock, **{"history.max_snapshots": 3})
    ids = take_daily(context, clock, 6)
    prune(context)
    assert [s.id for s in snapshots(context.state)] == list(reversed(ids[-3:]))
    context.close()


def test_prune_keeps_only_the_kept_snapshots_reachable_and_repacks_into_one_pack(gateway):
    clock = Clock()
    context = make_context(gateway, clock, **{"history.max_snapshots": 2})
    ids = take_daily(context, clock, 8)
    commits = {snapshot_id: find(context.state, snapshot_id).commit for snapshot_id in ids}
    result = prune(context)
    store = shared_store(context)
    assert sorted(store.parents(store.refs(BATCH_REFS))) == sorted(commits[i] for i in ids[-2:])
    assert "history store: pruned and repacked" in result.lines
    assert len(list((store.git_dir / "objects" / "pack").glob("*.pack"))) == 1
    assert not list((store.git_dir / "objects").glob("??/*")), "loose objects left after repacking"
    present = store.run(
        ["cat-file", "--batch-check"], stdin="".join(f"{c}\n" for c in commits.values()).encode()
    )
    missing = [
        line.split()[0] for line in present.decode().splitlines() if line.endswith("missing")
    ]
    assert sorted(missing) == sorted(commits[i] for i in ids[:-2])
    context.close()


def test_prune_of_a_state_without_records_deletes_nothing_from_the_store(gateway):
    clock = Clock()
    context = make_context(gateway, clock, **{"history.max_snapshots": 1})
    ids = take_daily(context, clock, 3)
    commits = [find(context.state, snapshot_id).commit for snapshot_id in ids]
    with context.state.transaction() as connection:
        connection.execute("DELETE FROM history_snapshots")
    prune(context)
    store = shared_store(context)
    assert sorted(store.parents(store.refs(BATCH_REFS))) == sorted(commits)
    context.close()


def test_prune_then_rewind_and_snapshot_still_work(gateway):
    clock = Clock()
    context = make_context(gateway, clock, **{"history.max_snapshots": 2})
    ids = take_daily(context, clock, 5)
    prune(context)
    agent = context.deployment.default_agent()
    rewind(context, ids[-2])
    assert (agent.memory_dir / "MEMORY.md").read_text().startswith("day 3\n")
    (agent.memory_dir / "MEMORY.md").write_text("after pruning\n")
    clock.now += timedelta(hours=1)
    assert snapshot(context, agent, "manual").changes.modified == ["memory/MEMORY.md"]
    context.close()


def test_prune_dry_run_reports_and_changes_nothing(gateway):
    clock = Clock()
    context = make_context(gateway, clock, **{"history.max_snapshots": 2})
    ids = take_daily(context, clock, 4)
    result = prune(context, dry_run=True)
    assert sorted(result.data["agents"]["main"]["pruned"]) == sorted(ids[:2])
    assert result.lines == ["history main: would prune 2 snapshot(s), kept 2"]
    assert len(snapshots(context.state)) == 4
    context.close()


def test_prune_records_event_and_failure_of_one_agent_does_not_stop_others(gateway):
    clock = Clock()
    context = make_context(gateway, clock, **{"history.max_snapshots": 1})
    take_daily(context, clock, 3)
    # A second agent whose store is gone: its rows stay listed, pruning it fails cleanly.
    with context.state.transaction() as connection:
        for number in range(2):
            connection.execute(
                "INSERT INTO history_snapshots (id, agent_id, created_at, trigger_kind, "
                "commit_sha, file_count, total_bytes) VALUES (?, 'ghost', ?, 'manual', ?, 0, 0)",
                (f"aaaa000{number}", START.timestamp() + number, "0" * 40),
            )
    history_dir = context.storage_dir / "history"
    (history_dir / "ghost" / "repo.git").mkdir(parents=True)
    (history_dir / "ghost" / "repo.git" / "HEAD").write_text("not a repository\n")
    result = prune(context)
    assert (
        result.data["agents"]["main"]["pruned"] and result.data["agents"]["main"]["error"] is None
    )
    assert result.data["agents"]["ghost"]["error"]
    ghost_error = result.data["agents"]["ghost"]["error"]
    assert result.problems == [f"history of agent ghost: {ghost_error}"]
    assert result.exit_code == 1
    (event,) = context.state.events(types=["snapshot.pruned"])
    assert event["agent_id"] == "main" and len(event["data"]["snapshots"]) == 2
    context.close()


def test_prune_finds_each_agents_deltas_in_the_shared_store(gateway, tmp_path):
    """Many agents' files of the same name and size compete for git's delta search; retention
    packs each agent's versions together first, so its growing daily log is stored as deltas."""
    import hashlib

    from memwarden.history.plan import SnapshotRequest
    from memwarden.history.snapshots import snapshot_agents
    from memwarden.openclaw.agents import Agent

    clock = Clock()
    context = make_context(gateway, clock)
    agents = [
        Agent(f"agent{n:02d}", tmp_path / f"ws{n:02d}", tmp_path / "agents", False, "none")
        for n in range(20)
    ]

    def line(agent: int, number: int) -> str:
        return hashlib.sha256(f"{agent}:{number}".encode()).hexdigest() + " remembered\n"

    for day in range(5):
        clock.now = START + timedelta(days=day)
        for number, agent in enumerate(agents):
            write_tree(
                agent.memory_dir,
                {"2026-11-01.md": "".join(line(number, n) for n in range(200 + day * 5)).encode()},
            )
        snapshot_agents(context, [SnapshotRequest(agent, "checkpoint") for agent in agents])
    prune(context)
    store = shared_store(context)
    (index,) = (store.git_dir / "objects" / "pack").glob("*.idx")
    listing = store.run(["verify-pack", "-v", str(index)]).decode().splitlines()
    blobs = [row.split() for row in listing if " blob " in row]
    deltas = [fields for fields in blobs if len(fields) == 7]  # with a depth and a base
    assert len(blobs) == 100 and len(deltas) >= 75, (len(blobs), len(deltas))
    context.close()


def test_prune_removes_what_a_run_killed_while_sending_to_git_left(gateway):
    clock = Clock()
    context = make_context(gateway, clock)
    ids = take_daily(context, clock, 2)
    agent = context.deployment.default_agent()
    (agent.memory_dir / "MEMORY.md").write_text("sent, never committed\n" * 4096)
    killed = subprocess.run(
        [sys.executable, "-c", SEND_THEN_DIE, str(gateway.state_dir)], env=dict(os.environ)
    )
    assert killed.returncode == -signal.SIGKILL
    store = shared_store(context)
    deadline = time.monotonic() + 30
    # git reads the end of a stream that never said `done`: it writes a crash report, keeps
    # the objects it got, and writes its marks file last.
    while time.monotonic() < deadline and not [
        path for path in store.git_dir.glob("memwarden-marks-*") if path.suffix != ".lock"
    ]:
        time.sleep(0.05)
    assert list(store.git_dir.glob("fast_import_crash_*"))
    prune(context)
    assert not list(store.git_dir.glob("fast_import_crash_*"))
    assert not list(store.git_dir.glob("memwarden-marks-*"))
    assert [s.id for s in snapshots(context.state)] == list(reversed(ids))
    assert len(list((store.git_dir / "objects" / "pack").glob("*.pack"))) == 1
    assert snapshot(context, agent, "checkpoint").changes.modified == ["memory/MEMORY.md"]
    context.close()


SEND_THEN_DIE = """
import os, signal, sys, time
from contextlib import ExitStack
from pathlib import Path
from memwarden.settings.config import defaults
from memwarden.history.git import SnapshotCommit, TreeFile, blob_sha
from memwarden.history.snapshots import _Batch
from memwarden.process.runtime import JobContext
context = JobContext(config=defaults(), env=dict(os.environ), state_dir_override=Path(sys.argv[1]))
data = (context.deployment.default_agent().memory_dir / "MEMORY.md").read_bytes()
importer = _Batch.start(context, ExitStack(), 1).importer  # a run's start: lock, store, git
# Larger than the buffer of git's stdin in this process (8 KiB): it reaches git now.
importer.add(SnapshotCommit([TreeFile("memory/MEMORY.md", blob_sha(data), data)], "sent", 0))
time.sleep(0.2)  # git has the snapshot
os.kill(os.getpid(), signal.SIGKILL)
"""
