"""`memwarden status`: the last run of each job with its outcome and age, the open alerts, the
alert messages waiting for delivery (Slack messages, Alertmanager alerts), and the last delivery
of each conversation's handoff the bootstrap hook recorded. Read-only."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta
from typing import Any

from memwarden.alerts import alertmanager_destination
from memwarden.health import store
from memwarden.health.deliveries import FOLDER, read_receipts
from memwarden.health.message import describe_open
from memwarden.health.model import duration
from memwarden.jobs import JOBS
from memwarden.process.runtime import JobContext, JobResult
from memwarden.store.state import Run

OUTCOMES = {0: "ok", 1: "failed", 2: "config error"}
QUIET = ("ok", "never run", "exit 75")  # what `-q status` does not mention


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """status has no options of its own; its description is its summary, as for every command."""


def run(context: JobContext, options: argparse.Namespace) -> JobResult:
    state = context.state
    now = context.now()
    jobs = [
        _job_json(spec.name, state.last_runs(spec.name, 1), state.last_success(spec.name), now)
        for spec in JOBS
        if spec.records_run
    ]
    open_alerts = list(store.load_states(state).values())
    waiting = store.undelivered(state)
    forwarding = alertmanager_destination(context.config.alertmanager) is not None
    unaccepted = store.feed_pending(state) if forwarding else []
    job_lines = [_job_line(job) for job in jobs]
    alert_lines = describe_open(open_alerts, now)
    send_lines = [_outbox_line(row, now) for row in waiting]
    feed_lines = [_feed_line(alert) for alert in unaccepted]
    receipts = [r for r in read_receipts(context.storage_dir / FOLDER) if r.last is not None]
    result = JobResult("status")
    result.lines = [f"storage: {context.storage.describe()}", "jobs:", *job_lines]
    result.lines.append("open alerts:" if open_alerts else "open alerts: none")
    result.lines += ["  " + line for line in alert_lines]
    result.lines.append("pending sends:" if waiting or unaccepted else "pending sends: none")
    result.lines += send_lines + feed_lines
    result.lines.append("handoff deliveries:" if receipts else "handoff deliveries: none recorded")
    result.lines += [_delivery_line(receipt, now) for receipt in receipts]
    if context.verbosity < 0:  # the report is not shown: say what needs a look, a line each
        result.problems = [
            f"status: {line.strip()}"
            for job, line in zip(jobs, job_lines, strict=True)
            if job["outcome"] not in QUIET
        ]
        result.problems += [f"status: open alert {line}" for line in alert_lines]
        result.problems += [f"status: pending send {line.strip()}" for line in send_lines]
        result.problems += [f"status: {line.strip()}" for line in feed_lines]
    result.data = {
        "storage": context.storage.to_json(),
        "jobs": jobs,
        "open_alerts": [
            {
                "key": alert.key,
                "status": alert.status.value,
                "message": alert.message,
                "since": alert.since.isoformat(),
                "notified_at": alert.notified_at.isoformat() if alert.notified_at else None,
            }
            for alert in open_alerts
        ],
        "pending_sends": [
            {
                "id": row.id,
                "summary": row.summary,
                "created_at": _iso(row.created_at),
                "attempts": row.attempts,
                "last_error": row.last_error,
                "keys": row.keys,
            }
            for row in waiting
        ],
        "alertmanager_pending": [
            {
                "check": alert.check_key,
                "state": "firing" if alert.firing else "resolved",
                "attempts": alert.attempts,
                "last_error": alert.last_error,
            }
            for alert in unaccepted
        ],
        "handoff_deliveries": [
            {
                "agent": receipt.agent_id,
                "session_key": receipt.session_key,
                "at": _iso(receipt.last.at),
                "session_id": receipt.last.session_id,
                "handoff": receipt.last.handoff,
                "handoff_chars": receipt.last.handoff_chars,
            }
            for receipt in receipts
        ],
    }
    return result


def _delivery_line(receipt, now: datetime) -> str:
    last = receipt.last
    chars = f" ({last.handoff_chars:,} characters)" if last.handoff_chars is not None else ""
    age = _ago(now.timestamp() - last.at)
    return f"  {receipt.session_key}  {last.handoff}{chars}, {age}"


def _job_json(name: str, runs: list[Run], success: Run | None, now: datetime) -> dict[str, Any]:
    last = runs[0] if runs else None
    return {
        "job": name,
        "outcome": OUTCOMES.get(last.exit_code, f"exit {last.exit_code}") if last else "never run",
        "finished_at": _iso(last.finished_at) if last else None,
        "age_seconds": round(now.timestamp() - last.finished_at) if last else None,
        "last_success_at": _iso(success.finished_at) if success else None,
        "last_success_age_seconds": round(now.timestamp() - success.finished_at)
        if success
        else None,
        "error": last.summary.get("error") if last else None,
    }


def _job_line(job: dict[str, Any]) -> str:
    if job["age_seconds"] is None:
        return f"  {job['job']:<11} never run"
    line = f"  {job['job']:<11} {job['outcome']:<12} {_ago(job['age_seconds'])}"
    if job["outcome"] != "ok":
        success = job["last_success_age_seconds"]
        line += f"; last success {_ago(success)}" if success is not None else "; never succeeded"
        if job["error"]:
            line += f": {job['error']}"
    return line


def _outbox_line(row, now: datetime) -> str:
    age = _ago(now.timestamp() - row.created_at)
    error = f"; last error: {row.last_error}" if row.last_error else ""
    return f"  #{row.id} {row.summary} (queued {age}, {row.attempts} attempt(s){error})"


def _feed_line(alert) -> str:
    state = "firing" if alert.firing else "resolved"
    error = f"; last error: {alert.last_error}" if alert.last_error else ""
    return (
        f"  Alertmanager: {alert.check_key} {state}, not accepted yet "
        f"({alert.attempts} attempt(s){error})"
    )


def _ago(seconds: float) -> str:
    return f"{duration(timedelta(seconds=seconds))} ago"


def _iso(stamp: float) -> str:
    return datetime.fromtimestamp(stamp, UTC).isoformat(timespec="seconds")
