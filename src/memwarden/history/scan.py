"""What is in an agent's memory/ folder: regular files with their stat, symlinks, and the rest.

Symlinks are listed, never followed; a nested `.git` folder (the operator's own repository) and
memwarden's in-flight temp files are left out, so history never records or removes them.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from memwarden.errors import UnsafePathError

SKIPPED_FOLDERS = frozenset({".git"})
# memwarden.files.atomic_write's temp files: `.<name>.<pid>.tmp`.
TEMP_FILE = re.compile(r"^\..+\.\d+\.tmp$")


@dataclass(frozen=True)
class FileStat:
    """What changes when a file is rewritten: size, modification and change times, inode."""

    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int

    @classmethod
    def of(cls, result: os.stat_result) -> FileStat:
        return cls(result.st_size, result.st_mtime_ns, result.st_ctime_ns, result.st_ino)


@dataclass
class Scan:
    """The memory folder's content by path relative to it (`/`-separated)."""

    files: dict[str, FileStat] = field(default_factory=dict)
    symlinks: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)


def memory_folder(workspace: Path) -> Path:
    """Given a workspace, return its memory/ folder.

    Raise UnsafePathError if memory/ resolves outside the workspace (a symlink out of it).
    """
    memory = workspace / "memory"
    real_workspace = Path(os.path.realpath(workspace))
    real_memory = Path(os.path.realpath(memory))
    if real_workspace not in real_memory.parents:
        raise UnsafePathError(
            f"{memory}: resolves to {real_memory}, outside the workspace; "
            "memwarden does not follow links out of the workspace"
        )
    return memory


def scan_memory(memory: Path) -> Scan:
    """Given a memory folder, return its regular files (recursively), symlinks and oddities.

    A missing folder is empty.
    """
    scan = Scan()
    pending = [(memory, "")]
    while pending:
        folder, prefix = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except FileNotFoundError:
            continue
        except OSError as error:
            scan.skipped.append((prefix.rstrip("/") or ".", error.strerror or str(error)))
            continue
        for entry in entries:
            relative = prefix + entry.name
            if not _utf8(entry.name):
                scan.skipped.append((relative, "name is not UTF-8"))
            elif entry.is_symlink():
                scan.symlinks.append(relative)
            elif entry.is_dir(follow_symlinks=False):
                if entry.name not in SKIPPED_FOLDERS:
                    pending.append((Path(entry.path), relative + "/"))
            elif entry.is_file(follow_symlinks=False):
                if not TEMP_FILE.match(entry.name):
                    scan.files[relative] = FileStat.of(entry.stat(follow_symlinks=False))
            else:
                scan.skipped.append((relative, "not a regular file"))
    scan.symlinks.sort()
    return scan


def read_file(path: Path) -> bytes:
    """Return the bytes of `path`. Raise UnsafePathError for a symlink, OSError if unreadable."""
    try:
        # O_NONBLOCK: a FIFO swapped in since the scan must not hang the run (fstat refuses it).
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
        descriptor = os.open(path, flags)
    except OSError as error:
        if path.is_symlink():
            raise UnsafePathError(
                f"{path}: is a symlink; memwarden does not follow links"
            ) from error
        raise
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise UnsafePathError(f"{path}: is not a regular file")
        return handle.read()


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
