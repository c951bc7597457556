"""Unified diffs of memory files: text, added, removed, binary, final-newline-only changes."""

from __future__ import annotations

from memwarden.history.diffing import changed_paths, file_diff


def test_changed_paths_lists_only_differing_files_with_status():
    old = {"a.md": "1", "b.md": "2", "c.md": "3"}
    new = {"a.md": "1", "b.md": "22", "d.md": "4"}
    assert changed_paths(old, new) == [("b.md", "modified"), ("c.md", "removed"), ("d.md", "added")]


def test_file_diff_modified_text_is_unified_diff_with_labels():
    result = file_diff(
        "memory/MEMORY.md", "modified", b"one\ntwo\n", b"one\nthree\n", "snap a", "current"
    )
    assert result.lines == [
        "--- a/memory/MEMORY.md\tsnap a",
        "+++ b/memory/MEMORY.md\tcurrent",
        "@@ -1,2 +1,2 @@",
        " one",
        "-two",
        "+three",
    ]
    assert not result.binary


def test_file_diff_added_file_comes_from_dev_null():
    result = file_diff("memory/new.md", "added", None, b"hello\n", "snap a", "current")
    assert result.lines[:2] == ["--- /dev/null\tsnap a", "+++ b/memory/new.md\tcurrent"]
    assert result.lines[-1] == "+hello"


def test_file_diff_binary_content_is_reported_not_printed():
    result = file_diff("memory/blob.bin", "modified", b"\x00\x01", b"\x00\x02", "a", "b")
    assert result.binary
    assert result.lines == ["Binary file memory/blob.bin differs"]


def test_file_diff_invalid_utf8_counts_as_binary():
    assert file_diff("x.md", "modified", b"ok\n", b"\xff\xfe\n", "a", "b").binary


def test_file_diff_only_final_newline_differs_says_so():
    result = file_diff("memory/x.md", "modified", b"same", b"same\n", "a", "b")
    assert result.lines == ["memory/x.md: only line endings or the final newline differ"]
