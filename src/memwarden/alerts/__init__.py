"""Alert sinks behind one small interface: `send(message) -> SendResult`, with a timeout each.

A sink never raises for a failed delivery: it returns a `SendResult` whose `error` is one line
for the operator (never a token or a webhook URL). The caller keeps the message pending and tries
again on its next run.

`slack_destination` validates the settings and names the destination without importing
slack-sdk; `slack_sink` builds the sink, so a run with nothing to send never pays for that import.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from memwarden.errors import ConfigError

WEBHOOK_DESCRIPTION = "Slack incoming webhook"


@dataclass(frozen=True)
class AlertMessage:
    """A message: plain text (the fallback every client shows), optional Slack blocks, and the
    idempotency key of the outbox row it comes from."""

    text: str
    blocks: list[dict[str, Any]] | None = None
    idempotency_key: str | None = None


@dataclass(frozen=True)
class SendResult:
    """How a delivery went. `remote_id` is the destination's id of the message when known."""

    ok: bool
    error: str | None = None
    remote_id: str | None = None

    @classmethod
    def failed(cls, error: str) -> SendResult:
        return cls(ok=False, error=error)


class AlertSink(Protocol):
    """Where alerts go. `description` names it for people without revealing secrets."""

    description: str

    def send(self, message: AlertMessage) -> SendResult: ...


def web_api_description(channel: str) -> str:
    return f"Slack Web API (channel {channel})"


def slack_destination(slack: Any) -> str | None:
    """Given the `[slack]` settings, return where alerts go, for people (None: nowhere).

    A bot token with a channel wins over a webhook URL. Raise ConfigError if a bot token has no
    channel, or the API base URL or the webhook URL is not http(s) (the webhook URL, a secret,
    is never shown).
    """
    token = (slack.bot_token or "").strip()
    if token:
        if not slack.channel.strip():
            raise ConfigError(
                [
                    "slack.channel: required with a bot token (the channel ID, e.g. C0123456789; "
                    "set MEMWARDEN_SLACK_CHANNEL or [slack] channel)"
                ]
            )
        if not slack.api_base_url.startswith(("https://", "http://")):
            raise ConfigError(
                [f"slack.api_base_url: expected an http(s) URL, got {slack.api_base_url!r}"]
            )
        return web_api_description(slack.channel.strip())
    webhook = (slack.webhook_url or "").strip()
    if webhook:
        if not webhook.startswith(("https://", "http://")):
            raise ConfigError(
                ["slack.webhook_url: expected an https:// URL (not shown here: it is a secret)"]
            )
        return WEBHOOK_DESCRIPTION
    return None


def slack_sink(slack: Any) -> AlertSink | None:
    """Given the `[slack]` settings, return the sink they describe, or None if none is set.

    Raise ConfigError as `slack_destination` does.
    """
    if slack_destination(slack) is None:
        return None
    from memwarden.alerts.slack import SlackWebApiSink, SlackWebhookSink

    timeouts = {
        "timeout_seconds": slack.timeout_seconds,
        "retry_budget_seconds": slack.retry_budget_seconds,
    }
    if slack.bot_token.strip():
        return SlackWebApiSink(
            slack.bot_token.strip(), slack.channel.strip(), base_url=slack.api_base_url, **timeouts
        )
    return SlackWebhookSink(slack.webhook_url.strip(), **timeouts)
