"""Snapshots of memory/: only on change, stored outside the workspace, git kept to itself."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from memwarden.history.manifest import load_manifests
from memwarden.history.plan import SnapshotRequest
from memwarden.history.records import snapshots
from memwarden.history.snapshots import snapshot, snapshot_agents
from memwarden.history.store import shared_store
from memwarden.process.runtime import JobContext
from support.history import (
    config_with,
    context_with_failing_fast_import,
    memory_paths,
    snapshot_contents,
    write_tree,
)
from support.written import is_private


def test_snapshot_first_run_records_every_file_byte_exact(context, agent):
    files = {"MEMORY.md": b"# Memory\n", "empty.md": b"", "sub/data.bin": bytes(range(256))}
    write_tree(agent.memory_dir, files)
    taken = snapshot(context, agent, "manual")
    assert taken is not None and len(taken.id) == 8 and len(taken.commit) == 40
    assert (taken.file_count, taken.total_bytes) == (3, 9 + 0 + 256)
    assert taken.changes.added == ["memory/MEMORY.md", "memory/empty.md", "memory/sub/data.bin"]
    assert snapshot_contents(context, taken) == memory_paths(files)


def test_snapshot_unchanged_folder_returns_none_and_records_nothing(context, agent):
    write_tree(agent.memory_dir, {"MEMORY.md": b"a\n"})
    first = snapshot(context, agent, "manual")
    assert snapshot(context, agent, "manual") is None
    assert [s.id for s in snapshots(context.state)] == [first.id]


def test_snapshot_after_edit_add_and_delete_lists_the_changes(context, agent):
    write_tree(agent.memory_dir, {"MEMORY.md": b"a\n", "old.md": b"x"})
    snapshot(context, agent, "manual")
    write_tree(agent.memory_dir, {"MEMORY.md": b"b\n", "new.md": b"y"})
    (agent.memory_dir / "old.md").unlink()
    request = SnapshotRequest(agent, "checkpoint", "agent:main:main", "s1")
    (result,) = snapshot_agents(context, [request])
    taken = result.snapshot
    assert taken.changes.to_json() == {
        "added": ["memory/new.md"],
        "modified": ["memory/MEMORY.md"],
        "removed": ["memory/old.md"],
    }
    assert (taken.trigger, taken.session_key, taken.session_id) == (
        "checkpoint",
        "agent:main:main",
        "s1",
    )


def test_snapshot_same_size_rewrite_within_the_same_second_is_seen(context, agent):
    path = agent.memory_dir / "MEMORY.md"
    write_tree(agent.memory_dir, {"MEMORY.md": b"aaaa"})
    first = snapshot(context, agent, "manual")
    stat = path.stat()
    path.write_bytes(b"bbbb")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    second = snapshot(context, agent, "manual")
    assert second is not None and second.changes.modified == ["memory/MEMORY.md"]
    assert snapshot_contents(context, second) == {"memory/MEMORY.md": b"bbbb"}
    assert first.commit != second.commit


def test_snapshot_records_event_with_trigger_and_changes(context, agent):
    write_tree(agent.memory_dir, {"MEMORY.md": b"a"})
    request = SnapshotRequest(agent, "rotate", "agent:main:main", "s2")
    (result,) = snapshot_agents(context, [request])
    taken = result.snapshot
    (event,) = context.state.events(types=["snapshot.taken"])
    assert (event["agent_id"], event["job"], event["session_key"]) == (
        "main",
        "rotate",
        "agent:main:main",
    )
    assert event["data"]["snapshot"] == taken.id
    assert event["data"]["trigger"] == "rotate"
    assert event["data"]["added"] == ["memory/MEMORY.md"]


def test_snapshot_store_is_private_and_outside_the_workspace(context, agent, gateway):
    write_tree(agent.memory_dir, {"MEMORY.md": b"a"})
    snapshot(context, agent, "manual")
    root = context.storage_dir / "history"
    assert (root / "snapshots.git" / "HEAD").is_file()
    assert gateway.workspace not in root.parents
    assert sorted(path.name for path in gateway.workspace.iterdir()) == ["memory"]
    for path in [root, *root.rglob("*")]:
        assert is_private(path), path
    assert not list((root / "snapshots.git" / "hooks").glob("*"))


def test_snapshot_store_is_made_with_its_settings_in_one_git_process(context, agent, monkeypatch):
    from memwarden.history import git

    calls = []
    real_run = git.GitStore.run
    monkeypatch.setattr(
        git.GitStore, "run", lambda self, a, **k: calls.append(a[0]) or real_run(self, a, **k)
    )
    write_tree(agent.memory_dir, {"MEMORY.md": b"a"})
    snapshot(context, agent, "manual")
    store = context.storage_dir / "history" / "snapshots.git"

    assert calls.count("init") == 1 and "config" not in calls
    settings = {
        "core.hooksPath": "/dev/null",
        "core.symlinks": "false",
        "core.fsync": "objects,reference",
        "gc.auto": "0",
        "fastimport.unpackLimit": "1",
        "pack.compression": "1",
    }
    for key, value in settings.items():
        read = subprocess.run(
            ["git", "config", "--file", str(store / "config"), "--get", key],
            capture_output=True,
            text=True,
            check=True,
        )
        assert read.stdout.strip() == value, key
    assert sorted(path.name for path in store.iterdir()) == ["HEAD", "config", "objects", "refs"]


def test_snapshot_leaves_operator_git_repository_untouched_and_ignores_git_env(
    context, agent, gateway, monkeypatch
):
    workspace = gateway.workspace
    write_tree(agent.memory_dir, {"MEMORY.md": b"tracked by the operator\n"})
    operator = {"cwd": workspace, "capture_output": True, "check": True}
    subprocess.run(["git", "init", "-q"], **operator)
    subprocess.run(["git", "add", "-A"], **operator)
    subprocess.run(
        ["git", "-c", "user.name=op", "-c", "user.email=op@x", "commit", "-qm", "mine"], **operator
    )
    before = _tree_fingerprint(workspace / ".git")
    monkeypatch.setenv("GIT_DIR", str(workspace / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(workspace / ".git" / "index"))
    monkeypatch.setenv("GIT_WORK_TREE", str(workspace))
    (agent.memory_dir / "MEMORY.md").write_bytes(b"changed\n")
    taken = snapshot(context, agent, "manual")
    assert taken is not None
    assert _tree_fingerprint(workspace / ".git") == before
    assert "memory/MEMORY.md" in shared_store(context).listing(taken.commit)


def test_snapshot_skips_symlinks_and_nested_git_and_temp_files(context, agent, tmp_path):
    outside = tmp_path / "secret.txt"
    outside.write_text("not memory")
    write_tree(
        agent.memory_dir,
        {"MEMORY.md": b"a", ".git/HEAD": b"ref", ".MEMORY.md.123.tmp": b"half"},
    )
    (agent.memory_dir / "link.md").symlink_to(outside)
    taken = snapshot(context, agent, "manual")
    assert snapshot_contents(context, taken) == {"memory/MEMORY.md": b"a"}


def test_snapshot_dry_run_writes_nothing_and_returns_would_be_snapshot(context, agent):
    write_tree(agent.memory_dir, {"MEMORY.md": b"a"})
    would = snapshot(context, agent, "manual", dry_run=True)
    assert would is not None and would.id is None and would.changes.added == ["memory/MEMORY.md"]
    assert not (context.storage_dir / "history").exists()
    assert snapshots(context.state) == []


def test_snapshot_automatic_trigger_when_disabled_does_nothing(gateway, agent):
    config = config_with({"history.enabled": False})
    context = JobContext(config=config, env=dict(os.environ), state_dir_override=gateway.state_dir)
    write_tree(agent.memory_dir, {"MEMORY.md": b"a"})
    assert snapshot(context, agent, "checkpoint") is None
    assert snapshot(context, agent, "manual") is not None
    context.close()


def test_snapshot_lost_manifest_compares_with_last_snapshot_in_store(context, agent):
    write_tree(agent.memory_dir, {"MEMORY.md": b"a"})
    snapshot(context, agent, "manual")
    with context.state.transaction() as connection:
        connection.execute("DELETE FROM history_manifests")
    assert load_manifests(context.state, ["main"]) == {}
    assert snapshot(context, agent, "manual") is None
    (agent.memory_dir / "MEMORY.md").write_bytes(b"b")
    assert snapshot(context, agent, "manual").changes.modified == ["memory/MEMORY.md"]


def test_snapshot_empty_memory_without_history_is_none(context, agent):
    assert snapshot(context, agent, "manual") is None


def test_snapshot_memory_folder_linked_outside_workspace_is_refused(context, agent, tmp_path):
    from memwarden.process.errors import UnsafePathError

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    agent.memory_dir.symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(UnsafePathError, match="outside the workspace"):
        snapshot(context, agent, "manual")


def test_snapshot_memory_folder_linked_to_the_workspace_itself_is_refused(context, agent):
    # Stricter than files.check_inside: memory/ as the workspace would take every workspace file
    # as one of memory/'s, and a rewind would remove those the snapshot lacks.
    from memwarden.process.errors import UnsafePathError

    (agent.workspace / "AGENTS.md").write_text("the operator's\n")
    agent.memory_dir.symlink_to(".", target_is_directory=True)
    with pytest.raises(UnsafePathError, match="a link to the workspace itself"):
        snapshot(context, agent, "manual")
    assert snapshots(context.state, agent.id) == []


def _tree_fingerprint(folder: Path) -> dict[str, bytes]:
    return {str(path): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def test_snapshot_without_git_fails_with_one_clear_line(gateway, agent):
    from memwarden.history.model import HistoryError

    config = config_with({"history.git": "/nonexistent/bin/git"})
    context = JobContext(config=config, env=dict(os.environ), state_dir_override=gateway.state_dir)
    write_tree(agent.memory_dir, {"MEMORY.md": b"a"})
    with pytest.raises(HistoryError, match="git not found; memory history needs git"):
        snapshot(context, agent, "manual")
    context.close()


def test_snapshot_after_the_store_lost_blobs_sends_every_file_again(context, agent):
    write_tree(agent.memory_dir, {"MEMORY.md": b"kept as it is\n", "daily.md": b"day 1\n"})
    snapshot(context, agent, "manual")
    store = shared_store(context)
    shutil.rmtree(store.git_dir / "objects")  # the store emptied behind memwarden's back
    (store.git_dir / "objects" / "pack").mkdir(parents=True)
    (agent.memory_dir / "daily.md").write_bytes(b"day 2\n")
    taken = snapshot(context, agent, "checkpoint")
    assert taken.changes.modified == ["memory/daily.md"]
    assert snapshot_contents(context, taken) == {
        "memory/MEMORY.md": b"kept as it is\n",
        "memory/daily.md": b"day 2\n",
    }
    assert not list(store.git_dir.glob("memwarden-marks-*"))


def test_snapshot_when_git_dies_before_reading_fails_with_its_reason(gateway, tmp_path):
    from memwarden.history.model import HistoryError

    context = context_with_failing_fast_import(
        gateway.state_dir,
        tmp_path,
        'echo "fatal: cannot lock the pack (simulated)" >&2; exit 128',
    )
    agent = context.deployment.default_agent()
    # More than the pipe holds: writing the stream finds the pipe broken.
    write_tree(agent.memory_dir, {"big.md": os.urandom(3 << 20), "small.md": b"x"})
    (result,) = snapshot_agents(context, [SnapshotRequest(agent, "checkpoint")])
    assert result.snapshot is None
    assert isinstance(result.error, HistoryError)
    assert "git fast-import failed: fatal: cannot lock the pack" in result.error.message
    assert load_manifests(context.state, [agent.id]) == {}
    context.close()


def test_snapshot_when_git_fast_import_fails_records_nothing_and_says_why(gateway, tmp_path):
    from memwarden.history.model import HistoryError

    context = context_with_failing_fast_import(
        gateway.state_dir,
        tmp_path,
        'cat >/dev/null; echo "fatal: out of disk space (simulated)" >&2; exit 128',
    )
    agent = context.deployment.default_agent()
    write_tree(agent.memory_dir, {"MEMORY.md": b"a"})
    with pytest.raises(HistoryError, match="git fast-import failed: fatal: out of disk space"):
        snapshot(context, agent, "manual")
    assert snapshots(context.state) == []
    assert load_manifests(context.state, ["main"]) == {}
    assert not list(shared_store(context).git_dir.glob("memwarden-marks-*"))
    context.close()
