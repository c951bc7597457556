"""Pure parts of memory history: change sets, rewind plans, retention, paths, the stat manifest."""

from __future__ import annotations

import pytest

from memwarden.history.git import (
    STREAM_START,
    SnapshotCommit,
    TreeFile,
    batch_stream,
    blob_sha,
    quote_path,
    snapshot_part,
)
from memwarden.history.manifest import RACY_MARGIN_NS, Manifest, trusted_shas
from memwarden.history.model import Changes, Snapshot, compare
from memwarden.history.paths import matches, resolve_paths
from memwarden.history.retention import SECONDS_PER_DAY, expired
from memwarden.history.rewind import REFUSE, REMOVE, RESTORE, UNCHANGED, plan_rewind
from memwarden.history.scan import FileStat
from memwarden.process.errors import UsageError

NOW = 1_800_000_000.0


def test_compare_added_modified_removed_are_sorted_paths():
    old = {"a.md": "1", "b.md": "2", "gone.md": "3"}
    new = {"b.md": "2x", "a.md": "1", "z.md": "4", "new/x.md": "5"}
    assert compare(old, new) == Changes(["new/x.md", "z.md"], ["b.md"], ["gone.md"])
    assert not compare(old, dict(old))


def test_plan_rewind_restores_changed_and_missing_removes_new_keeps_equal():
    target = {"MEMORY.md": "aaa", "deleted.md": "bbb", "same.md": "ccc"}
    current = {"MEMORY.md": "zzz", "same.md": "ccc", "created.md": "ddd"}
    steps = {step.path: (step.action, step.sha) for step in plan_rewind(target, current, [])}
    assert steps == {
        "MEMORY.md": (RESTORE, "aaa"),
        "deleted.md": (RESTORE, "bbb"),
        "same.md": (UNCHANGED, "ccc"),
        "created.md": (REMOVE, None),
    }


def test_plan_rewind_symlink_in_folder_is_refused_never_written_or_removed():
    steps = plan_rewind({"MEMORY.md": "aaa"}, {}, ["MEMORY.md", "link-created-later.md"])
    assert [(step.path, step.action) for step in steps] == [
        ("MEMORY.md", REFUSE),
        ("link-created-later.md", REFUSE),
    ]
    assert "symlink" in steps[0].reason


def test_plan_rewind_with_paths_touches_only_those_files_and_folders():
    target = {"MEMORY.md": "a", "archive/2026-01/x.md": "b", "notes.md": "c"}
    current = {"MEMORY.md": "z", "archive/2026-01/y.md": "d", "notes.md": "zz"}
    steps = plan_rewind(target, current, [], ["archive"])
    assert [(step.path, step.action) for step in steps] == [
        ("archive/2026-01/x.md", RESTORE),
        ("archive/2026-01/y.md", REMOVE),
    ]


KNOWN = {"MEMORY.md", "memory/MEMORY.md", "memory/2026-11-21.md", "memory/archive/2026-01/x.md"}


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("MEMORY.md", "MEMORY.md"),  # the root file: workspace-relative first
        ("memory/MEMORY.md", "memory/MEMORY.md"),
        ("2026-11-21.md", "memory/2026-11-21.md"),  # relative to memory/, as before
        ("./archive/", "memory/archive"),
        ("archive\\2026-01\\x.md", "memory/archive/2026-01/x.md"),
        ("memory", "memory"),
    ],
)
def test_resolve_paths_takes_workspace_paths_and_memory_paths_where_unambiguous(typed, expected):
    assert resolve_paths([typed], KNOWN, "abcd1234") == [expected]


def test_resolve_paths_memory_relative_name_without_root_file_is_the_memory_file():
    assert resolve_paths(["MEMORY.md"], {"memory/MEMORY.md"}, "abcd1234") == ["memory/MEMORY.md"]


@pytest.mark.parametrize("typed", ["/etc/passwd", "../AGENTS.md", "memory/../../x", ".", ""])
def test_resolve_paths_leaving_the_workspace_raises_usage_error(typed):
    with pytest.raises(UsageError, match="inside the workspace"):
        resolve_paths([typed], KNOWN, "abcd1234")


def test_resolve_paths_unknown_path_names_the_snapshot():
    with pytest.raises(UsageError, match=r"--path nope\.md: not in snapshot abcd1234"):
        resolve_paths(["nope.md"], KNOWN, "abcd1234")


def test_matches_is_exact_or_folder_prefix_not_name_prefix():
    assert matches("archive/x.md", ["archive"])
    assert matches("MEMORY.md", [])
    assert not matches("archive-old/x.md", ["archive"])


def snapshot_at(snapshot_id: str, days_ago: float) -> Snapshot:
    return Snapshot(
        snapshot_id, "main", NOW - days_ago * SECONDS_PER_DAY, "manual", "c", 1, 1, Changes()
    )


def test_expired_drops_snapshots_older_than_retention_days():
    snapshots = [snapshot_at("new", 1), snapshot_at("mid", 29), snapshot_at("old", 31)]
    assert [s.id for s in expired(snapshots, NOW, retention_days=30, max_snapshots=500)] == ["old"]


def test_expired_keeps_at_most_max_snapshots_newest():
    snapshots = [snapshot_at(f"s{n}", n / 10) for n in range(6)]
    assert [s.id for s in expired(snapshots, NOW, 30, max_snapshots=4)] == ["s4", "s5"]


def test_expired_always_keeps_the_newest_even_when_old():
    snapshots = [snapshot_at("only", 400), snapshot_at("older", 500)]
    assert [s.id for s in expired(snapshots, NOW, 30, 1)] == ["older"]


def stat(mtime_ns: int, size: int = 10) -> FileStat:
    return FileStat(size, mtime_ns, mtime_ns, 1)


def test_trusted_shas_needs_same_stat_and_old_enough_mtime():
    hashed_at = 10_000_000_000_000
    old_enough = hashed_at - RACY_MARGIN_NS - 1
    manifest = Manifest(
        "id",
        "commit",
        hashed_at,
        {
            "stable.md": (stat(old_enough), "s1"),
            "racy.md": (stat(hashed_at - 1), "s2"),
            "resized.md": (stat(old_enough), "s3"),
        },
    )
    current = {
        "stable.md": stat(old_enough),
        "racy.md": stat(hashed_at - 1),
        "resized.md": stat(old_enough, size=11),
        "new.md": stat(old_enough),
    }
    assert trusted_shas(current, manifest) == {"stable.md": "s1"}
    assert trusted_shas(current, None) == {}


def test_blob_sha_is_gits_blob_id():
    # `printf 'hello\n' | git hash-object --stdin`, and the empty blob.
    assert blob_sha(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"
    assert blob_sha(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


def test_quote_path_escapes_quotes_backslashes_and_control_bytes():
    assert quote_path('a "b"\\c\nd é.md') == b'"a \\"b\\"\\\\c\\012d \xc3\xa9.md"'


def test_batch_stream_commits_each_snapshot_parentless_and_keeps_them_in_one_batch():
    # The stream BatchImport writes: its start, each snapshot, then the batch commit.
    ref = "refs/batches/0123"
    snapshots = [
        SnapshotCommit([TreeFile("memory/new.bin", "x", b"\0\1\2")], "one", 1700000000),
        SnapshotCommit([TreeFile("MEMORY.md", "f" * 40)], "two", 1700000001),
    ]
    parts = [snapshot_part(ref, mark, s) for mark, s in enumerate(snapshots, start=1)]
    end = batch_stream({ref: [":1", ":2", "e" * 40]}, "batch", 1700000002, first_mark=3)
    stream = STREAM_START + b"".join(parts) + end
    assert stream.startswith(b"feature done\nreset refs/batches/0123\ncommit refs/batches/0123\n")
    assert b'M 100644 inline "memory/new.bin"\ndata 3\n\x00\x01\x02\n' in stream
    assert b"M 100644 " + b"f" * 40 + b' "MEMORY.md"\n' in stream
    assert stream.count(b"reset refs/batches/0123\n") == 3
    assert b"mark :1\n" in stream and b"mark :2\n" in stream
    tail = b"mark :3\n" + stream.split(b"mark :3\n", 1)[1]
    assert b"merge :1\nmerge :2\nmerge " + b"e" * 40 + b"\n" in tail
    assert stream.endswith(b"\ndone\n")


def test_batch_stream_sets_each_ref_to_a_commit_of_the_given_parents():
    stream = batch_stream(
        {"refs/batches/a": ["1" * 40, "2" * 40], "refs/batches/b": ["3" * 40]}, "m", 1
    )
    assert stream.count(b"reset refs/batches/") == 2
    assert b"merge " + b"1" * 40 + b"\nmerge " + b"2" * 40 + b"\n" in stream
    assert stream.endswith(b"done\n")


def test_bootstrap_lengths_looked_up_only_for_an_unchanged_bootstrap_file(tmp_path):
    from memwarden.history.bootstrap_sizes import measure

    lookups = []

    def carried():
        lookups.append(True)
        return {"MEMORY.md": 7}

    assert measure(tmp_path, ["memory/a.md"], {"memory/a.md": b"x"}, carried) == {}
    assert measure(tmp_path, ["MEMORY.md"], {"MEMORY.md": b"abc\n"}, carried) == {"MEMORY.md": 3}
    assert lookups == []
    both = measure(tmp_path, ["MEMORY.md", "USER.md"], {"USER.md": b"u"}, carried)
    assert both == {"MEMORY.md": 7, "USER.md": 1} and lookups == [True]
