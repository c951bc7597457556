"""The Alertmanager sink: `POST /api/v2/alerts` with the message's alerts, to every URL.

The members of an Alertmanager cluster do not share alerts (only silences and notifications):
each must receive them, as Prometheus sends its own to every member. Every URL gets one call,
all at once, under a whole-call deadline (`timeout_seconds` for connecting, sending and reading
the answer together, not per read: an Alertmanager or a proxy that trickles bytes cannot hold a
health run), enforced by cancelling the call. The alerts are delivered when at least one URL
accepts them (HTTP 2xx); the result then names the URLs that did not (their open alerts go again
with the next run, as every run re-sends them). When none accepts, the result names each URL's
failure and the caller keeps the alerts pending for its next run. Alertmanager deduplicates
alerts by their labels, so the same alert sent again is still one alert.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime

import httpx
import orjson

from memwarden.alerts import Alert, AlertMessage, SendResult
from memwarden.settings.urls import shown_url

API_PATH = "/api/v2/alerts"
_BODY_SHOWN = 200


class AlertmanagerSink:
    """Post alerts to every Alertmanager of `urls`."""

    def __init__(self, urls: Sequence[str], timeout_seconds: float = 5.0) -> None:
        self.urls = [url.rstrip("/") for url in urls]
        self.timeout_seconds = timeout_seconds

    def send(self, message: AlertMessage) -> SendResult:
        """Given a message, post its alerts; return how it went (never raise for a failed
        delivery). `remote_id` names the Alertmanagers that accepted them, `missed` those that
        did not."""
        if not message.alerts:
            return SendResult(ok=True)
        body = orjson.dumps([alert_json(alert) for alert in message.alerts])
        try:
            return asyncio.run(self._send(body))
        except Exception as error:  # noqa: BLE001 - a sink reports, never raises
            return SendResult.failed(f"Alertmanager: {type(error).__name__}: {error}")

    async def _send(self, body: bytes) -> SendResult:
        posts = (self._post(url + API_PATH, body) for url in self.urls)
        outcomes = zip(self.urls, await asyncio.gather(*posts), strict=True)
        accepted, failures = [], []
        for url, error in outcomes:
            if error is None:
                accepted.append(shown_url(url))
            else:
                failures.append(f"{shown_url(url)}: {error}")
        if not accepted:
            return SendResult.failed("Alertmanager did not take the alerts: " + "; ".join(failures))
        missed = "; ".join(failures) or None
        return SendResult(ok=True, remote_id=", ".join(accepted), missed=missed)

    async def _post(self, url: str, body: bytes) -> str | None:
        """Post `body` to `url` within the deadline; return None when accepted, else why not."""
        headers = {"Content-Type": "application/json"}
        try:
            async with asyncio.timeout(self.timeout_seconds):
                async with httpx.AsyncClient(timeout=self.timeout_seconds) as client:
                    response = await client.post(url, content=body, headers=headers)
        except TimeoutError:
            return f"no answer within {self.timeout_seconds:g} s"
        except httpx.HTTPError as error:
            return describe_transport_error(error)
        except (OSError, ValueError) as error:  # an unusable URL, a socket that cannot open
            return f"{type(error).__name__}: {error}"
        if response.is_success:
            return None
        text = " ".join(response.text.split())[:_BODY_SHOWN]
        return f"HTTP {response.status_code}" + (f": {text}" if text else "")


def alert_json(alert: Alert) -> dict[str, object]:
    """Given an alert, return it as Alertmanager's API v2 takes it (`postableAlert`)."""
    document: dict[str, object] = {
        "labels": dict(alert.labels),
        "annotations": dict(alert.annotations),
        "startsAt": rfc3339(alert.starts_at),
        "endsAt": rfc3339(alert.ends_at),
    }
    if alert.generator_url:
        document["generatorURL"] = alert.generator_url
    return document


def rfc3339(moment: datetime) -> str:
    """Given an aware time, return it as RFC 3339 in UTC with milliseconds."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def describe_transport_error(error: httpx.HTTPError) -> str:
    """Given an httpx error, return one line for people (the cause, not a traceback)."""
    reason: BaseException = error
    while reason.__cause__ is not None or reason.__context__ is not None:
        reason = reason.__cause__ or reason.__context__  # type: ignore[assignment]
    if isinstance(reason, ConnectionRefusedError) or "Connection refused" in str(error):
        return "connection refused"
    if isinstance(error, httpx.TimeoutException):
        return "timed out"
    text = str(error) or type(error).__name__
    return f"{type(error).__name__}: {text}"
