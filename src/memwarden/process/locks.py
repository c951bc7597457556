"""Locks: one run of a job at a time (the next one exits 75 at once), and the per-agent memory
lock every writer of an agent's memory takes (checkpoint, compaction watch, index, maintenance,
history), waiting its turn."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from memwarden.fs.files import ensure_dir
from memwarden.process import stopping
from memwarden.process.errors import LockHeld, StateError, describe_os_error

POLL_SECONDS = 0.1
_held: dict[Path, int] = {}


class RunLock:
    """An exclusive advisory lock on `<folder>/<name>.lock`, held for a `with` block (`shared`:
    a lock many holders share, which keeps an exclusive holder out).

    The kernel releases it when the process dies, so a crashed run never leaves a stale lock.
    """

    def __init__(self, folder: Path, name: str, *, shared: bool = False) -> None:
        self.path = folder / f"{name}.lock"
        self.name = name
        self.shared = shared
        self._descriptor: int | None = None

    def acquire(self) -> RunLock:
        """Take the lock. Raise LockHeld naming the holder's pid if another process has it,
        StateError naming the path if the lock file cannot be created."""
        try:
            ensure_dir(self.path.parent)
            descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        except OSError as error:
            message = describe_os_error(error, f"cannot take the {self.name} lock")
            raise StateError(message) from error
        mode = fcntl.LOCK_SH if self.shared else fcntl.LOCK_EX
        try:
            fcntl.flock(descriptor, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(descriptor, 32).decode("ascii", "replace").strip() or "?"
            os.close(descriptor)
            raise LockHeld(
                f"{self.name} is already running (pid {holder} holds {self.path}); skipped"
            ) from None
        _write_holder(descriptor)
        self._descriptor = descriptor
        return self

    def release(self) -> None:
        if self._descriptor is not None:
            fcntl.flock(self._descriptor, fcntl.LOCK_UN)
            os.close(self._descriptor)
            self._descriptor = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc_info: object) -> None:
        self.release()


def _write_holder(descriptor: int) -> None:
    """Write this process's pid over the lock file's content.

    Overwritten in place, truncated only when the old content was longer: truncating a file
    with data to zero costs a block release (and, on ext4, a flush at close) per lock taken,
    which a checkpoint of many agents pays twice per agent.
    """
    holder = f"{os.getpid()}\n".encode()
    try:
        os.pwrite(descriptor, holder, 0)
        if os.fstat(descriptor).st_size > len(holder):
            os.ftruncate(descriptor, len(holder))
    except OSError:  # the disk is full: the lock holds all the same, its holder unnamed
        with suppress(OSError):
            os.ftruncate(descriptor, 0)


@contextmanager
def memory_lock(lock_folder: Path, agent_id: str, wait_seconds: float = 0) -> Iterator[None]:
    """Hold the memory lock of `agent_id` for a `with` block, waiting up to `wait_seconds`, so
    that checkpoint writes, snapshots and rewinds never interleave: a RunLock named
    `memory-<agent id>`, re-entrant within one process (a checkpoint that holds it while writing
    can take a snapshot, which takes it again).

    Raise LockHeld (exit 75) naming the agent if another process still holds it.
    """
    lock = RunLock(lock_folder, f"memory-{agent_id}")
    if lock.path in _held:
        _held[lock.path] += 1
        try:
            yield
        finally:
            _held[lock.path] -= 1
        return
    acquire_waiting(lock, wait_seconds, f"agent {agent_id}: another run is changing its memory")
    _held[lock.path] = 1
    try:
        yield
    finally:
        del _held[lock.path]
        lock.release()


def acquire_waiting(lock: RunLock, wait_seconds: float, who: str) -> None:
    """Take `lock`, trying again until `wait_seconds` have passed. Raise LockHeld saying `who`
    holds it if it stays held."""
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            lock.acquire()
            return
        except LockHeld as error:
            if time.monotonic() >= deadline:
                raise LockHeld(f"{who} ({error.message}); try again when it is done") from None
        stopping.pause(POLL_SECONDS)
