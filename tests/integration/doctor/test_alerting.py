"""`memwarden doctor` on where health alerts go, and on a secrets file that cannot name a channel
(the CLI as a subprocess)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from support.cli import run_subprocess
from support.deployments import make_sqlite_era_state
from support.schedulers import crontab_stub


@pytest.fixture
def state(tmp_path):
    return make_sqlite_era_state(tmp_path)


def findings(state, env=None) -> dict[str, dict]:
    result = run_subprocess(
        "--state-dir", state.state_dir, "doctor", "--skip-gateway", "--json", env=env
    )
    return {finding["key"]: finding for finding in result.json()["findings"]}


def secrets_file(home: Path, text: str) -> Path:
    path = home / ".config" / "memwarden" / "secrets.env"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o600)
    return path


def test_doctor_warns_that_no_slack_destination_is_set(state):
    found = findings(state)["alerts.destination"]

    assert found["severity"] == "warning"
    assert "no alert destination is set" in found["message"]
    assert "MEMWARDEN_SLACK_WEBHOOK_URL=" in found["fix"]


def test_doctor_says_where_alerts_go_when_a_webhook_is_set(state, isolated_env):
    secrets_file(isolated_env, "MEMWARDEN_SLACK_WEBHOOK_URL=https://hooks.slack.example/T/B/x\n")

    found = findings(state)

    assert found["alerts.destination"]["severity"] == "ok"
    assert "Slack incoming webhook" in found["alerts.destination"]["message"]
    assert "alerts.secrets_channel" not in found
    assert "hooks.slack.example" not in str(found)  # a secret, never shown


def test_doctor_bot_token_without_channel_needs_action(state, isolated_env):
    path = secrets_file(isolated_env, "MEMWARDEN_SLACK_BOT_TOKEN=xoxb-secret\n")

    found = findings(state)

    assert found["alerts.destination"]["severity"] == "action"
    assert "slack.channel: required with a bot token" in found["alerts.destination"]["message"]
    assert found["alerts.secrets_channel"]["severity"] == "warning"
    assert (
        f"{path} has no MEMWARDEN_SLACK_CHANNEL line" in found["alerts.secrets_channel"]["message"]
    )
    assert "xoxb-secret" not in str(found)


def test_doctor_quiet_run_logs_the_missing_destination(state):
    result = run_subprocess("-q", "--state-dir", state.state_dir, "doctor", "--skip-gateway")

    assert any(
        " WARNING memwarden: doctor alerts.destination: no alert destination" in line
        for line in result.stderr.splitlines()
    ), result.stderr


def test_install_starter_names_the_channel_so_doctor_does_not_warn_about_it(
    state, isolated_env, tmp_path
):
    env = dict(
        os.environ,
        **crontab_stub(tmp_path / "stubs"),
        MEMWARDEN_INSTALL_EXECUTABLE=str(Path(sys.executable).with_name("memwarden")),
    )
    assert run_subprocess("--state-dir", state.state_dir, "install", "cron", env=env).exit_code == 0
    starter = (isolated_env / ".config" / "memwarden" / "secrets.env").read_text()
    assert "# MEMWARDEN_SLACK_CHANNEL=" in starter
    assert "# MEMWARDEN_SLACK_BOT_TOKEN=" in starter

    found = findings(state, env=env)

    assert "alerts.secrets_channel" not in found
    assert found["alerts.destination"]["severity"] == "warning"


def test_doctor_counts_alertmanager_as_a_destination(state, monkeypatch):
    monkeypatch.setenv("MEMWARDEN_ALERTMANAGER_URLS", '["http://127.0.0.1:9093"]')

    found = findings(state)["alerts.destination"]

    assert found["severity"] == "ok"
    assert "Alertmanager (http://127.0.0.1:9093)" in found["message"]


def test_doctor_shows_alertmanager_urls_without_their_password(state, monkeypatch):
    monkeypatch.setenv("MEMWARDEN_ALERTMANAGER_URLS", '["http://ops:s3cret@127.0.0.1:9093"]')

    found = findings(state)["alerts.destination"]

    assert "s3cret" not in found["message"]
    assert "127.0.0.1:9093" in found["message"]


def test_doctor_resolve_timeout_within_one_health_interval_needs_action(state, monkeypatch):
    monkeypatch.setenv("MEMWARDEN_ALERTMANAGER_URLS", '["http://127.0.0.1:9093"]')
    monkeypatch.setenv("MEMWARDEN_ALERTMANAGER_RESOLVE_TIMEOUT_MINUTES", "5")

    found = findings(state)["alerts.resolve_timeout"]

    assert found["severity"] == "action"
    assert "open alerts would expire between two runs" in found["message"]
