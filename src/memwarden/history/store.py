"""Where history lives: one git store for every agent, `<storage_dir>/history/snapshots.git`.

Snapshots of memory/ alone taken before history covered the root files stay in each agent's
own repository, `<storage_dir>/history/<agent id>/repo.git`, with paths relative to memory/:
they are read through the same functions, their paths given relative to the workspace, until
retention drops the last of them (and the folder with it).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memwarden.history.git import GitStore
from memwarden.history.model import MEMORY_PREFIX, Snapshot
from memwarden.process.locks import acquire_waiting
from memwarden.process.runtime import JobContext

SHARED_STORE = "snapshots.git"
LEGACY_STORE = "repo.git"
STORE_LOCK = "history-store"


def history_root(context: JobContext) -> Path:
    return context.storage_dir / "history"


def shared_store(context: JobContext) -> GitStore:
    """Return the store every new snapshot goes to."""
    return _store(context, history_root(context) / SHARED_STORE)


def legacy_store(context: JobContext, agent_id: str) -> GitStore:
    """Return the agent's own repository of snapshots of memory/ alone."""
    return _store(context, history_root(context) / agent_id / LEGACY_STORE)


def store_of(context: JobContext, snapshot: Snapshot) -> GitStore:
    """Return the store that holds `snapshot`."""
    return legacy_store(context, snapshot.agent_id) if snapshot.legacy else shared_store(context)


def snapshot_listing(context: JobContext, snapshot: Snapshot) -> dict[str, tuple[str, int]]:
    """Return the files of a snapshot as {workspace-relative path: (blob id, size)}."""
    listing = store_of(context, snapshot).listing(snapshot.commit or "")
    if snapshot.legacy:
        return {MEMORY_PREFIX + path: value for path, value in listing.items()}
    return listing


def snapshot_tree(context: JobContext, snapshot: Snapshot) -> dict[str, str]:
    """Return the files of a snapshot as {workspace-relative path: blob id}."""
    return {path: sha for path, (sha, _) in snapshot_listing(context, snapshot).items()}


@contextmanager
def locked_store(context: JobContext, *, exclusive: bool) -> Iterator[None]:
    """Hold the shared store's lock (`history-store`): shared to add snapshots, exclusive to
    prune and repack, so `git gc` never deletes the objects of a snapshot being recorded;
    waiting up to `history.lock_wait_seconds`. Raise LockHeld (exit 75) if it stays held."""
    lock = context.lock(STORE_LOCK, shared=not exclusive)
    what = "pruning the memory history" if not exclusive else "adding to the memory history"
    acquire_waiting(lock, context.config.history.lock_wait_seconds, f"another run is {what}")
    try:
        yield
    finally:
        lock.release()


def _store(context: JobContext, git_dir: Path) -> GitStore:
    return GitStore(git_dir, context.config.history.git, context.env.get("PATH"))
