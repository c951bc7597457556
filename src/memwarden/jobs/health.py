"""`memwarden health`: check the gateway, the host and memwarden's own jobs; alert on Slack.

Checks run first, each isolated from the others. Then the alert policy compares them with the
stored alert state; the news of the run (new, worse, still failing, resolved) becomes one message,
committed to the outbox together with the new state, then delivered with every message still
pending. A failed send never fails the checks: the message waits for the next run. Finally the
Prometheus textfile is written. Exit 1 when a check is critical or could not run; exit 2 when
no gateway lives in the state dir (after alerting on it: `gateway.state_dir` is critical).

People get the table on stdout; under `-q` (timers) or `--json`, each check that is not ok is
one line on stderr instead, logged at its own level (critical or warning).
"""

from __future__ import annotations

import argparse
import logging
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memwarden.errors import EXIT_FAILURES, EXIT_USAGE, GatewayNotFound, StateError
from memwarden.health.model import critical
from memwarden.jobs.common import add_dry_run
from memwarden.runtime import JobContext, JobResult, Problem
from memwarden.state import UnavailableState

if TYPE_CHECKING:
    from memwarden.health.alerting import AlertSettings, Delivery
    from memwarden.health.model import CheckResult
    from memwarden.health.policy import AlertPlan
    from memwarden.health.store import NewMessage
    from memwarden.state import StateDB

JOB = "health"
STATE_DIR_KEY = "gateway.state_dir"
STATE_KEY = "memwarden.state"  # the check a run adds when memwarden's state cannot be written


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-alert",
        action="store_true",
        help="run the checks (and write the metrics file) without touching alert state or Slack",
    )
    add_dry_run(parser)


def run(context: JobContext, options: argparse.Namespace) -> JobResult:
    from memwarden.alerts import slack_destination
    from memwarden.health.checks import HealthInputs, registry, run_checks
    from memwarden.health.model import Status

    config = context.config
    destination = slack_destination(config.slack)  # a Slack misconfiguration stops the run first
    missing = _missing_gateway(context)
    inputs = HealthInputs(
        config=config,
        deployment_loader=lambda: context.deployment,
        state=_readable_state(context),
        now=context.now(),
        env=dict(context.env),
        storage_dir=context.storage_dir,
    )
    results, broken_checks = run_checks(inputs, registry(), config.health.disabled_checks)
    if context.state_problem is not None:  # said once below, not once per check that reads it
        broken_checks = [p for p in broken_checks if context.state_problem.message not in p]
    result = JobResult(JOB)
    alerts = None
    if context.state_problem is None:
        try:
            alerts = _alerts(context, options, results, destination, result)
        except StateError as error:
            context.state_problem = error
    if context.state_problem is not None:
        results.append(critical(STATE_KEY, context.state_problem.message))
        alerts = _alerts_without_state(context, options, results, destination, result)
    first = []  # before the alerts' own problems: what is wrong, then what could not be sent
    if missing is not None:  # the exit-2 line: it names the state dir and the fix
        first.append(Problem(missing.message, logging.CRITICAL))
    if context.verbosity >= 0 and not context.json_output:  # timers run quiet: skip the table
        result.lines[:0] = _table(results)
        first += broken_checks
    else:
        first += _check_problems(results, skip={STATE_DIR_KEY} if missing else set())
    result.problems[:0] = first
    metrics_written = _metrics(context, options, results, result)
    any_critical = any(r.status is Status.CRITICAL for r in results)
    failed = any_critical or broken_checks or not metrics_written
    result.exit_code = EXIT_USAGE if missing else EXIT_FAILURES if failed else 0
    counts = {status.value: sum(r.status is status for r in results) for status in Status}
    result.data = {
        "summary": counts | alerts.pop("summary"),
        "checks": [r.to_json() for r in results],
        "alerts": alerts,
    }
    return result


def _missing_gateway(context: JobContext) -> GatewayNotFound | None:
    """Return the error saying no gateway lives in the state dir, or None when one does (an
    unreadable gateway config is left to the checks, which report it)."""
    from memwarden.errors import GatewayConfigError

    try:
        context.deployment  # noqa: B018 - discovered once here, then shared with the checks
    except GatewayNotFound as error:
        return error
    except GatewayConfigError:
        return None
    return None


def _check_problems(results: list[CheckResult], skip: set[str]) -> list[Problem]:
    """Return one problem line per check that is not ok, at its level (for -q and --json)."""
    from memwarden.health.model import Status

    levels = {Status.CRITICAL: logging.CRITICAL, Status.WARNING: logging.WARNING}
    return [
        Problem(f"health {r.key}: {r.message}", levels[r.status])
        for r in results
        if r.status.is_bad and r.key not in skip
    ]


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
    settings = _alert_settings(context, send_resolved=context.config.slack.send_resolved)
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


def _alert_settings(context: JobContext, send_resolved: bool) -> AlertSettings:
    from memwarden.health.alerting import AlertSettings

    slack = context.config.slack
    return AlertSettings(
        cooldown=timedelta(minutes=slack.cooldown_minutes),
        send_resolved=send_resolved,
        mention=slack.critical_mention,
    )


def _readable_state(context: JobContext) -> StateDB | UnavailableState:
    """Return the state DB, or, when it cannot be opened, a stand-in whose every use raises
    the reason (the checks that read it report that instead of failing the job)."""
    try:
        return context.state
    except StateError as error:
        context.state_problem = context.state_problem or error
        return UnavailableState(error)


def _alerts_without_state(
    context: JobContext,
    options: argparse.Namespace,
    results: list[CheckResult],
    destination: str | None,
    result: JobResult,
) -> dict[str, Any]:
    """memwarden's state cannot be written (disk full, locked): alert all the same, straight
    through the sink, reusing the alert state when it can still be read; return the alerts
    part of the JSON document."""
    from memwarden.alerts import slack_sink
    from memwarden.health import alerting, store

    problem = context.state_problem
    result.problems.append(
        f"health cannot record its state ({problem.message}); alerts go out without their "
        "cooldown until it can"
    )
    if options.no_alert:
        result.lines.append("alerts: not evaluated (--no-alert)")
        return {"summary": {"notices": 0, "sent": 0, "undelivered": 0}}
    try:
        previous = store.load_states(context.state)
    except StateError:
        previous = {}
    settings = _alert_settings(context, send_resolved=False)
    make_sink = partial(slack_sink, context.config.slack) if destination else None
    if options.dry_run:
        make_sink = None
    plan, message, delivery = alerting.alert_without_state(
        previous, results, context.now(), settings, make_sink
    )
    deliveries = [delivery] if delivery else []
    if options.dry_run:
        result.lines += _dry_run_lines(plan, message, destination, 0)
    else:
        result.lines += _alert_lines(plan, message, destination, deliveries, 0)
    result.problems += [
        f"alert not delivered ({d.summary}): {d.error}" for d in deliveries if not d.ok
    ]
    data = _alerts_json(plan, message, destination, deliveries, 0)
    data["recorded"] = False
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
    state = _readable_state(context)
    last_success: dict[str, float | None] = {}
    try:
        for spec in JOBS:
            if spec.records_run:
                run = state.last_success(spec.name)
                last_success[spec.name] = run.finished_at if run else None
        open_alerts, undelivered = len(store.load_states(state)), len(store.undelivered(state))
    except StateError:  # written all the same: the checks are what a scraper alerts on
        last_success, open_alerts, undelivered = {}, 0, 0
    text = metrics.render_metrics(results, last_success, open_alerts, undelivered, context.now())
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
