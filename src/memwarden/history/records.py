"""Snapshot metadata in memwarden's state database (table `history_snapshots`, migrations 0007
and 0008), and the read positions a snapshot remembers (its *marks*)."""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Iterable
from typing import Any

import orjson

from memwarden.history.model import LEGACY_LAYOUT, MEMORY_PREFIX, Changes, Snapshot
from memwarden.process.errors import UsageError
from memwarden.store.state import StateDB, from_row

# {consumer: {session key: [session id, last entry time]}} of one agent's read positions.
Marks = dict[str, dict[str, list[Any]]]

MIN_PREFIX = 4


def insert_many(
    connection: sqlite3.Connection,
    taken: Iterable[tuple[Snapshot, Marks, dict[str, int] | None]],
    run_id: int | None,
) -> None:
    """Insert the snapshots, each with its marks and bootstrap lengths (in the caller's
    transaction)."""
    connection.executemany(
        "INSERT INTO history_snapshots (id, agent_id, created_at, trigger_kind, session_key, "
        "session_id, commit_sha, file_count, total_bytes, changes_json, run_id, layout, "
        "roots_json, marks_json, bootstrap_json) "
        "VALUES (:id, :agent_id, :created_at, :trigger, :session_key, :session_id, :commit, "
        ":file_count, :total_bytes, :changes, :run_id, :layout, :roots, :marks, :bootstrap)",
        [
            snapshot._asdict()
            | {
                "changes": orjson.dumps(snapshot.changes.to_json()).decode(),
                "run_id": run_id,
                "roots": orjson.dumps(snapshot.roots).decode(),
                "marks": orjson.dumps(marks).decode(),
                "bootstrap": None if bootstrap is None else orjson.dumps(bootstrap).decode(),
            }
            for snapshot, marks, bootstrap in taken
        ],
    )


def read_marks(state: StateDB, agent_ids: Iterable[str]) -> dict[str, Marks]:
    """Return, per agent, what every consumer of its transcripts (checkpoint, …) has taken in:
    {consumer: {session key: [session id, last entry time]}} from the read positions."""
    wanted = set(agent_ids)
    marks: dict[str, Marks] = {agent_id: {} for agent_id in wanted}
    rows = state.connection.execute(
        "SELECT consumer, agent_id, session_key, session_id, last_entry_at FROM read_positions"
    )
    for consumer, agent_id, key, session_id, last_entry_at in rows:
        if agent_id in wanted:
            marks[agent_id].setdefault(consumer, {})[key] = [session_id, last_entry_at]
    return marks


def recorded_json(state: StateDB, snapshot_id: str | None, column: str) -> Any:
    """Return what a snapshot recorded in a JSON column (`marks_json`: its marks;
    `bootstrap_json`: its bootstrap files' lengths), or None (no snapshot, or one older than
    that column)."""
    row = state.connection.execute(
        f"SELECT {column} FROM history_snapshots WHERE id = ?",  # noqa: S608 - a fixed column
        (snapshot_id,),
    ).fetchone()
    return orjson.loads(row[0]) if row and row[0] else None


def new_ids(state: StateDB, count: int) -> list[str]:
    """Return `count` fresh short snapshot ids (8 hex digits), distinct and used by no snapshot."""
    ids: list[str] = []
    while len(ids) < count:
        candidates = {secrets.token_hex(4) for _ in range(count - len(ids))} - set(ids)
        used = state.connection.execute(
            "SELECT id FROM history_snapshots WHERE id IN (SELECT value FROM json_each(?))",
            (orjson.dumps(sorted(candidates)).decode(),),
        ).fetchall()
        ids += sorted(candidates - {row[0] for row in used})
    return ids


def snapshots(
    state: StateDB, agent_id: str | None = None, limit: int | None = None
) -> list[Snapshot]:
    """Return the snapshots (of one agent, or all), newest first."""
    where, params = ("WHERE agent_id = ?", [agent_id]) if agent_id else ("", [])
    rows = state.connection.execute(
        f"SELECT * FROM history_snapshots {where} "  # noqa: S608 - fixed clauses, values bound
        "ORDER BY created_at DESC, rowid DESC LIMIT ?",
        (*params, -1 if limit is None else limit),
    ).fetchall()
    return [_snapshot(row) for row in rows]


def latest(state: StateDB, agent_id: str) -> Snapshot | None:
    found = snapshots(state, agent_id, limit=1)
    return found[0] if found else None


def find(state: StateDB, wanted: str) -> Snapshot:
    """Given a snapshot id or a unique prefix of one (≥ 4 characters), return the snapshot.

    Raise UsageError if none or several match.
    """
    text = wanted.strip().lower()
    if len(text) < MIN_PREFIX or not all(c in "0123456789abcdef" for c in text):
        raise UsageError(
            f"{wanted!r}: not a snapshot id (hex, at least {MIN_PREFIX} characters; "
            "see `memwarden history list`)"
        )
    rows = state.connection.execute(
        "SELECT * FROM history_snapshots WHERE id >= ? AND id < ? ORDER BY id LIMIT 3",
        (text, text + "g"),
    ).fetchall()
    if not rows:
        raise UsageError(f"{wanted}: no such snapshot (see `memwarden history list`)")
    if len(rows) > 1:
        candidates = ", ".join(row["id"] for row in rows)
        raise UsageError(f"{wanted}: ambiguous snapshot id ({candidates}, …); give more digits")
    return _snapshot(rows[0])


def agent_ids(state: StateDB) -> list[str]:
    rows = state.connection.execute("SELECT DISTINCT agent_id FROM history_snapshots ORDER BY 1")
    return [row[0] for row in rows]


def delete(connection: sqlite3.Connection, ids: Iterable[str]) -> None:
    connection.executemany("DELETE FROM history_snapshots WHERE id = ?", [(i,) for i in ids])


def _snapshot(row: sqlite3.Row) -> Snapshot:
    # A legacy snapshot's paths are relative to memory/: given relative to the workspace.
    prefix = MEMORY_PREFIX if row["layout"] == LEGACY_LAYOUT else ""
    stored = orjson.loads(row["changes_json"] or "{}")
    changes = Changes(
        *(
            [prefix + path for path in stored.get(kind, [])]
            for kind in ("added", "modified", "removed")
        )
    )
    return from_row(
        Snapshot,
        row,
        trigger=row["trigger_kind"],
        commit=row["commit_sha"],
        changes=changes,
        roots=tuple(orjson.loads(row["roots_json"] or "[]")),
    )
