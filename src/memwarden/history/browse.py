"""Read the history: list snapshots, show one, diff two (or one against the current files)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memwarden.history import records
from memwarden.history.diffing import FileDiff, changed_paths, file_diff
from memwarden.history.git import GitStore, blob_sha
from memwarden.history.model import Snapshot
from memwarden.history.paths import matches, resolve_paths
from memwarden.history.scan import read_file, scan_workspace
from memwarden.history.store import snapshot_tree, store_of
from memwarden.process.errors import MemwardenError, UsageError
from memwarden.process.runtime import JobContext

__all__ = ["DiffReport", "diff"]


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
    current = _current_files(context, source) if to is None else None
    if to is not None:
        new_tree = snapshot_tree(context, to)
    else:
        new_tree = {path: blob_sha(data) for path, data in (current or {}).items()}
    wanted = resolve_paths(paths, {*old_tree, *new_tree}, source.id or "")
    old = {path: sha for path, sha in old_tree.items() if matches(path, wanted)}
    new = {path: sha for path, sha in new_tree.items() if matches(path, wanted)}
    changed = changed_paths(old, new)
    before = _contents(store_of(context, source), old, changed)
    after = current if to is None else _contents(store_of(context, to), new, changed)
    new_label = f"snapshot {to.id}" if to else "current"
    report = DiffReport(source, to)
    for path, status in changed:
        report.files.append(
            file_diff(
                path, status, before.get(path), after.get(path), f"snapshot {source.id}", new_label
            )
        )
    return report


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
            contents[path] = read_file(workspace / path)
        except FileNotFoundError:
            continue
        except OSError as error:
            message = f"{workspace / path}: cannot read it: {error.strerror}"
            raise MemwardenError(message) from error
    return contents
