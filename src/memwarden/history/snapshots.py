"""Take snapshots of agents' workspaces, only when something changed, all in one git process.

For each agent (in id order, the order every run takes memory locks in): hold its memory lock,
scan memory/ and the root files, compare them with the stat manifest (unchanged: done, no file
read), read what changed and compare with the last snapshot. The agents whose files changed are
committed together (`GitStore.commit_batch`: one process whatever their number), then recorded
in one state transaction: the snapshots and their events, the manifests, what the jobs reading
transcripts had taken in (`records.read_marks`), and the destructive rewrites of root files.

A destructive rewrite is judged by `guard.py`'s rule, applied to the root files a snapshot
modified or removed, and worded with the file, what was dropped, the snapshot to go back to and
the one-file rewind that does it. Each is recorded as a `memory.rewrite` event, which the
`memory.rewrite` health check turns into a warning.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from memwarden.fs.files import read_bytes
from memwarden.history import records
from memwarden.history.git import BATCH_REFS, BatchImport, GitStore, SnapshotCommit, TreeFile
from memwarden.history.manifest import save_manifests
from memwarden.history.model import AUTOMATIC_TRIGGERS, HistoryError, Snapshot
from memwarden.history.plan import Plan, Previous, SnapshotRequest, as_error, plan_each
from memwarden.history.store import locked_store, shared_store
from memwarden.openclaw.agents import Agent
from memwarden.process.errors import MemwardenError
from memwarden.process.runtime import JobContext

if TYPE_CHECKING:
    from memwarden.history.guard import Rewrite

__all__ = ["AgentSnapshot", "SnapshotRequest", "snapshot", "snapshot_agents"]

REWRITE_EVENT = "memory.rewrite"


class RewriteFinding(NamedTuple):
    """A root file destructively rewritten between snapshot `previous_id` and `snapshot_id`."""

    agent_id: str
    path: str
    snapshot_id: str | None
    previous_id: str | None
    rewrite: Rewrite

    @property
    def command(self) -> str:
        """The one-file rewind that brings the file back as it was."""
        return f"memwarden history rewind {self.previous_id} --path {self.path}"

    def message(self) -> str:
        dropped = "; ".join(f'"{line}"' for line in self.rewrite.first_dropped())
        shown = f"; dropped: {dropped}" if dropped else ""
        return (
            f"agent {self.agent_id}: {self.path} {self.rewrite.summary()} (snapshot "
            f"{self.snapshot_id}){shown}; snapshot {self.previous_id} has it as it was: "
            f"{self.command}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.path,
            "snapshot": self.snapshot_id,
            "previous_snapshot": self.previous_id,
            "summary": self.rewrite.summary(),
            "command": self.command,
            "message": self.message(),
            **self.rewrite.to_json(),
        }


@dataclass
class AgentSnapshot:
    """What a request came to: the snapshot taken (None: nothing changed, or automatic
    snapshots are off), or the error that stopped it, and the destructive rewrites it found."""

    agent_id: str
    snapshot: Snapshot | None = None
    error: MemwardenError | None = None
    rewrites: list[RewriteFinding] = field(default_factory=list)

    @property
    def problem(self) -> str | None:
        """One line for the job's problems when the snapshot failed, else None."""
        if self.error is None:
            return None
        return f"snapshot of agent {self.agent_id}'s memory failed: {self.error.message}"


def snapshot(
    context: JobContext,
    agent: Agent,
    trigger: str,
    *,
    dry_run: bool = False,
) -> Snapshot | None:
    """Given an agent and why, snapshot its workspace (see `snapshot_agents`).

    Return the new snapshot, or None when nothing changed since the last one (or automatic
    snapshots are off). With `dry_run`, write nothing and return the snapshot that would have
    been taken, with `id` None. Raise UnsafePathError if memory/ leads out of the workspace,
    HistoryError if the workspace or a file cannot be read or git fails, LockHeld if another
    run holds the agent's memory lock.
    """
    (result,) = snapshot_agents(context, [SnapshotRequest(agent, trigger)], dry_run=dry_run)
    if result.error is not None:
        raise result.error
    return result.snapshot


def snapshot_agents(
    context: JobContext,
    requests: Sequence[SnapshotRequest],
    *,
    dry_run: bool = False,
    lock_wait: float | None = None,
) -> list[AgentSnapshot]:
    """Snapshot the workspace of every agent asked for (once each) whose files changed since its
    last snapshot, in one git process; return one result per agent, in the order asked.

    One agent's failure (its lock held past `lock_wait`, default `history.lock_wait_seconds`;
    its workspace unreadable) is its result's error; the others are snapshotted all the same.
    With `dry_run`, nothing is written and the snapshots that would be taken have `id` None.
    """
    enabled = context.config.history.enabled
    unique = {request.agent.id: request for request in reversed(requests)}
    results = {agent_id: AgentSnapshot(agent_id) for agent_id in unique}
    wanted = [
        unique[agent_id]
        for agent_id in sorted(unique)
        if enabled or unique[agent_id].trigger not in AUTOMATIC_TRIGGERS
    ]
    wait = context.config.history.lock_wait_seconds if lock_wait is None else lock_wait
    deadline = time.monotonic() + wait  # one wait for the whole run, not one per agent
    with ExitStack() as locks:
        locked = []
        for request in wanted:
            try:
                if not dry_run:
                    left = max(deadline - time.monotonic(), 0)
                    locks.enter_context(context.memory_lock(request.agent.id, left))
            except MemwardenError as error:
                results[request.agent.id].error = error
                continue
            locked.append(request)
        if dry_run:
            for request, plan, error in plan_each(context, locked):
                results[request.agent.id].error = error
                results[request.agent.id].snapshot = plan.taken if plan else None
        else:
            _take_all(context, locked, results)
    return [results[request.agent.id] for request in requests if request.agent.id in results]


def _take_all(
    context: JobContext, requests: Sequence[SnapshotRequest], results: dict[str, AgentSnapshot]
) -> None:
    """Plan each agent's snapshot and stream the changed ones to one git process as they come,
    then record them all with the manifests in one transaction."""
    plans: list[Plan] = []
    with ExitStack() as resources:
        batch: _Batch | None = None
        try:
            for request, plan, error in plan_each(context, requests):
                if error is not None:
                    results[request.agent.id].error = error
                elif plan is not None:
                    plans.append(plan)
                    if plan.taken is not None:
                        batch = batch or _Batch.start(context, resources, len(requests))
                        batch.add(plan, plan.taken)
            saved = batch.finish(context) if batch else {}
            findings = _rewrites(context, batch.store, batch.plans, saved) if batch else {}
            _record(context, plans, saved, findings)
        except (MemwardenError, OSError) as error:
            for plan in plans:
                if plan.taken is not None:
                    results[plan.agent_id].error = as_error(error)
            _record(context, [plan for plan in plans if plan.taken is None], {}, {})
            return
    for agent_id, taken in saved.items():
        results[agent_id].snapshot = taken
        results[agent_id].rewrites = findings.get(agent_id, [])


class _Batch:
    """The snapshots of a run on their way into the shared store, in one `git fast-import`."""

    def __init__(self, store: GitStore, importer: BatchImport, ids: list[str]) -> None:
        self.store = store
        self.importer = importer
        self.ids = ids
        self.plans: list[Plan] = []
        self.commits: list[SnapshotCommit] = []

    @classmethod
    def start(cls, context: JobContext, resources: ExitStack, count: int) -> _Batch:
        """Take the shared store's lock (shared; waiting up to `history.lock_wait_seconds`),
        make the store if needed and start git on a batch ref of its own; the lock is released
        and git stopped with `resources`. `count`: how many snapshots at most. Raise LockHeld
        if the lock stays held."""
        resources.enter_context(locked_store(context, exclusive=False))
        store = shared_store(context)
        store.init()
        importer = BatchImport(store, BATCH_REFS + secrets.token_hex(8))
        resources.callback(importer.close)
        return cls(store, importer, records.new_ids(context.state, count))

    def add(self, plan: Plan, taken: Snapshot) -> None:
        """Stream the snapshot `taken` of `plan` to git."""
        snapshot_id = self.ids[len(self.plans)]
        files = [
            TreeFile(path, sha, plan.contents.get(path))
            for path, sha in sorted(plan.current.items())
        ]
        commit = SnapshotCommit(files, _message(snapshot_id, taken), int(taken.created_at))
        self.plans.append(plan)
        self.commits.append(commit)
        self.importer.add(commit)

    def finish(self, context: JobContext) -> dict[str, Snapshot]:
        """End the stream; return the snapshots saved (id, commit) by agent id."""
        when = int(context.now().timestamp())
        message = f"memwarden batch: {len(self.commits)} snapshot(s)\n"
        try:
            shas = self.importer.finish(message, when)
        except HistoryError:
            if all(file.data is not None for commit in self.commits for file in commit.files):
                raise
            # A blob the manifest vouched for is gone (the store was tampered with): send
            # every byte again.
            commits = [
                commit._replace(files=_with_data(plan.request.agent.workspace, commit.files))
                for plan, commit in zip(self.plans, self.commits, strict=True)
            ]
            ref = BATCH_REFS + secrets.token_hex(8)
            shas = self.store.commit_batch(ref, commits, message, when)
        return {
            plan.agent_id: plan.taken._replace(id=snapshot_id, commit=sha)  # type: ignore[union-attr]
            for plan, snapshot_id, sha in zip(self.plans, self.ids, shas, strict=False)
        }


def _with_data(workspace: Path, files: Sequence[TreeFile]) -> list[TreeFile]:
    return [TreeFile(f.path, f.sha, f.data or read_bytes(workspace / f.path)) for f in files]


def _rewrites(
    context: JobContext, store: GitStore, plans: Sequence[Plan], saved: dict[str, Snapshot]
) -> dict[str, list[RewriteFinding]]:
    """Return the destructive rewrites of guarded root files in the new snapshots, by agent."""
    settings = context.config.history
    guarded = set(settings.root_files)
    wanted: list[tuple[Plan, Previous, list[str]]] = []
    for plan in plans:
        changes = saved[plan.agent_id].changes
        paths = sorted(path for path in [*changes.modified, *changes.removed] if path in guarded)
        # What a rewind wrote is what the operator chose, not a rewrite to warn about.
        if paths and plan.previous is not None and plan.request.trigger != "rewind":
            wanted.append((plan, plan.previous, paths))
    if not wanted:
        return {}
    # lazy: the rule is loaded only when a guarded root file changed (rarely)
    from memwarden.history.guard import assess, read_shape

    blobs = store.blobs(last.shas[path] for _, last, paths in wanted for path in paths)
    findings: dict[str, list[RewriteFinding]] = {}
    for plan, last, paths in wanted:
        found = findings[plan.agent_id] = []
        for path in paths:
            old = read_shape(blobs[last.shas[path]].decode("utf-8", "replace"))
            new = plan.contents.get(path)  # None: removed
            new_shape = read_shape(new.decode("utf-8", "replace")) if new is not None else None
            rewrite = assess(old, new_shape, settings.guard_drop_share, settings.guard_min_entries)
            if rewrite is not None:
                snapshot_id = saved[plan.agent_id].id
                found.append(
                    RewriteFinding(plan.agent_id, path, snapshot_id, last.snapshot_id, rewrite)
                )
    return findings


def _record(
    context: JobContext,
    plans: Sequence[Plan],
    saved: dict[str, Snapshot],
    findings: dict[str, list[RewriteFinding]],
) -> None:
    """Record the snapshots, their events, the rewrites and every plan's manifest, together."""
    if not plans:
        return
    marks = records.read_marks(context.state, saved) if saved else {}
    with context.state.transaction() as connection:
        records.insert_many(
            connection,
            [
                (saved[plan.agent_id], marks.get(plan.agent_id, {}), plan.bootstrap)
                for plan in plans
                if plan.agent_id in saved
            ],
            context.run_id,
        )
        for plan in plans:
            taken = saved.get(plan.agent_id)
            if taken is not None:
                # Under the job that took it; `history` for one asked for by hand or a rewind.
                job = taken.trigger if taken.trigger in AUTOMATIC_TRIGGERS else "history"
                event = partial(
                    context.state.record_event,
                    job=job,
                    run_id=context.run_id,
                    agent_id=taken.agent_id,
                    ts=taken.created_at,
                )
                event(
                    "snapshot.taken",
                    session_key=taken.session_key,
                    session_id=taken.session_id,
                    data={
                        "snapshot": taken.id,
                        "trigger": taken.trigger,
                        "files": taken.file_count,
                        "commit": taken.commit,
                        **taken.changes.to_json(),
                    },
                )
                for finding in findings.get(plan.agent_id, []):
                    event(REWRITE_EVENT, data=finding.to_json())
                plan.manifest.snapshot_id, plan.manifest.commit = taken.id, taken.commit
            elif plan.previous is not None:
                plan.manifest.snapshot_id = plan.previous.snapshot_id
                plan.manifest.commit = plan.previous.shared_commit
        save_manifests(connection, {plan.agent_id: plan.manifest for plan in plans})


def _message(snapshot_id: str, taken: Snapshot) -> str:
    lines = [
        f"memwarden snapshot {snapshot_id}: {taken.trigger}, agent {taken.agent_id}",
        "",
        f"time: {taken.time}",
        f"changes: {taken.changes.short()}",
    ]
    if taken.session_key:
        lines.append(f"session: {taken.session_key} {taken.session_id or ''}".rstrip())
    return "\n".join(lines) + "\n"
