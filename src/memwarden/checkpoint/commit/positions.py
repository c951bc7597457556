"""What the checkpoint job keeps in the state DB: one `read_positions` row per session.

consumer "checkpoint"; `position_json` is the transcript ReadPosition after the last entry a
run took in; `last_entry_at` the time (Unix seconds) of the newest transcript entry that run
saw, so other jobs (health) can tell how far behind the checkpoint is; `data_json` holds the
file the session was written to and when it was last found there. All rows are loaded with one
query and saved in one transaction, with what each conversation holds (table `conversations`,
see `checkpoint.digest.conversation`), which a run loads only for a session it reads.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from memwarden.checkpoint.records import AgentRecord, EventRecord, PositionUpdate, StoredSession
from memwarden.store.state import StateDB, reader

CONSUMER = "checkpoint"
MEMORY_PREFIX = "memory/"
DAILY_LOG = re.compile(r"^\d{4}-\d{2}-\d{2}\.md$")
# The keys of a row's data that say which file the session was last found in, and when.
OWNERSHIP = ("file", "written_at")
_SELECT_ALL = (
    "SELECT agent_id, session_key, session_id, position_json, last_entry_at, data_json, "
    "updated_at FROM read_positions WHERE consumer = ?"
)
_SELECT_UPDATED = (
    "SELECT updated_at FROM read_positions WHERE consumer = ? AND agent_id = ? AND session_key = ?"
)
_SELECT_AGENTS = "SELECT agent_id, data_json, valid_until, updated_at FROM checkpoint_agents"
_UPSERT_AGENT = (
    "INSERT INTO checkpoint_agents VALUES (?, ?, ?, ?) ON CONFLICT (agent_id) DO UPDATE SET "
    "data_json = excluded.data_json, valid_until = excluded.valid_until, "
    "updated_at = excluded.updated_at"
)
_DELETE_AGENT = "DELETE FROM checkpoint_agents WHERE agent_id = ?"
_UPSERT_CONVERSATION = (
    "INSERT INTO conversations VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (agent_id, session_key) "
    "DO UPDATE SET data_json = excluded.data_json, updated_at = excluded.updated_at, "
    "last_break_kind = excluded.last_break_kind, last_break_at = excluded.last_break_at, "
    "next_request_at = excluded.next_request_at"
)
_SELECT_CONVERSATION = "SELECT data_json FROM conversations WHERE agent_id = ? AND session_key = ?"


def load_stored(state: StateDB) -> dict[tuple[str, str], StoredSession]:
    """Return every checkpoint row of the state DB by (agent id, session key)."""
    return {
        (row[0], row[1]): StoredSession(*row[:5], _data(row[5]), row[6])
        for row in state.connection.execute(_SELECT_ALL, (CONSUMER,))
    }


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


def write(
    state: StateDB,
    updates: Iterable[PositionUpdate],
    events: Iterable[EventRecord],
    *,
    run_id: int | None,
    agents: Iterable[AgentRecord] = (),
    forget_agents: Iterable[str] = (),
) -> None:
    """Write positions, events and agent records inside the caller's transaction."""
    connection = state.connection
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
        if update.conversation is not None:
            kind, at, request_at = _last_break(update.conversation)
            connection.execute(
                _UPSERT_CONVERSATION,
                (
                    update.agent_id,
                    update.session_key,
                    orjson.dumps(update.conversation).decode(),
                    time.time(),
                    kind,
                    at,
                    request_at,
                ),
            )
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
        state.record_event(**event._asdict(), job="checkpoint", run_id=run_id)


def written_since(
    state: StateDB,
    stored: Mapping[tuple[str, str], StoredSession],
    updates: Iterable[PositionUpdate],
) -> bool:
    """Return True when another run has written the row of one of the updates' sessions since
    this run read the rows (`stored`: a row it did not find must still be missing), inside the
    caller's transaction."""
    for update in updates:
        key = (update.agent_id, update.session_key)
        row = state.connection.execute(_SELECT_UPDATED, (CONSUMER, *key)).fetchone()
        read = stored.get(key)
        if (row[0] if row else None) != (read.updated_at if read is not None else None):
            return True
    return False


def forget_file(state: StateDB, agent_id: str, name: str) -> None:
    """The file `name` (relative to memory/) no longer holds what the checkpoint wrote there:
    no session of the agent owns it any more, and the agent's record goes."""
    rows = load_stored(state).values()
    updates = [
        disowned(row) for row in rows if row.agent_id == agent_id and row.data.get("file") == name
    ]
    rewrite(state, agent_id, updates)


def disowned(row: StoredSession) -> PositionUpdate:
    """Return the row as an update that no longer owns the file it was written to."""
    data = {key: value for key, value in row.data.items() if key not in OWNERSHIP}
    position = row.position  # parsed from its JSON: once
    return PositionUpdate(
        row.agent_id,
        row.session_key,
        row.session_id,
        position.to_json() if position is not None else None,
        row.last_entry_at,
        data,
    )


def rewrite(state: StateDB, agent_id: str, updates: Iterable[PositionUpdate]) -> None:
    """Write the agent's updated rows and drop its record, in one transaction."""
    with state.transaction():
        write(state, updates, [], run_id=None, forget_agents=[agent_id])


def forget_rewound(
    state: StateDB,
    agent_id: str,
    paths: Sequence[str],
    marks: Mapping[str, Mapping[str, Any]] | None,
) -> None:
    """Given an agent, the workspace-relative paths a rewind restored or removed, and the marks
    of the snapshot it went back to ({consumer: {session key: [id, last entry time]}}, None
    when it has none), update the checkpoint's rows in one transaction, so that its next run
    writes them again.

    - The agent's record (`unchanged`) goes: the next run looks at the store again.
    - A session whose handoff file (ACTIVE_CONTEXT.md, …) was rewound no longer owns it: the
      next run rewrites the handoff from the live transcript instead of calling it "unchanged".
    - When a daily log (`memory/YYYY-MM-DD.md`) was rewound, each session's read position goes
      back to what the snapshot's marks say it had taken in then (its last entry time), so the
      entries logged after the snapshot are logged again; a session the snapshot did not know
      starts over. How far back that reaches is bounded by the recent lines a run reads (60).
    """
    rewound = {path[len(MEMORY_PREFIX) :] for path in paths if path.startswith(MEMORY_PREFIX)}
    if not rewound:
        return
    relog = any(DAILY_LOG.match(name) for name in rewound)
    taken_in = (marks or {}).get(CONSUMER, {})
    updates = [
        _rewound(row, rewound, taken_in.get(row.session_key) if relog else None, relog)
        for row in load_stored(state).values()
        if row.agent_id == agent_id
    ]
    rewrite(state, agent_id, updates)


def _rewound(
    row: StoredSession, rewound: set[str], mark: Sequence[Any] | None, relog: bool
) -> PositionUpdate:
    update = disowned(row)
    if row.data.get("file") not in rewound:
        update = update._replace(data=dict(row.data))
    if not relog:
        return update
    # No position but a last entry time: what is newer than it is new (checkpoint.read.reader).
    session_id, last_entry_at = (mark[0], mark[1]) if mark else (row.session_id, None)
    return update._replace(session_id=session_id, position=None, last_entry_at=last_entry_at)


def forget_conversation(state: StateDB, agent_ids: Iterable[str], session_key: str) -> None:
    """Forget what a conversation held (its handoff was archived: the operator's retention
    ended it); if it goes on, it is read again from its recent lines."""
    with state.transaction():
        for agent_id in agent_ids:
            state.connection.execute(
                "DELETE FROM conversations WHERE agent_id = ? AND session_key = ?",
                (agent_id, session_key),
            )


def _last_break(conversation: Mapping[str, Any]) -> tuple[str | None, float | None, float | None]:
    """(kind, time) of a conversation's last reset or compaction, and the time of its first
    request after it (None: none yet), from `Conversation.to_json`'s data."""
    breaks = [one for one in conversation.get("breaks", ()) if one[1] is not None]
    if not breaks:
        return None, None, None
    kind, at = breaks[-1]
    requests = (
        said_at
        for role, said_at, _ in conversation.get("messages", ())
        if role == "user" and said_at is not None and said_at >= at
    )
    return kind, at, next(requests, None)


def load_conversation(state_path: Path, agent_id: str, session_key: str) -> Any:
    """Return the stored JSON data of what a conversation holds, or None when there is none
    (or no state database yet: a dry run's), through this process's read-only connection
    (`store.state.reader`: workers read it too)."""
    if not state_path.is_file():
        return None
    row = reader(state_path).execute(_SELECT_CONVERSATION, (agent_id, session_key)).fetchone()
    if row is None:
        return None
    try:
        return orjson.loads(row[0])
    except orjson.JSONDecodeError:
        return None


def _data(text: str | None) -> dict[str, Any]:
    """A row's data as memwarden wrote it (a JSON object, or NULL for none)."""
    return orjson.loads(text) if text else {}
