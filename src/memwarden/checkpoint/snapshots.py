"""After a run wrote to an agent's memory/, let the memory history take a snapshot of it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memwarden.checkpoint.outcome import SessionOutcome
    from memwarden.openclaw.agents import Agent
    from memwarden.runtime import JobContext


def snapshot_written(
    context: JobContext, agents: list[Agent], outcomes: list[SessionOutcome], trigger: str
) -> list[str]:
    """Snapshot the memory of every agent a checkpoint wrote to (memory history); return the
    problems, one line per agent whose snapshot failed."""
    if not context.config.history.enabled:
        return []
    written = {}
    for outcome in outcomes:
        if outcome.outcome == "written" and outcome.agent not in written:
            written[outcome.agent] = outcome
    if not written:
        return []
    from memwarden.errors import MemwardenError
    from memwarden.history import snapshot

    problems = []
    for agent in agents:
        outcome = written.get(agent.id)
        if outcome is None:
            continue
        try:
            taken = snapshot(
                context,
                agent,
                trigger,
                session_key=outcome.session_key,
                session_id=outcome.session_id,
            )
        except MemwardenError as error:
            problems.append(f"snapshot of agent {agent.id}'s memory failed: {error.message}")
            continue
        outcome.snapshot = taken.id if taken is not None else None
    return problems
