"""The `--path` filter: paths relative to memory/, each naming a file or a folder."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence

from memwarden.errors import UsageError


def normalize_paths(paths: Iterable[str]) -> list[str]:
    """Given paths as typed (`MEMORY.md`, `memory/MEMORY.md`, `./archive/`), return them
    relative to memory/ and `/`-separated.

    Raise UsageError for a path that is absolute or leaves memory/.
    """
    normalized = []
    for raw in paths:
        text = raw.replace("\\", "/").strip()
        path = posixpath.normpath(text)
        if path.startswith("memory/"):
            path = path[len("memory/") :]
        if text.startswith("/") or path == "." or path.split("/")[0] == "..":
            raise UsageError(f"--path {raw}: give a file or folder inside memory/, e.g. MEMORY.md")
        normalized.append(path)
    return list(dict.fromkeys(normalized))


def matches(path: str, wanted: Sequence[str]) -> bool:
    """Return True when `path` is one of `wanted` or inside one of them (all match when empty)."""
    return not wanted or any(path == item or path.startswith(item + "/") for item in wanted)
