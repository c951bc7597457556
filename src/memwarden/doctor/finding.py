"""A doctor finding: what was checked, how it stands, and the exact fix."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["ok", "info", "warning", "action"]


@dataclass(frozen=True)
class Finding:
    """One result: `key` names the check (`compaction.mode`, `hooks.session-summary`, …);
    `fix` is an exact command or config line, None when there is nothing to do.

    `action`: memwarden cannot protect the agents until it is fixed (doctor exits 1).
    `warning`: works, but something the operator should change or know.
    """

    key: str
    severity: Severity
    message: str
    fix: str | None = None
