"""The Alertmanager sink against a real Alertmanager on 127.0.0.1: what it lists, every URL
sent to, refusals and the whole-call deadline; and the `[alertmanager]` settings' validation."""

from __future__ import annotations

import socket
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest

from memwarden.alerts import Alert, AlertMessage, alertmanager_destination
from memwarden.alerts.alertmanager import AlertmanagerSink
from memwarden.alerts.sinks import alertmanager_sink
from memwarden.process.errors import ConfigError
from memwarden.settings import config
from support.prometheus import Alertmanager, free_port

LABELS = {"alertname": "MemwardenGatewayLive", "check": "gateway.live", "gateway": "gw-1"}


@pytest.fixture
def manager(tmp_path):
    with Alertmanager(tmp_path / "am") as running:
        yield running


def closed_url() -> str:
    return f"http://127.0.0.1:{free_port()}"


def alert(ends_in: timedelta = timedelta(minutes=15), **labels: str) -> Alert:
    now = datetime.now(UTC).replace(microsecond=0)
    return Alert(
        LABELS | labels,
        {"summary": "gateway not live", "fix": "restart it"},
        now - timedelta(minutes=1),
        now + ends_in,
        "http://grafana.example/d/gw-1",
    )


def test_alertmanager_sink_posted_alert_is_listed_with_labels_annotations_and_times(manager):
    sent = alert()
    result = AlertmanagerSink([manager.url]).send(AlertMessage("1 firing", alerts=(sent,)))
    assert result.ok, result.error
    assert result.remote_id == manager.url
    [listed] = manager.alerts()
    assert listed["labels"] == LABELS
    assert listed["annotations"] == {"summary": "gateway not live", "fix": "restart it"}
    assert listed["generatorURL"] == "http://grafana.example/d/gw-1"
    assert listed["status"]["state"] == "active"
    assert datetime.fromisoformat(listed["startsAt"]) == sent.starts_at
    assert datetime.fromisoformat(listed["endsAt"]) == sent.ends_at


def test_alertmanager_sink_resolution_ends_the_alert(manager):
    sink = AlertmanagerSink([manager.url])
    assert sink.send(AlertMessage("1 firing", alerts=(alert(),))).ok
    assert len(manager.alerts()) == 1
    assert sink.send(AlertMessage("1 resolved", alerts=(alert(ends_in=timedelta(0)),))).ok
    assert manager.alerts() == []


def test_alertmanager_sink_sends_to_every_member_of_a_cluster(manager, tmp_path):
    # Members do not share alerts: each must receive them, or one that fails over has none.
    with Alertmanager(tmp_path / "am2") as other:
        result = AlertmanagerSink([manager.url, other.url]).send(
            AlertMessage("1 firing", alerts=(alert(),))
        )
        assert result.ok, result.error
        assert result.error is None
        assert result.remote_id == f"{manager.url}, {other.url}"
        assert len(manager.alerts(check="gateway.live")) == 1
        assert len(other.alerts(check="gateway.live")) == 1


def test_alertmanager_sink_delivered_when_one_accepts_and_names_the_one_that_did_not(manager):
    closed = closed_url()
    result = AlertmanagerSink([closed, manager.url]).send(
        AlertMessage("1 firing", alerts=(alert(),))
    )
    assert result.ok
    assert result.remote_id == manager.url
    assert (result.error, result.missed) == (None, f"{closed}: connection refused")
    assert len(manager.alerts(check="gateway.live")) == 1


def test_alertmanager_sink_every_url_down_names_each_failure():
    first, second = closed_url(), closed_url()
    result = AlertmanagerSink([first, second]).send(AlertMessage("1 firing", alerts=(alert(),)))
    assert not result.ok
    assert result.error == (
        f"Alertmanager did not take the alerts: {first}: connection refused; "
        f"{second}: connection refused"
    )


def test_alertmanager_sink_refused_alert_reports_status_and_reason(manager):
    empty = Alert({}, {}, datetime.now(UTC), datetime.now(UTC) + timedelta(minutes=5))
    result = AlertmanagerSink([manager.url]).send(AlertMessage("bad", alerts=(empty,)))
    assert not result.ok
    assert f"{manager.url}: HTTP 400" in result.error
    assert "at least one label pair required" in result.error


def test_alertmanager_sink_nothing_to_send_posts_nothing():
    assert AlertmanagerSink([closed_url()]).send(AlertMessage("nothing")).ok


@pytest.fixture
def trickling_server():
    """A server that accepts, then sends one byte of its answer every 0.1 s for 30 s: every
    read is quick, the answer never ends."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            with connection:
                deadline = time.monotonic() + 30
                for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"x" * 1000:
                    if stop.is_set() or time.monotonic() > deadline:
                        break
                    try:
                        connection.sendall(bytes([byte]))
                    except OSError:
                        break
                    time.sleep(0.1)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    thread.join(timeout=5)
    listener.close()


def test_alertmanager_sink_trickling_answer_is_cut_by_the_whole_call_deadline(
    trickling_server, manager
):
    sink = AlertmanagerSink([trickling_server, manager.url], timeout_seconds=0.5)
    result = sink.send(AlertMessage("1 firing", alerts=(alert(),)))
    assert result.ok
    assert result.remote_id == manager.url, "the other URL is not held by the trickling one"
    assert result.missed == f"{trickling_server}: no answer within 0.5 s"

    alone = AlertmanagerSink([trickling_server], timeout_seconds=0.5)
    result = alone.send(AlertMessage("1 firing", alerts=(alert(),)))
    assert result.error == (
        f"Alertmanager did not take the alerts: {trickling_server}: no answer within 0.5 s"
    )


def settings(**values):
    env = {f"MEMWARDEN_ALERTMANAGER_{name.upper()}": value for name, value in values.items()}
    return config.load(None, env=env).alertmanager


def test_alertmanager_destination_names_urls_without_credentials():
    chosen = settings(urls='["http://am1:9093/", "https://ops:s3cret@am2.example:9443"]')
    assert alertmanager_destination(chosen) == (
        "Alertmanager http://am1:9093, https://am2.example:9443"
    )
    sink = alertmanager_sink(chosen)
    assert "s3cret" not in repr(sink)
    assert alertmanager_destination(settings()) is None
    assert alertmanager_sink(settings()) is None


def test_alertmanager_labels_setting_checks_label_names():
    with pytest.raises(ConfigError) as raised:
        settings(labels='{"bad-name": "x"}')
    assert "MEMWARDEN_ALERTMANAGER_LABELS" in raised.value.problems[0]
    assert "invalid name(s) 'bad-name'" in raised.value.problems[0]
    assert settings(labels='{"env": "prod"}').labels == {"env": "prod"}
