"""The alert scenarios end to end: gateway simulator + Slack stand-in, real state DB, a clock.

gateway down → one alert; still down within the cooldown → none; after the cooldown → one
reminder; back up → one resolved; Slack down during the first → delivered on the next run, once.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from memwarden.health import store
from memwarden.process.errors import StateError
from memwarden.store.state import StateDB
from support.deployments import make_sqlite_era_state
from support.gateway_sim import GatewaySimulator
from support.health import T0, HealthRunner
from support.slack_server import SlackServer, hang, ok, server_error, slack_error

TOKEN = "xoxb-scenario-token"
CHANNEL = "C0ALERTS"


@pytest.fixture
def sim():
    with GatewaySimulator() as simulator:
        yield simulator


@pytest.fixture
def slack():
    with SlackServer(token=TOKEN, channels={CHANNEL}) as server:
        yield server


@pytest.fixture
def runner(tmp_path, sim, slack):
    state = make_sqlite_era_state(tmp_path)
    return HealthRunner(
        state.state_dir,
        env={
            "MEMWARDEN_HEALTH_GATEWAY_HTTP_URL": sim.http_url,
            "MEMWARDEN_SLACK_BOT_TOKEN": TOKEN,
            "MEMWARDEN_SLACK_CHANNEL": CHANNEL,
            "MEMWARDEN_SLACK_API_BASE_URL": slack.api_base_url,
            "MEMWARDEN_SLACK_TIMEOUT_SECONDS": "1",
        },
    )


def minutes(count: float) -> timedelta:
    return timedelta(minutes=count)


def test_healthy_gateway_sends_nothing_and_exits_0(runner, slack):
    result = runner.run(T0)
    assert result.exit_code == 0, result.lines
    assert slack.requests == []
    assert "alerts: no news" in result.lines


def test_gateway_down_cooldown_reminder_and_recovery_send_one_message_each(runner, sim, slack):
    sim.faults.http = "error"
    first = runner.run(T0)
    assert first.exit_code == 1
    assert len(slack.delivered()) == 1
    text = slack.texts()[0]
    assert "gateway.live" in text and "New" in text and "critical" in text
    assert "HTTP 500" in text

    runner.run(T0 + minutes(10))
    runner.run(T0 + minutes(25))
    assert len(slack.delivered()) == 1, "still down within the cooldown: no new message"

    runner.run(T0 + minutes(31))
    assert len(slack.delivered()) == 2
    reminder = slack.texts()[1]
    assert "Still failing" in reminder and "gateway.live" in reminder
    assert "bad for 31 min" in reminder

    runner.run(T0 + minutes(40))
    assert len(slack.delivered()) == 2, "the cooldown restarts at each reminder"

    sim.faults.http = "ok"
    recovered = runner.run(T0 + minutes(45))
    assert recovered.exit_code == 0
    assert len(slack.delivered()) == 3
    resolved = slack.texts()[2]
    assert "Resolved" in resolved and "gateway.live" in resolved
    assert "was critical for 45 min" in resolved

    runner.run(T0 + minutes(50))
    assert len(slack.delivered()) == 3


def test_one_run_groups_all_news_into_one_message(runner, sim, slack):
    sim.faults.http = "not_ready"
    runner.run(T0)
    sim.faults.http = "drop"
    runner.run(T0 + minutes(5))
    assert len(slack.delivered()) == 2
    grouped = slack.delivered()[1].body
    assert "gateway.live" in grouped["text"]
    assert "New" in grouped["text"]
    assert "gateway.ready" in grouped["text"]
    sections = [block for block in grouped["blocks"] if block["type"] == "section"]
    assert len(sections) >= 1


def test_slack_down_during_first_alert_delivers_it_next_run_exactly_once(runner, sim, slack):
    sim.faults.http = "error"
    slack.default = server_error(500)
    first = runner.run(T0)
    assert first.exit_code == 1
    assert slack.delivered() == []
    assert any("kept for the next run" in problem for problem in first.problems)
    assert first.data["alerts"]["undelivered"] == 1

    slack.default = ok()
    runner.run(T0 + minutes(5))
    assert len(slack.delivered()) == 1
    assert "gateway.live" in slack.texts()[0] and "New" in slack.texts()[0]

    runner.run(T0 + minutes(10))
    runner.run(T0 + minutes(20))
    assert len(slack.delivered()) == 1


def test_slack_down_long_does_not_pile_up_reminders(runner, sim, slack):
    sim.faults.http = "error"
    slack.default = slack_error("channel_not_found")
    for offset in range(0, 240, 15):
        runner.run(T0 + minutes(offset))
    waiting = store.undelivered(runner.context().state)
    kinds = [notice["kind"] for row in waiting for notice in row.notices]
    assert "reminder" not in kinds, "no reminder is queued while a message is undelivered"
    assert sum("gateway.live" in row.keys for row in waiting) == 1
    slack.default = ok()
    runner.run(T0 + minutes(240))
    assert len(slack.delivered()) == len(waiting)
    assert sum("] gateway.live:" in text for text in slack.texts()) == 1


def test_hanging_slack_keeps_alert_pending_and_run_bounded(runner, sim, slack):
    sim.faults.http = "error"
    slack.default = hang()
    result = runner.run(T0)
    assert result.data["alerts"]["undelivered"] == 1
    assert "did not answer within 1 s" in result.data["alerts"]["deliveries"][0]["error"]


def test_dry_run_sends_nothing_and_changes_no_state(runner, sim, slack):
    sim.faults.http = "error"
    result = runner.run(T0, dry_run=True)
    assert slack.requests == []
    assert any(line.startswith("alerts: would send to Slack Web API") for line in result.lines)
    database = runner.context().state
    assert store.load_states(database) == {}
    assert store.undelivered(database) == []
    real = runner.run(T0 + minutes(1))
    assert len(slack.delivered()) == 1
    assert real.data["alerts"]["notices"][0]["kind"] == "new"


def test_no_alert_runs_checks_without_state_or_sends(runner, sim, slack):
    sim.faults.http = "error"
    result = runner.run(T0, no_alert=True)
    assert result.exit_code == 1
    assert slack.requests == []
    assert "alerts: not evaluated (--no-alert)" in result.lines
    assert store.load_states(runner.context().state) == {}


def test_no_alert_whose_state_fails_mid_run_says_not_evaluated_once(runner, monkeypatch):
    def fail(state):
        raise StateError("state.db: database is locked")

    monkeypatch.setattr(store, "undelivered", fail)
    result = runner.run(T0, no_alert=True)

    assert result.lines.count("alerts: not evaluated (--no-alert)") == 1
    assert any("health cannot record its state" in problem for problem in result.problems)


def test_events_record_opened_sent_failed_and_resolved(runner, sim, slack):
    sim.faults.http = "error"
    slack.queue(server_error(500))
    runner.run(T0)
    runner.run(T0 + minutes(5))
    sim.faults.http = "ok"
    runner.run(T0 + minutes(10))
    database: StateDB = runner.context().state
    types = [event["type"] for event in database.events(types=None)]
    assert types.count("alert.opened") == 1  # gateway.live: readiness is not probed, not alerted
    assert types.count("alert.failed") == 1
    assert types.count("alert.sent") == 2
    assert types.count("alert.resolved") == 1


def test_deliver_with_nothing_waiting_never_builds_the_sink(tmp_path):
    def must_not_build():
        raise AssertionError("the sink (and slack-sdk) is built only when something waits")

    database = StateDB(tmp_path / "state.db")
    assert store.deliver(database, must_not_build, lambda: T0, None) == []


def test_message_cut_off_while_sending_is_sent_again_next_run(runner, sim, slack):
    sim.faults.http = "error"
    slack.default = server_error(500)
    runner.run(T0)
    database = runner.context().state
    (row,) = store.undelivered(database)
    # the run was killed during the call
    database.connection.execute(
        "UPDATE alert_outbox SET status = 'sending' WHERE id = ?", (row.id,)
    )
    slack.default = ok()
    runner.run(T0 + minutes(5))
    assert len(slack.delivered()) == 1
    assert store.undelivered(runner.context().state) == []


def test_alert_opened_before_slack_was_set_up_is_sent_by_the_first_run_with_slack(
    runner, sim, slack
):
    # The order doctor recommends: timers first, Slack later.
    without_slack = dict(runner.env)
    for name in ("MEMWARDEN_SLACK_BOT_TOKEN", "MEMWARDEN_SLACK_CHANNEL"):
        del without_slack[name]
    unset = HealthRunner(runner.state_dir, env=without_slack)
    unset.env = without_slack
    sim.faults.http = "error"
    assert unset.run(T0).exit_code == 1
    assert unset.run(T0 + minutes(5)).exit_code == 1

    runner.run(T0 + minutes(10))  # well within the cooldown of a notice no one received

    assert len(slack.delivered()) == 1
    text = slack.texts()[0]
    assert "New" in text and "gateway.live" in text
    runner.run(T0 + minutes(20))
    assert len(slack.delivered()) == 1, "announced once; the cooldown starts now"


def slack_undelivered_metric(metrics) -> str:
    (line,) = [
        line
        for line in metrics.read_text().splitlines()
        if line.startswith("memwarden_alerts_undelivered{") and 'sink="slack"' in line
    ]
    return line.rpartition(" ")[2]


def test_metrics_count_the_slack_messages_a_run_left_waiting(runner, sim, slack, tmp_path):
    metrics = tmp_path / "memwarden.prom"
    runner = HealthRunner(
        runner.state_dir, env={**runner.env, "MEMWARDEN_HEALTH_METRICS_FILE": str(metrics)}
    )
    sim.faults.http = "error"
    slack.default = server_error(500)

    first = runner.run(T0)
    assert first.data["alerts"]["undelivered"] == 1
    assert slack_undelivered_metric(metrics) == "1"

    sim.faults.http = "ok"
    slack.default = ok()
    second = runner.run(T0 + minutes(5))
    assert second.data["alerts"]["undelivered"] == 0
    assert slack_undelivered_metric(metrics) == "0"
    assert ["New" in text for text in slack.texts()] == [True, False]  # then the resolution
    assert "Resolved" in slack.texts()[1]


def test_each_message_left_waiting_gets_its_own_problem_line(runner, sim, slack):
    sim.faults.http = "not_ready"
    slack.default = slack_error("not_in_channel")
    runner.run(T0)
    sim.faults.http = "drop"  # worse: a second message queues behind the first
    second = runner.run(T0 + minutes(5))

    undelivered = [p for p in second.problems if p.startswith("alert not delivered")]
    summaries = [row.summary for row in store.undelivered(runner.context().state)]
    assert len(summaries) == 2
    assert len(undelivered) == 2, second.problems
    assert summaries[0] in undelivered[0] and "not_in_channel" in undelivered[0]
    assert summaries[1] in undelivered[1] and "waits behind" in undelivered[1]
