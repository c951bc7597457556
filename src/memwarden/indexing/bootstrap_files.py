"""The files a workspace gives an agent at bootstrap, and their lengths as the gateway counts them.

The gateway loads its own set (AGENTS.md, MEMORY.md, …); memwarden's bootstrap hook adds INDEX.md
and the session's own handoff (ACTIVE_CONTEXT.md for the main session). Doctor judges the lengths
against the caps, health's budget check and metrics carry them, and the checkpoint sizes a
handoff by the room the gateway's own files leave; each asks for the names it needs.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from memwarden.fs.files import read_text_if_exists
from memwarden.indexing.manifest import ACTIVE_CONTEXT_PATH, INDEX_PATH
from memwarden.openclaw.bootstrap import GATEWAY_BOOTSTRAP, js_length

# What memwarden's hook adds that every agent has one of (other conversations' handoffs vary).
INJECTED = (INDEX_PATH, ACTIVE_CONTEXT_PATH)


def bootstrap_lengths(
    workspace: Path, names: Sequence[str] = (*GATEWAY_BOOTSTRAP, *INJECTED)
) -> dict[str, int]:
    """Given a workspace, return the length of each of the bootstrap files `names` present
    (default: the gateway's and memwarden's), by path relative to the workspace, in UTF-16 units
    with the end trimmed.

    Only the names a folder listing shows are opened: health reads every agent's workspace each
    run, and most bootstrap files are absent.
    """
    present = _names(workspace)
    if "memory" in present and any(name.startswith("memory/") for name in names):
        present |= {f"memory/{name}" for name in _names(workspace / "memory")}
    lengths = {}
    for name in names:
        if name not in present:
            continue
        text = read_text_if_exists(workspace / name)
        if text is not None:
            lengths[name] = js_length(text)
    return lengths


def _names(folder: Path) -> set[str]:
    try:
        return set(os.listdir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return set()
