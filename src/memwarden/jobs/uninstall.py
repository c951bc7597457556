"""`memwarden uninstall {systemd,launchd,cron,auto,hooks,completion}`: remove what install
installed.

Only what the install manifest lists is removed; files changed since install are kept unless
`--force` (a secrets file you filled in is always kept).
"""

from __future__ import annotations

import argparse

from memwarden.gateway_hooks.install import uninstall_hooks
from memwarden.jobs.common import add_dry_run, add_verb
from memwarden.process.runtime import JobContext, JobResult
from memwarden.scheduling.completion import uninstall_completion
from memwarden.scheduling.uninstaller import installed_targets, uninstall

TARGETS = {
    "systemd": "stop and remove the systemd user units",
    "launchd": "unload and remove the launchd agents",
    "cron": "remove memwarden's block from your crontab",
    "auto": "remove the timers of every scheduler that has an install manifest (not the hooks)",
    "hooks": "disable and remove the gateway hooks memwarden installed",
    "completion": "remove the shell completion files memwarden installed",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    targets = parser.add_subparsers(dest="target", metavar="<target>", required=True)
    for name, summary in TARGETS.items():
        sub = add_verb(targets, name, summary)
        add_dry_run(sub)
        if name != "completion":
            help_text = (
                "also remove hook files changed since install (never another file)"
                if name == "hooks"
                else "also remove unit files changed since install"
            )
            sub.add_argument("--force", action="store_true", help=help_text)


def run(context: JobContext, options: argparse.Namespace) -> JobResult:
    if options.target == "hooks":
        return uninstall_hooks(context, options.dry_run, options.force)
    if options.target == "completion":
        return uninstall_completion(context, options.dry_run)

    if options.target != "auto":
        return uninstall(context, options.target, options.dry_run, options.force)
    targets = installed_targets(context.storage_dir)
    if not targets:
        return JobResult(
            "uninstall", {"targets": []}, ["nothing to uninstall: no timers installed"]
        )
    results = [uninstall(context, target, options.dry_run, options.force) for target in targets]
    return JobResult(
        "uninstall",
        data={"targets": [result.data for result in results]},
        lines=[line for result in results for line in result.lines],
        problems=[problem for result in results for problem in result.problems],
        exit_code=max(result.exit_code for result in results),
    )
