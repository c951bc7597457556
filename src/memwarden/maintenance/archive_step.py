"""Maintain step (off by default): move old daily logs (memory/YYYY-MM-DD.md) into
memory/archive/YYYY-MM/."""

from __future__ import annotations

import os
import re
from contextlib import nullcontext
from datetime import date
from pathlib import Path

from memwarden.checkpoint.digest.daily_log import local, resolve_timezone
from memwarden.fs.files import check_inside, ensure_dir
from memwarden.maintenance.facts import list_files
from memwarden.maintenance.report import StepReport
from memwarden.openclaw.agents import Agent, lost_workspace
from memwarden.process.errors import MemwardenError
from memwarden.process.runtime import JobContext

LOCK_WAIT_SECONDS = 30
_DAILY = re.compile(r"^(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})\.md$")
ARCHIVE_DIR = "archive"


def archive_step(context: JobContext, agents: list[Agent], dry_run: bool) -> StepReport | None:
    """Archive each agent's daily logs older than maintain.archive_daily_logs_after_days.

    Return None when archiving is off. A file is moved, never overwritten: an archive that
    already holds the name keeps both and reports it.
    """
    after_days = context.config.maintain.archive_daily_logs_after_days
    if after_days <= 0:
        return None
    report = StepReport("daily_logs")
    # Today in general.timezone (else the machine's local zone).
    today = local(context.now(), resolve_timezone(context.config.general.timezone)).date()
    moved = "would move" if dry_run else "moved"
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
            locked = nullcontext() if dry_run else context.memory_lock(agent.id, LOCK_WAIT_SECONDS)
            with locked:
                for name, relative in moves:
                    if move_or_refuse(report, agent.id, agent, name, relative, dry_run):
                        moved_total += 1
                        report.lines.append(f"  {agent.id}: {moved} {name} to memory/{relative}")
        except (MemwardenError, OSError) as error:
            report.fail(f"agent {agent.id}: daily logs not archived: {error}")
    verb = "would archive" if dry_run else "archived"
    report.lines.append(f"daily logs: {verb} {moved_total} older than {after_days} days")
    report.data = {"archived": moved_total}
    return report


def plan_daily_archive(names: list[str], today: date, after_days: int) -> list[tuple[str, str]]:
    """Given the names in a memory folder, return (name, relative target) for logs to archive.

    A daily log is archived when its date is more than `after_days` days before `today`; its
    target is `archive/YYYY-MM/<name>`. Names that are not valid dates are left alone.
    """
    moves = []
    for name in sorted(names):
        match = _DAILY.match(name)
        if match is None:
            continue
        try:
            day = date(int(match["year"]), int(match["month"]), int(match["day"]))
        except ValueError:
            continue
        if (today - day).days > after_days:
            moves.append((name, f"{ARCHIVE_DIR}/{day:%Y-%m}/{name}"))
    return moves


def move_or_refuse(
    report: StepReport, label: str, agent: Agent, name: str, relative: str, dry_run: bool
) -> bool:
    """Move the agent's memory/<name> to memory/<relative> (making its folders), never through
    a link out of memory/ (a dry run: only see that it could); when another file already holds
    that name, fail the report for agent(s) `label`. Return whether it moved (would move)."""
    memory = agent.memory_dir
    source, target = memory / name, memory / relative
    if dry_run:
        taken = os.path.lexists(target) and not _same_file(source, target)
    else:
        source = check_inside(source, memory)
        ensure_dir(target.parent, root=agent.workspace)
        try:
            os.link(source, check_inside(target, memory))
            taken = False
        except FileExistsError:
            # the same file under both names: a run killed between the link and the unlink
            taken = not _same_file(source, target)
    if taken:
        report.fail(
            f"agent {label}: {target}: a file of that name is already there, and memwarden "
            f"never replaces one: compare it with {memory / name} and move one away; {name} "
            "stays where it is"
        )
    elif not dry_run:
        source.unlink()
    return not taken


def _same_file(one: Path, other: Path) -> bool:
    """Return whether two names are links to one file (never through a symlink)."""
    try:
        return os.path.samestat(os.lstat(one), os.lstat(other))
    except OSError:
        return False
