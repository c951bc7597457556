"""Which daily logs are archived, and where."""

from __future__ import annotations

from datetime import date

from memwarden.maintenance.archive_step import plan_daily_archive


def test_daily_logs_older_than_the_limit_move_to_their_month():
    names = ["2026-10-01.md", "2026-11-10.md", "2026-11-21.md", "MEMORY.md", "2026-13-01.md"]
    assert plan_daily_archive(names, date(2026, 11, 22), after_days=30) == [
        ("2026-10-01.md", "archive/2026-10/2026-10-01.md"),
    ]


def test_daily_log_exactly_at_the_limit_stays():
    assert plan_daily_archive(["2026-10-23.md"], date(2026, 11, 22), after_days=30) == []
