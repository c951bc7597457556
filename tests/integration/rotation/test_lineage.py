"""The rotation lineage table: recording, reading back, and "a rotation that keeps failing"."""

from __future__ import annotations

import sqlite3

import pytest

from memwarden.rotation.lineage import recent_rotation_failures, record_rotation
from memwarden.store.state import StateDB
from support.lineage import last_rotations


@pytest.fixture
def state(tmp_path):
    database = StateDB(tmp_path / "state.db")
    yield database
    database.close()


def attempt(state, key, outcome, ts, error=None):
    record_rotation(
        state,
        session_key=key,
        outcome=outcome,
        why="160,000 tokens ≥ limit 150,000",
        agent_id="main",
        error=error,
        ts=ts,
    )


def test_record_rotation_reads_back_every_field(state):
    record_rotation(
        state,
        session_key="agent:main:main",
        outcome="rotated",
        why="160,000 tokens ≥ limit 150,000",
        agent_id="main",
        run_id=7,
        old_session_id="old",
        new_session_id="new",
        new_revision="rev-2",
        tokens=160_000,
        token_source="gateway",
        context_tokens=200_000,
        token_limit=150_000,
        reset_reason="new",
        checkpoint={"ok": True, "files": ["memory/ACTIVE_CONTEXT.md"]},
        ts=1000.0,
    )

    (rotation,) = last_rotations(state)

    assert (rotation.session_key, rotation.old_session_id, rotation.new_session_id) == (
        "agent:main:main",
        "old",
        "new",
    )
    assert (rotation.tokens, rotation.context_tokens, rotation.token_limit) == (
        160_000,
        200_000,
        150_000,
    )
    assert (rotation.reset_reason, rotation.new_revision, rotation.run_id) == ("new", "rev-2", 7)
    assert rotation.checkpoint == {"ok": True, "files": ["memory/ACTIVE_CONTEXT.md"]}


def test_record_rotation_unknown_outcome_is_refused(state):
    with pytest.raises(sqlite3.IntegrityError, match="CHECK constraint failed"):
        attempt(state, "agent:main:main", "maybe", 1.0)


def test_recent_rotation_failures_counts_trailing_failures_per_session(state):
    attempt(state, "agent:main:old", "failed", 50.0, "before the window")
    attempt(state, "agent:main:stuck", "failed", 100.0, "first")
    attempt(state, "agent:main:stuck", "failed", 200.0, "second")
    attempt(state, "agent:main:stuck", "failed", 300.0, "third")
    attempt(state, "agent:main:healed", "failed", 110.0, "transient")
    attempt(state, "agent:main:healed", "rotated", 210.0)
    attempt(state, "agent:main:relapsed", "rotated", 120.0)
    attempt(state, "agent:main:relapsed", "failed", 220.0, "again")

    failures = recent_rotation_failures(state, since=100.0)

    assert [(f.session_key, f.failures, f.last_error, f.last_at) for f in failures] == [
        ("agent:main:stuck", 3, "third", 300.0),
        ("agent:main:relapsed", 1, "again", 220.0),
    ]
    assert failures[0].agent_id == "main"


def test_recent_rotation_failures_nothing_recorded_is_empty(state):
    assert recent_rotation_failures(state, since=0.0) == []
