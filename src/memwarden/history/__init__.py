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

from memwarden.history.browse import (
    DiffReport,
    diff,
    find_snapshot,
    list_snapshots,
    snapshot_listing,
)
from memwarden.history.git import HistoryError
from memwarden.history.locking import memory_lock
from memwarden.history.model import Changes, Snapshot
from memwarden.history.retention import prune
from memwarden.history.rewind import RewindReport, rewind
from memwarden.history.snapshots import snapshot
from memwarden.history.store import locked_memory

__all__ = [
    "Changes",
    "DiffReport",
    "HistoryError",
    "RewindReport",
    "Snapshot",
    "diff",
    "find_snapshot",
    "list_snapshots",
    "locked_memory",
    "memory_lock",
    "prune",
    "rewind",
    "snapshot",
    "snapshot_listing",
]
