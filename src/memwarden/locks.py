"""Non-blocking run locks: one run of a job at a time, the next one exits 75 at once."""

from __future__ import annotations

import fcntl
import os
from contextlib import suppress
from pathlib import Path
from types import TracebackType

from memwarden.errors import LockHeld, StateError, describe_os_error
from memwarden.files import ensure_dir


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

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
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
