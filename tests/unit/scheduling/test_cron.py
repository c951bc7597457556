"""Cron schedules from intervals, and memwarden's block replaced and removed idempotently."""

from __future__ import annotations

import pytest

from memwarden.process.errors import UsageError
from memwarden.scheduling.cron import (
    BEGIN_MARKER,
    END_MARKER,
    cron_schedule,
    find_block,
    remove_block,
    replace_block,
)
from memwarden.scheduling.jobs import ScheduledJob

BLOCK = f"{BEGIN_MARKER}\n*/5 * * * * /x/memwarden-cron health\n{END_MARKER}\n"
USER_CRONTAB = "MAILTO=ops@example.org\n# nightly backup\n0 2 * * * /usr/local/bin/backup\n"


def job(minutes: int, offset: int = 3) -> ScheduledJob:
    return ScheduledJob("checkpoint", minutes, "summary", offset)


@pytest.mark.parametrize(
    ("minutes", "offset", "expected"),
    [
        (20, 2, "2-59/20 * * * *"),
        (5, 0, "0-59/5 * * * *"),
        (30, 34, "4-59/30 * * * *"),
        (1, 0, "* * * * *"),
        (60, 7, "7 * * * *"),
        (360, 7, "7 */6 * * *"),
        (1440, 13, "13 3 * * *"),
        (2880, 13, "13 3 */2 * *"),
    ],
)
def test_cron_schedule_interval_gives_expected_fields(minutes, offset, expected):
    assert cron_schedule(job(minutes, offset)) == expected


@pytest.mark.parametrize("minutes", [7, 90, 300, 2000])
def test_cron_schedule_inexpressible_interval_raises_naming_the_setting(minutes):
    with pytest.raises(UsageError, match=rf"schedule.checkpoint_minutes = {minutes}"):
        cron_schedule(job(minutes))


def test_replace_block_empty_crontab_gives_the_block_alone():
    assert replace_block("", BLOCK) == BLOCK


def test_replace_block_appends_after_user_lines_and_keeps_them():
    result = replace_block(USER_CRONTAB, BLOCK)
    assert result.startswith(USER_CRONTAB)
    assert result.endswith(BLOCK)


def test_replace_block_twice_is_idempotent():
    once = replace_block(USER_CRONTAB, BLOCK)
    assert replace_block(once, BLOCK) == once


def test_replace_block_existing_block_is_replaced_in_place():
    old = f"{USER_CRONTAB}{BLOCK}0 4 * * * /usr/bin/after\n"
    new_block = BLOCK.replace("*/5", "*/10")
    result = replace_block(old, new_block)
    assert result == f"{USER_CRONTAB}{new_block}0 4 * * * /usr/bin/after\n"
    assert result.count(BEGIN_MARKER) == 1


def test_remove_block_restores_the_crontab_as_it_was():
    assert remove_block(replace_block(USER_CRONTAB, BLOCK)) == USER_CRONTAB


def test_remove_block_only_block_leaves_empty_crontab():
    assert remove_block(BLOCK) == ""


def test_remove_block_without_block_changes_nothing():
    assert remove_block(USER_CRONTAB) == USER_CRONTAB


def test_find_block_begin_without_end_raises_with_fix():
    with pytest.raises(UsageError, match="crontab -e"):
        find_block(f"{USER_CRONTAB}{BEGIN_MARKER}\n* * * * * x\n")
