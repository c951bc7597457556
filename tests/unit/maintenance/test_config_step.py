"""Gateway config backups: when to take one, which to prune, when the config shrank."""

from __future__ import annotations

from datetime import UTC, datetime

from memwarden.maintenance.config_step import (
    backups_to_prune,
    decide_backup,
    latest_backup,
)
from memwarden.store.storage import backup_name


def test_first_backup_is_taken_and_nothing_shrank():
    decision = decide_backup(b"{}", None, None, 0.5)
    assert decision.take and not decision.shrunk


def test_unchanged_config_is_not_backed_up_again():
    assert not decide_backup(b'{"a": 1}', b'{"a": 1}', b'{"a": 1}', 0.5).take


def test_config_under_half_its_last_backup_shrank():
    decision = decide_backup(b"x" * 40, b"y" * 100, b"y" * 100, 0.5)
    assert decision.take and decision.shrunk
    assert (decision.current_size, decision.previous_size) == (40, 100)


def test_config_slightly_smaller_did_not_shrink():
    assert not decide_backup(b"x" * 60, b"y" * 100, b"y" * 100, 0.5).shrunk


def test_backup_names_sort_by_time_and_prune_keeps_the_newest():
    names = [
        backup_name("openclaw.json", datetime(2026, 11, day, 3, tzinfo=UTC)) for day in (3, 1, 2)
    ]
    assert names[0] == "20261103T030000.000000Z-openclaw.json"
    assert latest_backup([*names, "README"]) == names[0]
    assert backups_to_prune([*names, "README"], keep=2) == [names[1]]
    assert backups_to_prune(names, keep=5) == []


def test_a_broken_edit_is_backed_up_and_measured_against_the_last_good_config():
    decision = decide_backup(b"", b"{ broken", b'{"agents": {"list": []}}' * 4, 0.5)

    assert decision.take  # a copy of what is there, broken or not
    assert (decision.shrunk, decision.previous_size) == (True, 96)


def test_the_last_good_backup_is_never_pruned_for_broken_ones():
    names = [f"2026112{day}T000000.000000Z-openclaw.json" for day in range(1, 6)]

    assert backups_to_prune(names, 2, spare=names[0]) == names[1:3]
    assert backups_to_prune(names, 2) == names[:3]
