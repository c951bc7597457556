"""Which session a checkpoint reads: from the store, by key kind and update time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from memwarden.checkpoint.read.select import select_sessions
from memwarden.openclaw.keys import classify
from memwarden.openclaw.sessions import SessionRecord, sort_newest_first
from memwarden.openclaw.transcripts import TranscriptLocation

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
FOUR_HOURS = timedelta(hours=4)


def record(key: str, minutes_ago: float, transcript: bool = True) -> SessionRecord:
    session_id = f"id-{key.rsplit(':', 1)[-1]}"
    location = TranscriptLocation("file", Path(f"/t/{session_id}.jsonl"), session_id)
    updated = NOW - timedelta(minutes=minutes_ago)
    return SessionRecord(
        agent_id="main",
        key=key,
        session_id=session_id,
        kind=classify(key).kind,
        updated_at=int(updated.timestamp() * 1000),
        status="done",
        total_tokens=None,
        total_tokens_fresh=None,
        context_tokens=None,
        model=None,
        transcript=location if transcript else None,
        last_interaction_at=None,
    )


def keys(selection) -> list[str]:
    return [session.key for session in selection.sessions]


def select(records, mode="recent", **options):
    return select_sessions(
        sort_newest_first(records),
        agent_id="main",
        mode=mode,
        now=NOW,
        staleness=FOUR_HOURS,
        **options,
    )


def test_select_recent_active_main_wins_over_newer_sessions():
    records = [
        record("agent:main:main", 60),
        record("agent:main:telegram:direct:42", 5),
        record("agent:main:cron:nightly", 1),
    ]

    assert keys(select(records)) == ["agent:main:main"]


def test_select_recent_stale_main_gives_most_recent_interactive_never_automation():
    records = [
        record("agent:main:main", 300),
        record("agent:main:telegram:direct:42", 90),
        record("agent:main:cron:nightly", 1),
        record("agent:main:cron:nightly:run:7", 1),
        record("agent:main:subagent:0f3c", 2),
        record("agent:main:telegram:direct:42:heartbeat", 2),
        record("agent:main:boot:1", 2),
        record("hook:1234", 2),
    ]

    selection = select(records)

    assert keys(selection) == ["agent:main:telegram:direct:42"]
    assert "most recently updated" in selection.reason


def test_select_recent_only_automation_selects_nothing_and_says_why():
    selection = select([record("agent:main:cron:nightly", 1)])

    assert selection.sessions == []
    assert selection.reason == "no interactive session"


def test_select_main_mode_takes_main_even_when_stale():
    records = [record("agent:main:main", 3000), record("agent:main:slack:channel:c1", 1)]

    assert keys(select(records, mode="main")) == ["agent:main:main"]


def test_select_all_mode_takes_main_and_every_other_active_interactive_session():
    records = [
        record("agent:main:main", 10),
        record("agent:main:slack:channel:c1", 20),
        record("agent:main:telegram:direct:9", 500),
        record("agent:main:cron:nightly", 1),
    ]

    assert keys(select(records, mode="all")) == ["agent:main:main", "agent:main:slack:channel:c1"]


def test_select_all_mode_takes_a_stale_main_session_too_and_may_change_as_others_go_stale():
    records = [
        record("agent:main:telegram:direct:42", 30),
        record("agent:main:main", 3000),
        record("main", 3000),  # a legacy unscoped main beside agent:main:main: one main only
    ]

    selection = select(records, mode="all")

    assert keys(selection) == ["agent:main:main", "agent:main:telegram:direct:42"]
    assert selection.reason == "main session and 1 other active conversation(s)"
    assert selection.valid_until == NOW - timedelta(minutes=30) + FOUR_HOURS


def test_select_all_mode_without_main_or_active_session_selects_nothing_and_says_why():
    selection = select([record("agent:main:telegram:direct:42", 500)], mode="all")

    assert selection.sessions == []
    assert selection.reason == "no interactive session updated in the last 4 h"


def test_select_excluded_patterns_and_sessions_without_transcript_are_never_chosen():
    records = [
        record("agent:main:main", 10, transcript=False),
        record("agent:main:reports", 5),
        record("agent:main:telegram:direct:9", 20),
    ]

    selection = select(records, exclude_patterns=("agent:*:reports",))

    assert keys(selection) == ["agent:main:telegram:direct:9"]


def test_select_all_compares_update_times_to_the_microsecond_as_datetimes_do():
    now = NOW + timedelta(microseconds=1500)  # the cutoff falls inside a millisecond
    cutoff = now - FOUR_HOURS
    cutoff_ms = int(cutoff.timestamp() * 1000)  # 0.5 ms before the cutoff
    conversations = [
        record(f"agent:main:telegram:direct:{n}", 0)._replace(updated_at=t)
        for n, t in enumerate([cutoff_ms + 2, cutoff_ms + 1, cutoff_ms, cutoff_ms - 1])
    ]
    selection = select_sessions(
        sort_newest_first(conversations),
        agent_id="main",
        mode="all",
        now=now,
        staleness=FOUR_HOURS,
    )
    assert keys(selection) == [one.key for one in conversations if one.updated >= cutoff]
    assert keys(selection) == [conversations[0].key, conversations[1].key]
