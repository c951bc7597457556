"""Which sessions of an agent a checkpoint reads (each is written to its own handoff file,
see `handoff_files`).

Chosen from the session store (never "the newest file in the folder", which is often a cron
transcript). Automation (cron, cron runs, sub-agents, ACP, boot, heartbeats, hooks, nodes) and
keys matching `checkpoint.exclude_sessions` are never chosen.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, NamedTuple

from memwarden.openclaw.keys import SessionKind, classify, is_automation_key

if TYPE_CHECKING:
    from memwarden.openclaw.sessions import SessionRecord

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


class Selection(NamedTuple):
    """The sessions to checkpoint, and why (or why none).

    `valid_until` is when the same store could give another selection as time passes (a main
    session going stale); None when only a change of the store can.
    """

    sessions: list[SessionRecord]
    reason: str
    valid_until: datetime | None = None


def select_sessions(
    records: Sequence[SessionRecord],
    *,
    agent_id: str,
    mode: str,
    now: datetime,
    staleness: timedelta,
    exclude_patterns: tuple[str, ...] = (),
) -> Selection:
    """Given an agent's sessions (newest first) and the settings, return the Selection.

    `main`: the main session, active or not. `recent`: the main session when it was updated
    within `staleness` of `now`, else the most recently updated interactive session. `all`:
    the main session, active or not, and every other interactive session updated within
    `staleness` (the settings allow no other mode).
    """
    candidates = [record for record in records if is_candidate(record, agent_id, exclude_patterns)]
    main = next((record for record in candidates if record.kind == SessionKind.MAIN), None)
    if mode == "main":
        if main is None:
            return Selection([], f"no session agent:{agent_id}:main")
        return Selection([main], "main session")
    cutoff = (now - staleness - _EPOCH) // _MICROSECOND
    active = [record for record in candidates if _updated_after(record, cutoff)]
    if mode == "all":
        # A store may hold a legacy unscoped `main` beside `agent:<id>:main`: one main only.
        others = [record for record in active if record.kind != SessionKind.MAIN]
        chosen = ([main] if main is not None else []) + others
        if not chosen:
            hours = staleness.total_seconds() / 3600
            within = f" updated in the last {hours:g} h" if candidates else ""
            return Selection([], f"no interactive session{within}")
        until = min((_stale_at(record, staleness) for record in others), default=None)
        what = "main session" if main is not None else ""
        if others:
            what += (" and " if what else "") + f"{len(others)} other active conversation(s)"
        return Selection(chosen, what, until)
    if main is not None and _updated_after(main, cutoff):
        newest = candidates[0]
        until = _stale_at(main, staleness) if newest is not main else None
        return Selection([main], "main session, active", until)
    if candidates:
        newest = candidates[0]
        return Selection([newest], "most recently updated interactive session")
    return Selection([], "no interactive session")


def is_candidate(record: SessionRecord, agent_id: str, exclude_patterns: tuple[str, ...]) -> bool:
    """Return True when `record` is an interactive session of `agent_id` a checkpoint may read."""
    info = classify(record.key)
    if not info.is_interactive or record.transcript is None:
        return False
    if info.agent_id is not None and info.agent_id != agent_id:
        return False
    return not is_automation_key(record.key, exclude_patterns)


def _updated_after(record: SessionRecord, cutoff_us: int) -> bool:
    """`record.updated >= cutoff` (`cutoff_us` its microseconds since the epoch), without a
    datetime for each of a big store's conversations."""
    updated = record.updated_at
    return updated is not None and updated * 1000 >= cutoff_us


def _stale_at(record: SessionRecord, staleness: timedelta) -> datetime:
    """Return when an active record stops counting as active."""
    return datetime.fromtimestamp((record.updated_at or 0) / 1000, UTC) + staleness
