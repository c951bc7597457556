"""`memwarden health` with a real Alertmanager on 127.0.0.1 (its API and a webhook receiver behind
it): gateway down → one active alert labelled with its check and gateway; back → resolved;
Alertmanager down during a run → the alert waits and is delivered on the next run, once.

The runs use the real clock: Alertmanager judges `endsAt` against its own.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime, timedelta

import pytest

from memwarden.health import store
from support.cli import run_cli
from support.deployments import make_sqlite_era_state
from support.gateway_sim import GatewaySimulator
from support.health import HealthRunner
from support.prometheus import Alertmanager, wait_for
from support.slack_server import SlackServer

GATEWAY = "gw-test:18789"
TOKEN = "xoxb-am-scenario"
CHANNEL = "C0AM"


@pytest.fixture
def sim():
    with GatewaySimulator() as simulator:
        yield simulator


@pytest.fixture
def receiver():
    """Where Alertmanager sends its notifications (a webhook stand-in)."""
    with SlackServer() as server:
        yield server


@pytest.fixture
def manager(tmp_path, receiver):
    """An Alertmanager, not started: each test starts it when its scenario says so."""
    manager = Alertmanager(tmp_path / "am", receiver_url=receiver.webhook_url)
    yield manager
    manager.stop()


@pytest.fixture
def runner(tmp_path, sim, manager):
    state = make_sqlite_era_state(tmp_path)
    return HealthRunner(
        state.state_dir,
        env={
            "MEMWARDEN_HEALTH_GATEWAY_HTTP_URL": sim.http_url,
            "MEMWARDEN_HEALTH_GATEWAY_NAME": GATEWAY,
            "MEMWARDEN_HEALTH_METRICS_FILE": str(tmp_path / "memwarden.prom"),
            "MEMWARDEN_ALERTMANAGER_URLS": json.dumps([manager.url]),
            "MEMWARDEN_ALERTMANAGER_TIMEOUT_SECONDS": "2",
            "MEMWARDEN_ALERTMANAGER_LABELS": '{"env": "test"}',
            "MEMWARDEN_ALERTMANAGER_GENERATOR_URL": "http://grafana.example/d/memwarden-gateway",
        },
    )


def now() -> datetime:
    return datetime.now(UTC)


def notifications(receiver: SlackServer, status: str, alertname: str) -> list[dict]:
    """The webhook notifications Alertmanager sent with `status` for the group `alertname`."""
    return [
        request.body
        for request in receiver.delivered()
        if request.body.get("status") == status
        and request.body.get("groupLabels", {}).get("alertname") == alertname
    ]


def feed_of(runner: HealthRunner):
    context = runner.context()
    try:
        return store.load_feed(context.state)
    finally:
        context.close()


def test_gateway_down_one_labelled_alert_then_back_resolved(runner, sim, manager, receiver):
    manager.start()
    sim.faults.http = "error"
    down = runner.run(now())
    assert down.exit_code == 1
    assert f"alertmanager: sent 1 firing, 0 resolved to {manager.url}" in down.lines

    [alert] = manager.alerts()  # one outage, one alert: readiness is not probed while down
    assert alert["labels"] == {
        "alertname": "MemwardenGatewayLive",
        "check": "gateway.live",
        "severity": "critical",
        "gateway": GATEWAY,
        "instance": GATEWAY,
        "env": "test",
    }
    assert alert["annotations"]["summary"].startswith("gateway not live:")
    assert "restart it" in alert["annotations"]["fix"]
    assert alert["generatorURL"] == "http://grafana.example/d/memwarden-gateway"
    assert len(manager.alerts(gateway=GATEWAY, alertname="MemwardenGatewayLive")) == 1
    wait_for(lambda: notifications(receiver, "firing", "MemwardenGatewayLive"), "the firing note")

    sim.faults.http = None
    back = runner.run(now())
    assert back.exit_code == 0, back.lines
    assert f"alertmanager: sent 0 firing, 1 resolved to {manager.url}" in back.lines
    assert manager.alerts(check="gateway.live") == []
    [resolved] = wait_for(
        lambda: notifications(receiver, "resolved", "MemwardenGatewayLive"), "the resolved note"
    )
    assert resolved["alerts"][0]["labels"]["check"] == "gateway.live"
    assert feed_of(runner) == {}, "a delivered resolution is dropped"

    quiet = runner.run(now())
    assert f"alertmanager: nothing open to send to Alertmanager {manager.url}" in quiet.lines


def test_gateway_down_rotate_failing_for_it_is_shown_but_raises_no_alert(runner, sim, manager):
    # rotate calls the gateway: its failures while the gateway is down are the same outage.
    context, start = runner.context(), now().timestamp()
    for minutes_ago in (95, 65, 35):
        run = context.state.start_run("rotate", now=start - minutes_ago * 60)
        error = "cannot reach the gateway at ws://127.0.0.1:18789 (connection refused)"
        context.state.finish_run(run, 1, {"error": error}, now=start - minutes_ago * 60 + 1)
    for job in ("checkpoint", "index"):  # the jobs that do not call the gateway are fine
        run = context.state.start_run(job, now=start - 60)
        context.state.finish_run(run, 0, {}, now=start - 59)
    context.close()
    manager.start()
    sim.faults.http = "error"
    down = runner.run(now())
    checks = {check["key"]: check["status"] for check in down.data["checks"]}
    assert checks["rotate.failing"] == "critical", "measured and shown"
    assert checks["jobs.stale:rotate"] == "warning", "no success for 3 of its intervals"
    assert [notice["key"] for notice in down.data["alerts"]["notices"]] == ["gateway.live"]
    assert [a["labels"]["check"] for a in manager.alerts()] == ["gateway.live"]


def test_gateway_down_keeps_a_held_alert_as_alertmanager_had_it(runner, sim, manager):
    # rotate stale (a warning) before the outage, critical during it: still the one warning.
    context, start = runner.context(), now()
    for job, minutes_ago in (("rotate", 100), ("checkpoint", 1), ("index", 1)):
        run = context.state.start_run(job, now=start.timestamp() - minutes_ago * 60)
        context.state.finish_run(run, 0, {}, now=start.timestamp() - minutes_ago * 60 + 1)
    context.close()
    manager.start()
    runner.run(start)
    before = [(a["labels"]["check"], a["labels"]["severity"]) for a in manager.alerts()]
    assert before == [("jobs.stale:rotate", "warning")]

    later, context = start + timedelta(minutes=90), runner.context()
    for job in ("checkpoint", "index"):  # the jobs that do not call the gateway are fine
        run = context.state.start_run(job, now=later.timestamp() - 60)
        context.state.finish_run(run, 0, {}, now=later.timestamp() - 59)
    context.close()
    sim.faults.http = "error"
    down = runner.run(later)

    checks = {check["key"]: check["status"] for check in down.data["checks"]}
    assert checks["jobs.stale:rotate"] == "critical", "measured and shown"
    during = sorted((a["labels"]["check"], a["labels"]["severity"]) for a in manager.alerts())
    assert during == [("gateway.live", "critical"), ("jobs.stale:rotate", "warning")]


def test_alertmanager_down_alert_waits_then_is_delivered_once(runner, sim, manager, receiver):
    sim.faults.http = "error"
    first_at = now()
    first = runner.run(first_at)
    assert first.exit_code == 1, "the checks decide the exit code, not the send"
    assert any(
        line.startswith("alertmanager: NOT delivered (Alertmanager did not take the alerts: ")
        and "connection refused" in line
        for line in first.lines
    ), first.lines
    assert any("kept for the next run" in problem for problem in first.problems)
    assert first.data["summary"]["alertmanager_pending"] == 1
    pending = [alert for alert in feed_of(runner).values() if alert.pending]
    assert {alert.check_key for alert in pending} == {"gateway.live"}
    assert all(alert.attempts == 1 for alert in pending)
    metrics = (runner.state_dir.parent / "memwarden.prom").read_text()
    assert f'memwarden_alerts_undelivered{{gateway="{GATEWAY}",sink="alertmanager"}} 1' in metrics

    manager.start()
    second = runner.run(now())
    assert f"alertmanager: sent 1 firing, 0 resolved to {manager.url}" in second.lines
    [alert] = manager.alerts()  # one outage, one alert: readiness is not probed while down
    started = datetime.fromisoformat(alert["startsAt"])
    assert abs((started - first_at).total_seconds()) < 0.001, "it started at the first run"
    assert not any(alert.pending for alert in feed_of(runner).values())
    metrics = (runner.state_dir.parent / "memwarden.prom").read_text()
    assert f'memwarden_alerts_undelivered{{gateway="{GATEWAY}",sink="alertmanager"}} 0' in metrics

    runner.run(now())  # still down: sent again, as Alertmanager expects; still one alert
    assert len(manager.alerts(check="gateway.live")) == 1

    sim.faults.http = None
    runner.run(now())
    wait_for(lambda: notifications(receiver, "resolved", "MemwardenGatewayLive"), "resolution")
    firing = notifications(receiver, "firing", "MemwardenGatewayLive")
    assert len(firing) == 1, "one outage, one notification"
    assert [a["labels"]["check"] for a in firing[0]["alerts"]] == ["gateway.live"]


def test_cluster_every_member_gets_the_alerts_and_one_down_is_named(runner, sim, tmp_path):
    with Alertmanager(tmp_path / "am1") as first, Alertmanager(tmp_path / "am2") as second:
        runner.env["MEMWARDEN_ALERTMANAGER_URLS"] = json.dumps([first.url, second.url])
        sim.faults.http = "error"
        both = runner.run(now())
        assert f"alertmanager: sent 1 firing, 0 resolved to {first.url}, {second.url}" in (
            both.lines
        )
        assert len(first.alerts(check="gateway.live")) == 1
        assert len(second.alerts(check="gateway.live")) == 1

        second.stop()
        one = runner.run(now())
        assert f"alertmanager: sent 1 firing, 0 resolved to {first.url}" in one.lines
        assert one.data["summary"]["alertmanager_pending"] == 0, "delivered: one accepted"
        [problem] = [p for p in one.problems if "every Alertmanager" in str(p)]
        assert f"{second.url}: connection refused" in str(problem)
        assert problem.level == logging.WARNING, "delivered: a warning, not an error"


def test_resolution_missed_while_alertmanager_down_is_sent_on_the_next_run(
    runner, sim, manager, receiver
):
    manager.start()
    sim.faults.http = "error"
    runner.run(now())
    assert len(manager.alerts(check="gateway.live")) == 1

    manager.stop()
    sim.faults.http = None
    missed = runner.run(now())
    assert missed.exit_code == 0
    unsent = {alert.check_key: alert for alert in feed_of(runner).values()}
    assert set(unsent) == {"gateway.live"}
    assert all(not alert.firing and alert.pending for alert in unsent.values())

    manager.start()  # Alertmanager forgot its alerts when it stopped; the resolution still goes
    delivered = runner.run(now())
    assert f"alertmanager: sent 0 firing, 1 resolved to {manager.url}" in delivered.lines
    assert feed_of(runner) == {}
    assert manager.alerts() == []


def test_slack_and_alertmanager_both_get_the_news(tmp_path, sim, manager, runner):
    manager.start()
    with SlackServer(token=TOKEN, channels={CHANNEL}) as slack:
        runner.env.update(
            MEMWARDEN_SLACK_BOT_TOKEN=TOKEN,
            MEMWARDEN_SLACK_CHANNEL=CHANNEL,
            MEMWARDEN_SLACK_API_BASE_URL=slack.api_base_url,
        )
        sim.faults.http = "error"
        runner.run(now())
        assert len(slack.delivered()) == 1
        assert "gateway.live" in slack.texts()[0]
        assert len(manager.alerts(check="gateway.live")) == 1


def test_severity_change_resolves_the_old_alert_and_fires_the_new_one(runner, manager):
    manager.start()
    runner.env["MEMWARDEN_HEALTH_DISABLED_CHECKS"] = '["gateway*", "disk:*"]'
    runner.env["MEMWARDEN_HEALTH_WATCHED_JOBS"] = '["checkpoint"]'
    context = runner.context()
    try:  # checkpoint ran once, 2 hours ago (every 20 min): 6 intervals, critical
        run_id = context.state.start_run("checkpoint", now=now().timestamp() - 7200)
        context.state.finish_run(run_id, 0, {}, now=now().timestamp() - 7200)
    finally:
        context.close()
    runner.run(now())
    [critical] = manager.alerts(check="jobs.stale:checkpoint")
    assert critical["labels"]["severity"] == "critical"
    assert critical["labels"]["memwarden_job"] == "checkpoint"

    runner.env["MEMWARDEN_HEALTH_STALE_CRITICAL_MULTIPLE"] = "10"
    runner.run(now())
    [warning] = manager.alerts(check="jobs.stale:checkpoint")
    assert warning["labels"]["severity"] == "warning"


def test_dry_run_and_no_alert_leave_alertmanager_alone(runner, sim, manager):
    manager.start()
    sim.faults.http = "error"
    dry = runner.run(now(), dry_run=True)
    assert (
        f"alertmanager: would send 1 firing, 0 resolved to Alertmanager {manager.url}" in dry.lines
    )
    silent = runner.run(now(), no_alert=True)
    assert not any(line.startswith("alertmanager:") for line in silent.lines)
    assert manager.alerts() == []
    assert feed_of(runner) == {}


def test_status_lists_alerts_alertmanager_has_not_accepted(runner, sim, capsys):
    sim.faults.http = "error"
    runner.run(now())
    with pytest.MonkeyPatch.context() as patch:
        for name, value in runner.env.items():
            if name.startswith("MEMWARDEN_"):
                patch.setenv(name, value)
        data = run_cli(capsys, "--state-dir", runner.state_dir, "status", "--json").json()
        text = run_cli(capsys, "--state-dir", runner.state_dir, "status").stdout
    assert {item["check"] for item in data["alertmanager_pending"]} == {"gateway.live"}
    assert "connection refused" in data["alertmanager_pending"][0]["last_error"]
    assert (
        "  Alertmanager: gateway.live firing, not accepted yet (1 attempt(s); last error: " in text
    )


def test_resolve_timeout_not_longer_than_the_health_interval_is_a_config_error(runner):
    from memwarden.process.errors import ConfigError

    runner.env["MEMWARDEN_ALERTMANAGER_RESOLVE_TIMEOUT_MINUTES"] = "5"
    with pytest.raises(ConfigError) as raised:
        runner.run(now())
    assert raised.value.problems == [
        "alertmanager.resolve_timeout_minutes: expected more than schedule.health_minutes (5), "
        "got 5: open alerts would expire between two runs"
    ]
