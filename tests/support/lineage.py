"""Reading back the rotation lineage (table `rotations`) for the rotate tests: the product only
writes it (and health counts its failures)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from memwarden.store.state import StateDB, from_row


@dataclass(frozen=True)
class Rotation:
    """One attempted rotation as recorded."""

    id: int
    ts: float
    run_id: int | None
    agent_id: str | None
    session_key: str
    old_session_id: str | None
    new_session_id: str | None
    old_revision: str | None
    new_revision: str | None
    tokens: int | None
    token_source: str | None
    context_tokens: int | None
    token_limit: int | None
    why: str
    reset_reason: str | None
    outcome: str
    error: str | None
    checkpoint: dict[str, Any]


def last_rotations(state: StateDB) -> list[Rotation]:
    """Return the recorded rotations, newest first."""
    rows = state.connection.execute("SELECT * FROM rotations ORDER BY ts DESC, id DESC")
    return [
        from_row(
            Rotation,
            row,
            checkpoint=orjson.loads(row["checkpoint_json"]) if row["checkpoint_json"] else {},
        )
        for row in rows
    ]
