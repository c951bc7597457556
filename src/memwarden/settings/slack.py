"""The `[slack]` options: where health alerts go on Slack, and how."""

from memwarden.settings.option import Option

DESCRIPTION = (
    "Where health alerts go (Slack Web API with a bot token and channel, or an incoming webhook) "
    "and how often a problem that stays is repeated."
)

OPTIONS = [
    Option(
        "slack.bot_token",
        "str",
        "",
        "Bot token (xoxb-…) with the chat:write scope (secret: set MEMWARDEN_SLACK_BOT_TOKEN in "
        "the secrets file or the environment; refused in config.toml). With slack.channel, "
        "alerts go through the Web API (chat.postMessage). Empty: use slack.webhook_url.",
        secret=True,
    ),
    Option(
        "slack.channel",
        "str",
        "",
        "Channel for Web API alerts: its ID (C0123456789) or #name; the bot must be a member. "
        "A bot token without a channel, or a channel with neither a bot token nor a webhook "
        "URL, is a configuration error (health and config check exit 2).",
        example="C0123456789",
    ),
    Option(
        "slack.webhook_url",
        "str",
        "",
        "Incoming webhook URL (secret: set MEMWARDEN_SLACK_WEBHOOK_URL in the secrets file or the "
        "environment; refused in config.toml). Used when no bot token is set. Empty with no "
        "token: alerts are only printed and recorded.",
        secret=True,
        url_schemes=("https", "http"),
    ),
    Option(
        "slack.api_base_url",
        "str",
        "https://slack.com/api/",
        "Base URL of Slack's Web API (change it for a proxy or a test server).",
        url_schemes=("https", "http"),
    ),
    Option(
        "slack.timeout_seconds",
        "float",
        10.0,
        "Longest each call to Slack may take (connect, request and the whole answer, however "
        "slowly it arrives); a retry granted after HTTP 429 adds its wait and one more call.",
        minimum=0.1,
        maximum=120,
    ),
    Option(
        "slack.retry_budget_seconds",
        "float",
        30.0,
        "Longest total wait honouring Retry-After when Slack rate-limits (HTTP 429) one message; "
        "beyond it the message stays pending for the next run. 0: never wait.",
        minimum=0,
        maximum=600,
    ),
    Option(
        "slack.cooldown_minutes",
        "int",
        30,
        "Minutes before a problem that stays bad is reported again (per check, not one global "
        "timer). A worse severity (warning → critical) is reported at once.",
        minimum=1,
        maximum=7 * 24 * 60,
    ),
    Option(
        "slack.send_resolved",
        "bool",
        True,
        "Send a resolved notice when a problem clears.",
    ),
    Option(
        "slack.critical_mention",
        "str",
        "",
        "Text put before messages holding a critical problem, e.g. <!here> or <@U0123456789>.",
        example="<!here>",
    ),
]
