"""What `memwarden index` did for each workspace, as data (--json) and as lines for people."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
    active_context_session: str | None = None
    active_context_sha256: str | None = None
    manifest: str | None = None
    unreadable: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


# The files the bootstrap hook injects, in the order it injects them.
INJECTED = (INDEX_PATH, ACTIVE_CONTEXT_PATH)


@dataclass(frozen=True)
class Overrun:
    """One thing over the gateway's bootstrap caps: an injected file (`path`) over the per-file
    cap, or every bootstrap file together (`path` None) over the total cap."""

    path: str | None
    chars: int
    cap: int


def bootstrap_overruns(
    lengths: Mapping[str, int], max_chars: int, total_max_chars: int
) -> list[Overrun]:
    """Given bootstrap file lengths (JavaScript lengths by path relative to the workspace,
    present files only) and the caps, return the injected files over the per-file cap, then
    the total over the total cap (each file counted up to the per-file cap: the gateway cuts
    a file first, then stops at the total).
    """
    overruns = [
        Overrun(path, lengths[path], max_chars)
        for path in INJECTED
        if path in lengths and lengths[path] > max_chars
    ]
    total = sum(min(length, max_chars) for length in lengths.values())
    if total > total_max_chars:
        overruns.append(Overrun(None, total, total_max_chars))
    return overruns


def describe_overrun(workspace: Path, overrun: Overrun) -> str:
    """Return one line saying what goes over which cap, and what the gateway does about it."""
    if overrun.path == INDEX_PATH:
        return (
            f"{workspace / INDEX_PATH}: {overrun.chars:,} characters even condensed, over "
            f"the {overrun.cap:,}-character bootstrap cap: the gateway will cut it in the "
            "middle; raise bootstrapMaxChars or split the memory folder"
        )
    if overrun.path is not None:
        return (
            f"{workspace / overrun.path}: {overrun.chars:,} characters, over the "
            f"{overrun.cap:,}-character bootstrap cap: the gateway will cut it in the middle"
        )
    return (
        f"{workspace}: the bootstrap files hold {overrun.chars:,} characters, over the "
        f"{overrun.cap:,}-character total bootstrap cap (bootstrapTotalMaxChars): the files "
        "injected last (INDEX.md, ACTIVE_CONTEXT.md) will be cut"
    )


def budget_warnings(
    workspace: Path, max_chars: int, total_max_chars: int, outcome: Outcome
) -> list[str]:
    """Return what goes over the bootstrap caps: the index, ACTIVE_CONTEXT.md, or both."""
    lengths = {
        path: chars
        for path, chars in (
            (INDEX_PATH, outcome.chars),
            (ACTIVE_CONTEXT_PATH, outcome.active_context_chars),
        )
        if chars is not None
    }
    return [
        describe_overrun(workspace, overrun)
        for overrun in bootstrap_overruns(lengths, max_chars, total_max_chars)
    ]


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
