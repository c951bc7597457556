"""What `memwarden index` did for each workspace, as data (--json) and as lines for people, and
sizes and counts in short form, as INDEX.md and these lines show them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from memwarden.indexing.manifest import INDEX_PATH
from memwarden.process.readable import count_text, size_text
from memwarden.process.runtime import JobResult

JOB = "index"  # the job its events are recorded under, whoever asked for the index


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
    # The handoffs the manifest lists: {path, session, chars}, one per conversation.
    handoffs: list[dict[str, Any]] = field(default_factory=list)
    manifest: str | None = None
    migrated: str | None = None
    unreadable: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Return the fields, in order, as plain JSON values (copies)."""
        return orjson.loads(orjson.dumps(self))


# The statuses in which the workspace keeps an INDEX.md of memwarden's that the hook injects.
LISTED = frozenset({"written", "would_write", "unchanged", "left_as_is"})


class Overrun(NamedTuple):
    """One thing over the gateway's bootstrap caps: an injected file (`path`) over the per-file
    cap, or every bootstrap file together (`path` None) over the total cap."""

    path: str | None
    chars: int
    cap: int


def bootstrap_overruns(
    shared: Mapping[str, int],
    handoffs: Mapping[str, int],
    max_chars: int,
    total_max_chars: int,
) -> list[Overrun]:
    """Given the lengths (JavaScript lengths by path relative to the workspace, present files
    only) of the bootstrap files every session gets (the gateway's own, INDEX.md) and of the
    handoffs (a session gets only its own), and the caps, return INDEX.md and each handoff over
    the per-file cap, then the total over the total cap: the shared files and the largest
    handoff, each counted up to the per-file cap (the gateway cuts a file first, then stops at
    the total).
    """
    injected = [(INDEX_PATH, shared[INDEX_PATH])] if INDEX_PATH in shared else []
    injected += sorted(handoffs.items())
    overruns = [Overrun(path, chars, max_chars) for path, chars in injected if chars > max_chars]
    total = sum(min(length, max_chars) for length in shared.values())
    total += min(max(handoffs.values(), default=0), max_chars)
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
        f"{workspace}: a session's bootstrap files can hold {overrun.chars:,} characters, over "
        f"the {overrun.cap:,}-character total bootstrap cap (bootstrapTotalMaxChars): the "
        "files injected last (INDEX.md, then the conversation's handoff) will be cut"
    )


def budget_warnings(
    workspace: Path, max_chars: int, total_max_chars: int, outcome: Outcome
) -> list[str]:
    """Return what memwarden injects that goes over the bootstrap caps: INDEX.md, a handoff,
    or INDEX.md with the largest handoff together."""
    shared = {}
    if outcome.status in LISTED and outcome.chars is not None:
        shared[INDEX_PATH] = outcome.chars
    handoffs = {item["path"]: item["chars"] for item in outcome.handoffs if item["chars"]}
    return [
        describe_overrun(workspace, overrun)
        for overrun in bootstrap_overruns(shared, handoffs, max_chars, total_max_chars)
    ]


def job_result(outcomes: Sequence[Outcome], *, dry_run: bool) -> JobResult:
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
    counts = Counter(outcome.status for outcome in outcomes)
    failed = counts.get("failed", 0) + sum(1 for outcome in outcomes if outcome.fits is False)
    summary = {"workspaces": len(outcomes), **counts}
    return JobResult(
        JOB,
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
    pool = f"{outcome.files} files, {size_text(outcome.size)}"
    if outcome.status == "no_workspace":
        return f"{label}: workspace {outcome.workspace} does not exist: nothing to index"
    if outcome.status == "failed":
        return f"{label}: failed: {outcome.error}" + _manifest_text(outcome)
    if outcome.status == "below_threshold":
        text = f"{label}: {pool} in memory/, under the threshold: no index"
    elif outcome.status == "left_as_is":
        text = f"{label}: memory/INDEX.md not rebuilt (only the bootstrap manifest)"
    else:
        verb = {
            "written": "memory/INDEX.md written",
            "would_write": "would write memory/INDEX.md",
            "unchanged": "memory/INDEX.md unchanged",
        }[outcome.status]
        text = (
            f"{label}: {verb}: {pool}, ~{count_text(outcome.tokens)} tokens; "
            f"{outcome.chars:,} of {outcome.cap:,} chars"
        )
        if outcome.condensed:
            text += f" (condensed: {'; '.join(outcome.condensed)})"
        if outcome.migrated:
            text += f"; took over the INDEX.md of generate-memory-index.sh ({outcome.migrated})"
    return text + _manifest_text(outcome)


def _manifest_text(outcome: Outcome) -> str:
    """Return what happened to the bootstrap manifest, as the end of the line."""
    count = len(outcome.handoffs)
    handoffs = f"{count} conversation handoff{'' if count == 1 else 's'}"
    return {
        "written": f"; bootstrap manifest written ({handoffs})",
        "would_write": f"; would write the bootstrap manifest ({handoffs})",
        "unchanged": f"; bootstrap manifest unchanged ({handoffs})",
        "removed": "; bootstrap manifest removed (nothing to inject)",
        "would_remove": "; would remove the bootstrap manifest (nothing to inject)",
    }.get(outcome.manifest or "", "")


def _label(outcome: Outcome) -> str:
    return ", ".join(outcome.agents) if outcome.agents else outcome.workspace
