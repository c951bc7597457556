"""Take snapshots of agents' workspaces, only when something changed, all in one git process.

For each agent (in id order, the order every run takes memory locks in): hold its memory lock,
scan memory/ and the root files, compare them with the stat manifest (unchanged: done, no file
read), read what changed and compare with the last snapshot. The agents whose files changed are
committed together (`GitStore.commit_batch`: one process whatever their number), then recorded
in one state transaction: the snapshots and their events, the manifests, what the jobs reading
transcripts had taken in (`records.read_marks`), and the destructive rewrites of root files.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path

from memwarden.errors import MemwardenError, UnsafePathError, UsageError
from memwarden.history import records
from memwarden.history.git import BATCH_REFS, GitStore, SnapshotCommit, TreeFile, blob_sha
from memwarden.history.locking import memory_lock
from memwarden.history.manifest import Manifest, load_manifests, save_manifest, trusted_shas
from memwarden.history.model import (
    AUTOMATIC_TRIGGERS,
    TRIGGERS,
    HistoryError,
    Snapshot,
    compare,
    in_scope,
)
from memwarden.history.rewrites import EVENT, RewriteFinding, find_rewrites, guarded_paths
from memwarden.history.scan import Scan, read_file, scan_workspace
from memwarden.history.store import locked_store, shared_store, snapshot_tree
from memwarden.openclaw.agents import Agent
from memwarden.runtime import JobContext

JOB_OF_TRIGGER = {trigger: trigger for trigger in AUTOMATIC_TRIGGERS}


@dataclass(frozen=True)
class SnapshotRequest:
    """An agent to snapshot, why (a trigger of model.TRIGGERS), and the session it was about."""

    agent: Agent
    trigger: str
    session_key: str | None = None
    session_id: str | None = None


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
    session_key: str | None = None,
    session_id: str | None = None,
    dry_run: bool = False,
) -> Snapshot | None:
    """Given an agent and why, snapshot its workspace (see `snapshot_agents`).

    Return the new snapshot, or None when nothing changed since the last one (or automatic
    snapshots are off). With `dry_run`, write nothing and return the snapshot that would have
    been taken, with `id` None. Raise UnsafePathError if memory/ leads out of the workspace,
    HistoryError if the workspace or a file cannot be read or git fails, LockHeld if another
    run holds the agent's memory lock.
    """
    request = SnapshotRequest(agent, trigger, session_key, session_id)
    (result,) = snapshot_agents(context, [request], dry_run=dry_run)
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
    Raise UsageError for an unknown trigger.
    """
    for request in requests:
        if request.trigger not in TRIGGERS:
            raise UsageError(
                f"snapshot trigger {request.trigger!r}: expected one of {', '.join(TRIGGERS)}"
            )
    enabled = context.config.history.enabled
    unique = {request.agent.id: request for request in reversed(requests)}
    results = {agent_id: AgentSnapshot(agent_id) for agent_id in unique}
    wanted = [
        unique[agent_id]
        for agent_id in sorted(unique)
        if enabled or unique[agent_id].trigger not in AUTOMATIC_TRIGGERS
    ]
    wait = context.config.history.lock_wait_seconds if lock_wait is None else lock_wait
    with ExitStack() as locks:
        locked = []
        for request in wanted:
            try:
                if not dry_run:
                    folder = context.storage_dir / "locks"
                    locks.enter_context(memory_lock(folder, request.agent.id, wait))
            except MemwardenError as error:
                results[request.agent.id].error = error
                continue
            locked.append(request)
        plans = _plan_all(context, locked, results)
        if dry_run:
            for plan in plans:
                results[plan.agent_id].snapshot = plan.taken
        else:
            _commit_all(context, plans, results)
    return [results[request.agent.id] for request in requests if request.agent.id in results]


@dataclass
class _Plan:
    """One agent's snapshot to take (or manifest to refresh, when `taken` is None)."""

    request: SnapshotRequest
    manifest: Manifest
    current: dict[str, str]
    contents: dict[str, bytes]
    previous: _Previous | None
    taken: Snapshot | None

    @property
    def agent_id(self) -> str:
        return self.request.agent.id

    @property
    def workspace(self) -> Path:
        return self.request.agent.workspace


@dataclass(frozen=True)
class _Previous:
    """The last snapshot's id and files, and its commit when it is in the shared store (its
    blobs can then be named instead of sent again)."""

    snapshot_id: str | None
    shas: dict[str, str]
    shared_commit: str | None


def _plan_all(
    context: JobContext, requests: Sequence[SnapshotRequest], results: dict[str, AgentSnapshot]
) -> list[_Plan]:
    roots = tuple(context.config.history.root_files)
    manifests = load_manifests(context.state, (request.agent.id for request in requests))
    plans = []
    for request in requests:
        try:
            plan = _plan(context, request, roots, manifests.get(request.agent.id))
        except (MemwardenError, OSError) as error:
            results[request.agent.id].error = _as_error(error)
            continue
        if plan is not None:
            plans.append(plan)
    return plans


def _plan(
    context: JobContext,
    request: SnapshotRequest,
    roots: tuple[str, ...],
    manifest: Manifest | None,
) -> _Plan | None:
    """Return what to do for one agent, or None when its files are those of the manifest."""
    workspace = request.agent.workspace
    hashed_at_ns = time.time_ns()
    scan = scan_workspace(workspace, roots)
    known = trusted_shas(scan.files, manifest)
    if manifest is not None and len(known) == len(scan.files) == len(manifest.files):
        return None
    previous = _previous_files(context, request.agent.id, manifest, roots)
    contents = _read_changed(workspace, scan, known)
    current = known | {path: blob_sha(data) for path, data in contents.items()}
    changes = compare(previous.shas if previous else {}, current)
    if changes and known and (previous is None or previous.shared_commit is None):
        # The manifest's blobs are not in the shared store (an upgraded history): send them all.
        contents = _read_changed(workspace, scan, {})
        current = {path: blob_sha(data) for path, data in contents.items()}
        changes = compare(previous.shas if previous else {}, current)
    if scan.looks_absent and previous is not None and previous.shas:
        raise HistoryError(
            f"{workspace}: has no memory/ folder and none of the root files its last snapshot "
            f"{previous.snapshot_id} kept (not mounted? a wrong path?); nothing is recorded "
            "rather than every file as deleted"
        )
    files = {path: (scan.files[path], sha) for path, sha in current.items()}
    new_manifest = Manifest(None, None, hashed_at_ns, files)
    if not changes:
        return None if previous is None else _Plan(request, new_manifest, {}, {}, previous, None)
    taken = Snapshot(
        id=None,
        agent_id=request.agent.id,
        created_at=context.now().timestamp(),
        trigger=request.trigger,
        commit=None,
        file_count=len(current),
        total_bytes=sum(scan.files[path].size for path in current),
        changes=changes,
        session_key=request.session_key,
        session_id=request.session_id,
        roots=roots,
    )
    return _Plan(request, new_manifest, current, contents, previous, taken)


def _previous_files(
    context: JobContext, agent_id: str, manifest: Manifest | None, roots: tuple[str, ...]
) -> _Previous | None:
    """Return the last snapshot's files that the current scope covers."""
    if manifest is not None:
        shas, snapshot_id, commit = manifest.shas(), manifest.snapshot_id, manifest.commit
    else:
        last = records.latest(context.state, agent_id)
        if last is None or last.commit is None:
            return None
        shas, snapshot_id = snapshot_tree(context, last), last.id
        commit = None if last.legacy else last.commit
    scoped = {path: sha for path, sha in shas.items() if in_scope(path, roots)}
    return _Previous(snapshot_id, scoped, commit)


def _read_changed(workspace: Path, scan: Scan, known: dict[str, str]) -> dict[str, bytes]:
    contents = {}
    for path in scan.files:
        if path in known:
            continue
        try:
            contents[path] = read_file(workspace / path)
        except FileNotFoundError:
            continue  # removed since the scan: it is not part of this snapshot
        except (OSError, UnsafePathError) as error:
            reason = getattr(error, "strerror", None) or str(error)
            message = f"{workspace / path}: cannot read it for a snapshot: {reason}"
            raise HistoryError(message) from error
    for path in set(scan.files) - set(known) - set(contents):
        del scan.files[path]
    return contents


def _commit_all(
    context: JobContext, plans: Sequence[_Plan], results: dict[str, AgentSnapshot]
) -> None:
    """Commit every plan's snapshot in one git process and record them with their manifests."""
    changed = [plan for plan in plans if plan.taken is not None]
    unchanged = [plan for plan in plans if plan.taken is None]
    saved: dict[str, Snapshot] = {}
    findings: dict[str, list[RewriteFinding]] = {}
    if changed:
        store = shared_store(context)
        try:
            with locked_store(context, exclusive=False):
                store.init()
                saved = _commit(context, store, changed)
                findings = _rewrites(context, store, changed, saved)
                _record(context, plans, saved, findings)
        except (MemwardenError, OSError) as error:
            for plan in changed:
                results[plan.agent_id].error = _as_error(error)
            saved, findings = {}, {}
        else:
            unchanged = []
    _record(context, unchanged, {}, {})
    for agent_id, snapshot_taken in saved.items():
        results[agent_id].snapshot = snapshot_taken
        results[agent_id].rewrites = findings.get(agent_id, [])


def _commit(context: JobContext, store: GitStore, plans: Sequence[_Plan]) -> dict[str, Snapshot]:
    """Commit the plans' snapshots; return them saved (id, commit) by agent id."""
    taken = [plan.taken for plan in plans if plan.taken is not None]
    ids = records.new_ids(context.state, len(taken))
    commits = [
        SnapshotCommit(_tree_files(plan), _message(snapshot_id, one), int(one.created_at))
        for snapshot_id, plan, one in zip(ids, plans, taken, strict=True)
    ]
    ref = BATCH_REFS + secrets.token_hex(8)
    when = int(context.now().timestamp())
    message = f"memwarden batch: {len(commits)} snapshot(s)\n"
    try:
        shas = store.commit_batch(ref, commits, message, when)
    except HistoryError:
        if all(file.data is not None for commit in commits for file in commit.files):
            raise
        # A blob the manifest vouched for is gone (the store was tampered with): send every byte.
        commits = [
            replace(commit, files=_with_data(plan.workspace, commit.files))
            for plan, commit in zip(plans, commits, strict=True)
        ]
        shas = store.commit_batch(ref, commits, message, when)
    return {
        plan.agent_id: replace(one, id=snapshot_id, commit=sha)
        for plan, one, snapshot_id, sha in zip(plans, taken, ids, shas, strict=True)
    }


def _tree_files(plan: _Plan) -> list[TreeFile]:
    return [
        TreeFile(path, sha, plan.contents.get(path)) for path, sha in sorted(plan.current.items())
    ]


def _with_data(workspace: Path, files: Sequence[TreeFile]) -> list[TreeFile]:
    return [TreeFile(f.path, f.sha, f.data or read_file(workspace / f.path)) for f in files]


def _rewrites(
    context: JobContext, store: GitStore, plans: Sequence[_Plan], saved: dict[str, Snapshot]
) -> dict[str, list[RewriteFinding]]:
    """Return the destructive rewrites of guarded root files in the new snapshots, by agent."""
    settings = context.config.history
    wanted: dict[str, list[str]] = {}
    for plan in plans:
        changes = saved[plan.agent_id].changes
        paths = guarded_paths(changes.modified, changes.removed, settings.root_files)
        if paths and plan.previous is not None:
            wanted[plan.agent_id] = paths
    if not wanted:
        return {}
    previous = {plan.agent_id: plan.previous for plan in plans if plan.previous is not None}
    blobs = store.blobs(previous[a].shas[p] for a, paths in wanted.items() for p in paths)
    by_agent = {plan.agent_id: plan for plan in plans}
    findings: dict[str, list[RewriteFinding]] = {}
    for agent_id, paths in wanted.items():
        plan, last = by_agent[agent_id], previous[agent_id]
        before = {path: blobs[last.shas[path]] for path in paths}
        after = {path: plan.contents.get(path) for path in paths}
        found = find_rewrites(before, after, settings.guard_drop_share, settings.guard_min_entries)
        findings[agent_id] = [
            RewriteFinding(agent_id, path, saved[agent_id].id, last.snapshot_id, rewrite)
            for path, rewrite in sorted(found.items())
        ]
    return findings


def _record(
    context: JobContext,
    plans: Sequence[_Plan],
    saved: dict[str, Snapshot],
    findings: dict[str, list[RewriteFinding]],
) -> None:
    """Record the snapshots, their events, the rewrites and every plan's manifest, together."""
    if not plans:
        return
    marks = records.read_marks(context.state, saved) if saved else {}
    with context.state.transaction() as connection:
        for plan in plans:
            taken = saved.get(plan.agent_id)
            if taken is not None:
                records.insert(connection, taken, context.run_id, marks.get(plan.agent_id, {}))
                _record_taken(context, taken)
                for finding in findings.get(plan.agent_id, []):
                    _record_rewrite(context, taken, finding)
                plan.manifest.snapshot_id, plan.manifest.commit = taken.id, taken.commit
            elif plan.previous is not None:
                plan.manifest.snapshot_id = plan.previous.snapshot_id
                plan.manifest.commit = plan.previous.shared_commit
            save_manifest(connection, plan.agent_id, plan.manifest)


def _record_taken(context: JobContext, saved: Snapshot) -> None:
    context.state.record_event(
        "snapshot.taken",
        job=JOB_OF_TRIGGER.get(saved.trigger, "history"),
        run_id=context.run_id,
        agent_id=saved.agent_id,
        session_key=saved.session_key,
        session_id=saved.session_id,
        data={
            "snapshot": saved.id,
            "trigger": saved.trigger,
            "files": saved.file_count,
            "commit": saved.commit,
            **saved.changes.to_json(),
        },
        ts=saved.created_at,
    )


def _record_rewrite(context: JobContext, saved: Snapshot, finding: RewriteFinding) -> None:
    context.state.record_event(
        EVENT,
        job=JOB_OF_TRIGGER.get(saved.trigger, "history"),
        run_id=context.run_id,
        agent_id=saved.agent_id,
        data=finding.to_json(),
        ts=saved.created_at,
    )


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


def _as_error(error: Exception) -> MemwardenError:
    if isinstance(error, MemwardenError):
        return error
    reason = getattr(error, "strerror", None) or str(error)
    return HistoryError(f"{getattr(error, 'filename', None) or 'history'}: {reason}")
