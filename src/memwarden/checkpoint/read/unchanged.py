"""Skip an agent whose store and transcripts did not change since the last run, after a few stats.

A run records, per agent, the stat signature (inode, size, modification time in ns) of what it
read: the session store (sessions.json, or the agent database and its write-ahead log) and, in
the file era, the transcripts of the chosen sessions. The next run compares them first. When
none changed, the settings are the same, the files written are still there and no chosen session
went stale meanwhile, it repeats the last conclusions without opening the store. A file modified
less than 2 s before it was recorded is not trusted on its stat (a rewrite within the same
timestamp tick could go unseen), as git does with "racily clean" index entries.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from memwarden.checkpoint.outcome import SessionOutcome
from memwarden.checkpoint.records import AgentRecord, Signature
from memwarden.fs.files import identity, sha256_bytes

if TYPE_CHECKING:
    from memwarden.openclaw.agents import Agent

RACY_SECONDS = 2.0
# Outcomes a later run may repeat; a failure is always tried again.
REPEATABLE = frozenset({"written", "unchanged", "skipped"})


def settings_key(values: Mapping[str, Any]) -> str:
    """Given the settings a checkpoint's output depends on, return a short digest of them."""
    encoded = orjson.dumps(dict(values), option=orjson.OPT_SORT_KEYS, default=str)
    return sha256_bytes(encoded)[:16]


def signatures(paths: Iterable[Path]) -> dict[str, Signature]:
    """Return the stat signature of each path (None when it does not exist)."""
    return {str(path): identity(path) for path in paths}


def still_valid(record: AgentRecord, agent: Agent, settings: str, now: datetime) -> bool:
    """Return True when nothing the record depends on changed: same settings and era, not past
    `valid_until`, every watched file with the same trusted signature, every file written
    still there."""
    if record.settings != settings or record.era != agent.era:
        return False
    if record.valid_until is not None and now.timestamp() >= record.valid_until:
        return False
    for name, recorded in record.signatures.items():
        if recorded is not None and record.recorded_at - recorded[2] / 1e9 < RACY_SECONDS:
            return False
        if identity(name) != recorded:
            return False
    memory = agent.workspace / "memory"
    return all(
        (memory / session["file"]).is_file()
        for session in record.sessions
        if session.get("outcome") in ("written", "unchanged") and session.get("file")
    )


def replay(record: AgentRecord, agent: Agent) -> list[SessionOutcome]:
    """Return the outcomes of a skipped agent: its sessions as the last run left them."""
    workspace = str(agent.workspace)
    if not record.sessions:
        return [SessionOutcome(agent.id, workspace, "skipped", record.reason)]
    outcomes = []
    for session in record.sessions:
        skipped = session.get("outcome") == "skipped"
        outcomes.append(
            SessionOutcome(
                agent.id,
                workspace,
                "skipped" if skipped else "unchanged",
                session.get("reason", "") if skipped else "nothing new since the last run",
                session_key=session.get("key"),
                session_id=session.get("id"),
            )
        )
    return outcomes


def make_record(
    agent: Agent,
    settings: str,
    watched: Mapping[str, Signature],
    outcomes: Sequence[SessionOutcome],
    files: Mapping[str, str],
    reason: str,
    valid_until: datetime | None,
    taken_at: float,
) -> AgentRecord | None:
    """Return the record of an agent's run, or None when a session failed (try it again).

    `taken_at` is the wall-clock time (Unix seconds) when `watched` was stat'ed.
    """
    if any(outcome.outcome not in REPEATABLE for outcome in outcomes):
        return None
    sessions = [
        {
            "key": outcome.session_key or "",
            "id": outcome.session_id or "",
            "outcome": outcome.outcome,
            "reason": outcome.reason,
            "file": files.get(outcome.session_key or "", ""),
        }
        for outcome in outcomes
        if outcome.session_key
    ]
    return AgentRecord(
        agent.id,
        agent.era,
        settings,
        dict(watched),
        sessions,
        reason,
        valid_until.timestamp() if valid_until else None,
        taken_at,
    )
