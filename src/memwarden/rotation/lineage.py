"""The rotation lineage in memwarden's state database (table `rotations`, migration 0003).

One row per reset memwarden attempted: the session key, its session id (and revision) before
and after, the token count that triggered it, why, when, and how it ended.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from itertools import groupby, takewhile
from operator import itemgetter
from typing import TYPE_CHECKING

import orjson

if TYPE_CHECKING:
    from memwarden.rotation.policy import Decision
    from memwarden.rotation.report import Outcome
    from memwarden.store.state import StateDB


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
    decision: Decision,
    outcome: Outcome,
    *,
    run_id: int | None = None,
    reset_reason: str | None = None,
    ts: float | None = None,
) -> int:
    """Record one attempted rotation (the decision, and what was done: a `failed` outcome, or
    rotated); return its row id."""
    failed = outcome.status == "failed"
    checkpoint = outcome.checkpoint
    cursor = state.connection.execute(
        "INSERT INTO rotations (ts, run_id, agent_id, session_key, old_session_id, "
        "new_session_id, new_revision, tokens, token_source, context_tokens, "
        "token_limit, why, reset_reason, outcome, error, checkpoint_json) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            ts or time.time(),
            run_id,
            decision.agent_id,
            decision.key,
            decision.session_id,
            outcome.new_session_id,
            outcome.new_revision,
            decision.tokens,
            decision.token_source,
            decision.context_tokens,
            decision.limit,
            decision.reason,
            reset_reason,
            "failed" if failed else "rotated",
            outcome.detail if failed else None,
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
    failures = []
    for key, attempts in groupby(rows, key=itemgetter("session_key")):
        streak = list(takewhile(lambda row: row["outcome"] == "failed", attempts))  # newest first
        if streak:
            latest = streak[0]
            failures.append(
                RotationFailure(key, latest["agent_id"], len(streak), latest["error"], latest["ts"])
            )
    return sorted(failures, key=lambda failure: (-failure.failures, failure.session_key))
