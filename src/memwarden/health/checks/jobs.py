"""memwarden's own jobs: a dead-man's switch on each watched job's last success, and a rotation
that keeps failing (consecutive failed rotate runs, or one session failing again and again)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from memwarden.health.checks import HealthInputs
from memwarden.health.model import CheckResult, critical, duration, graded, ok, warning
from memwarden.rotation.lineage import RotationFailure, recent_rotation_failures
from memwarden.store.state import Run

ROTATE_FAILING = "rotate.failing"


@dataclass(frozen=True)
class JobFreshness:
    """What is known of one job: its interval and when it last succeeded (epoch seconds)."""

    job: str
    interval_minutes: int
    last_success_at: float | None


def check_jobs(inputs: HealthInputs) -> list[CheckResult]:
    """Given the inputs, return `jobs.stale:<job>` per watched job and `rotate.failing`."""
    settings = inputs.health
    first_run = "SELECT min(started_at) FROM runs WHERE dry_run = 0"  # memwarden's first run
    watching_since = inputs.state.connection.execute(first_run).fetchone()[0]
    results = []
    for job in settings.watched_jobs:
        interval = getattr(inputs.config.schedule, f"{job}_minutes", None)
        if interval is None:
            results.append(
                warning(f"jobs.stale:{job}", f"unknown job {job!r} in health.watched_jobs")
            )
            continue
        last = inputs.state.last_success(job)
        freshness = JobFreshness(job, interval, last.finished_at if last else None)
        results.append(
            grade_staleness(
                freshness,
                inputs.now,
                watching_since,
                settings.stale_warning_multiple,
                settings.stale_critical_multiple,
            )
        )
    threshold = settings.rotation_failure_threshold
    since = inputs.now - timedelta(minutes=settings.rotation_failure_window_minutes)
    latest_runs = inputs.state.last_runs("rotate", limit=threshold)
    # the sessions whose rotations failed since then with no success after
    failures = recent_rotation_failures(inputs.state, since.timestamp())
    results.append(grade_rotation(latest_runs, failures, threshold))
    return results


def grade_staleness(
    freshness: JobFreshness,
    now: datetime,
    watching_since: float | None,
    warning_multiple: float,
    critical_multiple: float,
    since_what: str = "memwarden first ran",
) -> CheckResult:
    """Given a job's freshness, the time, when memwarden first ran anything, and the multiples of
    the interval that warn and are critical, return `jobs.stale:<job>`.

    A job that never succeeded is measured from `watching_since` (memwarden's first recorded
    run, or what `since_what` names), so a fresh install is not an alarm.
    """
    key = f"jobs.stale:{freshness.job}"
    interval = freshness.interval_minutes * 60
    reference = freshness.last_success_at or watching_since
    if reference is None:
        return ok(key, f"{freshness.job}: no run recorded yet")
    age = max(0.0, now.timestamp() - reference)
    multiple = round(age / interval, 2)
    ago = duration(timedelta(seconds=age), seconds=False)
    what = f"last success {ago} ago"
    if not freshness.last_success_at:
        what = f"no success yet ({since_what} {ago} ago)"
    message = f"{freshness.job}: {what} (runs every {freshness.interval_minutes} min)"
    if multiple >= critical_multiple:
        message += "; is its timer installed and running?"
    return graded(
        key,
        multiple,
        warning_multiple,
        critical_multiple,
        message,
        last_success_at=freshness.last_success_at,
        interval_minutes=freshness.interval_minutes,
    )


def grade_rotation(
    latest_runs: Sequence[Run], failures: Sequence[RotationFailure], threshold: int
) -> CheckResult:
    """Given the latest rotate runs (newest first), the sessions whose rotations keep failing and
    the threshold, return `rotate.failing`: critical when the last `threshold` runs all failed,
    warning when a session failed `threshold` times in a row within the window."""
    failed_runs = [run for run in latest_runs if run.exit_code not in (0, None)]
    if len(latest_runs) >= threshold and len(failed_runs) == len(latest_runs):
        error = latest_runs[0].summary.get("error") or f"exit code {latest_runs[0].exit_code}"
        return critical(
            ROTATE_FAILING,
            f"rotate failed its last {len(latest_runs)} runs (latest: {error})",
            len(failed_runs),
            threshold,
        )
    repeated = sorted(
        (item for item in failures if item.failures >= threshold), key=lambda item: -item.failures
    )
    if repeated:
        shown = ", ".join(f"{item.session_key} x{item.failures}" for item in repeated[:3])
        latest = repeated[0].last_error
        suffix = f"; last error: {latest}" if latest else ""
        return warning(
            ROTATE_FAILING,
            f"rotation keeps failing for {len(repeated)} session(s): {shown}{suffix}",
            repeated[0].failures,
            threshold,
            sessions=[item.session_key for item in repeated],
        )
    return ok(ROTATE_FAILING, "rotation is not failing repeatedly", len(failed_runs), threshold)
