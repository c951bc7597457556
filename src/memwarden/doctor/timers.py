"""Are the jobs scheduled, and have they succeeded recently? Pure over the install manifests.

A job's staleness is graded as the health job grades it (`health.checks.jobs.grade_staleness`,
`health.stale_warning_multiple` and `health.stale_critical_multiple`): a warning there is a
warning here, critical needs action.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from memwarden import __version__
from memwarden.doctor.finding import Finding, Severity
from memwarden.health.checks.jobs import JobFreshness, grade_staleness
from memwarden.health.model import Status
from memwarden.scheduling.jobs import describe_interval
from memwarden.scheduling.manifest import Manifest

LOG_COMMANDS = {
    "systemd": "journalctl --user -u memwarden-{job}.service -n 50",
    "launchd": "tail -n 50 {log_dir}/{job}.log",
    "cron": "tail -n 50 {log_dir}/{job}.log",
}


def check_timers(
    manifests: Mapping[str, Manifest],
    wanted_jobs: Mapping[str, int],
    last_success: Mapping[str, float | None],
    now: float,
    stale_multiples: tuple[float, float],
    executable_ok: Mapping[str, bool],
    log_dir: str,
    missing_files: Mapping[str, list[str]] | None = None,
) -> list[Finding]:
    """Given the installs (by target), the jobs wanted (name → interval minutes) and facts.

    `last_success` maps a job to the Unix time its last successful run finished (None: never);
    `stale_multiples` are the multiples of a job's interval that warn and are critical;
    `executable_ok` tells, per target, whether the executable the units run still exists;
    `missing_files`, per target, the unit files its manifest lists (and, for cron, its crontab
    lines) that are gone. A manifest that schedules no job is what an uninstall kept.
    """
    findings = [_leftover(target, m) for target, m in manifests.items() if not m.jobs]
    manifests = {target: manifest for target, manifest in manifests.items() if manifest.jobs}
    if not manifests:
        return [
            Finding(
                "timers.installed",
                "action",
                "no timers are installed: nothing runs checkpoint, rotate, index, health or "
                "maintain unattended",
                "memwarden install auto",
            ),
            *findings,
        ]
    scheduled: dict[str, tuple[str, Manifest]] = {}
    for target, manifest in manifests.items():
        gone = (missing_files or {}).get(target, [])
        broken = _check_broken(target, manifest, gone)
        findings += broken or _check_install(
            target, manifest, wanted_jobs, executable_ok.get(target, True)
        )
        for job in manifest.jobs:
            scheduled.setdefault(job, (target, manifest))
    if len(manifests) > 1:
        findings.append(
            Finding(
                "timers.duplicate",
                "warning",
                f"timers are installed with {' and '.join(manifests)}: every job runs twice "
                "(the second run of each waits for the lock and is skipped)",
                f"memwarden uninstall {sorted(manifests)[-1]}",
            )
        )
    for job, (target, manifest) in scheduled.items():
        findings.append(
            _check_job(job, target, manifest, last_success.get(job), now, stale_multiples, log_dir)
        )
    return findings


def _leftover(target: str, manifest: Manifest) -> Finding:
    """An uninstall that kept files changed since install leaves a record of them alone."""
    example = f" (e.g. {manifest.files[0].path})" if manifest.files else ""
    return Finding(
        f"timers.{target}",
        "info",
        f"`memwarden uninstall {target}` kept {len(manifest.files)} file(s) changed since "
        f"install{example}: nothing is scheduled with {target}",
        f"memwarden uninstall {target} --force",
    )


def _check_broken(target: str, manifest: Manifest, gone: list[str]) -> list[Finding]:
    """An install whose files were deleted, or whose timers were never activated, runs nothing
    whatever its manifest says."""
    inactive = manifest.inactive_jobs()
    if gone:
        problem = (
            f"{len(gone)} of the {target} files or entries memwarden installed "
            f"{'is' if len(gone) == 1 else 'are'} gone (e.g. {gone[0]}): those jobs no longer run"
        )
    elif inactive:
        problem = (
            f"the {target} timers of {', '.join(inactive)} were written but not activated "
            "(the install's scheduler command failed): they do not run"
        )
    else:
        return []
    return [Finding(f"timers.{target}", "action", problem, f"memwarden install {target}")]


def _check_install(
    target: str, manifest: Manifest, wanted_jobs: Mapping[str, int], executable_ok: bool
) -> list[Finding]:
    findings = []
    key, fix = f"timers.{target}", f"memwarden install {target}"
    if not executable_ok:
        message = f"the {target} timers run {manifest.executable}, which no longer exists"
        findings.append(Finding(key, "action", message, fix))
    differs = {
        job: interval for job, interval in wanted_jobs.items() if manifest.jobs.get(job) != interval
    }
    extra = sorted(set(manifest.jobs) - set(wanted_jobs))
    if differs or extra:
        what = [f"{job} every {describe_interval(m)}" for job, m in sorted(differs.items())]
        what += [f"{job} no longer wanted" for job in extra]
        message = f"the {target} timers do not match the settings ({'; '.join(what)})"
        findings.append(Finding(key, "warning", message, fix))
    elif manifest.memwarden_version != __version__:
        message = (
            f"the {target} timers were installed by memwarden {manifest.memwarden_version}; "
            f"this is {__version__}, whose units may differ (CHANGELOG.md says)"
        )
        findings.append(Finding(key, "warning", message, fix))
    elif executable_ok:
        findings.append(Finding(key, "ok", f"{len(manifest.jobs)} job(s) scheduled with {target}"))
    return findings


SEVERITIES: dict[Status, Severity] = {
    Status.OK: "ok",
    Status.WARNING: "warning",
    Status.CRITICAL: "action",
}


def _check_job(
    job: str,
    target: str,
    manifest: Manifest,
    finished: float | None,
    now: float,
    stale_multiples: tuple[float, float],
    log_dir: str,
) -> Finding:
    """Grade one scheduled job as health does; one that never succeeded is measured from its
    install."""
    graded = grade_staleness(
        JobFreshness(job, manifest.jobs[job], finished),
        datetime.fromtimestamp(now, UTC),
        _timestamp(manifest.installed_at, now),
        *stale_multiples,
        since_what="scheduled",
    )
    severity = SEVERITIES[graded.status]
    if severity == "ok" and finished is None:
        severity = "info"
    logs = LOG_COMMANDS[target].format(job=job, log_dir=log_dir)
    return Finding(f"timers.{job}", severity, graded.message, None if severity == "ok" else logs)


def _timestamp(iso: str, fallback: float) -> float:
    try:
        return datetime.fromisoformat(iso).timestamp()
    except (TypeError, ValueError):
        return fallback
