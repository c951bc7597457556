"""`memwarden compactions`: the compaction ledger, newest last (read-only).

Every compaction of a conversation the checkpoint job's compaction watch recorded: when, the
tokens before and after, the summary's length, how many messages it compacted, the items it
lost (first few; all of them with --json) and the daily log that holds them.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from memwarden.compactions.assessment import lost_text
from memwarden.compactions.ledger import recorded, session_keys, totals
from memwarden.jobs.common import positive_int, require_known_agents
from memwarden.openclaw.keys import classify
from memwarden.openclaw.sessions import load_sessions
from memwarden.process.errors import MemwardenError, UsageError
from memwarden.process.readable import utc_minute
from memwarden.process.runtime import JobContext, JobResult

if TYPE_CHECKING:
    from memwarden.openclaw.agents import Agent


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--agent", action="append", metavar="ID", help="only this agent (repeatable)"
    )
    parser.add_argument("--session", metavar="KEY", help="only this session (agent:main:main)")
    parser.add_argument(
        "--lossy", action="store_true", help="only compactions that lost items (or summaries)"
    )
    parser.add_argument(
        "--limit", type=positive_int, default=100, metavar="N", help="the N newest (default 100)"
    )


def run(context: JobContext, options: argparse.Namespace) -> JobResult:
    if options.agent:
        require_known_agents(
            options.agent,
            (agent.id for agent in context.deployment.agents),
            lambda: totals(context.state),
        )
    agents = [agent.lower() for agent in options.agent or []]
    rows = recorded(
        context.state,
        agents=agents or None,
        session_key=options.session.lower() if options.session else None,
        limit=None if options.lossy else options.limit,
    )
    if options.session and not rows:  # a key the ledger lists is known: no gateway read
        require_known_session(
            options.session, context.deployment.agents, lambda: session_keys(context.state)
        )
    if options.lossy:
        rows = [row for row in rows if row.severity != "ok"][-options.limit :]
    lossy = sum(1 for row in rows if row.severity != "ok")
    lost = sum(len(row.lost) for row in rows)
    result = JobResult("compactions")
    result.data = {
        "summary": {"compactions": len(rows), "lossy": lossy, "lost_items": lost},
        "compactions": [row.to_json() for row in rows],
    }
    result.lines.append(_summary_line(context, options, rows, lossy, lost))
    for row in rows:
        when = utc_minute(row.time)
        tokens = f"{_count(row.tokens_before)} → {_count(row.tokens_after)} tokens"
        line = (
            f"  {when}  {row.agent_id}  {row.session_key}  {row.severity}  {tokens}, summary "
            f"{row.summary_chars} chars, {row.span_messages} message(s) compacted"
        )
        if row.lost:
            line += f"; lost {lost_text(row.lost)}"
        if row.kept_file and row.kept:
            line += f" (kept in {row.kept_file})"
        elif row.kept_file:  # its daily log was rewound
            line += f" (to be written again to {row.kept_file} by the next checkpoint)"
        result.lines.append(line)
    return result


def _summary_line(
    context: JobContext, options: argparse.Namespace, rows: list, lossy: int, lost: int
) -> str:
    """The first line: the counts; when nothing is listed, whether the ledger is empty or the
    filters matched none of it."""
    line = f"compactions: {len(rows)} recorded, {lossy} lossy, {lost} item(s) lost"
    if rows:
        return line
    everything = sum(count for count, _, _ in totals(context.state).values())
    filters = [
        *(f"--agent {agent}" for agent in options.agent or []),
        *([f"--session {options.session}"] if options.session else []),
        *(["--lossy"] if options.lossy else []),
    ]
    if everything and filters:
        return f"compactions: none of the {everything} recorded matches {' '.join(filters)}"
    return line + " (the checkpoint job records them)"


def _count(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


def require_known_session(
    key: str, agents: Sequence[Agent], recorded: Callable[[], Iterable[str]]
) -> None:
    """Given a session key asked for (any case), the deployment's agents and a function
    returning the keys memwarden's records hold, raise UsageError, with the closest known key,
    when neither those records nor the session stores (of the key's agent, else of every
    agent) know it. A store that cannot be read leaves the key unjudged: nothing is raised."""
    wanted = key.lower()
    known = {recorded_key.lower() for recorded_key in recorded()}
    if wanted in known:
        return
    owner_id = classify(wanted).agent_id
    owner = [agent for agent in agents if agent.id == owner_id]
    for agent in owner or agents:
        try:
            known |= {record.key.lower() for record in load_sessions(agent, transcripts=False)}
        except (MemwardenError, OSError):
            return
    if wanted in known:
        return
    close = difflib.get_close_matches(wanted, known, n=1)
    hint = f"did you mean {close[0]}?" if close else "`memwarden sessions --all` lists them"
    raise UsageError(
        f"unknown session: {key} (neither memwarden's records nor the gateway's session "
        f"stores holds it; {hint})"
    )
