"""Transcript volume: the agents' session folders plus their SQLite databases (with WAL)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from pathlib import Path

from memwarden.health.checks import HealthInputs, regular_files
from memwarden.health.model import CheckResult, graded

KEY = "transcripts.volume"
MB = 1024 * 1024
SQLITE_COMPANIONS = ("", "-wal", "-shm")


def check_volume(inputs: HealthInputs) -> list[CheckResult]:
    """Given the inputs, return `transcripts.volume`: total size against the warning threshold."""
    sizes = {
        agent.id: agent_volume(agent.sessions_dir, agent.sqlite_path)
        for agent in inputs.deployment.agents
    }
    return [grade_volume(sizes, inputs.health.transcript_warning_mb)]


def grade_volume(sizes: Mapping[str, int], warning_mb: int) -> CheckResult:
    """Given bytes per agent and the threshold (MB), return `transcripts.volume`."""
    total_mb = round(sum(sizes.values()) / MB, 1)
    largest = sorted(sizes.items(), key=lambda item: -item[1])[:3]
    shown = ", ".join(f"{agent} {size / MB:.1f} MB" for agent, size in largest if size)
    message = f"transcripts use {total_mb:g} MB" + (f" ({shown})" if shown else "")
    if total_mb >= warning_mb:
        message += "; run `memwarden maintain` or lower the retention"
    per_agent = {agent: round(size / MB, 2) for agent, size in sizes.items()}
    return graded(KEY, total_mb, warning_mb, None, message, per_agent_mb=per_agent)


def agent_volume(sessions_dir: Path, sqlite_path: Path) -> int:
    """Given an agent's sessions folder and database, return their size in bytes."""
    total = sum(size for _path, size in regular_files(str(sessions_dir)))
    for suffix in SQLITE_COMPANIONS:
        with contextlib.suppress(FileNotFoundError):
            total += os.stat(f"{sqlite_path}{suffix}").st_size
    return total
