"""What the checkpoint job keeps in the state DB: one `read_positions` row per session.

consumer "checkpoint"; `position_json` is the transcript ReadPosition after the last entry a
run took in; `last_entry_at` the time (Unix seconds) of the newest transcript entry that run
saw, so other jobs (health) can tell how far behind the checkpoint is; `data_json` holds the
file the session was written to, when it was last found there, and the previous session id the
handoff is carrying. All rows are loaded with one query and saved in one transaction.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import orjson

from memwarden.checkpoint.records import AgentRecord, EventRecord, PositionUpdate, StoredSession

if TYPE_CHECKING:
    from memwarden.state import StateDB

CONSUMER = "checkpoint"
_SELECT_ALL = (
    "SELECT agent_id, session_key, session_id, position_json, last_entry_at, data_json "
    "FROM read_positions WHERE consumer = ?"
)
_SELECT_AGENTS = "SELECT agent_id, data_json, valid_until, updated_at FROM checkpoint_agents"
_UPSERT_AGENT = (
    "INSERT INTO checkpoint_agents VALUES (?, ?, ?, ?) ON CONFLICT (agent_id) DO UPDATE SET "
    "data_json = excluded.data_json, valid_until = excluded.valid_until, "
    "updated_at = excluded.updated_at"
)
_DELETE_AGENT = "DELETE FROM checkpoint_agents WHERE agent_id = ?"


def load_stored(state: StateDB) -> dict[tuple[str, str], StoredSession]:
    """Return every checkpoint row of the state DB by (agent id, session key)."""
    rows = state.connection.execute(_SELECT_ALL, (CONSUMER,)).fetchall()
    stored = {}
    for agent_id, key, session_id, position_json, last_entry_at, data_json in rows:
        stored[(agent_id, key)] = StoredSession(
            agent_id, key, session_id, position_json, last_entry_at, _data(data_json)
        )
    return stored


def file_owners(
    stored: Iterable[StoredSession],
) -> dict[tuple[str, str], tuple[str, str]]:
    """Return, per (agent id, file name), the (session key, id) last found in that file."""
    latest: dict[tuple[str, str], tuple[float, str, str]] = {}
    for row in stored:
        name, found_at = row.data.get("file"), row.data.get("written_at")
        if not isinstance(name, str) or not isinstance(found_at, int | float):
            continue
        key = (row.agent_id, name)
        if key not in latest or found_at > latest[key][0]:
            latest[key] = (found_at, row.session_key, row.session_id)
    return {key: (session_key, session_id) for key, (_, session_key, session_id) in latest.items()}


def load_agent_records(state: StateDB) -> dict[str, AgentRecord]:
    """Return what the last runs recorded per agent (see `unchanged`), by agent id."""
    records = {}
    for agent_id, data_json, valid_until, updated_at in state.connection.execute(_SELECT_AGENTS):
        records[agent_id] = AgentRecord.from_row(
            agent_id, _data(data_json), valid_until, updated_at
        )
    return records


def save(
    state: StateDB,
    updates: Iterable[PositionUpdate],
    events: Iterable[EventRecord],
    *,
    run_id: int | None,
    agents: Iterable[AgentRecord] = (),
    forget_agents: Iterable[str] = (),
) -> None:
    """Write every position, event and agent record in one transaction (none when empty);
    drop the records of `forget_agents`."""
    updates, events, agents = list(updates), list(events), list(agents)
    forget_agents = list(forget_agents)
    if not (updates or events or agents or forget_agents):
        return
    with state.transaction() as connection:
        for agent_id in forget_agents:
            connection.execute(_DELETE_AGENT, (agent_id,))
        for record in agents:
            connection.execute(
                _UPSERT_AGENT,
                (
                    record.agent_id,
                    orjson.dumps(record.to_json()).decode(),
                    record.valid_until,
                    record.recorded_at,
                ),
            )
        for update in updates:
            state.set_position(
                CONSUMER,
                update.agent_id,
                update.session_key,
                update.session_id,
                update.position,
                last_entry_at=update.last_entry_at,
                data=update.data,
            )
        for event in events:
            state.record_event(
                event.type,
                job="checkpoint",
                run_id=run_id,
                agent_id=event.agent_id,
                session_key=event.session_key,
                session_id=event.session_id,
                data=event.data,
            )


def _data(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}
