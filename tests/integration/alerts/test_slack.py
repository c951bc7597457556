"""The Slack sinks against a real HTTP server on 127.0.0.1 that answers as Slack does."""

from __future__ import annotations

import time

import pytest

from memwarden.alerts import AlertMessage, slack_destination
from memwarden.alerts.sinks import slack_sink
from memwarden.alerts.slack import SlackWebApiSink, SlackWebhookSink, retry_after_seconds
from memwarden.process.errors import ConfigError
from memwarden.settings import config
from support.slack_server import (
    SlackServer,
    hang,
    ok,
    rate_limited,
    server_error,
    slack_error,
)

TOKEN = "xoxb-test-token"
BLOCKS = [{"type": "section", "text": {"type": "mrkdwn", "text": "*gateway.live* down"}}]
MESSAGE = AlertMessage("gateway.live: down", BLOCKS, idempotency_key="run-1:abc")


@pytest.fixture
def slack():
    with SlackServer(token=TOKEN, channels={"C0TEST"}) as server:
        yield server


def api_sink(slack: SlackServer, **overrides) -> SlackWebApiSink:
    settings = {"token": TOKEN, "channel": "C0TEST", "base_url": slack.api_base_url}
    settings |= {"timeout_seconds": 2.0, "retry_budget_seconds": 5.0} | overrides
    return SlackWebApiSink(**settings)


def test_web_api_send_posts_text_blocks_and_metadata_with_bearer_token(slack):
    result = api_sink(slack).send(MESSAGE)
    assert result.ok and result.error is None
    assert result.remote_id
    (request,) = slack.requests
    assert request.endpoint == "chat.postMessage"
    assert request.headers["Authorization"] == f"Bearer {TOKEN}"
    assert request.body["channel"] == "C0TEST"
    assert request.body["text"] == "gateway.live: down"
    assert request.body["blocks"] == BLOCKS
    assert request.body["metadata"]["event_payload"] == {"id": "run-1:abc"}


def test_web_api_unknown_channel_reports_slack_error_and_hint(slack):
    result = api_sink(slack, channel="C0NOPE").send(MESSAGE)
    assert not result.ok
    assert "channel_not_found" in result.error
    assert "slack.channel" in result.error
    assert slack.delivered() == []


def test_web_api_bad_token_error_names_variable_not_token(slack):
    result = api_sink(slack, token="xoxb-wrong-secret").send(MESSAGE)
    assert not result.ok
    assert "invalid_auth" in result.error
    assert "MEMWARDEN_SLACK_BOT_TOKEN" in result.error
    assert "xoxb-wrong-secret" not in result.error


def test_web_api_rate_limited_within_budget_retries_and_delivers_once(slack):
    slack.queue(rate_limited(retry_after=0))
    result = api_sink(slack).send(MESSAGE)
    assert result.ok
    assert [request.answered for request in slack.requests] == [429, 200]
    assert len(slack.delivered()) == 1


def test_web_api_rate_limited_beyond_budget_fails_fast_without_waiting(slack):
    slack.default = rate_limited(retry_after=120)
    started = time.monotonic()
    result = api_sink(slack, retry_budget_seconds=5.0).send(MESSAGE)
    assert time.monotonic() - started < 2
    assert not result.ok
    assert "rate limited" in result.error and "Retry-After 120" in result.error
    assert len(slack.requests) == 1


def test_web_api_rate_limited_zero_budget_never_waits(slack):
    slack.default = rate_limited(retry_after=0)
    result = api_sink(slack, retry_budget_seconds=0).send(MESSAGE)
    assert not result.ok
    assert len(slack.requests) == 1


def test_web_api_server_error_with_html_body_is_reported_as_http_status(slack):
    slack.queue(server_error(500))
    result = api_sink(slack).send(MESSAGE)
    assert not result.ok
    assert "HTTP 500" in result.error
    assert len(slack.requests) == 1


def test_web_api_hanging_server_times_out_within_the_timeout(slack):
    slack.queue(hang())
    started = time.monotonic()
    result = api_sink(slack, timeout_seconds=0.5).send(MESSAGE)
    elapsed = time.monotonic() - started
    assert not result.ok
    assert "did not answer within 0.5 s" in result.error
    assert elapsed < 2.5


def test_web_api_server_gone_reports_connection_refused():
    server = SlackServer(token=TOKEN).start()
    url = server.api_base_url
    server.stop()
    sink = SlackWebApiSink(TOKEN, "C0TEST", base_url=url, timeout_seconds=1)
    result = sink.send(MESSAGE)
    assert not result.ok
    assert "connection refused" in result.error


def test_webhook_send_posts_text_and_blocks(slack):
    sink = SlackWebhookSink(slack.webhook_url, timeout_seconds=2)
    result = sink.send(MESSAGE)
    assert result.ok
    (request,) = slack.delivered()
    assert request.endpoint == "webhook"
    assert request.body == {"text": "gateway.live: down", "blocks": BLOCKS}


def test_webhook_removed_reports_hint_without_the_secret_url(slack):
    slack.queue(slack_error("no_service"))
    result = SlackWebhookSink(slack.webhook_url, timeout_seconds=2).send(MESSAGE)
    assert not result.ok
    assert "HTTP 404: no_service" in result.error
    assert "create a new one" in result.error
    assert "secretpart" not in result.error


def test_webhook_rate_limited_then_ok_is_delivered_once(slack):
    slack.queue(rate_limited(retry_after=0), ok())
    result = SlackWebhookSink(slack.webhook_url, timeout_seconds=2).send(MESSAGE)
    assert result.ok
    assert [request.answered for request in slack.requests] == [429, 200]


def test_webhook_server_error_with_html_is_reported_as_http_status(slack):
    slack.queue(server_error(502))
    result = SlackWebhookSink(slack.webhook_url, timeout_seconds=2).send(MESSAGE)
    assert not result.ok
    assert result.error == "Slack webhook answered HTTP 502 (server error or proxy)"


def test_webhook_hanging_times_out(slack):
    slack.queue(hang())
    started = time.monotonic()
    result = SlackWebhookSink(slack.webhook_url, timeout_seconds=0.5).send(MESSAGE)
    assert not result.ok
    assert "timed out" in result.error
    assert time.monotonic() - started < 2.5


def test_sink_repr_never_shows_secrets(slack):
    assert TOKEN not in repr(api_sink(slack))
    assert "secretpart" not in repr(SlackWebhookSink(slack.webhook_url))


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "3"}, 3.0),
        ({"retry-after": ["0"]}, 0.0),
        ({"Retry-After": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after_seconds_parses_header(headers, expected):
    assert retry_after_seconds(headers) == expected


def test_slack_sink_token_without_channel_is_a_config_error():
    settings = config.load(None, env={"MEMWARDEN_SLACK_BOT_TOKEN": "xoxb-1"}).slack
    with pytest.raises(ConfigError, match=r"slack\.channel"):
        slack_sink(settings)


def test_slack_sink_prefers_web_api_then_webhook_then_none():
    both = config.load(
        None,
        env={
            "MEMWARDEN_SLACK_BOT_TOKEN": "xoxb-1",
            "MEMWARDEN_SLACK_CHANNEL": "C1",
            "MEMWARDEN_SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/x",
        },
    ).slack
    assert isinstance(slack_sink(both), SlackWebApiSink)
    assert slack_destination(both) == "Slack Web API (channel C1)"
    webhook = config.load(
        None, env={"MEMWARDEN_SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/x"}
    ).slack
    assert isinstance(slack_sink(webhook), SlackWebhookSink)
    assert slack_destination(webhook) == "Slack incoming webhook"
    assert slack_sink(config.load(None, env={}).slack) is None
