"""`memwarden install {systemd,launchd,cron,auto,hooks,completion}`: schedule the jobs, or install
the hooks or the shell completion.

The timers run `memwarden -q <job>` at the intervals of [schedule]; `--dry-run` prints every file
and command instead. What was installed is recorded in `<storage_dir>/install/<target>.json`.
"""

from __future__ import annotations

import argparse

from memwarden.gateway_hooks.install import install_hooks
from memwarden.jobs.common import add_dry_run, add_verb
from memwarden.process.runtime import JobContext, JobResult
from memwarden.scheduling.completion import install_completion
from memwarden.scheduling.host import choose_target, gather_host_facts
from memwarden.scheduling.installer import install

TARGETS = {
    "systemd": "install systemd user units: a oneshot service and a timer per job (Linux)",
    "launchd": "install launchd agents in ~/Library/LaunchAgents, one per job (macOS)",
    "cron": "install a block of lines in your crontab, between marker comments",
    "auto": "install for this machine: launchd on macOS, systemd when it runs your session, "
    "else cron",
    "hooks": "install and enable the gateway hooks memory-index-inject and session-summary",
    "completion": "install shell completion for bash, zsh and fish, where each shell looks",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    targets = parser.add_subparsers(dest="target", metavar="<target>", required=True)
    for name, summary in TARGETS.items():
        add_dry_run(add_verb(targets, name, summary))


def run(context: JobContext, options: argparse.Namespace) -> JobResult:
    if options.target == "hooks":
        return install_hooks(context, options.dry_run)
    if options.target == "completion":
        return install_completion(context, options.dry_run)

    target = options.target
    if target == "auto":
        target = choose_target(gather_host_facts(context.env))
    return install(context, target, options.dry_run)
