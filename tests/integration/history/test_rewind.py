"""Rewind: byte-exact round trips, single paths, undo, symlink refusal, dry run."""

from __future__ import annotations

from pathlib import Path

import pytest

from memwarden.history.records import snapshots
from memwarden.history.rewind import rewind
from memwarden.history.snapshots import snapshot
from memwarden.process.errors import UnsafePathError, UsageError
from support.history import write_tree

BINARY = bytes(range(256)) * 3 + b"\r\n\x00\xff"
BEFORE = {
    "MEMORY.md": "# Memory\nthe user prefers tea ☕\n".encode(),
    "empty.md": b"",
    "data/blob.bin": BINARY,
    "2026-11-20.md": b"no final newline",
    "deleted-later.md": b"gone soon\n",
}


def read_tree(memory: Path) -> dict[str, bytes]:
    return {
        path.relative_to(memory).as_posix(): path.read_bytes()
        for path in memory.rglob("*")
        if path.is_file() and not path.is_symlink()
    }


def damage(memory: Path) -> None:
    """What a bad compaction flush and a confused agent do: clobber, empty, delete, add."""
    (memory / "MEMORY.md").write_bytes(b"# Memory\n(nothing)\n")
    (memory / "empty.md").write_bytes(b"now it has text")
    (memory / "data" / "blob.bin").write_bytes(BINARY[::-1])
    (memory / "deleted-later.md").unlink()
    write_tree(memory, {"created-after.md": b"new", "new-folder/deep/x.md": b"x"})


def test_rewind_restores_every_file_byte_exact_and_removes_new_files(context, agent):
    write_tree(agent.memory_dir, BEFORE)
    good = snapshot(context, agent, "manual")
    damage(agent.memory_dir)
    report = rewind(context, good.id)
    assert read_tree(agent.memory_dir) == BEFORE
    assert not (agent.memory_dir / "new-folder").exists()
    statuses = {outcome.path: outcome.status for outcome in report.outcomes}
    assert statuses == {
        "memory/MEMORY.md": "restored",
        "memory/empty.md": "restored",
        "memory/data/blob.bin": "restored",
        "memory/2026-11-20.md": "unchanged",
        "memory/deleted-later.md": "restored",
        "memory/created-after.md": "removed",
        "memory/new-folder/deep/x.md": "removed",
    }
    assert not report.failed


def test_rewind_restored_files_are_private(context, agent):
    write_tree(agent.memory_dir, BEFORE)
    good = snapshot(context, agent, "manual")
    damage(agent.memory_dir)
    rewind(context, good.id)
    assert (agent.memory_dir / "MEMORY.md").stat().st_mode & 0o777 == 0o600


def test_rewind_saves_current_state_first_and_can_be_undone(context, agent):
    write_tree(agent.memory_dir, BEFORE)
    good = snapshot(context, agent, "manual")
    damage(agent.memory_dir)
    damaged = read_tree(agent.memory_dir)
    report = rewind(context, good.id)
    assert report.saved_now
    (pre_rewind,) = [s for s in snapshots(context.state) if s.trigger == "pre-rewind"]
    assert report.undo_id == pre_rewind.id
    undo = rewind(context, report.undo_id)
    assert read_tree(agent.memory_dir) == damaged
    assert not undo.failed


def test_rewind_when_current_state_is_already_saved_points_to_that_snapshot(context, agent):
    write_tree(agent.memory_dir, BEFORE)
    good = snapshot(context, agent, "manual")
    damage(agent.memory_dir)
    latest = snapshot(context, agent, "checkpoint")
    report = rewind(context, good.id)
    assert (report.saved_now, report.undo_id) == (False, latest.id)


def test_rewind_single_path_leaves_other_files_alone(context, agent):
    write_tree(agent.memory_dir, BEFORE)
    good = snapshot(context, agent, "manual")
    damage(agent.memory_dir)
    damaged = read_tree(agent.memory_dir)
    report = rewind(context, good.id, paths=["memory/MEMORY.md"])
    assert [(o.path, o.status) for o in report.outcomes] == [("memory/MEMORY.md", "restored")]
    assert read_tree(agent.memory_dir) == damaged | {"MEMORY.md": BEFORE["MEMORY.md"]}


def test_rewind_path_of_deleted_file_brings_it_back(context, agent):
    write_tree(agent.memory_dir, BEFORE)
    good = snapshot(context, agent, "manual")
    damage(agent.memory_dir)
    rewind(context, good.id, paths=["deleted-later.md"])
    assert (agent.memory_dir / "deleted-later.md").read_bytes() == b"gone soon\n"


def test_rewind_unknown_path_is_usage_error_before_anything_changes(context, agent):
    write_tree(agent.memory_dir, BEFORE)
    good = snapshot(context, agent, "manual")
    damage(agent.memory_dir)
    with pytest.raises(UsageError, match=r"--path nope\.md: not in snapshot"):
        rewind(context, good.id, paths=["nope.md"])
    assert len(snapshots(context.state)) == 1


def test_rewind_dry_run_changes_nothing_and_says_what_would_happen(context, agent):
    write_tree(agent.memory_dir, BEFORE)
    good = snapshot(context, agent, "manual")
    damage(agent.memory_dir)
    damaged = read_tree(agent.memory_dir)
    report = rewind(context, good.id, dry_run=True)
    assert read_tree(agent.memory_dir) == damaged
    assert len(snapshots(context.state)) == 1
    statuses = {o.path: o.status for o in report.outcomes}
    assert statuses["memory/MEMORY.md"] == "would restore"
    assert statuses["memory/created-after.md"] == "would remove"
    assert report.saved_now and report.undo_id is None


def test_rewind_refuses_symlink_in_memory_and_never_writes_through_it(context, agent, tmp_path):
    write_tree(agent.memory_dir, BEFORE)
    good = snapshot(context, agent, "manual")
    outside = tmp_path / "outside.md"
    outside.write_bytes(b"operator's file outside the workspace")
    (agent.memory_dir / "MEMORY.md").unlink()
    (agent.memory_dir / "MEMORY.md").symlink_to(outside)
    (agent.memory_dir / "extra-link.md").symlink_to(outside)
    report = rewind(context, good.id)
    failed = {o.path: o.error for o in report.failed}
    assert set(failed) == {"memory/MEMORY.md", "memory/extra-link.md"}
    assert all("symlink" in error for error in failed.values())
    assert outside.read_bytes() == b"operator's file outside the workspace"
    assert (agent.memory_dir / "extra-link.md").is_symlink()
    assert (agent.memory_dir / "deleted-later.md").exists()


def test_rewind_refuses_symlinked_folder_leading_out_of_memory(context, agent, tmp_path):
    write_tree(agent.memory_dir, BEFORE)
    good = snapshot(context, agent, "manual")
    outside = tmp_path / "outside-folder"
    outside.mkdir()
    for path in (agent.memory_dir / "data").iterdir():
        path.unlink()
    (agent.memory_dir / "data").rmdir()
    (agent.memory_dir / "data").symlink_to(outside, target_is_directory=True)
    report = rewind(context, good.id)
    failed = {o.path: o.error for o in report.failed}
    assert set(failed) == {"memory/data", "memory/data/blob.bin"}
    assert "symlink" in failed["memory/data"]
    assert "outside" in failed["memory/data/blob.bin"]
    assert list(outside.iterdir()) == []


DONE = {"would restore": "restored", "would remove": "removed"}


def test_rewind_dry_run_predicts_the_refusals_of_the_real_run(context, agent, tmp_path):
    """memory/sessions, a folder of the snapshot, is now a symlink leading out of the workspace:
    the dry run refuses to restore the file under it, as the real run does."""
    write_tree(agent.memory_dir, {**BEFORE, "sessions/x.md": b"a handoff\n"})
    good = snapshot(context, agent, "manual")
    damage(agent.memory_dir)
    outside = tmp_path / "outside-folder"
    outside.mkdir()
    (agent.memory_dir / "sessions" / "x.md").unlink()
    (agent.memory_dir / "sessions").rmdir()
    (agent.memory_dir / "sessions").symlink_to(outside, target_is_directory=True)

    predicted = rewind(context, good.id, dry_run=True).outcomes
    done = rewind(context, good.id).outcomes

    assert [(o.path, DONE.get(o.status, o.status), o.error) for o in predicted] == [
        (o.path, o.status, o.error) for o in done
    ]
    failed = {o.path: o.error for o in predicted if o.status == "failed"}
    assert set(failed) == {"memory/sessions", "memory/sessions/x.md"}
    assert "resolves outside" in failed["memory/sessions/x.md"]
    assert list(outside.iterdir()) == []


def test_rewind_memory_folder_linked_outside_workspace_is_refused(context, agent, tmp_path):
    write_tree(agent.memory_dir, BEFORE)
    good = snapshot(context, agent, "manual")
    moved = tmp_path / "moved-memory"
    agent.memory_dir.rename(moved)
    agent.memory_dir.symlink_to(moved, target_is_directory=True)
    with pytest.raises(UnsafePathError, match="outside the workspace"):
        rewind(context, good.id)


def test_rewind_file_replaced_by_folder_and_back(context, agent):
    write_tree(agent.memory_dir, {"notes": b"a file"})
    as_file = snapshot(context, agent, "manual")
    (agent.memory_dir / "notes").unlink()
    write_tree(agent.memory_dir, {"notes/inside.md": b"now a folder"})
    as_folder = snapshot(context, agent, "manual")
    rewind(context, as_file.id)
    assert read_tree(agent.memory_dir) == {"notes": b"a file"}
    rewind(context, as_folder.id)
    assert read_tree(agent.memory_dir) == {"notes/inside.md": b"now a folder"}


def test_rewind_records_event_with_undo_snapshot(context, agent):
    write_tree(agent.memory_dir, BEFORE)
    good = snapshot(context, agent, "manual")
    damage(agent.memory_dir)
    report = rewind(context, good.id)
    (event,) = context.state.events(types=["rewind.done"])
    assert event["agent_id"] == "main"
    assert event["data"]["snapshot"] == good.id
    assert event["data"]["undo_snapshot"] == report.undo_id
    assert event["data"]["removed"] == ["memory/created-after.md", "memory/new-folder/deep/x.md"]


def test_rewind_unknown_or_ambiguous_id_is_usage_error(context, agent):
    with pytest.raises(UsageError, match="no such snapshot"):
        rewind(context, "deadbeef")
    with pytest.raises(UsageError, match="not a snapshot id"):
        rewind(context, "xy")
