"""Alertmanager's feed, decided: which alerts it must hear about this run. Pure.

Alertmanager keeps an alert only until its `endsAt`, so it expects every open alert again at each
evaluation; it learns that an alert ended from the same alert with `endsAt` in the past. So, per
alert (one label set, see `alert_labels`):

- a check that is bad is *firing*: sent every run, with `endsAt` one lifetime ahead;
- a firing alert whose check is no longer bad (or whose labels changed, e.g. its severity) is
  *resolved* with `endsAt` now, and sent until Alertmanager accepts it, then dropped;
- a row is *pending* until Alertmanager accepted its current state (a new alert, a resolution).

Alertmanager deduplicates by labels: a firing alert sent every run is still one alert, with one
notification.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

import orjson

from memwarden.alerts import Alert
from memwarden.health.alert_labels import Identity, alert_annotations, alert_labels
from memwarden.health.model import CheckResult


@dataclass(frozen=True)
class FeedAlert:
    """One alert Alertmanager knows, or must learn, about. Times are epoch seconds;
    `ends_at` is None while the alert fires."""

    fingerprint: str
    check_key: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    starts_at: float
    ends_at: float | None = None
    delivered_at: float | None = None
    attempts: int = 0
    last_error: str | None = None

    @property
    def firing(self) -> bool:
        return self.ends_at is None

    @property
    def pending(self) -> bool:
        """Alertmanager has not heard this alert's latest news: never delivered, or its last
        re-send failed (a firing alert not refreshed lapses there after resolve_timeout)."""
        return self.delivered_at is None or self.last_error is not None


def fingerprint(labels: Mapping[str, str]) -> str:
    """Given a label set, return a stable id for it."""
    digest = hashlib.sha256(orjson.dumps(sorted(labels.items()))).hexdigest()
    return digest[:24]


def decide_feed(
    stored: Mapping[str, FeedAlert],
    bad: Sequence[tuple[CheckResult, float]],
    identity: Identity,
    now: float,
) -> list[FeedAlert]:
    """Given the stored alerts by fingerprint, the bad results with the time each turned bad,
    this gateway's identity and the time, return every alert to keep after this run: the
    firing ones (in result order), then the resolved ones still to deliver."""
    firing: dict[str, FeedAlert] = {}
    for result, since in bad:
        labels = alert_labels(result, identity)
        key = fingerprint(labels)
        previous = stored.get(key)
        annotations = alert_annotations(result)
        if previous is not None and previous.firing:
            firing[key] = replace(previous, annotations=annotations)
        else:
            firing[key] = FeedAlert(key, result.key, labels, annotations, since)
    resolved = [
        _resolved(alert, now) if alert.firing else alert
        for key, alert in stored.items()
        if key not in firing
    ]
    return list(firing.values()) + resolved


def alerts_to_send(
    alerts: Sequence[FeedAlert], now: float, lifetime: timedelta, generator_url: str = ""
) -> tuple[Alert, ...]:
    """Given the feed, the time and how long an open alert lives without news, return what to
    post: every firing alert (ending one lifetime from now) and every pending resolution."""
    expires = _datetime(now) + lifetime
    return tuple(
        Alert(
            alert.labels,
            alert.annotations,
            _datetime(alert.starts_at),
            expires if alert.ends_at is None else _datetime(alert.ends_at),
            generator_url,
        )
        for alert in alerts
        if alert.firing or alert.pending
    )


def after_send(alerts: Sequence[FeedAlert], now: float, error: str | None) -> list[FeedAlert]:
    """Given the feed as sent, the time and the send's error (None: Alertmanager accepted it),
    return the feed to keep: delivered resolutions dropped, the others marked delivered; or, on
    failure, each alert that was sent (firing or pending) with one more attempt and the error."""
    if error is None:
        return [
            replace(alert, delivered_at=now, attempts=0, last_error=None)
            for alert in alerts
            if alert.firing
        ]
    return [
        replace(alert, attempts=alert.attempts + 1, last_error=error)
        if alert.firing or alert.pending
        else alert
        for alert in alerts
    ]


def _resolved(alert: FeedAlert, now: float) -> FeedAlert:
    return replace(alert, ends_at=now, delivered_at=None, attempts=0, last_error=None)


def _datetime(stamp: float) -> datetime:
    return datetime.fromtimestamp(stamp, UTC)
