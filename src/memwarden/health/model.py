"""What a check reports: a stable key, a status, one line for people, the value and threshold."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any


class Status(StrEnum):
    """A check's verdict, ordered: ok < warning < critical."""

    OK = "ok"
    WARNING = "warning"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        return _RANKS[self]

    @property
    def is_bad(self) -> bool:
        return self is not Status.OK


_RANKS = {Status.OK: 0, Status.WARNING: 1, Status.CRITICAL: 2}


@dataclass(frozen=True)
class CheckResult:
    """One measured fact. `key` is stable across runs (`gateway.live`, `disk:/var`): the alert
    state, cooldowns and metrics are kept per key.

    `masks` names the checks (keys or globs) this result kept from being measured: readiness is
    not probed while the gateway is not live. Their alert state is kept as it was, so one outage
    is one alert, and nothing counts as resolved merely for not being measured.

    `holds` names the checks (keys or globs) whose failure this bad result explains: rotate
    fails while the gateway is not live. They are measured and shown, but their alert state is
    kept as it was, as for a masked check: the outage is the one alert.
    """

    key: str
    status: Status
    message: str
    value: Any = None
    threshold: Any = None
    details: dict[str, Any] = field(default_factory=dict)
    masks: tuple[str, ...] = ()
    holds: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Return the result as --json shows it: every field but `masks` and `holds`."""
        shown = ("key", "status", "message", "value", "threshold", "details")
        return {name: getattr(self, name) for name in shown} | {"status": self.status.value}


def ok(key: str, message: str, value: Any = None, threshold: Any = None, **details) -> CheckResult:
    return CheckResult(key, Status.OK, message, value, threshold, details)


def warning(key: str, message: str, value: Any = None, threshold: Any = None, **details):
    return CheckResult(key, Status.WARNING, message, value, threshold, details)


def critical(key: str, message: str, value: Any = None, threshold: Any = None, **details):
    return CheckResult(key, Status.CRITICAL, message, value, threshold, details)


def graded(
    key: str,
    value: float,
    warning_at: float | None,
    critical_at: float | None,
    message: str,
    **details,
) -> CheckResult:
    """Given a measured value and its thresholds (None: not used), return the graded result.

    The threshold reported is the one crossed, else the lowest one in use.
    """
    if critical_at is not None and value >= critical_at:
        return CheckResult(key, Status.CRITICAL, message, value, critical_at, details)
    if warning_at is not None and value >= warning_at:
        return CheckResult(key, Status.WARNING, message, value, warning_at, details)
    lowest = warning_at if warning_at is not None else critical_at
    return CheckResult(key, Status.OK, message, value, lowest, details)


def duration(delta: timedelta, seconds: bool = True) -> str:
    """Given a duration, return it for people: `45 s` (or in minutes under a minute, without
    `seconds`), `35 min`, `2.5 h`, `3.0 days`."""
    total = max(0.0, delta.total_seconds())
    if total < 60 and seconds:
        return f"{total:.0f} s"
    if total < 3600:
        return f"{total / 60:.0f} min"
    if total < 2 * 86400:
        return f"{total / 3600:.1f} h"
    return f"{total / 86400:.1f} days"


def utc_time(stamp: float) -> datetime:
    """Given Unix time, return it as an aware UTC datetime."""
    return datetime.fromtimestamp(stamp, UTC)
