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

if TYPE_CHECKING:
    from memwarden.checkpoint.digest.extract import Excerpt


class DayGroup(NamedTuple):
    """The new messages of one session on one local day."""

    day: date
    messages: list[Excerpt]


def group_by_day(
    messages: Sequence[Excerpt], zone: tzinfo | None, fallback: datetime
) -> list[DayGroup]:
    """Given new messages in order, return them grouped by local date, oldest day first.

    A message without a time counts as sent at `fallback` (the run's time).
    """
    days: dict[date, list[Excerpt]] = {}
    for message in messages:
        day = (message.time or fallback).astimezone(zone).date()
        days.setdefault(day, []).append(message)
    return [DayGroup(day, grouped) for day, grouped in sorted(days.items())]
