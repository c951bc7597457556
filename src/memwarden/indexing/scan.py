"""The memory pool of a workspace: which files it holds, and what each one says.

The pool is every `*.md` under `<workspace>/memory/`, except the folder `archive/` (at any
depth), hidden files and folders, `INDEX.md` at its top, and each conversation's own files: its
handoff and session summaries (`ACTIVE_CONTEXT.md`, the folder `sessions/`, and older summaries
at the top, `YYYY-MM-DD-session-<key>.md`): INDEX.md goes to every session, another peer's too,
and those names hold their conversation's key (a direct chat's peer) and their markers its words.
Each conversation gets its own handoff through the bootstrap manifest. Symlinks are not
followed: a link could lead out of the workspace. Facts (title, marker counts) come from
reading a file.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import NamedTuple

from memwarden.agent_memory.handoff_files import ACTIVE_CONTEXT, SESSION_SUMMARY, SESSIONS_FOLDER
from memwarden.fs.files import display_path
from memwarden.indexing.markers import ZERO, count_markers, first_heading

INDEX_NAME = "INDEX.md"
EXCLUDED_FOLDERS = frozenset({"archive"})
# At the top of memory/ only, where checkpoint writes them.
EXCLUDED_TOP_FILES = frozenset({INDEX_NAME, ACTIVE_CONTEXT})
EXCLUDED_TOP_FOLDERS = frozenset({SESSIONS_FOLDER})
BYTES_PER_TOKEN = 4


class PoolFile(NamedTuple):
    """A pool file as `stat` sees it, with its title and marker counts once read (see
    `collect_facts`); `path` is relative to memory/, with `/` separators, as text any table,
    JSON or SQLite holds (see `files.display_path`); `on_disk` is the name to open when it
    differs."""

    path: str
    size: int
    mtime_ns: int
    inode: int
    on_disk: str | None = None
    title: str = ""
    markers: tuple[int, ...] = ZERO

    @property
    def tokens(self) -> int:
        """The estimated tokens: about four bytes a token."""
        return math.ceil(self.size / BYTES_PER_TOKEN)


def scan_pool(memory_dir: Path) -> list[PoolFile]:
    """Given a workspace's memory folder, return the pool's files sorted by path.

    A missing folder is an empty pool. Folders that cannot be listed are skipped.
    """
    found: list[PoolFile] = []
    _walk(str(memory_dir), "", found)
    found.sort(key=lambda stat: stat.path)
    return found


def _walk(folder: str, prefix: str, found: list[PoolFile]) -> None:
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        name = entry.name
        if name.startswith("."):
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                excluded = name.lower() in EXCLUDED_FOLDERS
                if not excluded and (prefix or name not in EXCLUDED_TOP_FOLDERS):
                    _walk(entry.path, f"{prefix}{name}/", found)
                continue
            if not entry.is_file(follow_symlinks=False) or not name.lower().endswith(".md"):
                continue
            if not prefix and (name in EXCLUDED_TOP_FILES or SESSION_SUMMARY.fullmatch(name)):
                continue
            status = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        path = prefix + name
        shown = display_path(path)
        on_disk = path if shown != path else None
        found.append(PoolFile(shown, status.st_size, status.st_mtime_ns, status.st_ino, on_disk))


def collect_facts(memory_dir: Path, stats: list[PoolFile]) -> tuple[list[PoolFile], dict[str, str]]:
    """Given the memory folder and the pool's files, read each file and return the facts of
    the whole pool, and the files that could not be read with the reason (left out of the
    facts)."""
    facts: list[PoolFile] = []
    unreadable: dict[str, str] = {}
    for stat in stats:
        path = memory_dir / (stat.on_disk or stat.path)
        try:
            with os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW), "rb") as handle:
                data = handle.read()
        except OSError as error:
            unreadable[stat.path] = error.strerror or str(error)
            continue
        title = first_heading(data) or Path(stat.path).stem
        facts.append(stat._replace(title=title, markers=count_markers(data)))
    return facts, unreadable
