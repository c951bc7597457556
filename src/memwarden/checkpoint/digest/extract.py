"""Which messages of a transcript a checkpoint keeps, as excerpts, without any model.

Kept: user and assistant text. Left out: thinking blocks, tool results, `HEARTBEAT_OK` /
`NO_REPLY`, user slash commands, and texts under five characters.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import NamedTuple

from memwarden.openclaw.entries import CONTROL_REPLIES, Entry, Message

Redact = Callable[[str], str]
MIN_TEXT_CHARS = 5
KEPT_ROLES = frozenset({"user", "assistant"})


class Excerpt(NamedTuple):
    """One kept message: who said it, the whole text, and when."""

    role: str
    text: str
    time: datetime | None


def kept_messages(entries: Iterable[Entry], redact: Redact | None = None) -> list[Excerpt]:
    """Given entries, return the user and assistant messages a checkpoint keeps, in order, their
    texts masked by `redact` (None: as they are, for a caller that only counts them)."""
    kept = []
    for entry in entries:
        if type(entry) is Message:
            excerpt = excerpt_of(entry, redact)
            if excerpt is not None:
                kept.append(excerpt)
    return kept


def excerpt_of(message: Message, redact: Redact | None) -> Excerpt | None:
    """Return the message as an Excerpt (its text masked by `redact`), or None when a checkpoint
    leaves it out (tool results, `Message.is_control_reply`, `Message.is_command`, short
    texts)."""
    role = message.role
    if role not in KEPT_ROLES:
        return None
    # Message.text joins the blocks on every call: joined once here, where every message of
    # every read passes, rather than once for each test.
    text = message.text.strip()
    if role == "assistant" and text in CONTROL_REPLIES:
        return None
    if role == "user" and text.startswith("/"):
        return None
    if len(text) < MIN_TEXT_CHARS:
        return None
    return Excerpt(role, redact(text) if redact is not None else text, message.time)
