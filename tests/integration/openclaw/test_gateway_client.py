"""The gateway client against the simulator: protocol, paging, every failure path, HTTP probes."""

from __future__ import annotations

import http.server
import socket
import threading
import time

import httpx
import pytest

from memwarden.openclaw.endpoint import http_base
from memwarden.openclaw.gateway import (
    GatewayAuthError,
    GatewayCallError,
    GatewayClient,
    GatewayError,
)
from memwarden.openclaw.http_probe import probe_liveness, probe_readiness
from memwarden.process.errors import EXIT_USAGE
from support.gateway_sim import GatewaySimulator


@pytest.fixture
def sim():
    rows = [{"key": f"agent:main:s{index:02d}", "totalTokens": index} for index in range(12)]
    with GatewaySimulator(rows=rows, max_page=5) as simulator:
        yield simulator


def call(url, token, method, params=None, timeout=5.0):
    """Connect, make one call, close: the whole life of a GatewayClient, as the jobs use it."""
    with GatewayClient(url, token, timeout) as client:
        return client.call(method, params)


def test_client_connect_sends_protocol_4_operator_handshake(sim):
    with GatewayClient(sim.url, sim.token, timeout=5) as client:
        assert client.hello["type"] == "hello-ok"
        assert client.hello["protocol"] == 4

    connect = sim.calls("connect")[0]
    assert (connect["minProtocol"], connect["maxProtocol"], connect["role"]) == (4, 4, "operator")
    assert connect["client"]["id"] == "gateway-client"
    assert connect["client"]["mode"] == "backend"
    assert set(connect["scopes"]) == {"operator.admin", "operator.read", "operator.write"}
    assert connect["auth"] == {"token": "<redacted>"}


def test_client_call_with_events_interleaved_matches_response_by_id(sim):
    sim.faults.stray_responses = True

    with GatewayClient(sim.url, sim.token, timeout=5) as client:
        client.connect()
        before = sim.events_sent
        first = client.call("health")
        second = client.call("status")
        interleaved = sim.events_sent - before

    assert interleaved >= 2  # an event came before each response, with a stray response
    assert first["ok"] is True
    assert second["version"] == "2026.9.6"


def test_list_sessions_pages_until_has_more_is_false(sim):
    with GatewayClient(sim.url, sim.token, timeout=5) as client:
        rows = client.list_sessions(page_size=4)

    assert sorted(row["key"] for row in rows) == [f"agent:main:s{index:02d}" for index in range(12)]
    pages = sim.calls("sessions.list")
    assert [page.get("offset", 0) for page in pages] == [0, 4, 8]
    assert all(page["limit"] == 4 for page in pages)


def test_list_sessions_server_caps_page_size_still_gets_every_row(sim):
    with GatewayClient(sim.url, sim.token, timeout=5) as client:
        rows = client.list_sessions(page_size=200)

    assert len(rows) == 12
    assert len(sim.calls("sessions.list")) == 3  # the simulator serves at most 5 rows a page


def test_connect_wrong_token_raises_auth_error_naming_the_fix(sim):
    with pytest.raises(GatewayAuthError) as caught:
        GatewayClient(sim.url, "not-the-token", timeout=5).connect()

    message = caught.value.message
    assert "refused the token (AUTH_TOKEN_MISMATCH)" in message
    assert "gateway.auth.token" in message
    assert "not-the-token" not in message
    assert caught.value.exit_code == EXIT_USAGE


def test_connect_token_mismatch_fault_raises_auth_error(sim):
    sim.faults.wrong_token = True

    with pytest.raises(GatewayAuthError, match="AUTH_TOKEN_MISMATCH"):
        call(sim.url, sim.token, "health", timeout=5)


def test_connect_without_token_raises_auth_error_token_missing(sim):
    with pytest.raises(GatewayAuthError, match="needs a token and none was given"):
        call(sim.url, None, "health", timeout=5)


def test_call_answered_late_within_timeout_succeeds(sim):
    sim.faults.delay["health"] = 0.3

    assert call(sim.url, sim.token, "health", timeout=5)["ok"] is True


def test_call_slower_than_timeout_raises_timeout(sim):
    sim.faults.delay["health"] = 5

    started = time.monotonic()
    with pytest.raises(GatewayError, match=r"did not answer health within 0\.3 s"):
        call(sim.url, sim.token, "health", timeout=0.3)
    assert time.monotonic() - started < 3


def test_call_never_answered_raises_timeout(sim):
    sim.faults.never_answer.add("sessions.list")

    with GatewayClient(sim.url, sim.token, timeout=5) as client:
        with pytest.raises(GatewayError, match=r"sessions\.list"):
            client.call("sessions.list", {}, timeout=0.3)
        assert client.call("health")["ok"] is True  # the client is still usable
    assert len(sim.calls("connect")) == 2  # on a new connection


def test_call_after_dropped_connection_connects_again(sim):
    sim.faults.drop_on.add("sessions.reset")

    with GatewayClient(sim.url, sim.token, timeout=5) as client:
        with pytest.raises(GatewayError, match=r"closed the connection during sessions\.reset"):
            client.call("sessions.reset", {"key": "agent:main:s01"})
        assert client.call("health")["ok"] is True
    assert len(sim.calls("connect")) == 2


def test_call_refused_by_the_gateway_keeps_the_connection(sim):
    sim.faults.errors["sessions.reset"] = {"code": "UNAVAILABLE", "message": "store busy"}

    with GatewayClient(sim.url, sim.token, timeout=5) as client:
        with pytest.raises(GatewayCallError):
            client.call("sessions.reset", {"key": "agent:main:s01"})
        assert client.call("health")["ok"] is True
    assert len(sim.calls("connect")) == 1


def test_missing_challenge_raises_timeout_on_connect(sim):
    sim.faults.no_challenge = True

    with pytest.raises(GatewayError, match="did not answer connect"):
        GatewayClient(sim.url, sim.token, timeout=0.3).connect()


def test_dropped_connection_raises_protocol_error(sim):
    sim.faults.drop_on.add("sessions.reset")

    with (
        GatewayClient(sim.url, sim.token, timeout=5) as client,
        pytest.raises(GatewayError, match=r"closed the connection during sessions\.reset"),
    ):
        client.call("sessions.reset", {"key": "agent:main:s01"})


def test_malformed_frame_raises_protocol_error(sim):
    sim.faults.malformed_on.add("health")

    with pytest.raises(GatewayError, match="not JSON during health"):
        call(sim.url, sim.token, "health", timeout=5)


def test_error_response_raises_call_error_with_code_and_details(sim):
    sim.faults.errors["sessions.reset"] = {
        "code": "UNAVAILABLE",
        "message": "store busy",
        "details": {"reason": "locked"},
    }

    with pytest.raises(GatewayCallError) as caught:
        call(sim.url, sim.token, "sessions.reset", {"key": "agent:main:s01"}, timeout=5)

    assert (caught.value.code, caught.value.reason) == ("UNAVAILABLE", "locked")
    assert caught.value.message == "gateway refused sessions.reset: store busy (UNAVAILABLE)"


def test_reset_with_other_session_id_raises_session_changed(sim):
    with pytest.raises(GatewayCallError) as caught:
        call(
            sim.url,
            sim.token,
            "sessions.reset",
            {"key": "agent:main:s01", "expectedSessionId": "someone-else"},
            timeout=5,
        )

    assert caught.value.reason == "session-changed"


def test_connect_to_closed_port_raises_unreachable():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    with pytest.raises(GatewayError, match=f"cannot reach the gateway at ws://127.0.0.1:{port}"):
        call(f"ws://127.0.0.1:{port}", "t", "health", timeout=2)


class _ControlUiPage(http.server.BaseHTTPRequestHandler):
    """Answers every GET with HTML, as a web server (not a gateway) on the port would."""

    protocol_version = "HTTP/1.1"

    def do_GET(self):
        body = b"<!doctype html><title>not a gateway</title>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *arguments):
        pass


def test_connect_to_plain_http_server_raises_unreachable():
    server = http.server.HTTPServer(("127.0.0.1", 0), _ControlUiPage)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"ws://127.0.0.1:{server.server_address[1]}"
        with pytest.raises(GatewayError, match="answered HTTP 200 instead of a WebSocket"):
            call(url, "t", "health", timeout=2)
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("url", ["http//nowhere", "ws://[bad", "ws://127.0.0.1:99999"])
def test_invalid_url_raises_unreachable_naming_gateway_url(url):
    with pytest.raises(GatewayError, match=r"is not a ws:// or wss:// URL: fix gateway\.url"):
        call(url, "t", "health", timeout=1)


def test_connect_failure_that_is_not_the_url_is_not_blamed_on_gateway_url(sim):
    # A timeout no setting can hold any more (NaN): websockets refuses it with a ValueError.
    with pytest.raises(ValueError, match="NaN"):
        call(sim.url, sim.token, "health", timeout=float("nan"))


def test_http_base_maps_websocket_schemes():
    assert http_base("ws://127.0.0.1:18789") == "http://127.0.0.1:18789"
    assert http_base("wss://gw.example:443/") == "https://gw.example:443"


def _probe(probe, url, timeout=5.0):
    with httpx.Client(timeout=timeout, trust_env=False) as client:
        return probe(client, url)


def test_probes_live_and_ready_gateway_are_ok(sim):
    live = _probe(probe_liveness, sim.http_url)
    ready = _probe(probe_readiness, sim.http_url)

    assert (live.ok, live.status_code, live.body) == (True, 200, {"ok": True, "status": "live"})
    assert (ready.ok, ready.status_code, ready.detail) == (True, 200, "ready")


def test_probe_readiness_not_ready_names_failing_parts(sim):
    sim.faults.http = "not_ready"
    sim.faults.ready_failing = ["channels", "models"]

    ready = _probe(probe_readiness, sim.http_url)

    assert (ready.ok, ready.status_code) == (False, 503)
    assert ready.detail == "HTTP 503, not ready (failing: channels, models)"


def test_probe_liveness_html_answer_is_not_ok(sim):
    sim.faults.http = "html"

    live = _probe(probe_liveness, sim.http_url)

    assert (live.ok, live.status_code) == (False, 200)
    assert "HTTP 200 with text/html, not the gateway's JSON" in live.detail


def test_probe_liveness_nothing_listening_is_not_ok():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    live = _probe(probe_liveness, f"http://127.0.0.1:{port}", timeout=2)

    assert (live.ok, live.status_code) == (False, None)
    assert live.detail == "connection refused (gateway not running?)"


def test_client_messages_never_show_a_password_in_the_url():
    from memwarden.openclaw.gateway import GatewayClient, GatewayError

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = GatewayClient(f"ws://ops:hunter2-secret@127.0.0.1:{port}", "t", 2)
    with pytest.raises(GatewayError) as raised:
        client.connect()
    assert "hunter2-secret" not in raised.value.message
    assert f"ws://127.0.0.1:{port}" in raised.value.message
