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


def last_rotations(
    state: StateDB, *, session_key: str | None = None, limit: int = 100
) -> list[Rotation]:
    """Return the latest recorded rotations (of one key, or all), newest first."""
    where, params = ("WHERE session_key = ?", [session_key]) if session_key else ("", [])
    rows = state.connection.execute(
        f"SELECT * FROM rotations {where} ORDER BY ts DESC, id DESC LIMIT ?",  # noqa: S608
        (*params, limit),
    ).fetchall()
    return [
        from_row(
            Rotation,
            row,
            checkpoint=orjson.loads(row["checkpoint_json"]) if row["checkpoint_json"] else {},
        )
        for row in rows
    ]
