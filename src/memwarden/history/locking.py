"""The per-agent memory lock: checkpoint writes, snapshots and rewinds never interleave.

It is a RunLock named `memory-<agent id>` in memwarden's lock folder, so another process (a
checkpoint, a rewind) is kept out. Within one process it is re-entrant: a checkpoint that holds it
while writing can call `snapshot()`, which takes it again.

The store lock (`history-store`) guards the shared store: runs adding snapshots share it;
retention takes it alone, so `git gc` never deletes the objects of a snapshot being recorded.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memwarden import stopping
from memwarden.errors import LockHeld
from memwarden.locks import RunLock

POLL_SECONDS = 0.1
STORE_LOCK = "history-store"

_held: dict[Path, int] = {}


def lock_name(agent_id: str) -> str:
    return f"memory-{agent_id}"


@contextmanager
def memory_lock(lock_folder: Path, agent_id: str, wait_seconds: float = 0) -> Iterator[None]:
    """Hold the memory lock of `agent_id` for a `with` block, waiting up to `wait_seconds`.

    Raise LockHeld (exit 75) naming the agent if another process still holds it.
    """
    lock = RunLock(lock_folder, lock_name(agent_id))
    if lock.path in _held:
        _held[lock.path] += 1
        try:
            yield
        finally:
            _held[lock.path] -= 1
        return
    _acquire(lock, wait_seconds, f"agent {agent_id}: another run is changing its memory")
    _held[lock.path] = 1
    try:
        yield
    finally:
        del _held[lock.path]
        lock.release()


@contextmanager
def store_lock(lock_folder: Path, exclusive: bool, wait_seconds: float = 0) -> Iterator[None]:
    """Hold the shared store's lock (alone when `exclusive`), waiting up to `wait_seconds`.

    Raise LockHeld (exit 75) if it stays held.
    """
    lock = RunLock(lock_folder, STORE_LOCK, shared=not exclusive)
    what = "pruning the memory history" if not exclusive else "adding to the memory history"
    _acquire(lock, wait_seconds, f"another run is {what}")
    try:
        yield
    finally:
        lock.release()


def _acquire(lock: RunLock, wait_seconds: float, who: str) -> None:
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            lock.acquire()
            return
        except LockHeld as error:
            if time.monotonic() >= deadline:
                raise LockHeld(f"{who} ({error.message}); try again when it is done") from None
        stopping.pause(POLL_SECONDS)
