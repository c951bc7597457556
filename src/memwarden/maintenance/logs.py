"""Rotation of memwarden's own logs: `x.log` → `x.log.1` → … → `x.log.<keep>`, then gone."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from memwarden.maintenance.facts import FileFacts

_COPY = re.compile(r"^(?P<base>.+\.log)\.(?P<number>[1-9]\d*)$")


@dataclass(frozen=True)
class LogStep:
    """Delete a log copy, or rename one log file to the next name."""

    action: Literal["delete", "rename"]
    name: str
    new_name: str | None = None


def plan_log_rotation(files: list[FileFacts], max_bytes: int, keep: int) -> list[LogStep]:
    """Given the files of the log folder, return the steps that rotate every oversized log.

    A `*.log` larger than `max_bytes` becomes `.1`, each copy moves up by one, and copies past
    `keep` are deleted (also when `keep` was lowered). Steps are in a safe order: deletions and
    renames from the oldest copy down, so no rename overwrites a file still needed.
    """
    copies: dict[str, set[int]] = {}
    for fact in files:
        match = _COPY.match(fact.name)
        if match:
            copies.setdefault(match["base"], set()).add(int(match["number"]))
    steps: list[LogStep] = []
    oversized = {
        fact.name for fact in files if fact.name.endswith(".log") and fact.size > max_bytes
    }
    for base in sorted(set(copies) | oversized):
        numbers = copies.get(base, set())
        rotate = base in oversized
        last_kept = keep - 1 if rotate else keep
        steps += [
            LogStep("delete", f"{base}.{n}") for n in sorted(numbers, reverse=True) if n > last_kept
        ]
        if not rotate:
            continue
        for number in sorted((n for n in numbers if n <= last_kept), reverse=True):
            steps.append(LogStep("rename", f"{base}.{number}", f"{base}.{number + 1}"))
        steps.append(LogStep("rename", base, f"{base}.1") if keep > 0 else LogStep("delete", base))
    return steps
