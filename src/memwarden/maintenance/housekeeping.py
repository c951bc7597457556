"""Maintain steps on memwarden's own things: its logs, its state, its memory history."""

from __future__ import annotations

import os
import sqlite3
from datetime import timedelta

from memwarden.fs.files import check_inside
from memwarden.health.deliveries import FOLDER, prune_receipts
from memwarden.history.retention import prune
from memwarden.maintenance.facts import list_files
from memwarden.maintenance.logs import plan_log_rotation
from memwarden.maintenance.report import StepReport, size_text
from memwarden.maintenance.state_prune import page_stats, prune_state, vacuum, vacuum_pays
from memwarden.process.runtime import JobContext


def logs_step(context: JobContext, dry_run: bool) -> StepReport:
    """Rotate memwarden's oversized logs in general.log_dir."""
    report = StepReport("logs")
    folder = context.log_dir
    maintain = context.config.maintain
    try:
        steps = plan_log_rotation(list_files(folder), maintain.log_max_kb * 1024, maintain.log_keep)
    except OSError as error:
        report.fail(f"logs: cannot list {folder}: {error.strerror or error}")
        return report
    done = 0
    for step in steps:
        shown = f"{step.name} → {step.new_name}" if step.action == "rename" else step.name
        if dry_run:
            report.lines.append(f"  would {step.action} {shown}")
            continue
        try:
            source = check_inside(folder / step.name, folder)
            if step.action == "rename":
                os.replace(source, check_inside(folder / str(step.new_name), folder))
            else:
                source.unlink()
            done += 1
        except OSError as error:
            report.fail(f"logs: {step.action} {shown}: {error.strerror or error}")
    rotated = sum(1 for step in steps if step.action == "rename" and step.new_name.endswith(".1"))
    report.lines.append(f"logs: {rotated} rotated" + (" (dry run)" if dry_run else ""))
    report.data = {"rotated": rotated, "steps": len(steps), "done": done}
    return report


def state_step(context: JobContext, dry_run: bool) -> StepReport:
    """Delete runs, events and handoff delivery receipts older than
    maintain.state_retention_days; VACUUM when it pays."""
    report = StepReport("state")
    maintain = context.config.maintain
    cutoff = context.now() - timedelta(days=maintain.state_retention_days)
    try:
        receipts = prune_receipts(context.storage_dir / FOLDER, cutoff.timestamp(), dry_run)
    except OSError as error:
        report.fail(f"state: cannot prune the delivery receipts: {error}")
        receipts = 0
    try:
        counts = prune_state(context.state, cutoff.timestamp(), dry_run)
        stats = page_stats(context.state)
        pays = vacuum_pays(stats, maintain.vacuum_min_free_percent)
        if pays and not dry_run:
            vacuum(context.state)
    except sqlite3.Error as error:
        report.fail(f"state: cannot prune {context.state.path}: {error}")
        return report
    verb = "would delete" if dry_run else "deleted"
    vacuumed = ""
    if pays:
        vacuumed = f"; {'would compact' if dry_run else 'compacted'} state.db (freed "
        vacuumed += f"{size_text(stats.free_bytes)})"
    report.lines.append(
        f"state: {verb} {counts.runs} run(s), {counts.events} event(s) and {receipts} delivery "
        f"receipt(s) older than {maintain.state_retention_days} days{vacuumed}"
    )
    report.data = {
        "runs": counts.runs,
        "events": counts.events,
        "receipts": receipts,
        "vacuum": pays,
        "free_bytes": stats.free_bytes,
    }
    return report


def history_step(context: JobContext, dry_run: bool) -> StepReport:
    """Prune memory-history snapshots (`memwarden.history.retention.prune`)."""
    report = StepReport("history")
    outcome = prune(context, dry_run)
    report.lines += outcome.lines
    report.problems += outcome.problems
    report.failures += 1 if outcome.exit_code else 0
    report.data = outcome.data
    return report
