"""`memwarden checkpoint`: write what each conversation was doing into its workspace, no LLM.

For every agent (or `--agent ID`), choose its conversations from the session store, read what
is new in each transcript, and write that conversation's handoff (`memory/ACTIVE_CONTEXT.md` for
the main session, `memory/sessions/<conversation>.md` for the others) and an entry in
`memory/YYYY-MM-DD.md`, secrets masked, all committed at once with the read positions (a
journal the next run finishes after a kill: `checkpoint.commit.durable_run`); then the bootstrap
manifest, so the hook injects each handoff into its own session. A session with nothing new
since the last run is skipped after one stat. `--session KEY` checkpoints that one session,
even under the size minimums (the session-summary hook runs it before a reset or a compaction;
the rotate job calls `checkpoint.run.job.checkpoint_session` before a reset).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from memwarden.checkpoint.run.job import checkpoint_run
from memwarden.jobs.common import add_agent_filter, add_dry_run, select_agents, writable
from memwarden.openclaw.keys import classify
from memwarden.process.errors import UsageError
from memwarden.process.runtime import JobContext, JobResult

if TYPE_CHECKING:
    from memwarden.openclaw.agents import Agent
    from memwarden.openclaw.sessions import SessionRecord


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
    only if no other checkpoint committed it since it was read
    (`checkpoint.commit.durable_run`), and its renames take the agent's memory lock, so the two
    never log the same messages nor interleave in a workspace.
    """
    return None if options.session else "checkpoint"


def run_name(options: argparse.Namespace) -> str:
    """Return the name the run is recorded under: one session's run (the session-summary
    hook's, before a reset or a compaction) is `checkpoint --session`, so that the scheduled
    runs alone make the job's last success (health's dead-man's switch, `memwarden status`)."""
    return "checkpoint --session" if options.session else "checkpoint"


def run(context: JobContext, options: argparse.Namespace) -> JobResult:
    """Checkpoint the chosen sessions of every selected agent; return what was done."""
    force, dry_run = bool(options.force), bool(options.dry_run)
    if options.session:
        agent, session = _find_session(context, options.session, options.agent)
        return checkpoint_run(context, [agent], session=session, force=force, dry_run=dry_run)
    agents = select_agents(context.deployment, options.agent)
    return checkpoint_run(context, agents, force=force, dry_run=dry_run)


def _find_session(
    context: JobContext, key: str, agent_ids: list[str] | None
) -> tuple[Agent, SessionRecord]:
    """Return the agent and record of session `key`. Raise UsageError if there is none."""
    # lazy: only `--session` reads a store here
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
