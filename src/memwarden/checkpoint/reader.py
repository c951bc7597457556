"""Read what a checkpoint needs from one transcript: its tail, and what is new since last time.

The tail (the last `tail_entries` lines) gives the context; the entries after the stored read
position are what the daily log reports. When the stored position falls inside the tail, only
the bytes (or rows) after it are read again; when it falls before the tail, every entry of the
tail is new and the count is a lower bound. When the position no longer fits the transcript (the
file was replaced), or there is none but a last-entry time (a history rewind took the daily log
back), the entries newer than the stored last-entry time count as new.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from memwarden.openclaw.entries import Entry, split_windows
from memwarden.openclaw.sessions import archive_timestamp, reset_archives
from memwarden.openclaw.trajectory import trajectory_session_key
from memwarden.openclaw.transcripts import (
    ReadPosition,
    TailResult,
    TranscriptLocation,
    read_since,
    read_tail,
    skipped_lines_report,
    transcript_size,
)


@dataclass
class TranscriptRead:
    """What was read from one transcript.

    `window` is the current window (after the last reset line in the tail) and `before_window`
    the entries of the tail before it (ending with that reset line). `new_entries` are those
    the last run did not see; `new_partial` says there were more than the tail held.
    `skipped_lines` counts the lines of the tail that were skipped; `skipped_report` says, by
    reason, those among the new lines (None: none), so each is reported by one run.
    """

    location: TranscriptLocation
    window: list[Entry]
    before_window: list[Entry]
    new_entries: list[Entry]
    new_partial: bool
    end: ReadPosition
    entries_read: int
    reached_start: bool
    bytes_seen: int
    skipped_lines: int
    skipped_report: str | None = None

    @property
    def last_entry_at(self) -> datetime | None:
        """Return the time of the newest entry read that has one."""
        for entry in reversed(self.new_entries or self.window or self.before_window):
            if entry.timestamp is not None:
                return entry.timestamp
        return None


def read_session(
    location: TranscriptLocation,
    position: ReadPosition | None,
    last_entry_at: float | None,
    tail_entries: int,
) -> TranscriptRead:
    """Given a transcript, the stored position and last-entry time of this same session (or
    None), and how many lines to read, return the TranscriptRead.

    Raise StoreError if the transcript cannot be read.
    """
    tail = read_tail(location, tail_entries)
    new_entries, partial, new_read = _new_since(location, tail, position, last_entry_at)
    before, window = split_windows(tail.entries)
    return TranscriptRead(
        location=location,
        window=window,
        before_window=before,
        new_entries=new_entries,
        new_partial=partial,
        end=new_read.end,
        entries_read=len(tail.entries),
        reached_start=tail.reached_start,
        bytes_seen=_bytes_seen(location, tail),
        skipped_lines=tail.malformed + tail.invalid_utf8 + tail.oversized,
        skipped_report=skipped_lines_report(location, new_read),
    )


def read_more(location: TranscriptLocation, tail_entries: int) -> tuple[list[Entry], bool]:
    """Return the last `tail_entries` entries of a transcript and whether they reach its start."""
    tail = read_tail(location, tail_entries)
    return tail.entries, tail.reached_start


def transcript_bytes(read: TranscriptRead, minimum: int) -> int:
    """Return the transcript's size, or a lower bound of it that is at least `minimum`.

    Only when the tail read is smaller than `minimum` and does not cover the whole transcript is
    the transcript measured (for SQLite, a sum over its rows).
    """
    if read.bytes_seen >= minimum or read.reached_start:
        return read.bytes_seen
    return transcript_size(read.location)


def previous_location(
    current: TranscriptLocation, previous_session_id: str
) -> tuple[TranscriptLocation, datetime | None] | None:
    """Given the current transcript and the id the key had before, return where that earlier
    session's transcript is now, with the time of the reset when known, or None.

    File era: the newest `<id>.jsonl.reset.<ts>` archive next to the current transcript.
    SQLite era: the rows of the old id in the same database (they stay after a new id).
    """
    if current.kind == "sqlite":
        return TranscriptLocation("sqlite", current.path, previous_session_id), None
    archives = reset_archives(current.path.parent, previous_session_id)
    if not archives:
        return None
    return (
        TranscriptLocation("file", archives[0], previous_session_id),
        archive_timestamp(archives[0].name),
    )


def reset_archives_with_times(sessions_dir: Path) -> list[tuple[Path, datetime | None]]:
    """Return every reset archive of a sessions folder with the time it was renamed."""
    return [(path, archive_timestamp(path.name)) for path in reset_archives(sessions_dir)]


def archive_session_id(archive: Path) -> str:
    """Given a reset archive's path, return the session id its name starts with."""
    name = archive.name[: archive.name.rfind(".reset.")].removesuffix(".jsonl")
    return name.split("-topic-", 1)[0]


def archive_owner(archive: Path) -> str | None:
    """Given a reset archive's path, return the session key its trajectory names (lower-cased),
    or None when the gateway left no trajectory for it."""
    return trajectory_session_key(archive.parent, archive_session_id(archive))


def _new_since(
    location: TranscriptLocation,
    tail: TailResult,
    position: ReadPosition | None,
    last_entry_at: float | None,
) -> tuple[list[Entry], bool, TailResult]:
    """Return (new entries, more new than the tail held, the read that holds the new lines:
    its `end` is the position to store).

    Without a position, what is newer than `last_entry_at` is new (every entry without either).
    """
    where = "invalid" if position is None else _locate(position, tail)
    if where == "inside":
        delta = read_since(location, position)
        if not delta.reset_detected:
            return delta.entries, False, delta
    elif where == "before":
        return tail.entries, True, tail
    if last_entry_at is None:
        return tail.entries, not tail.reached_start, tail
    cutoff = datetime.fromtimestamp(last_entry_at, UTC)
    newer = [entry for entry in tail.entries if entry.timestamp and entry.timestamp > cutoff]
    return newer, False, tail


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


def _bytes_seen(location: TranscriptLocation, tail: TailResult) -> int:
    if location.kind == "file":
        return tail.end.offset or 0
    return tail.bytes_read
