"""Keep the previous window's context while a freshly reset session has little to say.

Right after a reset the live window is nearly empty. Until it holds `handoff_min_messages`
messages, ACTIVE_CONTEXT.md keeps the sections of the window before the reset, marked with the
previous session id. Where that window lives depends on the era: 2026.9.x resets in place (a
`reset` line; the previous window is the entries before it in the same transcript), 2026.7.x
gives the key a new session id and renames the old transcript `<old>.jsonl.reset.<ts>`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from memwarden.checkpoint.extract import kept_messages
from memwarden.openclaw.entries import Entry, Reset, SessionHeader

# A file-era reset renames the old transcript and creates the new one within milliseconds.
ARCHIVE_MATCH_WINDOW = timedelta(seconds=10)


@dataclass(frozen=True)
class EarlierWindow:
    """The entries of the last window before the current one that has messages.

    `reset_at` is when the reset that ended it happened (None when unknown).
    """

    entries: list[Entry]
    reset_at: datetime | None


def needs_handoff(message_count: int, min_messages: int) -> bool:
    """Return True when a window with `message_count` kept messages is too thin to stand alone."""
    return message_count < min_messages


def earlier_window(before_current: Sequence[Entry]) -> EarlierWindow | None:
    """Given the entries before the current window (ending with its Reset line), return the
    last earlier window that holds a kept message, or None when none of them does.

    Consecutive resets (`reset` then `new`) leave empty windows between them: they are passed.
    """
    end = len(before_current)
    reset_at = None
    for index in range(len(before_current) - 1, -1, -1):
        entry = before_current[index]
        if type(entry) is not Reset:
            continue
        window = before_current[index + 1 : end]
        if _has_message(window):
            return EarlierWindow(list(window), reset_at)
        end, reset_at = index, entry.timestamp
    window = before_current[:end]
    return EarlierWindow(list(window), reset_at) if _has_message(window) else None


def header_time(entries: Sequence[Entry]) -> datetime | None:
    """Given entries from the start of a transcript, return the time of its session header."""
    for entry in entries[:3]:
        if type(entry) is SessionHeader:
            return entry.timestamp
    return None


def archives_near(
    archives: Sequence[tuple[Path, datetime | None]], started_at: datetime | None
) -> list[Path]:
    """Given reset archives with their rename times and when the current transcript started,
    return the archives renamed within ARCHIVE_MATCH_WINDOW of that start, closest first.

    Used on a first run, when the state DB does not know the key's previous session id yet.
    Time alone does not say whose archive it is (another conversation may have been reset in
    the same seconds): the caller keeps only one that belonged to the same session key.
    """
    if started_at is None:
        return []
    near = []
    for path, renamed_at in archives:
        if renamed_at is None:
            continue
        distance = abs(renamed_at - started_at)
        if distance <= ARCHIVE_MATCH_WINDOW:
            near.append((distance, path.name, path))
    return [path for _, _, path in sorted(near)]


def _has_message(entries: Sequence[Entry]) -> bool:
    return bool(kept_messages(entries))
