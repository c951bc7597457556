"""Make a batch of writes durable at once: one `syncfs` per file system on Linux, else an
`fsync` per file (macOS and others, where no call flushes one file system)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from functools import cache


def flush_files(paths: Iterable[str]) -> None:
    """Make the data of every file in `paths` durable. Raise OSError if the flush fails."""
    paths = list(paths)
    syncfs = _syncfs()
    if syncfs is None:
        for path in paths:
            _fsync(path, os.O_RDONLY)
        return
    _sync_file_systems({os.path.dirname(path) for path in paths}, syncfs)


def flush_folders(folders: Iterable[str]) -> None:
    """Make the entries of every folder (renames done in them) durable."""
    folders = set(folders)
    syncfs = _syncfs()
    if syncfs is None:
        for folder in folders:
            _fsync(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        return
    _sync_file_systems(folders, syncfs)


class Unflushed:
    """Files written and renamed into place (and folders renamed into) whose flush waits for one
    call for them all (`flush`), made before anything relies on them: a write to file after
    file, each waiting for the disk, becomes one flush."""

    def __init__(self) -> None:
        self.files: list[str] = []
        self.folders: set[str] = set()

    def add(self, path: str) -> None:
        """Add a file: its data and its folder's entries are flushed."""
        self.files.append(path)

    def add_folders(self, folders: Iterable[str]) -> None:
        """Add folders whose entries (renames done in them) are flushed."""
        self.folders.update(folders)

    def flush(self) -> None:
        """Make every file added (data and rename) and every folder added durable, but for
        those gone since (a workspace removed meanwhile). Raise OSError if the flush fails: what
        was added stays, to flush again."""
        files = [path for path in self.files if os.path.isfile(path)]
        folders = {os.path.dirname(path) for path in files}
        folders.update(folder for folder in self.folders if os.path.isdir(folder))
        if _syncfs() is None:
            flush_files(files)
        flush_folders(folders)  # with syncfs, the data and the entries alike
        self.files, self.folders = [], set()


def _sync_file_systems(folders: set[str], syncfs: Callable[[int], int]) -> None:
    by_device: dict[int, str] = {}
    for folder in sorted(folders):
        by_device.setdefault(os.stat(folder).st_dev, folder)
    for folder in by_device.values():
        descriptor = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            if syncfs(descriptor) != 0:
                import ctypes

                error = ctypes.get_errno()
                raise OSError(error, os.strerror(error), folder)
        finally:
            os.close(descriptor)


def _fsync(path: str, flags: int) -> None:
    descriptor = os.open(path, flags)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


@cache
def _syncfs() -> Callable[[int], int] | None:
    """Return libc's syncfs(2), or None where there is none (not Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        function = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int]
    function.restype = ctypes.c_int
    return function
