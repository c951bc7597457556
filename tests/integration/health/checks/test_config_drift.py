"""config.drift: a recent `config.shrunk` event from maintain is a warning, an old one is not."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memwarden.health.checks import HealthInputs
from memwarden.health.checks.config_drift import check_config_drift
from memwarden.health.model import Status
from memwarden.settings.config import defaults
from memwarden.store.state import StateDB

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def inputs(state: StateDB) -> HealthInputs:
    return HealthInputs(defaults(), deployment_loader=lambda: None, state=state, now=NOW)


def shrink(state: StateDB, hours_ago: float) -> None:
    state.record_event(
        "config.shrunk",
        job="maintain",
        data={
            "config": "/s/openclaw.json",
            "previous_bytes": 4000,
            "current_bytes": 900,
            "previous_backup": "/b/openclaw.json.1",
        },
        ts=(NOW - timedelta(hours=hours_ago)).timestamp(),
    )


def test_config_drift_recent_shrink_is_warning_naming_backup(tmp_path):
    state = StateDB(tmp_path / "s.db")
    shrink(state, hours_ago=2)
    (result,) = check_config_drift(inputs(state))
    assert result.status is Status.WARNING
    assert "shrank from 4000 to 900 bytes" in result.message
    assert "/b/openclaw.json.1" in result.message


def test_config_drift_old_or_no_shrink_is_ok(tmp_path):
    state = StateDB(tmp_path / "s.db")
    assert check_config_drift(inputs(state))[0].status is Status.OK
    shrink(state, hours_ago=30)
    assert check_config_drift(inputs(state))[0].status is Status.OK
