"""How memwarden writes a time for people: to the minute, in UTC, as alerts, problem lines and
INDEX.md show it."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_minute(moment: datetime | float) -> str:
    """Given a time (aware, or Unix seconds), return it for people: `2026-11-22 05:31 UTC`."""
    if not isinstance(moment, datetime):
        moment = datetime.fromtimestamp(moment, UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
