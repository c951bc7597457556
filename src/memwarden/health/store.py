"""The health job's tables in the state DB (migration 0005): alert state per check key and the
outbox of messages waiting for delivery; storing a plan with its message, and delivering the
outbox.

The plan's state and its message are committed together before any send, so a crash or a Slack
outage never loses news; then every undelivered message is sent oldest first. The first failure
stops the round (Slack is down: do not wait on it once per message); the rest stay pending for
the next run.

Delivery is at-least-once across crashes and exactly-once otherwise: a row is marked `sending`
(committed) before the call and `sent` after Slack accepted it; a failed call puts it back to
`pending`. Only a crash between Slack's answer and that commit can send a message twice, and the
row's idempotency key travels with the message (Slack message metadata) to recognise it.

Alertmanager's feed (`feed.decide_feed`) is the table `alertmanager_alerts` (migration 0009):
each run rewrites it from this run's results, commits it, then posts it; the outcome is committed
after. A crash between Alertmanager's answer and that commit sends the same alerts again on the
next run, which Alertmanager merges into the alerts it has (same labels): nothing is lost and no
alert appears twice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import astuple, dataclass, replace
from datetime import datetime, timedelta
from typing import Any

import orjson

from memwarden.alerts import AlertMessage, AlertSink
from memwarden.alerts.sinks import alertmanager_sink
from memwarden.health.feed import FeedAlert, after_send, alerts_to_send
from memwarden.health.message import NewMessage
from memwarden.health.model import Status, utc_time
from memwarden.health.policy import AlertPlan, AlertState
from memwarden.store.state import StateDB, from_row, json_text

JOB = "health"
UNDELIVERED = ("pending", "sending")
TIMELINE_EVENTS = {"new": "alert.opened", "resolved": "alert.resolved"}  # by notice kind


@dataclass(frozen=True)
class OutboxRow(NewMessage):
    """One message in the outbox: the message queued, and its delivery so far."""

    id: int
    created_at: float
    attempts: int
    last_error: str | None

    @property
    def keys(self) -> list[str]:
        return [notice["key"] for notice in self.notices]


@dataclass
class Delivery:
    """One attempt to deliver one outbox message (`outbox_id` None: sent without the outbox,
    memwarden's state could not be written)."""

    outbox_id: int | None
    summary: str
    ok: bool
    error: str | None = None
    attempts: int = 0


def load_states(state: StateDB) -> dict[str, AlertState]:
    """Return the stored alert state of every check that is not ok, by key."""
    rows = state.connection.execute("SELECT * FROM alert_state ORDER BY since, check_key")
    return {row["check_key"]: _alert_state(row) for row in rows}


def undelivered(state: StateDB) -> list[OutboxRow]:
    """Return the messages not delivered yet (pending, or cut off while sending), oldest first."""
    rows = state.connection.execute(
        "SELECT * FROM alert_outbox WHERE status IN (?, ?) ORDER BY id", UNDELIVERED
    )
    return [_outbox_row(row) for row in rows]


def commit_plan(
    state: StateDB, plan: AlertPlan, message: NewMessage | None, now: datetime, run_id: int | None
) -> int | None:
    """Store the plan's states and enqueue its message (None: nothing to queue) in one
    transaction, then put the opened and resolved checks on the timeline. Return the outbox id
    of the message (None when there is none, or it was already queued)."""
    stamp, queued = now.timestamp(), None
    with state.transaction() as connection:
        connection.execute("DELETE FROM alert_state")  # the plan holds every open check
        connection.executemany(
            "INSERT INTO alert_state VALUES (?, ?, ?, ?, ?, ?, ?)",
            [_state_row(item, stamp) for item in plan.states.values()],
        )
        if message is not None:
            cursor = connection.execute(
                "INSERT OR IGNORE INTO alert_outbox (idempotency_key, created_at, run_id, summary, "
                "text, blocks_json, notices_json) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    message.idempotency_key,
                    stamp,
                    run_id,
                    message.summary,
                    message.text,
                    json_text(message.blocks) if message.blocks else None,
                    json_text(message.notices),
                ),
            )
            queued = int(cursor.lastrowid) if cursor.rowcount else None
    for notice in plan.notices:
        if notice.kind in TIMELINE_EVENTS:
            state.record_event(
                TIMELINE_EVENTS[notice.kind],
                job=JOB,
                run_id=run_id,
                data={"key": notice.key, "status": notice.status.value, "message": notice.message},
                ts=stamp,
            )
    return queued


def deliver(
    state: StateDB,
    make_sink: Callable[[], AlertSink],
    clock: Callable[[], datetime],
    run_id: int | None,
) -> list[Delivery]:
    """Send every undelivered message through the sink `make_sink` builds (only when there is
    something to send), oldest first; stop at the first failure.

    Each message is marked `sending` before the call and `sent` once accepted, so none is sent
    twice by two runs; a failure puts it back to `pending` with its error.
    """
    deliveries: list[Delivery] = []
    waiting = undelivered(state)
    if not waiting:
        return deliveries
    sink = make_sink()
    for row in waiting:
        state.connection.execute(
            "UPDATE alert_outbox SET status = 'sending', attempts = attempts + 1, "
            "last_attempt_at = ? WHERE id = ?",
            (clock().timestamp(), row.id),
        )
        result = sink.send(row.to_alert())
        attempts = row.attempts + 1
        data = {"outbox_id": row.id, "summary": row.summary, "keys": row.keys, "attempts": attempts}
        error = None if result.ok else result.error or "unknown error"
        deliveries.append(Delivery(row.id, row.summary, result.ok, error, attempts))
        if error is None:
            state.connection.execute(
                "UPDATE alert_outbox SET status = 'sent', sent_at = ?, remote_id = ?, "
                "last_error = NULL WHERE id = ?",
                (clock().timestamp(), result.remote_id, row.id),
            )
            state.record_event("alert.sent", job=JOB, run_id=run_id, data=data)
            continue
        state.connection.execute(
            "UPDATE alert_outbox SET status = 'pending', last_error = ? WHERE id = ?",
            (error, row.id),
        )
        state.record_event("alert.failed", job=JOB, run_id=run_id, data=data | {"error": error})
        break
    return deliveries


@dataclass(frozen=True)
class Forwarding:
    """What one run told Alertmanager: how many firing and resolved alerts, and how it went
    (`missed_by`: the Alertmanagers that did not take what another took)."""

    firing: int
    resolved: int
    ok: bool
    error: str | None
    pending: int
    accepted_by: str | None = None
    missed_by: str | None = None

    @property
    def summary(self) -> str:
        return f"{self.firing} firing, {self.resolved} resolved"


def load_feed(state: StateDB) -> dict[str, FeedAlert]:
    """Return the stored feed by fingerprint."""
    rows = state.connection.execute("SELECT * FROM alertmanager_alerts ORDER BY starts_at")
    return {row["fingerprint"]: _feed_alert(row) for row in rows}


def feed_pending(state: StateDB) -> list[FeedAlert]:
    """Return the alerts Alertmanager has not accepted yet (new alerts, resolutions)."""
    return [alert for alert in load_feed(state).values() if alert.pending]


def save_feed(state: StateDB, alerts: Sequence[FeedAlert]) -> None:
    """Replace the stored feed with `alerts`, in one transaction."""
    with state.transaction() as connection:
        connection.execute("DELETE FROM alertmanager_alerts")
        connection.executemany(
            "INSERT INTO alertmanager_alerts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [_feed_row(alert) for alert in alerts],
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
    resolved, news = len(alerts) - firing, sum(alert.pending for alert in feed)
    message = AlertMessage(f"memwarden: {firing} firing, {resolved} resolved", alerts=alerts)
    result = alertmanager_sink(settings).send(message)
    error = None if result.ok else result.error or "unknown error"
    kept = after_send(feed, clock(), error)
    if state is not None:
        save_feed(state, kept)
        data = {"sink": "alertmanager", "firing": firing, "resolved": resolved}
        if error is not None:
            state.record_event("alert.failed", job=JOB, run_id=run_id, data=data | {"error": error})
        elif news:  # re-sending what Alertmanager already has is routine, not an event
            state.record_event(
                "alert.sent", job=JOB, run_id=run_id, data=data | {"to": result.remote_id}
            )
    pending = sum(alert.pending for alert in kept)
    return Forwarding(firing, resolved, result.ok, error, pending, result.remote_id, result.missed)


def _feed_alert(row: Any) -> FeedAlert:
    labels, annotations = orjson.loads(row["labels_json"]), orjson.loads(row["annotations_json"])
    return from_row(FeedAlert, row, labels=labels, annotations=annotations)


def _feed_row(alert: FeedAlert) -> tuple[Any, ...]:
    labels, annotations = json_text(dict(alert.labels)), json_text(dict(alert.annotations))
    return astuple(replace(alert, labels=labels, annotations=annotations))


def _alert_state(row: Any) -> AlertState:
    return AlertState(
        key=row["check_key"],
        status=Status(row["status"]),
        message=row["message"],
        since=utc_time(row["since"]),
        notified_at=utc_time(row["notified_at"]) if row["notified_at"] is not None else None,
        notified_status=Status(row["notified_status"]) if row["notified_status"] else None,
    )


def _state_row(item: AlertState, stamp: float) -> Sequence[Any]:
    return (
        item.key,
        item.status.value,
        item.message,
        item.since.timestamp(),
        item.notified_at.timestamp() if item.notified_at else None,
        item.notified_status.value if item.notified_status else None,
        stamp,
    )


def _outbox_row(row: Any) -> OutboxRow:
    blocks = orjson.loads(row["blocks_json"]) if row["blocks_json"] else None
    return from_row(OutboxRow, row, blocks=blocks, notices=orjson.loads(row["notices_json"]))
