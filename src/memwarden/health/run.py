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

import argparse
import logging
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memwarden.alerts.sinks import slack_sink
from memwarden.fs.templating import render
from memwarden.health import store
from memwarden.health.checks import (
    STATE_KEY,
    HealthInputs,
    bootstrap_budget,
    check_settings,
    compactions,
    config_drift,
    cron,
    deliveries,
    disk,
    gateway,
    is_disabled,
    jobs,
    memory_files,
    memory_rewrite,
    process,
    run_checks,
    state_dir,
    volume,
)
from memwarden.health.checks import context as context_pressure
from memwarden.health.checks.gateway import gateway_name
from memwarden.health.checks.memory_rewrite import grade_snapshots
from memwarden.health.feed import Identity, decide_feed
from memwarden.health.message import AlertSettings, plan_alerts
from memwarden.health.metrics.exposition import check_metrics_target, render_metrics, write_metrics
from memwarden.health.metrics.families import FAMILIES, MetricSources
from memwarden.health.model import Status, critical
from memwarden.history.plan import SnapshotRequest
from memwarden.history.snapshots import snapshot_agents
from memwarden.process.errors import (
    EXIT_FAILURES,
    EXIT_USAGE,
    GatewayConfigError,
    GatewayNotFound,
    LockHeld,
    MemwardenError,
    StateError,
)
from memwarden.process.runtime import JobContext, JobResult, Problem
from memwarden.store.state import UnavailableState

if TYPE_CHECKING:
    from memwarden.alerts import AlertRoutes
    from memwarden.health.feed import FeedAlert
    from memwarden.health.message import NewMessage
    from memwarden.health.model import CheckResult
    from memwarden.health.policy import AlertPlan
    from memwarden.health.store import Delivery
    from memwarden.store.state import StateDB

NOT_EVALUATED = "alerts: not evaluated (--no-alert)"

# Every check by its key (or key prefix), in the order people read them (gateway first).
CHECKS = {
    state_dir.KEY: state_dir.check_state_dir,
    "gateway": gateway.check_gateway,
    "gateway.process": process.check_process,
    "disk": disk.check_disk,
    "transcripts.volume": volume.check_volume,
    "memory.oversized": memory_files.check_memory_files,
    "memory.rewrite": memory_rewrite.check_memory_rewrite,
    compactions.KEY: compactions.check_compactions,
    bootstrap_budget.KEY: bootstrap_budget.check_bootstrap_budget,
    deliveries.KEY: deliveries.check_deliveries,
    "cron.errors": cron.check_cron,
    "jobs": jobs.check_jobs,
    "context.pressure": context_pressure.check_context,
    "config.drift": config_drift.check_config_drift,
}


def run_health(context: JobContext, options: argparse.Namespace) -> JobResult:
    """Run the checks, alert on what changed, write the metrics file; return the result.

    `options.no_alert` leaves alert state, Slack and Alertmanager alone; `options.dry_run`
    writes nothing."""
    config = context.config
    # A misconfigured destination stops the run before any check.
    routes = check_settings(config)
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
    results, broken_checks = run_checks(inputs, CHECKS, config.health.disabled_checks)
    results += [r for r in scanned if not is_disabled(r.key, config.health.disabled_checks)]
    if context.state_problem is not None:  # said once below, not once per check that reads it
        broken_checks = [p for p in broken_checks if context.state_problem.message not in p]
    result = JobResult(store.JOB)
    run = _HealthRun(context, options, inputs, result, routes)
    alerts = None
    if context.state_problem is None:
        try:
            alerts = run.alerts(results)
        except StateError as error:
            context.state_problem = error
    if context.state_problem is not None:
        results.append(critical(STATE_KEY, context.state_problem.message))
        alerts = run.alerts_without_state(results)
    first = []  # before the alerts' own problems: what is wrong, then what could not be sent
    if missing is not None:  # the exit-2 line: it names the state dir and the fix
        first.append(Problem(missing.message, logging.CRITICAL))
    if context.verbosity >= 0 and not context.json_output:  # timers run quiet: skip the table
        result.lines[:0] = _table(results)
        first += broken_checks
    else:
        first += _check_problems(results, skip={state_dir.KEY} if missing else set())
    result.problems[:0] = first
    metrics_written = run.metrics(results)
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


def _readable_state(context: JobContext) -> StateDB | UnavailableState:
    """Return the state DB, or, when it cannot be opened, a stand-in whose every use raises
    the reason (the checks that read it report that instead of failing the job)."""
    try:
        return context.state
    except StateError as error:
        context.state_problem = context.state_problem or error
        return UnavailableState(error)


@dataclass
class _HealthRun:
    """What the alerts and the metrics of one run need: the job, its options and inputs, the
    result they add their lines to, and where alerts go."""

    context: JobContext
    options: argparse.Namespace
    inputs: HealthInputs
    result: JobResult
    routes: AlertRoutes

    def alerts(self, results: list[CheckResult]) -> dict[str, Any]:
        """Decide, store and deliver this run's alerts on Slack, then tell Alertmanager (or say
        what would be done); return the alerts part of the JSON document. Raise StateError if
        memwarden's state fails."""
        state, now, destination = self.context.state, self.context.now(), self.routes.slack
        if self.options.no_alert:
            # Read first: a state that fails here says NOT_EVALUATED once, without its state.
            summary = {"notices": 0, "sent": 0, "undelivered": len(store.undelivered(state))}
            self.result.lines.append(NOT_EVALUATED)
            return {"summary": summary}
        settings = self._settings(send_resolved=self.context.config.slack.send_resolved)
        announced = destination is not None
        waiting = store.undelivered(state)
        keys = {key for row in waiting for key in row.keys}  # a message still waits about them
        plan, message = plan_alerts(
            store.load_states(state), results, now, settings, keys, announced
        )
        if self.options.dry_run:
            self.result.lines += self._dry_run_lines(plan, message, len(waiting))
            would_wait = len(waiting) + bool(message and destination)
            data = self._alerts_json(plan, message, [], would_wait)
        else:
            data = self._deliver(plan, message, now)
        if self.routes.alertmanager:
            data["alertmanager"] = forwarded = self._forward(results, plan)
            if "pending" in forwarded:
                data["summary"]["alertmanager_pending"] = forwarded["pending"]
        return data

    def _deliver(
        self, plan: AlertPlan, message: NewMessage | None, now: datetime
    ) -> dict[str, Any]:
        """Store the plan decided at `now`, queue its message when Slack is set up and send what
        waits there; return the alerts part of the JSON document."""
        state, run_id = self.context.state, self.context.run_id
        queued_message = message if self.routes.slack is not None else None
        queued = store.commit_plan(state, plan, queued_message, now, run_id)
        deliveries = []
        if self.routes.slack:
            make_sink = partial(slack_sink, self.context.config.slack)
            deliveries = store.deliver(state, make_sink, self.context.now, run_id)
        waiting = store.undelivered(state)
        pending = len(waiting)
        self.result.lines += self._alert_lines(plan, message, deliveries, pending)
        self.result.problems += _undelivered_problems(deliveries, waiting)
        data = self._alerts_json(plan, message, deliveries, pending)
        data["queued_id"] = queued
        return data

    def _forward(self, results: list[CheckResult], plan: AlertPlan) -> dict[str, Any]:
        """Tell Alertmanager about every open check and every undelivered resolution (or say
        what would be told); return the Alertmanager part of the JSON document."""
        feed = self._feed(results, plan, store.load_feed(self.context.state))
        forward_to, lines = self.routes.alertmanager, self.result.lines
        if self.options.dry_run:
            firing = sum(alert.firing for alert in feed)
            resolving = len(feed) - firing
            lines.append(
                f"alertmanager: would send {firing} firing, {resolving} resolved to {forward_to}"
            )
            would_send = {"firing": firing, "resolved": resolving}
            return {"destination": forward_to, "would_send": would_send}
        sent = self._send_feed(feed, self.context.state)
        if sent is None:
            lines.append(f"alertmanager: nothing open to send to {forward_to}")
            return {"destination": forward_to, "sent": None, "pending": 0}
        if sent.ok:
            lines.append(f"alertmanager: sent {sent.summary} to {sent.accepted_by}")
            self.result.problems += _missed_problems(sent)
        else:
            lines.append(f"alertmanager: NOT delivered ({sent.error})")
            self.result.problems.append(
                f"alerts not delivered to Alertmanager ({sent.summary}); kept for the next "
                f"run: {sent.error}"
            )
        return {"destination": forward_to, "sent": asdict(sent), "pending": sent.pending}

    def _feed(
        self, results: list[CheckResult], plan: AlertPlan, stored: dict[str, FeedAlert]
    ) -> list[FeedAlert]:
        """Return Alertmanager's feed after this run, from the stored one (see `decide_feed`); a
        held check is fed as it was stored."""
        bad = []
        for result in results:
            if (kept := plan.states.get(result.key)) is not None:
                if result.key in plan.held:
                    result = replace(result, status=kept.status, message=kept.message)
                bad.append((result, kept.since.timestamp()))
        identity = Identity(gateway_name(self.inputs), self.context.config.alertmanager.labels)
        return decide_feed(stored, bad, identity, self.context.now().timestamp())

    def _send_feed(self, feed: list[FeedAlert], state: StateDB | None) -> store.Forwarding | None:
        settings, clock = self.context.config.alertmanager, lambda: self.context.now().timestamp()
        return store.forward(
            state, feed, settings, clock, self.routes.lifetime, self.context.run_id
        )

    def _settings(self, send_resolved: bool) -> AlertSettings:
        slack = self.context.config.slack
        return AlertSettings(
            timedelta(minutes=slack.cooldown_minutes), send_resolved, slack.critical_mention
        )

    def metrics(self, results: list[CheckResult]) -> bool:
        """Write the metrics textfile when one is configured; return False if writing failed."""
        configured = self.context.config.health.metrics_file
        if not configured:
            return True
        path, problems = Path(configured).expanduser(), self.result.problems
        dry_run = self.options.dry_run
        text = None if dry_run else self._render_metrics(results)  # its errors are not the file's
        try:
            if text is None:
                check_metrics_target(path)
            else:
                write_metrics(path, text, int(self.context.config.health.metrics_file_mode, 8))
        except MemwardenError as error:
            problems.append(error.message)
            return False
        except OSError as error:
            problems.append(
                f"health.metrics_file: {path}: cannot write the metrics file: "
                f"{error.strerror or error}"
            )
            return False
        self.result.lines.append(f"metrics: {'would write' if dry_run else 'wrote'} {path}")
        return True

    def _render_metrics(self, results: list[CheckResult]) -> str:
        """Return the textfile's text; the families that could not be rendered are problems."""
        self.inputs.state = _readable_state(self.context)  # it may open by now
        sources = MetricSources(self.inputs, results, gateway_name(self.inputs))
        text, left_out = render_metrics(FAMILIES, sources)
        self.result.problems.extend(left_out)
        return text

    def alerts_without_state(self, results: list[CheckResult]) -> dict[str, Any]:
        """memwarden's state cannot be written (disk full, locked): alert all the same, straight
        through the sinks (Slack, Alertmanager), reusing the alert state when it can still be
        read, recording nothing; return the alerts part of the JSON document.

        Resolutions are left out (they could not be recorded, so every run would repeat them);
        the news is sent again on each run until the state can be written. Alertmanager gets
        every open check: it merges what it already has.
        """
        problem, dry_run = self.context.state_problem, self.options.dry_run
        self.result.problems.append(
            f"health cannot record its state ({problem.message}); alerts go out without their "
            "cooldown until it can"
        )
        if self.options.no_alert:
            self.result.lines.append(NOT_EVALUATED)
            return {"summary": {"notices": 0, "sent": 0, "undelivered": 0}}
        try:
            previous = store.load_states(self.context.state)
        except StateError:
            previous = {}
        settings = self._settings(send_resolved=False)
        plan, message = plan_alerts(previous, results, self.context.now(), settings)
        deliveries = []
        if message is not None and self.routes.slack and not dry_run:
            sent = slack_sink(self.context.config.slack).send(message.to_alert())
            deliveries.append(
                store.Delivery(None, message.summary, sent.ok, sent.error, attempts=1)
            )
        if dry_run:
            self.result.lines += self._dry_run_lines(plan, message, 0)
        else:
            self.result.lines += self._alert_lines(plan, message, deliveries, 0)
        self.result.problems += [
            f"alert not delivered ({d.summary}): {d.error}" for d in deliveries if not d.ok
        ]
        data = self._alerts_json(plan, message, deliveries, 0)
        data["recorded"] = False
        if self.routes.alertmanager and not dry_run:
            feed = self._feed(results, plan, {})
            sent = self._send_feed(feed, None) or store.Forwarding(
                0, 0, ok=True, error=None, pending=0
            )
            data["alertmanager"] = {
                "destination": self.routes.alertmanager,
                "ok": sent.ok,
                "error": sent.error,
                "firing": sent.firing,
            }
            if not sent.ok:
                self.result.problems.append(f"alerts not delivered to Alertmanager: {sent.error}")
            self.result.problems += _missed_problems(sent)
        return data

    def _alerts_json(
        self, plan: AlertPlan, message: NewMessage | None, deliveries: list[Delivery], pending: int
    ) -> dict[str, Any]:
        return {
            "summary": {
                "notices": len(plan.notices),
                "sent": sum(d.ok for d in deliveries),
                "undelivered": pending,
            },
            "destination": self.routes.slack,
            "notices": [notice.to_json() for notice in plan.notices],
            "message": message.text if message else None,
            "deliveries": [asdict(d) for d in deliveries],
            "undelivered": pending,
        }

    def _dry_run_lines(
        self, plan: AlertPlan, message: NewMessage | None, waiting: int
    ) -> list[str]:
        destination, forward_to = self.routes.slack, self.routes.alertmanager
        lines = []
        if message is None:
            lines.append("alerts: no news; would send nothing")
        elif destination:
            lines.append(f"alerts: would send to {destination}: {message.summary}")
        elif forward_to:
            lines.append(f"alerts: {message.summary} (no Slack destination)")
        else:
            lines.append(f"alerts: would show (no Slack destination set): {message.summary}")
        lines += [f"  would report {n.kind}: {n.key} ({n.status.value})" for n in plan.notices]
        if waiting and destination:
            lines.append(f"alerts: would retry {waiting} undelivered message(s)")
        return lines

    def _alert_lines(
        self, plan: AlertPlan, message: NewMessage | None, deliveries: list[Delivery], pending: int
    ) -> list[str]:
        destination, forward_to = self.routes.slack, self.routes.alertmanager
        if message is None:
            lines = ["alerts: no news"]
        elif destination or forward_to:
            lines = [f"alerts: {message.summary}"]
        else:
            lines = [
                f"alerts: {message.summary} (no Slack destination: set MEMWARDEN_SLACK_BOT_TOKEN "
                "and slack.channel, or MEMWARDEN_SLACK_WEBHOOK_URL)"
            ]
        lines += [f"  {n.kind}: {n.key} ({n.status.value})" for n in plan.notices]
        for delivery in deliveries:
            outcome = "sent" if delivery.ok else f"NOT delivered ({delivery.error})"
            lines.append(f"alerts: {outcome} to {destination}: {delivery.summary}")
        if pending:
            lines.append(f"alerts: {pending} message(s) waiting for delivery (retried next run)")
        return lines


def _missed_problems(sent: store.Forwarding) -> list[Problem]:
    """A warning naming the Alertmanagers that did not take what another member took."""
    if not sent.missed_by:  # only an accepted send has members that missed it
        return []
    line = (
        f"alerts not delivered to every Alertmanager ({sent.summary}); the open ones go again "
        f"next run: {sent.missed_by}"
    )
    return [Problem(line, logging.WARNING)]


def _undelivered_problems(deliveries: list[Delivery], waiting: list[store.OutboxRow]) -> list[str]:
    """Return one problem line per message still waiting after this run's deliveries: the
    error of the one that failed, and for those behind it (never tried: they keep their order)
    that they wait on it."""
    errors = {d.outbox_id: d.error for d in deliveries if not d.ok}
    failed = next((d.summary for d in deliveries if not d.ok), None)
    lines = []
    for row in waiting:
        if row.id in errors:
            reason = errors[row.id]
        elif failed is not None:
            reason = f"not tried, it waits behind the message that failed ({failed})"
        else:
            continue  # not tried this run for another reason: said by the pending count
        lines.append(f"alert not delivered ({row.summary}); kept for the next run: {reason}")
    return lines


def _table(results: list[CheckResult]) -> list[str]:
    width = min(max((len(r.key) for r in results), default=5), 32)
    return render("health/table.txt.j2", results=results, width=width).splitlines()
