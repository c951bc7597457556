"""Which conversation handoffs are archived: idle by the store and by the file, where they go."""

from __future__ import annotations

from datetime import UTC, datetime

from memwarden.agent_memory.handoff_files import HandoffFile
from memwarden.maintenance.handoff_step import ArchiveMove, plan_handoff_archive

DAY = 86_400
NOW = datetime(2026, 12, 31, 12, 0, tzinfo=UTC).timestamp()


def fact(name: str, session: str, days_ago: float) -> HandoffFile:
    return HandoffFile(name, "", session, NOW - days_ago * DAY)


def test_handoff_idle_past_the_limit_moves_to_the_archive_named_with_its_idle_date():
    old = fact("sessions/main.telegram.direct.42.md", "agent:main:telegram:direct:42", 31)

    assert plan_handoff_archive([old], {}, NOW, after_days=30) == [
        ArchiveMove(
            "sessions/main.telegram.direct.42.md",
            "archive/sessions/main.telegram.direct.42.2026-11-30.md",
            "agent:main:telegram:direct:42",
            NOW - 31 * DAY,
        )
    ]


def test_handoff_of_a_conversation_the_store_saw_recently_stays_however_old_its_file():
    old = fact("sessions/main.telegram.direct.42.md", "agent:main:telegram:direct:42", 90)
    updates = {"agent:main:telegram:direct:42": NOW - 2 * DAY}

    assert plan_handoff_archive([old], updates, NOW, after_days=30) == []


def test_handoff_changed_recently_stays_though_the_store_no_longer_knows_its_session():
    recent = fact("sessions/main.slack.direct.u1.md", "agent:main:slack:direct:u1", 3)

    assert plan_handoff_archive([recent], {"agent:main:main": NOW - 90 * DAY}, NOW, 30) == []


def test_handoff_exactly_at_the_limit_stays_and_moves_are_in_name_order():
    handoffs = [
        fact("sessions/main.b.md", "agent:main:b", 45),
        fact("sessions/main.limit.md", "agent:main:limit", 30),
        fact("sessions/main.a.md", "agent:main:a", 60),
    ]

    moves = plan_handoff_archive(handoffs, {}, NOW, after_days=30)

    assert [move.name for move in moves] == ["sessions/main.a.md", "sessions/main.b.md"]
