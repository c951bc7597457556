"""Session summaries without an LLM: which window ended, and what it said.

A summary holds an excerpt of the conversation (its first messages and its last ones), the lines
that carry observation markers collected under each marker, the tasks still open at its end
(`- [ ]`, `TODO:` and `[TODO]` items) as `[TODO]`, and the files the conversation referred to
(tool-call arguments and paths in the text): the grammar of `memwarden.agent_memory.observations`,
the one a checkpoint uses.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

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
from memwarden.openclaw.entries import (
    Block,
    Entry,
    Message,
    Reset,
    TextBlock,
    ToolCallBlock,
    current_window,
)

MAX_ITEMS_PER_SECTION = 50
MAX_FILES = 50
ITEM_LIMIT = 300
EXCERPT_LIMIT = 600
TITLE_LIMIT = 70

_BULLET = re.compile(r"^\s*(?:[-*+>]|\d+[.)])\s+")


@dataclass(frozen=True)
class ExcerptMessage:
    role: str
    time: datetime | None
    text: str


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
    excerpt: list[ExcerptMessage] = field(default_factory=list)
    omitted: int = 0


def ended_window(entries: Sequence[Entry], event_time: datetime | None) -> list[Entry] | None:
    """Given a transcript's entries, return the window that a reset closed, or None.

    With `event_time` (when the hook fired, just before the gateway reset the session), the
    closing reset is the first one written at or after that time: None while it has not been
    written yet. Without it, the closing reset is the last one; with no reset at all, the
    current window is returned (a file-era transcript is one window).
    """
    resets = [position for position, entry in enumerate(entries) if type(entry) is Reset]
    if event_time is None:
        if not resets:
            return current_window(entries)
        closing = resets[-1]
    else:
        closing = next(
            (
                position
                for position in resets
                if entries[position].timestamp is not None
                and entries[position].timestamp >= event_time
            ),
            None,
        )
        if closing is None:
            return None
    opening = max((position for position in resets if position < closing), default=-1)
    return list(entries[opening + 1 : closing])


def redact_messages(messages: Sequence[Message], redact: Callable[[str], str]) -> list[Message]:
    """Return the messages as a summary reads them, masked by `redact`: their text (the text
    blocks joined, as the summary quotes it) and their tool calls with every string argument
    masked, in lists too. Other blocks (thinking, images) and other argument values are left
    out: a summary never shows them."""
    return [_redact_message(message, redact) for message in messages]


def _redact_message(message: Message, redact: Callable[[str], str]) -> Message:
    text = message.text
    blocks: list[Block] = [TextBlock(redact(text))] if text else []
    blocks += [
        ToolCallBlock(
            call.name, {key: _redact_value(value, redact) for key, value in call.arguments.items()}
        )
        for call in message.tool_calls
    ]
    return message._replace(blocks=tuple(blocks))


def _redact_value(value: object, redact: Callable[[str], str]) -> object:
    """Mask a string, or the strings of a list; other values are never read by a summary."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact(item) if isinstance(item, str) else None for item in value]
    return None


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
    times = [moment for message in messages if (moment := _time(message)) is not None]
    return SessionSummary(
        title=title,
        started=min(times) if times else None,
        ended=max(times) if times else None,
        user_messages=sum(1 for message in messages if message.role == "user"),
        assistant_messages=sum(1 for message in messages if message.role == "assistant"),
        observations=observations(messages),
        files=referenced_files(messages),
        excerpt=_excerpt(messages, excerpt_messages),
        omitted=max(len(_quotable(messages)) - excerpt_messages, 0),
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


def _quotable(messages: Sequence[Message]) -> list[Message]:
    return [message for message in messages if message.text.strip()]


def _excerpt(messages: Sequence[Message], count: int) -> list[ExcerptMessage]:
    quotable = _quotable(messages)
    tail = count - 2
    chosen = quotable if len(quotable) <= count else quotable[:2] + quotable[len(quotable) - tail :]
    return [
        ExcerptMessage(message.role or "", _time(message), shorten(message.text, EXCERPT_LIMIT))
        for message in chosen
    ]


def _time(message: Message) -> datetime | None:
    return message.time or message.timestamp


def _add(items: dict[str, None], text: str) -> None:
    cleaned = shorten(text.strip(), ITEM_LIMIT)
    if cleaned and len(items) < MAX_ITEMS_PER_SECTION:
        items.setdefault(cleaned, None)
