"""File-era transcripts: `<sessionId>.jsonl` read backwards from the end in bounded chunks.

Memory does not grow with the file; a last line without its newline is still being written and
is left for the next read.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from memwarden.openclaw.transcript_reads import ReadPosition, TailResult
from memwarden.process.errors import StoreError

CHUNK_SIZE = 64 * 1024  # what a read takes at once
MAX_LINE_BYTES = 32 * 1024 * 1024  # a longer line is skipped and counted (`oversized`)


@contextmanager
def file_errors(path: Path) -> Iterator[None]:
    """Turn an OSError while reading `path` into a StoreError that names it."""
    try:
        yield
    except FileNotFoundError as error:
        raise StoreError(f"{path}: transcript not found") from error
    except OSError as error:
        raise StoreError(f"{path}: cannot read the transcript: {error}") from error


def file_tail(handle: BinaryIO, max_entries: int, needle: bytes | None = None) -> TailResult:
    status = os.fstat(handle.fileno())
    result = TailResult(needle=needle)
    segments = backward(handle, status.st_size, result)
    end, trailing = next(segments)
    start = end
    if max_entries > 0:
        for start, line in segments:  # noqa: B007 - the last start taken is the tail's start
            result.take(line)
            if result.count >= max_entries:
                break
    result.entries.reverse()
    result.start, result.end = _file_position(start, status), _file_position(end, status)
    result.partial_last_line, result.reached_start = trailing != b"", start == 0
    return result


def file_since(
    handle: BinaryIO,
    position: ReadPosition,
    max_entries: int | None,
    needle: bytes | None = None,
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
    result = TailResult(needle=needle, reached_start=offset == 0)
    if offset:
        handle.seek(offset - 1)
        result.bytes_read += 1
        if handle.read(1) != b"\n":
            return None
    end = offset
    lines = forward(handle, offset, status.st_size, result)
    for line_end, line in lines:
        if line_end is None:
            result.partial_last_line = True
            break
        if max_entries is not None and result.count >= max_entries:
            break
        result.take(line)
        end = line_end
    result.start, result.end = _file_position(offset, status), _file_position(end, status)
    return result


def _file_position(offset: int, status: os.stat_result) -> ReadPosition:
    return ReadPosition(offset=offset, device=status.st_dev, inode=status.st_ino)


def backward(handle: BinaryIO, size: int, read: TailResult) -> Iterator[tuple[int, bytes | None]]:
    """Yield (start offset, bytes) of the newline-separated segments of the first `size` bytes.

    Segments come last first; the first one is what follows the last newline (b"" when the data
    ends with a newline). A segment longer than MAX_LINE_BYTES is yielded as None, after its
    start was found without keeping it in memory.
    """
    position = size
    pieces: list[bytes] = []  # the end of the segment in progress, pieces in reverse order
    kept = 0
    too_long = False
    while position > 0:
        read_size = min(CHUNK_SIZE, position)
        position -= read_size
        handle.seek(position)
        chunk = handle.read(read_size)
        if len(chunk) != read_size:
            raise OSError(f"the file shrank while being read ({position + len(chunk)} bytes)")
        read.bytes_read += read_size
        parts = chunk.split(b"\n")
        segment_end = position + read_size
        last = len(parts) - 1
        if last:  # the chunk's last segment ends what the chunks after it began
            part = parts[last]
            segment_start = segment_end - len(part)
            if too_long or kept + len(part) > MAX_LINE_BYTES:
                yield segment_start, None
            elif pieces:
                pieces.append(part)
                yield segment_start, b"".join(reversed(pieces))
            else:
                yield segment_start, part
            pieces, kept, too_long = [], 0, False
            segment_end = segment_start - 1
        for index in range(last - 1, 0, -1):  # whole in this chunk
            part = parts[index]
            segment_start = segment_end - len(part)
            yield segment_start, part if len(part) <= MAX_LINE_BYTES else None
            segment_end = segment_start - 1
        if not too_long:
            kept += len(parts[0])
            if kept > MAX_LINE_BYTES:
                pieces, too_long = [], True
            else:
                pieces.append(parts[0])
    yield 0, None if too_long else b"".join(reversed(pieces))


def forward(
    handle: BinaryIO, start: int, size: int, read: TailResult
) -> Iterator[tuple[int | None, bytes | None]]:
    """Yield (offset past its newline, bytes) for each complete line in [start, size), in order.

    A line longer than MAX_LINE_BYTES is yielded as None. When unterminated bytes remain at the
    end, yield (None, None) last.
    """
    handle.seek(start)
    position = start
    pieces: list[bytes] = []
    kept = 0
    too_long = False
    while position < size:
        chunk = handle.read(min(CHUNK_SIZE, size - position))
        if not chunk:
            raise OSError(f"the file shrank while being read ({position} bytes)")
        read.bytes_read += len(chunk)
        parts = chunk.split(b"\n")
        for part in parts[:-1]:
            position += len(part) + 1
            if too_long or kept + len(part) > MAX_LINE_BYTES:
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
            if kept > MAX_LINE_BYTES:
                pieces, too_long = [], True
            else:
                pieces.append(tail)
    if kept or too_long:
        yield None, None
