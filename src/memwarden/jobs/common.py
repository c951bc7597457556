"""Options and helpers shared by the jobs."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memwarden.errors import UsageError

if TYPE_CHECKING:
    from memwarden.openclaw.layout import Agent, Deployment


def add_dry_run(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="change nothing: say what would be written, reset or sent",
    )


def add_agent_filter(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--agent",
        action="append",
        metavar="ID",
        help="only this agent (repeatable); default: every agent",
    )


def select_agents(deployment: Deployment, wanted: Sequence[str] | None) -> list[Agent]:
    """Return the deployment's agents, or those named in `wanted`.

    Raise UsageError naming the unknown ids and the known ones.
    """
    if not wanted:
        return list(deployment.agents)
    by_id = {agent.id: agent for agent in deployment.agents}
    unknown = [name for name in wanted if name.lower() not in by_id]
    if unknown:
        known = ", ".join(sorted(by_id)) or "none"
        raise UsageError(f"unknown agent(s): {', '.join(unknown)} (agents found: {known})")
    return [by_id[name.lower()] for name in dict.fromkeys(wanted)]
