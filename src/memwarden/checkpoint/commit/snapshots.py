"""After a run wrote to agents' memory/, let the memory history snapshot their workspaces."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memwarden.checkpoint.outcome import SessionOutcome
    from memwarden.openclaw.agents import Agent
    from memwarden.process.runtime import JobContext


def snapshot_written(
    context: JobContext, agents: list[Agent], outcomes: list[SessionOutcome], trigger: str
) -> list[str]:
    """Snapshot the workspace of every agent a run wrote to, all in one batch (memory history);
    return the problems, one line per agent whose snapshot failed.

    Called once the run's writes are done, INDEX.md and the bootstrap manifest included, so a
    snapshot holds them and a rewind to it keeps them.
    """
    if not context.config.history.enabled:
        return []
    written: dict[str, SessionOutcome] = {}
    for outcome in outcomes:
        if outcome.outcome == "written" and outcome.agent not in written:
            written[outcome.agent] = outcome
    if not written:
        return []
    # lazy: only a run that wrote snapshots memory
    from memwarden.history.plan import SnapshotRequest
    from memwarden.history.snapshots import snapshot_agents

    requests = [
        SnapshotRequest(agent, trigger, written[agent.id].session_key, written[agent.id].session_id)
        for agent in agents
        if agent.id in written
    ]
    problems = []
    for result in snapshot_agents(context, requests):
        if result.problem is not None:
            problems.append(result.problem)
        elif result.snapshot is not None:
            written[result.agent_id].snapshot = result.snapshot.id
    return problems
