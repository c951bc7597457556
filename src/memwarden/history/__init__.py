"""Memory history: snapshots of each agent's workspace memory (memory/ and the root memory and
bootstrap files), diffs, rewind, retention, and the guard against destructive rewrites.

Snapshots live outside the workspace, in `<storage_dir>/history/snapshots.git`: a bare git
repository shared by every agent, driven through a sanitized environment (`git.py`), written
once per run whatever the number of agents (`snapshots.py`). A stat manifest per agent lets an
unchanged workspace be checked without reading a file (`manifest.py`). Their metadata (id,
agent, time, trigger, session, commit, file count) is in the state database (`records.py`).
Reading in data-flow order: scan → manifest → plan → snapshots (→ guard, rewrites) → git/store →
records; then browse, rewind and retention.

    snapshot_agents(context, [SnapshotRequest(agent, "checkpoint", key, id), ...]) -> results
    snapshot(context, agent, "manual") -> Snapshot | None (one agent; raises its error)
    list_snapshots(context, agent_id=None) / find_snapshot(context, id) / diff(context, id, id2)
    rewind.rewind(context, id, paths=(), dry_run=False, on_rewound=None) -> RewindReport
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
    "HistoryError": "model",
    "memory_lock": "locking",
    "Changes": "model",
    "Snapshot": "model",
    "prune": "retention",
    "RewindReport": "rewind",
    "snapshot": "snapshots",
    "snapshot_agents": "snapshots",
    "SnapshotRequest": "plan",
    "AgentSnapshot": "snapshots",
    "locked_memory": "store",
    "RewriteFinding": "rewrites",
}

__all__ = sorted(_PROVIDERS)


def __getattr__(name: str) -> Any:
    module = _PROVIDERS.get(name)
    if module is None:
        raise AttributeError(f"module 'memwarden.history' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"memwarden.history.{module}"), name)
    globals()[name] = value
    return value
