"""`memwarden health` against the real gateway: running → all gateway checks ok (HTTP probes,
the `health` RPC, the process found by its command line); stopped → one critical alert on the
Slack stand-in; started again → one resolved notice.

The gateway fixture may be shared with other tests: it is always started again before the test
ends, on the same port and state.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.cli import run_subprocess
from support.slack_server import SlackServer

pytestmark = pytest.mark.e2e

TOKEN = "xoxb-e2e-health"
CHANNEL = "C0E2EHEALTH"


def memwarden_env(gateway, tmp_path: Path, slack: SlackServer) -> dict[str, str]:
    """The environment of a memwarden run against `gateway`, its state kept in `tmp_path`."""
    env = dict(gateway.env)
    env.update(
        XDG_STATE_HOME=str(tmp_path / "xdg-state"),
        XDG_CONFIG_HOME=str(tmp_path / "xdg-config"),
        OPENCLAW_GATEWAY_TOKEN=gateway.token,
        MEMWARDEN_SLACK_BOT_TOKEN=TOKEN,
        MEMWARDEN_SLACK_CHANNEL=CHANNEL,
        MEMWARDEN_SLACK_API_BASE_URL=slack.api_base_url,
        MEMWARDEN_SLACK_TIMEOUT_SECONDS="5",
        MEMWARDEN_HEALTH_RPC_CHECK="true",
        MEMWARDEN_HEALTH_PROBE_TIMEOUT_SECONDS="5",
        # The machine's disk and the jobs this test does not run are not its subject.
        MEMWARDEN_HEALTH_DISABLED_CHECKS=json.dumps(["disk:*", "jobs.stale:*"]),
    )
    return env


def health(gateway, env: dict[str, str]) -> tuple[int, dict]:
    result = run_subprocess(
        "--state-dir", gateway.state_dir, "health", "--json", env=env, timeout=120
    )
    assert result.stdout, result.stderr
    return result.exit_code, json.loads(result.stdout)


def checks_of(data: dict) -> dict[str, dict]:
    return {check["key"]: check for check in data["checks"]}


def test_health_gateway_stopped_alerts_critical_and_started_resolves(gateway, tmp_path):
    with SlackServer(token=TOKEN, channels={CHANNEL}) as slack:
        env = memwarden_env(gateway, tmp_path, slack)

        code, data = health(gateway, env)
        checks = checks_of(data)
        assert checks["gateway.live"]["status"] == "ok", checks["gateway.live"]
        assert checks["gateway.ready"]["status"] == "ok", checks["gateway.ready"]
        assert checks["gateway.rpc"]["status"] == "ok", checks["gateway.rpc"]
        assert checks["gateway.process"]["status"] == "ok", checks["gateway.process"]
        assert code == 0, data
        assert not [text for text in slack.texts() if "gateway.live" in text]

        gateway.stop()
        try:
            code, data = health(gateway, env)
            assert code == 1
            live = checks_of(data)["gateway.live"]
            assert live["status"] == "critical"
            assert "connection refused" in live["message"]
            down = [text for text in slack.texts() if "] gateway.live:" in text]
            assert len(down) == 1, slack.texts()
            assert "New:" in down[0] and "[critical] gateway.live" in down[0]

            health(gateway, env)  # still down, within the cooldown: nothing more about it
            assert len([text for text in slack.texts() if "] gateway.live:" in text]) == 1
        finally:
            gateway.start()

        code, data = health(gateway, env)
        assert checks_of(data)["gateway.live"]["status"] == "ok"
        assert code == 0, data
        mentions = [text for text in slack.texts() if "] gateway.live:" in text]
        assert len(mentions) == 2
        assert "Resolved:" in mentions[1] and "[resolved] gateway.live" in mentions[1]
