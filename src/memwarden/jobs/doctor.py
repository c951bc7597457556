"""`memwarden doctor`: check the whole deployment and print the exact fix for each finding.

Gateway config (JSON5), compaction mode and memory flush, memwarden's hooks, the bootstrap caps,
the timers and the jobs' last successes, the permissions of private files, and whether the gateway
accepts memwarden's token. Exit 1 when something needs action.

People get the report on stdout; under `-q` or `--json`, each finding that needs action (an
error) or is a warning is one line on stderr instead, with its fix.
"""

from __future__ import annotations

import argparse
import logging
from dataclasses import asdict

from memwarden.doctor.gather import run_checks
from memwarden.process.errors import EXIT_FAILURES
from memwarden.process.runtime import JobContext, JobResult, Problem

PROBLEM_LEVELS = {"action": logging.ERROR, "warning": logging.WARNING}
# By severity, most urgent first: the order of the report.
LABELS = {"action": "[action] ", "warning": "[warning]", "info": "[info]   ", "ok": "[ok]     "}
SEVERITIES = list(LABELS)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--skip-gateway",
        action="store_true",
        help="do not connect to the gateway (offline check of files and settings only)",
    )
    parser.add_argument(
        "--problems-only",
        action="store_true",
        help="list only the findings that need action or are warnings",
    )


def run(context: JobContext, options: argparse.Namespace) -> JobResult:
    findings = run_checks(context, check_gateway=not options.skip_gateway)
    findings.sort(key=lambda finding: SEVERITIES.index(finding.severity))  # stable: check order
    tally = {name: sum(1 for f in findings if f.severity == name) for name in SEVERITIES}
    shown = [
        f for f in findings if not options.problems_only or f.severity in ("action", "warning")
    ]
    lines = [
        f"memwarden doctor: {tally['action']} need action, {tally['warning']} warning(s), "
        f"{tally['ok']} ok"
    ]
    for finding in shown:
        lines.append(f"{LABELS[finding.severity]} {finding.key}: {finding.message}")
        if finding.fix:
            lines.append(f"           fix: {finding.fix}")
    problems = []
    if context.verbosity < 0 or context.json_output:  # the report is not shown: say each one
        problems = [
            Problem(
                f"doctor {f.key}: {f.message}" + (f"; fix: {f.fix}" if f.fix else ""),
                PROBLEM_LEVELS[f.severity],
            )
            for f in findings
            if f.severity in PROBLEM_LEVELS
        ]
    return JobResult(
        "doctor",
        data={"findings": [asdict(finding) for finding in findings], "summary": tally},
        lines=lines,
        problems=problems,
        exit_code=EXIT_FAILURES if tally["action"] else 0,
    )
