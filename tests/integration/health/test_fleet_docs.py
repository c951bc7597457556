"""docs/fleet.md says what works: its memwarden config loads, its Prometheus config passes
`promtool check config` with the shipped rules, and its Alertmanager config passes `amtool
check-config` and, run by a real Alertmanager, routes memwarden's alerts to Slack (a stand-in
webhook) per gateway; a gateway that is down is one alert (its readiness is not probed)."""

from __future__ import annotations

import json
import re
import shlex
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from memwarden.settings import config
from support.deployments import make_sqlite_era_state
from support.gateway_sim import GatewaySimulator
from support.health import HealthRunner
from support.prometheus import Alertmanager, run_tool, wait_for
from support.slack_server import SlackServer

REPO = Path(__file__).resolve().parents[3]
FLEET = REPO / "docs" / "fleet.md"
RULES = REPO / "prometheus" / "memwarden.rules.yml"


def doc_block(name: str) -> str:
    """The code block that follows `<!-- tested: name -->` in docs/fleet.md."""
    text = FLEET.read_text(encoding="utf-8")
    found = re.search(rf"<!-- tested: {re.escape(name)} -->\n```\w+\n(.*?)\n```", text, re.DOTALL)
    assert found, f"docs/fleet.md has no tested block {name}"
    return found.group(1) + "\n"


def test_fleet_doc_memwarden_config_loads(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text(doc_block("config.toml"))
    settings = config.load(path, env={})
    assert settings.health.gateway_name == "prod-eu-1"
    assert len(settings.alertmanager.urls) == 2
    assert settings.alertmanager.labels == {"env": "prod"}


def test_fleet_doc_prometheus_config_passes_promtool_with_the_shipped_rules(tmp_path):
    document = doc_block("prometheus.yml")
    assert "/etc/prometheus/rules/memwarden.rules.yml" in document
    path = tmp_path / "prometheus.yml"
    path.write_text(document.replace("/etc/prometheus/rules/memwarden.rules.yml", str(RULES)))
    checked = run_tool("promtool", "check", "config", path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS: 10 rules found" in checked.stdout


def test_fleet_doc_alertmanager_config_passes_amtool(tmp_path):
    path = tmp_path / "alertmanager.yml"
    path.write_text(doc_block("alertmanager.yml"))
    checked = run_tool("amtool", "check-config", path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS" in checked.stdout


def test_fleet_doc_silence_command_silences_the_gateway(tmp_path):
    command = shlex.split(doc_block("amtool silence").replace("\\\n", " "))
    assert command[:3] == ["amtool", "silence", "add"]
    with Alertmanager(tmp_path / "am") as manager:
        url = "--alertmanager.url=http://alertmanager-1.internal:9093"
        added = run_tool(*[f"--alertmanager.url={manager.url}" if a == url else a for a in command])
        assert added.returncode == 0, added.stderr
        [silence] = httpx.get(f"{manager.url}/api/v2/silences", trust_env=False).json()
    assert silence["matchers"][0] | {"isRegex": False} == {
        "name": "gateway",
        "value": "prod-eu-1",
        "isRegex": False,
        "isEqual": True,
    }


@pytest.fixture
def sim():
    with GatewaySimulator() as simulator:
        yield simulator


def test_fleet_doc_alertmanager_routes_memwarden_alerts_to_slack(tmp_path, sim):
    with SlackServer() as slack:
        secret = tmp_path / "slack-webhook-url"
        secret.write_text(slack.webhook_url)
        document = (
            doc_block("alertmanager.yml")
            .replace("/etc/alertmanager/slack-webhook-url", str(secret))
            .replace("group_wait: 30s", "group_wait: 1s")  # both alerts in before a flush
            .replace("group_interval: 5m", "group_interval: 1s")
        )
        with Alertmanager(tmp_path / "am", config=document) as manager:
            runner = HealthRunner(
                make_sqlite_era_state(tmp_path).state_dir,
                env={
                    "MEMWARDEN_HEALTH_GATEWAY_HTTP_URL": sim.http_url,
                    "MEMWARDEN_HEALTH_GATEWAY_NAME": "prod-eu-1",
                    "MEMWARDEN_ALERTMANAGER_URLS": json.dumps([manager.url]),
                },
            )
            sim.faults.http = "error"
            runner.run(datetime.now(UTC))
            [message] = wait_for(lambda: titled(slack, "[FIRING]"), "Slack's message")
            assert message["title"] == "[FIRING] MemwardenGatewayLive on prod-eu-1"
            assert "*critical* gateway not live:" in message["text"]
            assert "Fix: The gateway is down or hung" in message["text"]
            assert {request.body["channel"] for request in slack.delivered()} == {"#memwarden"}
            # while the gateway is down its readiness is not probed: one outage, one alert
            assert [a["labels"]["alertname"] for a in manager.alerts()] == ["MemwardenGatewayLive"]

            sim.faults.http = None
            runner.run(datetime.now(UTC))
            [resolved] = wait_for(lambda: titled(slack, "[RESOLVED]"), "the resolved message")
            assert resolved["title"] == "[RESOLVED] MemwardenGatewayLive on prod-eu-1"
            assert len(titled(slack, "[FIRING]")) == 1
            assert not titled(slack, "[FIRING] MemwardenGatewayReady")


def titled(slack: SlackServer, prefix: str) -> list[dict]:
    """The Slack attachments delivered so far whose title starts with `prefix`."""
    return [
        attachment
        for request in slack.delivered()
        for attachment in request.body.get("attachments", [])
        if attachment["title"].startswith(prefix)
    ]
