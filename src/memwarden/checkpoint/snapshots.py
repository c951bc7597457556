"""After a run wrote to agents' memory/, let the memory history snapshot their workspaces."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from memwarden.checkpoint.outcome import SessionOutcome, written_agents

if TYPE_CHECKING:
    from memwarden.history.early import EarlyBatch
    from memwarden.openclaw.agents import Agent
    from memwarden.runtime import JobContext


class RunSnapshots:
    """The snapshots of what one run wrote: begun as its agents' files are final (`send_ahead`,
    once or per batch of agents: git hashes and compresses them while the run goes on), taken
    once every write is done (`take`)."""

    def __init__(self, context: JobContext, trigger: str, dry_run: bool) -> None:
        self.context = context
        self.trigger = trigger
        self.dry_run = dry_run
        self.early: EarlyBatch | None = None

    def send_ahead(self, agents: list[Agent], outcomes: list[SessionOutcome]) -> None:
        """Send the history's git process (started on the first call) the files of the agents
        written to, once their files are final: committed, manifests and INDEX.md refreshed."""
        if self.dry_run or not self.context.config.history.enabled:
            return
        written = written_agents(agents, outcomes)
        if not written:
            return
        if self.early is None:
            from memwarden.history.early import EarlyBatch

            self.early = EarlyBatch(self.context)
        self.early.send(written)

    def take(self, agents: list[Agent], outcomes: list[SessionOutcome]) -> list[str]:
        """Snapshot the agents written to (see `snapshot_written`), then release the store;
        return the problems."""
        if self.dry_run:
            return []
        try:
            return snapshot_written(self.context, agents, outcomes, self.trigger, self.early)
        finally:
            self.close()

    def close(self) -> None:
        """Stop git if nothing was committed through it; release the store's lock."""
        if self.early is not None:
            self.early.close()


@contextmanager
def run_snapshots(context: JobContext, trigger: str, dry_run: bool) -> Iterator[RunSnapshots]:
    """Yield the run's RunSnapshots; its git process and store lock end with the block."""
    snapshots = RunSnapshots(context, trigger, dry_run)
    try:
        yield snapshots
    finally:
        snapshots.close()


def snapshot_written(
    context: JobContext,
    agents: list[Agent],
    outcomes: list[SessionOutcome],
    trigger: str,
    early: EarlyBatch | None = None,
) -> list[str]:
    """Snapshot the workspace of every agent a run wrote to, all in one batch (memory history);
    return the problems, one line per agent whose snapshot failed.

    Called once the run's writes are done, INDEX.md and the bootstrap manifest included, so a
    snapshot holds them and a rewind to it keeps them. `early`: the git process started before
    those last writes, and the files sent to it (`RunSnapshots.send_ahead`).
    """
    if not context.config.history.enabled:
        return []
    written: dict[str, SessionOutcome] = {}
    for outcome in outcomes:
        if outcome.outcome == "written" and outcome.agent not in written:
            written[outcome.agent] = outcome
    if not written:
        return []
    from memwarden.history.plan import SnapshotRequest
    from memwarden.history.snapshots import snapshot_agents

    requests = [
        SnapshotRequest(agent, trigger, written[agent.id].session_key, written[agent.id].session_id)
        for agent in agents
        if agent.id in written
    ]
    problems = []
    for result in snapshot_agents(context, requests, early=early):
        if result.problem is not None:
            problems.append(result.problem)
        elif result.snapshot is not None:
            written[result.agent_id].snapshot = result.snapshot.id
    return problems
