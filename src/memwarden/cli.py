"""The `memwarden` command: global options, then one subcommand dispatched to its module.

memwarden [--config FILE] [--state-dir DIR] [-v|-q] [--json] <command> [options] [--dry-run]

Exit codes: 0 done; 1 done with failures; 2 usage or configuration error; 75 another run of the
same job holds its lock.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import importlib.util
import logging
import os
import signal
import sys
import traceback
from collections.abc import Sequence
from types import ModuleType

from memwarden import __version__
from memwarden.errors import EXIT_FAILURES, MemwardenError, Terminated
from memwarden.jobs import BY_NAME, JOBS, JobSpec
from memwarden.jobs.common import add_global_options, global_options_parent, sentence

log = logging.getLogger("memwarden")

DESCRIPTION = """\
Sidecar jobs that keep the memory of OpenClaw agents safe. Each layer works alone:
checkpoint writes what each agent was doing into its workspace, rotate resets sessions
before compaction, index keeps a compact catalog for bootstrap, health alerts people."""

EXIT_CODES = """\
exit codes: 0 done, 1 done with failures, 2 usage or configuration error,
75 skipped because another run of the same job holds the lock."""

OPTIONS_WITH_VALUE = {"--config", "--state-dir"}


def main(argv: Sequence[str] | None = None) -> int:
    """Run memwarden with `argv` (default sys.argv[1:]); return the exit code."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    parser, chosen = build_parser(arguments)
    options = parser.parse_args(arguments)
    _configure_logging(options.verbose - options.quiet)
    signal.signal(signal.SIGTERM, _terminated)
    try:
        return _run(chosen, options)
    except MemwardenError as error:
        for line in error.lines():
            print(f"memwarden: {line}", file=sys.stderr)
        if options.json:
            _print_json({"job": chosen.name, "exit_code": error.exit_code, "error": error.lines()})
        return error.exit_code
    except KeyboardInterrupt:
        print("memwarden: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`memwarden ... | head`): stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILURES


def build_parser(
    arguments: Sequence[str], every_command: bool = False
) -> tuple[argparse.ArgumentParser, JobSpec | None]:
    """Return the parser and the command named in `arguments`; only that command's module is
    imported, unless `every_command` (shell completion needs them all)."""
    parser = argparse.ArgumentParser(
        prog="memwarden",
        description=DESCRIPTION,
        epilog=f"{EXIT_CODES}\n{_docs_line()}; `memwarden <command> --help` for each command.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"memwarden {__version__}")
    add_global_options(parser, suppress=False)
    common = global_options_parent()
    commands = parser.add_subparsers(
        dest="command", metavar="<command>", title="commands", required=True
    )
    chosen = _find_command(arguments)
    for spec in available_jobs():
        sub = commands.add_parser(
            spec.name,
            help=spec.summary,
            description=sentence(spec.summary),
            epilog=_command_epilog(spec),
            parents=[common],
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        if every_command or chosen is spec:
            load_module(spec).add_arguments(sub)
    return parser, chosen


def _command_epilog(spec: JobSpec) -> str:
    examples = "".join(f"\n  {example}" for example in spec.examples)
    return f"examples:{examples}\n\n{_docs_line()}" if examples else _docs_line()


@functools.cache
def _docs_line() -> str:
    from memwarden.resources import docs_dir

    return f"docs: {docs_dir()}"


def available_jobs() -> list[JobSpec]:
    """Return the commands whose module is installed."""
    return [spec for spec in JOBS if importlib.util.find_spec(spec.module) is not None]


def load_module(spec: JobSpec) -> ModuleType:
    return importlib.import_module(spec.module)


def _find_command(arguments: Sequence[str]) -> JobSpec | None:
    skip_next = False
    for argument in arguments:
        if skip_next:
            skip_next = False
            continue
        if argument in OPTIONS_WITH_VALUE:
            skip_next = True
            continue
        if argument.startswith("-"):
            continue
        return BY_NAME.get(argument)
    return None


def _configure_logging(level: int) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("memwarden: %(levelname)s: %(message)s"))
    log.addHandler(handler)
    log.propagate = False
    log.setLevel(logging.DEBUG if level >= 2 else logging.INFO if level == 1 else logging.WARNING)


def _run(spec: JobSpec, options: argparse.Namespace) -> int:
    from memwarden import config as config_module
    from memwarden import templating
    from memwarden.runtime import JobContext

    config = config_module.load(options.config)
    context = JobContext(
        config=config,
        state_dir_override=options.state_dir,
        json_output=options.json,
        verbosity=options.verbose - options.quiet,
    )
    module = load_module(spec)
    if spec.records_run:  # the jobs timers run: the next run loads what this one compiled
        templating.cache_compiled_templates(context.storage_dir)
    lock_name = spec.name if spec.locks else None
    if lock_name and hasattr(module, "lock_name"):
        lock_name = module.lock_name(options)
    try:
        if lock_name:
            with context.lock(lock_name):
                return _execute(spec, module, context, options)
        return _execute(spec, module, context, options)
    finally:
        context.close()


def _execute(spec: JobSpec, module: ModuleType, context, options: argparse.Namespace) -> int:
    # A dry run writes nothing, memwarden's own run history included.
    if spec.records_run and not getattr(options, "dry_run", False):
        context.run_id = context.state.start_run(spec.name)
    try:
        result = module.run(context, options)
    except MemwardenError as error:
        _finish(spec, context, error.exit_code, {"error": error.message})
        raise
    except Exception as error:  # noqa: BLE001 - any bug in a job is reported, not a traceback
        _finish(spec, context, EXIT_FAILURES, {"error": f"{type(error).__name__}: {error}"})
        if context.verbosity >= 1:
            traceback.print_exc()
        message = f"{spec.name} failed: {type(error).__name__}: {error}"
        print(f"memwarden: {message}", file=sys.stderr)
        if context.json_output:
            _print_json({"job": spec.name, "exit_code": EXIT_FAILURES, "error": [message]})
        return EXIT_FAILURES
    _finish(spec, context, result.exit_code, result.data.get("summary", {}))
    _print_result(result, context)
    return result.exit_code


def _finish(spec: JobSpec, context, exit_code: int, summary: dict) -> None:
    if spec.records_run and context.run_id is not None:
        context.state.finish_run(context.run_id, exit_code, summary)


def _terminated(signum: int, frame: object) -> None:
    # Raised inside the job, so its run is recorded as failed and its lock released on the way
    # out (systemd stops a unit that runs past its timeout with SIGTERM).
    raise Terminated("stopped by SIGTERM before finishing")


def _print_json(document: dict) -> None:
    import orjson

    sys.stdout.write(
        orjson.dumps(document, option=orjson.OPT_INDENT_2, default=str).decode() + "\n"
    )


def _print_result(result, context) -> None:
    if context.json_output:
        _print_json(result.to_json())
    elif context.verbosity >= 0:
        for line in result.lines:
            print(line)
    for problem in result.problems:
        print(f"memwarden: {problem}", file=sys.stderr)
