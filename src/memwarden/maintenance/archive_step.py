"""Maintain step (off by default): move old daily logs into memory/archive/YYYY-MM/."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

from memwarden.checkpoint.digest.daily_log import local, resolve_timezone
from memwarden.fs.files import check_inside, ensure_dir
from memwarden.maintenance.daily_logs import plan_daily_archive
from memwarden.maintenance.facts import list_files
from memwarden.maintenance.report import StepReport
from memwarden.openclaw.agents import Agent, lost_workspace
from memwarden.process.errors import MemwardenError
from memwarden.process.runtime import JobContext

LOCK_WAIT_SECONDS = 30


def archive_step(context: JobContext, agents: list[Agent], dry_run: bool) -> StepReport | None:
    """Archive each agent's daily logs older than maintain.archive_daily_logs_after_days.

    Return None when archiving is off. A file is moved, never overwritten: an archive that
    already holds the name keeps both and reports it.
    """
    after_days = context.config.maintain.archive_daily_logs_after_days
    if after_days <= 0:
        return None
    report = StepReport("daily_logs")
    today = local_today(context)
    moved_total = 0
    for agent in agents:
        lost = lost_workspace(agent)
        if lost is not None:
            report.fail(f"agent {agent.id}: daily logs not archived: {lost}")
            continue
        try:
            names = [fact.name for fact in list_files(agent.memory_dir)]
            moves = plan_daily_archive(names, today, after_days)
            if not moves:
                continue
            if dry_run:
                report.lines += [
                    f"  {agent.id}: would move {name} to memory/{target}" for name, target in moves
                ]
                moved_total += len(moves)
                continue
            with context.memory_lock(agent.id, LOCK_WAIT_SECONDS):
                moved_total += _move_all(report, agent, moves)
        except (MemwardenError, OSError) as error:
            reason = error.message if isinstance(error, MemwardenError) else str(error)
            report.fail(f"agent {agent.id}: daily logs not archived: {reason}")
    verb = "would archive" if dry_run else "archived"
    report.lines.append(f"daily logs: {verb} {moved_total} older than {after_days} days")
    report.data = {"archived": moved_total}
    return report


def _move_all(report: StepReport, agent: Agent, moves: list[tuple[str, str]]) -> int:
    moved = 0
    for name, relative in moves:
        source = check_inside(agent.memory_dir / name, agent.memory_dir)
        target = agent.memory_dir / relative
        ensure_dir(target.parent, root=agent.workspace)
        target = check_inside(target, agent.memory_dir)
        if not move_without_overwrite(source, target):
            report.fail(f"agent {agent.id}: kept {name}: {target} already exists")
            continue
        moved += 1
        report.lines.append(f"  {agent.id}: moved {name} to memory/{relative}")
    return moved


def move_without_overwrite(source: Path, target: Path) -> bool:
    """Move within one filesystem; return False (nothing moved) if the target exists."""
    try:
        os.link(source, target)
    except FileExistsError:
        return False
    source.unlink()
    return True


def local_today(context: JobContext) -> date:
    """Return today's date in general.timezone (else the machine's local zone)."""
    return local(context.now(), resolve_timezone(context.config.general.timezone)).date()
