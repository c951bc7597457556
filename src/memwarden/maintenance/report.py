"""What one maintenance step did: lines for people, problems, data for --json, failures."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class StepReport:
    """The outcome of one step of `memwarden maintain`; `failures` count items that failed."""

    name: str
    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    failures: int = 0

    def fail(self, message: str) -> None:
        self.problems.append(message)
        self.failures += 1
