"""`memwarden index`: rebuild memory/INDEX.md and the bootstrap hook's manifest per workspace.

For every agent workspace (agents sharing one are indexed once) whose memory pool passes
`index.threshold_kb`, write `memory/INDEX.md` (condensed to fit the gateway's per-file bootstrap
cap) and `memory/.memwarden-bootstrap.json`, which tells the memory-index-inject hook what to
inject. Below the threshold the manifest is removed, so the hook injects nothing. The file is
rewritten only when something besides its generation time changed; the digest of what it was
made from is kept in the state DB, so an unchanged folder costs a scan of its stat results.
Then the memory history snapshots the workspaces indexed (only when something changed since
their last snapshot).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from memwarden.history.plan import SnapshotRequest
from memwarden.history.snapshots import snapshot_agents
from memwarden.indexing.outcome import Outcome, job_result
from memwarden.indexing.refresh import index_targets
from memwarden.indexing.targets import Target, agent_targets, workspace_targets
from memwarden.jobs.common import add_agent_filter, add_dry_run, select_agents
from memwarden.process.runtime import JobContext, JobResult


def add_arguments(parser: argparse.ArgumentParser) -> None:
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument(
        "--workspace",
        type=Path,
        action="append",
        metavar="DIR",
        help="index this workspace folder (repeatable); default: every agent's workspace",
    )
    add_agent_filter(chosen)
    parser.add_argument(
        "--force",
        action="store_true",
        help="index even when the memory pool is under index.threshold_kb",
    )
    add_dry_run(parser)


def run(context: JobContext, options: argparse.Namespace) -> JobResult:
    if options.workspace:
        targets = workspace_targets(context, options.workspace)
    else:
        targets = agent_targets(context, select_agents(context.deployment, options.agent))
    outcomes = index_targets(context, targets, force=options.force, dry_run=options.dry_run)
    result = job_result(outcomes, dry_run=options.dry_run)
    if not options.dry_run:
        problems = _snapshot(context, targets, outcomes)
        result.problems += problems
        result.exit_code = 1 if problems else result.exit_code
    return result


def _snapshot(context: JobContext, targets: list[Target], outcomes: list[Outcome]) -> list[str]:
    """Snapshot the workspaces indexed (memory history, trigger `index`), so a rewrite of their
    files between two checkpoints is caught; return one problem line per agent that failed."""
    if not context.config.history.enabled:
        return []

    indexed = {
        agent_id
        for target, outcome in zip(targets, outcomes, strict=True)
        if outcome.status not in ("failed", "no_workspace")
        for agent_id in target.agents
    }
    agents = [agent for agent in context.deployment.agents if agent.id in indexed]
    requests = [SnapshotRequest(agent, "index") for agent in agents]
    return [result.problem for result in snapshot_agents(context, requests) if result.problem]
