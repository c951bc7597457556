"""Daily-log entries: the messages a run saw for the first time, grouped by local date.

A run appends one entry per session and per day to `memory/YYYY-MM-DD.md`, the date in the
configured time zone. Messages on both sides of midnight go to both days' files, each entry
with its own counts. What counts as new is decided by the state DB (read positions), never by
parsing the log.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime, tzinfo
from typing import TYPE_CHECKING, NamedTuple

from memwarden.process.errors import ConfigError

if TYPE_CHECKING:
    from memwarden.checkpoint.digest.extract import Excerpt


class DayGroup(NamedTuple):
    """The new messages of one session on one local day."""

    day: date
    messages: list[Excerpt]


def resolve_timezone(name: str) -> tzinfo | None:
    """Given `general.timezone`, return its zone, or None for the machine's local zone.

    Raise ConfigError naming the option if the zone is unknown.
    """
    if not name.strip():
        return None
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError) as error:
        message = f"general.timezone: unknown time zone {name!r} (an IANA name: Europe/Paris)"
        raise ConfigError([message]) from error


def local(moment: datetime, zone: tzinfo | None) -> datetime:
    """Given an aware datetime, return it in `zone` (None: the machine's local zone)."""
    return moment.astimezone(zone) if zone is not None else moment.astimezone()


def group_by_day(
    messages: Sequence[Excerpt], zone: tzinfo | None, fallback: datetime
) -> list[DayGroup]:
    """Given new messages in order, return them grouped by local date, oldest day first.

    A message without a time counts as sent at `fallback` (the run's time).
    """
    days: dict[date, list[Excerpt]] = {}
    for message in messages:
        day = local(message.time or fallback, zone).date()
        days.setdefault(day, []).append(message)
    return [DayGroup(day, grouped) for day, grouped in sorted(days.items())]
