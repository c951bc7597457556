"""Alert sinks behind one small interface: `send(message) -> SendResult`, with a timeout each.

A sink never raises for a failed delivery: it returns a `SendResult` whose `error` is one line
for the operator (never a token or a webhook URL). The caller keeps the message pending and tries
again on its next run.

A message carries what each kind of sink reads: text and blocks for people (Slack), and `alerts`
for machines (Alertmanager: one `Alert` per open or resolved check).

`slack_destination` / `alertmanager_destination` name the destination without importing the
sink's libraries (URLs and labels are checked when the settings are loaded:
`memwarden.settings.config`); `sinks.slack_sink` / `sinks.alertmanager_sink` build the sink, so
a run with nothing to send never pays for those imports.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from memwarden.process.errors import ConfigError
from memwarden.settings.urls import shown_url


@dataclass(frozen=True)
class Alert:
    """One alert as Alertmanager models it: labels (its identity), annotations (for people),
    when it started, and when it ends: the time it was resolved, or for an open alert the time
    it expires unless sent again."""

    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    starts_at: datetime
    ends_at: datetime
    generator_url: str = ""


@dataclass(frozen=True)
class AlertMessage:
    """A message: plain text (the fallback every client shows), optional Slack blocks, the
    idempotency key of the outbox row it comes from, and the alerts it describes."""

    text: str
    blocks: list[dict[str, Any]] | None = None
    idempotency_key: str | None = None
    alerts: tuple[Alert, ...] = field(default=())


@dataclass(frozen=True)
class SendResult:
    """How a delivery went. `remote_id` is the destination's id of the message when known;
    `missed`, of a delivery that went, names the destinations that did not take it (an
    Alertmanager of a cluster that did not take what another took)."""

    ok: bool
    error: str | None = None
    remote_id: str | None = None
    missed: str | None = None

    @classmethod
    def failed(cls, error: str) -> SendResult:
        return cls(ok=False, error=error)


class AlertSink(Protocol):
    """Where alerts go."""

    def send(self, message: AlertMessage) -> SendResult: ...


@dataclass(frozen=True)
class AlertRoutes:
    """Where health alerts go, for people (None: nowhere): `slack`, `alertmanager`, and how long
    an open alert lives in Alertmanager without being sent again (`lifetime`)."""

    slack: str | None
    alertmanager: str | None
    lifetime: timedelta | None


def slack_destination(slack: Any) -> str | None:
    """Given the `[slack]` settings, return where alerts go, for people (None: nowhere).

    A bot token with a channel wins over a webhook URL. Raise ConfigError if a bot token has no
    channel, or a channel has neither a bot token nor a webhook URL (half a setup would send
    nothing, and say so only to people reading a whole run).
    """
    token = (slack.bot_token or "").strip()
    channel = slack.channel.strip()
    if token:
        if not channel:
            raise ConfigError(
                [
                    "slack.channel: required with a bot token (the channel ID, e.g. C0123456789; "
                    "set MEMWARDEN_SLACK_CHANNEL or [slack] channel)"
                ]
            )
        return f"Slack Web API (channel {channel})"
    if (slack.webhook_url or "").strip():
        return "Slack incoming webhook"
    if channel:
        raise ConfigError(
            [
                f"slack.channel: set to {channel}, but no bot token to post with: add the line "
                "MEMWARDEN_SLACK_BOT_TOKEN=xoxb-… to the secrets file (mode 0600; "
                "`memwarden config show` names it), or unset slack.channel"
            ]
        )
    return None


def alert_lifetime(config: Any) -> timedelta:
    """Given the settings, return how long an open alert lives in Alertmanager without being
    sent again: `alertmanager.resolve_timeout_minutes`, else three health intervals. Raise
    ConfigError if it is not longer than the health interval (open alerts would flap)."""
    interval = config.schedule.health_minutes
    minutes = config.alertmanager.resolve_timeout_minutes or 3 * interval
    if minutes <= interval:
        raise ConfigError(
            [
                f"alertmanager.resolve_timeout_minutes: expected more than schedule.health_minutes "
                f"({interval}), got {minutes}: open alerts would expire between two runs"
            ]
        )
    return timedelta(minutes=minutes)


def alertmanager_destination(alertmanager: Any) -> str | None:
    """Given the `[alertmanager]` settings, return where alerts go, for people (None: nowhere)."""
    urls = alertmanager_urls(alertmanager)
    return "Alertmanager " + ", ".join(shown_url(url) for url in urls) if urls else None


def alertmanager_urls(alertmanager: Any) -> list[str]:
    """Given the `[alertmanager]` settings, return its URLs, blanks left out."""
    return [url.strip() for url in alertmanager.urls if url.strip()]
