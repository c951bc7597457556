"""How many CPUs this process may use (memwarden.process.cpus): the affinity, bounded by the
cgroup's CPU quota, read from cgroup files laid out as Linux lays them out (v2, v1, a
container's view)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memwarden.process import cpus


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An 8-core host whose cgroup files live under the returned folder."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)))
    monkeypatch.setattr(cpus, "PROC_CGROUP", tmp_path / "proc-self-cgroup")
    monkeypatch.setattr(cpus, "CGROUP_ROOT", tmp_path / "sys-fs-cgroup")
    return tmp_path


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_no_quota_leaves_the_affinity(host):
    write(host / "proc-self-cgroup", "0::/user.slice/session-1.scope\n")
    write(host / "sys-fs-cgroup" / "user.slice" / "session-1.scope" / "cpu.max", "max 100000\n")
    assert cpus.cpu_quota() is None
    assert cpus.usable_cpus() == 8


@pytest.mark.parametrize(("quota", "usable"), [("50000", 1), ("150000", 2), ("2000000", 8)])
def test_a_v2_quota_is_rounded_up_and_bounded_by_the_affinity(host, quota, usable):
    write(host / "proc-self-cgroup", "0::/system.slice/memwarden-checkpoint.service\n")
    unit = host / "sys-fs-cgroup" / "system.slice" / "memwarden-checkpoint.service"
    write(unit / "cpu.max", f"{quota} 100000\n")
    assert cpus.usable_cpus() == usable


def test_the_smallest_quota_on_the_way_to_the_root_wins(host):
    write(host / "proc-self-cgroup", "0::/machine.slice/box/app\n")
    root = host / "sys-fs-cgroup"
    write(root / "machine.slice" / "cpu.max", "100000 100000\n")  # the slice: one CPU
    write(root / "machine.slice" / "box" / "cpu.max", "400000 100000\n")
    write(root / "machine.slice" / "box" / "app" / "cpu.max", "max 100000\n")
    assert cpus.cpu_quota() == 1.0
    assert cpus.usable_cpus() == 1


def test_a_v1_quota_is_read_from_the_cpu_controller(host):
    write(
        host / "proc-self-cgroup",
        "12:pids:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n0::/\n",
    )
    # Inside the container, its own cgroup is the mount's root: /docker/abc is not there.
    controller = host / "sys-fs-cgroup" / "cpu,cpuacct"
    write(controller / "cpu.cfs_quota_us", "200000\n")
    write(controller / "cpu.cfs_period_us", "100000\n")
    assert cpus.cpu_quota() == 2.0
    assert cpus.usable_cpus() == 2
    write(controller / "cpu.cfs_quota_us", "-1\n")  # no quota
    assert cpus.usable_cpus() == 8


def test_unreadable_cgroup_files_leave_the_affinity(host):
    assert cpus.usable_cpus() == 8  # no /proc/self/cgroup at all (not Linux, a sandbox)
    write(host / "proc-self-cgroup", "not a cgroup line\n0::/x\n")
    write(host / "sys-fs-cgroup" / "x" / "cpu.max", "garbage\n")
    assert cpus.usable_cpus() == 8
