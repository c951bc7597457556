"""Gzip one transcript in place, so that a crash leaves the original or both, never neither.

The compressed copy is written to a temporary file beside the original, read back in full (gzip
checks its CRC and length), given the original's modification time, renamed into place, and only
then is the original deleted. A transcript that changes meanwhile is left alone.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import shutil
from pathlib import Path

from memwarden.fs.files import FILE_MODE, check_inside, fsync_dir
from memwarden.process.errors import MemwardenError

CHUNK = 1 << 20


class TranscriptChanged(MemwardenError):
    """The file changed while it was being compressed: something still writes to it."""


def gzip_in_place(path: Path) -> int:
    """Given a transcript, replace it by `<name>.gz` and return the compressed size in bytes.

    Raise TranscriptChanged if it was modified meanwhile (the original is kept), UnsafePathError
    if it or its target is a symlink, OSError if it cannot be read or written.
    """
    folder = path.parent
    check_inside(path, folder)
    target = check_inside(path.with_name(path.name + ".gz"), folder)
    before = os.stat(path, follow_symlinks=False)
    temp = folder / f".{target.name}.{os.getpid()}.tmp"
    try:
        _write_gzip(path, temp, int(before.st_mtime))
        after = os.stat(path, follow_symlinks=False)
        if (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
            raise TranscriptChanged(f"{path}: changed while being compressed; left as it is")
        _verify(temp, before.st_size, path)
        os.utime(temp, ns=(before.st_atime_ns, before.st_mtime_ns))
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise
    fsync_dir(folder)
    path.unlink()
    fsync_dir(folder)
    return target.stat().st_size


def _write_gzip(source: Path, temp: Path, mtime: int) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    descriptor = os.open(temp, flags, FILE_MODE)
    with os.fdopen(descriptor, "wb") as raw:
        reader = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
        with (
            os.fdopen(reader, "rb") as original,
            gzip.GzipFile(filename=source.name, mode="wb", fileobj=raw, mtime=mtime) as packed,
        ):
            shutil.copyfileobj(original, packed, CHUNK)
        raw.flush()
        os.fsync(raw.fileno())


def _verify(temp: Path, expected_size: int, source: Path) -> None:
    total = 0
    with gzip.open(temp, "rb") as packed:
        while chunk := packed.read(CHUNK):
            total += len(chunk)
    if total != expected_size:
        raise TranscriptChanged(f"{source}: compressed copy does not match; left as it is")
