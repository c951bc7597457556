"""Context pressure: conversations whose last context passed a high-water share of their window.

Rotation resets a conversation well before that point; one still above it has not been handled
(rotation not running, failing, or skipping it) and is heading into compaction. Automation
sessions (cron, sub-agents, heartbeats) are never rotated and not counted; neither are stale
token counts (`totalTokensFresh: false`).
"""

from __future__ import annotations

from collections.abc import Sequence

from memwarden.health.checks import HealthInputs
from memwarden.health.model import CheckResult, ok, warning
from memwarden.openclaw.sessions import SessionRecord, load_sessions, sort_newest_first
from memwarden.process.errors import StoreError

KEY = "context.pressure"
STORE_KEY = "sessions.store"


def check_context(inputs: HealthInputs) -> list[CheckResult]:
    """Given the inputs, return `context.pressure` (and `sessions.store:<agent>` for unreadable
    session stores). The result's details carry every conversation's ratio, tokens and window,
    for the metrics."""
    records, results = [], []
    for agent in inputs.deployment.agents:  # one unreadable store never hides the others
        try:
            records += load_sessions(agent, automation=False, transcripts=False)
        except StoreError as error:
            results.append(warning(f"{STORE_KEY}:{agent.id}", error.message))
    measured = sort_newest_first(
        [r for r in records if r.context_ratio is not None and r.total_tokens_fresh is not False]
    )
    return [grade_context(measured, inputs.health.context_high_water), *results]


def grade_context(measured: Sequence[SessionRecord], high_water: float) -> CheckResult:
    """Given the conversations whose context ratio is known and the high-water ratio, return
    the result."""
    over = sorted(
        (r for r in measured if r.context_ratio >= high_water), key=lambda r: -r.context_ratio
    )
    ratios = [
        {
            "agent": r.agent_id,
            "session": r.key,
            "ratio": round(r.context_ratio, 4),
            "tokens": r.total_tokens,
            "window": r.context_tokens,
        }
        for r in measured
    ]
    highest = max((r.context_ratio for r in measured), default=0.0)
    value = round(highest, 4)
    if not over:
        message = f"no conversation above {high_water:.0%} of its context window"
        return ok(KEY, f"{message} (highest {highest:.0%})", value, high_water, ratios=ratios)
    shown = ", ".join(
        f"{r.key} {r.context_ratio:.0%} ({r.total_tokens:,}/{r.context_tokens:,})" for r in over[:5]
    )
    more = f" and {len(over) - 5} more" if len(over) > 5 else ""
    message = (
        f"{len(over)} conversation(s) above {high_water:.0%} of their context window, not rotated: "
        f"{shown}{more}"
    )
    return warning(KEY, message, value, high_water, ratios=ratios)
