"""The rotation lineage table: recording, reading back, and "a rotation that keeps failing"."""

from __future__ import annotations

import sqlite3

import pytest

from memwarden.rotation.lineage import recent_rotation_failures, record_rotation
from memwarden.rotation.policy import Decision
from memwarden.rotation.report import Outcome
from memwarden.store.state import StateDB
from support.lineage import last_rotations


@pytest.fixture
def state(tmp_path):
    database = StateDB(tmp_path / "state.db")
    yield database
    database.close()


def decided(key: str, **fields) -> Decision:
    values = {
        "agent_id": "main",
        "session_id": None,
        "action": "rotate",
        "check": "rotate",
        "reason": "160,000 tokens ≥ limit 150,000",
        "wanted": True,
        "tokens": None,
        "token_source": None,
        "context_tokens": None,
        "limit": 150_000,
    }
    return Decision(key, **{**values, **fields})


def attempt(state, key, status, ts, error=None):
    record_rotation(state, decided(key), Outcome(status, error or "checkpointed and reset"), ts=ts)


def test_record_rotation_reads_back_every_field(state):
    record_rotation(
        state,
        decided(
            "agent:main:main",
            session_id="old",
            tokens=160_000,
            token_source="gateway",
            context_tokens=200_000,
        ),
        Outcome(
            "rotated",
            "checkpointed and reset (new id new)",
            new_session_id="new",
            new_revision="rev-2",
            checkpoint={"ok": True, "files": ["memory/ACTIVE_CONTEXT.md"]},
        ),
        run_id=7,
        reset_reason="new",
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
    assert (rotation.outcome, rotation.error, rotation.why) == (
        "rotated",
        None,
        "160,000 tokens ≥ limit 150,000",
    )


def test_record_rotation_failed_outcome_keeps_its_error(state):
    attempt(state, "agent:main:main", "failed", 1.0, "session-changed")

    (rotation,) = last_rotations(state)

    assert (rotation.outcome, rotation.error) == ("failed", "session-changed")


def test_rotations_table_refuses_an_unknown_outcome(state):
    with pytest.raises(sqlite3.IntegrityError, match="CHECK constraint failed"):
        state.connection.execute(
            "INSERT INTO rotations (ts, session_key, why, outcome) VALUES (1, 'k', 'w', 'maybe')"
        )


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
