"""Judging where health alerts go, from settings and the secrets file's text alone."""

from __future__ import annotations

from types import SimpleNamespace

from memwarden.doctor.alerting import check_alert_destination


def slack(**values) -> SimpleNamespace:
    settings = {
        "bot_token": "",
        "channel": "",
        "webhook_url": "",
        "api_base_url": "https://slack.com/api/",
    }
    return SimpleNamespace(**(settings | values))


def severities(findings) -> dict[str, str]:
    return {finding.key: finding.severity for finding in findings}


def test_no_destination_is_a_warning_and_no_secrets_file_asks_nothing_more():
    assert severities(check_alert_destination(slack(), "/s.env", None)) == {
        "alerts.destination": "warning"
    }


def test_secrets_file_without_a_channel_line_is_a_warning():
    found = check_alert_destination(slack(), "/s.env", "# MEMWARDEN_SLACK_BOT_TOKEN=\n")
    assert severities(found)["alerts.secrets_channel"] == "warning"


def test_commented_or_exported_channel_line_counts():
    for text in ("# MEMWARDEN_SLACK_CHANNEL=\n", "export MEMWARDEN_SLACK_CHANNEL=C1\n"):
        found = check_alert_destination(slack(), "/s.env", text)
        assert "alerts.secrets_channel" not in severities(found), text


def test_channel_set_elsewhere_or_a_webhook_needs_no_channel_line():
    for settings in (slack(channel="C1"), slack(webhook_url="https://hooks.example/x")):
        found = check_alert_destination(settings, "/s.env", "")
        assert "alerts.secrets_channel" not in severities(found)


def test_bot_token_and_channel_is_ok():
    found = check_alert_destination(slack(bot_token="xoxb-1", channel="C1"), "/s.env", "")
    assert severities(found) == {"alerts.destination": "ok"}
    assert "channel C1" in found[0].message


def test_channel_without_a_bot_token_names_the_missing_token():
    (found,) = check_alert_destination(slack(channel="C1"), "/s.env", None)
    assert found.severity == "action"
    assert "no bot token" in found.message
    assert found.fix.startswith("MEMWARDEN_SLACK_BOT_TOKEN=xoxb-…")
