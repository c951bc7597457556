"""Checkpoint a session that has something new: gather (and redact), render, stage its files.

Imported only when a session needs it, so a run where nothing is new never loads the readers,
the extraction, the templates or jinja2.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memwarden.agent_memory.handoff_files import handoff_session, replaceable
from memwarden.checkpoint.commit.positions import load_conversation
from memwarden.checkpoint.digest.conversation import FORMAT as CONVERSATION_FORMAT
from memwarden.checkpoint.digest.conversation import KEPT_MESSAGE_CHARS, Conversation
from memwarden.checkpoint.digest.daily_log import group_by_day
from memwarden.checkpoint.outcome import SessionOutcome
from memwarden.checkpoint.read.gather import Material, gather, too_small
from memwarden.checkpoint.records import EventRecord, PositionUpdate, StoredSession
from memwarden.checkpoint.render.handoff import GATEWAY_CAPS_LIMIT, Handoff, Shown, fit_handoff
from memwarden.checkpoint.render.values import (
    ACTIVE_CONTEXT_TEMPLATE,
    DAILY_ENTRY_TEMPLATE,
    daily_entry_values,
    daily_header,
    render_template,
    same_apart_from_time,
    stamp,
)
from memwarden.fs.files import memory_folder, read_text_if_exists
from memwarden.indexing.bootstrap_files import bootstrap_lengths
from memwarden.openclaw.bootstrap import GATEWAY_BOOTSTRAP, js_length, room_after_gateway_files
from memwarden.process.errors import MemwardenError

if TYPE_CHECKING:
    from memwarden.checkpoint.run_state import RunState
    from memwarden.openclaw.agents import Agent
    from memwarden.openclaw.sessions import SessionRecord

log = logging.getLogger("memwarden.checkpoint")
# A handoff always has room for its header and its first items, however full the bootstrap is
# (the gateway then cuts it, and health says so).
MIN_HANDOFF_CHARS = 2_000


def checkpoint_changed(
    run: RunState,
    agent: Agent,
    session: SessionRecord,
    stored: StoredSession | None,
    name: str,
    target: Path,
    force: bool,
    ignore_minimum: bool,
    outcome: SessionOutcome,
) -> None:
    """Read, extract and write one session's checkpoint, filling in `outcome`.

    `name` is the session's handoff file relative to memory/, `target` its path; the session
    has a transcript.
    """
    settings = run.settings
    # What the conversation held as the last run left it, or None (read for the first time, or
    # kept in a format this memwarden does not read: built again from the transcript).
    loaded = Conversation.from_json(load_conversation(run.state_path, agent.id, session.key))
    budget = handoff_budget(run, agent)  # characters, and which limit that is
    keep = max(KEPT_MESSAGE_CHARS, 2 * budget[0])
    material = gather(run, session, stored, loaded, keep)
    outcome.counts = _counts(material)
    outcome.previous_session_id = material.earlier_session_id
    small = None if ignore_minimum else too_small(settings, material)
    if small:
        outcome.finish("skipped", small)
        return
    # Staged, not written: the commit puts the run's files in place with the positions.
    _write_handoff(run, agent, session, material, budget, target, force, outcome)
    appended = _write_daily_log(run, agent, session, material, outcome)
    outcome.redactions = run.redactor.take_counts()
    outcome.counts["new_messages"] = appended
    # Written now, or left alone because it already held exactly this: the file is this session's.
    outcome.update = _position_update(run, agent, session, material, name, stored)
    if outcome.files:
        # Every file is under <workspace>/memory/ (memory_folder): named from the workspace.
        what = " and ".join(str(Path(name).relative_to(agent.workspace)) for name in outcome.files)
        outcome.finish("written", ("would write " if run.dry_run else "wrote ") + what)
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
        outcome.finish("unchanged", "new lines, but nothing that changes the files")
    log.debug("checkpoint of %s %s: %s", agent.id, session.key, outcome.outcome)


def handoff_budget(run: RunState, agent: Agent) -> tuple[int, str]:
    """Return how many characters the agent's handoffs may have, and which limit that is: what
    the gateway's bootstrap caps leave after its own bootstrap files, at most
    `checkpoint.handoff_max_chars`, never below MIN_HANDOFF_CHARS."""
    max_chars, total_max_chars = run.bootstrap_caps[agent.id]  # every agent of the deployment
    gateway_files = bootstrap_lengths(agent.workspace, GATEWAY_BOOTSTRAP)  # the room they leave
    room = room_after_gateway_files(gateway_files, max_chars, total_max_chars)
    setting = run.settings.handoff_max_chars
    budget, limit = room, GATEWAY_CAPS_LIMIT
    if setting and setting < room:
        budget, limit = setting, "the limit set by checkpoint.handoff_max_chars"
    if budget < MIN_HANDOFF_CHARS:
        budget, limit = MIN_HANDOFF_CHARS, "the least memwarden gives a handoff"
    return budget, limit


def _write_handoff(
    run: RunState,
    agent: Agent,
    session: SessionRecord,
    material: Material,
    budget: tuple[int, str],
    target: Path,
    force: bool,
    outcome: SessionOutcome,
) -> None:
    """Render the session's handoff within `budget` (characters, and which limit that is) and
    write it when its content changed (or `force`)."""
    settings = run.settings
    handoff = Handoff(
        agent_id=agent.id,
        session=session,
        conversation=material.conversation,
        budget=budget[0],
        budget_limit=budget[1],
        options=settings,
        zone=run.zone,
        trigger=run.trigger,
    )
    template = settings.active_context_template

    def render(shown: Shown) -> str:
        return render_template(ACTIVE_CONTEXT_TEMPLATE, template, handoff.values(shown))

    rendered = fit_handoff(handoff, handoff.budget, render)
    text = stamp(rendered, run.generated_at)
    outcome.counts["handoff_chars"] = js_length(text)  # as the manifest and the gateway count
    outcome.counts["handoff_budget"] = handoff.budget
    if settings.active_context_template and handoff_session(rendered, ()) is None:
        raise MemwardenError(
            f"{settings.active_context_template} (checkpoint.active_context_template): the handoff "
            "it renders has no `> - session: `KEY`` line in its first quoted block, so memwarden "
            "could not tell the file is its own next time, nor the hook whose it is; keep the "
            "bundled template's header lines"
        )
    existing = read_text_if_exists(target)
    if not replaceable(existing):
        outcome.kept_in_place = str(target)
        return
    if not force and same_apart_from_time(existing, rendered):
        return
    outcome.files.append(str(target))
    if run.dry_run:
        outcome.previews[str(target)] = text
        return
    memory_folder(agent.workspace, create=True)
    run.staged_files().replace(target, text)


def _write_daily_log(
    run: RunState,
    agent: Agent,
    session: SessionRecord,
    material: Material,
    outcome: SessionOutcome,
) -> int:
    """Append one entry per local day for the messages no run has logged; return their count."""
    settings = run.settings
    total = sum(len(part.messages) for part in material.daily)
    if not settings.daily_log or not total:
        return total if settings.daily_log else 0
    folder = memory_folder(agent.workspace, create=not run.dry_run)
    for part in material.daily:
        for group in group_by_day(part.messages, run.zone, run.now):
            values = daily_entry_values(
                group,
                session.key,
                part.session_id or session.session_id,
                partial=part.partial,
                options=settings,
                zone=run.zone,
                fallback=run.now,
            )
            entry = render_template(DAILY_ENTRY_TEMPLATE, settings.daily_entry_template, values)
            day = group.day.isoformat()
            path = folder / f"{day}.md"
            header = daily_header(agent.id, day)  # of a file missing now
            if run.dry_run:
                shown = outcome.previews.get(str(path), "" if path.is_file() else header)
                outcome.previews[str(path)] = shown + entry
            else:
                run.staged_files().append(path, entry, header)
            if str(path) not in outcome.files:
                outcome.files.append(str(path))
    return total


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
    conversation = material.conversation
    data: dict[str, Any] = {
        "file": name,
        "messages": conversation.message_count,
        "written_at": run.now.timestamp(),
        "conversation": CONVERSATION_FORMAT,
    }
    fallback = stored.last_entry_at if stored is not None else None
    return PositionUpdate(
        agent.id,
        session.key,
        session.session_id,
        material.read.end.to_json(),
        conversation.last_at if conversation.last_at is not None else fallback,
        data,
        conversation.to_json(),
    )


def _counts(material: Material) -> dict[str, int]:
    conversation = material.conversation
    return {
        "entries_read": material.entries_read,
        "messages": conversation.message_count,
        "requests": sum(1 for message in conversation.messages if message.role == "user"),
        "outputs": sum(1 for message in conversation.messages if message.role != "user"),
        "marked_items": len(conversation.marked),
        "open_tasks": len(conversation.tasks),
        "files_referenced": len(conversation.paths),
        "tools": sum(conversation.tools.values()),
        "resets": conversation.resets,
        "compactions": conversation.compactions,
        "skipped_lines": material.read.skipped_lines,
    }
