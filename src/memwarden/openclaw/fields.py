"""Typed reads of loose JSON fields from the gateway (store entries, sessions.list rows).

A field of the wrong type reads as None, never as an exception: the gateway's formats vary
across versions and memwarden must keep working when one field is odd.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

# What SQLite and the JSON writers hold: a larger number read from the gateway (a corrupt or
# hostile 1e30) would fail far from where it was read.
INT64_MAX = 2**63 - 1
# 9999-12-31T23:59:59.999Z: the last Unix time in milliseconds a datetime can hold.
EPOCH_MS_MAX = 253_402_300_799_999
# JavaScript's Number.MAX_SAFE_INTEGER: the gateway reads no count beyond it exactly.
JS_SAFE_INTEGER_MAX = 2**53 - 1


def integer(value: object) -> int | None:
    """Return `value` as an int when it is a finite number (not a bool) within the signed
    64-bit range, else None."""
    if value is None:
        return None
    if type(value) is int:  # the common case, first
        return value if -INT64_MAX - 1 <= value <= INT64_MAX else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if value != value or value in (float("inf"), float("-inf")):
        return None
    number = int(value)
    return number if -INT64_MAX - 1 <= number <= INT64_MAX else None


def epoch_ms(value: object) -> int | None:
    """Return `value` as a Unix time in milliseconds (0 to year 9999), else None."""
    number = integer(value)
    return number if number is not None and 0 <= number <= EPOCH_MS_MAX else None


def moment(value: object) -> datetime | None:
    """Given an ISO string or Unix milliseconds, return an aware UTC datetime, else None."""
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return None
        if moment.tzinfo is UTC:  # "…Z", as the gateway writes them: nothing to convert
            return moment
        if moment.tzinfo is None:
            return moment.replace(tzinfo=UTC)
        return moment.astimezone(UTC)
    if type(value) is int or type(value) is float:
        try:
            return datetime.fromtimestamp(value / 1000, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    return None


def describe(value: object) -> str:
    """Return how an odd field value reads in a problem line: its JSON type, with the value
    when it is short."""
    kinds = {type(None): "null", bool: "a boolean", str: "a string", int: "a number"}
    kinds |= {float: "a number", dict: "an object", list: "a list", bytes: "binary data"}
    kind = kinds.get(type(value), type(value).__name__)
    if value is None or isinstance(value, bytes | dict | list):
        return kind
    shown = repr(value) if isinstance(value, str) else str(value).lower()
    return f"{kind} ({shown})" if len(shown) <= 40 else kind


def text(value: object) -> str | None:
    """Return `value` stripped when it is a non-blank string, else None."""
    return value.strip() or None if isinstance(value, str) else None


def mapping(value: object) -> Mapping[str, Any]:
    """Return `value` when it is a JSON object (a dict), else an empty one."""
    return value if isinstance(value, dict) else {}
