"""Alertmanager's feed, acted on: the table `alertmanager_alerts` (migration 0009) and the send.

Each run rewrites the feed from this run's results (`feed.decide_feed`), commits it, then posts
it; the outcome is committed after. A crash between Alertmanager's answer and that commit sends
the same alerts again on the next run, which Alertmanager merges into the alerts it has (same
labels): nothing is lost and no alert appears twice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import astuple, dataclass, replace
from datetime import timedelta
from typing import Any

import orjson

from memwarden.alerts import AlertMessage, alertmanager_sink
from memwarden.health.feed import FeedAlert, after_send, alerts_to_send
from memwarden.health.store import JOB
from memwarden.store.state import StateDB, from_row, json_text


@dataclass(frozen=True)
class Forwarding:
    """What one run told Alertmanager: how many firing and resolved alerts, and how it went."""

    firing: int
    resolved: int
    ok: bool
    error: str | None
    pending: int
    accepted_by: str | None = None

    @property
    def summary(self) -> str:
        return f"{self.firing} firing, {self.resolved} resolved"


def load_feed(state: StateDB) -> dict[str, FeedAlert]:
    """Return the stored feed by fingerprint."""
    rows = state.connection.execute("SELECT * FROM alertmanager_alerts ORDER BY starts_at")
    return {row["fingerprint"]: _feed_alert(row) for row in rows}


def pending(state: StateDB) -> list[FeedAlert]:
    """Return the alerts Alertmanager has not accepted yet (new alerts, resolutions)."""
    return [alert for alert in load_feed(state).values() if alert.pending]


def save_feed(state: StateDB, alerts: Sequence[FeedAlert]) -> None:
    """Replace the stored feed with `alerts`, in one transaction."""
    with state.transaction() as connection:
        connection.execute("DELETE FROM alertmanager_alerts")
        connection.executemany(
            "INSERT INTO alertmanager_alerts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [_row(alert) for alert in alerts],
        )


def forward(
    state: StateDB | None,
    feed: list[FeedAlert],
    settings: Any,
    clock: Callable[[], float],
    lifetime: timedelta,
    run_id: int | None,
) -> Forwarding | None:
    """Save the feed, post it to the Alertmanager of the `[alertmanager]` settings, save the
    outcome; return what was sent (None when there was nothing to send: no open alert, no
    resolution).

    With no `state` (memwarden's state cannot be written), post it and record nothing."""
    if state is not None:
        save_feed(state, feed)
    now = clock()
    alerts = alerts_to_send(feed, now, lifetime, settings.generator_url.strip())
    if not alerts:
        return None
    firing = sum(alert.firing for alert in feed)
    news = sum(alert.pending for alert in feed)
    outcome = Forwarding(firing, len(alerts) - firing, ok=False, error=None, pending=news)
    message = AlertMessage(f"memwarden: {outcome.summary}", alerts=alerts)
    result = alertmanager_sink(settings).send(message)
    error = None if result.ok else result.error or "unknown error"
    kept = after_send(feed, clock(), error)
    if state is not None:
        save_feed(state, kept)
        data = {"sink": "alertmanager", "firing": outcome.firing, "resolved": outcome.resolved}
        if error is not None:
            state.record_event("alert.failed", job=JOB, run_id=run_id, data=data | {"error": error})
        elif news:  # re-sending what Alertmanager already has is routine, not an event
            state.record_event(
                "alert.sent", job=JOB, run_id=run_id, data=data | {"to": result.remote_id}
            )
    waiting = sum(alert.pending for alert in kept)
    return replace(
        outcome, ok=result.ok, error=error, pending=waiting, accepted_by=result.remote_id
    )


def _feed_alert(row: Any) -> FeedAlert:
    labels, annotations = orjson.loads(row["labels_json"]), orjson.loads(row["annotations_json"])
    return from_row(FeedAlert, row, labels=labels, annotations=annotations)


def _row(alert: FeedAlert) -> tuple[Any, ...]:
    labels, annotations = json_text(dict(alert.labels)), json_text(dict(alert.annotations))
    return astuple(replace(alert, labels=labels, annotations=annotations))
