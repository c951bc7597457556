"""A health run (`run_health`): check the gateway, the host and memwarden's own jobs; alert on
Slack and/or Alertmanager; write the metrics file. `memwarden.jobs.health` is the command.

The memory history snapshots every workspace first (health's scan), so the destructive-rewrite
check sees a rewrite made since the last job. Checks run next, each isolated from the others.
Then the alert policy compares them with the stored alert state; the news of the run (new,
worse, still failing, resolved) becomes one message, committed to the outbox together with the
new state, then delivered to Slack with every message still pending. Alertmanager gets every
open alert and every undelivered resolution, every run. A failed send never fails the checks:
it waits for the next run. Finally the Prometheus textfile is written. Exit 1 when a check is
critical or could not run; exit 2 when no gateway lives in the state dir (after alerting on it:
`gateway.state_dir` is critical).

People get the table on stdout; under `-q` (timers) or `--json`, each check that is not ok is
one line on stderr instead, logged at its own level (critical or warning).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memwarden.alerts import AlertMessage, alertmanager_destination, slack_destination
from memwarden.alerts.sinks import alertmanager_sink, slack_sink
from memwarden.fs.templating import render
from memwarden.health import alerting, feed_store, store
from memwarden.health.alert_labels import Identity
from memwarden.health.alerting import JOB, AlertSettings
from memwarden.health.checks import HealthInputs, is_disabled, run_checks, state_dir
from memwarden.health.checks.memory_rewrite import grade_snapshots
from memwarden.health.feed import alerts_to_send, decide_feed
from memwarden.health.identity import gateway_name
from memwarden.health.metrics.exposition import check_metrics_target, render_metrics, write_metrics
from memwarden.health.metrics.families import FAMILIES
from memwarden.health.metrics.sources import MetricSources
from memwarden.health.model import Status, critical
from memwarden.health.registry import registry
from memwarden.history.plan import SnapshotRequest
from memwarden.history.snapshots import snapshot_agents
from memwarden.process.errors import (
    EXIT_FAILURES,
    EXIT_USAGE,
    ConfigError,
    GatewayConfigError,
    GatewayNotFound,
    LockHeld,
    MemwardenError,
    StateError,
)
from memwarden.process.runtime import JobContext, JobResult, Problem
from memwarden.store.state import UnavailableState

if TYPE_CHECKING:
    from memwarden.health.alerting import Delivery
    from memwarden.health.model import CheckResult
    from memwarden.health.policy import AlertPlan
    from memwarden.health.store import NewMessage
    from memwarden.store.state import StateDB

STATE_KEY = "memwarden.state"  # the check a run adds when memwarden's state cannot be written


@dataclass(frozen=True)
class HealthOptions:
    """What the command line asks of a run: `no_alert` leaves alert state, Slack and
    Alertmanager alone; `dry_run` writes nothing."""

    no_alert: bool = False
    dry_run: bool = False


def run_health(context: JobContext, options: HealthOptions) -> JobResult:
    """Run the checks, alert on what changed, write the metrics file; return the result."""
    config = context.config
    # A misconfigured destination stops the run before any check.
    destination = slack_destination(config.slack)
    forward_to = alertmanager_destination(config.alertmanager)
    forwarding = (forward_to, alert_lifetime(config)) if forward_to else None
    missing = _missing_gateway(context)
    inputs = HealthInputs(
        config=config,
        deployment_loader=lambda: context.deployment,
        state=_readable_state(context),
        now=context.now(),
        env=dict(context.env),
        storage_dir=context.storage_dir,
    )
    scanned = [] if missing else _snapshot_workspaces(context, options.dry_run)
    results, broken_checks = run_checks(inputs, registry(), config.health.disabled_checks)
    results += [r for r in scanned if not is_disabled(r.key, config.health.disabled_checks)]
    if context.state_problem is not None:  # said once below, not once per check that reads it
        broken_checks = [p for p in broken_checks if context.state_problem.message not in p]
    result = JobResult(JOB)
    alerts, plan = None, None
    if context.state_problem is None:
        try:
            alerts, plan = _alerts(context, options, results, destination, forward_to, result)
            if forwarding and plan is not None:
                forwarded = _forward(context, options, inputs, results, plan, forwarding, result)
                alerts["alertmanager"] = forwarded
                if "pending" in forwarded:
                    alerts["summary"]["alertmanager_pending"] = forwarded["pending"]
        except StateError as error:
            context.state_problem = error
    if context.state_problem is not None:
        results.append(critical(STATE_KEY, context.state_problem.message))
        alerts = _alerts_without_state(
            context, options, inputs, results, destination, forwarding, result
        )
    first = []  # before the alerts' own problems: what is wrong, then what could not be sent
    if missing is not None:  # the exit-2 line: it names the state dir and the fix
        first.append(Problem(missing.message, logging.CRITICAL))
    if context.verbosity >= 0 and not context.json_output:  # timers run quiet: skip the table
        result.lines[:0] = _table(results)
        first += broken_checks
    else:
        first += _check_problems(results, skip={state_dir.KEY} if missing else set())
    result.problems[:0] = first
    metrics_written = _metrics(context, options, inputs, results, result)
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
    try:
        context.deployment  # noqa: B018 - discovered once here, then shared with the checks
    except GatewayNotFound as error:
        return error
    except GatewayConfigError:
        return None
    return None


def _check_problems(results: list[CheckResult], skip: set[str]) -> list[Problem]:
    """Return one problem line per check that is not ok, at its level (for -q and --json)."""
    levels = {Status.CRITICAL: logging.CRITICAL, Status.WARNING: logging.WARNING}
    return [
        Problem(f"health {r.key}: {r.message}", levels[r.status])
        for r in results
        if r.status.is_bad and r.key not in skip
    ]


def _snapshot_workspaces(context: JobContext, dry_run: bool) -> list[CheckResult]:
    """Health's scan: snapshot every agent's workspace (memory history, trigger `health`) before
    the checks, so a rewrite of a root file since the last job's snapshot is caught now; return
    a warning per agent whose workspace could not be snapshotted.

    Never waits on another run's memory lock: that run snapshots the agent itself. Not taken
    when memwarden's state cannot be written (the history lives beside it).
    """
    if dry_run or context.state_problem is not None or not context.config.history.enabled:
        return []

    try:
        agents = context.deployment.usable_agents()  # never a workspace memwarden refuses
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
    options: HealthOptions,
    results: list[CheckResult],
    destination: str | None,
    forward_to: str | None,
    result: JobResult,
) -> tuple[dict[str, Any], AlertPlan | None]:
    """Decide, store and deliver this run's Slack alerts (or say what would be done); return the
    alerts part of the JSON document and the plan (None under --no-alert)."""
    state = context.state
    if options.no_alert:
        result.lines.append("alerts: not evaluated (--no-alert)")
        summary = {"notices": 0, "sent": 0, "undelivered": len(store.undelivered(state))}
        return {"summary": summary}, None
    settings = _alert_settings(context, send_resolved=context.config.slack.send_resolved)
    now = context.now()
    announced = destination is not None
    plan, message = alerting.plan_alerts(state, results, now, settings, announced)
    waiting = store.undelivered(state)
    if options.dry_run:
        result.lines += _dry_run_lines(plan, message, destination, forward_to, len(waiting))
        would_wait = len(waiting) + bool(message and destination)
        return _alerts_json(plan, message, destination, [], would_wait), plan
    queued = alerting.commit_plan(state, plan, message, now, context.run_id, queue=announced)
    deliveries = []
    if destination:
        make_sink = partial(slack_sink, context.config.slack)
        deliveries = alerting.deliver(state, make_sink, context.now, context.run_id)
    pending = len(store.undelivered(state))
    result.lines += _alert_lines(plan, message, destination, forward_to, deliveries, pending)
    result.problems += [
        f"alert not delivered ({d.summary}); kept for the next run: {d.error}"
        for d in deliveries
        if not d.ok
    ]
    data = _alerts_json(plan, message, destination, deliveries, pending)
    data["queued_id"] = queued
    return data, plan


def _forward(
    context: JobContext,
    options: HealthOptions,
    inputs: HealthInputs,
    results: list[CheckResult],
    plan: AlertPlan,
    destination: tuple[str, timedelta],
    result: JobResult,
) -> dict[str, Any]:
    """Tell Alertmanager (`destination`: its description, the lifetime of an open alert) about
    every open check and every undelivered resolution (or say what would be told); return the
    Alertmanager part of the JSON document."""
    config = context.config
    forward_to, lifetime = destination
    bad = [(r, plan.states[r.key].since.timestamp()) for r in results if r.key in plan.states]
    identity = Identity(gateway_name(inputs), config.alertmanager.labels)
    now = context.now().timestamp()
    feed = decide_feed(feed_store.load_feed(context.state), bad, identity, now)
    firing = sum(alert.firing for alert in feed)
    resolving = sum(not alert.firing for alert in feed)
    if options.dry_run:
        result.lines.append(
            f"alertmanager: would send {firing} firing, {resolving} resolved to {forward_to}"
        )
        return {"destination": forward_to, "would_send": {"firing": firing, "resolved": resolving}}
    sent = feed_store.forward(
        context.state,
        feed,
        partial(alertmanager_sink, config.alertmanager),
        lambda: context.now().timestamp(),
        lifetime,
        config.alertmanager.generator_url.strip(),
        context.run_id,
    )
    if sent is None:
        result.lines.append(f"alertmanager: nothing open to send to {forward_to}")
        return {"destination": forward_to, "sent": None, "pending": 0}
    if sent.ok:
        result.lines.append(f"alertmanager: sent {sent.summary} to {sent.accepted_by}")
    else:
        result.lines.append(f"alertmanager: NOT delivered ({sent.error})")
        result.problems.append(
            f"alerts not delivered to Alertmanager ({sent.summary}); kept for the next run: "
            f"{sent.error}"
        )
    return {"destination": forward_to, "sent": sent.to_json(), "pending": sent.pending}


def _alert_settings(context: JobContext, send_resolved: bool) -> AlertSettings:
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
    options: HealthOptions,
    inputs: HealthInputs,
    results: list[CheckResult],
    destination: str | None,
    forwarding: tuple[str, timedelta] | None,
    result: JobResult,
) -> dict[str, Any]:
    """memwarden's state cannot be written (disk full, locked): alert all the same, straight
    through the sinks (Slack, Alertmanager), reusing the alert state when it can still be
    read; return the alerts part of the JSON document."""
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
    sending = destination and not options.dry_run
    make_sink = partial(slack_sink, context.config.slack) if sending else None
    plan, message, delivery = alerting.alert_without_state(
        previous, results, context.now(), settings, make_sink
    )
    deliveries = [delivery] if delivery else []
    forward_to = forwarding[0] if forwarding else None
    if options.dry_run:
        result.lines += _dry_run_lines(plan, message, destination, forward_to, 0)
    else:
        result.lines += _alert_lines(plan, message, destination, forward_to, deliveries, 0)
    result.problems += [
        f"alert not delivered ({d.summary}): {d.error}" for d in deliveries if not d.ok
    ]
    data = _alerts_json(plan, message, destination, deliveries, 0)
    data["recorded"] = False
    if forwarding and not options.dry_run:
        data["alertmanager"] = _forward_without_state(context, inputs, results, plan, forwarding)
        if not data["alertmanager"]["ok"]:
            result.problems.append(
                f"alerts not delivered to Alertmanager: {data['alertmanager']['error']}"
            )
    return data


def _forward_without_state(
    context: JobContext,
    inputs: HealthInputs,
    results: list[CheckResult],
    plan: AlertPlan,
    forwarding: tuple[str, timedelta],
) -> dict[str, Any]:
    """Post every open check to Alertmanager, recording nothing (its state cannot be written):
    Alertmanager merges what it already has, so re-sending every run is what it expects."""
    config = context.config
    forward_to, lifetime = forwarding
    bad = [(r, plan.states[r.key].since.timestamp()) for r in results if r.key in plan.states]
    identity = Identity(gateway_name(inputs), config.alertmanager.labels)
    now = context.now().timestamp()
    feed = decide_feed({}, bad, identity, now)
    alerts = alerts_to_send(feed, now, lifetime, config.alertmanager.generator_url.strip())
    if not alerts:
        return {"destination": forward_to, "ok": True, "error": None, "firing": 0}
    sent = alertmanager_sink(config.alertmanager).send(
        AlertMessage(f"memwarden: {len(alerts)} firing", alerts=alerts)
    )
    return {"destination": forward_to, "ok": sent.ok, "error": sent.error, "firing": len(alerts)}


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


def alert_lifetime(config: Any) -> timedelta:
    """Given the settings, return how long an open alert lives in Alertmanager without being
    sent again: `alertmanager.resolve_timeout_minutes`, else three health intervals. Raise
    ConfigError if it is not longer than the health interval (open alerts would flap)."""
    interval = config.schedule.health_minutes
    minutes = config.alertmanager.resolve_timeout_minutes or 3 * interval
    if minutes <= interval:
        raise ConfigError(
            [
                f"alertmanager.resolve_timeout_minutes: expected more than schedule.health_minutes "
                f"({interval}), got {minutes}: open alerts would expire between two runs"
            ]
        )
    return timedelta(minutes=minutes)


def _dry_run_lines(
    plan: AlertPlan,
    message: NewMessage | None,
    destination: str | None,
    forward_to: str | None,
    waiting: int,
) -> list[str]:
    lines = []
    if message is None:
        lines.append("alerts: no news; would send nothing")
    elif destination:
        lines.append(f"alerts: would send to {destination}: {message.summary}")
    elif forward_to:
        lines.append(f"alerts: {message.summary} (no Slack destination)")
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
    forward_to: str | None,
    deliveries: list[Delivery],
    pending: int,
) -> list[str]:
    if message is None:
        lines = ["alerts: no news"]
    elif destination or forward_to:
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
    options: HealthOptions,
    inputs: HealthInputs,
    results: list[CheckResult],
    result: JobResult,
) -> bool:
    """Write the metrics textfile when one is configured; return False if writing failed."""
    configured = context.config.health.metrics_file
    if not configured:
        return True
    path = Path(configured).expanduser()
    if options.dry_run:
        try:
            check_metrics_target(path)
        except MemwardenError as error:
            result.problems.append(error.message)
            return False
        result.lines.append(f"metrics: would write {path}")
        return True
    sources = MetricSources(
        gateway=gateway_name(inputs),
        now=inputs.now,
        results=results,
        config=context.config,
        state=_readable_state(context),
        deployment_loader=lambda: inputs.deployment,
        storage_dir=inputs.storage_dir,
    )
    text, problems = render_metrics(FAMILIES, sources)
    result.problems += problems
    try:
        write_metrics(path, text, int(context.config.health.metrics_file_mode, 8))
    except MemwardenError as error:
        result.problems.append(error.message)
        return False
    except OSError as error:
        result.problems.append(
            f"health.metrics_file: {path}: cannot write the metrics file: {error.strerror or error}"
        )
        return False
    result.lines.append(f"metrics: wrote {path}")
    return True


def _table(results: list[CheckResult]) -> list[str]:
    width = min(max((len(r.key) for r in results), default=5), 32)
    return render("health/table.txt.j2", results=results, width=width).splitlines()
