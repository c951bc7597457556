"""Maintain steps on memwarden's own things: its logs (`x.log` → `x.log.1` → … →
`x.log.<keep>`, then gone), its state.db (old runs and events, then VACUUM when it pays), its
memory history."""

from __future__ import annotations

import os
import re
import sqlite3
from dataclasses import dataclass
from datetime import timedelta
from typing import Literal

from memwarden.fs.files import check_inside
from memwarden.health.deliveries import FOLDER, prune_receipts
from memwarden.history.retention import prune
from memwarden.maintenance.facts import FileFacts, list_files
from memwarden.maintenance.report import StepReport
from memwarden.process.readable import size_text
from memwarden.process.runtime import JobContext
from memwarden.store.state import StateDB

_COPY = re.compile(r"^(?P<base>.+\.log)\.(?P<number>[1-9]\d*)$")


@dataclass(frozen=True)
class LogStep:
    """Delete a log copy, or rename one log file to the next name."""

    action: Literal["delete", "rename"]
    name: str
    new_name: str | None = None


def plan_log_rotation(files: list[FileFacts], max_bytes: int, keep: int) -> list[LogStep]:
    """Given the files of the log folder, return the steps that rotate every oversized log.

    A `*.log` larger than `max_bytes` becomes `.1`, each copy moves up by one, and copies past
    `keep` are deleted (also when `keep` was lowered). Steps are in a safe order: deletions and
    renames from the oldest copy down, so no rename overwrites a file still needed.
    """
    copies: dict[str, set[int]] = {}
    for fact in files:
        match = _COPY.match(fact.name)
        if match:
            copies.setdefault(match["base"], set()).add(int(match["number"]))
    steps: list[LogStep] = []
    oversized = {
        fact.name for fact in files if fact.name.endswith(".log") and fact.size > max_bytes
    }
    for base in sorted(set(copies) | oversized):
        numbers = copies.get(base, set())
        rotate = base in oversized
        last_kept = keep - 1 if rotate else keep
        steps += [
            LogStep("delete", f"{base}.{n}") for n in sorted(numbers, reverse=True) if n > last_kept
        ]
        if not rotate:
            continue
        for number in sorted((n for n in numbers if n <= last_kept), reverse=True):
            steps.append(LogStep("rename", f"{base}.{number}", f"{base}.{number + 1}"))
        steps.append(LogStep("rename", base, f"{base}.1") if keep > 0 else LogStep("delete", base))
    return steps


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


MIN_FREE_BYTES = 1 << 20

# The latest run of each job, and its latest success, are kept whatever their age: health and
# doctor judge a job by them.
_KEPT_RUNS = (
    "SELECT max(id) FROM runs GROUP BY job "
    "UNION SELECT max(id) FROM runs WHERE exit_code = 0 AND dry_run = 0 GROUP BY job"
)


@dataclass(frozen=True)
class PageStats:
    page_size: int
    page_count: int
    freelist_count: int

    @property
    def free_bytes(self) -> int:
        return self.page_size * self.freelist_count


def prune_state(db: StateDB, cutoff: float, dry_run: bool) -> tuple[int, int]:
    """Given the state DB and a Unix time, delete (or with `dry_run` count) older runs and events;
    return how many runs and events that is.

    The latest run and latest success of every job are kept.
    """
    runs_where = f"started_at < ? AND finished_at IS NOT NULL AND id NOT IN ({_KEPT_RUNS})"
    with db.transaction() as connection:
        if dry_run:
            runs = connection.execute(f"SELECT count(*) FROM runs WHERE {runs_where}", (cutoff,))  # noqa: S608
            events = connection.execute("SELECT count(*) FROM events WHERE ts < ?", (cutoff,))
            return runs.fetchone()[0], events.fetchone()[0]
        runs = connection.execute(f"DELETE FROM runs WHERE {runs_where}", (cutoff,))  # noqa: S608
        events = connection.execute("DELETE FROM events WHERE ts < ?", (cutoff,))
        return runs.rowcount, events.rowcount


def page_stats(db: StateDB) -> PageStats:
    connection = db.connection
    return PageStats(
        connection.execute("PRAGMA page_size").fetchone()[0],
        connection.execute("PRAGMA page_count").fetchone()[0],
        connection.execute("PRAGMA freelist_count").fetchone()[0],
    )


def vacuum_pays(stats: PageStats, min_free_percent: int) -> bool:
    """Given the page counts, return True when VACUUM would free enough to be worth it."""
    if stats.page_count == 0 or stats.free_bytes < MIN_FREE_BYTES:
        return False
    return stats.freelist_count * 100 >= min_free_percent * stats.page_count


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
        runs, events = prune_state(context.state, cutoff.timestamp(), dry_run)
        stats = page_stats(context.state)
        pays = vacuum_pays(stats, maintain.vacuum_min_free_percent)
        if pays and not dry_run:
            # state.db rebuilt without its free pages (outside any transaction), the WAL truncated
            context.state.connection.execute("VACUUM")
            context.state.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except sqlite3.Error as error:
        report.fail(f"state: cannot prune {context.state.path}: {error}")
        return report
    verb = "would delete" if dry_run else "deleted"
    vacuumed = ""
    if pays:
        vacuumed = f"; {'would compact' if dry_run else 'compacted'} state.db (freed "
        vacuumed += f"{size_text(stats.free_bytes)})"
    report.lines.append(
        f"state: {verb} {runs} run(s), {events} event(s) and {receipts} delivery "
        f"receipt(s) older than {maintain.state_retention_days} days{vacuumed}"
    )
    report.data = {
        "runs": runs,
        "events": events,
        "receipts": receipts,
        "vacuum": pays,
        "free_bytes": stats.free_bytes,
    }
    return report


def history_step(context: JobContext, dry_run: bool) -> StepReport:
    """Prune memory-history snapshots (`memwarden.history.retention.prune`)."""
    outcome = prune(context, dry_run)
    failures = 1 if outcome.exit_code else 0
    return StepReport(
        "history",
        lines=outcome.lines,
        problems=outcome.problems,
        data=outcome.data,
        failures=failures,
    )
