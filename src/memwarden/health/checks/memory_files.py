"""Oversized memory files: `memory/**` (without `archive/`) and `MEMORY.md` of each workspace.

The gateway's bootstrap cuts a file larger than its per-file cap in the middle, so an oversized
memory file silently loses part of what it remembers.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from memwarden.fs.files import display_path
from memwarden.health.checks import HealthInputs, regular_files
from memwarden.health.model import CheckResult, ok, warning

KEY = "memory.oversized"
KB = 1024
SKIPPED_FOLDERS = frozenset({"archive"})


@dataclass(frozen=True)
class MemoryFile:
    agent_id: str
    path: Path
    size: int
    name: str  # relative to the workspace


def check_memory_files(inputs: HealthInputs) -> list[CheckResult]:
    """Given the inputs, return `memory.oversized` naming the largest files over the threshold.
    Its details carry every agent's memory size, for the metrics."""
    limit = inputs.health.memory_file_warning_kb * KB
    files: list[MemoryFile] = []
    agents: list[dict[str, object]] = []  # each agent's memory: files, bytes, the largest
    for agent in inputs.deployment.agents:
        sizes = []
        for path, size in memory_files(agent.workspace):
            sizes.append(size)
            if size > limit:
                files.append(
                    MemoryFile(
                        agent.id,
                        Path(path),
                        size,
                        display_path(os.path.relpath(path, agent.workspace)),
                    )
                )
        agents.append(
            {
                "agent": agent.id,
                "files": len(sizes),
                "bytes": sum(sizes),
                "largest": max(sizes, default=0),
            }
        )
    return [
        grade_memory_files(
            files, inputs.health.memory_file_warning_kb, inputs.health.memory_file_list, agents
        )
    ]


def grade_memory_files(
    files: Sequence[MemoryFile],
    limit_kb: int,
    shown: int,
    agents: list[dict[str, object]],
) -> CheckResult:
    """Given the oversized files, the limit (KB), how many to name and each agent's memory
    size (files, bytes, largest), return the result."""
    if not files:
        return ok(KEY, f"no memory file over {limit_kb} KB", 0, limit_kb, agents=agents)
    worst = sorted(files, key=lambda item: -item.size)[:shown]
    names = ", ".join(f"{item.agent_id}:{item.name} {item.size / KB:.0f} KB" for item in worst)
    more = f" and {len(files) - len(worst)} more" if len(files) > len(worst) else ""
    return warning(
        KEY,
        f"{len(files)} memory file(s) over {limit_kb} KB: {names}{more}",
        len(files),
        limit_kb,
        files=[
            {"agent": item.agent_id, "path": display_path(str(item.path)), "bytes": item.size}
            for item in worst
        ],
        agents=agents,
    )


def memory_files(workspace: Path) -> Iterator[tuple[str, int]]:
    """Given a workspace, yield (path, size) of MEMORY.md and of the files under memory/.

    Paths are strings: a workspace holds thousands of files, and only the oversized few are
    worth a Path.
    """
    root_file = os.path.join(workspace, "MEMORY.md")
    with contextlib.suppress(OSError):
        yield root_file, os.stat(root_file, follow_symlinks=False).st_size
    yield from regular_files(os.path.join(workspace, "memory"), SKIPPED_FOLDERS)
