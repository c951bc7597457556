"""Maintain step: back up the gateway config when it changed (which backups to keep, decided
purely); warn when it shrank (the drift guard)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import NamedTuple

from memwarden.maintenance.report import StepReport
from memwarden.openclaw.config_file import is_gateway_config
from memwarden.openclaw.paths import resolve_config_path
from memwarden.process.readable import size_text
from memwarden.process.runtime import JobContext, Problem
from memwarden.store.storage import (
    CONFIG_BACKUPS_DIR,
    backup_name,
    is_backup,
    write_config_backup,
)


class BackupDecision(NamedTuple):
    """Whether to back up the config now, and whether it shrank against the last backup."""

    take: bool
    shrunk: bool
    current_size: int
    previous_size: int | None


def decide_backup(
    current: bytes, latest: bytes | None, reference: bytes | None, shrink_ratio: float
) -> BackupDecision:
    """Given the config's bytes, the latest backup's (None: no backup yet) and the latest
    backup that holds a config the gateway could load (None: none), decide.

    A backup is taken when the content differs from the latest backup, also when it no longer
    parses (that is when a copy matters). The config shrank when it is smaller than
    `shrink_ratio` times the reference (a config wiped by an edit or a tool gone wrong), so a
    series of broken edits is measured against the last good config, not the last broken one.
    """
    previous_size = None if reference is None else len(reference)
    shrunk = previous_size is not None and len(current) < shrink_ratio * previous_size
    return BackupDecision(current != latest, shrunk, len(current), previous_size)


def latest_backup(names: list[str]) -> str | None:
    """Given the names in the backup folder, return the newest backup's, or None."""
    return max(filter(is_backup, names), default=None)


def backups_to_prune(names: list[str], keep: int, spare: str | None = None) -> list[str]:
    """Given the names in the backup folder, return the backups beyond the newest `keep`, never
    `spare` (the last good config, while newer backups hold broken ones)."""
    backups = sorted(name for name in names if is_backup(name))
    return [name for name in backups[: max(0, len(backups) - keep)] if name != spare]


def config_step(context: JobContext, dry_run: bool) -> StepReport:
    """Back up the gateway config (raw bytes, 0600) under <storage_dir>/config-backups/.

    Works on the file as it is, even when it no longer parses: that is when a backup matters.
    """
    report = StepReport("config")
    source = resolve_config_path(context.gateway_state_dir, context.env)
    try:
        current = source.read_bytes()
    except FileNotFoundError:
        report.lines.append(f"config: no gateway config at {source}; nothing to back up")
        return report
    except OSError as error:
        report.fail(f"config: cannot read {source}: {error.strerror or error}")
        return report
    folder = context.storage_dir / CONFIG_BACKUPS_DIR
    names = sorted(path.name for path in folder.iterdir()) if folder.is_dir() else []
    latest = latest_backup(names)
    latest_bytes = (folder / latest).read_bytes() if latest else None
    good, good_bytes = _latest_good(folder, names, latest, latest_bytes)
    ratio = context.config.maintain.config_shrink_ratio
    decision = decide_backup(current, latest_bytes, good_bytes, ratio)
    report.data = {
        "config": str(source),
        "backed_up": None,
        "shrunk": decision.shrunk,
        "size": decision.current_size,
    }
    if decision.shrunk:
        _warn_shrunk(context, report, source, good, decision, dry_run)
    if not decision.take:
        report.lines.append(f"config: {source.name} unchanged since {latest}")
        return report
    spare = None if is_gateway_config(current) else good
    keep = context.config.maintain.config_backups_keep
    if dry_run:
        name = backup_name(source.name, context.now())
        report.lines.append(f"config: would back up {source} to {folder / name}")
        pruned = backups_to_prune([*names, name], keep, spare)
        report.lines += [f"  would delete old backup {old}" for old in pruned]
        return report
    backup = write_config_backup(context.storage_dir, source.name, current, context.now())
    pruned = backups_to_prune([*names, backup.name], keep, spare)
    for old in pruned:
        (folder / old).unlink(missing_ok=True)
    report.data["backed_up"] = str(backup)
    report.data["pruned"] = pruned
    context.state.record_event(
        "config.backed_up",
        job="maintain",
        run_id=context.run_id,
        data={"config": str(source), "backup": str(backup), "bytes": len(current)},
    )
    report.lines.append(
        f"config: backed up {source.name} ({size_text(len(current))}) to {backup}"
        + (f"; deleted {len(pruned)} old backup(s)" if pruned else "")
    )
    return report


def _latest_good(
    folder: Path, names: list[str], latest: str | None, latest_bytes: bytes | None
) -> tuple[str | None, bytes | None]:
    """Given the names in the backup folder and the newest backup (read already), return the
    newest backup holding a config the gateway could load (name, bytes)."""
    for name in sorted(filter(is_backup, names), reverse=True):
        try:
            data = latest_bytes if name == latest else (folder / name).read_bytes()
        except OSError:
            continue
        if is_gateway_config(data):
            return name, data
    return None, None


def _warn_shrunk(context, report, source, latest, decision, dry_run) -> None:
    message = Problem(
        f"the gateway config {source} shrank from {size_text(decision.previous_size)} "
        f"to {size_text(decision.current_size)}; if that was not on purpose, compare it with "
        f"{context.storage_dir / CONFIG_BACKUPS_DIR / latest} and restore what is missing",
        logging.WARNING,
    )
    report.problems.append(message)
    if not dry_run:
        context.state.record_event(
            "config.shrunk",
            job="maintain",
            run_id=context.run_id,
            data={
                "config": str(source),
                "previous_bytes": decision.previous_size,
                "current_bytes": decision.current_size,
                "previous_backup": str(context.storage_dir / CONFIG_BACKUPS_DIR / latest),
            },
        )
