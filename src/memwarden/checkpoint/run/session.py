"""Checkpoint one session: skip it when nothing is new, else hand it to `pipeline`.

Everything a run shares (settings, redactor, time zone, the stored rows) is built once in
`run_state.RunState`; a session with nothing new costs a stat (a query for SQLite) and never
loads the pipeline. Failures of one session become a `failed` outcome for it alone; position
updates and events are collected on the outcome and written by the caller in one transaction.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from memwarden.checkpoint.digest.conversation import FORMAT
from memwarden.checkpoint.outcome import SessionOutcome
from memwarden.checkpoint.records import EventRecord, StoredSession
from memwarden.fs.files import memory_folder
from memwarden.openclaw.transcripts import has_new_data
from memwarden.process import stopping
from memwarden.process.errors import describe_error

if TYPE_CHECKING:
    from memwarden.checkpoint.run_state import RunState
    from memwarden.openclaw.agents import Agent
    from memwarden.openclaw.sessions import SessionRecord

log = logging.getLogger("memwarden.checkpoint")


def checkpoint_one(
    run: RunState,
    agent: Agent,
    session: SessionRecord,
    *,
    force: bool,
    ignore_minimum: bool = False,
) -> SessionOutcome:
    """Given the run, an agent and one of its sessions, checkpoint it and return the outcome.

    `force` reads and writes even when nothing is new; `ignore_minimum` writes a session under
    the size minimums too (one about to be reset or compacted). Never raises for a problem of
    this session: it becomes a `failed` outcome.
    """
    outcome = SessionOutcome(
        agent=agent.id,
        workspace=str(agent.workspace),
        outcome="failed",
        reason="",
        session_key=session.key,
        session_id=session.session_id,
        dry_run=run.dry_run,
    )
    mark = run.files.mark() if run.files is not None else 0
    try:
        _checkpoint(run, agent, session, force, ignore_minimum, outcome)
    except Exception as error:  # noqa: BLE001 - one broken session never stops the others
        stopping.check()
        if run.files is not None:  # what it staged goes with it
            run.files.rollback(mark)
        outcome.finish("failed", describe_error(error))
        outcome.update = None
        outcome.events = [
            EventRecord(
                "checkpoint.failed",
                agent.id,
                session.key,
                session.session_id,
                {"error": outcome.reason, "trigger": run.trigger},
            )
        ]
        log.info("checkpoint of %s %s failed: %s", agent.id, session.key, outcome.reason)
    return outcome


def _checkpoint(
    run: RunState,
    agent: Agent,
    session: SessionRecord,
    force: bool,
    ignore_minimum: bool,
    outcome: SessionOutcome,
) -> None:
    location = session.transcript
    if location is None:
        outcome.finish("skipped", "the session has no transcript yet")
        return
    name = run.handoff_name(agent, session.key)
    target = memory_folder(agent.workspace, create=False) / name
    stored = run.stored.get((agent.id, session.key))
    same = stored if stored is not None and stored.session_id == session.session_id else None
    if not force and _nothing_new(run, agent, session, same, name, target):
        outcome.finish("unchanged", "nothing new since the last run")
        return

    # Its own redactor (counts, memory of what it masked): only a session that is read needs one.
    run = replace(run, redactor=run.redactor.fresh())
    # lazy: a session with nothing new never loads the readers, the digest and the templates
    from memwarden.checkpoint.run.pipeline import checkpoint_changed

    checkpoint_changed(run, agent, session, stored, name, target, force, ignore_minimum, outcome)


def _nothing_new(
    run: RunState,
    agent: Agent,
    session: SessionRecord,
    same: StoredSession | None,
    name: str,
    target: Path,
) -> bool:
    """Return True when the last run saw everything and the file still holds this session."""
    position = same.position if same is not None else None  # parsed from its JSON
    if position is None or session.transcript is None:
        return False
    if same.data.get("conversation") != FORMAT:  # written before conversations were kept
        return False
    if run.owners.get((agent.id, name)) != (session.key, session.session_id):
        return False
    if has_new_data(session.transcript, position):
        return False
    return target.is_file()
