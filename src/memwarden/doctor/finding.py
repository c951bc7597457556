"""A doctor finding: what was checked, how it stands, and the exact fix."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["ok", "info", "warning", "action"]
SEVERITY_ORDER: dict[str, int] = {"action": 0, "warning": 1, "info": 2, "ok": 3}


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


def ordered(findings: list[Finding]) -> list[Finding]:
    """Return the findings most urgent first, keeping the check order within a severity."""
    return sorted(findings, key=lambda finding: SEVERITY_ORDER[finding.severity])


def counts(findings: list[Finding]) -> dict[str, int]:
    return {name: sum(1 for f in findings if f.severity == name) for name in SEVERITY_ORDER}


def needs_action(findings: list[Finding]) -> bool:
    return any(finding.severity == "action" for finding in findings)
