"""`memwarden sessions`: what memwarden discovers in the gateway's state (read-only)."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

from memwarden.jobs.common import require_known_agents
from memwarden.openclaw.keys import AUTOMATION_KINDS
from memwarden.openclaw.sessions import load_sessions
from memwarden.process.errors import StoreError
from memwarden.process.runtime import JobContext, JobResult


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--agent", action="append", metavar="ID", help="only this agent (repeatable)"
    )
    parser.add_argument(
        "--all", action="store_true", help="include automation sessions (cron, subagents, ...)"
    )


def run(context: JobContext, options: argparse.Namespace) -> JobResult:
    deployment = context.deployment
    require_known_agents(options.agent, (agent.id for agent in deployment.agents))
    wanted = {agent_id.lower() for agent_id in options.agent or []}
    result = JobResult("sessions", data={"state_dir": str(deployment.state_dir), "agents": []})
    result.lines.append(f"gateway state: {deployment.state_dir}")
    result.lines.append(f"gateway config: {deployment.config_path}")
    for agent in deployment.agents:
        if wanted and agent.id not in wanted:
            continue
        entry = {
            "id": agent.id,
            "default": agent.is_default,
            "era": agent.era,
            "workspace": str(agent.workspace),
            "sessions": [],
        }
        result.data["agents"].append(entry)
        result.lines.append("")
        default = " (default)" if agent.is_default else ""
        result.lines.append(
            f"agent {agent.id}{default}: {agent.era} era, workspace {agent.workspace}"
        )
        unreadable: list[str] = []
        try:
            # The text lists conversations only; --all and --json show every session.
            automation = options.all or context.json_output
            sessions = load_sessions(agent, unreadable, automation=automation)
        except StoreError as error:
            entry["error"] = error.message
            result.problems.append(error.message)
            continue
        if unreadable:
            entry["problems"] = unreadable
            result.problems += unreadable
        shown = [s for s in sessions if options.all or s.kind not in AUTOMATION_KINDS]
        if len(shown) < len(sessions):
            entry["hidden_automation"] = len(sessions) - len(shown)
        if context.json_output:  # 100k sessions: built only when asked for
            entry["sessions"] = [_session_json(session) for session in sessions]
        result.lines += [_session_line(session) for session in shown]
        if not shown:
            result.lines.append("  (no sessions)")
    result.exit_code = 1 if result.problems else 0
    return result


def _session_json(session) -> dict:
    location = session.transcript
    return {
        "key": session.key,
        "kind": session.kind.value,
        "session_id": session.session_id,
        "updated_at": _iso(session.updated_at),
        "status": session.status,
        "total_tokens": session.total_tokens,
        "total_tokens_fresh": session.total_tokens_fresh,
        "context_tokens": session.context_tokens,
        "model": session.model,
        "transcript": (
            {"kind": location.kind, "path": str(location.path), "session_id": location.session_id}
            if location
            else None
        ),
    }


def _session_line(session) -> str:
    return (
        f"  {session.key:<40} {session.kind.value:<9} {session.session_id}  "
        f"{_context_text(session)}  updated {_iso(session.updated_at) or '?'}"
    )


def _context_text(session) -> str:
    """Return the gateway's count of the session's context, saying it is the gateway's and
    whether it is fresh (a stale one predates a compaction or an import)."""
    window = f" of {session.context_tokens:,}" if session.context_tokens else ""
    if session.total_tokens is None:
        return f"context ?{window} tokens (no gateway count)"
    freshness = {True: ", fresh", False: ", stale"}.get(session.total_tokens_fresh, "")
    return f"context {session.total_tokens:,}{window} tokens (gateway count{freshness})"


def _iso(milliseconds: int | None) -> str | None:
    if milliseconds is None:
        return None
    return datetime.fromtimestamp(milliseconds / 1000, UTC).isoformat(timespec="seconds")
