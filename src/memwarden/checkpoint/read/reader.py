"""Read what a checkpoint needs from one transcript: the lines after where the conversation was
read to, or, the first time, its recent lines; and what the daily log has not logged yet.

A conversation read before goes on from its stored position, in chunks, whatever the
transcript's length: everything after it is new. One read for the first time (or whose position
no longer fits the transcript: the file was replaced) starts from its recent lines (60, or 240
when those hold fewer than 5 requests), so a first run costs the same on a long transcript as
on a short one.

The daily log has its own rule, over the same recent lines: the entries after the stored read
position are new; when that position falls before those lines, every one of them is new and the
count a lower bound; when there is no position but a last-entry time (a history rewind took the
daily log back), the entries newer than that time are new.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from memwarden.checkpoint.digest.extract import kept_messages
from memwarden.openclaw.entries import Entry
from memwarden.openclaw.sessions import reset_archives
from memwarden.openclaw.transcripts import (
    ReadPosition,
    TailResult,
    TranscriptLocation,
    read_since,
    read_tail,
    skipped_lines_report,
)

# How far back a conversation is read the first time: its last 60 lines, four times as many when
# those hold fewer than 5 requests (long tool loops).
FIRST_READ_ENTRIES = 60
FIRST_READ_REQUESTS = 5
# Lines taken in at a time when reading on from a position (a bound on memory, not on time).
CHUNK_ENTRIES = 2_000

Take = Callable[[list[Entry]], None]


@dataclass
class TranscriptRead:
    """What one read of a transcript covered: `end` is the position after its last line,
    `reached_start` says it covers the transcript from its first line, `whole_since` that it
    read on from the position it was given (False: the recent lines only)."""

    location: TranscriptLocation
    start: ReadPosition
    end: ReadPosition
    entries_read: int
    reached_start: bool
    whole_since: bool
    skipped_lines: int
    skipped_report: str | None


def read_on(location: TranscriptLocation, start: ReadPosition, take: Take) -> TranscriptRead | None:
    """Given a transcript and where it was read to (its start position: from its first line),
    hand every entry after that to `take`, chunk by chunk; return what was read, or None when
    the position no longer fits the transcript (the file was replaced, maybe part way:
    `read_recent` then).

    Raise StoreError if the transcript cannot be read.
    """
    counts = TailResult([], start, start)
    at = start
    entries_read = 0
    while True:
        chunk = read_since(location, at, CHUNK_ENTRIES)
        if chunk.reset_detected:
            return None
        counts.malformed += chunk.malformed
        counts.invalid_utf8 += chunk.invalid_utf8
        counts.oversized += chunk.oversized
        entries_read += len(chunk.entries)
        if chunk.entries:
            take(chunk.entries)
        if chunk.end == at or len(chunk.entries) + chunk.unparsed < CHUNK_ENTRIES:
            at = chunk.end
            break
        at = chunk.end
    return TranscriptRead(
        location,
        start,
        at,
        entries_read,
        reached_start=start.seq == -1 or start.offset == 0,
        whole_since=True,
        skipped_lines=counts.malformed + counts.invalid_utf8 + counts.oversized,
        skipped_report=skipped_lines_report(location, counts),
    )


def read_recent(location: TranscriptLocation, take: Take) -> TranscriptRead:
    """Hand the transcript's recent entries (`_recent_tail`) to `take`; return what was read.

    Raise StoreError if the transcript cannot be read.
    """
    tail = _recent_tail(location)
    if tail.entries:
        take(tail.entries)
    return TranscriptRead(
        location,
        tail.start,
        tail.end,
        len(tail.entries),
        reached_start=tail.reached_start,
        whole_since=False,
        skipped_lines=tail.malformed + tail.invalid_utf8 + tail.oversized,
        skipped_report=skipped_lines_report(location, tail),
    )


def _recent_tail(location: TranscriptLocation) -> TailResult:
    """Return the transcript's recent entries: its last FIRST_READ_ENTRIES, four times as many
    when those hold fewer than FIRST_READ_REQUESTS requests. Raise StoreError if it cannot be
    read."""
    tail = read_tail(location, FIRST_READ_ENTRIES)
    if not tail.reached_start and _requests(tail.entries) < FIRST_READ_REQUESTS:
        tail = read_tail(location, FIRST_READ_ENTRIES * 4)
    return tail


def new_since(
    location: TranscriptLocation,
    position: ReadPosition | None,
    last_entry_at: float | None,
) -> tuple[list[Entry], bool]:
    """Return the entries the daily log has not logged yet, by the stored position and last
    entry time of the same session (see the module's docstring), and whether there may be more
    of them than were read (the count is then a lower bound).

    Raise StoreError if the transcript cannot be read.
    """
    tail = _recent_tail(location)
    where = "invalid" if position is None else _locate(position, tail)
    if where == "inside":
        delta = read_since(location, position)  # type: ignore[arg-type]  # inside: not None
        if not delta.reset_detected:
            return delta.entries, False
    elif where == "before":
        return tail.entries, True
    if last_entry_at is None:
        return tail.entries, not tail.reached_start
    cutoff = datetime.fromtimestamp(last_entry_at, UTC)
    return [entry for entry in tail.entries if entry.timestamp and entry.timestamp > cutoff], False


def previous_location(
    current: TranscriptLocation, previous_session_id: str
) -> TranscriptLocation | None:
    """Given the current transcript and the id the key had before, return where that earlier
    session's transcript is now, or None.

    File era: the newest `<id>.jsonl.reset.<ts>` archive next to the current transcript.
    SQLite era: the rows of the old id in the same database (they stay after a new id).
    """
    if current.kind == "sqlite":
        return TranscriptLocation("sqlite", current.path, previous_session_id)
    archives = reset_archives(current.path.parent, previous_session_id)
    return TranscriptLocation("file", archives[0], previous_session_id) if archives else None


def _requests(entries: list[Entry]) -> int:
    return sum(1 for message in kept_messages(entries) if message.role == "user")


def _locate(position: ReadPosition, tail: TailResult) -> str:
    """Return where a stored position lies: "inside" the tail, "before" it, or "invalid"."""
    start, end = tail.start, tail.end
    if end.seq is not None:
        if position.seq is None or position.seq > end.seq:
            return "invalid"
        return "inside" if start.seq is None or position.seq >= start.seq else "before"
    same_file = (position.device, position.inode) == (end.device, end.inode)
    if not same_file or position.offset is None or position.offset > (end.offset or 0):
        return "invalid"
    return "inside" if position.offset >= (start.offset or 0) else "before"
