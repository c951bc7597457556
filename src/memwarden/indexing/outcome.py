"""What `memwarden index` did for each workspace, as data (--json) and as lines for people."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from memwarden.indexing.catalog import format_count, format_size
from memwarden.indexing.manifest import ACTIVE_CONTEXT_PATH, INDEX_PATH
from memwarden.runtime import JobResult


@dataclass
class Outcome:
    """What indexing one workspace did (the job's --json shows these)."""

    workspace: str
    agents: list[str]
    status: str
    files: int = 0
    size: int = 0
    tokens: int = 0
    markers: dict[str, int] = field(default_factory=dict)
    chars: int | None = None
    cap: int | None = None
    fits: bool | None = None
    condensed: list[str] = field(default_factory=list)
    active_context_chars: int | None = None
    manifest: str | None = None
    unreadable: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def budget_warnings(
    workspace: Path, max_chars: int, total_max_chars: int, outcome: Outcome
) -> list[str]:
    """Return what goes over the bootstrap caps: the index, ACTIVE_CONTEXT.md, or both."""
    warnings = []
    if outcome.fits is False:
        warnings.append(
            f"{workspace / INDEX_PATH}: {outcome.chars:,} characters even condensed, over "
            f"the {max_chars:,}-character bootstrap cap: the gateway will cut it in the "
            "middle; raise bootstrapMaxChars or split the memory folder"
        )
    active = outcome.active_context_chars
    if active is not None and active > max_chars:
        warnings.append(
            f"{workspace / ACTIVE_CONTEXT_PATH}: {active:,} characters, over the "
            f"{max_chars:,}-character bootstrap cap: the gateway will cut it in the middle"
        )
    injected = (outcome.chars or 0) + (active or 0)
    if injected > total_max_chars:
        warnings.append(
            f"{workspace}: INDEX.md and ACTIVE_CONTEXT.md together hold {injected:,} "
            f"characters, over the {total_max_chars:,}-character total bootstrap cap "
            "(bootstrapTotalMaxChars): the last files injected will be cut"
        )
    return warnings


def job_result(job: str, outcomes: Sequence[Outcome], *, dry_run: bool) -> JobResult:
    """Given the outcomes, return the job's result: lines, problems, summary, exit code."""
    lines, problems = [], []
    for outcome in outcomes:
        lines.append(describe(outcome))
        problems += outcome.warnings
        problems += [
            f"{outcome.workspace}/memory/{path}: skipped, cannot be read ({reason})"
            for path, reason in outcome.unreadable.items()
        ]
        if outcome.error:
            problems.append(f"index {_label(outcome)}: failed: {outcome.error}")
    counts: dict[str, int] = {}
    for outcome in outcomes:
        counts[outcome.status] = counts.get(outcome.status, 0) + 1
    failed = counts.get("failed", 0) + sum(1 for outcome in outcomes if outcome.fits is False)
    summary = {"workspaces": len(outcomes), **counts}
    return JobResult(
        job,
        data={
            "dry_run": dry_run,
            "summary": summary,
            "workspaces": [outcome.to_json() for outcome in outcomes],
        },
        lines=lines,
        problems=problems,
        exit_code=1 if failed else 0,
    )


def describe(outcome: Outcome) -> str:
    """Return one line saying what indexing a workspace did (or would do)."""
    label = f"index {_label(outcome)}"
    pool = f"{outcome.files} files, {format_size(outcome.size)}"
    if outcome.status == "no_workspace":
        return f"{label}: workspace {outcome.workspace} does not exist: nothing to index"
    if outcome.status == "failed":
        return f"{label}: failed: {outcome.error}"
    if outcome.status == "below_threshold":
        removed = {
            "removed": "; bootstrap manifest removed",
            "would_remove": "; would remove the bootstrap manifest",
        }.get(outcome.manifest or "", "")
        return f"{label}: {pool} in memory/, under the threshold: no index{removed}"
    verb = {
        "written": "memory/INDEX.md written",
        "would_write": "would write memory/INDEX.md",
        "unchanged": "memory/INDEX.md unchanged",
    }[outcome.status]
    text = (
        f"{label}: {verb}: {pool}, ~{format_count(outcome.tokens)} tokens; "
        f"{outcome.chars:,} of {outcome.cap:,} chars"
    )
    if outcome.condensed:
        text += f" (condensed: {'; '.join(outcome.condensed)})"
    return text


def _label(outcome: Outcome) -> str:
    return ", ".join(outcome.agents) if outcome.agents else outcome.workspace
