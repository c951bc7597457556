"""Build the sink the settings describe, importing its libraries only then.

Kept apart from `memwarden.alerts`, from which the sinks' own modules import what they share.
"""

from __future__ import annotations

from typing import Any

from memwarden.alerts import AlertSink, alertmanager_urls, slack_destination


def slack_sink(slack: Any) -> AlertSink | None:
    """Given the `[slack]` settings, return the sink they describe, or None if none is set.

    Raise ConfigError as `slack_destination` does.
    """
    if slack_destination(slack) is None:
        return None
    from memwarden.alerts.slack import SlackWebApiSink, SlackWebhookSink  # slack_sdk: lazy

    timeouts = {
        "timeout_seconds": slack.timeout_seconds,
        "retry_budget_seconds": slack.retry_budget_seconds,
    }
    if slack.bot_token.strip():
        return SlackWebApiSink(
            slack.bot_token.strip(), slack.channel.strip(), base_url=slack.api_base_url, **timeouts
        )
    return SlackWebhookSink(slack.webhook_url.strip(), **timeouts)


def alertmanager_sink(alertmanager: Any) -> AlertSink | None:
    """Given the `[alertmanager]` settings, return the sink they describe, or None if no URL is
    set."""
    urls = alertmanager_urls(alertmanager)
    if not urls:
        return None
    from memwarden.alerts.alertmanager import AlertmanagerSink  # httpx: lazy

    return AlertmanagerSink(urls, timeout_seconds=alertmanager.timeout_seconds)
