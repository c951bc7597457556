"""Every network call has a deadline on the whole call, against a real server dripping bytes.

The drip server sends a byte every 0.2 s and never finishes, so a per-read timeout never fires:
a client without a whole-call deadline never returns and the test's own timeout fails it.
"""

from __future__ import annotations

import os

import httpx
import pytest

from memwarden.alerts import AlertMessage
from memwarden.alerts.slack import SlackWebApiSink, SlackWebhookSink
from memwarden.openclaw.gateway import GatewayClient, GatewayError
from memwarden.openclaw.http_probe import probe_liveness, probe_readiness
from memwarden.process.deadline import Deadline, DeadlineExceeded, call_with_deadline
from support.cli import run_subprocess
from support.deployments import make_sqlite_era_state
from support.drip_server import (
    DripServer,
    http_body_drip,
    http_headers_drip,
    websocket_frame_drip,
)
from support.health import MACHINE_DEPENDENT_CHECKS
from support.slack_server import SlackServer, ok, rate_limited

pytestmark = pytest.mark.timeout(60)

MESSAGE = AlertMessage("gateway.live: down")
HTTP_DRIPS = {"headers": http_headers_drip(), "body": http_body_drip()}


@pytest.fixture(params=HTTP_DRIPS.values(), ids=HTTP_DRIPS.keys())
def http_drip(request):
    with DripServer(request.param) as server:
        yield server


@pytest.mark.parametrize("probe", [probe_liveness, probe_readiness])
def test_probe_server_dripping_bytes_fails_within_its_timeout(http_drip, probe):
    with httpx.Client(timeout=1.0, trust_env=False) as client:
        result = probe(client, http_drip.http_url)

    assert not result.ok
    assert result.detail == "no complete answer within 1 s (timed out)"


def test_slack_web_api_dripping_bytes_fails_within_its_timeout(http_drip):
    base_url = http_drip.http_url + "/api/"
    sink = SlackWebApiSink("xoxb-test", "C0TEST", base_url=base_url, timeout_seconds=1.0)

    result = sink.send(MESSAGE)

    assert not result.ok
    assert result.error == "Slack did not answer within 1 s (timed out)"


def test_slack_webhook_dripping_bytes_fails_within_its_timeout(http_drip):
    sink = SlackWebhookSink(http_drip.http_url + "/services/T/B/x", timeout_seconds=1.0)

    result = sink.send(MESSAGE)

    assert not result.ok
    assert result.error == "Slack did not answer within 1 s (timed out)"


def test_slack_retry_after_429_gets_its_wait_added_to_the_deadline():
    with SlackServer(token="xoxb-test", channels={"C0TEST"}) as slack:
        slack.queue(rate_limited(retry_after=1), ok())
        sink = SlackWebhookSink(slack.webhook_url, timeout_seconds=0.5, retry_budget_seconds=5)

        result = sink.send(MESSAGE)

        assert result.ok, result.error
        assert [request.answered for request in slack.requests] == [429, 200]


@pytest.mark.parametrize("drip", [http_headers_drip(), websocket_frame_drip()], ids=["http", "ws"])
def test_gateway_client_dripping_bytes_fails_to_connect_within_its_timeout(drip):
    with DripServer(drip) as server, pytest.raises(GatewayError, match="within 1 s"):
        GatewayClient(server.ws_url, "token", timeout=1.0).connect()


def test_health_everything_dripping_bytes_still_finishes_and_reports(tmp_path):
    """A whole `memwarden health` run, gateway and Slack both dripping, ends and says why."""
    state = make_sqlite_era_state(tmp_path)
    with DripServer(http_headers_drip()) as gateway, DripServer(http_body_drip()) as slack:
        env = dict(os.environ)
        env.update(
            {
                "MEMWARDEN_HEALTH_DISABLED_CHECKS": MACHINE_DEPENDENT_CHECKS,
                "MEMWARDEN_HEALTH_GATEWAY_HTTP_URL": gateway.http_url,
                "MEMWARDEN_HEALTH_PROBE_TIMEOUT_SECONDS": "1",
                "MEMWARDEN_SLACK_WEBHOOK_URL": slack.http_url + "/services/T/B/x",
                "MEMWARDEN_SLACK_TIMEOUT_SECONDS": "1",
            }
        )
        result = run_subprocess("--state-dir", state.state_dir, "health", env=env, timeout=50)

    assert result.exit_code == 1
    live = next(line for line in result.stdout.splitlines() if " gateway.live " in line)
    assert "no complete answer within 1 s (timed out)" in live
    assert "Slack did not answer within 1 s (timed out)" in result.stdout + result.stderr
    assert gateway.connections == 1 and slack.connections == 1


def test_call_with_deadline_returns_the_result_or_raises_what_the_call_raised():
    assert call_with_deadline(5, sum, [1, 2]) == 3
    with pytest.raises(ZeroDivisionError):
        call_with_deadline(5, divmod, 1, 0)


def test_call_with_deadline_stops_waiting_when_the_deadline_passes(http_drip):
    with httpx.Client(timeout=30, trust_env=False) as client, pytest.raises(DeadlineExceeded):
        call_with_deadline(Deadline(0.5), client.get, http_drip.http_url)
