"""Gateway cron failures: recent runs ending in error, against a threshold."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import timedelta

from memwarden.health.checks import HealthInputs
from memwarden.health.model import CheckResult, graded
from memwarden.openclaw.cron import CronRun, cron_store_path, job_names, recent_runs

KEY = "cron.errors"


def check_cron(inputs: HealthInputs) -> list[CheckResult]:
    """Given the inputs, return `cron.errors`: error runs in the window against the threshold."""
    settings = inputs.health
    deployment = inputs.deployment
    store = cron_store_path(deployment.state_dir, deployment.config, deployment.env)
    since = inputs.now - timedelta(minutes=settings.cron_window_minutes)
    runs = list(recent_runs(store, since))
    names = job_names(store)
    return [grade_cron(runs, names, settings.cron_error_threshold, settings.cron_window_minutes)]


def grade_cron(
    runs: Iterable[CronRun], names: Mapping[str, str], threshold: int, window_minutes: int
) -> CheckResult:
    """Given the runs of the window, job names, the threshold and the window, return the result."""
    errors = [run for run in runs if run.status == "error"]
    by_job = Counter(run.job_id for run in errors)
    if not errors:
        return graded(
            KEY, 0, threshold, None, f"no cron run failed in the last {window_minutes} min"
        )
    latest = max(errors, key=lambda run: run.finished_at_ms)
    jobs = ", ".join(f"{names.get(job, job)} x{count}" for job, count in by_job.most_common(5))
    last_error = f"; last error: {_one_line(latest.error)}" if latest.error else ""
    message = (
        f"{len(errors)} cron run(s) failed in the last {window_minutes} min ({jobs}){last_error}"
    )
    return graded(KEY, len(errors), threshold, None, message, by_job=dict(by_job))


def _one_line(text: str | None) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= 160 else flat[:157] + "…"
