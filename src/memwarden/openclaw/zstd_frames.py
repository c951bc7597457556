"""zstd-compressed gateway data, decompressed with a cap on what comes out.

The gateway stores a transcript line zstd-compressed in `transcript_events.event_zstd`, and its
schema limits the line to 4 MiB (`event_utf8_bytes BETWEEN 1 AND 4194304`). A small frame can
claim gigabytes, so output is never taken past the cap: decompression stops one byte after it.
This module is the only one that calls the zstd library: the standard library's
`compression.zstd` from Python 3.14, its backport `backports.zstd` before.
"""

from __future__ import annotations

from functools import cache
from types import ModuleType

MAX_EVENT_BYTES = 4 * 1024 * 1024
"""The gateway's limit on one transcript event, decompressed (its schema's CHECK)."""


class FrameError(ValueError):
    """The data is not one zstd frame that decompresses within the cap."""


class FrameTooLarge(FrameError):
    """The frame decompresses to more than the cap."""


def decompress_capped(data: bytes, limit: int = MAX_EVENT_BYTES) -> bytes:
    """Given one zstd frame, return what it decompresses to.

    At most `limit` + 1 bytes are ever produced. Raise FrameTooLarge if the content is longer
    than `limit`, FrameError if the data is not a valid zstd frame.
    """
    zstd = zstd_library()
    decompressor = zstd.ZstdDecompressor()  # one frame each: never shared between threads
    try:
        content = decompressor.decompress(data, max_length=limit + 1)
    except zstd.ZstdError as error:
        raise FrameError(f"not a valid zstd frame: {error}") from error
    if len(content) > limit:
        raise FrameTooLarge(f"decompresses to more than {limit} bytes")
    if not decompressor.eof:
        raise FrameError("not a valid zstd frame: it ends before its content does")
    return content


@cache
def zstd_library() -> ModuleType:
    """The zstd library, imported when a first frame is read (file-era runs never load it)."""
    try:
        from compression import zstd  # type: ignore[import-not-found]  # Python >= 3.14
    except ImportError:
        from backports import zstd
    return zstd
