"""Slack sinks: the Web API (`chat.postMessage`, bot token + channel) and incoming webhooks.

Both use slack-sdk with a timeout on every call and the library's own retry machinery for HTTP 429
only: `Retry-After` is honoured while the waits fit in a bounded budget. Anything else (a timeout,
HTTP 500, `ok:false`) is returned as a failed `SendResult` at once: the caller keeps the message
pending and retries on its next run, so a Slack outage never holds a health run for long.

`timeout_seconds` is a deadline on each whole attempt (connect, request, answer), not only on each
read: a server that answers a byte at a time fails the send in that time. A granted retry adds its
wait and one more attempt to the deadline.
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import KW_ONLY, dataclass, field
from typing import Any
from urllib.error import URLError

from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry import RateLimitErrorRetryHandler
from slack_sdk.web import WebClient
from slack_sdk.webhook import WebhookClient

from memwarden.alerts import AlertMessage, SendResult
from memwarden.process.deadline import Deadline, call_with_deadline

DEFAULT_API_BASE_URL = "https://slack.com/api/"
_SLACK_ERROR_CODE = re.compile(r"^[a-z][a-z0-9_]*$")  # Slack's codes; slack-sdk puts prose here
# Where Slack's own error codes point the operator (https://docs.slack.dev/reference/methods/chat.postMessage).
_API_ERROR_HINTS = {
    "invalid_auth": "the bot token is not valid: check MEMWARDEN_SLACK_BOT_TOKEN",
    "not_authed": "no bot token was sent: set MEMWARDEN_SLACK_BOT_TOKEN",
    "token_revoked": "the bot token was revoked: install the app again and update the token",
    "token_expired": "the bot token expired: update MEMWARDEN_SLACK_BOT_TOKEN",
    "account_inactive": "the bot's account is deactivated",
    "missing_scope": "the bot token lacks the chat:write scope",
    "channel_not_found": "the channel does not exist or the bot cannot see it: fix slack.channel",
    "not_in_channel": "the bot is not a member of the channel: /invite it there",
    "is_archived": "the channel is archived: choose another slack.channel",
    "msg_too_long": "the message is too long",
    "ratelimited": "rate limited by Slack",
}
_WEBHOOK_ERROR_HINTS = {
    "invalid_token": "the webhook URL is not valid: check MEMWARDEN_SLACK_WEBHOOK_URL",
    "no_service": "the webhook was removed or disabled: create a new one",
    "no_team": "the workspace of the webhook no longer exists",
    "channel_not_found": "the webhook's channel was deleted",
    "channel_is_archived": "the webhook's channel is archived",
    "action_prohibited": "an admin restricted posting to the webhook's channel",
    "invalid_payload": "Slack rejected the message payload",
    "team_disabled": "the workspace is disabled",
}


class BoundedRateLimitRetryHandler(RateLimitErrorRetryHandler):
    """slack-sdk's 429 handler, retrying only while `Retry-After` fits in what is left of a budget.

    The library sleeps `Retry-After` plus up to one second of jitter; that second is counted.
    `deadline` bounds the send: one attempt of `timeout_seconds`, pushed back by each granted
    retry's wait and one more attempt. One handler serves one send.
    """

    def __init__(self, budget_seconds: float, timeout_seconds: float) -> None:
        super().__init__(max_retry_count=3)
        self.remaining = budget_seconds
        self.last_retry_after: float | None = None
        self.timeout_seconds = timeout_seconds
        self.deadline = Deadline(timeout_seconds)

    def _can_retry(self, *, state, request, response=None, error=None) -> bool:
        if not super()._can_retry(state=state, request=request, response=response, error=error):
            return False
        wait = retry_after_seconds(response.headers)
        self.last_retry_after = wait
        if wait is None or wait + 1 > self.remaining:
            return False
        self.remaining -= wait + 1
        self.deadline.extend(wait + 1 + self.timeout_seconds)
        return True


def retry_after_seconds(headers: dict[str, Any]) -> float | None:
    """Given response headers (values may be lists), return Retry-After in whole seconds.

    Return None when the header is missing or not a number (an HTTP date is not honoured).
    """
    for name, value in headers.items():
        if name.lower() == "retry-after":
            text = value[0] if isinstance(value, list) else value
            try:
                seconds = int(str(text).strip())
            except ValueError:
                return None
            return float(seconds) if seconds >= 0 else None
    return None


def _client_options(handler: BoundedRateLimitRetryHandler) -> dict[str, Any]:
    """What both slack-sdk clients are given: the attempt's timeout (urllib takes a float), the
    429 handler, and a logger that stays silent: slack-sdk logs request details (a webhook URL
    is a secret) at DEBUG and every failure at ERROR; memwarden reports failures itself."""
    logger = logging.getLogger("memwarden.alerts.slack_sdk")
    logger.setLevel(logging.CRITICAL)
    logger.propagate = False
    return {"timeout": handler.timeout_seconds, "logger": logger, "retry_handlers": [handler]}


@dataclass
class _SlackSink:
    """What both Slack sinks share: a deadline on the whole send and 429 retries within a
    budget (see the module); each sink's `_post(message, handler)` is the call itself."""

    _: KW_ONLY
    timeout_seconds: float = 10.0
    retry_budget_seconds: float = 30.0

    def send(self, message: AlertMessage) -> SendResult:
        """Given a message, post it; return how it went (never raise for a failed delivery)."""
        handler = BoundedRateLimitRetryHandler(self.retry_budget_seconds, self.timeout_seconds)
        started = time.monotonic()
        try:
            return call_with_deadline(handler.deadline, self._post, message, handler)
        except SlackApiError as error:
            return SendResult.failed(_describe_api_error(error, handler))
        except Exception as error:  # noqa: BLE001 - any transport failure becomes a pending retry
            return SendResult.failed(
                _describe_transport_error(error, self.timeout_seconds, started)
            )


@dataclass
class SlackWebApiSink(_SlackSink):
    """Post with `chat.postMessage` as a bot: blocks plus the plain-text fallback."""

    token: str = field(repr=False)
    channel: str
    base_url: str = DEFAULT_API_BASE_URL

    def _post(self, message: AlertMessage, handler: BoundedRateLimitRetryHandler) -> SendResult:
        client = WebClient(token=self.token, base_url=self.base_url, **_client_options(handler))
        arguments: dict[str, Any] = {"channel": self.channel, "text": message.text}
        if message.blocks:
            arguments["blocks"] = message.blocks
        if message.idempotency_key:
            arguments["metadata"] = {
                "event_type": "memwarden_alert",
                "event_payload": {"id": message.idempotency_key},
            }
        response = client.chat_postMessage(**arguments)
        return SendResult(ok=True, remote_id=_text(response.get("ts")))


@dataclass
class SlackWebhookSink(_SlackSink):
    """Post to an incoming webhook (its URL is the secret: it never appears in messages)."""

    url: str = field(repr=False)

    def _post(self, message: AlertMessage, handler: BoundedRateLimitRetryHandler) -> SendResult:
        client = WebhookClient(self.url, **_client_options(handler))
        response = client.send(text=message.text, blocks=message.blocks or None)
        if response.status_code == 200 and response.body.strip() == "ok":
            return SendResult(ok=True)
        return SendResult.failed(
            _describe_webhook_error(response.status_code, response.body, handler)
        )


def _describe_api_error(error: SlackApiError, handler: BoundedRateLimitRetryHandler) -> str:
    response = error.response
    status = response.status_code
    data = response.data if isinstance(response.data, dict) else {}
    code = _text(data.get("error"))
    if status == 429:
        return "Slack Web API: " + _rate_limited(handler)
    if code and _SLACK_ERROR_CODE.match(code):
        hint = _API_ERROR_HINTS.get(code)
        detail = f"{code} ({hint})" if hint else code
        prefix = (
            "Slack Web API refused the message" if status == 200 else f"Slack Web API HTTP {status}"
        )
        return f"{prefix}: {detail}"
    return f"Slack Web API answered HTTP {status} without a Slack answer (server error or proxy)"


def _describe_webhook_error(status: int, body: str, handler: BoundedRateLimitRetryHandler) -> str:
    if status == 429:
        return "Slack webhook: " + _rate_limited(handler)
    code = " ".join(body.split())[:80]
    hint = _WEBHOOK_ERROR_HINTS.get(code)
    if hint:
        return f"Slack webhook HTTP {status}: {code} ({hint})"
    if _SLACK_ERROR_CODE.match(code):
        return f"Slack webhook HTTP {status}: {code}"
    return f"Slack webhook answered HTTP {status} (server error or proxy)"


def _rate_limited(handler: BoundedRateLimitRetryHandler) -> str:
    wait = handler.last_retry_after
    if wait is None:
        return "rate limited (HTTP 429) without a usable Retry-After; will retry next run"
    return (
        f"rate limited (HTTP 429, Retry-After {wait:g} s beyond the retry budget of "
        f"{handler.remaining:g} s left); will retry next run"
    )


def _describe_transport_error(error: Exception, timeout: float, started: float) -> str:
    reason = error.reason if isinstance(error, URLError) else error
    if isinstance(reason, TimeoutError):
        return f"Slack did not answer within {timeout:g} s (timed out)"
    if isinstance(reason, ConnectionRefusedError):
        return "cannot connect to Slack: connection refused"
    if isinstance(reason, OSError) and reason.strerror:
        return f"cannot reach Slack: {reason.strerror}"
    if isinstance(error, SlackClientError):
        return f"Slack client error: {error}"
    elapsed = time.monotonic() - started
    return f"cannot reach Slack after {elapsed:.1f} s: {type(reason).__name__}: {reason}"


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
