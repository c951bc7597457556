"""Pure parts of memory history: change sets, rewind plans, retention, paths, the stat manifest."""

from __future__ import annotations

import pytest

from memwarden.errors import UsageError
from memwarden.history.git import TreeFile, blob_sha, fast_import_stream, quote_path
from memwarden.history.manifest import RACY_MARGIN_NS, Manifest, trusted_shas
from memwarden.history.model import Changes, Snapshot, compare
from memwarden.history.paths import matches, normalize_paths
from memwarden.history.retention import SECONDS_PER_DAY, expired
from memwarden.history.rewind import REFUSE, REMOVE, RESTORE, UNCHANGED, plan_rewind
from memwarden.history.scan import FileStat

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


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("MEMORY.md", "MEMORY.md"),
        ("memory/MEMORY.md", "MEMORY.md"),
        ("./archive/", "archive"),
        ("archive\\2026-01\\x.md", "archive/2026-01/x.md"),
    ],
)
def test_normalize_paths_accepts_forms_relative_to_memory(typed, expected):
    assert normalize_paths([typed]) == [expected]


@pytest.mark.parametrize("typed", ["/etc/passwd", "../AGENTS.md", "memory/../../x", "."])
def test_normalize_paths_leaving_memory_raises_usage_error(typed):
    with pytest.raises(UsageError, match="inside memory/"):
        normalize_paths([typed])


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


def test_fast_import_stream_inlines_new_bytes_and_references_known_blobs():
    stream = fast_import_stream(
        "refs/snapshots/abcd1234",
        [TreeFile("new.bin", "x", b"\0\1\2"), TreeFile("same.md", "f" * 40)],
        "message",
        1700000000,
    )
    assert stream.startswith(b"feature done\ncommit refs/snapshots/abcd1234\nmark :1\n")
    assert b'M 100644 inline "new.bin"\ndata 3\n\x00\x01\x02\n' in stream
    assert b"M 100644 " + b"f" * 40 + b' "same.md"\n' in stream
    assert stream.endswith(b"get-mark :1\ndone\n")
