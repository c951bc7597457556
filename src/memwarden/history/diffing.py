"""Unified diffs between two versions of a workspace's memory, file by file."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from memwarden.history.model import compare

ADDED, REMOVED, MODIFIED = "added", "removed", "modified"


@dataclass(frozen=True)
class FileDiff:
    """How one file differs: its status, and the unified diff lines (none when binary)."""

    path: str
    status: str
    binary: bool = False
    lines: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "status": self.status,
            "binary": self.binary,
            "diff": "\n".join(self.lines),
        }


def changed_paths(old: Mapping[str, str], new: Mapping[str, str]) -> list[tuple[str, str]]:
    """Given two {path: blob id} maps, return (path, status) for each differing file, sorted."""
    by_status = compare(old, new).to_json()  # {"added": [paths], "modified": …, "removed": …}
    return sorted((path, status) for status, paths in by_status.items() for path in paths)


def file_diff(
    path: str, status: str, old: bytes | None, new: bytes | None, old_label: str, new_label: str
) -> FileDiff:
    """Given a file's old and new bytes (None when absent) and labels, return its unified diff."""
    old_text, new_text = _text(old), _text(new)
    if old_text is None or new_text is None:
        return FileDiff(path, status, binary=True, lines=[f"Binary file {path} differs"])
    lines = difflib.unified_diff(
        old_text.splitlines(),
        new_text.splitlines(),
        fromfile=f"a/{path}" if old is not None else "/dev/null",
        tofile=f"b/{path}" if new is not None else "/dev/null",
        fromfiledate=old_label,
        tofiledate=new_label,
        lineterm="",
    )
    shown = list(lines)
    if not shown:
        shown = [f"{path}: only line endings or the final newline differ"]
    return FileDiff(path, status, lines=shown)


def _text(data: bytes | None) -> str | None:
    if data is None:
        return ""
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
