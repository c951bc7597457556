"""Commit a run: every agent's staged files and read positions, durably, in one batch.

1. The temp files are durable already: each was fsynced by the process that wrote it
   (`staging`).
2. One state transaction at `synchronous = FULL` records the positions, events and agent records
   with the journal of pending renames. An agent one of whose sessions another checkpoint has
   committed since this run read it (`checkpoint --session` beside the scheduled run) is left
   out whole: its temp files are removed and its outcome says so.
3. The renames, agent by agent under the agent's memory lock. The journal rows stay until the
   run's end, when the folders renamed into are flushed and the manifests refreshed
   (`DurableWrites.done`), so a kill or a power cut before it makes the next run place those
   files again (or find them in place) and refresh their manifests.

A kill anywhere leaves either nothing committed (the temp files are removed by the next run) or
a journal the next run rolls forward (`journal.roll_forward`): no entry is lost or logged twice.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from memwarden.checkpoint.commit import journal, positions
from memwarden.process.errors import MemwardenError, describe_error

if TYPE_CHECKING:
    from memwarden.checkpoint.commit.journal import MemoryLock
    from memwarden.checkpoint.commit.staging import StagedFile
    from memwarden.checkpoint.outcome import SessionOutcome
    from memwarden.checkpoint.records import AgentRecord
    from memwarden.store.state import StateDB

CONFLICT_REASON = "another checkpoint committed this session first; the next run goes on from there"


@dataclass
class AgentCommit:
    """What one agent's checkpoint commits: its outcomes (with their position updates and
    events), its staged files, the record to keep (or drop), and, per session key updated, when
    its row was last written as the run read it (None: there was none)."""

    agent_id: str
    outcomes: list[SessionOutcome]
    real_workspace: str  # the agent's workspace's real path
    staged: list[StagedFile] = field(default_factory=list)
    record: AgentRecord | None = None
    forget_record: bool = False
    expected: Mapping[str, float | None] = field(default_factory=dict)


@dataclass
class CommitReport:
    """The agents left out (another run committed one of their sessions first), the problems
    (files that could not be put in place now: the next run does it from the journal) and, by
    agent whose files are in place, the folders they were renamed into."""

    conflicts: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    placed: dict[str, set[str]] = field(default_factory=dict)


def commit(
    state: StateDB,
    commits: Sequence[AgentCommit],
    *,
    token: str,
    run_id: int | None,
    memory_lock: MemoryLock,
) -> CommitReport:
    """Commit every agent's checkpoint as the module says; return what was left out."""
    report = CommitReport()
    commits = [item for item in commits if _has_anything(item)]
    if not commits:
        return report
    committed = _record(state, commits, token, run_id, report)
    for item in commits:
        if item.agent_id in report.conflicts:
            for staged in item.staged:
                Path(staged.temp).unlink(missing_ok=True)
            _mark_conflict(item.outcomes)
    for item in sorted(committed, key=lambda item: item.agent_id):
        if not item.staged:
            continue
        try:
            with memory_lock(item.agent_id):
                # An agent's files are all in its workspace.
                real = item.real_workspace
                for staged in item.staged:
                    journal.place(staged, verify=False, real_root=Path(real))
        except (OSError, MemwardenError) as error:
            report.problems.append(
                f"checkpoint of agent {item.agent_id}: {describe_error(error)}; its files are "
                "put in place by the next run"
            )
            continue
        report.placed[item.agent_id] = {os.path.dirname(staged.target) for staged in item.staged}
    return report


def _record(
    state: StateDB,
    commits: list[AgentCommit],
    token: str,
    run_id: int | None,
    report: CommitReport,
) -> list[AgentCommit]:
    """Record positions, events, records and the journal in one transaction at synchronous =
    FULL; return the commits recorded (the others are conflicts, in `report`)."""
    connection = state.connection
    committed = []
    connection.execute("PRAGMA synchronous = FULL")
    try:
        with state.transaction():
            for item in commits:
                if positions.changed_sessions(state, item.agent_id, item.expected):
                    report.conflicts.append(item.agent_id)
                    continue
                outcomes = item.outcomes
                positions.write(
                    state,
                    [outcome.update for outcome in outcomes if outcome.update is not None],
                    [event for outcome in outcomes for event in outcome.events],
                    run_id=run_id,
                    agents=[item.record] if item.record is not None else [],
                    forget_agents=[item.agent_id] if item.forget_record else [],
                )
                journal.record(connection, token, item.staged)
                committed.append(item)
    finally:
        connection.execute("PRAGMA synchronous = NORMAL")
    return committed


def _has_anything(item: AgentCommit) -> bool:
    return bool(
        item.staged
        or item.record is not None
        or item.forget_record
        or any(outcome.update is not None or outcome.events for outcome in item.outcomes)
    )


def _mark_conflict(outcomes: list[SessionOutcome]) -> None:
    for outcome in outcomes:
        if outcome.update is None and not outcome.files:
            continue
        outcome.finish("skipped", CONFLICT_REASON)
        outcome.files = []
        outcome.update = None
        outcome.events = []
