"""A time or a size as memwarden writes it for people."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from memwarden.process.readable import size_text, utc_minute


def test_utc_minute_aware_time_elsewhere_is_written_in_utc_to_the_minute():
    paris = timezone(timedelta(hours=1))
    assert utc_minute(datetime(2026, 11, 22, 6, 31, 59, tzinfo=paris)) == "2026-11-22 05:31 UTC"


def test_utc_minute_unix_seconds_are_written_in_utc():
    assert utc_minute(1795325503.8) == "2026-11-22 05:31 UTC"


@pytest.mark.parametrize(
    ("size", "shown"),
    [
        (0, "0 B"),
        (812, "812 B"),
        (1023, "1023 B"),
        (1024, "1.0 KB"),
        (4198, "4.1 KB"),
        (12 * 1024 * 1024, "12.0 MB"),
        (1536 * 1024 * 1024, "1.5 GB"),  # INDEX.md used to write 1536.0 MB
        (-2048, "-2.0 KB"),
    ],
)
def test_size_text_in_the_largest_unit_below_1024(size, shown):
    assert size_text(size) == shown
