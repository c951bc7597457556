"""`memwarden maintain`: daily retention so memwarden and the gateway keep their disk use bounded.

Steps, each isolated from the others: compress and expire old file-era transcripts, rotate
memwarden's logs, prune its state database, back up the gateway config (with a drift guard),
archive old daily logs (off by default), archive the handoffs of idle conversations, prune
memory-history snapshots. `--dry-run` changes nothing and says what each step would do.
"""

from __future__ import annotations

import argparse
import sqlite3

from memwarden.jobs.common import add_agent_filter, add_dry_run, select_agents
from memwarden.maintenance.archive_step import archive_step
from memwarden.maintenance.config_step import config_step
from memwarden.maintenance.handoff_step import handoff_step
from memwarden.maintenance.housekeeping import history_step, logs_step, state_step
from memwarden.maintenance.report import StepReport
from memwarden.maintenance.transcript_step import transcripts_step
from memwarden.process.errors import EXIT_FAILURES, GatewayNotFound, MemwardenError
from memwarden.process.runtime import JobContext, JobResult


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_dry_run(parser)
    add_agent_filter(parser)


def run(context: JobContext, options: argparse.Namespace) -> JobResult:
    dry_run = options.dry_run
    reports: list[StepReport] = []
    try:
        agents = select_agents(context.deployment, options.agent)
    except MemwardenError as error:
        if options.agent or isinstance(error, GatewayNotFound):
            raise
        agents = []
        reports.append(
            StepReport("agents", problems=[f"agents skipped: {error.message}"], failures=1)
        )
    steps = [
        ("transcripts", lambda: transcripts_step(context, agents, dry_run)),
        ("logs", lambda: logs_step(context, dry_run)),
        ("state", lambda: state_step(context, dry_run)),
        ("config", lambda: config_step(context, dry_run)),
        ("daily_logs", lambda: archive_step(context, agents, dry_run)),
        ("handoffs", lambda: handoff_step(context, agents, dry_run)),
        ("history", lambda: history_step(context, dry_run)),
    ]
    for name, step in steps:
        try:
            report = step()
        except (MemwardenError, OSError, sqlite3.Error) as error:
            report = StepReport(name, problems=[f"{name}: {error}"], failures=1)
        if report is not None:
            reports.append(report)
    return _result(reports, dry_run)


def _result(reports, dry_run: bool) -> JobResult:
    failures = sum(report.failures for report in reports)
    lines = ["maintain (dry run): nothing is changed"] if dry_run else []
    for report in reports:
        lines += report.lines
    summary = {report.name: report.data for report in reports if report.data}
    summary["failures"] = failures
    return JobResult(
        "maintain",
        data={"dry_run": dry_run, "summary": summary},  # `summary` is also the run's record
        lines=lines,
        problems=[problem for report in reports for problem in report.problems],
        exit_code=EXIT_FAILURES if failures else 0,
    )
