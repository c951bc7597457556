"""Tail readers for transcripts of both storage eras, resumable from a stored position.

File era (`jsonl_tail`): `<sessionId>.jsonl`, read backwards from the end in bounded chunks.
SQLite era (`sqlite_tail`): rows of `transcript_events` for one session, by `seq`, read through
`sqlite_ro`. Bad lines are skipped and counted, never fatal. A `ReadPosition` lets a job read
only what is new since its last run and tells when the transcript was replaced under it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from memwarden.openclaw.jsonl_tail import MAX_LINE_BYTES, file_errors, file_since, file_tail
from memwarden.openclaw.sqlite_ro import read_with_retry
from memwarden.openclaw.sqlite_tail import max_seq, sqlite_since, sqlite_size, sqlite_tail
from memwarden.openclaw.transcript_reads import (
    ReadPosition,
    TailResult,
    TranscriptLocation,
    position_fields,
)
from memwarden.process.errors import StoreError

DEFAULT_MAX_ENTRIES = 200


def read_tail(
    location: TranscriptLocation,
    max_entries: int = DEFAULT_MAX_ENTRIES,
    *,
    only_lines_with: bytes | None = None,
) -> TailResult:
    """Given a transcript, return its last `max_entries` entries in transcript order.

    Files are read backwards in chunks; a line longer than `jsonl_tail.MAX_LINE_BYTES` is
    skipped and counted. With `only_lines_with`, only the lines holding those bytes are parsed
    and returned; the others count towards `max_entries` (in `unparsed`) all the same. Raise
    StoreError if the transcript cannot be read.
    """
    needle = only_lines_with
    if location.kind == "sqlite":
        return read_with_retry(
            location.path, lambda db: sqlite_tail(db, location, max_entries, needle)
        )
    with file_errors(location.path), location.path.open("rb") as handle:
        return file_tail(handle, max_entries, needle)


def read_since(
    location: TranscriptLocation,
    position: ReadPosition,
    max_entries: int | None = None,
    *,
    only_lines_with: bytes | None = None,
) -> TailResult:
    """Given a transcript and a stored position, return the entries added after it, in order.

    With `max_entries`, stop after that many (`end` then says where to go on). If the position
    no longer fits the transcript (file replaced or shrunk, rows rewritten), return
    `read_tail(location, max_entries or DEFAULT_MAX_ENTRIES)` with `reset_detected` set.
    `only_lines_with`: as for read_tail. Raise StoreError if the transcript cannot be read.
    """
    needle = only_lines_with
    if location.kind == "sqlite":
        result = read_with_retry(
            location.path, lambda db: sqlite_since(db, location, position, max_entries, needle)
        )
    else:
        with file_errors(location.path), location.path.open("rb") as handle:
            result = file_since(handle, position, max_entries, needle)
    if result is not None:
        return result
    entries = DEFAULT_MAX_ENTRIES if max_entries is None else max_entries
    tail = read_tail(location, entries, only_lines_with=needle)
    return replace(tail, reset_detected=True)


def start_position(location: TranscriptLocation) -> ReadPosition:
    """Given a transcript, return the position before its first line (reading on from it reads
    the whole transcript). Raise StoreError if the transcript cannot be read."""
    if location.kind == "sqlite":
        return ReadPosition(seq=-1)
    with file_errors(location.path):
        status = location.path.stat()
    return ReadPosition(offset=0, device=status.st_dev, inode=status.st_ino)


def has_new_data(location: TranscriptLocation, position: ReadPosition) -> bool:
    """Given a transcript and a stored position, return True when there is more to read.

    Also True when the transcript was replaced (read_since will notice) or when only part of a
    line has been appended so far. Raise StoreError if the transcript cannot be read.
    """
    if location.kind == "sqlite":
        return read_with_retry(location.path, lambda db: max_seq(db, location)) != position.seq
    with file_errors(location.path):
        status = location.path.stat()
    return (status.st_size, status.st_dev, status.st_ino) != (
        position.offset,
        position.device,
        position.inode,
    )


def all_read_to_end(reads: Sequence[tuple[TranscriptLocation, object]]) -> list[bool]:
    """Given (transcript, read position as stored by `ReadPosition.to_json`) pairs, return for
    each whether the position is valid and `has_new_data` would find nothing new, without
    building the position: one stat of a file; the transcripts of one database asked in a few
    read transactions, not one each. False where it cannot tell cheaply (an odd position, a
    transcript that cannot be read): ask `has_new_data`, which says why. For a watch over 100k
    conversations, most of them quiet."""
    done = [False] * len(reads)
    asked: dict[Path, list[tuple[int, int]]] = {}  # database: (index, stored seq)
    for index, (location, stored) in enumerate(reads):
        position = position_fields(stored)
        if position is None:
            continue
        if location.kind == "sqlite":
            if position[3] is not None:
                asked.setdefault(location.path, []).append((index, position[3]))
        elif position[0] is not None:
            try:
                status = os.stat(location.path)
            except OSError:
                continue
            done[index] = (status.st_size, status.st_dev, status.st_ino) == position[:3]
    for database, rows in asked.items():
        for start in range(0, len(rows), _SEQS_PER_READ):
            batch = rows[start : start + _SEQS_PER_READ]
            try:
                last = read_with_retry(
                    database, lambda db, batch=batch: [max_seq(db, reads[i][0]) for i, _ in batch]
                )
            except StoreError:  # the rest are asked one by one, which says why
                break
            for (index, seq), now in zip(batch, last, strict=True):
                done[index] = now == seq
    return done


# A read transaction of the gateway's database stays short (it holds back WAL checkpoints).
_SEQS_PER_READ = 1000


def skipped_lines_report(location: TranscriptLocation, result: TailResult) -> str | None:
    """Given a transcript and what a read of it returned, return one line that says how many
    lines (rows, in the SQLite era) the read skipped, by reason, or None when it skipped none. A
    row past the gateway's limit per event is left out: it is reported as it is met."""
    if location.kind == "file":
        where, what = str(location.path), "transcript line(s)"
        reasons = [
            (
                result.oversized,
                f"longer than {MAX_LINE_BYTES} bytes (memwarden's limit per line)",
            ),
            (result.malformed, "not JSON"),
            (result.invalid_utf8, "not UTF-8"),
        ]
    else:
        where = f"{location.path} (session {location.session_id})"
        what = "transcript_events row(s)"
        reasons = [
            (result.malformed, "not JSON, or no event that can be read"),
            (result.invalid_utf8, "not UTF-8"),
        ]
    counted = [f"{count} {reason}" for count, reason in reasons if count]
    if not counted:
        return None
    total = sum(count for count, _ in reasons)
    return f"{where}: {total} {what} skipped: {', '.join(counted)}"


def transcript_size(location: TranscriptLocation, at_most: int | None = None) -> int:
    """Given a transcript, return its size in bytes (for SQLite, the UTF-8 size of its lines),
    or with `at_most` any size above it once the size is known to pass it (a store's session is
    then read no further).

    Raise StoreError if the transcript cannot be read.
    """
    if location.kind == "sqlite":
        return read_with_retry(location.path, lambda db: sqlite_size(db, location, at_most))
    with file_errors(location.path):
        return location.path.stat().st_size
