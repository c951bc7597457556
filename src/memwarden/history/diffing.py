"""Diff two snapshots of an agent (or one against its current files), file by file, as
unified diffs."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memwarden.fs.files import read_bytes
from memwarden.history import records
from memwarden.history.git import GitStore, blob_sha
from memwarden.history.model import Snapshot, compare
from memwarden.history.paths import matches, resolve_paths
from memwarden.history.scan import scan_workspace
from memwarden.history.store import snapshot_tree, store_of
from memwarden.process.errors import MemwardenError, UsageError
from memwarden.process.runtime import JobContext

__all__ = ["DiffReport", "diff"]


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


@dataclass
class DiffReport:
    """The two sides compared (`to` None: the current files) and the differing files."""

    source: Snapshot
    to: Snapshot | None
    files: list[FileDiff] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "from": self.source.to_json(),
            "to": self.to.to_json() if self.to else "current",
            "files": [file.to_json() for file in self.files],
        }


def diff(
    context: JobContext, from_id: str, to_id: str | None = None, paths: Sequence[str] = ()
) -> DiffReport:
    """Given a snapshot id and another (default: the agent's current files, as far as the
    snapshot covers them), return the diff.

    Raise UsageError if an id is unknown or the two snapshots belong to different agents.
    """
    source = records.find(context.state, from_id)
    to = records.find(context.state, to_id) if to_id else None
    if to is not None and to.agent_id != source.agent_id:
        raise UsageError(
            f"snapshots {source.id} and {to.id} belong to different agents "
            f"({source.agent_id}, {to.agent_id}); compare snapshots of one agent"
        )
    old_tree = snapshot_tree(context, source)
    if to is None:
        current = _current_files(context, source)
        new_tree = {path: blob_sha(data) for path, data in current.items()}
    else:
        new_tree = snapshot_tree(context, to)
    wanted = resolve_paths(paths, {*old_tree, *new_tree}, source.id or "")
    old = {path: sha for path, sha in old_tree.items() if matches(path, wanted)}
    new = {path: sha for path, sha in new_tree.items() if matches(path, wanted)}
    changed = changed_paths(old, new)
    before = _contents(store_of(context, source), old, changed)
    after = current if to is None else _contents(store_of(context, to), new, changed)
    labels = f"snapshot {source.id}", f"snapshot {to.id}" if to else "current"
    files = [
        file_diff(path, status, before.get(path), after.get(path), *labels)
        for path, status in changed
    ]
    return DiffReport(source, to, files)


def _contents(git: GitStore, files: dict[str, str], changed) -> dict[str, bytes]:
    blobs = git.blobs(files[path] for path, _ in changed if path in files)
    return {path: blobs[files[path]] for path, _ in changed if path in files}


def _current_files(context: JobContext, source: Snapshot) -> dict[str, bytes]:
    """Return the bytes of the agent's current files that `source` covers, by path."""
    agent = context.deployment.agent(source.agent_id)
    if agent is None:
        raise UsageError(
            f"agent {source.agent_id} is not in the gateway config at "
            f"{context.deployment.config_path}; give a second snapshot id to compare with"
        )
    workspace = agent.workspace
    contents = {}
    for path in scan_workspace(workspace, () if source.legacy else source.roots).files:
        try:
            contents[path] = read_bytes(workspace / path)
        except FileNotFoundError:
            continue
        except OSError as error:
            message = f"{workspace / path}: cannot read it: {error.strerror}"
            raise MemwardenError(message) from error
    return contents
