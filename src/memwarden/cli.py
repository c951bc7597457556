"""The `memwarden` command: global options, then one subcommand dispatched to its module.

memwarden [--config FILE] [--state-dir DIR] [-v|-q] [--json] <command> [options] [--dry-run]

Exit codes: 0 done; 1 done with failures; 2 usage or configuration error; 75 another run of the
same job holds its lock.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import signal
import sys
from collections.abc import Sequence
from contextlib import ExitStack
from types import ModuleType

from memwarden import __version__
from memwarden.jobs import BY_NAME, JOBS, JobSpec
from memwarden.jobs.common import (
    CommandLineError,
    Parser,
    add_global_options,
    add_verb,
    asks_for_json,
    docs_line,
)
from memwarden.process import log_format, stopping
from memwarden.process.errors import (
    EXIT_FAILURES,
    LockHeld,
    MemwardenError,
    StateError,
    Terminated,
    describe_error,
    describe_os_error,
)

log = logging.getLogger(log_format.LOGGER_NAME)

DESCRIPTION = """\
Sidecar jobs that keep the memory of OpenClaw agents safe. Each layer works alone:
checkpoint writes what each agent was doing into its workspace, rotate resets sessions
before compaction, index keeps a compact catalog for bootstrap, health alerts people."""

EXIT_CODES = """\
exit codes: 0 done, 1 done with failures, 2 usage or configuration error,
75 skipped because another run of the same job holds the lock."""

OPTIONS_WITH_VALUE = {"--config", "--state-dir"}
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE


def main(argv: Sequence[str] | None = None) -> int:
    """Run memwarden with `argv` (default sys.argv[1:]); return the exit code."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    log_format.configure(logging.WARNING, sys.stderr)
    parser, chosen = build_parser(arguments)
    if chosen is not None:  # an option argparse leaves over is the command's: point at its help
        parser.command_prog = f"{parser.prog} {chosen.name}"
    unknown = _unknown_long_option(parser, arguments) if chosen is None else None
    try:
        if unknown is not None:
            parser.error(f"unrecognized option: {unknown}")
        options = parser.parse_args(arguments)
    except CommandLineError as error:
        return _report_error(chosen, asks_for_json(arguments), error.lines(), error.exit_code)
    verbosity = options.verbose - options.quiet
    levels = {2: logging.DEBUG, 1: logging.INFO}
    log.setLevel(levels.get(min(verbosity, 2), logging.WARNING))
    stopping.requested.clear()  # a new run (a caller in this process may run several)
    signal.signal(signal.SIGTERM, _terminated)
    try:
        return _unless_stopped(_run, chosen, options, returned=False)
    except (MemwardenError, Terminated) as error:
        # A run skipped because another holds the lock is not news for a quiet timer.
        quiet_skip = isinstance(error, LockHeld) and verbosity < 0
        level = logging.WARNING if isinstance(error, LockHeld) else logging.ERROR
        return _report_error(
            chosen, options.json, error.lines(), error.exit_code, level, quiet_skip
        )
    except BrokenPipeError:
        # The reader went away (`memwarden ... | head`): stop quietly with the status of a
        # process killed by SIGPIPE, as Unix tools do (BrokenPipeError is an OSError: first).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except OSError as error:  # a file or folder of memwarden's own: name it, no traceback
        return _report_error(chosen, options.json, [describe_os_error(error)], EXIT_FAILURES)
    except KeyboardInterrupt:
        log.error("interrupted")
        return 130


def _report_error(
    spec: JobSpec | None,
    json_output: bool,
    lines: list[str],
    exit_code: int,
    level: int = logging.ERROR,
    quiet: bool = False,
) -> int:
    if not quiet:
        for line in lines:
            log.log(level, line)
    if json_output:
        with contextlib.suppress(OSError):  # the output itself may be what failed: logged above
            job = spec.name if spec is not None else None
            _print_json({"job": job, "exit_code": exit_code, "error": lines})
    return exit_code


def build_parser(
    arguments: Sequence[str], every_command: bool = False
) -> tuple[argparse.ArgumentParser, JobSpec | None]:
    """Return the parser and the command named in `arguments`; only that command's module is
    imported, unless `every_command` (shell completion needs them all)."""
    parser = Parser(
        prog="memwarden",
        description=DESCRIPTION,
        epilog=f"{EXIT_CODES}\n{docs_line()}; `memwarden <command> --help` for each command.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"memwarden {__version__}")
    add_global_options(parser, suppress=False)
    commands = parser.add_subparsers(
        dest="command", metavar="<command>", title="commands", required=True
    )
    chosen = _find_command(arguments)
    # A command named: only its parser (the others' would be built for nothing, every run).
    specs = JOBS if every_command or chosen is None else [chosen]
    for spec in specs:
        sub = add_verb(commands, spec.name, spec.summary, spec.examples)
        if every_command or chosen is spec:
            importlib.import_module(spec.module).add_arguments(sub)
    return parser, chosen


def _unknown_long_option(parser: argparse.ArgumentParser, arguments: Sequence[str]) -> str | None:
    """Return the first `--option` before the command that memwarden does not know: with no
    abbreviations, `--conf X status` must say so, not that `X` is no command."""
    for argument in arguments:
        if argument == "--" or not argument.startswith("-"):
            return None
        if (
            argument.startswith("--")
            and argument.split("=", 1)[0] not in parser._option_string_actions
        ):
            return argument
    return None


def _find_command(arguments: Sequence[str]) -> JobSpec | None:
    words = iter(arguments)
    for argument in words:
        if argument in OPTIONS_WITH_VALUE:
            next(words, None)  # its value
        elif not argument.startswith("-"):
            return BY_NAME.get(argument)
    return None


def _run(spec: JobSpec, options: argparse.Namespace) -> int:
    # lazy: --help and --version load no settings
    from memwarden.process.runtime import JobContext
    from memwarden.settings import config as config_module

    config = config_module.load(options.config)
    module = importlib.import_module(spec.module)
    # A dry run or a read-only command creates nothing: no state.db or lock.
    read_only = spec.read_only or bool(getattr(options, "dry_run", False))
    if hasattr(module, "read_only"):  # a command whose verbs differ (history list / rewind)
        read_only = read_only or module.read_only(options)
    context = JobContext(
        config=config,
        state_dir_override=options.state_dir,
        json_output=options.json,
        verbosity=options.verbose - options.quiet,
        claims_storage=not read_only,
        read_only=read_only,
        command_line=lambda: build_parser([], every_command=True)[0],
    )
    # health reports a wrong folder, and alerts on it
    if spec.records_run and not read_only and not spec.runs_without_state:
        context.check_gateway_before_writing()
    lock_name = spec.name if spec.records_run and not read_only else None
    if lock_name and hasattr(module, "lock_name"):
        lock_name = module.lock_name(options)
    try:
        with _job_lock(spec, context, lock_name):
            return _execute(spec, module, context, options)
    finally:
        context.close()


def _job_lock(spec: JobSpec, context, name: str | None) -> ExitStack:
    """Return the job's run lock to hold, or nothing to hold when the job takes none or runs
    without its state (health on a full disk: the lock file cannot be created)."""
    held = ExitStack()
    if not name:
        return held
    lock = context.lock(name)
    try:
        lock.acquire()
    except StateError as error:
        if not spec.runs_without_state:
            raise
        context.state_problem = error
        return held
    held.callback(lock.release)
    return held


def _execute(spec: JobSpec, module: ModuleType, context, options: argparse.Namespace) -> int:
    # A dry run writes nothing, memwarden's own run history included.
    if spec.records_run and not getattr(options, "dry_run", False):
        try:
            name = module.run_name(options) if hasattr(module, "run_name") else spec.name
            context.run_id = context.state.start_run(name)
        except StateError as error:
            if not spec.runs_without_state:
                raise
            context.state_problem = context.state_problem or error
    try:
        if spec.renders:  # recorded as the run's failure: health sees the job fail
            # lazy: loaded with the settings in `_run`; only a job that renders checks them
            from memwarden.settings.config import check_files

            check_files(context.config)
        result = _unless_stopped(module.run, context, options)
    except StateError:
        raise  # the run cannot be recorded either
    except (MemwardenError, Terminated) as error:
        _finish(spec, context, error.exit_code, {"error": error.message})
        raise
    except Exception as error:  # any bug in a job is one line (and its traceback with -v)
        reason = describe_error(error)
        _finish(spec, context, EXIT_FAILURES, {"error": reason})
        message = f"{spec.name} failed: {reason}"
        log.error(message, exc_info=context.verbosity >= 1)
        if context.json_output:
            _print_json({"job": spec.name, "exit_code": EXIT_FAILURES, "error": [message]})
        return EXIT_FAILURES
    deployment = context.__dict__.get("deployment")  # read by the job, or not at all
    if deployment is not None and deployment.problems:  # agents it left out (refused workspace)
        result.problems += deployment.problems
        result.exit_code = max(result.exit_code, EXIT_FAILURES)
    unrecorded = _finish(spec, context, result.exit_code, result.data.get("summary", {}))
    if unrecorded:
        result.problems.append(unrecorded)
        result.exit_code = max(result.exit_code, EXIT_FAILURES)
    _print_result(spec, result, context)
    return result.exit_code


def _finish(spec: JobSpec, context, exit_code: int, summary: dict) -> str | None:
    """Record the end of the run; return the problem line if it cannot be recorded."""
    if not (spec.records_run and context.run_id is not None):
        return None
    try:
        context.state.finish_run(context.run_id, exit_code, summary)
    except StateError as error:
        return f"the run could not be recorded: {error.message}"
    return None


def _unless_stopped(call, *arguments, returned: bool = True):
    """Return call(*arguments); raise Terminated instead when a stop was requested meanwhile and
    the call raised, or (`returned`) returned: the exception `_terminated` raises can arrive in
    another form, or not at all (see stopping). A run that ended on its own, recorded already,
    is called with `returned` False and keeps its exit code."""
    try:
        outcome = call(*arguments)
    except Exception:
        stopping.check()
        raise
    if returned:
        stopping.check()
    return outcome


def _terminated(signum: int, frame: object) -> None:
    # Raised inside the job, so its run is recorded as failed and its lock released on the way
    # out (systemd stops a unit that runs past its timeout with SIGTERM). Once: a second SIGTERM
    # must not cut short the recording of the first (SIGKILL still ends the process).
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise stopping.request()


def _print_json(document: dict) -> None:
    import orjson

    if sys.stdout is None:  # started with its output closed (`>&-`): as print() does
        return
    sys.stdout.write(
        orjson.dumps(document, option=orjson.OPT_INDENT_2, default=str).decode() + "\n"
    )


def _print_result(spec: JobSpec, result, context) -> None:
    if context.json_output:
        _print_json(result.to_json())
    elif context.verbosity >= 0:
        for line in result.lines:
            print(line)
    for level, text in result.problem_levels():
        log.log(level, text)
    if result.exit_code == EXIT_FAILURES and not result.problems and context.verbosity < 0:
        # Never a silent failure: a quiet timer's log must show that this run failed.
        log.error("%s finished with failures (run it without -q for details)", spec.name)
