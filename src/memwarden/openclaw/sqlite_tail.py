"""SQLite-era transcripts: the rows of `transcript_events` for one session, by `seq`.

The line is in `event_json`, or zstd-compressed in `event_zstd`. Callers run these through
`sqlite_ro.read_with_retry` (read-only, short transactions). A compressed line is decompressed up
to the gateway's 4 MiB limit per event (its schema's `event_utf8_bytes BETWEEN 1 AND 4194304`):
a small frame can claim gigabytes, so decompression stops one byte past the cap, and a row past
it is skipped, counted as oversized and reported with a warning naming it. This module is the
only one that calls the zstd library: the standard library's `compression.zstd` from Python
3.14, its backport `backports.zstd` before.
"""

from __future__ import annotations

import logging
import sqlite3
from functools import cache
from types import ModuleType

from memwarden.openclaw.transcript_reads import ReadPosition, TailResult, TranscriptLocation

log = logging.getLogger("memwarden.transcripts")

MAX_EVENT_BYTES = 4 * 1024 * 1024
"""The gateway's limit on one transcript event, decompressed (its schema's CHECK)."""

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
_ROW_SIZES = (
    "SELECT coalesce(event_utf8_bytes, length(CAST(event_json AS BLOB))) "
    "FROM transcript_events WHERE session_id = ? ORDER BY seq DESC"
)


def sqlite_tail(
    connection: sqlite3.Connection,
    location: TranscriptLocation,
    max_entries: int,
    needle: bytes | None = None,
) -> TailResult:
    connection.text_factory = bytes
    result = TailResult(needle=needle, reached_start=True)
    newest = oldest = None
    for seq, event_json, event_zstd in connection.execute(
        _ROWS_NEWEST_FIRST, (location.session_id,)
    ):
        if newest is None:
            newest = seq
        if result.count >= max_entries:
            result.reached_start = False
            break
        oldest = seq
        take_row(result, event_json, event_zstd, location, seq)
    result.entries.reverse()
    end = -1 if newest is None else newest
    result.start = ReadPosition(seq=end if oldest is None else oldest - 1)
    result.end = ReadPosition(seq=end)
    return result


def sqlite_since(
    connection: sqlite3.Connection,
    location: TranscriptLocation,
    position: ReadPosition,
    max_entries: int | None,
    needle: bytes | None = None,
) -> TailResult | None:
    """Read the rows after `position`; return None if the position does not fit the rows."""
    connection.text_factory = bytes
    first, last = connection.execute(_SEQ_RANGE, (location.session_id,)).fetchone()
    if position.seq is None or position.seq > (-1 if last is None else last):
        return None
    reached_start = first is None or position.seq < first
    result = TailResult(start=position, reached_start=reached_start, needle=needle)
    end = position.seq
    for seq, event_json, event_zstd in connection.execute(
        _ROWS_AFTER, (location.session_id, position.seq)
    ):
        if max_entries is not None and result.count >= max_entries:
            break
        take_row(result, event_json, event_zstd, location, seq)
        end = seq
    result.end = ReadPosition(seq=end)
    return result


def max_seq(connection: sqlite3.Connection, location: TranscriptLocation) -> int:
    last = connection.execute(_SEQ_RANGE, (location.session_id,)).fetchone()[1]
    return -1 if last is None else last


def sqlite_size(
    connection: sqlite3.Connection, location: TranscriptLocation, at_most: int | None
) -> int:
    """Return the UTF-8 size of the session's lines; with `at_most`, stop counting (and reading
    the store's pages) once the size passes it."""
    total = 0
    for (size,) in connection.execute(_ROW_SIZES, (location.session_id,)):
        total += size
        if at_most is not None and total > at_most:
            break
    return total


def take_row(
    read: TailResult,
    event_json: bytes | None,
    event_zstd: bytes | None,
    location: TranscriptLocation,
    seq: int,
) -> None:
    """Take a `transcript_events` row: `event_json`, else `event_zstd` decompressed.

    A row with neither, or whose `event_zstd` does not decompress, counts as malformed; one that
    decompresses past the gateway's limit per event counts as oversized and is reported.
    """
    line = event_json
    if line is None:
        if event_zstd is None or (line := decompress_capped(event_zstd)) is None:
            read.malformed += 1
            return
        if len(line) > MAX_EVENT_BYTES:  # cut at the limit: never taken as an event
            log.warning(
                "%s: transcript_events row (session %s, seq %d) decompresses past %d bytes, "
                "the gateway's limit per event; skipped",
                location.path,
                location.session_id,
                seq,
                MAX_EVENT_BYTES,
            )
            read.take(None)
            return
    read.bytes_read += len(line)
    read.take(line)


def decompress_capped(data: bytes, limit: int = MAX_EVENT_BYTES) -> bytes | None:
    """Given one zstd frame, return what it decompresses to, or None if the data is not a valid
    zstd frame.

    At most `limit` + 1 bytes are ever produced: a result longer than `limit` is a content that
    passes it, cut there, and is no event: the caller must check the length.
    """
    zstd = zstd_library()
    decompressor = zstd.ZstdDecompressor()  # one frame each: never shared between threads
    try:
        content = decompressor.decompress(data, max_length=limit + 1)
    except zstd.ZstdError:
        return None
    return content if decompressor.eof or len(content) > limit else None


@cache
def zstd_library() -> ModuleType:
    """The zstd library, imported when a first frame is read (file-era runs never load it)."""
    try:
        from compression import zstd  # type: ignore[import-not-found]  # Python >= 3.14
    except ImportError:
        from backports import zstd
    return zstd
