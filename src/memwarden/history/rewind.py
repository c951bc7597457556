"""Rewind an agent's workspace memory to a snapshot, file by file, after saving the current state.

What a snapshot covers is what a rewind touches: memory/ and the root files the snapshot kept
(memory/ alone for a snapshot taken before history kept root files). A rewind that restored or
removed files calls `on_rewound` (still under the memory lock) so the jobs that remember what
those files held (checkpoint) forget it.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memwarden.fs.files import atomic_write, check_inside, fsync_dir, read_bytes
from memwarden.history import records
from memwarden.history.git import GitStore, blob_sha
from memwarden.history.model import MEMORY_PREFIX, Snapshot, reason
from memwarden.history.paths import matches, resolve_paths
from memwarden.history.records import Marks
from memwarden.history.scan import scan_workspace
from memwarden.history.snapshots import snapshot
from memwarden.history.store import snapshot_tree, store_of
from memwarden.process.errors import MemwardenError, UsageError
from memwarden.process.runtime import JobContext
from memwarden.store.state import StateDB

if TYPE_CHECKING:
    from memwarden.openclaw.agents import Agent

# (state, agent id, workspace-relative paths restored or removed, the snapshot's marks or None)
RewindHook = Callable[[StateDB, str, Sequence[str], Marks | None], None]

RESTORE, REMOVE, UNCHANGED, REFUSE = "restore", "remove", "unchanged", "refuse"
DONE_WORDS = {RESTORE: "restored", REMOVE: "removed"}


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
        text = f"{self.status:<15} {self.path}"
        return f"{text}: {self.error}" if self.error else text


@dataclass
class RewindReport:
    """The snapshot rewound to, the snapshot that undoes it, and one outcome per file."""

    target: Snapshot
    undo_id: str | None
    saved_now: bool
    dry_run: bool
    outcomes: list[Outcome] = field(default_factory=list)
    rewound_id: str | None = None  # the snapshot of the memory as the rewind left it
    problems: list[str] = field(default_factory=list)

    @property
    def failed(self) -> list[Outcome]:
        return [outcome for outcome in self.outcomes if outcome.status == "failed"]

    def counts(self) -> dict[str, int]:
        return dict(Counter(outcome.status for outcome in self.outcomes))

    def to_json(self) -> dict[str, Any]:
        return {
            "snapshot": self.target.to_json(),
            "undo_snapshot": self.undo_id,
            "rewound_snapshot": self.rewound_id,
            "dry_run": self.dry_run,
            "files": [asdict(outcome) for outcome in self.outcomes],
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
    on_rewound: RewindHook | None = None,
) -> RewindReport:
    """Given a snapshot id (or unique prefix), rewind that agent's workspace memory to it.

    The current state is snapshotted first (trigger `pre-rewind`) so the rewind can be undone.
    With `paths` (workspace-relative; see `paths.resolve_paths`), only those files (or folders)
    are rewound. Raise UsageError if the snapshot, its agent or a path is unknown,
    UnsafePathError if memory/ leads out of the workspace, HistoryError if the workspace cannot
    be read, LockHeld if another run holds the agent's memory lock.
    """
    target_snapshot = records.find(context.state, snapshot_id)
    agent = context.deployment.agent(target_snapshot.agent_id)
    if agent is None:
        raise UsageError(
            f"snapshot {target_snapshot.id}: agent {target_snapshot.agent_id} is not in the "
            f"gateway config at {context.deployment.config_path}"
        )
    if agent.workspace_problem is not None:
        raise MemwardenError(f"{context.deployment.config_path}: {agent.workspace_problem}")
    roots = () if target_snapshot.legacy else target_snapshot.roots
    target = snapshot_tree(context, target_snapshot)
    known = scan_workspace(agent.workspace, roots)
    in_play = {*target, *known.files, *known.symlinks}
    wanted = resolve_paths(paths, in_play, target_snapshot.id or "")
    store = store_of(context, target_snapshot)
    with nullcontext() if dry_run else context.memory_lock(agent.id):
        # A dry run's snapshot has no id: it names no undo snapshot (one would be taken first).
        saved = snapshot(context, agent, "pre-rewind", dry_run=dry_run)
        latest = saved or records.latest(context.state, agent.id)
        undo = latest.id if latest else None
        report = RewindReport(target_snapshot, undo, saved is not None, dry_run)
        report.outcomes = _apply(store, agent.workspace, roots, target, wanted, dry_run=dry_run)
        if dry_run:
            return report
        changed = [o.path for o in report.outcomes if o.status in ("restored", "removed")]
        if changed and on_rewound is not None:
            marks = records.recorded_json(context.state, target_snapshot.id, "marks_json")
            on_rewound(context.state, agent.id, changed, marks)
        _record(context, report)
        if changed:  # after rewind.done: the bootstrap forecast starts again from this snapshot
            _snapshot_rewound(context, agent, report)
    return report


def _snapshot_rewound(context: JobContext, agent: Agent, report: RewindReport) -> None:
    """Snapshot the memory as the rewind left it (trigger `rewind`), so the next snapshot
    compares with what the operator chose and does not report the rewind as a rewrite."""
    try:
        taken = snapshot(context, agent, "rewind")
    except MemwardenError as error:
        report.problems.append(
            f"the rewound memory could not be snapshotted ({error}); the next snapshot may "
            "report the rewind as a destructive rewrite of a root file"
        )
        return
    report.rewound_id = taken.id if taken is not None else None


def _apply(
    store: GitStore,
    workspace: Path,
    roots: tuple[str, ...],
    target: Mapping[str, str],
    wanted: Sequence[str],
    *,
    dry_run: bool,
) -> list[Outcome]:
    """Rewind the files of `workspace` that the snapshot (`target`, covering memory/ and
    `roots`) and `wanted` cover; return one outcome per file, sorted by path."""
    scan = scan_workspace(workspace, roots)
    current, outcomes = {}, []
    for path in scan.files:
        if matches(path, wanted):
            try:
                current[path] = blob_sha(read_bytes(workspace / path))
            except (OSError, MemwardenError) as error:
                outcomes.append(Outcome(path, "failed", reason(error)))
    failed = {outcome.path for outcome in outcomes}
    # A root file that is a link is out of history, unless the snapshot has a file to put there.
    links = scan.symlinks + [name for name in scan.root_symlinks if name in target]
    steps = [s for s in plan_rewind(target, current, links, wanted) if s.path not in failed]
    restored = [step.sha for step in steps if step.action == RESTORE]
    blobs = {} if dry_run else store.blobs(restored)
    # Removals first: a file may give way to a folder of the same name, or the reverse.
    ordered = sorted(steps, key=lambda step: (step.action != REMOVE, step.path))
    outcomes += [_carry_out(step, workspace, blobs, dry_run) for step in ordered]
    return sorted(outcomes, key=lambda outcome: outcome.path)


def _carry_out(step: Step, workspace: Path, blobs: Mapping[str, bytes], dry_run: bool) -> Outcome:
    """Carry out one step; with `dry_run`, make only the checks of the path the real rewind
    makes before writing (a symlink, a folder leading out of its root) and say what it would
    do."""
    if step.action == REFUSE:
        return Outcome(step.path, "failed", step.reason)
    if step.action == UNCHANGED:
        return Outcome(step.path, UNCHANGED)
    path = workspace / step.path
    # A file of memory/ stays in memory/, a root file in the workspace's top folder.
    root = workspace / "memory" if step.path.startswith(MEMORY_PREFIX) else workspace
    try:
        if dry_run:
            check_inside(path, root)
        elif step.action == REMOVE:
            _remove(path, root)
        else:
            _restore(path, root, blobs[step.sha or ""], step.sha or "")
    except (OSError, MemwardenError) as error:
        return Outcome(step.path, "failed", reason(error))
    return Outcome(step.path, f"would {step.action}" if dry_run else DONE_WORDS[step.action])


def _restore(path: Path, root: Path, data: bytes, sha: str) -> None:
    atomic_write(path, data, root=root)
    if blob_sha(read_bytes(path)) != sha:
        raise MemwardenError("content check failed: the file written differs from the snapshot")


def _remove(path: Path, root: Path) -> None:
    real = check_inside(path, root)
    os.unlink(real)
    fsync_dir(real.parent)
    if os.path.lexists(real):
        raise MemwardenError("still present after removal")
    # The folders the removal left empty go too, up to the root.
    folder, top = real.parent, Path(os.path.realpath(root))
    while folder != top and top in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


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
        ts=context.now().timestamp(),
    )
