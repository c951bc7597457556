"""Which daily logs (memory/YYYY-MM-DD.md) to move into memory/archive/YYYY-MM/."""

from __future__ import annotations

import re
from datetime import date

_DAILY = re.compile(r"^(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})\.md$")
ARCHIVE_DIR = "archive"


def plan_daily_archive(names: list[str], today: date, after_days: int) -> list[tuple[str, str]]:
    """Given the names in a memory folder, return (name, relative target) for logs to archive.

    A daily log is archived when its date is more than `after_days` days before `today`; its
    target is `archive/YYYY-MM/<name>`. Names that are not valid dates are left alone.
    """
    moves = []
    for name in sorted(names):
        match = _DAILY.match(name)
        if match is None:
            continue
        try:
            day = date(int(match["year"]), int(match["month"]), int(match["day"]))
        except ValueError:
            continue
        if (today - day).days > after_days:
            moves.append((name, f"{ARCHIVE_DIR}/{day:%Y-%m}/{name}"))
    return moves
