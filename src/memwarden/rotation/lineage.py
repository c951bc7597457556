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

if TYPE_CHECKING:
    from memwarden.store.state import StateDB

Outcome = Literal["rotated", "failed"]


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
        "new_session_id, new_revision, tokens, token_source, context_tokens, "
        "token_limit, why, reset_reason, outcome, error, checkpoint_json) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            ts or time.time(),
            run_id,
            agent_id,
            session_key,
            old_session_id,
            new_session_id,
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
