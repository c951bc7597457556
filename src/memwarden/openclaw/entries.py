"""Transcript lines → typed entries: pure, tolerant of odd shapes, cheap.

A transcript is one JSON object a line (a JSONL file in the file era, one `transcript_events` row
a line in the SQLite era). The first line is the header `{"type":"session","version","id",…}`;
every other line carries `type`, `id`, `parentId` and an ISO `timestamp`. A `reset` line (SQLite
era) ends what the model sees: nothing before it reaches the next prompt. Fields of the wrong type
become None or empty instead of raising, so one odd line never stops a job.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple

import orjson

from memwarden.openclaw.fields import moment

CONTROL_REPLIES = frozenset({"HEARTBEAT_OK", "NO_REPLY"})


# Entries and blocks are NamedTuples: immutable, built for every transcript line a job reads,
# and about four times cheaper to build (and to define, at import) than frozen dataclasses.
# Their equality also checks the class, as a dataclass's does (see below).


class TextBlock(NamedTuple):
    """Text shown to or written by the model."""

    text: str


class ToolCallBlock(NamedTuple):
    """A tool the model asked to run, with its arguments."""

    name: str
    arguments: Mapping[str, Any]


class OtherBlock(NamedTuple):
    """A content block of a type memwarden does not use (thinking, image, …)."""

    type: str


Block = TextBlock | ToolCallBlock | OtherBlock


class Usage(NamedTuple):
    """The prompt's token counts the provider reported for one assistant message."""

    input: int = 0
    cache_read: int = 0
    cache_write: int = 0

    @property
    def context_tokens(self) -> int:
        """Return the prompt size of the call: input + cache_read + cache_write.

        This is what the session's context held when the model answered, and it is what the
        gateway stores as the session's `totalTokens` (openclaw `src/agents/usage.ts`,
        `deriveSessionTotalTokens`: "SessionEntry.totalTokens is used as a prompt/context
        snapshot. It intentionally excludes completion/output tokens."). The message's own
        `usage.totalTokens` also counts the output (1234 input + 9 output = 1243 in the
        captures, whose session rows say 1234), so it overstates the context by one reply.
        """
        return self.input + self.cache_read + self.cache_write


# Every entry starts with the fields every transcript line has that memwarden uses: type, id,
# timestamp.


class SessionHeader(NamedTuple):
    """The first line of a transcript; its `id` is the session id."""

    type: str
    id: str | None
    timestamp: datetime | None


class Message(NamedTuple):
    """A user, assistant or tool-result message; `time` is when it was sent."""

    type: str
    id: str | None
    timestamp: datetime | None
    role: str | None
    blocks: tuple[Block, ...]
    model: str | None
    usage: Usage | None
    time: datetime | None

    @property
    def text(self) -> str:
        """Return the text blocks joined by newlines (thinking and tool calls left out)."""
        return "\n".join(block.text for block in self.blocks if type(block) is TextBlock)

    @property
    def tool_calls(self) -> tuple[ToolCallBlock, ...]:
        """Return the tool calls the message asks for, in order."""
        return tuple(block for block in self.blocks if type(block) is ToolCallBlock)

    @property
    def is_control_reply(self) -> bool:
        """Return True for an assistant reply that only says HEARTBEAT_OK or NO_REPLY."""
        return self.role == "assistant" and self.text.strip() in CONTROL_REPLIES

    @property
    def is_command(self) -> bool:
        """Return True for a user message that is a slash command such as `/new`."""
        return self.role == "user" and self.text.lstrip().startswith("/")


class Compaction(NamedTuple):
    """The gateway summarised the history; entries before `first_kept_entry_id` left the prompt."""

    type: str
    id: str | None
    timestamp: datetime | None
    summary: str
    first_kept_entry_id: str | None
    tokens_before: int | None
    tokens_after: int | None


class Reset(NamedTuple):
    """The session was reset in place (`reason` is "reset" or "new"): the model forgets."""

    type: str
    id: str | None
    timestamp: datetime | None
    reason: str | None


class ModelChange(NamedTuple):
    """The session switched to another model."""

    type: str
    id: str | None
    timestamp: datetime | None
    model_id: str | None


class Other(NamedTuple):
    """A line of a type memwarden does not use (custom, custom_message, label, …)."""

    type: str
    id: str | None
    timestamp: datetime | None


# type, id, timestamp: the fields every entry starts with.
_Common = tuple[str, str | None, datetime | None]

Entry = SessionHeader | Message | Compaction | Reset | ModelChange | Other


def _same_type_eq(self: tuple, other: object) -> bool:
    """Equal when of the same class with the same fields (tuples of another class never are)."""
    return type(self) is type(other) and tuple.__eq__(self, other)  # type: ignore[arg-type]


def _same_type_ne(self: tuple, other: object) -> bool:
    return not _same_type_eq(self, other)


for _kind in (TextBlock, ToolCallBlock, OtherBlock, Usage, *Entry.__args__):
    _kind.__eq__, _kind.__ne__ = _same_type_eq, _same_type_ne  # type: ignore[method-assign]


def parse_line(line: bytes) -> Entry | None:
    """Given one transcript line, return its entry, or None for a blank line or a non-entry.

    Raise UnicodeDecodeError if the line is not valid UTF-8, orjson.JSONDecodeError if it is
    not JSON (both are ValueErrors).
    """
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        if not line.strip():
            return None
        line.decode("utf-8")  # UnicodeDecodeError: not JSON because not UTF-8
        raise
    return parse_entry(value)


def parse_entry(value: object) -> Entry | None:
    """Given one decoded transcript line, return its typed entry.

    Return None when the value is not an object or has no string `type`; never raise.
    """
    if not isinstance(value, dict):
        return None
    entry_type = value.get("type")
    if not isinstance(entry_type, str) or not entry_type:
        return None
    common = entry_type, _text(value.get("id")), moment(value.get("timestamp"))
    if entry_type == "message":
        return _message(value, common)
    if entry_type == "session":
        return SessionHeader(*common)
    if entry_type == "compaction":
        return Compaction(
            *common,
            _text(value.get("summary")) or "",
            _text(value.get("firstKeptEntryId")),
            _count(value.get("tokensBefore")),
            _count(value.get("tokensAfter")),
        )
    if entry_type == "reset":
        return Reset(*common, _text(value.get("reason")))
    if entry_type == "model_change":
        return ModelChange(*common, _text(value.get("modelId")))
    return Other(*common)


def current_window(entries: Sequence[Entry]) -> list[Entry]:
    """Given entries in transcript order, return those after the last Reset line (all if none):
    what the model still sees."""
    for index in range(len(entries) - 1, -1, -1):
        if type(entries[index]) is Reset:
            return list(entries[index + 1 :])
    return list(entries)


def _message(value: dict, common: _Common) -> Message:
    message = value.get("message")
    if not isinstance(message, dict):
        message = {}
    get = message.get
    return Message(
        *common,
        _text(get("role")),
        _blocks(get("content")),
        _text(get("model")),
        _usage(get("usage")),
        moment(get("timestamp")) or common[2],
    )


def _blocks(content: object) -> tuple[Block, ...]:
    """Return the blocks of a `content` that is a string or a list of block objects."""
    if isinstance(content, str):
        return (TextBlock(content),)
    if not isinstance(content, list):
        return ()
    return tuple([_block(item) for item in content if isinstance(item, dict)])


def _block(item: dict) -> Block:
    block_type = item.get("type")
    if block_type == "text":
        return TextBlock(_text(item.get("text")) or "")
    if block_type == "toolCall":
        arguments = item.get("arguments")
        return ToolCallBlock(
            _text(item.get("name")) or "", arguments if isinstance(arguments, dict) else {}
        )
    return OtherBlock(block_type if isinstance(block_type, str) else "")


def _usage(value: object) -> Usage | None:
    if not isinstance(value, dict):
        return None
    get = value.get
    return Usage(
        _count(get("input")) or 0, _count(get("cacheRead")) or 0, _count(get("cacheWrite")) or 0
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _count(value: object) -> int | None:
    """Return a non-negative token count, or None for anything that is not a number."""
    if type(value) is int:
        return value if value > 0 else 0
    if type(value) is float and math.isfinite(value):
        return max(int(value), 0)
    return None
