"""How many CPUs this process may use (Linux): its affinity, bounded by its cgroup's CPU quota.

A container or a systemd unit (`CPUQuota=`) may let a process run on every core of the host
while granting it the time of one: processes beyond the quota only wait for each other. The
quota is read from cgroup v2 (`cpu.max`) or v1 (`cpu.cfs_quota_us` / `cpu.cfs_period_us`), of
the process's own cgroup and of each one above it (the smallest wins), where they are mounted
(`/sys/fs/cgroup`); a cgroup path that a container does not show is looked up from its root.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from pathlib import Path

PROC_CGROUP = Path("/proc/self/cgroup")
CGROUP_ROOT = Path("/sys/fs/cgroup")


def usable_cpus() -> int:
    """Return how many CPUs this process may keep busy: its CPU affinity, at most its cgroup's
    CPU quota rounded up, at least 1."""
    cpus = len(os.sched_getaffinity(0))
    quota = cpu_quota()
    return cpus if quota is None else max(1, min(cpus, math.ceil(quota)))


def cpu_quota() -> float | None:
    """Return the CPU quota of this process's cgroups in CPUs (1.5: one and a half CPU's time),
    or None when none is set or none can be read."""
    try:
        lines = PROC_CGROUP.read_text().splitlines()
    except OSError:
        return None
    quotas = []
    for line in lines:
        _, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if not path:
            continue
        if not controllers:  # cgroup v2
            quotas += _quotas(CGROUP_ROOT, path, _v2_quota)
        elif "cpu" in controllers.split(","):  # cgroup v1's cpu controller
            quotas += _quotas(CGROUP_ROOT / controllers, path, _v1_quota)
    return min(quotas, default=None)


def _quotas(mount: Path, path: str, quota_of) -> Iterator[float]:
    """Yield the quota of each cgroup from `path` up to the root of `mount` that has one."""
    folder = mount / path.lstrip("/")
    while True:
        quota = quota_of(folder)
        if quota is not None:
            yield quota
        if folder == mount or mount not in folder.parents:
            return
        folder = folder.parent


def _v2_quota(folder: Path) -> float | None:
    """`cpu.max`: `<quota> <period>` in microseconds, or `max <period>` (no quota)."""
    try:
        quota, period = (folder / "cpu.max").read_text().split()
        return int(quota) / int(period)
    except (OSError, ValueError, ZeroDivisionError):  # missing, or `max`
        return None


def _v1_quota(folder: Path) -> float | None:
    """`cpu.cfs_quota_us` (-1: no quota) over `cpu.cfs_period_us`."""
    try:
        quota = int((folder / "cpu.cfs_quota_us").read_text())
        period = int((folder / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return quota / period if quota > 0 and period > 0 else None
