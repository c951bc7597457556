"""What memwarden sends to Slack passes slack-sdk's own models of Block Kit: every block kind a
health message uses, at any length, through both sinks to a real HTTP server."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from slack_sdk.models.blocks import Block, ContextBlock, HeaderBlock, SectionBlock

from memwarden.alerts import AlertMessage
from memwarden.alerts.slack import SlackWebApiSink, SlackWebhookSink
from memwarden.health.message import build_message
from memwarden.health.model import Status, critical, ok, warning
from memwarden.health.policy import AlertState, decide_alerts
from support.slack_server import SlackServer

T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
COOLDOWN = timedelta(minutes=30)
TOKEN = "xoxb-contract"


def _message(count: int, message_length: int = 60):
    """A health message with `count` notices spread over all four sections and a mention."""
    previous = {}
    results = []
    for number in range(count):
        key = f"disk:/mnt/volume-{number:03d}"
        text = f"{number:03d} " + "x" * message_length
        if number % 4 == 1:  # still failing (reminder due)
            previous[key] = AlertState(key, Status.WARNING, text, T0, T0, Status.WARNING)
            results.append(warning(key, text))
        elif number % 4 == 2:  # worse
            previous[key] = AlertState(key, Status.WARNING, text, T0, T0, Status.WARNING)
            results.append(critical(key, text))
        elif number % 4 == 3:  # resolved
            previous[key] = AlertState(key, Status.WARNING, text, T0, T0, Status.WARNING)
            results.append(ok(key, text))
        else:
            results.append(critical(key, text))
    now = T0 + timedelta(minutes=45)
    plan = decide_alerts(previous, results, now, COOLDOWN)
    return build_message(plan, plan.notices, now, "gw-host", mention="<!here>")


def _validated(blocks: list[dict]) -> list[Block]:
    parsed = []
    for block in blocks:
        model = Block.parse(block)
        assert model is not None, block
        model.validate_json()
        assert model.to_dict() == block
        parsed.append(model)
    return parsed


@pytest.mark.parametrize("count", [1, 4, 80, 400])
def test_health_blocks_pass_slack_sdk_validation_at_any_length(count):
    message = _message(count)
    models = _validated(message.blocks)
    kinds = {type(model) for model in models}
    assert HeaderBlock in kinds and SectionBlock in kinds and ContextBlock in kinds
    assert len(models) <= 50  # Slack's limit of blocks per message


def test_a_long_section_keeps_whole_items_and_says_how_many_more():
    message = _message(80, message_length=200)
    sections = [block["text"]["text"] for block in message.blocks if block["type"] == "section"]
    new = next(text for text in sections if text.startswith("*New*"))
    item_lines = [line for line in new.splitlines()[1:] if line.startswith(":")]
    numbers = [int(re.search(r"volume-(\d{3})", line).group(1)) for line in item_lines]
    for line in item_lines:
        assert line.endswith("x"), f"cut mid-line: {line[-40:]}"
    more = re.search(r"… and (\d+) more", new)
    total_new = sum(1 for notice in message.notices if notice["kind"] == "new")
    assert more and len(numbers) + int(more.group(1)) == total_new
    assert len(new) <= 3000


def test_one_enormous_check_message_is_cut_but_its_section_still_validates():
    message = _message(1, message_length=10_000)
    _validated(message.blocks)
    assert "x" * 10_000 in message.text  # the plain-text fallback keeps it whole


@pytest.mark.parametrize("sink_kind", ["web_api", "webhook"])
def test_both_sinks_deliver_blocks_slack_sdk_accepts(sink_kind):
    built = _message(80)
    alert = AlertMessage(built.text, built.blocks, idempotency_key=built.idempotency_key)
    with SlackServer(token=TOKEN, channels={"C0CONTRACT"}) as slack:
        if sink_kind == "web_api":
            sink = SlackWebApiSink(
                token=TOKEN,
                channel="C0CONTRACT",
                base_url=slack.api_base_url,
                timeout_seconds=5.0,
                retry_budget_seconds=5.0,
            )
        else:
            sink = SlackWebhookSink(
                url=slack.webhook_url, timeout_seconds=5.0, retry_budget_seconds=5.0
            )
        assert sink.send(alert).ok
        (request,) = slack.delivered()
    _validated(request.body["blocks"])
    assert request.body["text"] == built.text
