"""What the metric families read: this run's results, the state DB, the settings, the gateway."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memwarden.health.checks import HealthInputs
from memwarden.health.model import CheckResult


@dataclass
class MetricSources:
    """The inputs of one textfile: the health run's `inputs` (settings, state, the gateway's
    layout, loaded at most once: a GatewayConfigError leaves the families that need it without
    samples; `now`, the time of the run), this run's `results`, and `gateway`, which names this
    gateway in every sample."""

    inputs: HealthInputs
    results: Sequence[CheckResult]
    gateway: str
    _memo: dict[str, Any] = field(default_factory=dict, repr=False)

    def result(self, key: str) -> CheckResult | None:
        """Return this run's result under `key` (None when the check did not run)."""
        return next((result for result in self.results if result.key == key), None)

    def detail_rows(self, key: str, name: str) -> list[dict[str, Any]]:
        """Return the list of dicts a result carries in its details under `name` (empty when
        the check did not run or carries none)."""
        result = self.result(key)
        rows = result.details.get(name) if result else None
        return [row for row in rows if isinstance(row, dict)] if isinstance(rows, list) else []

    def memo(self, name: str, compute: Callable[[], Any]) -> Any:
        """Return `compute()`, computed once per textfile under `name` (for data that several
        families read)."""
        if name not in self._memo:
            self._memo[name] = compute()
        return self._memo[name]
