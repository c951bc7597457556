"""Judgement of where health alerts go: without a destination, a problem reaches only the logs.

Pure: given the `[slack]` settings and what the secrets file says, return findings.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from memwarden.alerts import slack_destination
from memwarden.doctor.finding import Finding
from memwarden.process.errors import ConfigError

CHANNEL_VARIABLE = "MEMWARDEN_SLACK_CHANNEL"
BOT_TOKEN_NAME = "MEMWARDEN_SLACK_BOT_TOKEN"  # noqa: S105 - a variable name
# A line that sets the channel, or the commented placeholder a starter file holds.
_CHANNEL_LINE = re.compile(rf"^\s*#?\s*(?:export\s+)?{CHANNEL_VARIABLE}\s*=", re.MULTILINE)


def check_alert_destination(
    slack: Any,
    secrets_path: str,
    secrets_text: str | None,
    alertmanager_urls: Sequence[str] = (),
) -> list[Finding]:
    """Given the `[slack]` settings, the secrets file's path and text (None: no such file) and
    the `[alertmanager] urls`, judge where alerts go, and whether the secrets file has the
    channel line a bot token needs.
    """
    try:
        destination = slack_destination(slack)
    except ConfigError as error:
        missing = CHANNEL_VARIABLE if slack.bot_token.strip() else BOT_TOKEN_NAME
        example = "C0123456789" if missing == CHANNEL_VARIABLE else "xoxb-…"
        fix = f"{missing}={example}   (a line in {secrets_path})"
        findings = [Finding("alerts.destination", "action", "; ".join(error.problems), fix)]
    else:
        if alertmanager_urls:
            alertmanager = f"Alertmanager ({', '.join(alertmanager_urls)})"
            destination = f"{destination} and {alertmanager}" if destination else alertmanager
        findings = [_destination(destination, secrets_path)]
    channel_set = bool(slack.channel.strip()) or bool(slack.webhook_url.strip())
    if secrets_text is not None and not channel_set and not _CHANNEL_LINE.search(secrets_text):
        findings.append(
            Finding(
                "alerts.secrets_channel",
                "warning",
                f"{secrets_path} has no {CHANNEL_VARIABLE} line (older starters had none): a "
                "bot token set there alone sends nothing, health stops with a config error",
                f"{CHANNEL_VARIABLE}=C0123456789   (a line in {secrets_path}, next to "
                "MEMWARDEN_SLACK_BOT_TOKEN)",
            )
        )
    return findings


def _destination(destination: str | None, secrets_path: str) -> Finding:
    if destination is not None:
        return Finding("alerts.destination", "ok", f"health alerts go to {destination}")
    return Finding(
        "alerts.destination",
        "warning",
        "no alert destination is set (no Slack, no Alertmanager): health problems reach only "
        "the timers' logs "
        "(and `memwarden status`), nobody is told",
        f"MEMWARDEN_SLACK_BOT_TOKEN=xoxb-… and {CHANNEL_VARIABLE}=C0123456789, or "
        f"MEMWARDEN_SLACK_WEBHOOK_URL=https://hooks.slack.com/…   (lines in {secrets_path})",
    )
