"""Carry out install and uninstall plans: write and remove files, run scheduler commands.

The thin, impure half of scheduling. Commands are resolved on the PATH of the job's
environment and never receive a secret: the crontab, the only input sent on stdin, holds paths.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from memwarden.fs.files import atomic_write, ensure_dir, missing_ancestors, sha256_file
from memwarden.process.errors import UsageError
from memwarden.process.runtime import JobResult
from memwarden.scheduling.host import find_command
from memwarden.scheduling.manifest import InstalledFile
from memwarden.scheduling.plan import Command, removal_decision

COMMAND_TIMEOUT_SECONDS = 60


@dataclass(frozen=True)
class CommandOutcome:
    """How a command went: its exit code (None when it could not start) and what it said."""

    command: Command
    exit_code: int | None
    output: str

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def to_json(self) -> dict:
        return self.command.to_json() | {"exit_code": self.exit_code, "output": self.output}


def report_outcomes(result: JobResult, outcomes: list[CommandOutcome]) -> int:
    """Add a line or a problem per command outcome to `result`; return the number of failures.

    A command allowed to fail (stopping something not running) is not a failure, unless it
    could not reach the scheduler at all (then what it was to stop may still run).
    """
    failures = 0
    for outcome in outcomes:
        shown = outcome.command.display()
        if outcome.ok:
            result.lines.append(f"ran: {shown}")
        elif outcome.command.may_fail and not _unreachable(outcome):
            result.lines.append(f"ran: {shown} (nothing to do)")
        else:
            failures += 1
            output = outcome.output or f"exit {outcome.exit_code}"
            result.problems.append(f"failed: {shown}: {output}")
    return failures


# What systemctl and launchctl say when they cannot talk to the scheduler at all.
UNREACHABLE = ("failed to connect to bus", "no medium found", "could not find domain")


def _unreachable(outcome: CommandOutcome) -> bool:
    return outcome.exit_code is None or any(
        words in outcome.output.lower() for words in UNREACHABLE
    )


def missing_commands(commands: list[Command], env: Mapping[str, str]) -> list[str]:
    """Given commands, return the programs among them that are not on PATH."""
    names = dict.fromkeys(command.argv[0] for command in commands)
    return [name for name in names if find_command(name, env) is None]


def run_command(command: Command, env: Mapping[str, str]) -> CommandOutcome:
    """Run `command` (stdin when it has one) and return its outcome; never raise for a failure."""
    exit_code, stdout, stderr = _execute(command, env)
    output = " ".join((stderr.strip() or stdout.strip()).split())
    return CommandOutcome(command, exit_code, output[:500])


def read_crontab(env: Mapping[str, str]) -> tuple[str, bool]:
    """Return the user's crontab and whether one exists (`crontab -l`).

    Raise UsageError if `crontab` is not on PATH or fails for another reason than "no crontab".
    """
    exit_code, stdout, stderr = _execute(Command(("crontab", "-l"), "read the crontab"), env)
    if exit_code == 0:
        return stdout, True
    message = " ".join(stderr.split()) or f"exit {exit_code}"
    if exit_code is None:
        raise UsageError(f"cannot read your crontab: {message}; install cron first")
    if "no crontab" in message.lower():
        return "", False
    raise UsageError(f"`crontab -l` failed: {message}")


def _execute(command: Command, env: Mapping[str, str]) -> tuple[int | None, str, str]:
    program = find_command(command.argv[0], env)
    if program is None:
        return None, "", f"{command.argv[0]}: not found on PATH"
    try:
        completed = subprocess.run(
            [program, *command.argv[1:]],
            input=command.stdin,
            capture_output=True,
            text=True,
            env=dict(env),
            timeout=COMMAND_TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None, "", f"timed out after {COMMAND_TIMEOUT_SECONDS}s"
    except OSError as error:
        return None, "", f"cannot run: {error.strerror or error}"
    return completed.returncode, completed.stdout, completed.stderr


Decisions = list[tuple[InstalledFile, str]]


def removal_decisions(entries: Iterable[InstalledFile], force: bool) -> Decisions:
    """Each installed file, with what removing it does (see removal_decision)."""
    return [
        (entry, removal_decision(entry, sha256_file(Path(entry.path)), force)) for entry in entries
    ]


def remove_files(
    result: JobResult,
    decisions: Decisions,
    why: str = "",
    kept: str = "changed since install; rerun with --force to remove it",
) -> list[str]:
    """Remove the files decided so, each with a line `removed <path><why>`; each other kept is a
    problem `kept <path>: <kept>` (the secrets file is the operator's). Return the paths removed."""
    removed: list[str] = []
    for entry, decision in decisions:
        path = Path(entry.path)
        if decision == "remove":
            path.unlink()
            removed.append(entry.path)
            result.lines.append(f"removed {path}{why}")
        elif decision == "keep" and entry.role == "secrets":
            result.lines.append(f"kept {path}: it holds your secrets")
        elif decision == "keep":
            result.problems.append(f"kept {path}: {kept}")
    return removed


def make_dirs(folder: Path) -> list[Path]:
    """Create `folder` and its missing parents, each 0700; return the folders created."""
    created = missing_ancestors(folder)
    ensure_dir(folder)
    return created


def write_file(path: Path, content: str, mode: int) -> list[Path]:
    """Write `content` to `path` atomically with `mode`; return the folders created for it."""
    created = make_dirs(path.parent)
    atomic_write(path, content, root=path.parent)
    os.chmod(path, mode)
    return created


def remove_empty_dirs(folders: list[Path]) -> None:
    """Remove each folder (deepest first) if it is empty."""
    for folder in folders:
        with contextlib.suppress(OSError):  # gone already, or not empty
            folder.rmdir()
