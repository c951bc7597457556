"""`memwarden checkpoint`: write what each conversation was doing into its workspace, no LLM.

For every agent (or `--agent ID`), choose its conversations from the session store, read what
is new in each transcript, and write that conversation's handoff (`memory/ACTIVE_CONTEXT.md` for
the main session, `memory/sessions/<conversation>.md` for the others) and an entry in
`memory/YYYY-MM-DD.md`, secrets masked, all committed at once with the read positions (a
journal the next run finishes after a kill: `checkpoint.commit`); then the bootstrap manifest,
so the hook injects each handoff into its own session. A session with nothing new since the
last run is skipped after one stat. `--session KEY` checkpoints that one session, even under
the size minimums (the session-summary hook runs it before a reset or a compaction; the rotate
job calls `checkpoint_session` before a reset).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from contextlib import closing
from functools import partial
from typing import TYPE_CHECKING, Any

from memwarden.jobs.common import add_agent_filter, add_dry_run
from memwarden.runtime import JobContext, JobResult

if TYPE_CHECKING:
    from memwarden.checkpoint.agents import AgentResult
    from memwarden.checkpoint.durable_run import DurableWrites
    from memwarden.checkpoint.outcome import SessionOutcome
    from memwarden.checkpoint.run_state import RunState
    from memwarden.openclaw.agents import Agent
    from memwarden.openclaw.sessions import SessionRecord


# How many times `--session KEY` reads its session again when another checkpoint committed it
# first (each retry starts from the position that one left).
SESSION_ATTEMPTS = 3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_agent_filter(parser)
    parser.add_argument(
        "--session",
        metavar="KEY",
        help="checkpoint only this session (e.g. agent:main:main), even under the size "
        "minimums; its agent comes from the key (or --agent for a key without one)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="read and rewrite even when nothing is new since the last run",
    )
    add_dry_run(parser)


def lock_name(options: argparse.Namespace) -> str | None:
    """Return the run lock to take: none for `--session KEY`.

    The session-summary hook runs `checkpoint --session KEY` right before a compaction; it
    must not be turned away because the scheduled run holds the job lock. A session is committed
    only if no other checkpoint committed it since it was read (`checkpoint.commit`), and its
    renames take the agent's memory lock, so the two never log the same messages nor interleave
    in a workspace.
    """
    return None if options.session else "checkpoint"


def run(context: JobContext, options: argparse.Namespace) -> JobResult:
    """Checkpoint the chosen sessions of every selected agent; return what was done."""
    from memwarden.checkpoint.durable_run import durable_writes
    from memwarden.checkpoint.report import job_result
    from memwarden.checkpoint.snapshots import snapshot_written
    from memwarden.compactions.watch import watch_into

    dry_run = bool(options.dry_run)
    problems: list[str] = []
    lines: list[str] = []
    with durable_writes(context, dry_run, lines, problems) as writes:
        if options.session:
            agent, session = _find_session(context, options.session, options.agent)
            agents = [agent]
            read = agents
            outcome = _checkpoint_committed(
                context,
                writes,
                agent,
                session,
                force=bool(options.force),
                dry_run=dry_run,
                trigger="session",
            )
            outcomes = [outcome]
        else:
            from memwarden.checkpoint.run_state import build_run_state
            from memwarden.jobs.common import select_agents

            agents = select_agents(context.deployment, options.agent)
            state = build_run_state(context, dry_run=dry_run, trigger="run", writer=writes.writer)
            committer = _Committer(context, writes, state)
            try:
                results = checkpoint_agents(
                    state,
                    agents,
                    force=bool(options.force),
                    on_done=committer.done,
                    idle=partial(committer.commit_at_least, IDLE_COMMIT_AGENTS),
                    problems=problems,
                )
            except BaseException:
                committer.commit(watch=False)  # stopped: keep what is done
                raise
            committer.commit()
            problems += committer.problems
            outcomes = [outcome for result in results for outcome in result.outcomes]
            read = []  # watched by the committer, batch by batch
        # Once every agent is in place (the workers done): the manifests, flushed one by one.
        indexed, index_problems = _refresh_indexes(
            context, agents, outcomes, dry_run, also=writes.rolled_forward
        )
        problems += index_problems
        problems += writes.done()
    if not dry_run:
        # After INDEX.md: a snapshot holds what the run wrote, index and manifest included.
        problems += snapshot_written(context, agents, outcomes, "checkpoint")
    result = job_result(outcomes, dry_run)
    result.lines[1:1] = lines
    watch_into(
        result,
        context,
        read,
        session_key=options.session,
        dry_run=dry_run,
        watched=None if options.session else committer.watched,
    )
    if indexed is not None:
        result.data["index"] = indexed
    if problems:
        result.problems.extend(problems)
        result.exit_code = 1
    return result


# While worker processes still read, the agents done are committed once this many wait for it.
IDLE_COMMIT_AGENTS = 4


class _Committer:
    """Commits the agents done so far (`checkpoint.commit`) and watches their compactions:
    while worker processes still read (`idle`), and once all are done."""

    def __init__(self, context: JobContext, writes: DurableWrites, state: RunState) -> None:
        self.context, self.writes, self.state = context, writes, state
        self.finished: list[tuple[Agent, AgentResult]] = []
        self.committed = 0
        self.problems: list[str] = []
        from memwarden.compactions.watch import WatchReport

        self.watched = WatchReport()

    def done(self, agent: Agent, result: AgentResult) -> None:
        self.finished.append((agent, result))

    def commit_at_least(self, agents: int) -> None:
        # Each commit is a transaction at synchronous = FULL: a few agents at a time.
        if len(self.finished) - self.committed >= agents:
            self.commit()

    def commit(self, *, watch: bool = True) -> None:
        batch = self.finished[self.committed :]
        if not batch:
            return
        self.committed = len(self.finished)
        self.problems += self.writes.commit_agents(self.state, batch).problems
        if watch:
            self._watch(batch)
        _release(batch)

    def _watch(self, batch: list[tuple[Agent, AgentResult]]) -> None:
        # An agent settled by the fast skip has no new line anywhere: no new compaction either.
        # The watch looks at the conversations as this run read them: each store read once.
        from memwarden.compactions.watch import watch_compactions

        watch_compactions(
            self.context,
            [agent for agent, result in batch if not result.skipped_fast],
            dry_run=self.state.dry_run,
            sessions={a.id: r.sessions for a, r in batch if r.sessions is not None},
            report=self.watched,
        )


def _release(batch: list[tuple[Agent, AgentResult]]) -> None:
    """Drop what a committed agent's result no longer needs (its conversations as read, what
    they hold): the run keeps only the outcomes, so its memory does not grow with the fleet."""
    for _, result in batch:
        result.sessions = None
        for outcome in result.outcomes:
            outcome.update = None


def _refresh_indexes(
    context: JobContext,
    agents: list[Agent],
    outcomes: list[SessionOutcome],
    dry_run: bool,
    *,
    also: Sequence[str] = (),
) -> tuple[list[dict[str, Any]] | None, list[str]]:
    """Refresh the bootstrap manifest (and INDEX.md) of the agents this run wrote to, and of
    the agents `also` names (whose files it finished for a killed run).

    Return the outcomes (None when nothing was indexed) and one problem line per workspace that
    failed.
    """
    from memwarden.checkpoint.outcome import written_agents

    changed = written_agents(agents, outcomes)
    if also:
        listed = {agent.id for agent in changed}
        changed += [
            agent
            for agent in context.deployment.agents
            if agent.id in also and agent.id not in listed and agent.workspace.is_dir()
        ]
    if not changed:
        return None, []
    indexed = refresh_bootstrap(context, changed, dry_run=dry_run)
    problems = [
        f"index {item['workspace']}: {item.get('error') or 'failed'}"
        for item in indexed
        if item.get("status") == "failed"
    ]
    return indexed, problems


def refresh_bootstrap(
    context: JobContext, agents: list[Agent], *, dry_run: bool = False
) -> list[dict[str, Any]]:
    """Rewrite the bootstrap manifest of the agents' workspaces, so the hook injects the
    handoffs just written into their sessions, and rebuild INDEX.md when
    `index.after_checkpoint` is on. Return one outcome dict per workspace (never raises for
    one workspace's failure: its `status` is failed).
    """
    from memwarden.indexing.refresh import index_agents

    write_index = context.config.index.after_checkpoint
    return index_agents(context, agents, dry_run=dry_run, write_index=write_index)


def checkpoint_session(
    context: JobContext,
    agent: Agent,
    session: SessionRecord,
    *,
    force: bool = True,
    dry_run: bool = False,
    trigger: str = "rotate",
) -> SessionOutcome:
    """Given a context, an agent and one of its sessions, checkpoint exactly that session.

    For the rotate job, right before it resets the session: reset only when `.ok`. With
    `force` (the default) the session is read and written even when nothing is new or it is
    under the size minimums. Never raises for a problem of the session itself (it is a
    `failed` outcome); unless `dry_run`, the files and the state DB are committed together
    (`checkpoint.commit`), and a problem putting the files in place is in `warnings`. The caller
    snapshots the agent's memory once it has refreshed INDEX.md
    (`checkpoint.snapshots.snapshot_written`).
    """
    from memwarden.checkpoint.durable_run import durable_writes

    lines: list[str] = []
    problems: list[str] = []
    with durable_writes(context, dry_run, lines, problems) as writes:
        outcome = _checkpoint_committed(
            context, writes, agent, session, force=force, dry_run=dry_run, trigger=trigger
        )
        # Finished for a killed run: their manifests too.
        _refresh_indexes(context, [], [], dry_run, also=writes.rolled_forward)
        # The caller refreshes its agent's manifest (rotate: after the reset).
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
    from memwarden.checkpoint.agents import AgentResult, stage_files, with_files
    from memwarden.checkpoint.run_state import build_run_state

    for _attempt in range(SESSION_ATTEMPTS):
        state = with_files(
            build_run_state(context, dry_run=dry_run, trigger=trigger, writer=writes.writer),
            agent,
        )
        outcome = _checkpoint_single(state, agent, session, force=force)
        # No record kept: the agent's files may now hold this session, its next run looks again.
        result = AgentResult([outcome], staged=stage_files(state))
        report = writes.commit_agents(state, [(agent, result)])
        outcome.warnings += report.problems
        if agent.id not in report.conflicts:
            return outcome
    return outcome


def checkpoint_agents(
    state: RunState,
    agents: list[Agent],
    *,
    force: bool,
    on_done: Callable[[Agent, AgentResult], None] | None = None,
    idle: Callable[[], None] | None = None,
    problems: list[str] | None = None,
) -> list[AgentResult]:
    """Checkpoint every agent; return their results in order.

    An agent whose workspace is gone though it has sessions fails at once (`lost_workspace`).
    Agents whose store and transcripts did not change are settled next, with a few stats
    each. The others are checkpointed in `checkpoint.workers` processes (checkpoint.fanout),
    whose failures are added to `problems`. `on_done(agent, result)` is called in this process
    as soon as each agent's result is here, so a run stopped part way can still commit what the
    agents done so far staged; `idle()` whenever it waits for a worker process.
    """
    from memwarden.checkpoint.agents import AgentResult, checkpoint_agent, skip_unchanged
    from memwarden.checkpoint.fanout import checkpoint_in_processes, processes_for
    from memwarden.checkpoint.outcome import SessionOutcome
    from memwarden.openclaw.agents import lost_workspace

    def finished(agent: Agent, result: AgentResult) -> AgentResult:
        if on_done is not None:
            on_done(agent, result)
        return result

    settled = {}
    for agent in agents:
        lost = lost_workspace(agent)
        if lost is not None:
            failed = SessionOutcome(agent.id, str(agent.workspace), "failed", lost)
            settled[agent.id] = finished(agent, AgentResult([failed]))
    if not force:
        for agent in agents:
            if agent.id in settled:
                continue
            result = skip_unchanged(state, agent)
            if result is not None:
                settled[agent.id] = finished(agent, result)
    pending = [agent for agent in agents if agent.id not in settled]
    processes = processes_for(state.settings.workers, len(pending))
    if processes <= 1:
        for agent in pending:
            settled[agent.id] = finished(agent, checkpoint_agent(state, agent, force=force))
    else:
        done = checkpoint_in_processes(
            state,
            pending,
            processes,
            lambda run, agent: checkpoint_agent(run, agent, force=force),
            problems if problems is not None else [],
            idle,
        )
        with closing(done):  # stopped here (SIGTERM): the workers are killed at once
            for agent, result in done:
                settled[agent.id] = finished(agent, result)
    return [settled[agent.id] for agent in agents]


def _checkpoint_single(
    state: RunState, agent: Agent, session: SessionRecord, *, force: bool
) -> SessionOutcome:
    """Checkpoint one given session (not chosen by the selection rules), even under the size
    minimums; when not `force`, left alone when nothing is new since the last run."""
    from memwarden.checkpoint.agents import release_gateway_database
    from memwarden.checkpoint.session import checkpoint_one

    try:
        return checkpoint_one(state, agent, session, force=force, ignore_minimum=True)
    finally:
        release_gateway_database(agent)


def _find_session(
    context: JobContext, key: str, agent_ids: list[str] | None
) -> tuple[Agent, SessionRecord]:
    """Return the agent and record of session `key`. Raise UsageError if there is none."""
    from memwarden.errors import UsageError
    from memwarden.jobs.common import select_agents, writable
    from memwarden.openclaw.keys import classify
    from memwarden.openclaw.sessions import load_sessions

    deployment = context.deployment
    info = classify(key)
    if info.agent_id is not None:
        agents = select_agents(deployment, [info.agent_id])
    elif agent_ids:
        agents = select_agents(deployment, agent_ids[:1])
    else:
        agents = [writable(deployment, deployment.default_agent())]
    agent = agents[0]
    for record in load_sessions(agent):
        if record.key.lower() == info.key:
            return agent, record
    raise UsageError(
        f"agent {agent.id} has no session {key!r}; `memwarden sessions --agent {agent.id} --all` "
        "lists its sessions"
    )
