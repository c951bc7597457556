"""`memwarden completion {bash,zsh,fish}`: print the shell completion script.

`memwarden install completion` writes it where each shell looks; this command is for the
operator who keeps completion scripts elsewhere.
"""

from __future__ import annotations

import argparse

from memwarden.process.runtime import JobContext, JobResult
from memwarden.scheduling.completion import SHELLS, script


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shell", choices=SHELLS, help="the shell to print the script for")


def run(context: JobContext, options: argparse.Namespace) -> JobResult:
    text = script(options.shell, context.parser())
    return JobResult("completion", data={"shell": options.shell, "script": text}, lines=[text])
