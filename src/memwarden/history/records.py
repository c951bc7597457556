"""Snapshot metadata in memwarden's state database (table `history_snapshots`, migration 0007)."""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Iterable

import orjson

from memwarden.errors import UsageError
from memwarden.history.model import Changes, Snapshot
from memwarden.state import StateDB

MIN_PREFIX = 4


def insert(connection: sqlite3.Connection, snapshot: Snapshot, run_id: int | None) -> None:
    connection.execute(
        "INSERT INTO history_snapshots (id, agent_id, created_at, trigger_kind, session_key, "
        "session_id, commit_sha, file_count, total_bytes, changes_json, run_id) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            snapshot.id,
            snapshot.agent_id,
            snapshot.created_at,
            snapshot.trigger,
            snapshot.session_key,
            snapshot.session_id,
            snapshot.commit,
            snapshot.file_count,
            snapshot.total_bytes,
            orjson.dumps(snapshot.changes.to_json()).decode(),
            run_id,
        ),
    )


def new_id(state: StateDB) -> str:
    """Return a fresh short snapshot id (8 hex digits) not used by any snapshot."""
    while True:
        candidate = secrets.token_hex(4)
        row = state.connection.execute(
            "SELECT 1 FROM history_snapshots WHERE id = ?", (candidate,)
        ).fetchone()
        if row is None:
            return candidate


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


def previous(state: StateDB, snapshot: Snapshot) -> Snapshot | None:
    """Return the agent's snapshot taken just before `snapshot`, or None."""
    row = state.connection.execute(
        "SELECT * FROM history_snapshots WHERE agent_id = ? AND created_at <= ? AND id != ? "
        "ORDER BY created_at DESC, rowid DESC LIMIT 1",
        (snapshot.agent_id, snapshot.created_at, snapshot.id),
    ).fetchone()
    return _snapshot(row) if row else None


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
    return Snapshot(
        id=row["id"],
        agent_id=row["agent_id"],
        created_at=row["created_at"],
        trigger=row["trigger_kind"],
        commit=row["commit_sha"],
        file_count=row["file_count"],
        total_bytes=row["total_bytes"],
        changes=Changes.from_json(orjson.loads(row["changes_json"] or "{}")),
        session_key=row["session_key"],
        session_id=row["session_id"],
    )
