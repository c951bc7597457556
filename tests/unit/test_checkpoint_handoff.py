"""The previous window kept after a reset, and daily-log grouping by local date."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from memwarden.checkpoint.daily_log import group_by_day, resolve_timezone
from memwarden.checkpoint.extract import Excerpt, kept_messages
from memwarden.checkpoint.handoff import archives_near, earlier_window, needs_handoff
from memwarden.errors import ConfigError
from memwarden.openclaw.entries import parse_entry, split_windows


def entry(kind: str, text: str | None = None, at: str = "2026-11-22T05:00:00Z") -> object:
    value = {"type": kind, "id": text or kind, "timestamp": at}
    if kind == "message":
        value["message"] = {"role": "user", "content": text}
    if kind == "reset":
        value["reason"] = "reset"
    return parse_entry(value)


def texts(entries) -> list[str]:
    return [message.text for message in kept_messages(entries)]


def test_earlier_window_passes_empty_windows_between_consecutive_resets():
    transcript = [
        entry("session"),
        entry("message", "first window request"),
        entry("reset", at="2026-11-22T05:10:00Z"),
        entry("reset", at="2026-11-22T05:11:00Z"),
        entry("message", "new window"),
    ]
    before, current = split_windows(transcript)

    earlier = earlier_window(before)

    assert texts(current) == ["new window"]
    assert texts(earlier.entries) == ["first window request"]
    assert earlier.reset_at == datetime(2026, 11, 22, 5, 10, tzinfo=UTC)


def test_earlier_window_takes_the_window_right_before_the_current_one():
    transcript = [
        entry("message", "oldest"),
        entry("reset", at="2026-11-22T05:10:00Z"),
        entry("message", "middle"),
        entry("reset", at="2026-11-22T05:20:00Z"),
    ]

    earlier = earlier_window(transcript)

    assert texts(earlier.entries) == ["middle"]
    assert earlier.reset_at == datetime(2026, 11, 22, 5, 20, tzinfo=UTC)


def test_earlier_window_without_messages_is_none():
    assert earlier_window([entry("session"), entry("reset"), entry("reset")]) is None


@pytest.mark.parametrize(
    ("messages", "minimum", "expected"), [(0, 6, True), (5, 6, True), (6, 6, False)]
)
def test_needs_handoff_until_the_window_has_enough_messages(messages, minimum, expected):
    assert needs_handoff(messages, minimum) is expected


def test_archives_near_lists_the_archives_renamed_when_it_began_closest_first():
    started = datetime(2026, 11, 22, 5, 35, 7, 924000, tzinfo=UTC)
    archives = [
        (Path("old.jsonl.reset.a"), started - timedelta(hours=2)),
        (Path("other.jsonl.reset.d"), started - timedelta(seconds=3)),
        (Path("match.jsonl.reset.b"), started + timedelta(milliseconds=1)),
        (Path("undated.jsonl.reset.c"), None),
    ]

    assert archives_near(archives, started) == [
        Path("match.jsonl.reset.b"),
        Path("other.jsonl.reset.d"),
    ]
    assert archives_near(archives[:1], started) == []
    assert archives_near(archives, None) == []


def excerpt(text: str, at: datetime | None) -> Excerpt:
    return Excerpt("user", text, at)


def test_group_by_day_splits_messages_at_local_midnight():
    paris = ZoneInfo("Europe/Paris")
    messages = [
        excerpt("late", datetime(2026, 11, 22, 22, 50, tzinfo=UTC)),  # 23:50 in Paris
        excerpt("after midnight", datetime(2026, 11, 22, 23, 10, tzinfo=UTC)),  # 00:10
        excerpt("no time", None),
    ]
    fallback = datetime(2026, 11, 23, 0, 0, tzinfo=UTC)

    groups = group_by_day(messages, paris, fallback)

    assert [(group.file_name, [m.text for m in group.messages]) for group in groups] == [
        ("2026-11-22.md", ["late"]),
        ("2026-11-23.md", ["after midnight", "no time"]),
    ]


def test_resolve_timezone_empty_is_local_and_unknown_is_a_config_error():
    assert resolve_timezone("") is None
    assert resolve_timezone("Asia/Tokyo") == ZoneInfo("Asia/Tokyo")
    with pytest.raises(ConfigError, match=r"general\.timezone: unknown time zone 'Mars/Olympus'"):
        resolve_timezone("Mars/Olympus")
