"""Snapshots record the lengths of the gateway's bootstrap files they hold (as the gateway counts
them), carried over when unchanged, and the budget forecast reads only their changes back."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memwarden.history.bootstrap_sizes import series
from memwarden.history.plan import SnapshotRequest
from memwarden.history.records import recorded_json
from memwarden.history.snapshots import snapshot_agents
from support.deployments import make_sqlite_era_state
from support.health import T0, HealthRunner
from support.history import write_tree


@pytest.fixture
def state(tmp_path):
    state = make_sqlite_era_state(tmp_path)
    write_tree(
        state.workspace,
        {
            "MEMORY.md": "# Memory\n- café ☕ 😀\n\n\n".encode(),  # 20 UTF-16 units: 😀 is two
            "USER.md": b"# User\n",
            "memory/2026-11-21.md": b"# day\n",
        },
    )
    return state


def snapshot_at(state, at):
    runner = HealthRunner(state.state_dir)
    context = runner.context(at)
    try:
        (agent,) = context.deployment.agents
        (result,) = snapshot_agents(context, [SnapshotRequest(agent, "manual")])
        assert result.error is None, result.error
        return result.snapshot.id if result.snapshot else None
    finally:
        context.close()


def read(state, function, *args):
    context = HealthRunner(state.state_dir).context()
    try:
        return function(context.state, *args)
    finally:
        context.close()


def lengths(state, snapshot_id):
    return read(state, recorded_json, snapshot_id, "bootstrap_json")


def test_snapshot_records_lengths_as_the_gateway_counts_them(state):
    first = snapshot_at(state, T0)
    assert lengths(state, first) == {"MEMORY.md": 20, "USER.md": 6}


def test_unchanged_files_carry_their_length_and_only_changes_are_read_back(state):
    first = snapshot_at(state, T0)
    (state.workspace / "memory" / "2026-11-21.md").write_bytes(b"# day\n- more\n")
    second = snapshot_at(state, T0 + timedelta(hours=1))
    (state.workspace / "USER.md").write_bytes(b"# User\n- Sam\n")
    third = snapshot_at(state, T0 + timedelta(hours=2))
    assert lengths(state, second) == lengths(state, first)
    assert lengths(state, third) == {"MEMORY.md": 20, "USER.md": 12}

    found = read(state, series, (T0 - timedelta(days=1)).timestamp())
    assert found == {
        "main": [
            (T0.timestamp(), {"MEMORY.md": 20, "USER.md": 6}),
            ((T0 + timedelta(hours=2)).timestamp(), {"MEMORY.md": 20, "USER.md": 12}),
        ]
    }
    # from 30 minutes on: the lengths in force then (the first snapshot's), then the change
    found = read(state, series, (T0 + timedelta(minutes=30)).timestamp())
    assert [when for when, _ in found["main"]] == [
        T0.timestamp(),
        (T0 + timedelta(hours=2)).timestamp(),
    ]


def test_first_snapshot_after_the_upgrade_measures_the_unchanged_files(state):
    first = snapshot_at(state, T0)
    context = HealthRunner(state.state_dir).context()
    try:
        with context.state.transaction() as connection:  # as a snapshot taken before 0012
            connection.execute("UPDATE history_snapshots SET bootstrap_json = NULL")
    finally:
        context.close()
    assert lengths(state, first) is None
    (state.workspace / "memory" / "2026-11-21.md").write_bytes(b"# day\n- more\n")
    second = snapshot_at(state, T0 + timedelta(hours=1))
    assert lengths(state, second) == {"MEMORY.md": 20, "USER.md": 6}
