"""The `--path` filter: files or folders of the workspace's history, as the operator types them.

History paths are relative to the workspace (`MEMORY.md`, `memory/2026-11-21.md`). Paths
relative to memory/, as history took them before it covered the root files
(`2026-11-21.md`, `archive/2026-10`), keep working where they name nothing at the workspace's
top: `MEMORY.md` is the root file when there is one in play, else `memory/MEMORY.md`.
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection, Iterable, Sequence

from memwarden.history.model import MEMORY_PREFIX
from memwarden.process.errors import UsageError


def resolve_paths(paths: Iterable[str], known: Collection[str], snapshot_id: str) -> list[str]:
    """Given paths as typed and every workspace-relative path in play (the snapshot's and the
    workspace's), return them workspace-relative and `/`-separated.

    Raise UsageError for a path that is absolute, leaves the workspace, or names nothing known.
    """
    resolved, unknown = [], []
    for raw in paths:
        path = _normalize(raw)
        if _names_something(path, known):
            resolved.append(path)
        elif _names_something(MEMORY_PREFIX + path, known):
            resolved.append(MEMORY_PREFIX + path)
        else:
            unknown.append(raw)
    if unknown:
        raise UsageError(
            f"--path {', '.join(unknown)}: not in snapshot {snapshot_id} nor in the workspace "
            "(paths are relative to the workspace, e.g. MEMORY.md or memory/2026-11-21.md)"
        )
    return list(dict.fromkeys(resolved))


def matches(path: str, wanted: Sequence[str]) -> bool:
    """Return True when `path` is one of `wanted` or inside one of them (all match when empty)."""
    return not wanted or any(path == item or path.startswith(item + "/") for item in wanted)


def _normalize(raw: str) -> str:
    text = raw.replace("\\", "/").strip()
    path = posixpath.normpath(text) if text else "."
    if text.startswith("/") or path == "." or path.split("/")[0] == "..":
        raise UsageError(
            f"--path {raw}: give a file or folder inside the workspace, e.g. MEMORY.md or memory/"
        )
    return path


def _names_something(path: str, known: Collection[str]) -> bool:
    return any(matches(name, [path]) for name in known)
