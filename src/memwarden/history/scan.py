"""What history keeps of a workspace: the regular files under memory/ and the root files, by path
relative to the workspace (`memory/2026-11-21.md`, `MEMORY.md`), with their stat.

Symlinks are listed, never followed; a nested `.git` folder (the operator's own repository) and
memwarden's in-flight temp files (`files.TEMP_NAME`) are left out, so history never records or
removes them. A workspace that is missing or cannot be read is an error, never an empty scan: a
snapshot of it would record every file as deleted.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from memwarden.fs.files import TEMP_NAME, memory_folder
from memwarden.history.model import MEMORY_PREFIX, HistoryError, reason

SKIPPED_FOLDERS = frozenset({".git"})


class FileStat(NamedTuple):
    """What changes when a file is rewritten: size, modification and change times, inode (in
    this order, the order the history manifest stores them)."""

    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int

    @classmethod
    def of(cls, result: os.stat_result) -> FileStat:
        return cls(result.st_size, result.st_mtime_ns, result.st_ctime_ns, result.st_ino)


@dataclass
class Scan:
    """The workspace's kept files by workspace-relative path (`/`-separated).

    `symlinks` are those under memory/ (a rewind refuses them); `root_symlinks` the root files
    that are links (left out of history altogether).
    """

    files: dict[str, FileStat] = field(default_factory=dict)
    symlinks: list[str] = field(default_factory=list)
    root_symlinks: list[str] = field(default_factory=list)
    memory_found: bool = False

    @property
    def looks_absent(self) -> bool:
        """True when the workspace has neither a memory/ folder nor any root file kept: an
        unmounted volume or a wrong path, more likely than a memory wiped on purpose."""
        return not self.memory_found and not self.files and not self.root_symlinks


def scan_workspace(workspace: Path, roots: Sequence[str]) -> Scan:
    """Given a workspace and the root file names kept, return its memory/ files and root files.

    A missing memory/ folder holds nothing. Raise HistoryError if the workspace is missing, not
    a folder or unreadable, or a folder under memory/ cannot be read; UnsafePathError if
    memory/ is a link out of the workspace or to the workspace itself.
    """
    entries = _workspace_entries(workspace)
    memory = memory_folder(workspace, create=False)
    scan = Scan()
    wanted = set(roots)
    for entry in entries:
        if entry.name in wanted:
            _scan_root(entry, scan)
    _scan_memory(memory, scan)
    scan.symlinks.sort()
    return scan


def _workspace_entries(workspace: Path) -> list[os.DirEntry]:
    """Return the entries at the workspace's top. Raise HistoryError if it cannot be listed."""
    try:
        return list(os.scandir(workspace))
    except FileNotFoundError:
        raise HistoryError(
            f"{workspace}: the agent's workspace does not exist (not mounted? a relative path?); "
            "nothing is recorded rather than every file as deleted"
        ) from None
    except NotADirectoryError:
        raise HistoryError(f"{workspace}: the agent's workspace is not a folder") from None
    except OSError as error:
        message = f"{workspace}: cannot read the agent's workspace: {reason(error)}"
        raise HistoryError(message) from None


def _scan_root(entry: os.DirEntry, scan: Scan) -> None:
    try:
        if entry.is_symlink():
            scan.root_symlinks.append(entry.name)
        elif entry.is_file(follow_symlinks=False):
            scan.files[entry.name] = FileStat.of(entry.stat(follow_symlinks=False))
    except FileNotFoundError:
        return  # removed since the listing
    except OSError as error:
        raise HistoryError(f"{entry.path}: cannot read it: {reason(error)}") from None


def _scan_memory(memory: Path, scan: Scan) -> None:
    pending: list[tuple[str | Path, str]] = [(memory, MEMORY_PREFIX)]
    while pending:
        folder, prefix = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except FileNotFoundError:
            continue  # memory/ missing, or a folder removed while we walked: nothing there
        except OSError as error:
            raise HistoryError(f"{folder}: cannot read this folder: {reason(error)}") from None
        scan.memory_found = True
        for entry in entries:
            try:
                entry.name.encode("utf-8")
            except UnicodeEncodeError:
                continue  # not kept: git paths are UTF-8
            relative = prefix + entry.name
            if entry.is_symlink():
                scan.symlinks.append(relative)
            elif entry.is_dir(follow_symlinks=False):
                if entry.name not in SKIPPED_FOLDERS:
                    pending.append((entry.path, relative + "/"))
            elif entry.is_file(follow_symlinks=False) and not TEMP_NAME.match(entry.name):
                scan.files[relative] = FileStat.of(entry.stat(follow_symlinks=False))
