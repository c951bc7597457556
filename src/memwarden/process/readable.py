"""How memwarden writes a time, a size or a count for people: a time to the minute, in UTC, as
alerts, problem lines and INDEX.md show it; a size in B, KB, MB or GB; a count short."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_minute(moment: datetime | float) -> str:
    """Given a time (aware, or Unix seconds), return it for people: `2026-11-22 05:31 UTC`."""
    if not isinstance(moment, datetime):
        moment = datetime.fromtimestamp(moment, UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def size_text(size: int) -> str:
    """Given bytes, return them for people: `812 B`, `4.1 KB`, `12.0 MB`, `1.5 GB`."""
    value = float(size)
    for unit in ("B", "KB", "MB"):
        if abs(value) < 1024:
            return f"{size} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


def count_text(number: int) -> str:
    """Given a count, return it short: `850`, `12.3K`, `1.2M`."""
    if number < 1000:
        return str(number)
    if number < 1_000_000:
        return f"{number / 1000:.1f}K"
    return f"{number / 1_000_000:.1f}M"
