"""Digests → the values the templates see, and the rendered files.

Texts arrive masked (`extract` redacts every field whole, as it reads it) and are cut here, so
a cut never leaves half a secret. The bundled templates render as Python (`bundled`); jinja2 is
imported only for an operator's own template (it costs tens of milliseconds). ACTIVE_CONTEXT.md
is rendered with a placeholder for the run's time, so a run can tell whether anything but the
time changed and leave an unchanged file alone.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, tzinfo
from typing import TYPE_CHECKING, Any

from memwarden.agent_memory.observations import marked_lines, shorten
from memwarden.checkpoint.digest.conversation import ContextSize
from memwarden.checkpoint.digest.daily_log import DayGroup
from memwarden.checkpoint.render.bundled import BUNDLED
from memwarden.fs.templating import render
from memwarden.openclaw.context_count import (
    TRANSCRIPT_MEASURES,
    gateway_count,
    gateway_gap,
    gateway_source,
)

if TYPE_CHECKING:
    from types import SimpleNamespace

    from memwarden.openclaw.sessions import SessionRecord

ACTIVE_CONTEXT_TEMPLATE = "checkpoint/active_context.md.j2"
DAILY_HEADER_TEMPLATE = "checkpoint/daily_header.md.j2"
DAILY_ENTRY_TEMPLATE = "checkpoint/daily_entry.md.j2"
GENERATED_AT_PLACEHOLDER = "\x00generated-at\x00"
# How long the run's time may be where the placeholder stood, when comparing with the old file.
_MAX_TIME_CHARS = 64
_BLANK_LINES = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")
_TRAILING_SPACE = re.compile(r"(?<![ \t])[ \t]+\n")  # tried once per run of blanks: linear
_HEADING = re.compile(r"^(#{1,6})([ \t])", re.MULTILINE)


def daily_entry_values(
    group: DayGroup,
    session_key: str,
    session_id: str,
    *,
    partial: bool,
    options: SimpleNamespace,
    zone: tzinfo | None,
    fallback: datetime,
) -> dict[str, Any]:
    """Return the values of one daily-log entry for the new messages of one day: every request,
    and every marked line of the replies, one line each, cut as the `checkpoint.*` `options`
    say."""
    first, last = group.messages[0], group.messages[-1]
    max_chars = options.daily_log_max_chars
    requests = [message for message in group.messages if message.role == "user"]
    replies = [message for message in group.messages if message.role == "assistant"]
    said = []
    for message in group.messages:
        time = (message.time or fallback).astimezone(zone).strftime("%H:%M")
        if message.role == "user":
            lines = [message.text]
        else:
            lines = [line for _, line in marked_lines(message.text)]
        said += [
            {"time": time, "who": message.role, "text": shorten(line, max_chars)} for line in lines
        ]
    return {
        "time": (last.time or fallback).astimezone(zone).strftime("%H:%M"),
        "first_time": (first.time or fallback).astimezone(zone).strftime("%H:%M"),
        "session": {"key": session_key, "id": session_id},
        "requests": len(requests),
        "outputs": len(replies),
        "partial": partial,
        "said": said,
        "last_request": shorten(requests[-1].text, max_chars) if requests else None,
        "last_output": shorten(replies[-1].text, max_chars) if replies else None,
    }


def pressure_text(
    session: SessionRecord, context: ContextSize, zone: tzinfo | None = None
) -> str | None:
    """Given the session record and the context size the transcript shows, return the context
    size as text that says which count it is and as of when. None if unknown.

    The store's `totalTokens` when it has one not marked stale, 0 included ("the gateway's
    count", "fresh" when it says so), else what the transcript shows since its last reset or
    compaction: the prompt size of the last model call, what a compaction after that call left,
    or 0 after a reset (and then whether the gateway's count is stale or missing); out of the
    session's context window when known. A compaction that did not say what it left makes the
    size unknown: the prompt before it is no longer the context.
    """
    fresh = session.total_tokens_fresh
    tokens = gateway_count(session.total_tokens, fresh)
    if tokens is not None:
        moment, source = session.updated, gateway_source(fresh)
    else:
        gap = f"the gateway's count is {gateway_gap(fresh)}"
        if context.compacted_at is not None:
            compacted = minute(context.compacted_at, zone)
            unsaid = "which did not say what it left"
            return f"unknown since the compaction at {compacted}, {unsaid} ({gap})"
        tokens, moment = context.tokens, context.at
        source = f"{TRANSCRIPT_MEASURES[context.measure]} ({gap})"
    if tokens is None:
        return None
    window = session.context_tokens
    size = (
        f"{tokens:,} of {window:,} tokens ({tokens / window:.0%})"
        if window
        else f"{tokens:,} tokens (context window unknown)"
    )
    when = minute(moment, zone)
    return f"{size} as of {when}: {source}" if when else f"{size}: {source}"


def render_template(name: str, custom_path: str | None, values: dict[str, Any]) -> str:
    """Render a bundled template (or the operator's own file, with jinja2) with `values`."""
    bundled = None if custom_path else BUNDLED.get(name)
    if bundled is not None:
        return bundled(values)

    return render(name, custom_path or None, **values)


def daily_header(agent_id: str, day: str) -> str:
    """Return the first lines of a new daily log (`YYYY-MM-DD.md`) of an agent."""
    return render_template(DAILY_HEADER_TEMPLATE, None, {"date": day, "agent": agent_id})


def stamp(rendered: str, generated_at: str) -> str:
    """Return the rendered file with the run's time in place of the placeholder."""
    return rendered.replace(GENERATED_AT_PLACEHOLDER, generated_at)


def same_apart_from_time(existing: str | None, rendered: str) -> bool:
    """Given the file on disk and a new rendering (with the time placeholder), return True when
    they differ only in the time (at most 64 characters on one line where the placeholder is).
    """
    if existing is None:
        return False
    parts = rendered.split(GENERATED_AT_PLACEHOLDER)
    if len(parts) == 1:
        return existing == rendered
    if not existing.startswith(parts[0]):
        return False
    position = len(parts[0])
    for part in parts[1:-1]:
        found = existing.find(part, position, position + _MAX_TIME_CHARS + len(part))
        if found < 0 or "\n" in existing[position:found]:
            return False
        position = found + len(part)
    last = parts[-1]
    gap = len(existing) - len(last) - position
    return (
        0 <= gap <= _MAX_TIME_CHARS
        and existing.endswith(last)
        and "\n" not in existing[position : position + gap]
    )


def tidy(text: str) -> str:
    """Return text without trailing spaces and with at most one blank line in a row."""
    if "\n" not in text:
        return text.strip()
    return _BLANK_LINES.sub("\n\n", _TRAILING_SPACE.sub("\n", text)).strip()


def demote_headings(text: str) -> str:
    """Return Markdown text with its headings two levels deeper (at most ######), so a summary
    with `## Decisions` stays inside the section that quotes it."""
    return _HEADING.sub(lambda match: "#" * min(6, len(match[1]) + 2) + match[2], text)


def minute(at: float | datetime | None, zone: tzinfo | None) -> str | None:
    """Return the local time of `at` (Unix seconds, or an aware datetime) to the minute, in ISO
    8601; None for None."""
    if at is None:
        return None
    moment = at if isinstance(at, datetime) else datetime.fromtimestamp(at, UTC)
    return moment.astimezone(zone).isoformat(timespec="minutes")
