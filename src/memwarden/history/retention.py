"""Retention: keep each agent's snapshots for N days and at most M of them; keep storage packed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memwarden.errors import MemwardenError
from memwarden.history import records
from memwarden.history.model import Snapshot
from memwarden.history.store import agent_history, locked_memory, snapshot_ref
from memwarden.runtime import JobContext, JobResult

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
    """Prune every agent's snapshots past retention, then repack its store.

    Return a JobResult whose `data` has the `pruned` and `kept` totals and `agents` {id:
    {pruned: [ids], kept, compacted, error}}, whose `lines` say what was done per agent and whose
    `problems` name each agent that failed (the others are pruned all the same; exit code 1).
    """
    settings = context.config.history
    now = context.now().timestamp()
    summary: dict[str, Any] = {"dry_run": dry_run, "pruned": 0, "kept": 0, "agents": {}}
    result = JobResult("history", data=summary)
    for agent_id in records.agent_ids(context.state):
        snapshots = records.snapshots(context.state, agent_id)
        doomed = expired(snapshots, now, settings.retention_days, settings.max_snapshots)
        entry = {"pruned": [s.id for s in doomed], "kept": len(snapshots) - len(doomed)}
        entry |= {"compacted": False, "error": None}
        try:
            if not dry_run:
                entry["compacted"] = _prune_agent(context, agent_id, doomed)
        except (OSError, MemwardenError) as error:
            entry["error"] = getattr(error, "message", None) or str(error)
            result.problems.append(f"history of agent {agent_id}: {entry['error']}")
        summary["agents"][agent_id] = entry
        summary["pruned"] += len(doomed) if entry["error"] is None else 0
        summary["kept"] += entry["kept"]
        result.lines.append(_line(agent_id, entry, dry_run))
    result.exit_code = 1 if result.problems else 0
    return result


def _prune_agent(context: JobContext, agent_id: str, doomed: Sequence[Snapshot]) -> bool:
    history = agent_history(context, agent_id)
    with locked_memory(context, agent_id):
        if doomed and history.git.exists():
            history.git.delete_refs(snapshot_ref(s.id or "") for s in doomed)
        if doomed:
            with context.state.transaction() as connection:
                records.delete(connection, [s.id or "" for s in doomed])
                context.state.record_event(
                    "snapshot.pruned",
                    job="maintain",
                    run_id=context.run_id,
                    agent_id=agent_id,
                    data={"snapshots": [s.id for s in doomed]},
                )
        if history.git.exists() and (doomed or history.git.needs_compaction()):
            history.git.compact()
            return True
    return False


def _line(agent_id: str, entry: dict[str, Any], dry_run: bool) -> str:
    if entry["error"]:
        return f"history {agent_id}: failed: {entry['error']}"
    count = len(entry["pruned"])
    verb = "would prune" if dry_run else "pruned"
    packed = ", storage repacked" if entry["compacted"] else ""
    return f"history {agent_id}: {verb} {count} snapshot(s), kept {entry['kept']}{packed}"
