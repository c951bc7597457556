"""Rewind an agent's memory/ folder to a snapshot, file by file, after saving the current state."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memwarden.errors import MemwardenError, UsageError
from memwarden.files import atomic_write, check_inside, fsync_dir
from memwarden.history import records
from memwarden.history.git import blob_sha
from memwarden.history.model import Snapshot
from memwarden.history.paths import matches, normalize_paths
from memwarden.history.scan import Scan, memory_folder, read_file, scan_memory
from memwarden.history.snapshots import snapshot
from memwarden.history.store import AgentHistory, agent_history, locked_memory
from memwarden.runtime import JobContext

RESTORE, REMOVE, UNCHANGED, REFUSE = "restore", "remove", "unchanged", "refuse"
DONE_WORDS = {RESTORE: "restored", REMOVE: "removed", UNCHANGED: "unchanged"}
DRY_RUN_WORDS = {RESTORE: "would restore", REMOVE: "would remove", UNCHANGED: "unchanged"}


@dataclass(frozen=True)
class Step:
    """What a rewind does to one file: restore it to blob `sha`, remove it, or leave it."""

    path: str
    action: str
    sha: str | None = None
    reason: str = ""


@dataclass(frozen=True)
class Outcome:
    """What happened to one file: restored / removed / unchanged / failed (or `would …`)."""

    path: str
    status: str
    error: str | None = None

    def line(self) -> str:
        text = f"{self.status:<15} memory/{self.path}"
        return f"{text}: {self.error}" if self.error else text


@dataclass
class RewindReport:
    """The snapshot rewound to, the snapshot that undoes it, and one outcome per file."""

    target: Snapshot
    undo_id: str | None
    saved_now: bool
    dry_run: bool
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def failed(self) -> list[Outcome]:
        return [outcome for outcome in self.outcomes if outcome.status == "failed"]

    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for outcome in self.outcomes:
            counts[outcome.status] = counts.get(outcome.status, 0) + 1
        return counts

    def to_json(self) -> dict[str, Any]:
        return {
            "snapshot": self.target.to_json(),
            "undo_snapshot": self.undo_id,
            "dry_run": self.dry_run,
            "files": [
                {"path": o.path, "status": o.status, "error": o.error} for o in self.outcomes
            ],
            "counts": self.counts(),
        }


def plan_rewind(
    target: Mapping[str, str],
    current: Mapping[str, str],
    symlinks: Iterable[str],
    wanted: Sequence[str] = (),
) -> list[Step]:
    """Given the snapshot's and the folder's {path: blob id}, the folder's symlinks and the
    paths asked for (all when empty), return one step per file, sorted by path.

    Files only in the folder were created after the snapshot and are removed; a symlink is never
    written through nor removed: its step is a refusal.
    """
    links = set(symlinks)
    steps = []
    for path in sorted(set(target) | set(current) | links):
        if not matches(path, wanted):
            continue
        if path in links:
            steps.append(Step(path, REFUSE, reason="is a symlink; memwarden does not follow links"))
        elif path not in target:
            steps.append(Step(path, REMOVE))
        elif current.get(path) == target[path]:
            steps.append(Step(path, UNCHANGED, target[path]))
        else:
            steps.append(Step(path, RESTORE, target[path]))
    return steps


def rewind(
    context: JobContext,
    snapshot_id: str,
    *,
    paths: Sequence[str] = (),
    dry_run: bool = False,
) -> RewindReport:
    """Given a snapshot id (or unique prefix), rewind that agent's memory/ to it.

    The current state is snapshotted first (trigger `pre-rewind`) so the rewind can be undone.
    With `paths`, only those files (or folders) are rewound. Raise UsageError if the snapshot,
    its agent or a path is unknown, UnsafePathError if memory/ leads out of the workspace,
    LockHeld if another run holds the agent's memory lock.
    """
    target_snapshot = records.find(context.state, snapshot_id)
    agent = context.deployment.agent(target_snapshot.agent_id)
    if agent is None:
        raise UsageError(
            f"snapshot {target_snapshot.id}: agent {target_snapshot.agent_id} is not in the "
            f"gateway config at {context.deployment.config_path}"
        )
    wanted = normalize_paths(paths)
    memory = memory_folder(agent.workspace)
    history = agent_history(context, agent.id)
    target = history.git.tree(target_snapshot.commit or "")
    _check_paths(wanted, target, scan_memory(memory), target_snapshot.id or "")
    if dry_run:
        pending = snapshot(context, agent, "pre-rewind", dry_run=True)
        latest = records.latest(context.state, agent.id)
        undo = None if pending else (latest.id if latest else None)
        report = RewindReport(target_snapshot, undo, pending is not None, True)
        report.outcomes = _apply(history, memory, target, wanted, dry_run=True)
        return report
    with locked_memory(context, agent.id):
        saved = snapshot(context, agent, "pre-rewind")
        latest = saved or records.latest(context.state, agent.id)
        undo = latest.id if latest else None
        report = RewindReport(target_snapshot, undo, saved is not None, False)
        report.outcomes = _apply(history, memory, target, wanted, dry_run=False)
        _record(context, report)
    return report


def _check_paths(
    wanted: Sequence[str], target: Mapping[str, str], scan: Scan, snapshot_id: str
) -> None:
    known = set(target) | set(scan.files) | set(scan.symlinks)
    unknown = [path for path in wanted if not any(matches(name, [path]) for name in known)]
    if unknown:
        raise UsageError(
            f"--path {', '.join(unknown)}: not in snapshot {snapshot_id} nor in memory/ "
            "(paths are relative to memory/, e.g. MEMORY.md)"
        )


def _apply(
    history: AgentHistory,
    memory: Path,
    target: Mapping[str, str],
    wanted: Sequence[str],
    dry_run: bool,
) -> list[Outcome]:
    scan = scan_memory(memory)
    current, outcomes = {}, []
    for path in scan.files:
        if matches(path, wanted):
            try:
                current[path] = blob_sha(read_file(memory / path))
            except (OSError, MemwardenError) as error:
                outcomes.append(Outcome(path, "failed", _reason(error)))
    failed = {outcome.path for outcome in outcomes}
    steps = [s for s in plan_rewind(target, current, scan.symlinks, wanted) if s.path not in failed]
    if dry_run:
        outcomes += [_dry_run_outcome(step) for step in steps]
        return sorted(outcomes, key=lambda outcome: outcome.path)
    blobs = history.git.blobs(step.sha for step in steps if step.action == RESTORE)
    # Removals first: a file may give way to a folder of the same name, or the reverse.
    ordered = sorted(steps, key=lambda step: (step.action != REMOVE, step.path))
    outcomes += [_carry_out(step, memory, blobs) for step in ordered]
    return sorted(outcomes, key=lambda outcome: outcome.path)


def _dry_run_outcome(step: Step) -> Outcome:
    if step.action == REFUSE:
        return Outcome(step.path, "failed", step.reason)
    return Outcome(step.path, DRY_RUN_WORDS[step.action])


def _carry_out(step: Step, memory: Path, blobs: Mapping[str, bytes]) -> Outcome:
    if step.action == REFUSE:
        return Outcome(step.path, "failed", step.reason)
    if step.action == UNCHANGED:
        return Outcome(step.path, DONE_WORDS[UNCHANGED])
    path = memory / step.path
    try:
        if step.action == REMOVE:
            _remove(path, memory)
        else:
            _restore(path, memory, blobs[step.sha or ""], step.sha or "")
    except (OSError, MemwardenError) as error:
        return Outcome(step.path, "failed", _reason(error))
    return Outcome(step.path, DONE_WORDS[step.action])


def _restore(path: Path, memory: Path, data: bytes, sha: str) -> None:
    atomic_write(path, data, root=memory)
    if blob_sha(read_file(path)) != sha:
        raise MemwardenError("content check failed: the file written differs from the snapshot")


def _remove(path: Path, memory: Path) -> None:
    real = check_inside(path, memory)
    os.unlink(real)
    fsync_dir(real.parent)
    if os.path.lexists(real):
        raise MemwardenError("still present after removal")
    _remove_empty_folders(real.parent, Path(os.path.realpath(memory)))


def _remove_empty_folders(folder: Path, memory: Path) -> None:
    while folder != memory and memory in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def _reason(error: Exception) -> str:
    if isinstance(error, MemwardenError):
        return error.message
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error)


def _record(context: JobContext, report: RewindReport) -> None:
    outcomes = report.outcomes
    context.state.record_event(
        "rewind.done",
        job="history",
        run_id=context.run_id,
        agent_id=report.target.agent_id,
        data={
            "snapshot": report.target.id,
            "undo_snapshot": report.undo_id,
            "restored": [o.path for o in outcomes if o.status == "restored"],
            "removed": [o.path for o in outcomes if o.status == "removed"],
            "unchanged": sum(1 for o in outcomes if o.status == "unchanged"),
            "failed": [{"path": o.path, "error": o.error} for o in outcomes if o.error],
        },
    )
