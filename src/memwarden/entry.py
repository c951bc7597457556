"""The `memwarden` program: `cli.main` in a process that ends without Python's teardown.

A job is a short-lived process whose objects their reference counts free, so Python's cyclic
garbage collector is off (it would walk the objects of some 200 modules again and again as they
load: 8 to 10 ms of a checkpoint). At exit Python waits for the threads and runs the exit
handlers; the last of them flushes the output and ends the process with `os._exit`, instead of
taking every module apart (about 15 ms). `cli.main` called in another program (the tests) keeps
Python's defaults.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import logging
import os
import signal
import sys
from typing import NoReturn

# What Python's own exit returns when it cannot write the rest of the output.
EXIT_FLUSH_FAILED = 120

_exit_code = 1  # until the run returns one: what Python's exit gives an uncaught exception
_errors_said: set[str] = set()  # the text of each error line the run logged (they are few)


def run() -> NoReturn:
    """Run the command line of this process; end the process with its exit code."""
    start()
    # lazy: nothing of the program loads before the collector is off
    from memwarden.cli import main

    try:
        code = main()
    except SystemExit as stop:  # --help, --version: argparse ends the run
        code = stop.code if isinstance(stop.code, int) else int(stop.code is not None)
    end_process(code)


def start() -> None:
    """Set up this process for one run: the collector off, the error lines remembered, and the
    end of the process registered as the first exit handler, so that it runs last."""
    gc.disable()
    # lazy: nothing of the program loads before the collector is off
    from memwarden.process.log_format import LOGGER_NAME

    atexit.register(_end)
    logging.getLogger(LOGGER_NAME).addFilter(_remember_error)


def end_process(code: int) -> NoReturn:
    """End the process with `code` through Python's exit (after `start`)."""
    global _exit_code
    _exit_code = code
    # The job is over: a stop that comes now ends the process at once, as it would any program,
    # rather than break into an exit handler with the job's exception. A signal the process was
    # started with ignored (SIGINT of a background job) stays ignored.
    for number in (signal.SIGTERM, signal.SIGINT):
        if signal.getsignal(number) not in (signal.SIG_IGN, None):
            signal.signal(number, signal.SIG_DFL)
    sys.exit(code)


def _remember_error(record: logging.LogRecord) -> bool:
    if record.levelno >= logging.ERROR:
        _errors_said.add(record.getMessage())
    return True


def _end() -> None:
    """The last exit handler: flush the output, then end the process with the run's code."""
    code = _flush_output(_exit_code)
    with contextlib.suppress(OSError, ValueError, AttributeError):
        sys.stderr.flush()
    os._exit(code)


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
        # lazy: only when the output cannot be written
        from memwarden.cli import EXIT_BROKEN_PIPE

        return code or EXIT_BROKEN_PIPE
    except (OSError, ValueError) as error:
        # lazy: only when the output cannot be written
        from memwarden.process.errors import describe_os_error
        from memwarden.process.log_format import LOGGER_NAME

        reason = describe_os_error(error) if isinstance(error, OSError) else str(error)
        if not (code and reason in _errors_said):
            logging.getLogger(LOGGER_NAME).error("the output could not be written: %s", reason)
        return code or EXIT_FLUSH_FAILED
    return code
