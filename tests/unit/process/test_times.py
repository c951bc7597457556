"""A time as memwarden writes it for people."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from memwarden.process.times import utc_minute


def test_utc_minute_aware_time_elsewhere_is_written_in_utc_to_the_minute():
    paris = timezone(timedelta(hours=1))
    assert utc_minute(datetime(2026, 11, 22, 6, 31, 59, tzinfo=paris)) == "2026-11-22 05:31 UTC"


def test_utc_minute_unix_seconds_are_written_in_utc():
    assert utc_minute(1795325503.8) == "2026-11-22 05:31 UTC"
