"""`memwarden checkpoint`: write what each conversation was doing into its workspace, no LLM.

For every agent (or `--agent ID`), choose its conversations from the session store, read the
tail of each transcript, and write that conversation's handoff (`memory/ACTIVE_CONTEXT.md` for
the main session, `memory/sessions/<conversation>.md` for the others) and an entry in
`memory/YYYY-MM-DD.md`, secrets masked; then the bootstrap manifest, so the hook injects each
handoff into its own session. A session with nothing new since the last run is skipped after one
stat. `--session KEY` checkpoints that one session, forced (the session-summary hook runs it
before a compaction; the rotate job calls `checkpoint_session` before a reset).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from memwarden.jobs.common import add_agent_filter, add_dry_run
from memwarden.runtime import JobContext, JobResult

if TYPE_CHECKING:
    from memwarden.checkpoint.agents import AgentResult
    from memwarden.checkpoint.outcome import SessionOutcome
    from memwarden.checkpoint.run_state import RunState
    from memwarden.openclaw.agents import Agent
    from memwarden.openclaw.sessions import SessionRecord


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_agent_filter(parser)
    parser.add_argument(
        "--session",
        metavar="KEY",
        help="checkpoint only this session (e.g. agent:main:main), forced; its agent comes "
        "from the key (or --agent for a key without one)",
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
    must not be turned away because the scheduled run holds the job lock. Its writes still take
    the agent's memory lock, so the two never interleave in a workspace.
    """
    return None if options.session else "checkpoint"


def run(context: JobContext, options: argparse.Namespace) -> JobResult:
    """Checkpoint the chosen sessions of every selected agent; return what was done."""
    from memwarden.checkpoint.positions import save
    from memwarden.checkpoint.report import job_result
    from memwarden.checkpoint.run_state import build_run_state
    from memwarden.checkpoint.snapshots import snapshot_written
    from memwarden.compactions.watch import watch_into

    dry_run = bool(options.dry_run)
    if options.session:
        state = build_run_state(context, dry_run=dry_run, trigger="session")
        agent, session = _find_session(context, options.session, options.agent)
        agents = [agent]
        read = agents
        loaded = None
        outcomes = [_checkpoint_single(state, agent, session, force=True)]
        if not dry_run:
            single = outcomes[0]
            save(
                context.state,
                [single.update] if single.update is not None else [],
                single.events,
                run_id=context.run_id,
                forget_agents=[agent.id],
            )
    else:
        from memwarden.jobs.common import select_agents

        agents = select_agents(context.deployment, options.agent)
        state = build_run_state(context, dry_run=dry_run, trigger="run")

        def record_agent(agent: Agent, result: AgentResult) -> None:
            if dry_run:
                return
            outcomes = result.outcomes
            save(
                context.state,
                [outcome.update for outcome in outcomes if outcome.update is not None],
                [event for outcome in outcomes for event in outcome.events],
                run_id=context.run_id,
                agents=[result.record] if result.record and not result.skipped_fast else [],
                forget_agents=[agent.id] if result.record is None else [],
            )

        results = checkpoint_agents(state, agents, force=bool(options.force), on_done=record_agent)
        outcomes = [outcome for result in results for outcome in result.outcomes]
        # An agent settled by the fast skip has no new line anywhere: no new compaction either.
        read = [agent for agent, done in zip(agents, results, strict=True) if not done.skipped_fast]
        # The watch looks at the conversations as this run read them: each store is read once.
        loaded = {
            agent.id: done.sessions
            for agent, done in zip(agents, results, strict=True)
            if done.sessions is not None
        }
    indexed, problems = _refresh_indexes(context, agents, outcomes, dry_run)
    if not dry_run:
        # After INDEX.md: a snapshot holds what the run wrote, index and manifest included.
        problems += snapshot_written(context, agents, outcomes, "checkpoint")
    result = job_result(outcomes, dry_run)
    watch_into(result, context, read, session_key=options.session, dry_run=dry_run, sessions=loaded)
    if indexed is not None:
        result.data["index"] = indexed
    if problems:
        result.problems.extend(problems)
        result.exit_code = 1
    return result


def _refresh_indexes(
    context: JobContext, agents: list[Agent], outcomes: list[SessionOutcome], dry_run: bool
) -> tuple[list[dict[str, Any]] | None, list[str]]:
    """Refresh the bootstrap manifest (and INDEX.md) of the agents this run wrote to.

    Return the outcomes (None when nothing was indexed) and one problem line per workspace that
    failed.
    """
    written = {outcome.agent for outcome in outcomes if outcome.outcome == "written"}
    changed = [agent for agent in agents if agent.id in written]
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

    return index_agents(
        context, agents, dry_run=dry_run, write_index=context.config.index.after_checkpoint
    )


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
    `failed` outcome); unless `dry_run`, the state DB is updated. The caller snapshots the
    agent's memory once it has refreshed INDEX.md (`checkpoint.snapshots.snapshot_written`).
    """
    from memwarden.checkpoint.positions import save
    from memwarden.checkpoint.run_state import build_run_state

    state = build_run_state(context, dry_run=dry_run, trigger=trigger)
    outcome = _checkpoint_single(state, agent, session, force=force)
    if not dry_run:
        updates = [outcome.update] if outcome.update is not None else []
        # The agent's files may now hold this session: its next run must look again.
        save(
            context.state, updates, outcome.events, run_id=context.run_id, forget_agents=[agent.id]
        )
    return outcome


def checkpoint_agents(
    state: RunState,
    agents: list[Agent],
    *,
    force: bool,
    on_done: Callable[[Agent, AgentResult], None] | None = None,
) -> list[AgentResult]:
    """Checkpoint every agent; return their results in order.

    An agent whose workspace is gone though it has sessions fails at once (`lost_workspace`).
    Agents whose store and transcripts did not change are settled next, with a few stats
    each. The others run `checkpoint.workers` at a time, in threads. `on_done(agent, result)`
    is called in this thread as soon as each agent is done, so what an agent's files now hold
    is recorded right after they are written, not at the end of a run that may be killed.
    """
    from memwarden.checkpoint.agents import AgentResult, checkpoint_agent, skip_unchanged
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
    workers = min(state.settings.workers, len(pending))
    if workers <= 1:
        for agent in pending:
            settled[agent.id] = finished(agent, checkpoint_agent(state, agent, force=force))
    else:
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(workers, thread_name_prefix="checkpoint")
        try:
            results = pool.map(lambda agent: checkpoint_agent(state, agent, force=force), pending)
            for agent, result in zip(pending, results, strict=True):
                settled[agent.id] = finished(agent, result)
        except BaseException:
            # Stopped (SIGTERM) or broken: agents not started never start; the run is recorded
            # at once, and the process exits when the agents under way are done (one waiting
            # for another run's memory lock stops waiting: see stopping).
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
    return [settled[agent.id] for agent in agents]


def _checkpoint_single(
    state: RunState, agent: Agent, session: SessionRecord, *, force: bool
) -> SessionOutcome:
    """Checkpoint one given session (not chosen by the selection rules); a forced one is
    written even under the size minimums."""
    from memwarden.checkpoint.agents import release_gateway_database
    from memwarden.checkpoint.session import checkpoint_one

    try:
        return checkpoint_one(state, agent, session, force=force, ignore_minimum=force)
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
