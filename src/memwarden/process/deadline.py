"""A deadline on a whole blocking call, for libraries that only time each read.

httpx and urllib (under slack-sdk) give up when one read waits too long, not when the whole
exchange does: a server that sends a byte a second keeps them going for as long as it likes.
`call_with_deadline` runs such a call in a daemon thread and stops waiting for it when its
deadline passes. The abandoned call holds no lock and no file memwarden writes; its thread ends
when its connection does, or with the process (a daemon thread never holds up the exit).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from memwarden.process import stopping

Result = TypeVar("Result")

STOP_POLL_SECONDS = 0.25  # how soon a stop ends the wait when its own exception was lost


class DeadlineExceeded(TimeoutError):
    """The call had not returned when its deadline passed."""


class Deadline:
    """A point in time a call must be done by; the call itself may push it back (a granted
    retry after HTTP 429 earns the wait it was told to make)."""

    def __init__(self, seconds: float) -> None:
        self._end = time.monotonic() + seconds
        self._lock = threading.Lock()

    def extend(self, seconds: float) -> None:
        """Move the deadline `seconds` later."""
        with self._lock:
            self._end += seconds

    def remaining(self) -> float:
        """Return the seconds left (0 once it has passed)."""
        with self._lock:
            return max(self._end - time.monotonic(), 0.0)


def call_with_deadline(
    deadline: Deadline | float, function: Callable[..., Result], *arguments: Any
) -> Result:
    """Given a deadline (or seconds from now) and a call, return what `function(*arguments)`
    returns, or raise what it raises.

    Raise DeadlineExceeded if it has not returned by the deadline, Terminated if a stop is
    requested meanwhile.
    """
    if not isinstance(deadline, Deadline):
        deadline = Deadline(deadline)
    outcome: list[tuple[bool, Any]] = []
    done = threading.Event()

    def worker() -> None:
        try:
            outcome.append((True, function(*arguments)))
        except BaseException as error:  # noqa: BLE001 - handed over to the waiting thread
            outcome.append((False, error))
        finally:
            done.set()

    threading.Thread(target=worker, name="memwarden-deadline", daemon=True).start()
    while not done.wait(min(deadline.remaining(), STOP_POLL_SECONDS)):
        stopping.check()
        if deadline.remaining() <= 0:
            raise DeadlineExceeded
    succeeded, value = outcome[0]
    if succeeded:
        return value
    raise value
