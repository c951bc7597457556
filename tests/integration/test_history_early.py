"""Snapshots begun early (history.early): the files a run wrote are sent to git before its last
writes; the snapshot re-reads only what changed since, and holds every file byte-exact."""

from __future__ import annotations

import os
import time

import pytest

from memwarden.config import defaults
from memwarden.history import plan as plan_module
from memwarden.history.bootstrap_sizes import recorded
from memwarden.history.browse import list_snapshots
from memwarden.history.early import EarlyBatch
from memwarden.history.git import BATCH_REFS, GitStore
from memwarden.history.locking import store_lock
from memwarden.history.manifest import load_manifests
from memwarden.history.plan import SnapshotRequest
from memwarden.history.scan import scan_workspace
from memwarden.history.snapshots import snapshot, snapshot_agents
from memwarden.history.store import shared_store
from memwarden.runtime import JobContext
from support.cli import run_cli
from support.deployments import make_sqlite_era_state
from support.history import context_with_failing_fast_import, snapshot_contents, write_tree


def workspace_files(context, agent) -> dict[str, bytes]:
    """Return what history keeps of the workspace now, {path: bytes}."""
    scan = scan_workspace(agent.workspace, context.config.history.root_files)
    return {path: (agent.workspace / path).read_bytes() for path in scan.files}


def counting_reads(monkeypatch) -> list[str]:
    reads: list[str] = []
    real = plan_module.read_file

    def read_file(path):
        reads.append(os.path.basename(path))
        return real(path)

    monkeypatch.setattr(plan_module, "read_file", read_file)
    return reads


@pytest.fixture
def snapshotted(context, agent):
    """An agent with a first snapshot: a daily log, a handoff, a note and MEMORY.md."""
    write_tree(agent.memory_dir, {"2026-11-22.md": b"# day\n", "ACTIVE_CONTEXT.md": b"# ctx\n"})
    write_tree(agent.memory_dir, {"note.md": b"kept\n"})
    (agent.workspace / "MEMORY.md").write_bytes(b"# Memory\n- one\n")
    hour_ago = time.time() - 3600  # old enough for the stat manifest to trust them
    for path in [*agent.memory_dir.iterdir(), agent.workspace / "MEMORY.md"]:
        os.utime(path, (hour_ago, hour_ago))
    assert snapshot(context, agent, "manual") is not None
    return agent


def test_files_sent_ahead_are_not_read_again_and_the_snapshot_holds_the_last_bytes(
    context, snapshotted, monkeypatch
):
    agent = snapshotted
    write_tree(agent.memory_dir, {"2026-11-22.md": b"# day\n- entry\n"})
    write_tree(agent.memory_dir, {"ACTIVE_CONTEXT.md": b"# ctx\n- sent, then rewritten\n"})
    (agent.workspace / "MEMORY.md").write_bytes(b"# Memory\n- one\n- two\n")
    before_sending = time.time_ns()
    early = EarlyBatch(context)
    early.send([agent])
    after_sending = time.time_ns()
    assert set(early.sent[agent.id].files) == {
        "memory/2026-11-22.md",
        "memory/ACTIVE_CONTEXT.md",
        "MEMORY.md",
    }
    # Written after it was sent (another size, another inode): read again.
    replacement = agent.memory_dir / "ACTIVE_CONTEXT.md.new"
    replacement.write_bytes(b"# ctx\n- the run's last word\n")
    replacement.rename(agent.memory_dir / "ACTIVE_CONTEXT.md")
    write_tree(agent.memory_dir, {"INDEX.md": b"# index\n"})  # new since the sending
    reads = counting_reads(monkeypatch)

    (result,) = snapshot_agents(context, [SnapshotRequest(agent, "checkpoint")], early=early)
    early.close()

    assert result.error is None and result.snapshot is not None
    assert sorted(reads) == ["ACTIVE_CONTEXT.md", "INDEX.md"]
    assert snapshot_contents(context, result.snapshot) == workspace_files(context, agent)
    assert result.snapshot.changes.to_json() == {
        "added": ["memory/INDEX.md"],
        "modified": ["MEMORY.md", "memory/2026-11-22.md", "memory/ACTIVE_CONTEXT.md"],
        "removed": [],
    }
    # The root file sent ahead is measured from the bytes sent (UTF-16 units, end trimmed).
    assert recorded(context.state, result.snapshot.id) == {"MEMORY.md": 20}
    # Hashed when sent: a file rewritten in place since, same size and time, is read next time.
    manifest = load_manifests(context.state, [agent.id])[agent.id]
    assert before_sending <= manifest.hashed_at_ns <= after_sending
    store = shared_store(context)
    kept = [store.parents([ref]) for ref in store.refs(BATCH_REFS)]
    assert [result.snapshot.commit] in kept


def test_file_equal_to_the_last_snapshot_is_named_not_sent(context, snapshotted):
    agent = snapshotted
    note = agent.memory_dir / "note.md"
    note.write_bytes(b"kept\n")  # rewritten, same bytes: only its stat moved
    write_tree(agent.memory_dir, {"2026-11-22.md": b"# day\n- entry\n"})
    early = EarlyBatch(context)
    sent: list[bytes] = []
    early_start = early._start

    def start():
        importer = early_start()
        real_add_blob = importer.add_blob
        importer.add_blob = lambda data: (sent.append(data), real_add_blob(data))[1]
        return importer

    early._start = start
    early.send([agent])
    (result,) = snapshot_agents(context, [SnapshotRequest(agent, "checkpoint")], early=early)
    early.close()
    assert sent == [b"# day\n- entry\n"]
    assert result.snapshot.changes.modified == ["memory/2026-11-22.md"]
    assert snapshot_contents(context, result.snapshot)["memory/note.md"] == b"kept\n"


def test_early_batch_closed_before_any_snapshot_commits_nothing_and_frees_the_store(
    context, snapshotted
):
    agent = snapshotted
    write_tree(agent.memory_dir, {"2026-11-22.md": b"# day\n- entry\n"})
    store = shared_store(context)
    refs_before = store.refs(BATCH_REFS)
    early = EarlyBatch(context)
    early.send([agent])
    assert early.importer is not None
    early.close()
    assert store.refs(BATCH_REFS) == refs_before
    assert not list(store.git_dir.glob("memwarden-marks-*"))
    with store_lock(context.storage_dir / "locks", exclusive=True):  # retention may go on
        pass
    (result,) = snapshot_agents(context, [SnapshotRequest(agent, "checkpoint")], early=early)
    assert snapshot_contents(context, result.snapshot) == workspace_files(context, agent)


def test_store_held_by_retention_sends_nothing_and_the_snapshot_does_it_all(
    context, snapshotted, monkeypatch
):
    agent = snapshotted
    write_tree(agent.memory_dir, {"2026-11-22.md": b"# day\n- entry\n"})
    started = []
    real_start = GitStore.start

    def counting_start(self, arguments, stderr, env=None):
        started.append(arguments[0])
        return real_start(self, arguments, stderr, env)

    monkeypatch.setattr(GitStore, "start", counting_start)
    early = EarlyBatch(context)
    with store_lock(context.storage_dir / "locks", exclusive=True):
        early.send([agent])  # does not wait for the lock
    assert early.importer is None and early.sent == {} and started == []
    (result,) = snapshot_agents(context, [SnapshotRequest(agent, "checkpoint")], early=early)
    early.close()
    assert started == ["fast-import"]
    assert snapshot_contents(context, result.snapshot) == workspace_files(context, agent)


def test_git_that_dies_before_reading_fails_the_snapshot_with_its_reason(gateway, tmp_path):
    from memwarden.history.model import HistoryError

    context = context_with_failing_fast_import(
        gateway.state_dir,
        tmp_path,
        'echo "fatal: cannot lock the pack (simulated)" >&2; exit 128',
    )
    agent = context.deployment.default_agent()
    # More than the pipe holds: the stream's writer finds the pipe broken.
    write_tree(agent.memory_dir, {"big.md": os.urandom(3 << 20), "small.md": b"x"})
    early = EarlyBatch(context)
    early.send([agent])  # git's failure shows when the snapshot goes on with it
    (result,) = snapshot_agents(context, [SnapshotRequest(agent, "checkpoint")], early=early)
    early.close()
    assert result.snapshot is None
    assert isinstance(result.error, HistoryError)
    assert "git fast-import failed: fatal: cannot lock the pack" in result.error.message
    assert load_manifests(context.state, [agent.id]) == {}
    context.close()


def test_checkpoint_snapshot_holds_every_file_as_the_run_left_it(tmp_path, capsys, monkeypatch):
    sent_ahead = []
    real_send = EarlyBatch.send

    def send(self, agents):
        real_send(self, agents)
        sent_ahead.append(sorted(self.sent))

    monkeypatch.setattr(EarlyBatch, "send", send)
    state = make_sqlite_era_state(tmp_path)
    memory = state.workspace / "memory"
    memory.mkdir(parents=True)
    for day in range(1, 21):  # enough for INDEX.md, written after the files are sent
        (memory / f"2026-10-{day:02d}.md").write_text(f"# Day {day}\n\n" + "[FACT] noted.\n" * 300)

    result = run_cli(capsys, "--state-dir", state.state_dir, "--json", "checkpoint")

    assert result.exit_code == 0, result.stderr
    run = result.json()
    assert run["index"][0]["status"] == "written"
    assert sent_ahead == [["main"]]
    context = JobContext(
        config=defaults(), env=dict(os.environ), state_dir_override=state.state_dir
    )
    agent = context.deployment.default_agent()
    (taken,) = list_snapshots(context, agent.id)
    assert "memory/INDEX.md" in taken.changes.added
    assert snapshot_contents(context, taken) == workspace_files(context, agent)
    context.close()
