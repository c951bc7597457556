"""Disk usage of every filesystem holding the gateway's state dir, an agent's workspace or
memwarden's own state folder."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from memwarden.health.checks import HealthInputs
from memwarden.health.model import CheckResult, graded

GIB = 1024**3


@dataclass(frozen=True)
class FilesystemUsage:
    """One filesystem: where it is mounted, what it holds for us, and its usage."""

    mount: Path
    holds: tuple[str, ...]
    used_bytes: int
    available_bytes: int

    @property
    def percent_used(self) -> float:
        """Used share as `df` shows it: used / (used + available to unprivileged users)."""
        usable = self.used_bytes + self.available_bytes
        return 100.0 * self.used_bytes / usable if usable else 0.0


def check_disk(inputs: HealthInputs) -> list[CheckResult]:
    """Given the inputs, return one `disk:<mount>` result per filesystem in use."""
    deployment = inputs.deployment
    places = {"state dir": deployment.state_dir}
    places |= {f"workspace {agent.id}": agent.workspace for agent in deployment.agents}
    if inputs.storage_dir is not None:
        places["memwarden's state"] = inputs.storage_dir
    settings = inputs.health
    return [
        grade_disk(usage, settings.disk_warning_percent, settings.disk_critical_percent)
        for usage in measure_filesystems(places.items())
    ]


def grade_disk(usage: FilesystemUsage, warning_percent: float, critical_percent: float):
    """Given a filesystem's usage and the thresholds (%), return its graded result."""
    percent = round(usage.percent_used, 1)
    holds = ", ".join(usage.holds[:3])
    if len(usage.holds) > 3:
        holds += f" and {len(usage.holds) - 3} more"
    free = usage.available_bytes / GIB
    message = f"disk {usage.mount}: {percent:g}% used, {free:.1f} GiB free (holds {holds})"
    return graded(
        f"disk:{usage.mount}",
        percent,
        warning_percent,
        critical_percent,
        message,
        holds=list(usage.holds),
        available_bytes=usage.available_bytes,
    )


def measure_filesystems(places: Iterable[tuple[str, Path]]) -> list[FilesystemUsage]:
    """Given (label, path) pairs, return the usage of each distinct filesystem (by st_dev).

    A path that does not exist yet counts on the filesystem of its nearest existing parent.
    """
    by_device: dict[int, tuple[Path, list[str]]] = {}
    for label, path in places:
        existing = existing_ancestor(path)
        device = os.stat(existing).st_dev
        if device not in by_device:
            by_device[device] = (mount_point(existing), [])
        by_device[device][1].append(label)
    usages = []
    for mount, labels in by_device.values():
        _total, used, free = shutil.disk_usage(mount)
        usages.append(FilesystemUsage(mount, tuple(labels), used, free))
    return usages


def existing_ancestor(path: Path) -> Path:
    """Given a path, return it or its nearest existing parent."""
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path(path.anchor or "/")


def mount_point(path: Path) -> Path:
    """Given an existing path, return the top folder of its filesystem (where st_dev changes)."""
    current = Path(os.path.realpath(path))
    device = os.stat(current).st_dev
    while current != current.parent and os.stat(current.parent).st_dev == device:
        current = current.parent
    return current
