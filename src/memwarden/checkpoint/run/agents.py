"""Checkpoint one agent: skip it when nothing it depends on changed (`skip_unchanged`), else
choose its sessions from the store and checkpoint each (`checkpoint_agent`, which never raises:
a problem becomes a `failed` outcome)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from memwarden.checkpoint.commit.staging import AgentFiles
from memwarden.checkpoint.outcome import SessionOutcome
from memwarden.checkpoint.read import unchanged
from memwarden.fs.files import remove_stale_temp_files
from memwarden.openclaw import sqlite_ro
from memwarden.process import stopping
from memwarden.process.errors import describe_error

if TYPE_CHECKING:
    from memwarden.checkpoint.commit.staging import StagedFile
    from memwarden.checkpoint.records import AgentRecord
    from memwarden.checkpoint.run_state import RunState
    from memwarden.openclaw.agents import Agent
    from memwarden.openclaw.sessions import SessionRecord


@dataclass
class AgentResult:
    """The outcomes of one agent's sessions, and the record to keep for the next run."""

    outcomes: list[SessionOutcome]
    record: AgentRecord | None = None
    skipped_fast: bool = False
    # The agent's files, written as temp files, for `DurableWrites.commit_agents` to put in place.
    staged: list[StagedFile] = field(default_factory=list)
    # The agent's conversations as this run read them from its store (automation sessions left
    # out), for the compaction watch that follows; None when the store was not read.
    sessions: list[SessionRecord] | None = None


def checkpoint_agent(run: RunState, agent: Agent, *, force: bool) -> AgentResult:
    """Checkpoint the sessions `checkpoint.sessions` chooses for one agent; never raises.

    Call `skip_unchanged` first: this always looks at the store.
    """
    stopping.check()
    try:
        return read_and_stage(run, agent, lambda run: _checkpoint_sessions(run, agent, force))
    except Exception as error:  # noqa: BLE001 - one broken agent never stops the others
        stopping.check()
        reason = describe_error(error)
        return AgentResult([SessionOutcome(agent.id, str(agent.workspace), "failed", reason)])


def skip_unchanged(run: RunState, agent: Agent) -> AgentResult | None:
    """Return the agent's result when nothing it depends on changed since the last run (a few
    stats, no store opened), else None. Never for a dry run."""
    record = run.agent_records.get(agent.id)
    if record is None or run.dry_run:
        return None
    try:
        valid = unchanged.still_valid(record, agent, run.settings_key, run.now)
    except OSError:
        return None
    if not valid:
        return None
    return AgentResult(unchanged.replay(record, agent), record, skipped_fast=True)


def read_and_stage(
    run: RunState, agent: Agent, read: Callable[[RunState], AgentResult]
) -> AgentResult:
    """Return what `read(run)` found for the agent, given the run with a fresh `AgentFiles` for
    the agent's writes (none in a dry run: it has no writer), with those writes staged as temp
    files for the commit. Raise what `read` raises, or OSError if a temp file cannot be written
    (none is left)."""
    if run.writer is not None:
        files = AgentFiles(agent.id, agent.workspace, real_workspace=Path(agent.real_workspace))
        run = replace(run, files=files)
    try:
        result = read(run)
    finally:
        # The read-only connection `sqlite_ro` keeps to the agent's database, closed in the
        # thread that opened it (only that thread may), so a run over many agents keeps few open.
        sqlite_ro.close(agent.sqlite_path)
    result.staged = run.files.stage(run.writer) if run.files is not None else []
    return result


def _checkpoint_sessions(run: RunState, agent: Agent, force: bool) -> AgentResult:
    # lazy: only an agent with something new reads its sessions
    from memwarden.checkpoint.read.select import select_sessions
    from memwarden.checkpoint.run.session import checkpoint_one
    from memwarden.openclaw.sessions import load_sessions

    taken_at = time.time()
    if not run.dry_run:  # what a run killed mid-write left in memory/ (before the journal)
        remove_stale_temp_files(agent.memory_dir)
    watched = unchanged.signatures(agent.store_files)
    settings = run.settings
    unreadable: list[str] = []  # entries of the store that cannot be read: a failure each
    sessions = load_sessions(agent, unreadable, automation=False)  # never chosen: not even read
    selection = select_sessions(
        sessions,
        agent_id=agent.id,
        mode=settings.sessions,
        now=run.now,
        staleness=timedelta(hours=settings.staleness_hours),
        exclude_patterns=tuple(settings.exclude_sessions),
    )
    failed = [SessionOutcome(agent.id, str(agent.workspace), "failed", p) for p in unreadable]
    # One file per chosen session (none chosen: the agent's one outcome says why).
    files = {s.key: run.handoff_name(agent, s.key) for s in selection.sessions}
    if not selection.sessions:
        outcomes = [SessionOutcome(agent.id, str(agent.workspace), "skipped", selection.reason)]
    else:
        if agent.era == "file":
            transcripts = [s.transcript for s in selection.sessions if s.transcript is not None]
            watched |= unchanged.signatures(transcript.path for transcript in transcripts)
        outcomes = [checkpoint_one(run, agent, one, force=force) for one in selection.sessions]
    outcomes += failed
    record = unchanged.make_record(
        agent,
        run.settings_key,
        watched,
        outcomes,
        files,
        selection.reason,
        selection.valid_until,
        taken_at,
    )
    return AgentResult(outcomes, record, sessions=sessions)
