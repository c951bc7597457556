"""Tail readers for transcripts of both storage eras, resumable from a stored position.

File era: `<sessionId>.jsonl`, read backwards from the end in bounded chunks, so memory does not
grow with the file; a last line without its newline is still being written and is left for the
next read. SQLite era: rows of `transcript_events` for one session, by `seq`, the line in
`event_json` or zstd-compressed in `event_zstd`, read through `sqlite_ro` (read-only, short
transactions). Bad lines are skipped and counted, never fatal. A `ReadPosition` lets a job read
only what is new since its last run and tells when the transcript was replaced under it.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import BinaryIO, Literal

import orjson
import zstandard

from memwarden.errors import StoreError
from memwarden.openclaw.entries import Entry, MalformedLine, parse_line
from memwarden.openclaw.sqlite_ro import read_with_retry

DEFAULT_MAX_ENTRIES = 200
DEFAULT_CHUNK_SIZE = 64 * 1024
DEFAULT_MAX_LINE_BYTES = 32 * 1024 * 1024

_POSITION_FIELDS = ("offset", "device", "inode", "seq")
# A ZstdDecompressor must not be used by two threads at once (python-zstandard); one per thread.
_THREAD_STATE = threading.local()


@dataclass(frozen=True)
class TranscriptLocation:
    """Where a session's transcript lives.

    `file`: `path` is the JSONL file. `sqlite`: `path` is the agent database and the transcript
    is the rows of `transcript_events` whose `session_id` is `session_id`.
    """

    kind: Literal["file", "sqlite"]
    path: Path
    session_id: str

    def __post_init__(self) -> None:
        if self.kind not in ("file", "sqlite"):
            raise ValueError(f"transcript kind must be 'file' or 'sqlite', got {self.kind!r}")


@dataclass(frozen=True)
class ReadPosition:
    """How far a transcript has been read.

    Files: `offset` is the byte just past the last complete line read, and `device`/`inode`
    identify the file, so a replaced file is noticed. SQLite: `seq` is the last row read
    (-1 before the first row).
    """

    offset: int | None = None
    device: int | None = None
    inode: int | None = None
    seq: int | None = None

    def to_json(self) -> dict[str, int]:
        """Return the position as a small JSON object for memwarden's state database."""
        return {
            name: value for name in _POSITION_FIELDS if (value := getattr(self, name)) is not None
        }

    @classmethod
    def from_json(cls, value: str | bytes | Mapping[str, object]) -> ReadPosition:
        """Given what `to_json` returned (or its JSON text), return the position.

        Raise ValueError if the value is not a position.
        """
        if isinstance(value, str | bytes):
            value = orjson.loads(value)
        if not isinstance(value, Mapping):
            raise ValueError(f"a read position must be a JSON object, got {value!r}")
        numbers = {name: value.get(name) for name in _POSITION_FIELDS}
        for name, number in numbers.items():
            if number is not None and type(number) is not int:
                raise ValueError(f"read position field {name!r} must be an integer, got {number!r}")
        if numbers["offset"] is None and numbers["seq"] is None:
            raise ValueError(f"a read position needs an offset or a seq, got {value!r}")
        return cls(**numbers)


@dataclass
class TailResult:
    """What one read returned, and what it skipped.

    `start` is the position just before the first line examined (reading on from it returns the
    same entries again) and `end` the position after the last one. `malformed`, `invalid_utf8`
    and `oversized` count skipped lines; `partial_last_line` says an unterminated last line was
    left unread; `reached_start` that the read covers the transcript from its first line;
    `reset_detected` that the given position was no longer valid and the tail was read instead.
    """

    entries: list[Entry]
    start: ReadPosition
    end: ReadPosition
    malformed: int = 0
    invalid_utf8: int = 0
    oversized: int = 0
    bytes_read: int = 0
    partial_last_line: bool = False
    reached_start: bool = False
    reset_detected: bool = False


def read_tail(
    location: TranscriptLocation,
    max_entries: int = DEFAULT_MAX_ENTRIES,
    *,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> TailResult:
    """Given a transcript, return its last `max_entries` entries in transcript order.

    Files are read backwards in `chunk_size` pieces; a line longer than `max_line_bytes` is
    skipped and counted. Raise StoreError if the transcript cannot be read.
    """
    if location.kind == "sqlite":
        return read_with_retry(location.path, lambda db: _sqlite_tail(db, location, max_entries))
    with _file_errors(location.path), location.path.open("rb") as handle:
        return _file_tail(handle, max_entries, chunk_size, max_line_bytes)


def read_since(
    location: TranscriptLocation,
    position: ReadPosition,
    max_entries: int | None = None,
    *,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> TailResult:
    """Given a transcript and a stored position, return the entries added after it, in order.

    With `max_entries`, stop after that many (`end` then says where to go on). If the position
    no longer fits the transcript (file replaced or shrunk, rows rewritten), return
    `read_tail(location, max_entries or DEFAULT_MAX_ENTRIES)` with `reset_detected` set.
    Raise StoreError if the transcript cannot be read.
    """
    if location.kind == "sqlite":
        result = read_with_retry(
            location.path, lambda db: _sqlite_since(db, location, position, max_entries)
        )
    else:
        with _file_errors(location.path), location.path.open("rb") as handle:
            result = _file_since(handle, position, max_entries, chunk_size, max_line_bytes)
    if result is not None:
        return result
    tail = read_tail(
        location,
        DEFAULT_MAX_ENTRIES if max_entries is None else max_entries,
        chunk_size=chunk_size,
        max_line_bytes=max_line_bytes,
    )
    return replace(tail, reset_detected=True)


def end_position(location: TranscriptLocation) -> ReadPosition:
    """Given a transcript, return the position after its last complete line, cheaply.

    Raise StoreError if the transcript cannot be read.
    """
    if location.kind == "sqlite":
        return ReadPosition(seq=read_with_retry(location.path, lambda db: _max_seq(db, location)))
    with _file_errors(location.path), location.path.open("rb") as handle:
        status = os.fstat(handle.fileno())
        offset = status.st_size
        if offset:
            handle.seek(offset - 1)
            if handle.read(1) != b"\n":
                segments = _backward(handle, offset, DEFAULT_CHUNK_SIZE, 0, _Tally())
                offset = next(segments)[0]
        return ReadPosition(offset=offset, device=status.st_dev, inode=status.st_ino)


def has_new_data(location: TranscriptLocation, position: ReadPosition) -> bool:
    """Given a transcript and a stored position, return True when there is more to read.

    Also True when the transcript was replaced (read_since will notice) or when only part of a
    line has been appended so far. Raise StoreError if the transcript cannot be read.
    """
    if location.kind == "sqlite":
        return read_with_retry(location.path, lambda db: _max_seq(db, location)) != position.seq
    with _file_errors(location.path):
        status = location.path.stat()
    return (status.st_dev, status.st_ino, status.st_size) != (
        position.device,
        position.inode,
        position.offset,
    )


def transcript_size(location: TranscriptLocation) -> int:
    """Given a transcript, return its size in bytes (for SQLite, the UTF-8 size of its lines).

    Raise StoreError if the transcript cannot be read.
    """
    if location.kind == "sqlite":
        return read_with_retry(location.path, lambda db: _sqlite_size(db, location))
    with _file_errors(location.path):
        return location.path.stat().st_size


# -- shared ------------------------------------------------------------------------------------


@dataclass
class _Tally:
    """Entries taken so far and the counts of what was skipped, while a read is going on."""

    entries: list[Entry] = field(default_factory=list)
    malformed: int = 0
    invalid_utf8: int = 0
    oversized: int = 0
    bytes_read: int = 0

    def take(self, line: bytes | None) -> None:
        """Parse one line (None: too long to keep) and keep its entry or count it as skipped."""
        if line is None:
            self.oversized += 1
            return
        try:
            entry = parse_line(line)
        except MalformedLine as error:
            if error.invalid_utf8:
                self.invalid_utf8 += 1
            else:
                self.malformed += 1
            return
        if entry is not None:
            self.entries.append(entry)

    def take_row(self, event_json: bytes | None, event_zstd: bytes | None) -> None:
        """Take a `transcript_events` row: `event_json`, else `event_zstd` decompressed.

        A row with neither, or whose `event_zstd` does not decompress, counts as malformed.
        """
        if event_json is not None:
            line = event_json
        elif event_zstd is None:
            self.malformed += 1
            return
        else:
            try:
                line = _decompressor().decompressobj().decompress(event_zstd)
            except zstandard.ZstdError:
                self.malformed += 1
                return
        self.bytes_read += len(line)
        self.take(line)

    def result(self, start: ReadPosition, end: ReadPosition, **flags: bool) -> TailResult:
        """Return the TailResult of this read between `start` and `end`."""
        return TailResult(
            self.entries,
            start,
            end,
            self.malformed,
            self.invalid_utf8,
            self.oversized,
            self.bytes_read,
            **flags,
        )


@contextmanager
def _file_errors(path: Path) -> Iterator[None]:
    """Turn an OSError while reading `path` into a StoreError that names it."""
    try:
        yield
    except FileNotFoundError as error:
        raise StoreError(f"{path}: transcript not found") from error
    except OSError as error:
        raise StoreError(f"{path}: cannot read the transcript: {error}") from error


# -- file era ----------------------------------------------------------------------------------


def _file_tail(
    handle: BinaryIO, max_entries: int, chunk_size: int, max_line_bytes: int
) -> TailResult:
    status = os.fstat(handle.fileno())
    tally = _Tally()
    segments = _backward(handle, status.st_size, chunk_size, max_line_bytes, tally)
    end, trailing = next(segments)
    start = end
    while len(tally.entries) < max_entries:
        segment = next(segments, None)
        if segment is None:
            break
        start, line = segment
        tally.take(line)
    tally.entries.reverse()
    return tally.result(
        _file_position(start, status),
        _file_position(end, status),
        partial_last_line=trailing != b"",
        reached_start=start == 0,
    )


def _file_since(
    handle: BinaryIO,
    position: ReadPosition,
    max_entries: int | None,
    chunk_size: int,
    max_line_bytes: int,
) -> TailResult | None:
    """Read the lines after `position`; return None if the position does not fit the file."""
    status = os.fstat(handle.fileno())
    offset = position.offset
    if (
        offset is None
        or (position.device, position.inode) != (status.st_dev, status.st_ino)
        or offset > status.st_size
    ):
        return None
    tally = _Tally()
    if offset:
        handle.seek(offset - 1)
        tally.bytes_read += 1
        if handle.read(1) != b"\n":
            return None
    end, partial = offset, False
    lines = _forward(handle, offset, status.st_size, chunk_size, max_line_bytes, tally)
    for line_end, line in lines:
        if line_end is None:
            partial = True
            break
        if max_entries is not None and len(tally.entries) >= max_entries:
            break
        tally.take(line)
        end = line_end
    return tally.result(
        _file_position(offset, status),
        _file_position(end, status),
        partial_last_line=partial,
        reached_start=offset == 0,
    )


def _file_position(offset: int, status: os.stat_result) -> ReadPosition:
    return ReadPosition(offset=offset, device=status.st_dev, inode=status.st_ino)


def _backward(
    handle: BinaryIO, size: int, chunk_size: int, max_line_bytes: int, tally: _Tally
) -> Iterator[tuple[int, bytes | None]]:
    """Yield (start offset, bytes) of the newline-separated segments of the first `size` bytes.

    Segments come last first; the first one is what follows the last newline (b"" when the data
    ends with a newline). A segment longer than `max_line_bytes` is yielded as None, after its
    start was found without keeping it in memory.
    """
    position = size
    pieces: list[bytes] = []  # the end of the segment in progress, pieces in reverse order
    kept = 0
    too_long = False
    while position > 0:
        read_size = min(chunk_size, position)
        position -= read_size
        handle.seek(position)
        chunk = handle.read(read_size)
        if len(chunk) != read_size:
            raise OSError(f"the file shrank while being read ({position + len(chunk)} bytes)")
        tally.bytes_read += read_size
        parts = chunk.split(b"\n")
        segment_end = position + read_size
        for index in range(len(parts) - 1, 0, -1):
            part = parts[index]
            segment_start = segment_end - len(part)
            if too_long or kept + len(part) > max_line_bytes:
                yield segment_start, None
            elif pieces:
                pieces.append(part)
                yield segment_start, b"".join(reversed(pieces))
            else:
                yield segment_start, part
            pieces, kept, too_long = [], 0, False
            segment_end = segment_start - 1
        if not too_long:
            kept += len(parts[0])
            if kept > max_line_bytes:
                pieces, too_long = [], True
            else:
                pieces.append(parts[0])
    yield 0, None if too_long else b"".join(reversed(pieces))


def _forward(
    handle: BinaryIO, start: int, size: int, chunk_size: int, max_line_bytes: int, tally: _Tally
) -> Iterator[tuple[int | None, bytes | None]]:
    """Yield (offset past its newline, bytes) for each complete line in [start, size), in order.

    A line longer than `max_line_bytes` is yielded as None. When unterminated bytes remain at the
    end, yield (None, None) last.
    """
    handle.seek(start)
    position = start
    pieces: list[bytes] = []
    kept = 0
    too_long = False
    while position < size:
        chunk = handle.read(min(chunk_size, size - position))
        if not chunk:
            raise OSError(f"the file shrank while being read ({position} bytes)")
        tally.bytes_read += len(chunk)
        parts = chunk.split(b"\n")
        for part in parts[:-1]:
            position += len(part) + 1
            if too_long or kept + len(part) > max_line_bytes:
                yield position, None
            elif pieces:
                pieces.append(part)
                yield position, b"".join(pieces)
            else:
                yield position, part
            pieces, kept, too_long = [], 0, False
        tail = parts[-1]
        position += len(tail)
        if tail and not too_long:
            kept += len(tail)
            if kept > max_line_bytes:
                pieces, too_long = [], True
            else:
                pieces.append(tail)
    if kept or too_long:
        yield None, None


# -- SQLite era --------------------------------------------------------------------------------

_ROWS_NEWEST_FIRST = (
    "SELECT seq, event_json, event_zstd FROM transcript_events "
    "WHERE session_id = ? ORDER BY seq DESC"
)
_ROWS_AFTER = (
    "SELECT seq, event_json, event_zstd FROM transcript_events "
    "WHERE session_id = ? AND seq > ? ORDER BY seq"
)
_SEQ_RANGE = (  # two subqueries, so each is one index lookup
    "SELECT (SELECT min(seq) FROM transcript_events WHERE session_id = ?1),"
    " (SELECT max(seq) FROM transcript_events WHERE session_id = ?1)"
)
_SIZE = (
    "SELECT coalesce(sum(coalesce(event_utf8_bytes, length(CAST(event_json AS BLOB)))), 0) "
    "FROM transcript_events WHERE session_id = ?"
)


def _sqlite_tail(
    connection: sqlite3.Connection, location: TranscriptLocation, max_entries: int
) -> TailResult:
    connection.text_factory = bytes
    tally = _Tally()
    newest = oldest = None
    reached_start = True
    for seq, event_json, event_zstd in connection.execute(
        _ROWS_NEWEST_FIRST, (location.session_id,)
    ):
        if newest is None:
            newest = seq
        if len(tally.entries) >= max_entries:
            reached_start = False
            break
        oldest = seq
        tally.take_row(event_json, event_zstd)
    tally.entries.reverse()
    end = -1 if newest is None else newest
    start = end if oldest is None else oldest - 1
    return tally.result(ReadPosition(seq=start), ReadPosition(seq=end), reached_start=reached_start)


def _sqlite_since(
    connection: sqlite3.Connection,
    location: TranscriptLocation,
    position: ReadPosition,
    max_entries: int | None,
) -> TailResult | None:
    """Read the rows after `position`; return None if the position does not fit the rows."""
    connection.text_factory = bytes
    first, last = connection.execute(_SEQ_RANGE, (location.session_id,)).fetchone()
    if position.seq is None or position.seq > (-1 if last is None else last):
        return None
    tally = _Tally()
    end = position.seq
    for seq, event_json, event_zstd in connection.execute(
        _ROWS_AFTER, (location.session_id, position.seq)
    ):
        if max_entries is not None and len(tally.entries) >= max_entries:
            break
        tally.take_row(event_json, event_zstd)
        end = seq
    return tally.result(
        position,
        ReadPosition(seq=end),
        reached_start=first is None or position.seq < first,
    )


def _max_seq(connection: sqlite3.Connection, location: TranscriptLocation) -> int:
    last = connection.execute(_SEQ_RANGE, (location.session_id,)).fetchone()[1]
    return -1 if last is None else last


def _sqlite_size(connection: sqlite3.Connection, location: TranscriptLocation) -> int:
    return connection.execute(_SIZE, (location.session_id,)).fetchone()[0]


def _decompressor() -> zstandard.ZstdDecompressor:
    decompressor = getattr(_THREAD_STATE, "decompressor", None)
    if decompressor is None:
        decompressor = _THREAD_STATE.decompressor = zstandard.ZstdDecompressor()
    return decompressor
