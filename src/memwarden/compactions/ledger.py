"""The compaction ledger in memwarden's state (table `compactions`, migration 0010).

One row per compaction (agent, session id, compaction entry id), inserted once: a second insert
of the same compaction changes nothing. `kept_file` names the daily log of its lost items; `kept`
is 0 there while they are to be written again (a rewind took them out of that log). The read
position of each conversation (consumer `compactions` in `read_positions`) says how far its
transcript was searched for compactions.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

from memwarden.store.state import from_row

if TYPE_CHECKING:
    from memwarden.compactions.assessment import Assessment, Item
    from memwarden.store.state import StateDB

CONSUMER = "compactions"
EVENT = "compaction.recorded"

_INSERT = (
    "INSERT OR IGNORE INTO compactions (agent_id, session_id, entry_id, session_key, "
    "compacted_at, recorded_at, run_id, tokens_before, tokens_after, summary_chars, "
    "span_messages, items, lost, lost_json, severity, kept_file, kept) VALUES (:agent_id, "
    ":session_id, :entry_id, :session_key, :compacted_at, :recorded_at, :run_id, "
    ":tokens_before, :tokens_after, :summary_chars, :span_messages, :items, :lost, :lost_json, "
    ":severity, :kept_file, :kept)"
)
_TIME = "coalesce(compacted_at, recorded_at)"


class Recorded(NamedTuple):
    """A compaction as the ledger holds it."""

    agent_id: str
    session_key: str
    session_id: str
    entry_id: str
    compacted_at: float | None
    recorded_at: float
    tokens_before: int | None
    tokens_after: int | None
    summary_chars: int
    span_messages: int
    items: int
    lost: list[Item]
    severity: str
    kept_file: str | None
    kept: bool

    @property
    def time(self) -> float:
        return self.compacted_at if self.compacted_at is not None else self.recorded_at

    def to_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent_id,
            "session": self.session_key,
            "session_id": self.session_id,
            "compaction": self.entry_id,
            "compacted_at": _iso(self.compacted_at),
            "recorded_at": _iso(self.recorded_at),
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "summary_chars": self.summary_chars,
            "span_messages": self.span_messages,
            "items": self.items,
            "lost_items": len(self.lost),
            "lost": [item.to_json() for item in self.lost],
            "severity": self.severity,
            "kept_file": self.kept_file,
            "kept": self.kept,
        }


def known(state: StateDB, agent_id: str, session_id: str) -> set[str]:
    """Return the entry ids of the compactions of a session already recorded."""
    rows = state.connection.execute(
        "SELECT entry_id FROM compactions WHERE agent_id = ? AND session_id = ?",
        (agent_id, session_id),
    )
    return {row[0] for row in rows}


def record(
    state: StateDB,
    agent_id: str,
    session_key: str,
    session_id: str,
    assessment: Assessment,
    *,
    kept_file: str | None,
    run_id: int | None,
) -> bool:
    """Record a compaction once (its lost items kept in `kept_file`; None: it lost none), with
    its `compaction.recorded` event, in one transaction; return False when already recorded."""
    lost = [item.to_json() for item in assessment.lost]
    row = {
        "agent_id": agent_id,
        "session_id": session_id,
        "entry_id": assessment.entry_id,
        "session_key": session_key,
        "compacted_at": assessment.compacted_at.timestamp() if assessment.compacted_at else None,
        "recorded_at": time.time(),
        "run_id": run_id,
        "tokens_before": assessment.tokens_before,
        "tokens_after": assessment.tokens_after,
        "summary_chars": assessment.summary_chars,
        "span_messages": assessment.span_messages,
        "items": len(assessment.items),
        "lost": len(lost),
        "lost_json": orjson.dumps(lost).decode(),
        "severity": assessment.severity,
        "kept_file": kept_file,
        "kept": int(kept_file is not None),
    }
    with state.transaction() as connection:
        if connection.execute(_INSERT, row).rowcount != 1:
            return False
        state.record_event(
            EVENT,
            job="checkpoint",
            run_id=run_id,
            agent_id=agent_id,
            session_key=session_key,
            session_id=session_id,
            data={
                "compaction": assessment.entry_id,
                "severity": assessment.severity,
                "tokens_before": assessment.tokens_before,
                "tokens_after": assessment.tokens_after,
                "summary_chars": assessment.summary_chars,
                "lost": len(lost),
                "kept_file": kept_file,
            },
        )
    return True


def recorded(
    state: StateDB,
    *,
    since: float | None = None,
    agents: list[str] | None = None,
    session_key: str | None = None,
    limit: int | None = None,
) -> list[Recorded]:
    """Return the recorded compactions, oldest first, filtered by time (compaction time, else
    the time it was recorded), agents and session key; with `limit`, the newest ones."""
    clauses, parameters = [], []
    if since is not None:
        clauses.append(f"{_TIME} >= ?")
        parameters.append(since)
    if agents:
        clauses.append(f"agent_id IN ({', '.join('?' * len(agents))})")
        parameters.extend(agents)
    if session_key:
        clauses.append("session_key = ?")
        parameters.append(session_key)
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    query = f"SELECT * FROM compactions {where} ORDER BY {_TIME} DESC, rowid DESC"  # noqa: S608
    if limit is not None:
        query += " LIMIT ?"
        parameters.append(limit)
    rows = state.connection.execute(query, parameters).fetchall()
    return [_recorded(row) for row in reversed(rows)]


def forget_kept(state: StateDB, agent_id: str, files: Sequence[str]) -> int:
    """Given workspace-relative files a rewind restored or removed, mark the agent's
    compactions whose lost items were kept in one of them as to be written again there;
    return how many."""
    if not files:
        return 0
    marks = ", ".join("?" * len(files))
    with state.transaction() as connection:
        return connection.execute(
            f"UPDATE compactions SET kept = 0 WHERE agent_id = ? AND kept = 1 "  # noqa: S608
            f"AND kept_file IN ({marks})",
            (agent_id, *files),
        ).rowcount


def to_keep_again(state: StateDB) -> dict[str, list[Recorded]]:
    """Return, by agent, the compactions whose lost items are to be written again
    (`forget_kept`), oldest first."""
    # Asked every checkpoint run, and almost always empty: a scan of the table, not a walk of
    # the whole time index the ORDER BY would choose (several times slower).
    rows = state.connection.execute(
        "SELECT * FROM compactions NOT INDEXED WHERE kept = 0 AND kept_file IS NOT NULL "
        "ORDER BY coalesce(compacted_at, recorded_at), rowid"
    )
    found: dict[str, list[Recorded]] = {}
    for row in rows:
        found.setdefault(row["agent_id"], []).append(_recorded(row))
    return found


def mark_kept(state: StateDB, row: Recorded, kept_file: str) -> None:
    """Record that a compaction's lost items are in `kept_file` again."""
    with state.transaction() as connection:
        connection.execute(
            "UPDATE compactions SET kept = 1, kept_file = ? "
            "WHERE agent_id = ? AND session_id = ? AND entry_id = ?",
            (kept_file, row.agent_id, row.session_id, row.entry_id),
        )


def totals(state: StateDB) -> dict[str, tuple[int, int, int]]:
    """Return, per agent, (compactions, lossy compactions, lost items) the ledger holds."""
    rows = state.connection.execute(
        "SELECT agent_id, count(*), sum(severity != 'ok'), sum(lost) FROM compactions "
        "GROUP BY agent_id"
    ).fetchall()
    return {row[0]: (row[1], row[2] or 0, row[3] or 0) for row in rows}


def session_keys(state: StateDB) -> set[str]:
    """Return the session keys the ledger holds compactions of."""
    rows = state.connection.execute("SELECT DISTINCT session_key FROM compactions")
    return {row[0] for row in rows}


def _recorded(row: sqlite3.Row) -> Recorded:
    # lazy: the assessment only where recorded compactions are read back
    from memwarden.compactions.assessment import Item

    lost = [Item(i["kind"], i["text"], i.get("marker")) for i in orjson.loads(row["lost_json"])]
    return from_row(Recorded, row, lost=lost, kept=bool(row["kept"]))


def _iso(moment: float | None) -> str | None:
    if moment is None:
        return None
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="seconds")
