"""`memwarden uninstall <target>`: undo exactly what the install manifest lists."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from memwarden.process.errors import EXIT_FAILURES
from memwarden.process.runtime import JobContext, JobResult
from memwarden.scheduling import act
from memwarden.scheduling.manifest import (
    InstalledFile,
    Manifest,
    load_manifest,
    manifest_path,
    save_manifest,
)
from memwarden.scheduling.plan import UninstallPlan, dirs_to_remove, plan_uninstall
from memwarden.scheduling.units import TARGETS
from memwarden.store.storage import release_if_empty


def installed_targets(storage_dir: Path) -> list[str]:
    """Return the targets that have an install manifest."""
    return [target for target in TARGETS if manifest_path(storage_dir, target).exists()]


def uninstall(context: JobContext, target: str, dry_run: bool, force: bool) -> JobResult:
    """Given a context, a target and the flags, remove what `memwarden install target` did.

    Files changed since install are kept unless `force` (a secrets file the operator filled in
    is always kept). Raise UsageError if the manifest or the crontab cannot be read.
    """
    result = JobResult("uninstall")
    manifest = load_manifest(context.storage_dir, target)
    if manifest is None:
        result.lines.append(f"nothing to uninstall for {target} (no install manifest)")
        result.data = {"target": target, "installed": False, "summary": {"target": target}}
        return result
    crontab = act.read_crontab(context.env)[0] if target == "cron" else None
    plan = plan_uninstall(manifest, os.getuid(), crontab)
    decisions = act.removal_decisions(manifest.files, force)
    kept = [entry for entry, decision in decisions if decision == "keep"]
    leftover = _leftover(manifest, kept)
    if dry_run:
        return _dry_run(result, context, plan, manifest, decisions, leftover is not None)
    stops = [act.run_command(command, context.env) for command in plan.commands]
    if act.report_outcomes(result, stops):
        return _stop_failed(result, context, manifest, stops)
    removed = act.remove_files(result, decisions)
    after = [act.run_command(command, context.env) for command in plan.after]
    failed = act.report_outcomes(result, after)
    if leftover is not None:
        save_manifest(context.storage_dir, leftover)
    else:
        manifest_path(context.storage_dir, target).unlink(missing_ok=True)
        release_if_empty(context.storage.root)
        act.remove_empty_dirs(dirs_to_remove(manifest.created_dirs))
    result.lines.append(
        f"uninstalled {target}: {len(removed)} file(s) removed"
        + (f", {len(leftover.files)} kept (changed since install)" if leftover else "")
    )
    result.exit_code = EXIT_FAILURES if failed or leftover else 0
    result.data = _data(target, removed, kept, [*stops, *after])
    return result


def _data(
    target: str, removed: list[str], kept: list[InstalledFile], outcomes: list[act.CommandOutcome]
) -> dict:
    return {
        "target": target,
        "installed": True,
        "removed": removed,
        "kept": [entry.path for entry in kept],
        "commands": [outcome.to_json() for outcome in outcomes],
        "summary": {"target": target, "removed": len(removed), "kept": len(kept)},
    }


def _stop_failed(
    result: JobResult, context: JobContext, manifest: Manifest, stops: list[act.CommandOutcome]
) -> JobResult:
    """A stop failed: what it was to stop may still run. Leave the files it runs and the record
    as they are, so that running the uninstall again retries the stops and finishes."""
    record = manifest_path(context.storage_dir, manifest.target)
    result.problems.append(
        f"nothing removed: {record} still lists what is scheduled; run "
        f"`memwarden uninstall {manifest.target}` again once the scheduler is reachable"
    )
    result.exit_code = EXIT_FAILURES
    result.data = _data(manifest.target, [], manifest.files, stops)
    return result


def _leftover(manifest: Manifest, kept: list[InstalledFile]) -> Manifest | None:
    """The record of what the uninstall leaves (the unit files it kept, nothing scheduled), or
    None when it leaves nothing to record (a kept secrets file is the operator's)."""
    leftover = [entry for entry in kept if entry.role != "secrets"]
    if not leftover:
        return None
    return replace(manifest, files=leftover, activated=[], jobs={})


def _dry_run(
    result: JobResult,
    context: JobContext,
    plan: UninstallPlan,
    manifest: Manifest,
    decisions: act.Decisions,
    keeps_record: bool,
) -> JobResult:
    lines = [f"uninstall {manifest.target} (dry run): nothing is removed and nothing is run"]
    for command in plan.commands:
        lines.append(f"would run: {command.display()}")
        if command.stdin is not None:
            lines += [f"    {line}".rstrip() for line in command.stdin.splitlines()]
    for entry, decision in decisions:
        verb = {"remove": "would remove", "keep": "would keep (changed since install)"}
        lines.append(f"{verb.get(decision, 'already gone:')} {entry.path}")
    lines += [f"would run: {command.display()}" for command in plan.after]
    record = manifest_path(context.storage_dir, manifest.target)
    if keeps_record:
        lines.append(f"would keep {record}, listing only the kept files (nothing scheduled)")
    else:
        lines.append(f"would remove {record}")
        folders = dirs_to_remove(manifest.created_dirs)
        lines += [f"would remove {folder} if empty" for folder in folders]
    result.lines = lines
    result.data = {
        "target": manifest.target,
        "dry_run": True,
        "files": [entry.path for entry in manifest.files],
        "commands": [command.to_json() for command in (*plan.commands, *plan.after)],
        "summary": {"target": manifest.target, "dry_run": True},
    }
    return result
