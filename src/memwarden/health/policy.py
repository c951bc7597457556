"""The alert policy: given what was known and what the checks found, decide what to tell people.

Pure: no clock, no database, no network. Per check key:

- ok → bad: a `new` notice at once (or at the first run that has somewhere to send it: a run
  without a destination keeps the check open but unannounced);
- bad → worse than the severity last notified (warning → critical): a `worse` notice at once;
- bad → still bad: a `reminder` once the cooldown has passed since the last notice, and only
  when no earlier notice about it is still waiting to be delivered (a Slack outage must not
  pile up reminders that would all arrive at once);
- bad → ok (or no longer reported): a `resolved` notice;
- not measured this run because another result masks it (readiness while the gateway is not
  live), or measured but explained by another bad result that holds it (rotate failing while the
  gateway is not live): its state is kept as it was, with no notice.

A severity that drops (critical → warning) is recorded without a notice; it shows in the next
reminder. Notices of one run are grouped into one message by the caller.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timedelta
from fnmatch import fnmatchcase
from typing import Any, Literal

from memwarden.health.model import CheckResult, Status

NoticeKind = Literal["new", "worse", "reminder", "resolved"]


@dataclass(frozen=True)
class AlertState:
    """What is remembered about a check that is not ok: since when, and the last notice."""

    key: str
    status: Status
    message: str
    since: datetime
    notified_at: datetime | None
    notified_status: Status | None


@dataclass(frozen=True, kw_only=True)
class Notice:
    """One piece of news about one check."""

    kind: NoticeKind
    key: str
    status: Status
    previous_status: Status | None = None
    message: str
    since: datetime
    value: Any = None
    threshold: Any = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self) | {
            "status": self.status.value,
            "previous_status": self.previous_status.value if self.previous_status else None,
            "since": self.since.isoformat(),
        }


@dataclass(frozen=True)
class AlertPlan:
    """The notices to send, the state to keep (bad checks only), the open checks not due, and
    the checks held as they were (their state is the stored one, not this run's result)."""

    notices: list[Notice]
    states: dict[str, AlertState]
    held: frozenset[str] = frozenset()

    @property
    def quiet(self) -> list[AlertState]:
        """The open checks this run says nothing about, in the order of `states`."""
        told = {notice.key for notice in self.notices}
        return [state for key, state in self.states.items() if key not in told]


def decide_alerts(
    previous_state: Mapping[str, AlertState],
    results: Sequence[CheckResult],
    now: datetime,
    cooldown: timedelta,
    undelivered: Collection[str] = (),
    announced: bool = True,
) -> AlertPlan:
    """Given the stored states, this run's results, the time, the cooldown and the keys that have
    a notice still waiting for delivery, return the plan: notices (in result order, resolutions
    of vanished checks last) and the states to store. A stored state whose check is masked by a
    result of this run (`CheckResult.masks`), or held by a bad one (`CheckResult.holds`), is kept
    unchanged, without a notice (and a held check with no stored state stays without one).

    `announced`: the notices reach someone (there is an alert destination). Then a check kept
    open by runs without one (no `notified_status`) gets its `new` notice now. When they reach
    no one, a state no notice ever reached keeps no `notified_status`, so the first run with a
    destination announces it instead of waiting out a cooldown no one was told about; the
    notice times still pace what these runs show.
    """
    notices: list[Notice] = []
    states: dict[str, AlertState] = {}
    seen = {result.key for result in results}
    holding = [pattern for result in results if result.status.is_bad for pattern in result.holds]
    held: set[str] = set()
    for result in results:
        previous = previous_state.get(result.key)
        if any(fnmatchcase(result.key, pattern) for pattern in holding):
            held.add(result.key)
            notice, state = None, previous  # kept as it was
        else:
            notice, state = _decide_one(previous, result, now, cooldown, undelivered, announced)
        if notice is not None:
            notices.append(notice)
        if state is not None:
            states[result.key] = state
    masks = [pattern for result in results for pattern in result.masks]
    for key, state in previous_state.items():
        if key in seen:
            continue
        if any(fnmatchcase(key, pattern) for pattern in masks):
            states[key] = state
        else:
            notices.append(_resolved(state, "no longer reported (check disabled or gone)"))
    if not announced:
        for key, state in states.items():
            before = previous_state.get(key)
            states[key] = replace(state, notified_status=before and before.notified_status)
    return AlertPlan(notices, states, frozenset(held))


def _decide_one(
    previous: AlertState | None,
    result: CheckResult,
    now: datetime,
    cooldown: timedelta,
    undelivered: Collection[str],
    announced: bool,
) -> tuple[Notice | None, AlertState | None]:
    if not result.status.is_bad:
        return (_resolved(previous, result.message) if previous else None), None
    before: Status | None = None  # the status the notice reports it came from
    # Without a destination, "worse" is news against what the last run showed.
    last = previous and ((previous.notified_status if announced else None) or previous.status)
    if previous is None:
        kind = "new"
        previous = AlertState(result.key, result.status, result.message, now, None, None)
    elif result.status.rank > last.rank:
        kind, before = "worse", last
    elif announced and previous.notified_status is None and result.key not in undelivered:
        kind = "new"  # open since a run that had nowhere to send it: this is its first notice
    elif result.key not in undelivered and (
        previous.notified_at is None or now - previous.notified_at >= cooldown
    ):
        kind, before = "reminder", previous.status
    else:
        return None, replace(previous, status=result.status, message=result.message)
    state = replace(
        previous,
        status=result.status,
        message=result.message,
        notified_at=now,
        notified_status=result.status,
    )
    notice = Notice(
        kind=kind,
        key=result.key,
        status=result.status,
        message=result.message,
        since=state.since,
        previous_status=before,
        value=result.value,
        threshold=result.threshold,
    )
    return notice, state


def _resolved(previous: AlertState, message: str) -> Notice:
    return Notice(
        kind="resolved",
        key=previous.key,
        status=Status.OK,
        message=message,
        since=previous.since,
        previous_status=previous.status,
    )
