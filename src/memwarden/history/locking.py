"""The memory history's store lock (`history-store`): runs adding snapshots share it; retention
takes it alone, so `git gc` never deletes the objects of a snapshot being recorded."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memwarden.process.locks import RunLock, acquire_waiting

STORE_LOCK = "history-store"


@contextmanager
def store_lock(lock_folder: Path, exclusive: bool, wait_seconds: float = 0) -> Iterator[None]:
    """Hold the shared store's lock (alone when `exclusive`), waiting up to `wait_seconds`.

    Raise LockHeld (exit 75) if it stays held.
    """
    lock = RunLock(lock_folder, STORE_LOCK, shared=not exclusive)
    what = "pruning the memory history" if not exclusive else "adding to the memory history"
    acquire_waiting(lock, wait_seconds, f"another run is {what}")
    try:
        yield
    finally:
        lock.release()
