"""Retention: keep each agent's snapshots for N days and at most M of them; keep storage packed.

In the shared store, the batch commits that keep snapshots reachable are rewritten without the
pruned ones (`GitStore.keep`, one `git fast-import`, under the store's exclusive lock), then
`git gc` deletes what no batch keeps. An agent's own repository of older snapshots (memory/
alone) is pruned the same way by its refs, and removed with its folder once its last snapshot
is pruned.
"""

from __future__ import annotations

import secrets
import shutil
from collections.abc import Sequence
from typing import Any

from memwarden.history import records
from memwarden.history.git import BATCH_PARENTS, BATCH_REFS, SNAPSHOT_REFS, GitStore
from memwarden.history.model import Snapshot
from memwarden.history.store import (
    history_root,
    legacy_store,
    locked_store,
    shared_store,
)
from memwarden.process.errors import MemwardenError
from memwarden.process.runtime import JobContext, JobResult

SECONDS_PER_DAY = 86_400


def expired(
    snapshots: Sequence[Snapshot], now: float, retention_days: int, max_snapshots: int
) -> list[Snapshot]:
    """Given one agent's snapshots newest first, the time and the limits, return those to prune.

    A snapshot goes when it is older than `retention_days` or beyond the `max_snapshots`
    newest. The newest one always stays: it is what the next snapshot is compared with.
    """
    cutoff = now - retention_days * SECONDS_PER_DAY
    return [
        snapshot
        for position, snapshot in enumerate(snapshots)
        if position > 0 and (position >= max_snapshots or snapshot.created_at < cutoff)
    ]


def prune(context: JobContext, dry_run: bool = False) -> JobResult:
    """Prune every agent's snapshots past retention, then repack the stores.

    Return a JobResult whose `data` has the `pruned` and `kept` totals and `agents` {id:
    {pruned: [ids], kept, compacted, error}}, whose `lines` say what was done per agent and whose
    `problems` name each agent (or the shared store) that failed (the others are pruned all the
    same; exit code 1).
    """
    settings = context.config.history
    now = context.now().timestamp()
    summary: dict[str, Any] = {"dry_run": dry_run, "pruned": 0, "kept": 0, "agents": {}}
    result = JobResult("history", data=summary)
    doomed_shared: list[Snapshot] = []
    for agent_id in records.agent_ids(context.state):
        snapshots = records.snapshots(context.state, agent_id)
        doomed = expired(snapshots, now, settings.retention_days, settings.max_snapshots)
        entry = {"pruned": [s.id for s in doomed], "kept": len(snapshots) - len(doomed)}
        entry |= {"compacted": False, "error": None}
        try:
            if not dry_run:
                entry["compacted"] = _prune_legacy(context, agent_id, snapshots, doomed)
                _forget(context, agent_id, [s for s in doomed if not s.legacy])
        except (OSError, MemwardenError) as error:
            entry["error"] = str(error)  # a MemwardenError's text is its message
            result.problems.append(f"history of agent {agent_id}: {entry['error']}")
        else:
            doomed_shared += [s for s in doomed if not s.legacy]
        summary["agents"][agent_id] = entry
        summary["pruned"] += len(doomed) if entry["error"] is None else 0
        summary["kept"] += entry["kept"]
        result.lines.append(_line(agent_id, entry, dry_run))
    if not dry_run:
        try:
            if _prune_shared(context, doomed_shared):
                result.lines.append("history store: pruned and repacked")
        except (OSError, MemwardenError) as error:
            result.problems.append(f"history store: {error}")
    result.exit_code = 1 if result.problems else 0
    return result


def _forget(context: JobContext, agent_id: str, doomed: Sequence[Snapshot]) -> None:
    """Delete the records of pruned snapshots of the shared store (its objects go later)."""
    if not doomed:
        return
    with context.state.transaction() as connection:
        records.delete(connection, [s.id or "" for s in doomed])
        context.state.record_event(
            "snapshot.pruned",
            job="maintain",
            run_id=context.run_id,
            agent_id=agent_id,
            data={"snapshots": [s.id for s in doomed]},
        )


def _prune_shared(context: JobContext, doomed: Sequence[Snapshot]) -> bool:
    """Rewrite the batches without the pruned snapshots and repack; return True if done."""
    store = shared_store(context)
    if not store.exists():
        return False
    with locked_store(context, exclusive=True):
        store.remove_leftovers()
        if not doomed and not store.needs_compaction():
            return False
        if doomed:
            _rewrite_batches(context, store, {s.commit for s in doomed if s.commit})
        store.repack_by_group(_commits_by_agent(context))
        store.compact()
    return True


def _commits_by_agent(context: JobContext) -> list[list[str]]:
    """Return the commits of the shared store's snapshots, one list per agent."""
    groups: dict[str, list[str]] = {}
    for snapshot in records.snapshots(context.state):
        if not snapshot.legacy and snapshot.commit:
            groups.setdefault(snapshot.agent_id, []).append(snapshot.commit)
    return list(groups.values())


def _rewrite_batches(context: JobContext, store: GitStore, gone: set[str]) -> None:
    """Replace every batch ref by new ones keeping what they kept, less the `gone` commits.

    Everything the batches kept stays unless pruned now: a state database that lost its
    records never makes retention delete snapshots it does not know about.
    """
    old_refs = store.refs(BATCH_REFS)
    kept = [commit for commit in dict.fromkeys(store.parents(old_refs)) if commit not in gone]
    batches = {
        BATCH_REFS + secrets.token_hex(8): kept[start : start + BATCH_PARENTS]
        for start in range(0, len(kept), BATCH_PARENTS)
    }
    store.keep(batches, "memwarden retention: snapshots kept\n", int(context.now().timestamp()))
    store.delete_refs(ref for ref in old_refs if ref not in batches)


def _prune_legacy(
    context: JobContext, agent_id: str, snapshots: Sequence[Snapshot], doomed: Sequence[Snapshot]
) -> bool:
    """Prune the agent's own repository (snapshots of memory/ alone); remove it with its folder
    once none of its snapshots is left. Return True if it was repacked or removed."""
    legacy = [s for s in snapshots if s.legacy]
    if not legacy:
        return False
    doomed_legacy = [s for s in doomed if s.legacy]
    store = legacy_store(context, agent_id)
    with context.memory_lock(agent_id):
        if doomed_legacy and store.exists():
            store.delete_refs(SNAPSHOT_REFS + (s.id or "") for s in doomed_legacy)
        _forget(context, agent_id, doomed_legacy)
        if len(doomed_legacy) == len(legacy):
            shutil.rmtree(history_root(context) / agent_id, ignore_errors=True)
            return True
        if store.exists() and (doomed_legacy or store.needs_compaction()):
            store.compact()
            return True
    return False


def _line(agent_id: str, entry: dict[str, Any], dry_run: bool) -> str:
    if entry["error"]:
        return f"history {agent_id}: failed: {entry['error']}"
    count = len(entry["pruned"])
    verb = "would prune" if dry_run else "pruned"
    packed = ", storage repacked" if entry["compacted"] else ""
    return f"history {agent_id}: {verb} {count} snapshot(s), kept {entry['kept']}{packed}"
