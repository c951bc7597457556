"""`memwarden install <target>`: render the timers, write them, activate them, record it all."""

from __future__ import annotations

import logging
import os
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from memwarden import __version__
from memwarden.fs.files import missing_ancestors, sha256_bytes
from memwarden.process.errors import EXIT_FAILURES, GatewayNotFound, UsageError
from memwarden.process.runtime import JobContext, JobResult, Problem
from memwarden.scheduling import act
from memwarden.scheduling.host import find_command, linger_user, user_manager_reachable
from memwarden.scheduling.jobs import describe_interval
from memwarden.scheduling.manifest import (
    InstalledFile,
    Manifest,
    load_manifest,
    manifest_path,
    save_manifest,
)
from memwarden.scheduling.plan import InstallPlan, plan_install
from memwarden.scheduling.spec import unit_spec, variables_timers_miss
from memwarden.scheduling.units import PlannedFile, UnitSpec, secrets_file
from memwarden.settings import ALL_OPTIONS
from memwarden.store.storage import storage_folders

SCHEDULER_HINTS = {
    "systemd": "systemd user units need Linux with systemd; try `memwarden install cron`",
    "launchd": "launchd is macOS's scheduler; on Linux use `memwarden install systemd` or `cron`",
    "cron": "install cron (e.g. `apt-get install cron`) or use systemd or launchd",
}
NO_USER_MANAGER = (
    "no systemd user manager is reachable from this shell ($XDG_RUNTIME_DIR/bus): log in "
    "with a user session (over ssh, `loginctl enable-linger $USER` then log in again), or use "
    "`memwarden install cron`"
)


def install(context: JobContext, target: str, dry_run: bool) -> JobResult:
    """Given a context, a target (systemd, launchd, cron) and dry-run, install the timers.

    Raise UsageError if the scheduler's commands are missing (before anything is written) or
    the schedule cannot be expressed; ConfigError for invalid settings.
    """
    spec = unit_spec(context)
    previous = load_manifest(context.storage_dir, target)
    _refuse_another_gateways_timers(context, target)
    crontab, crontab_existed = _current_crontab(context, target, dry_run)
    plan = plan_install(target, spec, previous, os.getuid(), crontab)
    extra = _secrets_starter(spec)
    files = [*plan.files, *([extra] if extra else [])]
    result = JobResult("install")
    result.problems += _warnings(context, spec, target)
    missing = act.missing_commands([*plan.before, *plan.after], context.env)
    if missing and not dry_run:
        raise UsageError(f"{', '.join(missing)} not found on PATH: {SCHEDULER_HINTS[target]}")
    unreachable = target == "systemd" and not user_manager_reachable(context.env)
    if unreachable and not dry_run:
        raise UsageError(NO_USER_MANAGER)
    if dry_run:
        notes = [f"{name} is not on PATH here" for name in missing]
        notes += [NO_USER_MANAGER] if unreachable and not missing else []
        return _dry_run(result, context, plan, files, notes)
    return _apply(result, context, spec, plan, files, previous, crontab_existed)


def _refuse_another_gateways_timers(context: JobContext, target: str) -> None:
    """The timers of a target are one set per account: raise UsageError when another gateway's
    storage holds an install of `target` (installing would re-point its timers here)."""
    ours = context.storage_dir
    for folder in storage_folders(context.storage.root):
        if folder == ours:
            continue
        try:
            other = load_manifest(folder, target)
        except UsageError:
            continue
        if other is None:
            continue
        gateway = other.environment.get("MEMWARDEN_GATEWAY_STATE_DIR") or f"storage {folder}"
        raise UsageError(
            f"the {target} timers of this account already run memwarden for another gateway "
            f"({gateway}, installed {other.installed_at}); one set per account: run "
            f"`memwarden --state-dir <that gateway> uninstall {target}` first, or install with "
            "that gateway's --state-dir"
        )


def _current_crontab(context: JobContext, target: str, dry_run: bool) -> tuple[str | None, bool]:
    if target != "cron":
        return None, False
    if dry_run and find_command("crontab", context.env) is None:
        return "", False
    return act.read_crontab(context.env)


def _secrets_starter(spec: UnitSpec) -> PlannedFile | None:
    """Return a commented secrets file to create when none exists yet."""
    if spec.secrets_file.exists() or spec.secrets_file.is_symlink():
        return None
    names = [option.env_name for option in ALL_OPTIONS if option.secret]
    # The bot token sends nothing without its channel: the starter names both.
    names += [option.env_name for option in ALL_OPTIONS if option.key == "slack.channel"]
    return secrets_file(spec.secrets_file, sorted(names))


def _dry_run(
    result: JobResult,
    context: JobContext,
    plan: InstallPlan,
    files: list[PlannedFile],
    notes: list[str],
) -> JobResult:
    target = plan.target
    lines = [f"install {target} (dry run): nothing is written and nothing is run"]
    for note in notes:
        lines.append(f"note: {note}, so the commands below would fail")
    lines += [f"would run: {command.display()}" for command in plan.before]
    lines += [f"would remove {entry.path} (no longer scheduled)" for entry in plan.stale_files]
    for planned in files:
        lines.append(f"would write {planned.path} ({planned.mode:04o}):")
        lines += [f"    {line}".rstrip() for line in planned.content.splitlines()]
    if plan.crontab is not None:
        lines.append("would install this crontab:")
        lines += [f"    {line}".rstrip() for line in plan.crontab.splitlines()]
    lines += [f"would run: {command.display()}" for command in plan.after]
    lines.append(f"would record the install in {manifest_path(context.storage_dir, target)}")
    result.lines = lines
    result.data = {
        "target": target,
        "dry_run": True,
        "files": [
            {"path": str(f.path), "mode": f"{f.mode:04o}", "role": f.role, "content": f.content}
            for f in files
        ],
        "remove": [entry.path for entry in plan.stale_files],
        "crontab": plan.crontab,
        "commands": [command.to_json() for command in (*plan.before, *plan.after)],
        "summary": {"target": target, "dry_run": True, "files": len(files)},
    }
    return result


def _apply(
    result: JobResult,
    context: JobContext,
    spec: UnitSpec,
    plan: InstallPlan,
    files: list[PlannedFile],
    previous: Manifest | None,
    crontab_existed: bool,
) -> JobResult:
    outcomes = [act.run_command(command, context.env) for command in plan.before]
    removed = act.remove_files(
        result,
        act.removal_decisions(plan.stale_files, force=False),
        why=" (no longer scheduled)",
        kept="no longer scheduled but changed since install; delete it by hand",
    )
    installed: list[InstalledFile] = []
    created: list[Path] = []
    try:
        for folder in (spec.storage_dir, spec.log_dir):
            created += act.make_dirs(folder)
        for planned in files:
            created += act.write_file(planned.path, planned.content, planned.mode)
            digest = sha256_bytes(planned.content.encode())
            installed.append(InstalledFile(str(planned.path), digest, planned.role))
            result.lines.append(f"wrote {planned.path}")
    finally:
        # Even when a write fails, record what was written so uninstall can remove it.
        created += missing_ancestors(manifest_path(spec.storage_dir, plan.target).parent)
        manifest = _manifest(spec, plan, previous, installed, created, crontab_existed)
        saved = save_manifest(spec.storage_dir, manifest)
    started = [act.run_command(command, context.env) for command in plan.after]
    outcomes += started
    active = activated(plan.activated, started)
    if active != list(plan.activated):
        # Only what was really enabled: doctor tells timers that are written but not running.
        manifest = replace(manifest, activated=active)
        saved = save_manifest(spec.storage_dir, manifest)
    failed = act.report_outcomes(result, outcomes)
    scheduled = ", ".join(
        f"{job.name} every {describe_interval(job.interval_minutes)}" for job in spec.jobs
    )
    result.lines.append(f"installed with {plan.target}: {scheduled}")
    result.lines.append(f"manifest: {saved} (`memwarden uninstall {plan.target}` undoes it)")
    health = context.config.health
    result.lines += _next_steps(plan.target, spec, (health.metrics_file, health.metrics_file_mode))
    result.exit_code = EXIT_FAILURES if failed else 0
    result.data = {
        "target": plan.target,
        "dry_run": False,
        "manifest": str(saved),
        "files": [
            {"path": entry.path, "role": entry.role, "sha256": entry.sha256}
            for entry in manifest.files
        ],
        "removed": removed,
        "commands": [outcome.to_json() for outcome in outcomes],
        "summary": {
            "target": plan.target,
            "files": len(files),
            "jobs": [job.name for job in spec.jobs],
            "failed_commands": failed,
        },
    }
    return result


def _manifest(
    spec: UnitSpec,
    plan: InstallPlan,
    previous: Manifest | None,
    installed: list[InstalledFile],
    created: list[Path],
    crontab_existed: bool,
) -> Manifest:
    """The record of this install, keeping what an earlier install of the target created."""
    written = {entry.path for entry in installed}
    kept_secrets = [
        entry
        for entry in (previous.files if previous else [])
        if entry.role == "secrets" and entry.path not in written
    ]
    earlier_dirs = previous.created_dirs if previous else []
    if plan.target == "cron":
        existed = previous.crontab_existed if previous else crontab_existed
    else:
        existed = None
    return Manifest(
        target=plan.target,
        installed_at=datetime.now(UTC).isoformat(timespec="seconds"),
        memwarden_version=__version__,
        executable=str(spec.executable),
        jobs={job.name: job.interval_minutes for job in spec.jobs},
        environment=dict(spec.environment),
        files=[*installed, *kept_secrets],
        activated=list(plan.activated),
        created_dirs=list(dict.fromkeys([*earlier_dirs, *map(str, created)])),
        crontab_existed=existed,
    )


def activated(names: tuple[str, ...], outcomes: list[act.CommandOutcome]) -> list[str]:
    """Given the timers (agents, crontab) an install activates and the outcomes of the commands
    that activate them, return those whose activating command did not fail (an unload before,
    which fails when nothing was loaded, says nothing about them)."""
    failed = [outcome.command.argv for outcome in outcomes if not outcome.ok]
    return [name for name in names if not any(name in arg for argv in failed for arg in argv)]


def _next_steps(target: str, spec: UnitSpec, metrics: tuple[str, str]) -> list[str]:
    check = {
        "systemd": "systemctl --user list-timers 'memwarden-*'; logs: journalctl --user -u "
        "'memwarden-*'",
        "launchd": f"launchctl list | grep {spec.launchd_label}; logs: {spec.log_dir}",
        "cron": f"crontab -l; logs: {spec.log_dir}",
    }
    steps = [f"check: {check[target]}"]
    path, mode = metrics
    if path:
        readers = "memwarden's user only" if mode == "0600" else f"mode {mode}"
        steps.append(
            f'metrics: health writes {path} ({readers}; health.metrics_file_mode = "0644" '
            "lets a node_exporter running as another user read it; `memwarden doctor` checks)"
        )
    return steps


def _warnings(context: JobContext, spec: UnitSpec, target: str) -> list[str]:
    """Return what the operator should know (logged as warnings, even when the install fails):
    variables timers miss, a state dir without a gateway, lingering for systemd."""
    warnings = [
        f"{name} is set in this shell but the timers will not see it: put it in "
        f"{spec.secrets_file} (a secret) or in memwarden's config.toml"
        for name in variables_timers_miss(context, dict(spec.environment))
    ]
    try:
        context.deployment  # noqa: B018 - raises when no gateway lives in the state dir
    except GatewayNotFound as error:
        warnings.append(f"{error.problem}: the timers will fail (exit 2) until it exists")
    if target == "systemd":
        user, lingering = linger_user()
        if not lingering:
            warnings.append(
                f"user timers stop when {user} logs out; keep them running with "
                f"`sudo loginctl enable-linger {user}`"
            )
    return [Problem(warning, logging.WARNING) for warning in warnings]
