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

from memwarden.health.checks import HealthInputs
from memwarden.health.deliveries import (
    FOLDER,
    judge,
    read_receipt,
    receipts_since,
    recent_breaks,
)
from memwarden.health.model import CheckResult, ok, warning

KEY = "handoff.delivery"
DAYS = 7
GROUP_KEY = re.compile(r":(group|channel):", re.IGNORECASE)  # as the bootstrap hook tells them


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
    for moment in recent_breaks(inputs.state, since):
        if not index.inject_in_group_chats and GROUP_KEY.search(moment.session_key):
            continue  # nothing is injected into a group chat: there is nothing to check
        receipt = read_receipt(folder, moment.session_key)
        verdict = judge(moment, receipt)
        if verdict is None:
            continue
        checked += 1
        if verdict.ok:
            continue
        results.append(
            warning(
                f"{KEY}:{moment.agent_id}:{moment.session_key}",
                f"agent {moment.agent_id}: {moment.session_key}: {verdict.text}",
                verdict.delivery.handoff if verdict.delivery else "no receipt",
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
