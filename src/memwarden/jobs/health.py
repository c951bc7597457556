"""`memwarden health`: check the gateway, the host and memwarden's own jobs; alert on Slack.

The memory history snapshots every workspace first (health's scan), so the destructive-rewrite
check sees a rewrite made since the last job. Checks run next, each isolated from the others.
Then the alert policy compares them with the stored alert state; the news of the run (new,
worse, still failing, resolved) becomes one message, committed to the outbox together with the
new state, then delivered with every message still pending. A failed send never fails the
checks: the message waits for the next run. Finally the Prometheus textfile is written. Exit 1
when a check is critical or could not run.
"""

from __future__ import annotations

import argparse
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memwarden.jobs.common import add_dry_run
from memwarden.runtime import JobContext, JobResult

if TYPE_CHECKING:
    from memwarden.health.alerting import Delivery
    from memwarden.health.model import CheckResult
    from memwarden.health.policy import AlertPlan
    from memwarden.health.store import NewMessage

JOB = "health"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-alert",
        action="store_true",
        help="run the checks (and write the metrics file) without touching alert state or Slack",
    )
    add_dry_run(parser)


def run(context: JobContext, options: argparse.Namespace) -> JobResult:
    from memwarden.alerts import slack_destination
    from memwarden.health.checks import HealthInputs, is_disabled, registry, run_checks
    from memwarden.health.model import Status

    config = context.config
    destination = slack_destination(config.slack)  # a Slack misconfiguration stops the run first
    inputs = HealthInputs(
        config=config,
        deployment_loader=lambda: context.deployment,
        state=context.state,
        now=context.now(),
        env=dict(context.env),
    )
    scanned = _snapshot_workspaces(context, options.dry_run)
    results, broken_checks = run_checks(inputs, registry(), config.health.disabled_checks)
    results += [r for r in scanned if not is_disabled(r.key, config.health.disabled_checks)]
    result = JobResult(JOB, problems=list(broken_checks))
    if context.verbosity >= 0 and not context.json_output:  # timers run quiet: skip the table
        result.lines += _table(results)
    alerts = _alerts(context, options, results, destination, result)
    metrics_written = _metrics(context, options, results, result)
    critical = any(r.status is Status.CRITICAL for r in results)
    result.exit_code = 1 if critical or broken_checks or not metrics_written else 0
    counts = {status.value: sum(r.status is status for r in results) for status in Status}
    result.data = {
        "summary": counts | alerts.pop("summary"),
        "checks": [r.to_json() for r in results],
        "alerts": alerts,
    }
    return result


def _snapshot_workspaces(context: JobContext, dry_run: bool) -> list[CheckResult]:
    """Health's scan: snapshot every agent's workspace (memory history, trigger `health`) before
    the checks, so a rewrite of a root file since the last job's snapshot is caught now; return
    a warning per agent whose workspace could not be snapshotted.

    Never waits on another run's memory lock: that run snapshots the agent itself.
    """
    if dry_run or not context.config.history.enabled:
        return []
    from memwarden.errors import LockHeld, MemwardenError
    from memwarden.health.checks.memory_rewrite import grade_snapshots
    from memwarden.history import SnapshotRequest, snapshot_agents

    try:
        agents = context.deployment.agents
    except MemwardenError:
        return []  # the checks that need the gateway config report it
    requests = [SnapshotRequest(agent, "health") for agent in agents]
    results = snapshot_agents(context, requests, lock_wait=0)
    return grade_snapshots(
        [
            (result.agent_id, result.error.message)
            for result in results
            if result.error is not None and not isinstance(result.error, LockHeld)
        ]
    )


def _alerts(
    context: JobContext,
    options: argparse.Namespace,
    results: list[CheckResult],
    destination: str | None,
    result: JobResult,
) -> dict[str, Any]:
    """Decide, store and deliver this run's alerts (or say what would be done); return the
    alerts part of the JSON document."""
    from memwarden.alerts import slack_sink
    from memwarden.health import alerting, store

    state = context.state
    if options.no_alert:
        result.lines.append("alerts: not evaluated (--no-alert)")
        return {"summary": {"notices": 0, "sent": 0, "undelivered": len(store.undelivered(state))}}
    settings = alerting.AlertSettings(
        cooldown=timedelta(minutes=context.config.slack.cooldown_minutes),
        send_resolved=context.config.slack.send_resolved,
        mention=context.config.slack.critical_mention,
    )
    now = context.now()
    plan, message = alerting.plan_alerts(state, results, now, settings)
    waiting = store.undelivered(state)
    if options.dry_run:
        result.lines += _dry_run_lines(plan, message, destination, len(waiting))
        would_wait = len(waiting) + bool(message and destination)
        return _alerts_json(plan, message, destination, [], would_wait)
    queue = destination is not None
    queued = alerting.commit_plan(state, plan, message, now, context.run_id, queue=queue)
    deliveries = []
    if destination:
        make_sink = partial(slack_sink, context.config.slack)
        deliveries = alerting.deliver(state, make_sink, context.now, context.run_id)
    pending = len(store.undelivered(state))
    result.lines += _alert_lines(plan, message, destination, deliveries, pending)
    result.problems += [
        f"alert not delivered ({d.summary}); kept for the next run: {d.error}"
        for d in deliveries
        if not d.ok
    ]
    data = _alerts_json(plan, message, destination, deliveries, pending)
    data["queued_id"] = queued
    return data


def _alerts_json(
    plan: AlertPlan,
    message: NewMessage | None,
    destination: str | None,
    deliveries: list[Delivery],
    pending: int,
) -> dict[str, Any]:
    return {
        "summary": {
            "notices": len(plan.notices),
            "sent": sum(d.ok for d in deliveries),
            "undelivered": pending,
        },
        "destination": destination,
        "notices": [notice.to_json() for notice in plan.notices],
        "message": message.text if message else None,
        "deliveries": [d.to_json() for d in deliveries],
        "undelivered": pending,
    }


def _dry_run_lines(
    plan: AlertPlan, message: NewMessage | None, destination: str | None, waiting: int
) -> list[str]:
    lines = []
    if message is None:
        lines.append("alerts: no news; would send nothing")
    elif destination:
        lines.append(f"alerts: would send to {destination}: {message.summary}")
    else:
        lines.append(f"alerts: would show (no Slack destination set): {message.summary}")
    if plan.notices:
        lines += [f"  would report {n.kind}: {n.key} ({n.status.value})" for n in plan.notices]
    if waiting and destination:
        lines.append(f"alerts: would retry {waiting} undelivered message(s)")
    return lines


def _alert_lines(
    plan: AlertPlan,
    message: NewMessage | None,
    destination: str | None,
    deliveries: list[Delivery],
    pending: int,
) -> list[str]:
    if message is None:
        lines = ["alerts: no news"]
    elif destination:
        lines = [f"alerts: {message.summary}"]
    else:
        lines = [
            f"alerts: {message.summary} (no Slack destination: set MEMWARDEN_SLACK_BOT_TOKEN and "
            "slack.channel, or MEMWARDEN_SLACK_WEBHOOK_URL)"
        ]
    lines += [f"  {n.kind}: {n.key} ({n.status.value})" for n in plan.notices]
    for delivery in deliveries:
        outcome = "sent" if delivery.ok else f"NOT delivered ({delivery.error})"
        lines.append(f"alerts: {outcome} to {destination}: {delivery.summary}")
    if pending:
        lines.append(f"alerts: {pending} message(s) waiting for delivery (retried next run)")
    return lines


def _metrics(
    context: JobContext,
    options: argparse.Namespace,
    results: list[CheckResult],
    result: JobResult,
) -> bool:
    """Write the metrics textfile when one is configured; return False if writing failed."""
    from memwarden.health import metrics, store
    from memwarden.jobs import JOBS

    configured = context.config.health.metrics_file
    if not configured:
        return True
    path = Path(configured).expanduser()
    if options.dry_run:
        result.lines.append(f"metrics: would write {path}")
        return True
    state = context.state
    last_success = {}
    for spec in JOBS:
        if spec.records_run:
            run = state.last_success(spec.name)
            last_success[spec.name] = run.finished_at if run else None
    text = metrics.render_metrics(
        results,
        last_success,
        len(store.load_states(state)),
        len(store.undelivered(state)),
        context.now(),
    )
    try:
        metrics.write_metrics(path, text, int(context.config.health.metrics_file_mode, 8))
    except OSError as error:
        result.problems.append(f"{path}: cannot write the metrics file: {error.strerror or error}")
        return False
    result.lines.append(f"metrics: wrote {path}")
    return True


def _table(results: list[CheckResult]) -> list[str]:
    from memwarden.templating import render

    width = min(max((len(r.key) for r in results), default=5), 32)
    return render("health/table.txt.j2", results=results, width=width).splitlines()
