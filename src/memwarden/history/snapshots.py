"""Take a snapshot of an agent's memory/ folder, only when something changed."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path

from memwarden.errors import UnsafePathError, UsageError
from memwarden.history import records
from memwarden.history.git import HistoryError, TreeFile, blob_sha
from memwarden.history.manifest import Manifest, load_manifest, save_manifest, trusted_shas
from memwarden.history.model import AUTOMATIC_TRIGGERS, TRIGGERS, Snapshot, compare
from memwarden.history.scan import Scan, memory_folder, read_file, scan_memory
from memwarden.history.store import AgentHistory, agent_history, locked_memory, snapshot_ref
from memwarden.openclaw.agents import Agent
from memwarden.runtime import JobContext

JOB_OF_TRIGGER = {"checkpoint": "checkpoint", "rotate": "rotate"}


def snapshot(
    context: JobContext,
    agent: Agent,
    trigger: str,
    *,
    session_key: str | None = None,
    session_id: str | None = None,
    dry_run: bool = False,
) -> Snapshot | None:
    """Given an agent and why (checkpoint / rotate / manual / pre-rewind), snapshot its memory/.

    Return the new snapshot, or None when nothing changed since the last one (or automatic
    snapshots are off). With `dry_run`, write nothing and return the snapshot that would have
    been taken, with `id` None. Raise UnsafePathError if memory/ leads out of the workspace,
    HistoryError if a file cannot be read or git fails, LockHeld if another run holds the
    agent's memory lock.
    """
    if trigger not in TRIGGERS:
        raise UsageError(f"snapshot trigger {trigger!r}: expected one of {', '.join(TRIGGERS)}")
    if trigger in AUTOMATIC_TRIGGERS and not context.config.history.enabled:
        return None
    request = _Request(
        agent.id,
        trigger,
        session_key,
        session_id,
        memory_folder(agent.workspace),
        agent_history(context, agent.id),
    )
    if dry_run:
        return _take(context, request, dry_run=True)
    with locked_memory(context, agent.id):
        return _take(context, request, dry_run=False)


@dataclass(frozen=True)
class _Request:
    agent_id: str
    trigger: str
    session_key: str | None
    session_id: str | None
    memory: Path
    history: AgentHistory


@dataclass(frozen=True)
class _Previous:
    """The last snapshot's id, commit and files, from the manifest or from the store."""

    snapshot_id: str | None
    commit: str | None
    shas: dict[str, str]


def _take(context: JobContext, request: _Request, dry_run: bool) -> Snapshot | None:
    history, memory = request.history, request.memory
    hashed_at_ns = time.time_ns()
    scan = scan_memory(memory)
    manifest = load_manifest(history.manifest_path) if history.git.exists() else None
    known = trusted_shas(scan.files, manifest)
    if manifest is not None and len(known) == len(scan.files) == len(manifest.files):
        return None
    contents = _read_changed(memory, scan, known)
    current = known | {path: blob_sha(data) for path, data in contents.items()}
    previous = _previous_files(context, history, manifest)
    new_manifest = Manifest(
        None, None, hashed_at_ns, {path: (scan.files[path], sha) for path, sha in current.items()}
    )
    changes = compare(previous.shas if previous else {}, current)
    if not changes:
        if previous is not None and not dry_run:
            new_manifest.snapshot_id, new_manifest.commit = previous.snapshot_id, previous.commit
            save_manifest(history.manifest_path, new_manifest)
        return None
    taken = Snapshot(
        id=None,
        agent_id=request.agent_id,
        created_at=context.now().timestamp(),
        trigger=request.trigger,
        commit=None,
        file_count=len(current),
        total_bytes=sum(scan.files[path].size for path in current),
        changes=changes,
        session_key=request.session_key,
        session_id=request.session_id,
    )
    if dry_run:
        return taken
    return _commit(context, history, memory, taken, current, contents, new_manifest)


def _previous_files(
    context: JobContext, history: AgentHistory, manifest: Manifest | None
) -> _Previous | None:
    if manifest is not None:
        return _Previous(manifest.snapshot_id, manifest.commit, manifest.shas())
    if not history.git.exists():
        return None
    last = records.latest(context.state, history.agent_id)
    if last is None or last.commit is None:
        return None
    return _Previous(last.id, last.commit, history.git.tree(last.commit))


def _read_changed(memory: Path, scan: Scan, known: dict[str, str]) -> dict[str, bytes]:
    contents = {}
    for path in scan.files:
        if path in known:
            continue
        try:
            contents[path] = read_file(memory / path)
        except FileNotFoundError:
            continue  # removed since the scan: it is not part of this snapshot
        except (OSError, UnsafePathError) as error:
            reason = getattr(error, "strerror", None) or str(error)
            message = f"{memory / path}: cannot read it for a snapshot: {reason}"
            raise HistoryError(message) from error
    for path in set(scan.files) - set(known) - set(contents):
        del scan.files[path]
    return contents


def _commit(
    context: JobContext,
    history: AgentHistory,
    memory: Path,
    taken: Snapshot,
    current: dict[str, str],
    contents: dict[str, bytes],
    manifest: Manifest,
) -> Snapshot:
    history.git.init()
    snapshot_id = records.new_id(context.state)
    files = [TreeFile(path, sha, contents.get(path)) for path, sha in sorted(current.items())]
    message = _message(snapshot_id, taken)
    when = int(taken.created_at)
    try:
        commit = history.git.commit(snapshot_ref(snapshot_id), files, message, when)
    except HistoryError:
        if all(file.data is not None for file in files):
            raise
        # A blob the manifest vouched for is gone (the store was tampered with): send every byte.
        files = [TreeFile(f.path, f.sha, f.data or read_file(memory / f.path)) for f in files]
        commit = history.git.commit(snapshot_ref(snapshot_id), files, message, when)
    saved = replace(taken, id=snapshot_id, commit=commit)
    with context.state.transaction() as connection:
        records.insert(connection, saved, context.run_id)
        _record_taken(context, saved)
    manifest.snapshot_id, manifest.commit = snapshot_id, commit
    save_manifest(history.manifest_path, manifest)
    return saved


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
