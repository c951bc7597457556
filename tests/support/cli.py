"""Run the memwarden CLI from tests: in-process (fast) or as a real subprocess."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass

import orjson
import pytest

# What memwarden puts before each stderr line: a time stamp and the level, or `<N>` under journald.
LOG_PREFIX = re.compile(r"^(?:<\d>|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d [A-Z]+ )")


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str

    def json(self):
        return orjson.loads(self.stdout)

    @property
    def messages(self) -> list[str]:
        """The stderr lines without their log prefix: `memwarden: <text>` each."""
        return [LOG_PREFIX.sub("", line) for line in self.stderr.splitlines()]


def run_cli(capsys: pytest.CaptureFixture, *arguments: str) -> CliResult:
    """Run `memwarden arguments...` in this process and capture what it printed."""
    from memwarden.cli import main

    capsys.readouterr()
    exit_code = main([str(argument) for argument in arguments])
    captured = capsys.readouterr()
    return CliResult(exit_code, captured.out, captured.err)


def run_subprocess(
    *arguments: str, env: dict | None = None, timeout: float = 60, cwd: str | None = None
) -> CliResult:
    """Run `python -m memwarden arguments...` as a child process with the test's environment
    (in folder `cwd`, default this one)."""
    completed = subprocess.run(
        [sys.executable, "-m", "memwarden", *map(str, arguments)],
        capture_output=True,
        text=True,
        env=env if env is not None else dict(os.environ),
        timeout=timeout,
        check=False,
        cwd=cwd,
    )
    return CliResult(completed.returncode, completed.stdout, completed.stderr)
