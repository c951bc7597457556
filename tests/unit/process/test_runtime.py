"""JobContext: the time zone a run reads its times in."""

from __future__ import annotations

from zoneinfo import ZoneInfo

import pytest

from memwarden.process.errors import ConfigError
from memwarden.process.runtime import JobContext
from memwarden.settings.config import Config, defaults


def _context(timezone: str) -> JobContext:
    base = defaults()
    return JobContext(config=Config({**base.values, "general.timezone": timezone}, base.sources))


def test_zone_empty_is_local_and_unknown_is_a_config_error():
    assert _context("").zone is None
    assert _context("Asia/Tokyo").zone == ZoneInfo("Asia/Tokyo")
    with pytest.raises(ConfigError, match=r"general\.timezone: unknown time zone 'Mars/Olympus'"):
        _context("Mars/Olympus").zone  # noqa: B018
