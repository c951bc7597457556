"""When compacting state.db pays."""

from __future__ import annotations

from memwarden.maintenance.state_prune import PageStats, vacuum_pays


def test_vacuum_pays_when_enough_of_the_file_is_free():
    assert vacuum_pays(PageStats(4096, 1000, 300), min_free_percent=20)


def test_vacuum_does_not_pay_under_the_share():
    assert not vacuum_pays(PageStats(4096, 1000, 100), min_free_percent=20)


def test_vacuum_does_not_pay_for_a_small_database():
    assert not vacuum_pays(PageStats(4096, 10, 9), min_free_percent=20)
