"""Handoff delivery: after a conversation's reset or compaction, did its next bootstrap carry
its handoff, whole?

For each conversation whose last reset or compaction (as the checkpoint read it) came within
DAYS days, after the hook began to leave receipts, and was followed by a request, the first
delivery the bootstrap hook recorded after it (`memwarden.health.deliveries`) must show the
handoff whole. Group and channel chats are judged only when the hook injects into them
(`index.inject_in_group_chats`), and none when it injects no handoff at all. A warning names the
conversation and what went wrong (no receipt: the hook did not run; cut or left out by the gateway's
bootstrap caps; none listed in the manifest). It resolves at the conversation's next break whose
bootstrap carries the handoff, or when the break leaves the window.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import NamedTuple

from memwarden.health.checks import HealthInputs
from memwarden.health.deliveries import FOLDER, Receipt, read_receipt, receipts_since
from memwarden.health.model import CheckResult, ok, warning
from memwarden.process.readable import utc_minute

KEY = "handoff.delivery"
DAYS = 7
GROUP_KEY = re.compile(r":(group|channel):", re.IGNORECASE)  # as the bootstrap hook tells them
# Each conversation's last reset or compaction, and its first request after it (the checkpoint
# records them).
BREAKS = (
    "SELECT agent_id, session_key, last_break_kind, last_break_at, next_request_at "
    "FROM conversations WHERE last_break_at >= ?"
)
WHY = {
    "cut": "cut by the gateway's bootstrap caps (bootstrapMaxChars, bootstrapTotalMaxChars)",
    "left out": "left out: the gateway's bootstrap total cap was already spent",
    "none": "missing: the bootstrap manifest names no handoff for it",
}


class Break(NamedTuple):
    """A conversation's last reset or compaction, and the first request after it (None: no
    turn since, so no bootstrap to check yet)."""

    agent_id: str
    session_key: str
    kind: str
    at: float
    next_request_at: float | None


def check_deliveries(inputs: HealthInputs) -> list[CheckResult]:
    """Return a `handoff.delivery:<agent>:<session>` warning per conversation whose bootstrap
    after its last reset or compaction did not carry its handoff whole, else one ok result."""
    index = inputs.config.index
    if not index.inject_active_context:
        return [ok(KEY, "not checked: index.inject_active_context is off (no handoff injected)")]
    folder = inputs.storage_dir / FOLDER if inputs.storage_dir is not None else None
    began = receipts_since(folder) if folder is not None else None
    if folder is None or began is None:
        return [
            ok(
                KEY,
                "no delivery receipt yet: the bootstrap hook is not installed or has not run "
                "(memwarden install hooks; memwarden doctor)",
            )
        ]
    since = max((inputs.now - timedelta(days=DAYS)).timestamp(), began)
    checked, results = 0, []
    for moment in map(Break._make, inputs.state.connection.execute(BREAKS, (since,))):
        if moment.next_request_at is None:
            continue  # no turn since: no bootstrap to judge yet
        if not index.inject_in_group_chats and GROUP_KEY.search(moment.session_key):
            continue  # nothing is injected into a group chat: there is nothing to check
        checked += 1
        problem, handoff = judge(moment, read_receipt(folder, moment.session_key))
        if problem is None:
            continue
        results.append(
            warning(
                f"{KEY}:{moment.agent_id}:{moment.session_key}",
                f"agent {moment.agent_id}: {moment.session_key}: {problem}",
                handoff,
                agent=moment.agent_id,
                session=moment.session_key,
                break_kind=moment.kind,
                break_at=moment.at,
            )
        )
    if results:
        return results
    return [
        ok(
            KEY,
            f"{checked} conversation(s) reset or compacted in the last {DAYS} days got their "
            "handoff whole at their next bootstrap",
            checked,
        )
    ]


def judge(moment: Break, receipt: Receipt | None) -> tuple[str | None, str]:
    """Given a conversation's last break (a request came since) and its receipt, return what
    was wrong with the first bootstrap after the break (None: it carried the handoff whole) and
    the handoff it carried (`no receipt` when none is recorded)."""
    after = [one for one in (receipt.deliveries if receipt else ()) if one.at >= moment.at]
    what = "compaction" if moment.kind == "compaction" else "reset"
    if not after:
        return (
            f"no bootstrap since the {what} at {utc_minute(moment.at)} left a receipt, though a "
            f"request came at {utc_minute(moment.next_request_at)}: the memory-index-inject hook "
            "did not run for it (run `memwarden doctor`)",
            "no receipt",
        )
    first = after[0]
    if first.handoff == "whole":
        return None, first.handoff
    return (
        f"the bootstrap at {utc_minute(first.at)}, after the {what} at {utc_minute(moment.at)}, "
        f"carried its handoff {WHY.get(first.handoff, first.handoff)}",
        first.handoff,
    )
