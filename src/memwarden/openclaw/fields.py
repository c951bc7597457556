"""Typed reads of loose JSON fields from the gateway (store entries, sessions.list rows).

A field of the wrong type reads as None, never as an exception: the gateway's formats vary
across versions and memwarden must keep working when one field is odd.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def integer(value: object) -> int | None:
    """Return `value` as an int when it is a finite number (not a bool), else None."""
    if value is None:
        return None
    if type(value) is int:
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if value != value or value in (float("inf"), float("-inf")):
        return None
    return int(value)


def text(value: object) -> str | None:
    """Return `value` stripped when it is a non-blank string, else None."""
    return value.strip() or None if isinstance(value, str) else None


def mapping(value: object) -> Mapping[str, Any]:
    """Return `value` when it is a JSON object (a dict), else an empty one."""
    return value if isinstance(value, dict) else {}
