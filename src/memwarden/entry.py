"""The `memwarden` program: `cli.main` in a process of its own, which ends without Python's
teardown.

A job is a short-lived process, and two of Python's habits cost it time for nothing. The cyclic
garbage collector walks, while some 200 modules load and the run goes on, objects that live
until the end (8 to 10 ms of a checkpoint); a run's memory is freed by reference counts, and
bounded by what it reads, so the collector stays off. At exit, Python takes every module apart
(about 15 ms); the process ends with `os._exit` instead, once the output is flushed and the exit
handlers have run (logging's, the dataclass cache's), unless a thread still runs, whose end
Python's own exit waits for. `cli.main` called in another program (the tests) keeps Python's
defaults.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import logging
import os
import signal
import sys
import threading
from typing import NoReturn

# What Python's own exit returns when it cannot write the rest of the output.
EXIT_FLUSH_FAILED = 120


def run() -> NoReturn:
    """Run the command line of this process; end the process with its exit code."""
    start()
    from memwarden.cli import main

    try:
        code = main()
    except SystemExit as stop:  # --help, --version, a usage error: argparse ends the run
        code = _exit_code(stop)
    end_process(code)


class _ErrorsSaid(logging.Filter):
    """Remembers the text of each error line the run logged (they are few)."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.ERROR:
            self.lines.add(record.getMessage())
        return True


_errors_said = _ErrorsSaid()


def start() -> None:
    """Set up this process for one run (the collector off; the error lines remembered)."""
    from memwarden.log_format import LOGGER_NAME

    gc.disable()
    logging.getLogger(LOGGER_NAME).addFilter(_errors_said)


def end_process(code: int) -> NoReturn:
    """Flush the output, run the exit handlers and end the process with `code`."""
    if threading.active_count() > 1:
        sys.exit(code)
    # The job is over: a stop that comes now ends the process at once, as it would any program,
    # rather than break into the flush or an exit handler with the job's exception. A signal
    # the process was started with ignored (SIGINT of a background job) stays ignored.
    for number in (signal.SIGTERM, signal.SIGINT):
        if signal.getsignal(number) not in (signal.SIG_IGN, None):
            signal.signal(number, signal.SIG_DFL)
    code = _flush_output(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):  # what the exit handlers wrote
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    os._exit(code)


def _exit_code(stop: SystemExit) -> int:
    """Return the exit code `sys.exit` was given, as Python's own exit makes it (a message is
    printed to stderr and is exit 1)."""
    if stop.code is None or isinstance(stop.code, int):
        return stop.code or 0
    with contextlib.suppress(OSError, ValueError, AttributeError):
        sys.stderr.write(f"{stop.code}\n")
    return 1


def _flush_output(code: int) -> int:
    """Write what is left of the output; return the exit code: the broken-pipe status when the
    reader went away (as `cli.main` returns it); when the output cannot be written (a full disk),
    one line on stderr, and EXIT_FLUSH_FAILED unless the run failed already (its code is kept).
    The line is said whatever the code (doctor with a finding that needs action, health with a
    critical check, still lost their report), unless the run said that error already: its
    output failed while it ran, and what is left (its --json error document) fails again."""
    if sys.stdout is None:
        return code
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        from memwarden.cli import EXIT_BROKEN_PIPE

        return code or EXIT_BROKEN_PIPE
    except (OSError, ValueError) as error:
        from memwarden.errors import describe_os_error
        from memwarden.log_format import LOGGER_NAME

        reason = describe_os_error(error) if isinstance(error, OSError) else str(error)
        if not (code and reason in _errors_said.lines):
            logging.getLogger(LOGGER_NAME).error("the output could not be written: %s", reason)
        return code or EXIT_FLUSH_FAILED
    return code
