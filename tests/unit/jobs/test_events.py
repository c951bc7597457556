"""`memwarden events` parsing: --since (ISO or a duration ago) and --type patterns."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from memwarden.jobs.events import parse_since, type_matches
from memwarden.process.errors import UsageError

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
PARIS = ZoneInfo("Europe/Paris")


@pytest.mark.parametrize(
    ("text", "ago"),
    [
        ("30m", timedelta(minutes=30)),
        ("2h", timedelta(hours=2)),
        ("7d", timedelta(days=7)),
        ("45s", timedelta(seconds=45)),
        ("1w", timedelta(weeks=1)),
        (" 10 min ", timedelta(minutes=10)),
    ],
)
def test_parse_since_duration_is_that_long_before_now(text, ago):
    assert parse_since(text, NOW, UTC) == NOW - ago


def test_parse_since_iso_with_zone_keeps_its_zone():
    assert parse_since("2026-11-22T05:30:00Z", NOW, PARIS) == datetime(
        2026, 11, 22, 5, 30, tzinfo=UTC
    )
    assert parse_since("2026-11-22T06:30+01:00", NOW, UTC) == datetime(
        2026, 11, 22, 5, 30, tzinfo=UTC
    )


def test_parse_since_iso_without_zone_is_in_the_given_zone():
    assert parse_since("2026-11-22", NOW, PARIS) == datetime(2026, 11, 21, 23, 0, tzinfo=UTC)
    assert parse_since("2026-11-22 05:30", NOW, UTC) == datetime(2026, 11, 22, 5, 30, tzinfo=UTC)


def test_parse_since_iso_without_zone_nor_setting_is_machine_time_of_that_date(monkeypatch):
    monkeypatch.setenv("TZ", "Europe/Paris")
    time.tzset()
    try:
        summer = parse_since("2026-07-01T12:00", NOW, None)
        winter = parse_since("2026-12-01T12:00", NOW, None)
    finally:
        monkeypatch.undo()
        time.tzset()
    assert summer == datetime(2026, 7, 1, 10, 0, tzinfo=UTC)
    assert winter == datetime(2026, 12, 1, 11, 0, tzinfo=UTC)


@pytest.mark.parametrize("text", ["yesterday", "2h ago", "-3d", "2026-13-01"])
def test_parse_since_unreadable_raises_usage_error_with_examples(text):
    with pytest.raises(UsageError, match=r"--since .*2026-11-22.*30m, 2h, 7d"):
        parse_since(text, NOW, UTC)


def test_type_matches_exact_family_and_glob():
    assert type_matches("rotation.done", ["rotation.done"])
    assert type_matches("rotation.done", ["rotation"])
    assert type_matches("alert.resolved", ["alert.*"])
    assert type_matches("run.failed", ["snapshot", "run"])
    assert type_matches("anything", [])
    assert not type_matches("rotation.done", ["rot"])
    assert not type_matches("snapshot.taken", ["rewind"])
