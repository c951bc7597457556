"""What the metric families read: this run's results, the state DB, the settings, the gateway."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memwarden.health.model import CheckResult

if TYPE_CHECKING:
    from memwarden.openclaw.layout import Deployment
    from memwarden.store.state import StateDB


@dataclass
class MetricSources:
    """The inputs of one textfile: `gateway` names this gateway in every sample; `now` is the
    time of the health run; `deployment_loader` is called at most once (it may raise
    GatewayConfigError: the families that need the layout then have no samples)."""

    gateway: str
    now: datetime
    results: Sequence[CheckResult]
    config: Any
    state: StateDB
    deployment_loader: Callable[[], Deployment]
    storage_dir: Path | None = None  # memwarden's state folder for this gateway (receipts)
    _memo: dict[str, Any] = field(default_factory=dict, repr=False)

    @cached_property
    def deployment(self) -> Deployment:
        return self.deployment_loader()

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
