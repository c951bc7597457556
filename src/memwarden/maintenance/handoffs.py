"""Which conversation handoffs (memory/sessions/*.md) to move into memory/archive/sessions/.

A conversation is idle since the later of its last update in the session store and its handoff
file's last change; one idle longer than the limit has its handoff archived, named with the
date it went idle (`archive/sessions/<name>.<YYYY-MM-DD>.md`), so a conversation archived
twice keeps both. The main session's ACTIVE_CONTEXT.md is never a candidate: checkpoint keeps
it for the agent's main session, active or not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

ARCHIVE_FOLDER = "archive/sessions"
DAY_SECONDS = 86_400


@dataclass(frozen=True)
class HandoffFact:
    """A conversation's handoff: its path relative to memory/, its session, its mtime."""

    name: str
    session: str
    modified: float


@dataclass(frozen=True)
class ArchiveMove:
    """One handoff to archive: from `name` to `target` (both relative to memory/)."""

    name: str
    target: str
    session: str
    idle_since: float


def plan_handoff_archive(
    handoffs: Sequence[HandoffFact],
    last_updates: Mapping[str, float],
    now: float,
    after_days: int,
) -> list[ArchiveMove]:
    """Given the handoffs, the last update (Unix seconds) of each session key the stores know,
    the time now and the limit in days, return the handoffs to archive, by name."""
    moves = []
    for handoff in sorted(handoffs, key=lambda fact: fact.name):
        idle_since = max(handoff.modified, last_updates.get(handoff.session, 0.0))
        if now - idle_since <= after_days * DAY_SECONDS:
            continue
        stem = handoff.name.rsplit("/", 1)[-1].removesuffix(".md")
        day = datetime.fromtimestamp(idle_since, UTC).date().isoformat()
        moves.append(
            ArchiveMove(
                handoff.name, f"{ARCHIVE_FOLDER}/{stem}.{day}.md", handoff.session, idle_since
            )
        )
    return moves
