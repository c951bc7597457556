"""`memwarden health` against the real gateway with a real Alertmanager (and a Slack stand-in
behind it as the receiver): running → no alert; stopped → one active alert labelled with its
check and gateway, one notification; started again → resolved, one resolved notification.

The gateway fixture may be shared with other tests: it is always started again before the test
ends, on the same port and state.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.cli import run_subprocess
from support.prometheus import Alertmanager, wait_for
from support.slack_server import SlackServer

pytestmark = pytest.mark.e2e

GATEWAY_NAME = "e2e-gateway"


def memwarden_env(gateway, tmp_path: Path, manager: Alertmanager) -> dict[str, str]:
    """The environment of a memwarden run against `gateway`, alerting Alertmanager only."""
    env = dict(gateway.env)
    env.update(
        XDG_STATE_HOME=str(tmp_path / "xdg-state"),
        XDG_CONFIG_HOME=str(tmp_path / "xdg-config"),
        OPENCLAW_GATEWAY_TOKEN=gateway.token,
        MEMWARDEN_HEALTH_GATEWAY_NAME=GATEWAY_NAME,
        MEMWARDEN_HEALTH_PROBE_TIMEOUT_SECONDS="5",
        MEMWARDEN_HEALTH_METRICS_FILE=str(tmp_path / "memwarden.prom"),
        MEMWARDEN_ALERTMANAGER_URLS=json.dumps([manager.url]),
        # The machine's disk and the jobs this test does not run are not its subject.
        MEMWARDEN_HEALTH_DISABLED_CHECKS=json.dumps(["disk:*", "jobs.stale:*"]),
    )
    return env


def health(gateway, env: dict[str, str]) -> dict:
    result = run_subprocess(
        "--state-dir", gateway.state_dir, "health", "--json", env=env, timeout=120
    )
    assert result.stdout, result.stderr
    return json.loads(result.stdout)


def notes(receiver: SlackServer, status: str) -> list[dict]:
    return [
        request.body
        for request in receiver.delivered()
        if request.body.get("status") == status
        and request.body.get("groupLabels", {}).get("alertname") == "MemwardenGatewayLive"
    ]


def test_alertmanager_gateway_stopped_one_alert_then_started_resolved(gateway, tmp_path):
    with SlackServer() as receiver, Alertmanager(tmp_path / "am", receiver.webhook_url) as manager:
        env = memwarden_env(gateway, tmp_path, manager)
        data = health(gateway, env)
        assert "alertmanager" in data["alerts"], data["alerts"]
        assert manager.alerts(check="gateway.live") == []

        gateway.stop()
        try:
            data = health(gateway, env)
            sent = data["alerts"]["alertmanager"]["sent"]
            assert sent["ok"] and sent["accepted_by"] == manager.url, sent
            [alert] = manager.alerts(check="gateway.live")
            assert alert["labels"]["gateway"] == GATEWAY_NAME
            assert alert["labels"]["instance"] == GATEWAY_NAME
            assert alert["labels"]["severity"] == "critical"
            assert "connection refused" in alert["annotations"]["summary"]
            wait_for(lambda: notes(receiver, "firing"), "the firing notification")

            health(gateway, env)  # still down: sent again, still one alert
            assert len(manager.alerts(check="gateway.live")) == 1
        finally:
            gateway.start()

        data = health(gateway, env)
        assert data["alerts"]["alertmanager"]["sent"]["resolved"] >= 1
        assert manager.alerts(check="gateway.live") == []
        wait_for(lambda: notes(receiver, "resolved"), "the resolved notification")
        assert len(notes(receiver, "firing")) == 1, "one outage, one notification"
        metrics = (tmp_path / "memwarden.prom").read_text()
        assert (
            f'memwarden_health_check_status{{gateway="{GATEWAY_NAME}",check="gateway.live"}} 0'
            in (metrics)
        )
