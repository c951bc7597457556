"""Snapshots as plain data, the comparison of two file sets, and what a history error is."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NamedTuple

from memwarden.process.errors import MemwardenError

AUTOMATIC_TRIGGERS = ("checkpoint", "rotate", "index", "health")
MEMORY_PREFIX = "memory/"
# Snapshots of memory/ alone, in the agent's own repository, paths relative to memory/ (before
# history covered the workspace's root files); and of the workspace, in the shared store.
LEGACY_LAYOUT, WORKSPACE_LAYOUT = 1, 2


class HistoryError(MemwardenError):
    """The history store cannot do what was asked (git missing or failing, unreadable files)."""


def reason(error: Exception) -> str:
    """Return why `error` happened: an OSError's reason (`Permission denied`), else its text (a
    MemwardenError's message)."""
    return getattr(error, "strerror", None) or str(error)


@dataclass(frozen=True)
class Changes:
    """Paths added, modified and removed between two file sets, each sorted."""

    added: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.added or self.modified or self.removed)

    def short(self) -> str:
        return f"+{len(self.added)} ~{len(self.modified)} -{len(self.removed)}"

    def to_json(self) -> dict[str, list[str]]:
        return {"added": self.added, "modified": self.modified, "removed": self.removed}


def compare(old: Mapping[str, str], new: Mapping[str, str]) -> Changes:
    """Given two {path: blob id} maps, return what changed from `old` to `new`."""
    return Changes(
        added=sorted(set(new) - set(old)),
        modified=sorted(path for path in set(old) & set(new) if old[path] != new[path]),
        removed=sorted(set(old) - set(new)),
    )


class Snapshot(NamedTuple):
    """One saved state of an agent's workspace memory: memory/ and the root files in `roots`.

    `id` is None for a snapshot a dry run would have taken. Paths (in `changes` too) are
    relative to the workspace (`MEMORY.md`, `memory/2026-11-21.md`), whatever the layout.
    """

    id: str | None
    agent_id: str
    created_at: float
    trigger: str
    commit: str | None
    file_count: int
    total_bytes: int
    changes: Changes
    session_key: str | None = None
    session_id: str | None = None
    layout: int = WORKSPACE_LAYOUT
    roots: tuple[str, ...] = ()

    @property
    def time(self) -> str:
        """The snapshot's time as ISO 8601 UTC to the second (`…Z`)."""
        moment = datetime.fromtimestamp(self.created_at, UTC)
        return moment.isoformat(timespec="seconds").replace("+00:00", "Z")

    @property
    def legacy(self) -> bool:
        """True for a snapshot of memory/ alone, kept in the agent's own repository."""
        return self.layout == LEGACY_LAYOUT

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "agent": self.agent_id,
            "time": self.time,
            "trigger": self.trigger,
            "session_key": self.session_key,
            "session_id": self.session_id,
            "commit": self.commit,
            "files": self.file_count,
            "bytes": self.total_bytes,
            "changes": self.changes.to_json(),
            "roots": None if self.legacy else list(self.roots),
        }

    def line(self) -> str:
        session = f"  {self.session_key}" if self.session_key else ""
        return (
            f"{self.id or '(dry run)':<10} {self.time}  {self.agent_id:<12} {self.trigger:<11} "
            f"{self.file_count:>4} files  {self.changes.short()}{session}"
        )
