"""Memory history: snapshots of each agent's memory/ folder, diffs, rewind and retention.

Snapshots live outside the workspace, in `<storage_dir>/history/<agent id>/`: a bare git
repository driven through a sanitized environment (`git.py`) plus a stat manifest that lets an
unchanged folder be checked without reading a file (`manifest.py`). Their metadata (id, agent,
time, trigger, session, commit, file count) is in the state database (`records.py`).

    snapshot(context, agent, "checkpoint", session_key=..., session_id=...) -> Snapshot | None
    list_snapshots(context, agent_id=None) / find_snapshot(context, id) / diff(context, id, id2)
    rewind(context, id, paths=(), dry_run=False) -> RewindReport
    prune(context, dry_run) -> JobResult (what `memwarden maintain` runs)
    memory_lock(lock_folder, agent_id) — hold it while writing an agent's memory files
"""

from __future__ import annotations

import importlib
from typing import Any

# Imported on first use: a checkpoint run that only needs the memory lock should not pay for
# the whole package.
_PROVIDERS = {
    "DiffReport": "browse",
    "diff": "browse",
    "find_snapshot": "browse",
    "list_snapshots": "browse",
    "snapshot_listing": "browse",
    "HistoryError": "git",
    "memory_lock": "locking",
    "Changes": "model",
    "Snapshot": "model",
    "prune": "retention",
    "RewindReport": "rewind",
    "rewind": "rewind",
    "snapshot": "snapshots",
    "locked_memory": "store",
}

__all__ = sorted(_PROVIDERS)


def __getattr__(name: str) -> Any:
    module = _PROVIDERS.get(name)
    if module is None:
        raise AttributeError(f"module 'memwarden.history' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"memwarden.history.{module}"), name)
    globals()[name] = value
    return value
