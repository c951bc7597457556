"""Read back a read position stored in memwarden's state database (memwarden itself reads them
per agent, through StateDB.agent_positions)."""

from __future__ import annotations

from typing import Any

import orjson

from memwarden.store.state import StateDB


def stored_position(
    state: StateDB, consumer: str, agent_id: str, session_key: str
) -> dict[str, Any] | None:
    """Return the stored read position row for a session, or None."""
    row = state.connection.execute(
        "SELECT * FROM read_positions WHERE consumer = ? AND agent_id = ? AND session_key = ?",
        (consumer, agent_id, session_key),
    ).fetchone()
    if row is None:
        return None
    return {
        "session_id": row["session_id"],
        "position": orjson.loads(row["position_json"]),
        "last_entry_at": row["last_entry_at"],
        "data": orjson.loads(row["data_json"]) if row["data_json"] else {},
        "updated_at": row["updated_at"],
    }
