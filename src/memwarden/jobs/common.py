"""Options and helpers shared by the jobs."""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from memwarden.fs.resources import docs_dir
from memwarden.jobs import BY_NAME
from memwarden.process.errors import MemwardenError, UsageError

if TYPE_CHECKING:
    from memwarden.openclaw.agents import Agent
    from memwarden.openclaw.layout import Deployment


class CommandLineError(UsageError):
    """The command line does not parse: an unknown command or option, a missing or bad value."""


class Parser(argparse.ArgumentParser):
    """The parser of memwarden and of each command and verb (sub-parsers inherit the class).

    Options are never abbreviated: `--conf X` is an unknown option, not `--config X`. A usage
    error raises CommandLineError, reported as every usage error is (one line through
    memwarden's log, the JSON document under --json, exit 2).
    """

    def __init__(self, *arguments, **options) -> None:
        options.setdefault("allow_abbrev", False)
        super().__init__(*arguments, **options)

    # The command line's own command, once known: an unknown option after it is that command's.
    command_prog: str | None = None

    def error(self, message: str) -> NoReturn:
        raise CommandLineError(f"{message} (see `{self.command_prog or self.prog} --help`)")


def asks_for_json(arguments: Sequence[str]) -> bool:
    """Given a command line that did not parse, return whether it asked for --json: the flag
    anywhere before `--`, after the argument that failed too (argparse stops at the first
    error). No option of memwarden takes a value that starts with `--`."""
    options = arguments[: arguments.index("--")] if "--" in arguments else arguments
    return "--json" in options


def positive_int(text: str) -> int:
    """An argparse type: a whole number of 1 or more (a count of things to show)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number ≥ 1, got {value}")
    return value


def _given_path(what: str):
    """Return an argparse type: a Path, refusing an empty value (which Path reads as `.`)."""

    def given_path(text: str) -> Path:
        if not text.strip():
            raise argparse.ArgumentTypeError(
                f"the option is empty: name {what}, or leave the option out for the default"
            )
        return Path(text)

    return given_path


def add_global_options(parser: argparse.ArgumentParser, suppress: bool) -> None:
    """Add --config, --state-dir, -v, -q and --json to `parser`."""

    def default(value):
        return argparse.SUPPRESS if suppress else value

    group = parser.add_argument_group("global options")
    group.add_argument(
        "--config",
        type=_given_path("a TOML file"),
        default=default(None),
        metavar="FILE",
        help="memwarden's TOML config (default: $MEMWARDEN_CONFIG, "
        "else $XDG_CONFIG_HOME/memwarden/config.toml, else built-in defaults)",
    )
    group.add_argument(
        "--state-dir",
        type=_given_path("the gateway's state dir"),
        default=default(None),
        metavar="DIR",
        help="the OpenClaw gateway's state dir (default: $OPENCLAW_STATE_DIR, ~/.openclaw, ...)",
    )
    group.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=default(0),
        help="say more (repeat for debug detail); logs go to stderr",
    )
    group.add_argument(
        "-q",
        "--quiet",
        action="count",
        default=default(0),
        help="print only warnings and problems (for timers)",
    )
    group.add_argument(
        "--json",
        action="store_true",
        default=default(False),
        help="print one JSON document describing what was done, on stdout",
    )


def sentence(summary: str) -> str:
    """Given a one-line summary ("list snapshots, newest first"), return it as the description
    `--help` shows ("List snapshots, newest first.")."""
    return summary[:1].upper() + summary[1:] + "."


def add_verb(
    verbs: argparse._SubParsersAction,
    name: str,
    summary: str,
    examples: Iterable[str] | None = None,
) -> argparse.ArgumentParser:
    """Add the command or sub-command `name` (a history verb, an install target, …) with the
    global options; `summary` is its line in the parent's `--help` and, as a sentence, its own.
    Its `--help` ends with its examples (a verb's: those of its command that use it) and the
    docs folder."""
    prog = f"{verbs._prog_prefix} {name}"  # memwarden history rewind
    if examples is None:
        examples = BY_NAME[prog.split()[1]].examples
        examples = [e for e in examples if f"{e} ".startswith(f"{prog} ")]
    shown = "".join(f"\n  {example}" for example in examples)
    # The global options again, their defaults suppressed: a value given before the command
    # is not overwritten.
    parent = Parser(add_help=False)
    add_global_options(parent, suppress=True)
    return verbs.add_parser(
        name,
        parents=[parent],
        help=summary,
        description=sentence(summary),
        epilog=f"examples:{shown}\n\n{docs_line()}" if shown else docs_line(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


@functools.cache
def docs_line() -> str:
    return f"docs: {docs_dir()}"


def add_dry_run(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="change nothing: say what would be written, reset or sent",
    )


def add_agent_filter(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--agent",
        action="append",
        metavar="ID",
        help="only this agent (repeatable); default: every agent",
    )


def select_agents(deployment: Deployment, wanted: Sequence[str] | None) -> list[Agent]:
    """Return the deployment's agents without those whose workspace memwarden refuses
    (`Deployment.problems` says why; the CLI reports them), or the agents named in `wanted`.

    Raise UsageError naming the unknown ids and the known ones, MemwardenError when a named
    agent's workspace is refused.
    """
    if not wanted:
        return deployment.usable_agents()
    by_id = {agent.id: agent for agent in deployment.agents}
    require_known_agents(wanted, by_id)
    return [writable(deployment, by_id[name.lower()]) for name in dict.fromkeys(wanted)]


def require_known_agents(
    wanted: Sequence[str] | None,
    known: Iterable[str],
    recorded: Callable[[], Iterable[str]] | None = None,
) -> None:
    """Given the agent ids asked for (any case; None or empty: every agent), the deployment's
    ids and, for a command that reads memwarden's records, a function returning the ids those
    hold (an agent removed from the gateway since), raise UsageError naming the ids asked for
    that are none of them, and the ones found. `recorded` is called only when needed."""
    found = set(known)
    unknown = [name for name in wanted or () if name.lower() not in found]
    if unknown and recorded is not None:
        found |= set(recorded())
        unknown = [name for name in unknown if name.lower() not in found]
    if unknown:
        named = ", ".join(sorted(found)) or "none"
        raise UsageError(f"unknown agent(s): {', '.join(unknown)} (agents found: {named})")


def writable(deployment: Deployment, agent: Agent) -> Agent:
    """Return `agent`. Raise MemwardenError (the line naming the config) when memwarden refuses
    its workspace: asked for by name, it is not silently left out."""
    if agent.workspace_problem is not None:
        raise MemwardenError(f"{deployment.config_path}: {agent.workspace_problem}")
    return agent
