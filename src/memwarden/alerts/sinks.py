"""Build the sink the settings describe, importing its libraries only then.

Kept apart from `memwarden.alerts`, from which the sinks' own modules import what they share.
"""

from __future__ import annotations

from typing import Any

from memwarden.alerts import AlertSink, alertmanager_destination, slack_destination


def slack_sink(slack: Any) -> AlertSink | None:
    """Given the `[slack]` settings, return the sink they describe, or None if none is set.

    Raise ConfigError as `slack_destination` does.
    """
    if slack_destination(slack) is None:
        return None
    # lazy: slack_sdk is imported only when Slack is set
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


def alertmanager_sink(alertmanager: Any) -> AlertSink | None:
    """Given the `[alertmanager]` settings, return the sink they describe, or None if no URL is
    set."""
    if alertmanager_destination(alertmanager) is None:
        return None
    # lazy: httpx is imported only when Alertmanager is set
    from memwarden.alerts.alertmanager import AlertmanagerSink

    urls = [url.strip() for url in alertmanager.urls if url.strip()]
    return AlertmanagerSink(urls, timeout_seconds=alertmanager.timeout_seconds)
