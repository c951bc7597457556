"""Plain facts about files, gathered once so that every decision can be pure."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class FileFacts:
    """A regular file in a folder: its name, size in bytes and modification time (Unix)."""

    name: str
    size: int
    mtime: float


def list_files(folder: Path) -> list[FileFacts]:
    """Return the regular files directly in `folder` (not symlinks), sorted by name.

    A missing folder has none. Raise OSError if it exists but cannot be listed.
    """
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return []
    facts = []
    for entry in entries:
        if entry.is_file(follow_symlinks=False):
            info = entry.stat(follow_symlinks=False)
            facts.append(FileFacts(entry.name, info.st_size, info.st_mtime))
    return sorted(facts, key=lambda fact: fact.name)
