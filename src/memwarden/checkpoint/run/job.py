"""A checkpoint run over the agents (`checkpoint_run`) or one given session
(`checkpoint_session`, which rotate calls before a reset): the agents checkpointed in worker
processes, committed batch by batch as their results arrive (`_Committer`: the journal and read
positions, then the manifests and INDEX.md of the workspaces whose agents are all committed, and
the compaction watch), then the history snapshot. `memwarden.jobs.checkpoint` is the command.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from contextlib import closing
from functools import cached_property
from typing import TYPE_CHECKING, Any

from memwarden.checkpoint.commit.durable_run import durable_writes
from memwarden.checkpoint.outcome import SessionOutcome, job_result
from memwarden.checkpoint.run.agents import (
    AgentResult,
    checkpoint_agent,
    read_and_stage,
    skip_unchanged,
)
from memwarden.checkpoint.run.fanout import checkpoint_in_processes, processes_for
from memwarden.checkpoint.run_state import build_run_state
from memwarden.compactions.ledger import Recorded, to_keep_again
from memwarden.compactions.watch import WatchReport, watch_compactions, watch_into
from memwarden.openclaw.agents import lost_workspace
from memwarden.process.runtime import JobContext, JobResult

if TYPE_CHECKING:
    from memwarden.checkpoint.commit.durable_run import DurableWrites
    from memwarden.checkpoint.run_state import RunState
    from memwarden.openclaw.agents import Agent
    from memwarden.openclaw.sessions import SessionRecord

# How many times `--session KEY` reads its session again when another checkpoint committed it
# first (each retry starts from the position that one left).
SESSION_ATTEMPTS = 3


def checkpoint_run(
    context: JobContext,
    agents: list[Agent],
    *,
    session: SessionRecord | None = None,
    force: bool = False,
    dry_run: bool = False,
) -> JobResult:
    """Checkpoint the chosen sessions of `agents`, or only `session` (of the one agent given),
    commit them with their read positions, refresh the agents' manifests (and INDEX.md),
    snapshot their memory and watch their compactions; return what was done."""
    problems: list[str] = []
    lines: list[str] = []
    with durable_writes(context, dry_run, lines, problems) as writes:
        if session is not None:
            outcome = _checkpoint_committed(
                context,
                writes,
                agents[0],
                session,
                force=force,
                dry_run=dry_run,
                trigger="session",
            )
            outcomes = [outcome]
            written = agents if outcome.outcome == "written" else []
            indexed, failed = _refresh_indexes(
                context, written, dry_run, also=writes.rolled_forward
            )
            problems += failed
        else:
            state = build_run_state(context, dry_run=dry_run, trigger="run", writer=writes.writer)
            committer = _Committer(context, writes, state, agents)
            try:
                results = checkpoint_agents(
                    state,
                    agents,
                    force=force,
                    on_done=committer.done,
                    idle=committer.idle,
                    problems=problems,
                )
            except BaseException:
                committer.commit(refresh=False)  # stopped: keep what is done
                raise
            committer.commit()
            indexed = committer.finish_refresh(also=writes.rolled_forward)
            problems += committer.problems
            outcomes = [outcome for result in results for outcome in result.outcomes]
            watched = committer.watched  # batch by batch
        problems += writes.done()
    if not dry_run:
        # After INDEX.md: a snapshot holds what the run wrote, index and manifest included.
        problems += snapshot_written(context, agents, outcomes, "checkpoint")
    result = job_result(outcomes, dry_run)
    result.lines[1:1] = lines
    if session is not None:
        watched = watch_compactions(context, agents, session_key=session.key, dry_run=dry_run)
    watch_into(result, watched, dry_run=dry_run)
    if indexed:
        result.data["index"] = indexed
    if problems:
        result.problems.extend(problems)
        result.exit_code = 1
    return result


# While worker processes still read, the agents done are committed once this many wait for it.
IDLE_COMMIT_AGENTS = 4


class _Committer:
    """Commits the agents done so far (`checkpoint.commit.durable_run`), refreshes the
    manifests (and INDEX.md) of those it wrote to and watches their compactions: while worker
    processes still read (`idle`), and once all are done."""

    def __init__(
        self, context: JobContext, writes: DurableWrites, state: RunState, agents: list[Agent]
    ) -> None:
        self.context, self.writes, self.state = context, writes, state
        self.order = {agent.id: number for number, agent in enumerate(agents)}
        self.finished: list[tuple[Agent, AgentResult]] = []
        self.committed = 0
        self.problems: list[str] = []
        self.watched = WatchReport()
        # A workspace's manifest is refreshed once every agent of the run that shares it is
        # committed: until then its agents that wrote wait here.
        self.uncommitted = Counter(agent.real_workspace for agent in agents)
        self.waiting: defaultdict[str, list[Agent]] = defaultdict(list)
        self.indexed: list[dict[str, Any]] = []

    @cached_property
    def rewound(self) -> Mapping[str, list[Recorded]]:
        """The compactions to keep again after a rewind: read once a run, not once a batch."""
        return to_keep_again(self.context.state)

    def done(self, agent: Agent, result: AgentResult) -> None:
        self.finished.append((agent, result))

    def idle(self) -> None:
        # Each commit is a transaction at synchronous = FULL: a few agents at a time.
        if len(self.finished) - self.committed >= IDLE_COMMIT_AGENTS:
            self.commit()

    def commit(self, *, refresh: bool = True) -> None:
        batch = self.finished[self.committed :]
        if not batch:
            return
        self.committed = len(self.finished)
        self.problems += self.writes.commit_agents(self.state.stored, batch).problems
        if refresh:
            # Their files are in place: the manifests name them now, while the workers still
            # read (a kill before the run's end has the next run place them and refresh again).
            ready: list[Agent] = []
            for agent, result in batch:
                workspace = agent.real_workspace
                self.uncommitted[workspace] -= 1
                if any(outcome.outcome == "written" for outcome in result.outcomes):
                    self.waiting[workspace].append(agent)
                if not self.uncommitted[workspace]:
                    ready += self.waiting.pop(workspace, [])
            indexed, failed = _refresh_indexes(self.context, ready, self.state.dry_run)
            self.indexed += indexed
            self.problems += failed
            # An agent settled by the fast skip has no new line anywhere: no new compaction
            # either. The watch looks at the conversations as this run read them: each store
            # read once.
            if watched := [agent for agent, result in batch if not result.skipped_fast]:
                watch_compactions(
                    self.context,
                    watched,
                    dry_run=self.state.dry_run,
                    sessions={a.id: r.sessions for a, r in batch if r.sessions is not None},
                    report=self.watched,
                    rewound=self.rewound,
                )
        # Drop what a committed agent's result no longer needs (its conversations as read, what
        # they hold): the run keeps only the outcomes, so its memory does not grow with the fleet.
        for _, result in batch:
            result.sessions = None
            for outcome in result.outcomes:
                outcome.update = None

    def finish_refresh(self, *, also: Sequence[str]) -> list[dict[str, Any]]:
        """Refresh the agents `also` names that no batch refreshed; return every workspace
        refreshed, in the order of its first agent, those of `also` alone last."""
        refreshed = {agent for item in self.indexed for agent in item["agents"]}
        also = [agent for agent in also if agent not in refreshed]
        indexed, failed = _refresh_indexes(self.context, [], self.state.dry_run, also=also)
        self.indexed += indexed
        self.problems += failed
        return sorted(
            self.indexed,
            key=lambda item: min(
                self.order.get(agent, len(self.order)) for agent in item["agents"]
            ),
        )


def _refresh_indexes(
    context: JobContext,
    written: list[Agent],
    dry_run: bool,
    *,
    also: Sequence[str] = (),
) -> tuple[list[dict[str, Any]], list[str]]:
    """Refresh the bootstrap manifest (and INDEX.md) of the agents this run wrote to
    (`written`), and of the agents `also` names (whose files it finished for a killed run);
    return the outcomes and one problem line per workspace that failed."""
    written_ids = {agent.id for agent in written}
    changed = written + [
        agent
        for agent in context.deployment.agents
        if agent.id in also and agent.id not in written_ids and agent.workspace.is_dir()
    ]
    if not changed:
        return [], []
    refreshed = refresh_bootstrap(context, changed, dry_run=dry_run)
    return refreshed, [
        f"index {item['workspace']}: {item.get('error') or 'failed'}"
        for item in refreshed
        if item.get("status") == "failed"
    ]


def refresh_bootstrap(
    context: JobContext, agents: list[Agent], *, dry_run: bool = False
) -> list[dict[str, Any]]:
    """Rewrite the bootstrap manifest of the agents' workspaces, so the hook injects the
    handoffs just written into their sessions, and rebuild INDEX.md when
    `index.after_checkpoint` is on. Return one outcome dict per workspace (never raises for
    one workspace's failure: its `status` is failed).
    """
    # lazy: only a run that wrote refreshes the bootstrap
    from memwarden.indexing.refresh import index_agents

    write_index = context.config.index.after_checkpoint
    return index_agents(context, agents, dry_run=dry_run, write_index=write_index)


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


def checkpoint_session(context: JobContext, agent: Agent, session: SessionRecord) -> SessionOutcome:
    """Given a context, an agent and one of its sessions, checkpoint exactly that session.

    For the rotate job, right before it resets the session: reset only when `.ok`. The session
    is read and written even when nothing is new or it is under the size minimums. Never raises
    for a problem of the session itself (it is a `failed` outcome, as is one putting its files in
    place: the journal keeps them for the next run); the files and the state DB are committed
    together (`checkpoint.commit.durable_run`), and a problem flushing their folder, or
    refreshing the manifests of the agents whose files it finished for a killed run, is in
    `warnings`. The caller snapshots the agent's memory once it has refreshed INDEX.md
    (`snapshot_written`).
    """
    lines: list[str] = []
    problems: list[str] = []
    with durable_writes(context, False, lines, problems) as writes:
        outcome = _checkpoint_committed(
            context, writes, agent, session, force=True, dry_run=False, trigger="rotate"
        )
        # Finished for a killed run: their manifests too.
        _, failed = _refresh_indexes(context, [], False, also=writes.rolled_forward)
        problems += failed
        # The caller refreshes its agent's manifest (rotate: before the reset, which it holds back
        # unless the manifest lists the handoff).
        problems += writes.done()
    outcome.warnings[:0] = problems
    return outcome


def _checkpoint_committed(
    context: JobContext,
    writes: DurableWrites,
    agent: Agent,
    session: SessionRecord,
    *,
    force: bool,
    dry_run: bool,
    trigger: str,
) -> SessionOutcome:
    """Checkpoint one session and commit it; when another checkpoint committed the same
    session first (the scheduled run beside `--session`), read it again from where that one
    left it, up to SESSION_ATTEMPTS times."""
    # lazy: only `--session` and rotate read one session here
    from memwarden.checkpoint.run.session import checkpoint_one

    def read(run: RunState) -> AgentResult:
        # Not chosen by the selection rules: written even under the size minimums; when not
        # `force`, left alone when nothing is new since the last run. No record kept: the
        # agent's files may now hold this session, its next run looks again.
        return AgentResult([checkpoint_one(run, agent, session, force=force, ignore_minimum=True)])

    for _attempt in range(SESSION_ATTEMPTS):
        state = build_run_state(context, dry_run=dry_run, trigger=trigger, writer=writes.writer)
        result = read_and_stage(state, agent, read)
        (outcome,) = result.outcomes
        report = writes.commit_agents(state.stored, [(agent, result)])
        if agent.id not in report.conflicts:
            break
    if report.problems:  # its files are not in place: a reset now would lose them
        outcome.finish("failed", "; ".join(report.problems))
    return outcome


def checkpoint_agents(
    state: RunState,
    agents: list[Agent],
    *,
    force: bool,
    on_done: Callable[[Agent, AgentResult], None],
    idle: Callable[[], None],
    problems: list[str],
) -> list[AgentResult]:
    """Checkpoint every agent; return their results in order.

    An agent whose workspace is gone though it has sessions fails at once (`lost_workspace`).
    Agents whose store and transcripts did not change are settled next, with a few stats
    each. The others are checkpointed in `checkpoint.workers` processes (checkpoint.run.fanout),
    whose failures are added to `problems`. `on_done(agent, result)` is called in this process
    as soon as each agent's result is here, so a run stopped part way can still commit what the
    agents done so far staged; `idle()` whenever it waits for a worker process.
    """

    settled: dict[str, AgentResult] = {}
    for agent in agents:
        lost = lost_workspace(agent)
        if lost is not None:
            failed = SessionOutcome(agent.id, str(agent.workspace), "failed", lost)
            settled[agent.id] = AgentResult([failed])
        elif not force and (result := skip_unchanged(state, agent)) is not None:
            settled[agent.id] = result
        else:
            continue
        on_done(agent, settled[agent.id])
    pending = [agent for agent in agents if agent.id not in settled]
    processes = processes_for(state.settings.workers, len(pending))
    if processes <= 1:
        done = ((agent, checkpoint_agent(state, agent, force=force)) for agent in pending)
    else:
        done = checkpoint_in_processes(
            state,
            pending,
            processes,
            lambda run, agent: checkpoint_agent(run, agent, force=force),
            problems,
            idle,
        )
    with closing(done):  # stopped here (SIGTERM): the workers are killed at once
        for agent, result in done:
            settled[agent.id] = result
            on_done(agent, result)
    return [settled[agent.id] for agent in agents]
