"""Gateway config drift: `memwarden maintain` saw the gateway config shrink by more than half.

maintain backs up the gateway config when its content changes and records a `config.shrunk`
event when the new content is less than half the size of the previous backup (a lost section,
an editor accident). This check keeps that visible as a warning for a while, so it reaches
people through the alerts.
"""

from __future__ import annotations

from datetime import timedelta

from memwarden.health.checks import HealthInputs
from memwarden.health.model import CheckResult, ok, warning

KEY = "config.drift"


def check_config_drift(inputs: HealthInputs) -> list[CheckResult]:
    """Given the inputs, return `config.drift`: a warning while a recent shrink is on record."""
    hours = inputs.health.config_drift_hours
    since = (inputs.now - timedelta(hours=hours)).timestamp()
    events = inputs.state.events(types=["config.shrunk"], since=since, limit=1)
    return [grade_config_drift(events[-1] if events else None, hours)]


def grade_config_drift(event: dict | None, hours: int) -> CheckResult:
    """Given the newest `config.shrunk` event of the window (or None), return the result."""
    if event is None:
        return ok(KEY, f"the gateway config did not shrink in the last {hours} h")
    data = event["data"]
    return warning(
        KEY,
        f"the gateway config {data.get('config')} shrank from {data.get('previous_bytes')} to "
        f"{data.get('current_bytes')} bytes; compare it with {data.get('previous_backup')}",
        value=data.get("current_bytes"),
        threshold=data.get("previous_bytes"),
        backup=data.get("previous_backup"),
    )
