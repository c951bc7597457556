"""The names of the gateway config's backups: the one writer and the one reader of them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memwarden.store.storage import backup_name, is_backup


def test_a_backup_name_is_read_as_a_backup():
    name = backup_name("openclaw.json", datetime(2026, 11, 3, 3, tzinfo=UTC))
    assert name == "20261103T030000.000000Z-openclaw.json"
    assert is_backup(name)


@pytest.mark.parametrize(
    ("name", "backup"),
    [
        ("20261103T030000Z-openclaw.json", True),  # memwarden versions before microseconds
        (".20261103T030000.000000Z-openclaw.json.k2v9x0aa.tmp", False),  # one being written
        ("20261103T030000.000000Z", False),
        ("README", False),
    ],
)
def test_is_backup_takes_older_names_and_leaves_temp_files_and_others(name, backup):
    assert is_backup(name) is backup
