"""Destructive rewrites of root files found when a snapshot is taken, and how they are reported.

The rule is `guard.py`'s; this module applies it to the root files a snapshot modified or
removed, and words what it found: the file, what was dropped, the snapshot to go back to and the
one-file rewind that does it. Each finding is recorded as a `memory.rewrite` event, which the
`memory.rewrite` health check turns into a warning.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memwarden.history.guard import Rewrite

EVENT = "memory.rewrite"


@dataclass(frozen=True)
class RewriteFinding:
    """A root file destructively rewritten between snapshot `previous_id` and `snapshot_id`."""

    agent_id: str
    path: str
    snapshot_id: str | None
    previous_id: str | None
    rewrite: Rewrite

    @property
    def command(self) -> str:
        """The one-file rewind that brings the file back as it was."""
        return f"memwarden history rewind {self.previous_id} --path {self.path}"

    def message(self) -> str:
        dropped = "; ".join(f'"{line}"' for line in self.rewrite.first_dropped())
        shown = f"; dropped: {dropped}" if dropped else ""
        return (
            f"agent {self.agent_id}: {self.path} {self.rewrite.summary()} (snapshot "
            f"{self.snapshot_id}){shown}; snapshot {self.previous_id} has it as it was: "
            f"{self.command}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.path,
            "snapshot": self.snapshot_id,
            "previous_snapshot": self.previous_id,
            "summary": self.rewrite.summary(),
            "command": self.command,
            "message": self.message(),
            **self.rewrite.to_json(),
        }


def guarded_paths(modified: Iterable[str], removed: Iterable[str], guarded: Iterable[str]):
    """Return the guarded root files among those a snapshot modified or removed."""
    names = set(guarded)
    return sorted(path for path in [*modified, *removed] if path in names)


def find_rewrites(
    before: Mapping[str, bytes],
    after: Mapping[str, bytes | None],
    drop_share: float,
    min_entries: int,
) -> dict[str, Rewrite]:
    """Given the old bytes of guarded files and their new bytes (None: removed), return the
    destructive rewrites by path."""
    # lazy: the rule is loaded only when a guarded root file changed (rarely)
    from memwarden.history.guard import assess, read_shape

    found = {}
    for path, old in before.items():
        new = after.get(path)
        old_shape = read_shape(old.decode("utf-8", "replace"))
        new_shape = read_shape(new.decode("utf-8", "replace")) if new is not None else None
        rewrite = assess(old_shape, new_shape, drop_share, min_entries)
        if rewrite is not None:
            found[path] = rewrite
    return found
