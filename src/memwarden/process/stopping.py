"""The process's stop request (SIGTERM), seen by threads other than the main one.

The CLI's SIGTERM handler raises Terminated in the main thread and sets `requested`. A worker
thread that waits (for another run's lock) waits with `pause`, which raises Terminated once a
stop is requested, so the process does not wait for it before exiting.

Python can lose the exception a signal handler raises: 3.11 turns it into a RuntimeError when it
lands inside a class's `__set_name__` (a dataclass being created by a late import), and ignores
it when it lands inside a finalizer. `requested` is never lost: jobs `check` it before each
item of their loops and where they keep one item's failure from stopping the others, the CLI
treats a job that ends once a stop was requested as stopped, and the waits below end on it.
"""

from __future__ import annotations

import threading

from memwarden.process.errors import Terminated

requested = threading.Event()


def request() -> Terminated:
    """Record the stop request; return the Terminated to raise in the main thread."""
    requested.set()
    return Terminated()


def check() -> None:
    """Raise Terminated if a stop was requested. Called before each item of a job's loop and
    first in each handler that keeps one item's failure from stopping the others: the error it
    handles may be the stop itself, in another form."""
    if requested.is_set():
        raise Terminated()


def pause(seconds: float) -> None:
    """Wait `seconds`; raise Terminated at once if a stop is (or gets) requested."""
    if requested.wait(seconds):
        raise Terminated()
