"""Maintain step: archive the handoffs of conversations idle longer than
`maintain.archive_handoffs_after_days` (and forget what those conversations held), then refresh
the index and the hook's manifest.

A conversation is idle since the later of its last update in the session store and its handoff
file's last change; one idle longer than the limit has its handoff archived, named with the
date it went idle (`archive/sessions/<name>.<YYYY-MM-DD>.md`), so a conversation archived
twice keeps both. The main session's ACTIVE_CONTEXT.md is never a candidate: checkpoint keeps
it for the agent's main session, active or not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime

from memwarden.agent_memory.handoff_files import (
    ACTIVE_CONTEXT,
    HandoffFile,
    is_file_of,
    main_file_agents,
    read_handoffs,
)
from memwarden.checkpoint.commit.positions import forget_conversation
from memwarden.maintenance.archive_step import LOCK_WAIT_SECONDS, move_or_refuse
from memwarden.maintenance.report import StepReport
from memwarden.openclaw.agents import Agent
from memwarden.openclaw.sessions import load_sessions
from memwarden.process.errors import MemwardenError
from memwarden.process.runtime import JobContext

ARCHIVE_FOLDER = "archive/sessions"
DAY_SECONDS = 86_400


@dataclass(frozen=True)
class ArchiveMove:
    """One handoff to archive: from `name` to `target` (both relative to memory/)."""

    name: str
    target: str
    session: str
    idle_since: float


def plan_handoff_archive(
    handoffs: Sequence[HandoffFile],
    last_updates: Mapping[str, float],
    now: float,
    after_days: int,
) -> list[ArchiveMove]:
    """Given the handoffs (each naming its session), the last update (Unix seconds) of each
    session key the stores know, the time now and the limit in days, return the handoffs to
    archive, by name."""
    moves = []
    for handoff in sorted(handoffs, key=lambda fact: fact.name):
        idle_since = max(handoff.mtime, last_updates.get(handoff.session, 0.0))
        if now - idle_since <= after_days * DAY_SECONDS:
            continue
        stem = handoff.name.rsplit("/", 1)[-1].removesuffix(".md")
        day = datetime.fromtimestamp(idle_since, UTC).date().isoformat()
        moves.append(
            ArchiveMove(
                handoff.name, f"{ARCHIVE_FOLDER}/{stem}.{day}.md", handoff.session, idle_since
            )
        )
    return moves


def handoff_step(context: JobContext, agents: list[Agent], dry_run: bool) -> StepReport | None:
    """Archive, per workspace of `agents`, the handoffs of idle conversations; return None when
    archiving is off. A workspace whose session stores cannot be read is left as it is."""
    after_days = context.config.maintain.archive_handoffs_after_days
    if after_days <= 0:
        return None
    report = StepReport("handoffs")
    keeping = main_file_agents(context.deployment.agents)
    archived = 0
    for sharing in _workspaces(context, agents):
        label = ", ".join(agent.id for agent in sharing)
        try:
            moves = _plan(context, sharing, keeping, after_days)
            moved = _move_all(context, report, sharing, label, moves, dry_run)
            archived += moved
            if moved and not dry_run:
                _refresh(context, report, sharing)
        except (MemwardenError, OSError) as error:
            report.fail(f"agent {label}: handoffs not archived: {error}")
    verb = "would archive" if dry_run else "archived"
    report.lines.append(
        f"handoffs: {verb} {archived} of conversations idle for more than {after_days} days"
    )
    report.data = {"archived": archived}
    return report


def _workspaces(context: JobContext, agents: list[Agent]) -> list[list[Agent]]:
    """Return, for each workspace of `agents` (by real path), every agent that uses it."""
    wanted = {agent.real_workspace for agent in agents}
    by_workspace: dict[str, list[Agent]] = {}
    for agent in context.deployment.agents:
        real = agent.real_workspace
        if real in wanted:
            by_workspace.setdefault(real, []).append(agent)
    return list(by_workspace.values())


def _plan(
    context: JobContext, sharing: list[Agent], keeping: frozenset[str], after_days: int
) -> list[ArchiveMove]:
    memory = sharing[0].memory_dir
    if not memory.is_dir():
        return []
    found = read_handoffs(memory, [agent.id for agent in sharing])
    handoffs = [
        file
        for file in found
        if file.name != ACTIVE_CONTEXT
        and file.session is not None
        and is_file_of(file.name, file.session, keeping)
    ]
    if not handoffs:
        return []
    last_updates: dict[str, float] = {}
    for agent in sharing:
        for record in load_sessions(agent):  # StoreError: the workspace is left as it is
            if record.updated_at is not None:
                last_updates[record.key.lower()] = record.updated_at / 1000
    now = context.now().timestamp()
    return plan_handoff_archive(handoffs, last_updates, now, after_days)


def _move_all(
    context: JobContext,
    report: StepReport,
    sharing: list[Agent],
    label: str,
    moves: list[ArchiveMove],
    dry_run: bool,
) -> int:
    """Move each handoff (a dry run: say it would), or say why not, for the agents sharing a
    workspace (`label` names them); return how many moved."""
    if not moves:
        return 0
    moved, ids = 0, [agent.id for agent in sharing]
    with ExitStack() as locks:
        if not dry_run:
            for agent in sharing:
                locks.enter_context(context.memory_lock(agent.id, LOCK_WAIT_SECONDS))
        for move in moves:
            if not move_or_refuse(report, label, sharing[0], move.name, move.target, dry_run):
                continue
            moved += 1
            if dry_run:
                report.lines.append(f"  {label}: would move {_describe(move)}")
                continue
            forget_conversation(context.state, ids, move.session)
            report.lines.append(f"  {sharing[0].id}: moved {_describe(move)}")
    return moved


def _refresh(context: JobContext, report: StepReport, sharing: list[Agent]) -> None:
    """Rebuild the manifest (and INDEX.md), so no session is given an archived handoff."""
    # lazy: only a run that archived a handoff refreshes the index
    from memwarden.indexing.refresh import index_agents

    for item in index_agents(context, sharing):
        if item.get("status") == "failed":
            report.fail(f"index {item['workspace']}: {item.get('error') or 'failed'}")


def _describe(move: ArchiveMove) -> str:
    idle = datetime.fromtimestamp(move.idle_since, UTC).date().isoformat()
    return f"memory/{move.name} to memory/{move.target} (`{move.session}`, idle since {idle})"
