"""Rotation of memwarden's logs (safe order, copies capped at `keep`), and when compacting
state.db pays."""

from __future__ import annotations

from memwarden.maintenance.facts import FileFacts
from memwarden.maintenance.housekeeping import LogStep, PageStats, plan_log_rotation, vacuum_pays


def files(**sizes: int) -> list[FileFacts]:
    return [FileFacts(name.replace("_", "."), size, 0.0) for name, size in sizes.items()]


def test_small_log_is_left_alone():
    assert plan_log_rotation(files(health_log=10), max_bytes=100, keep=3) == []


def test_oversized_log_shifts_copies_from_the_oldest_down():
    steps = plan_log_rotation(
        files(health_log=500, health_log_1=100, health_log_2=100), max_bytes=100, keep=3
    )
    assert steps == [
        LogStep("rename", "health.log.2", "health.log.3"),
        LogStep("rename", "health.log.1", "health.log.2"),
        LogStep("rename", "health.log", "health.log.1"),
    ]


def test_oversized_log_drops_the_copy_that_would_pass_keep():
    steps = plan_log_rotation(files(a_log=500, a_log_1=1, a_log_2=1), max_bytes=100, keep=2)
    assert steps == [
        LogStep("delete", "a.log.2"),
        LogStep("rename", "a.log.1", "a.log.2"),
        LogStep("rename", "a.log", "a.log.1"),
    ]


def test_keep_zero_deletes_the_oversized_log():
    assert plan_log_rotation(files(a_log=500), max_bytes=100, keep=0) == [
        LogStep("delete", "a.log")
    ]


def test_lowered_keep_deletes_surplus_copies_without_rotating():
    steps = plan_log_rotation(files(a_log=1, a_log_1=1, a_log_5=1), max_bytes=100, keep=2)
    assert steps == [LogStep("delete", "a.log.5")]


def test_other_files_in_the_log_folder_are_ignored():
    assert plan_log_rotation(files(notes_txt=10_000), max_bytes=100, keep=2) == []


def test_vacuum_pays_when_enough_of_the_file_is_free():
    assert vacuum_pays(PageStats(4096, 1000, 300), min_free_percent=20)


def test_vacuum_does_not_pay_under_the_share():
    assert not vacuum_pays(PageStats(4096, 1000, 100), min_free_percent=20)


def test_vacuum_does_not_pay_for_a_small_database():
    assert not vacuum_pays(PageStats(4096, 10, 9), min_free_percent=20)
