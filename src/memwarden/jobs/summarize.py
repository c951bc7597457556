"""`memwarden summarize`: write memory/YYYY-MM-DD-session-<key slug>.md for a window that ended.

The session-summary hook starts it, detached, on `command:new` and `command:reset` (which the
gateway also fires for `sessions.reset`), just before the gateway resets the session:

    memwarden summarize --agent main --session-key agent:main:main --session-id ID
        --previous-session-id ID --event command:reset --event-time 2026-11-22T05:28:26.169Z

SQLite era (≥ 2026.8): the reset happens in place; the window is what precedes the reset line
written at or after `--event-time` (waiting up to `index.summary_wait_seconds` for it), back to
the reset before it. File era: the reset renames `<old>.jsonl` to `<old>.jsonl.reset.<ts>`; the
window is that whole transcript. A window is summarised once, however many events name it.
"""

from __future__ import annotations

import argparse
import time
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from memwarden.agent_memory.handoff_files import key_slug
from memwarden.checkpoint.digest.daily_log import resolve_timezone
from memwarden.checkpoint.digest.redact import build_redactor
from memwarden.fs.files import atomic_write, ensure_dir
from memwarden.fs.templating import render
from memwarden.indexing.summary import (
    SessionSummary,
    conversation,
    ended_window,
    redact_messages,
    summarize,
)
from memwarden.jobs.common import add_dry_run, writable
from memwarden.openclaw.agents import Agent
from memwarden.openclaw.entries import Entry, current_window
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


def _window_bounds(window: list[Entry]) -> tuple[str, str]:
    def identity(entry: Entry) -> str:
        return entry.id or (entry.timestamp.isoformat() if entry.timestamp else "?")

    return identity(window[0]), identity(window[-1])


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
    zone = resolve_timezone(context.config.general.timezone)
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
    # Named after the session key, never the conversation's words: INDEX.md lists every file
    # name and title of the pool, and every session (another peer's too) gets INDEX.md.
    stem = f"{(summary.ended or written).astimezone(zone):%Y-%m-%d}-session-{key_slug(key)}"
    if options.dry_run:
        path = free_path(memory_dir, stem)
        return JobResult(
            JOB,
            data={"dry_run": True, "status": "would_write", "path": str(path), "chars": len(text)},
            lines=[f"summarize {key}: would write {path} ({len(text):,} chars)"],
        )
    lock_wait = max(context.config.history.lock_wait_seconds, LOCK_WAIT_SECONDS)
    with context.memory_lock(agent.id, lock_wait):
        if _already_written(context, ended):
            return _skipped(f"{key}: this window was already summarised")
        ensure_dir(memory_dir, root=agent.workspace)
        path = free_path(memory_dir, stem)
        atomic_write(path, text, root=agent.workspace)
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
    return JobResult(
        JOB,
        data={"dry_run": False, "status": "written", "path": str(path), "chars": len(text)},
        lines=[f"summarize {key}: wrote {path}"],
    )


def free_path(memory_dir: Path, stem: str) -> Path:
    """Return `<stem>.md` in the folder, or `<stem>-2.md`, `-3`, … when taken."""
    candidate = memory_dir / f"{stem}.md"
    number = 2
    while candidate.exists() or candidate.is_symlink():
        candidate = memory_dir / f"{stem}-{number}.md"
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
