"""The `memwarden` program: `cli.main` in a process of its own, which ends without Python's
teardown.

A job is a short-lived process, and two of Python's habits cost it time for nothing. The cyclic
garbage collector walks, while some 260 modules load and the run goes on, objects that live
until the end (8 to 10 ms of a checkpoint); a run's memory is freed by reference counts, and
bounded by what it reads, so the collector stays off. At exit, Python takes every module apart
(about 15 ms); the process ends with `os._exit` instead, once the exit handlers have run
(logging's, the dataclass cache's) and the output is flushed, unless a thread still runs, whose
end Python's own exit waits for. `cli.main` called in another program (the tests) keeps Python's
defaults.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
import threading
from typing import NoReturn

# What Python's own exit returns when it cannot flush stdout.
EXIT_FLUSH_FAILED = 120


def run() -> NoReturn:
    """Run the command line of this process; end the process with its exit code."""
    start()
    from memwarden.cli import main

    end_process(main())


def start() -> None:
    """Set up this process for one run (the collector off)."""
    gc.disable()


def end_process(code: int) -> NoReturn:
    """Run the exit handlers, flush the output and end the process with `code`."""
    if threading.active_count() > 1:
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # the reader went away, or the stream is closed
            if stream is sys.stdout and code == 0:
                code = EXIT_FLUSH_FAILED
    os._exit(code)
