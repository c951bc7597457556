"""The `compaction.lossy` check: a result per lossy compaction of the window, naming the session
and the first lost items."""

from __future__ import annotations

from memwarden.compactions.assessment import Item
from memwarden.compactions.ledger import Recorded
from memwarden.health.checks.compactions import KEY, grade_compactions
from memwarden.health.model import Status

LOST = [
    Item("marker", "[DECISION] ledger in PostgreSQL", "DECISION"),
    Item("todo", "rotate the webhook secret"),
    Item("path", "src/billing/cron.py"),
    Item("marker", "[FACT] the API is v2", "FACT"),
]


def row(severity: str, lost: list[Item], summary_chars: int = 300) -> Recorded:
    return Recorded(
        agent_id="main",
        session_key="agent:main:main",
        session_id="b5974d71-c717-4e69-b2ad-af312d36f9f1",
        entry_id="db813dc9-7360-41d9-948e-3f2b92ce1bc6",
        compacted_at=1795325503.8,  # 2026-11-22 05:31:43 UTC
        recorded_at=1795326000.0,
        tokens_before=12000,
        tokens_after=80,
        summary_chars=summary_chars,
        span_messages=12,
        items=len(lost) + 2,
        lost=lost,
        severity=severity,
        kept_file="memory/2026-11-22.md",
        kept=bool(lost),
    )


def test_no_lossy_compaction_is_ok():
    (result,) = grade_compactions([row("ok", [])], 24)
    assert (result.key, result.status) == (KEY, Status.OK)
    assert result.message == "no lossy compaction in the last 24 h"


def test_lossy_compaction_warns_naming_session_first_items_count_and_file():
    (result,) = grade_compactions([row("warning", LOST)], 24)
    assert result.key == f"{KEY}:main:agent:main:main:db813dc9-7360-41d9-948e-3f2b92ce1bc6"
    assert result.status is Status.WARNING
    assert result.message == (
        "agent main: the compaction of agent:main:main at 2026-11-22 05:31 UTC lost 4 item(s): "
        "[DECISION] ledger in PostgreSQL; TODO: rotate the webhook secret; "
        "file: src/billing/cron.py and 1 more (kept in memory/2026-11-22.md)"
    )
    assert result.value == 4
    assert result.details["lost"][3] == "[FACT] the API is v2"


def test_near_empty_summary_is_critical():
    (result,) = grade_compactions([row("critical", [], summary_chars=0)], 24)
    assert result.status is Status.CRITICAL
    assert "left a near-empty summary (0 characters) of 12 message(s)" in result.message


def test_one_result_per_lossy_compaction():
    results = grade_compactions([row("warning", LOST[:1]), row("ok", []), row("critical", [])], 24)
    assert [r.status for r in results] == [Status.WARNING, Status.CRITICAL]
