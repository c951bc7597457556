"""The Prometheus textfile for node_exporter's textfile collector, written atomically.

Per check its status (0 ok, 1 warning, 2 critical), per conversation its context ratio, per job its
last success time, the open alerts and the messages waiting for delivery.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path

from memwarden.files import atomic_write, fsync_dir
from memwarden.health.checks.context import KEY as CONTEXT_KEY
from memwarden.health.model import CheckResult
from memwarden.templating import render


def render_metrics(
    results: Sequence[CheckResult],
    last_success: Mapping[str, float | None],
    open_alerts: int,
    undelivered: int,
    now: datetime,
) -> str:
    """Given this run's results, each job's last success (epoch seconds or None), the open alert
    and undelivered message counts and the time, return the textfile's content."""
    checks = [{"key": result.key, "code": result.status.rank} for result in results]
    sessions = next(
        (result.details.get("ratios", []) for result in results if result.key == CONTEXT_KEY), []
    )
    jobs = [
        {"name": name, "timestamp": _number(stamp)}
        for name, stamp in sorted(last_success.items())
        if stamp is not None
    ]
    return render(
        "health/metrics.prom.j2",
        checks=checks,
        sessions=[session | {"ratio": _number(session["ratio"])} for session in sessions],
        jobs=jobs,
        open_alerts=open_alerts,
        undelivered=undelivered,
        now=_number(now.timestamp()),
        label=escape_label,
    )


def write_metrics(path: Path, text: str, mode: int) -> None:
    """Replace the textfile at `path` with `text`, atomically and already carrying `mode`.

    node_exporter may read it at any moment: the content is written to a temp file beside it,
    given its mode, then renamed over it, so a reader never sees a partial file or one it may
    not read.
    """
    temporary = path.with_name(f".{path.name}.memwarden")
    atomic_write(temporary, text)
    os.chmod(temporary, mode)
    os.replace(temporary, path)
    fsync_dir(path.parent)


def escape_label(value: str) -> str:
    """Given a label value, return it escaped for the Prometheus text format."""
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _number(value: float) -> str:
    return repr(round(float(value), 6))
