"""History of the whole workspace: root files, workspace-relative paths, missing workspaces,
temp files with their real names, one git process for many agents, and stores from before."""

from __future__ import annotations

import os
import shutil

import json5
import pytest

from memwarden.fs.files import TEMP_NAME, write_temp
from memwarden.history.diffing import diff
from memwarden.history.git import BATCH_REFS, GitStore, SnapshotCommit, TreeFile, blob_sha
from memwarden.history.model import HistoryError
from memwarden.history.plan import SnapshotRequest
from memwarden.history.records import snapshots
from memwarden.history.rewind import rewind
from memwarden.history.snapshots import snapshot, snapshot_agents
from memwarden.history.store import shared_store
from memwarden.process.errors import UsageError
from memwarden.process.runtime import JobContext
from memwarden.settings.config import defaults
from support.deployments import write_json5_config
from support.history import config_with, snapshot_contents, write_tree

ROOT = {"MEMORY.md": b"# Memory\n- root fact\n", "SOUL.md": b"be kind\n"}
MEMORY = {"2026-11-21.md": b"daily\n", "MEMORY.md": b"# not the root one\n"}


def fill(agent, root=ROOT, memory=MEMORY) -> None:
    write_tree(agent.workspace, root)
    write_tree(agent.memory_dir, memory)


def test_snapshot_keeps_root_files_and_memory_with_workspace_paths(context, agent):
    fill(agent)
    (agent.workspace / "NOTES.md").write_bytes(b"not a root file history keeps")
    taken = snapshot(context, agent, "manual")
    assert snapshot_contents(context, taken) == {
        "MEMORY.md": ROOT["MEMORY.md"],
        "SOUL.md": ROOT["SOUL.md"],
        "memory/2026-11-21.md": MEMORY["2026-11-21.md"],
        "memory/MEMORY.md": MEMORY["MEMORY.md"],
    }
    assert taken.roots == tuple(defaults().history.root_files)


def test_snapshot_root_files_follow_the_setting_and_never_follow_links(gateway, tmp_path):
    config = config_with({"history.root_files": ["SOUL.md", "TOOLS.md"]})
    context = JobContext(config=config, env=dict(os.environ), state_dir_override=gateway.state_dir)
    agent = context.deployment.default_agent()
    fill(agent)
    (tmp_path / "shared-tools.md").write_bytes(b"shared")
    (agent.workspace / "TOOLS.md").symlink_to(tmp_path / "shared-tools.md")
    taken = snapshot(context, agent, "manual")
    assert sorted(snapshot_contents(context, taken)) == [
        "SOUL.md",
        "memory/2026-11-21.md",
        "memory/MEMORY.md",
    ]
    context.close()


def test_root_files_setting_refuses_paths():
    from memwarden.process.errors import ConfigError
    from memwarden.settings.config import load

    env = {"MEMWARDEN_HISTORY_ROOT_FILES": '["MEMORY.md", "../etc/passwd"]'}
    with pytest.raises(
        ConfigError, match=r"history.root_files.*'../etc/passwd' is not a file name"
    ):
        load(None, env=env)


@pytest.mark.parametrize("broken", ["missing", "not a folder"])
def test_snapshot_of_missing_workspace_is_an_error_and_records_nothing(context, agent, broken):
    fill(agent)
    first = snapshot(context, agent, "manual")
    shutil.rmtree(agent.workspace)
    if broken == "not a folder":
        agent.workspace.write_bytes(b"")
    with pytest.raises(HistoryError, match="workspace"):
        snapshot(context, agent, "checkpoint")
    assert [s.id for s in snapshots(context.state)] == [first.id]


def test_snapshot_of_emptied_mount_point_is_an_error_not_every_file_deleted(context, agent):
    fill(agent)
    first = snapshot(context, agent, "manual")
    for path in list(agent.workspace.iterdir()):
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    with pytest.raises(HistoryError, match="has no memory/ folder and none of the root files"):
        snapshot(context, agent, "checkpoint")
    assert [s.id for s in snapshots(context.state)] == [first.id]


def test_snapshot_with_unreadable_folder_is_an_error_not_its_files_deleted(
    context, agent, monkeypatch
):
    fill(agent, memory={"archive/old.md": b"old\n"})
    first = snapshot(context, agent, "manual")
    unreadable = str(agent.memory_dir / "archive")
    real_scandir = os.scandir

    def scandir(path):  # what a folder without read permission gives (root reads them all)
        if str(path) == unreadable:
            raise PermissionError(13, "Permission denied", unreadable)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.raises(HistoryError, match="archive: cannot read this folder: Permission denied"):
        snapshot(context, agent, "checkpoint")
    assert [s.id for s in snapshots(context.state)] == [first.id]


def test_snapshot_leaves_out_temp_files_with_the_names_memwarden_really_gives_them(context, agent):
    fill(agent)
    # A run killed between writing its temp file and renaming it leaves exactly this behind.
    temp = write_temp(agent.memory_dir / "ACTIVE_CONTEXT.md", b"half written")
    assert temp.name.startswith(".ACTIVE_CONTEXT.md.") and TEMP_NAME.match(temp.name)
    taken = snapshot(context, agent, "manual")
    assert not [path for path in snapshot_contents(context, taken) if ".tmp" in path]
    rewind(context, taken.id)
    assert temp.read_bytes() == b"half written"  # never removed by a rewind either


def test_temp_name_matches_memwarden_temp_files_only():
    assert TEMP_NAME.match(".2026-11-22.md.k3j_x8a0.tmp")
    assert TEMP_NAME.match(".MEMORY.md.12345.tmp")
    assert not TEMP_NAME.match("notes.tmp")
    assert not TEMP_NAME.match(".memwarden-bootstrap.json")


def two_agents(gateway, tmp_path, context):
    config = json5.loads(gateway.config_path.read_text())
    ops = tmp_path / "workspace-ops"
    config["agents"]["list"] = [
        {"id": "main", "default": True},
        {"id": "ops", "workspace": str(ops)},
        {"id": "gone", "workspace": str(tmp_path / "missing")},
    ]
    write_json5_config(gateway.config_path, config)
    ops.mkdir()
    return [context.deployment.agent(name) for name in ("main", "ops", "gone")]


def test_snapshot_agents_commits_every_changed_agent_in_one_git_process(
    context, gateway, tmp_path, monkeypatch
):
    agents = two_agents(gateway, tmp_path, context)
    for agent in agents[:2]:
        fill(agent)
    calls = []
    real_run, real_start = GitStore.run, GitStore.start

    def counting_run(self, arguments, stdin=None):
        calls.append(arguments[0])
        return real_run(self, arguments, stdin)

    def counting_start(self, arguments, stderr, env=None):
        calls.append(arguments[0])
        return real_start(self, arguments, stderr, env)

    monkeypatch.setattr(GitStore, "run", counting_run)
    monkeypatch.setattr(GitStore, "start", counting_start)
    results = snapshot_agents(context, [SnapshotRequest(a, "checkpoint") for a in agents])
    assert calls.count("fast-import") == 1
    assert [r.agent_id for r in results] == ["main", "ops", "gone"]
    assert results[0].snapshot and results[1].snapshot and results[2].snapshot is None
    assert "does not exist" in results[2].error.message
    assert results[2].problem.startswith("snapshot of agent gone's memory failed: ")
    (ref,) = shared_store(context).refs(BATCH_REFS)
    assert sorted(shared_store(context).parents([ref])) == sorted(
        r.snapshot.commit for r in results[:2]
    )
    calls.clear()
    again = snapshot_agents(context, [SnapshotRequest(a, "checkpoint") for a in agents[:2]])
    assert [r.snapshot for r in again] == [None, None] and calls == []


def test_rewind_one_root_file_touches_nothing_else(context, agent):
    fill(agent)
    good = snapshot(context, agent, "manual")
    (agent.workspace / "MEMORY.md").write_bytes(b"clobbered\n")
    (agent.workspace / "SOUL.md").write_bytes(b"changed on purpose\n")
    (agent.memory_dir / "MEMORY.md").write_bytes(b"changed too\n")
    report = rewind(context, good.id, paths=["MEMORY.md"])
    assert [(o.path, o.status) for o in report.outcomes] == [("MEMORY.md", "restored")]
    assert (agent.workspace / "MEMORY.md").read_bytes() == ROOT["MEMORY.md"]
    assert (agent.workspace / "SOUL.md").read_bytes() == b"changed on purpose\n"
    assert (agent.memory_dir / "MEMORY.md").read_bytes() == b"changed too\n"


def test_rewind_whole_snapshot_removes_root_files_created_after_it(context, agent):
    fill(agent)
    good = snapshot(context, agent, "manual")
    (agent.workspace / "DREAMS.md").write_bytes(b"new\n")
    (agent.workspace / "NOTES.md").write_bytes(b"not kept by history\n")
    report = rewind(context, good.id)
    assert {o.path: o.status for o in report.outcomes}["DREAMS.md"] == "removed"
    assert not (agent.workspace / "DREAMS.md").exists()
    assert (agent.workspace / "NOTES.md").exists()


def test_path_given_relative_to_memory_still_works_where_no_root_file_has_that_name(context, agent):
    fill(agent, root={"SOUL.md": b"soul\n"})
    good = snapshot(context, agent, "manual")
    (agent.memory_dir / "MEMORY.md").write_bytes(b"changed\n")
    report = rewind(context, good.id, paths=["MEMORY.md"])
    assert [(o.path, o.status) for o in report.outcomes] == [("memory/MEMORY.md", "restored")]
    files = [f.path for f in diff(context, good.id, paths=["2026-11-21.md"]).files]
    assert files == []
    with pytest.raises(UsageError, match="not in snapshot"):
        rewind(context, good.id, paths=["USER.md"])


def legacy_snapshot(context, agent_id: str, snapshot_id: str, files: dict[str, bytes], at: float):
    """Write a snapshot as memwarden kept them before root files: memory/ alone, paths relative
    to it, in the agent's own repository with a ref per snapshot (layout 1)."""
    store = GitStore(context.storage_dir / "history" / agent_id / "repo.git")
    store.init()
    tree = [TreeFile(path, blob_sha(data), data) for path, data in sorted(files.items())]
    ref = f"refs/snapshots/{snapshot_id}"
    (commit,) = store.commit_batch(ref, [SnapshotCommit(tree, "legacy\n", int(at))], "m\n", int(at))
    with context.state.transaction() as connection:
        connection.execute(
            "INSERT INTO history_snapshots (id, agent_id, created_at, trigger_kind, commit_sha, "
            "file_count, total_bytes, changes_json) VALUES (?, ?, ?, 'checkpoint', ?, ?, 0, ?)",
            (snapshot_id, agent_id, at, commit, len(files), '{"added": ["MEMORY.md"]}'),
        )
    (context.storage_dir / "history" / agent_id / "manifest.json").write_text("{}")
    return commit


def test_history_from_before_root_files_keeps_working_after_upgrade(context, agent):
    fill(agent, root={"MEMORY.md": b"root\n"}, memory={"MEMORY.md": b"old memory file\n"})
    legacy_snapshot(context, "main", "01d0a11d", {"MEMORY.md": b"old memory file\n"}, 1.0e9)
    (old,) = snapshots(context.state)
    assert old.legacy and old.changes.added == ["memory/MEMORY.md"]
    taken = snapshot(context, agent, "checkpoint")
    assert taken.changes.to_json() == {"added": ["MEMORY.md"], "modified": [], "removed": []}
    (agent.memory_dir / "MEMORY.md").write_bytes(b"clobbered\n")
    (agent.workspace / "MEMORY.md").write_bytes(b"root changed\n")
    report = rewind(context, "01d0a11d", paths=["MEMORY.md"])  # memory/MEMORY.md: the legacy scope
    assert [(o.path, o.status) for o in report.outcomes] == [("memory/MEMORY.md", "restored")]
    assert (agent.memory_dir / "MEMORY.md").read_bytes() == b"old memory file\n"
    assert (agent.workspace / "MEMORY.md").read_bytes() == b"root changed\n"
    whole = rewind(context, "01d0a11d")
    assert all(o.path.startswith("memory/") for o in whole.outcomes)


def test_prune_removes_the_old_repository_with_its_last_snapshot(gateway, agent, tmp_path):
    config = config_with({"history.max_snapshots": 1})
    context = JobContext(config=config, env=dict(os.environ), state_dir_override=gateway.state_dir)
    fill(agent)
    legacy_snapshot(context, "main", "01d0a11d", {"MEMORY.md": b"x\n"}, 1.0e9)
    snapshot(context, agent, "manual")
    result = context_prune(context)
    assert result.data["agents"]["main"]["pruned"] == ["01d0a11d"]
    assert not (context.storage_dir / "history" / "main").exists()
    assert [s.legacy for s in snapshots(context.state)] == [False]
    context.close()


def context_prune(context):
    from memwarden.history.retention import prune

    return prune(context)
