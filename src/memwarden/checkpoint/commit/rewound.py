"""After `memwarden history rewind` restored or removed files in an agent's memory/, forget what
the checkpoint remembers about them, so that its next run writes them again.

- The agent's record (`unchanged`) goes: the next run looks at the store again.
- A session whose handoff file (ACTIVE_CONTEXT.md, …) was rewound no longer owns it: the next run
  rewrites the handoff from the live transcript instead of calling it "unchanged".
- When a daily log (`memory/YYYY-MM-DD.md`) was rewound, each session's read position goes back
  to what the snapshot's marks say it had taken in then (its last entry time), so the entries
  logged after the snapshot are logged again; a session the snapshot did not know starts over.
  How far back that reaches is bounded by the recent lines a run reads (60).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from memwarden.checkpoint.commit.positions import CONSUMER, disowned, load_stored, rewrite
from memwarden.checkpoint.records import PositionUpdate, StoredSession
from memwarden.store.state import StateDB

MEMORY_PREFIX = "memory/"
DAILY_LOG = re.compile(r"^\d{4}-\d{2}-\d{2}\.md$")


def forget_rewound(
    state: StateDB,
    agent_id: str,
    paths: Sequence[str],
    marks: Mapping[str, Mapping[str, Any]] | None,
) -> None:
    """Given an agent, the workspace-relative paths a rewind restored or removed, and the marks
    of the snapshot it went back to ({consumer: {session key: [id, last entry time]}}, None
    when it has none), update the checkpoint's rows in one transaction."""
    rewound = {path[len(MEMORY_PREFIX) :] for path in paths if path.startswith(MEMORY_PREFIX)}
    if not rewound:
        return
    relog = any(DAILY_LOG.match(name) for name in rewound)
    taken_in = (marks or {}).get(CONSUMER, {})
    updates = [
        _update(row, rewound, taken_in.get(row.session_key) if relog else None, relog)
        for row in load_stored(state).values()
        if row.agent_id == agent_id
    ]
    rewrite(state, agent_id, updates)


def _update(
    row: StoredSession, rewound: set[str], mark: Sequence[Any] | None, relog: bool
) -> PositionUpdate:
    update = disowned(row)
    if row.data.get("file") not in rewound:
        update = replace(update, data=dict(row.data))
    if not relog:
        return update
    # No position but a last entry time: what is newer than it is new (checkpoint.read.reader).
    session_id, last_entry_at = (mark[0], mark[1]) if mark else (row.session_id, None)
    return replace(update, session_id=session_id, position=None, last_entry_at=last_entry_at)
