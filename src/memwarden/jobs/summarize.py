"""`memwarden summarize`: a session summary in memory/sessions/summaries/ for a window that ended.

The session-summary hook starts it, detached, on `command:new` and `command:reset` (which the
gateway also fires for `sessions.reset`), just before the gateway resets the session:

    memwarden summarize --agent main --session-key agent:main:main --session-id ID
        --previous-session-id ID --event command:reset --event-time 2026-11-22T05:28:26.169Z

SQLite era (≥ 2026.8): the reset happens in place; the window is what precedes the reset line
written at or after `--event-time` (waiting up to `index.summary_wait_seconds` for it), back to
the reset before it. File era: the reset renames `<old>.jsonl` to `<old>.jsonl.reset.<ts>`; the
window is that whole transcript. A window is summarised once, however many events name it.

A summary holds an excerpt of the conversation (its first messages and its last ones), the lines
that carry observation markers collected under each marker, the tasks still open at its end
(`- [ ]`, `TODO:` and `[TODO]` items) as `[TODO]`, and the files the conversation referred to
(tool-call arguments and paths in the text): the grammar of `memwarden.agent_memory.observations`,
the one a checkpoint uses. No LLM is asked.
"""

from __future__ import annotations

import argparse
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from memwarden.agent_memory.handoff_files import summary_stem
from memwarden.agent_memory.observations import (
    MARKERS,
    argument_paths,
    find_paths,
    lines_outside_code,
    markers_in_line,
    open_todos,
    shorten,
    unlisted,
)
from memwarden.checkpoint.digest.extract import Excerpt
from memwarden.checkpoint.digest.redact import build_redactor
from memwarden.fs.files import atomic_write
from memwarden.fs.templating import render
from memwarden.jobs.common import add_dry_run, writable
from memwarden.openclaw.agents import Agent
from memwarden.openclaw.entries import (
    Entry,
    Message,
    Reset,
    TextBlock,
    ToolCallBlock,
    current_window,
)
from memwarden.openclaw.keys import classify
from memwarden.openclaw.sessions import load_sessions, reset_archives, resolve_transcript_file
from memwarden.openclaw.transcripts import TranscriptLocation, read_tail
from memwarden.process.errors import UsageError
from memwarden.process.runtime import JobContext, JobResult
from memwarden.settings.option import is_plain_name

JOB = "summarize"
EVENTS = ("command:new", "command:reset")
TEMPLATE = "summary/session_summary.md.j2"
MAX_WINDOW_ENTRIES = 20_000
POLL_SECONDS = 0.25
LOCK_WAIT_SECONDS = 30.0
MAX_ITEMS_PER_SECTION = 50
MAX_FILES = 50
ITEM_LIMIT = 300
EXCERPT_LIMIT = 600
TITLE_LIMIT = 70

_BULLET = re.compile(r"^\s*(?:[-*+>]|\d+[.)])\s+")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--agent", metavar="ID", help="the agent's id (default: the one in the session key)"
    )
    parser.add_argument(
        "--session-key", required=True, metavar="KEY", help="the session key that was reset"
    )
    parser.add_argument("--session-id", metavar="ID", help="the session id named by the event")
    parser.add_argument(
        "--previous-session-id",
        metavar="ID",
        help="the id of the window that ended (file era: its transcript was renamed)",
    )
    parser.add_argument(
        "--event", choices=EVENTS, default="command:reset", help="the hook event (for the record)"
    )
    parser.add_argument(
        "--event-time",
        type=_moment,
        metavar="ISO",
        help="when the hook fired; the reset written after it closes the window",
    )
    add_dry_run(parser)


def run(context: JobContext, options: argparse.Namespace) -> JobResult:
    for flag, value in (
        ("--session-id", options.session_id),
        ("--previous-session-id", options.previous_session_id),
    ):
        if value is not None and not is_plain_name(value):
            raise UsageError(f"{flag} {value!r}: not a session id (a plain file name is expected)")
    key = options.session_key.strip().lower()
    info = classify(key)
    agent_id = options.agent or info.agent_id or context.deployment.default_agent().id
    agent = context.deployment.agent(agent_id)
    if agent is None:
        raise UsageError(f"--agent {agent_id}: no such agent in {context.deployment.state_dir}")
    writable(context.deployment, agent)
    if info.is_automation:
        return _skipped(f"{key} is an automation session: no summary")
    session_id = options.previous_session_id or options.session_id
    location = transcript_of(agent, session_id, key)
    if location is None:
        which = f"session {session_id}" if session_id else "it (no --session-id given)"
        return _skipped(f"{key}: no transcript found for {which}: no summary")
    window, note = read_window(location, options.event_time, context)
    messages = conversation(window)
    if not messages:
        return _skipped(f"{key}: the window that ended holds no conversation: no summary")
    ended = _Ended(agent.id, key, location.session_id, *_window_bounds(window))
    if _already_written(context, ended):
        return _skipped(f"{key}: this window was already summarised")
    checkpoint = context.config.checkpoint
    redactor = build_redactor(checkpoint.redact_patterns, enabled=checkpoint.redact)
    messages = redact_messages(messages, redactor.redact)
    summary = summarize(messages, context.config.index.summary_excerpt_messages)
    return _write(context, options, agent, ended, summary, note)


class _Ended(NamedTuple):
    """A window that ended, as the state DB records its summary: summarised once."""

    agent_id: str
    session_key: str
    session_id: str
    start: str  # its first entry's id (or time)
    end: str  # its last entry's


# --- finding the window -----------------------------------------------------------------------


def transcript_of(agent: Agent, session_id: str | None, key: str) -> TranscriptLocation | None:
    """Given the agent and the ended window's session id, return where its transcript is.

    File era: the store entry of `key`, while it still names that session, says where its
    transcript is (its `sessionFile` wins over `<sessionId>.jsonl`); once the reset renamed it,
    the newest reset archive of that session.
    """
    if agent.era == "sqlite":
        if not session_id:
            session_id = next((r.session_id for r in load_sessions(agent) if r.key == key), None)
        return TranscriptLocation("sqlite", agent.sqlite_path, session_id) if session_id else None
    if not session_id:
        return None
    same = (r for r in load_sessions(agent) if r.key == key and r.session_id == session_id)
    record = next(same, None)
    if record is not None and record.transcript is not None:
        return record.transcript
    live = resolve_transcript_file(agent.sessions_dir, session_id)
    if live is not None:
        return TranscriptLocation("file", live, session_id)
    archives = [
        path for path in reset_archives(agent.sessions_dir, session_id) if path.suffix != ".zst"
    ]
    return TranscriptLocation("file", archives[0], session_id) if archives else None


def read_window(
    location: TranscriptLocation, event_time: datetime | None, context: JobContext
) -> tuple[list[Entry], str]:
    """Given a transcript, return the window that ended and a note for the reader (or "").

    SQLite era with an event time: wait for the closing reset line; after
    `index.summary_wait_seconds` without it, return the open window and say so.
    """
    if location.kind == "file":
        return current_window(read_tail(location, MAX_WINDOW_ENTRIES).entries), ""
    deadline = time.monotonic() + context.config.index.summary_wait_seconds
    while True:
        entries = read_tail(location, MAX_WINDOW_ENTRIES).entries
        window = ended_window(entries, event_time)
        if window is not None:
            return window, ""
        if time.monotonic() >= deadline:
            return current_window(entries), (
                "the gateway's reset line did not appear; this is the window as it stood"
            )
        time.sleep(POLL_SECONDS)


def ended_window(entries: Sequence[Entry], event_time: datetime | None) -> list[Entry] | None:
    """Given a transcript's entries, return the window that a reset closed, or None.

    With `event_time` (when the hook fired, just before the gateway reset the session), the
    closing reset is the first one written at or after that time: None while it has not been
    written yet. Without it, the closing reset is the last one; with no reset at all, the
    current window is returned (a file-era transcript is one window).
    """
    resets = [position for position, entry in enumerate(entries) if type(entry) is Reset]
    if event_time is None:
        closing = resets[-1] if resets else len(entries)
    else:
        written = [
            position
            for position in resets
            if entries[position].timestamp and entries[position].timestamp >= event_time
        ]
        if not written:
            return None
        closing = written[0]
    return current_window(entries[:closing])


def _window_bounds(window: list[Entry]) -> tuple[str, str]:
    def identity(entry: Entry) -> str:
        return entry.id or (entry.timestamp.isoformat() if entry.timestamp else "?")

    return identity(window[0]), identity(window[-1])


# --- summarising ------------------------------------------------------------------------------


@dataclass
class SessionSummary:
    """What a summary file says about one conversation window."""

    title: str
    started: datetime | None
    ended: datetime | None
    user_messages: int
    assistant_messages: int
    observations: dict[str, list[str]] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    excerpt: list[Excerpt] = field(default_factory=list)  # texts shortened
    omitted: int = 0


def redact_messages(messages: Sequence[Message], redact: Callable[[str], str]) -> list[Message]:
    """Return the messages as a summary reads them, masked by `redact`: their text (the text
    blocks joined, as the summary quotes it) and the paths their tool calls name, each masked
    as a checkpoint masks it. Other blocks (thinking, images) and other arguments are left out:
    a summary never shows them."""
    masked = []
    for message in messages:
        # Paths found, then masked, as a checkpoint does; "paths" is an argument they are read from.
        calls = [
            ToolCallBlock(
                call.name, {"paths": [redact(path) for path in argument_paths(call.arguments)]}
            )
            for call in message.tool_calls
        ]
        masked.append(message._replace(blocks=(TextBlock(redact(message.text)), *calls)))
    return masked


def conversation(window: Sequence[Entry]) -> list[Message]:
    """Given a window, return its user and assistant messages that say something."""
    return [
        entry
        for entry in window
        if type(entry) is Message
        and entry.role in ("user", "assistant")
        and not entry.is_control_reply
        and (entry.text.strip() or entry.tool_calls)
    ]


def summarize(messages: Sequence[Message], excerpt_messages: int) -> SessionSummary:
    """Given a window's messages, return its summary (excerpt of `excerpt_messages` messages)."""
    title = _title(messages)
    quotable = [message for message in messages if message.text.strip()]
    times = [moment for message in messages if (moment := _time(message)) is not None]
    return SessionSummary(
        title=title,
        started=min(times) if times else None,
        ended=max(times) if times else None,
        user_messages=sum(1 for message in messages if message.role == "user"),
        assistant_messages=sum(1 for message in messages if message.role == "assistant"),
        observations=observations(messages),
        files=referenced_files(messages),
        excerpt=_excerpt(quotable, excerpt_messages),
        omitted=max(len(quotable) - excerpt_messages, 0),
    )


def observations(messages: Sequence[Message]) -> dict[str, list[str]]:
    """Return the marked lines under each marker (MARKERS order), and under TODO the tasks still
    open at the end of the window."""
    found: dict[str, dict[str, None]] = {name: {} for name in MARKERS}
    for message in messages:
        for line in lines_outside_code(message.text):
            for name in dict.fromkeys(markers_in_line(line)):
                if name != "TODO":  # a task: listed below while it is open
                    _add(found[name], unlisted(line))
    for task in open_todos(message.text for message in messages):
        _add(found["TODO"], task)
    return {name: list(items) for name, items in found.items() if items}


def referenced_files(messages: Sequence[Message]) -> list[str]:
    """Return the files the messages refer to, in order of first mention, at most MAX_FILES."""
    found: dict[str, None] = {}
    for message in messages:
        for call in message.tool_calls:
            found.update(dict.fromkeys(argument_paths(call.arguments)))
        found.update(dict.fromkeys(find_paths(message.text)))
    return list(found)[:MAX_FILES]


def _title(messages: Sequence[Message]) -> str:
    for message in messages:
        if message.role == "user" and not message.is_command:
            first_line = next((line for line in message.text.splitlines() if line.strip()), "")
            if first_line:
                return shorten(_BULLET.sub("", first_line).lstrip("#").strip(), TITLE_LIMIT)
    return "Session"


def _excerpt(quotable: list[Message], count: int) -> list[Excerpt]:
    tail = count - 2
    chosen = quotable if len(quotable) <= count else quotable[:2] + quotable[len(quotable) - tail :]
    return [
        Excerpt(message.role or "", shorten(message.text, EXCERPT_LIMIT), _time(message))
        for message in chosen
    ]


def _time(message: Message) -> datetime | None:
    return message.time or message.timestamp


def _add(items: dict[str, None], text: str) -> None:
    cleaned = shorten(text.strip(), ITEM_LIMIT)
    if cleaned and len(items) < MAX_ITEMS_PER_SECTION:
        items.setdefault(cleaned, None)


# --- writing ----------------------------------------------------------------------------------


def _write(
    context: JobContext,
    options: argparse.Namespace,
    agent: Agent,
    ended: _Ended,
    summary: SessionSummary,
    note: str,
) -> JobResult:
    key = ended.session_key
    zone = context.zone
    written = context.now()
    text = render(
        TEMPLATE,
        context.config.index.summary_template or None,
        summary=summary,
        agent_id=agent.id,
        session_key=key,
        session_id=ended.session_id,
        event=options.event,
        note=note,
        written=written,
        when=lambda moment: (
            moment.astimezone(zone).strftime("%Y-%m-%d %H:%M %Z") if moment else "?"
        ),
    )
    memory_dir = agent.workspace / "memory"
    stem = summary_stem((summary.ended or written).astimezone(zone), key)
    if options.dry_run:
        path = free_path(memory_dir, stem)
        status, line = "would_write", f"summarize {key}: would write {path} ({len(text):,} chars)"
    else:
        lock_wait = max(context.config.history.lock_wait_seconds, LOCK_WAIT_SECONDS)
        with context.memory_lock(agent.id, lock_wait):
            if _already_written(context, ended):
                return _skipped(f"{key}: this window was already summarised")
            path = free_path(memory_dir, stem)
            atomic_write(path, text, root=agent.workspace)  # creates its folders if missing
            context.state.connection.execute(
                "INSERT OR REPLACE INTO session_summaries VALUES (?, ?, ?, ?, ?, ?, ?)",
                (*ended, str(path), time.time()),
            )
        context.state.record_event(
            "summary.written",
            job=JOB,
            agent_id=agent.id,
            session_key=key,
            session_id=ended.session_id,
            data={"path": str(path), "event": options.event, "chars": len(text)},
        )
        status, line = "written", f"summarize {key}: wrote {path}"
    data = {"dry_run": options.dry_run, "status": status, "path": str(path), "chars": len(text)}
    return JobResult(JOB, data=data, lines=[line])


def free_path(folder: Path, stem: str) -> Path:
    """Return `<stem>.md` below the folder, or `<stem>-2.md`, `-3`, … when taken."""
    candidate = folder / f"{stem}.md"
    number = 2
    while os.path.lexists(candidate):
        candidate = folder / f"{stem}-{number}.md"
        number += 1
    return candidate


def _already_written(context: JobContext, ended: _Ended) -> bool:
    row = context.state.connection.execute(
        "SELECT 1 FROM session_summaries WHERE agent_id = ? AND session_key = ? "
        "AND session_id = ? AND window_start = ? AND window_end = ?",
        ended,
    ).fetchone()
    return row is not None


def _skipped(reason: str) -> JobResult:
    return JobResult(
        JOB, data={"status": "skipped", "reason": reason}, lines=[f"summarize: {reason}"]
    )


def _moment(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO time: {text!r}") from None
    if moment.tzinfo is None:
        raise argparse.ArgumentTypeError(f"{text!r} has no time zone (add Z or +00:00)")
    return moment
