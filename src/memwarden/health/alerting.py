"""The acting half of alerting: store the plan with its message, then deliver the outbox.

Deciding is `policy.decide_alerts` (pure). Here the plan's state and its message are committed
together before any send, so a crash or a Slack outage never loses news; then every undelivered
message is sent oldest first. The first failure stops the round (Slack is down: do not wait on
it once per message); the rest stay pending for the next run.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Collection, Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any

from memwarden.alerts import AlertMessage, AlertSink
from memwarden.health import store
from memwarden.health.message import build_message
from memwarden.health.model import CheckResult
from memwarden.health.policy import AlertPlan, AlertState, decide_alerts, unannounced
from memwarden.health.store import NewMessage
from memwarden.store.state import StateDB

JOB = "health"


@dataclass
class Delivery:
    """One attempt to deliver one outbox message (`outbox_id` None: sent without the outbox,
    memwarden's state could not be written)."""

    outbox_id: int | None
    summary: str
    ok: bool
    error: str | None = None
    attempts: int = 0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class AlertSettings:
    cooldown: timedelta
    send_resolved: bool
    mention: str
    host: str = field(default_factory=socket.gethostname)


def plan_alerts(
    previous: Mapping[str, AlertState],
    results: list[CheckResult],
    now: datetime,
    settings: AlertSettings,
    undelivered: Collection[str] = (),
    announced: bool = True,
) -> tuple[AlertPlan, NewMessage | None]:
    """Given the stored alert states (those that could be read), this run's results, the time,
    the settings, the keys named by a message still waiting for delivery and whether the news
    reaches anyone (`announced`: there is an alert destination), return the plan and the
    message it calls for (None when there is no news). Pure."""
    plan = decide_alerts(previous, results, now, settings.cooldown, undelivered, announced)
    notices = [n for n in plan.notices if settings.send_resolved or n.kind != "resolved"]
    message = build_message(plan, notices, now, settings.host, settings.mention)
    return (plan if announced else unannounced(plan, previous)), message


def commit_plan(
    state: StateDB,
    plan: AlertPlan,
    message: NewMessage | None,
    now: datetime,
    run_id: int | None,
    queue: bool,
) -> int | None:
    """Store the plan (and, when `queue`, its message) in one transaction, and put the opened
    and resolved checks on the timeline; return the outbox id of the message, if queued."""
    queued = store.save_plan(state, plan, message if queue else None, now, run_id)
    for notice in plan.notices:
        if notice.kind in ("new", "resolved"):
            kind = "alert.opened" if notice.kind == "new" else "alert.resolved"
            state.record_event(
                kind,
                job=JOB,
                run_id=run_id,
                data={"key": notice.key, "status": notice.status.value, "message": notice.message},
                ts=now.timestamp(),
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
    waiting = store.undelivered(state)
    if not waiting:
        return deliveries
    sink = make_sink()
    for row in waiting:
        store.mark_sending(state, row.id, clock())
        result = sink.send(AlertMessage(row.text, row.blocks, row.idempotency_key))
        attempts = row.attempts + 1
        data = {"outbox_id": row.id, "summary": row.summary, "keys": row.keys, "attempts": attempts}
        if result.ok:
            store.mark_sent(state, row.id, clock(), result.remote_id)
            state.record_event("alert.sent", job=JOB, run_id=run_id, data=data)
            deliveries.append(Delivery(row.id, row.summary, True, attempts=attempts))
            continue
        error = result.error or "unknown error"
        store.mark_failed(state, row.id, error)
        state.record_event("alert.failed", job=JOB, run_id=run_id, data=data | {"error": error})
        deliveries.append(Delivery(row.id, row.summary, False, error, attempts))
        break
    return deliveries
