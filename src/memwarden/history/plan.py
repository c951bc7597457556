"""What a snapshot of one agent takes: the workspace scanned, compared with the stat manifest
(unchanged: nothing read), what changed read and hashed, and compared with the last snapshot.

Pure of writes: `snapshots.py` commits and records the plans of a whole run together.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from memwarden.fs.files import read_bytes
from memwarden.history import bootstrap_sizes, records
from memwarden.history.git import blob_sha
from memwarden.history.manifest import Manifest, load_manifests, trusted_shas
from memwarden.history.model import MEMORY_PREFIX, HistoryError, Snapshot, compare, reason
from memwarden.history.scan import Scan, scan_workspace
from memwarden.history.store import snapshot_tree
from memwarden.process.errors import MemwardenError, UnsafePathError
from memwarden.process.runtime import JobContext

if TYPE_CHECKING:
    from memwarden.openclaw.agents import Agent


class SnapshotRequest(NamedTuple):
    """An agent to snapshot, why (`checkpoint`, `rotate`, `index`, `health`, `manual`,
    `pre-rewind`, `rewind` or `pre-migrate`), and the session it was about."""

    agent: Agent
    trigger: str
    session_key: str | None = None
    session_id: str | None = None


@dataclass
class Plan:
    """One agent's snapshot to take (or manifest to refresh, when `taken` is None)."""

    request: SnapshotRequest
    manifest: Manifest
    current: dict[str, str]
    contents: dict[str, bytes]
    previous: Previous | None
    taken: Snapshot | None
    # The gateway bootstrap files' lengths in the snapshot taken (bootstrap_sizes.measure).
    bootstrap: dict[str, int] | None = None

    @property
    def agent_id(self) -> str:
        return self.request.agent.id


class Previous(NamedTuple):
    """The last snapshot's id and files, and its commit when it is in the shared store (its
    blobs can then be named instead of sent again)."""

    snapshot_id: str | None
    shas: dict[str, str]
    shared_commit: str | None


def plan_each(
    context: JobContext, requests: Sequence[SnapshotRequest]
) -> Iterator[tuple[SnapshotRequest, Plan | None, MemwardenError | None]]:
    """Yield, for each request in order, its plan (None when its files are those of the
    manifest) or the error that stopped it."""
    roots = tuple(context.config.history.root_files)
    manifests = load_manifests(context.state, (request.agent.id for request in requests))
    for request in requests:
        try:
            plan = _plan(context, request, roots, manifests.get(request.agent.id))
        except (MemwardenError, OSError) as error:
            yield request, None, as_error(error)
            continue
        yield request, plan, None


def _plan(
    context: JobContext,
    request: SnapshotRequest,
    roots: tuple[str, ...],
    manifest: Manifest | None,
) -> Plan | None:
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
        return None if previous is None else Plan(request, new_manifest, {}, {}, previous, None)
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
    last_id = previous.snapshot_id if previous else None
    carried = partial(records.recorded_json, context.state, last_id, "bootstrap_json")
    bootstrap = bootstrap_sizes.measure(workspace, current, contents, carried)
    return Plan(request, new_manifest, current, contents, previous, taken, bootstrap)


def _previous_files(
    context: JobContext, agent_id: str, manifest: Manifest | None, roots: tuple[str, ...]
) -> Previous | None:
    """Return the last snapshot's files that the current scope covers (memory/, `roots`)."""
    if manifest is not None:
        shas, snapshot_id, commit = manifest.shas(), manifest.snapshot_id, manifest.commit
    else:
        last = records.latest(context.state, agent_id)
        if last is None or last.commit is None:
            return None
        shas, snapshot_id = snapshot_tree(context, last), last.id
        commit = None if last.legacy else last.commit
    scoped = {
        path: sha for path, sha in shas.items() if path.startswith(MEMORY_PREFIX) or path in roots
    }
    return Previous(snapshot_id, scoped, commit)


def _read_changed(workspace: Path, scan: Scan, known: Mapping[str, str]) -> dict[str, bytes]:
    contents = {}
    folder = os.fspath(workspace)
    for path in scan.files:
        if path in known:
            continue
        try:
            contents[path] = read_bytes(os.path.join(folder, path))
        except FileNotFoundError:
            continue  # removed since the scan: it is not part of this snapshot
        except (OSError, UnsafePathError) as error:
            message = f"{workspace / path}: cannot read it for a snapshot: {reason(error)}"
            raise HistoryError(message) from error
    for path in set(scan.files) - set(known) - set(contents):
        del scan.files[path]
    return contents


def as_error(error: Exception) -> MemwardenError:
    """Return an error of one agent as a MemwardenError (an OSError gets its file named)."""
    if isinstance(error, MemwardenError):
        return error
    return HistoryError(f"{getattr(error, 'filename', None) or 'history'}: {reason(error)}")
