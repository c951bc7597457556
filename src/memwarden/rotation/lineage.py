"""The rotation lineage in memwarden's state database (table `rotations`, migration 0003).

One row per reset memwarden attempted: the session key, its session id (and revision) before
and after, the token count that triggered it, why, when, and how it ended.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import orjson

from memwarden.store.state import from_row

if TYPE_CHECKING:
    from memwarden.store.state import StateDB

Outcome = Literal["rotated", "failed"]


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
    outcome: Outcome
    error: str | None
    checkpoint: dict[str, Any]


@dataclass(frozen=True)
class RotationFailure:
    """A session whose latest rotations failed: how many in a row, the last error and when."""

    session_key: str
    agent_id: str | None
    failures: int
    last_error: str | None
    last_at: float


def record_rotation(
    state: StateDB,
    *,
    session_key: str,
    outcome: Outcome,
    why: str,
    agent_id: str | None = None,
    run_id: int | None = None,
    old_session_id: str | None = None,
    new_session_id: str | None = None,
    old_revision: str | None = None,
    new_revision: str | None = None,
    tokens: int | None = None,
    token_source: str | None = None,
    context_tokens: int | None = None,
    token_limit: int | None = None,
    reset_reason: str | None = None,
    error: str | None = None,
    checkpoint: Mapping[str, Any] | None = None,
    ts: float | None = None,
) -> int:
    """Record one attempted rotation; return its row id."""
    cursor = state.connection.execute(
        "INSERT INTO rotations (ts, run_id, agent_id, session_key, old_session_id, "
        "new_session_id, old_revision, new_revision, tokens, token_source, context_tokens, "
        "token_limit, why, reset_reason, outcome, error, checkpoint_json) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            ts or time.time(),
            run_id,
            agent_id,
            session_key,
            old_session_id,
            new_session_id,
            old_revision,
            new_revision,
            tokens,
            token_source,
            context_tokens,
            token_limit,
            why,
            reset_reason,
            outcome,
            error,
            orjson.dumps(dict(checkpoint), default=str).decode() if checkpoint else None,
        ),
    )
    return int(cursor.lastrowid)


def last_rotations(
    state: StateDB, *, session_key: str | None = None, limit: int = 100
) -> list[Rotation]:
    """Return the latest recorded rotations (of one key, or all), newest first."""
    where, params = ("WHERE session_key = ?", [session_key]) if session_key else ("", [])
    rows = state.connection.execute(
        f"SELECT * FROM rotations {where} ORDER BY ts DESC, id DESC LIMIT ?",  # noqa: S608
        (*params, limit),
    ).fetchall()
    return [_rotation(row) for row in rows]


def recent_rotation_failures(state: StateDB, since: float) -> list[RotationFailure]:
    """Given the state DB and a Unix time, return the sessions whose rotation keeps failing.

    A session is listed when its latest attempt since `since` failed; `failures` counts its
    failed attempts since then that no success followed. Sorted by most failures, then key.
    """
    rows = state.connection.execute(
        "SELECT session_key, agent_id, outcome, error, ts FROM rotations "
        "WHERE ts >= ? ORDER BY session_key, ts DESC, id DESC",
        (since,),
    ).fetchall()
    failures: dict[str, RotationFailure] = {}
    settled: set[str] = set()
    for row in rows:
        key = row["session_key"]
        if key in settled:
            continue
        if row["outcome"] != "failed":
            settled.add(key)
            continue
        known = failures.get(key)
        if known is None:
            failures[key] = RotationFailure(key, row["agent_id"], 1, row["error"], row["ts"])
        else:
            failures[key] = RotationFailure(
                key, known.agent_id, known.failures + 1, known.last_error, known.last_at
            )
    return sorted(failures.values(), key=lambda failure: (-failure.failures, failure.session_key))


def _rotation(row: Any) -> Rotation:
    checkpoint = orjson.loads(row["checkpoint_json"]) if row["checkpoint_json"] else {}
    return from_row(Rotation, row, checkpoint=checkpoint)
