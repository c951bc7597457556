"""Checkpoint a session that has something new: gather (and redact), render, stage its files.

Imported only when a session needs it, so a run where nothing is new never loads the readers,
the extraction, the templates or jinja2.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memwarden.checkpoint import gather as gather_module
from memwarden.checkpoint.daily_log import group_by_day
from memwarden.checkpoint.extract import kept_messages
from memwarden.checkpoint.gather import Material, gather
from memwarden.checkpoint.handoff_files import handoff_session, replaceable
from memwarden.checkpoint.outcome import SessionOutcome
from memwarden.checkpoint.records import EventRecord, PositionUpdate, StoredSession
from memwarden.checkpoint.render import (
    ACTIVE_CONTEXT_TEMPLATE,
    DAILY_ENTRY_TEMPLATE,
    active_context_values,
    daily_entry_values,
    daily_header,
    render_template,
    same_apart_from_time,
    stamp,
)
from memwarden.checkpoint.writer import memory_folder, read_existing
from memwarden.errors import MemwardenError

if TYPE_CHECKING:
    from memwarden.checkpoint.run_state import RunState
    from memwarden.openclaw.agents import Agent
    from memwarden.openclaw.sessions import SessionRecord
    from memwarden.openclaw.transcripts import TranscriptLocation

log = logging.getLogger("memwarden.checkpoint")


def checkpoint_changed(
    run: RunState,
    agent: Agent,
    session: SessionRecord,
    location: TranscriptLocation,
    stored: StoredSession | None,
    same: StoredSession | None,
    name: str,
    target: Path,
    force: bool,
    ignore_minimum: bool,
    outcome: SessionOutcome,
) -> None:
    """Read, extract and write one session's checkpoint, filling in `outcome`.

    `name` is the session's handoff file relative to memory/, `target` its path.
    """
    settings = run.settings
    material = gather(run, session, location, stored, same)
    outcome.counts = _counts(material)
    if material.previous is not None:
        outcome.previous_session_id = material.previous.session_id
        outcome.previous_in_place = material.previous.in_place
    too_small = None if ignore_minimum else gather_module.too_small(settings, material)
    if too_small:
        _finish(outcome, "skipped", too_small)
        return
    # Staged, not written: `commit` puts the run's files in place with the positions.
    _write_handoff(run, agent, session, material, target, force, outcome)
    appended = _write_daily_log(run, agent, session, material, outcome)
    outcome.redactions = run.redactor.take_counts()
    outcome.counts["new_messages"] = appended
    # Written now, or left alone because it already held exactly this: the file is this session's.
    outcome.update = _position_update(run, agent, session, material, name, stored)
    if outcome.files:
        what = " and ".join(_describe_files(outcome.files, agent.workspace))
        _finish(outcome, "written", ("would write " if run.dry_run else "wrote ") + what)
        outcome.events.append(
            EventRecord(
                "checkpoint.written",
                agent.id,
                session.key,
                session.session_id,
                {
                    "files": outcome.files,
                    "counts": outcome.counts,
                    "redactions": outcome.redactions,
                    "trigger": run.trigger,
                    "previous_session_id": outcome.previous_session_id,
                },
            )
        )
    else:
        _finish(outcome, "unchanged", "new lines, but nothing that changes the files")
    log.debug("checkpoint of %s %s: %s", agent.id, session.key, outcome.outcome)


def _write_handoff(
    run: RunState,
    agent: Agent,
    session: SessionRecord,
    material: Material,
    target: Path,
    force: bool,
    outcome: SessionOutcome,
) -> bool:
    """Render the session's handoff and write it when its content changed (or `force`)."""
    settings = run.settings
    values = active_context_values(
        agent_id=agent.id,
        session=session,
        current=material.current,
        previous=material.previous,
        entries_read=material.read.entries_read + material.previous_entries_read,
        limits=settings.limits,
        zone=run.zone,
        trigger=run.trigger,
    )
    rendered = render_template(ACTIVE_CONTEXT_TEMPLATE, settings.active_context_template, values)
    if settings.active_context_template and handoff_session(rendered, ()) is None:
        raise MemwardenError(
            f"{settings.active_context_template} (checkpoint.active_context_template): the handoff "
            "it renders has no `> - session: `KEY`` line in its first quoted block, so memwarden "
            "could not tell the file is its own next time, nor the hook whose it is; keep the "
            "bundled template's header lines"
        )
    existing = read_existing(target)
    if not replaceable(existing):
        outcome.kept_in_place = str(target)
        outcome.warnings.append(
            f"{target}: exists and was not written by memwarden (no `> - session:` line), so "
            "this conversation's handoff was not written; move it (your notes into MEMORY.md, "
            "say), then run `memwarden checkpoint --force`"
        )
        return False
    if not force and same_apart_from_time(existing, rendered):
        return False
    text = stamp(rendered, run.generated_at)
    outcome.files.append(str(target))
    if run.dry_run:
        outcome.previews[str(target)] = text
        return True
    memory_folder(agent.workspace, create=True)
    run.staged_files().replace(target, text)
    return True


def _write_daily_log(
    run: RunState,
    agent: Agent,
    session: SessionRecord,
    material: Material,
    outcome: SessionOutcome,
) -> int:
    """Append one entry per local day for the messages no run has logged; return their count."""
    settings = run.settings
    sources = [
        (
            material.old_session_id,
            kept_messages(material.old_new_entries, run.redactor.redact),
            material.old_partial,
        ),
        (
            session.session_id,
            kept_messages(material.read.new_entries, run.redactor.redact),
            material.read.new_partial,
        ),
    ]
    total = sum(len(messages) for _, messages, _ in sources)
    if not settings.daily_log or not total:
        return total if settings.daily_log else 0
    folder = memory_folder(agent.workspace, create=not run.dry_run)
    for session_id, messages, partial in sources:
        for group in group_by_day(messages, run.zone, run.now):
            values = daily_entry_values(
                group,
                session.key,
                session_id or session.session_id,
                partial=partial,
                limits=settings.limits,
                zone=run.zone,
                fallback=run.now,
            )
            entry = render_template(DAILY_ENTRY_TEMPLATE, settings.daily_entry_template, values)
            path = folder / group.file_name
            _append_daily(run, agent, path, group.day.isoformat(), entry, outcome)
            if str(path) not in outcome.files:
                outcome.files.append(str(path))
    return total


def _append_daily(
    run: RunState, agent: Agent, path: Path, day: str, entry: str, outcome: SessionOutcome
) -> None:
    if run.dry_run:
        header = "" if path.is_file() else daily_header(agent.id, day)
        outcome.previews[str(path)] = outcome.previews.get(str(path), header) + entry
        return
    files = run.staged_files()
    files.append(path, entry, "" if files.exists(path) else daily_header(agent.id, day))


def _position_update(
    run: RunState,
    agent: Agent,
    session: SessionRecord,
    material: Material,
    name: str,
    stored: StoredSession | None,
) -> PositionUpdate | None:
    if run.dry_run:
        return None
    read = material.read
    last_entry = read.last_entry_at
    previous = material.previous
    carried = (
        previous.session_id
        if previous is not None and previous.session_id != session.session_id
        else None
    )
    data: dict[str, Any] = {
        "file": name,
        "messages": len(material.current.messages),
        "written_at": run.now.timestamp(),
    }
    if carried:
        data["previous_session_id"] = carried
    fallback = stored.last_entry_at if stored is not None else None
    return PositionUpdate(
        agent.id,
        session.key,
        session.session_id,
        read.end.to_json(),
        last_entry.timestamp() if last_entry else fallback,
        data,
    )


def _counts(material: Material) -> dict[str, int]:
    current = material.current
    counts = {
        "entries_read": material.read.entries_read + material.previous_entries_read,
        "messages": len(current.messages),
        "requests": len(current.requests),
        "outputs": len(current.outputs),
        "files_referenced": len(current.files),
        "tools": sum(current.tools.values()),
        "todos": len(current.todos),
        "skipped_lines": material.read.skipped_lines,
    }
    if material.previous is not None:
        counts["previous_messages"] = len(material.previous.digest.messages)
    return counts


def _finish(outcome: SessionOutcome, result: str, reason: str) -> None:
    outcome.outcome = result
    outcome.reason = reason


def _describe_files(files: list[str], workspace: Path) -> list[str]:
    described = []
    for name in files:
        path = Path(name)
        try:
            described.append(str(path.relative_to(workspace)))
        except ValueError:
            described.append(str(path))
    return described
