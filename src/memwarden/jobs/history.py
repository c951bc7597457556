"""`memwarden history list|show|diff|snapshot|rewind|prune`: memory history of each agent."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from memwarden.fs.files import read_text_if_exists
from memwarden.history import records
from memwarden.history.diffing import diff
from memwarden.history.retention import prune
from memwarden.history.store import snapshot_listing
from memwarden.jobs.common import (
    add_agent_filter,
    add_dry_run,
    add_verb,
    positive_int,
    require_known_agents,
    select_agents,
)
from memwarden.process.errors import MemwardenError
from memwarden.process.runtime import JobContext, JobResult

if TYPE_CHECKING:
    from memwarden.history.records import Marks
    from memwarden.store.state import StateDB

NO_SNAPSHOTS = (
    "no snapshots yet (checkpoint, rotate, index and health take them; "
    "`memwarden history snapshot` takes one now)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    verbs = parser.add_subparsers(dest="verb", metavar="<verb>", required=True)
    listing = add_verb(verbs, "list", "list snapshots, newest first")
    add_agent_filter(listing)
    listing.add_argument(
        "--limit",
        type=positive_int,
        default=50,
        metavar="N",
        help="at most N snapshots (default 50)",
    )
    show = add_verb(verbs, "show", "show one snapshot: its details and files")
    show.add_argument("id", help="snapshot id (or a unique prefix of 4+ digits)")
    diff = add_verb(verbs, "diff", "show the diff, per file, from snapshot ID to ID2 (or now)")
    diff.add_argument("id", help="snapshot id to compare from")
    diff.add_argument("id2", nargs="?", help="snapshot id to compare to (default: current files)")
    _add_path_filter(diff)
    take = add_verb(
        verbs, "snapshot", "snapshot memory/ and the root files now (only when something changed)"
    )
    add_agent_filter(take)
    add_dry_run(take)
    rewind = add_verb(
        verbs,
        "rewind",
        "restore memory/ and the root files to a snapshot (the current state is saved first)",
    )
    rewind.add_argument("id", help="snapshot id to restore")
    _add_path_filter(rewind)
    add_dry_run(rewind)
    prune = add_verb(verbs, "prune", "apply retention now (maintain does it daily)")
    add_dry_run(prune)


def _add_path_filter(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--path",
        action="append",
        default=[],
        metavar="P",
        help="only this file or folder, relative to the workspace: MEMORY.md, memory/x.md "
        "(repeatable)",
    )


def read_only(options: argparse.Namespace) -> bool:
    """Return True for the verbs that only read (they create nothing in memwarden's storage)."""
    return options.verb in ("list", "show", "diff")


def run(context: JobContext, options: argparse.Namespace) -> JobResult:
    context.deployment  # noqa: B018 - a wrong --state-dir is exit 2 before any verb runs
    verbs = {
        "list": _list,
        "show": _show,
        "diff": _diff,
        "snapshot": _snapshot,
        "rewind": _rewind,
        "prune": _prune,
    }
    return verbs[options.verb](context, options)


def _list(context: JobContext, options: argparse.Namespace) -> JobResult:
    require_known_agents(
        options.agent,
        (agent.id for agent in context.deployment.agents),
        lambda: set(records.agent_ids(context.state)),
    )
    wanted = {agent_id.lower() for agent_id in options.agent or []}
    found = [
        snapshot
        for snapshot in records.snapshots(
            context.state, None if len(wanted) != 1 else next(iter(wanted))
        )
        if not wanted or snapshot.agent_id in wanted
    ][: options.limit]
    result = JobResult("history", data={"snapshots": [s.to_json() for s in found]})
    result.lines = [snapshot.line() for snapshot in found] or [NO_SNAPSHOTS]
    return result


def _show(context: JobContext, options: argparse.Namespace) -> JobResult:
    snapshot = records.find(context.state, options.id)
    files = snapshot_listing(context, snapshot)
    result = JobResult("history")
    result.data = {
        "snapshot": snapshot.to_json(),
        "file_list": [
            {"path": path, "blob": sha, "bytes": size} for path, (sha, size) in files.items()
        ],
    }
    changes = snapshot.changes
    if snapshot.legacy:
        covers = "memory/ (taken before history kept the root files)"
    else:
        covers = ", ".join(["memory/", *snapshot.roots])
    result.lines = [
        f"snapshot {snapshot.id}",
        f"  agent     {snapshot.agent_id}",
        f"  time      {snapshot.time}",
        f"  trigger   {snapshot.trigger}",
        f"  session   {snapshot.session_key or '-'} {snapshot.session_id or ''}".rstrip(),
        f"  commit    {snapshot.commit}",
        f"  covers    {covers}",
        f"  files     {snapshot.file_count} ({snapshot.total_bytes:,} bytes)",
        f"  changes   {changes.short()} since the snapshot before it",
    ]
    for word, paths in changes.to_json().items():
        result.lines += [f"    {word:<9} {path}" for path in paths]
    result.lines.append("  file list")
    result.lines += [f"    {size:>10,}  {path}" for path, (_, size) in files.items()]
    return result


def _diff(context: JobContext, options: argparse.Namespace) -> JobResult:
    report = diff(context, options.id, options.id2, options.path)
    result = JobResult("history", data=report.to_json())
    target = f"snapshot {report.to.id}" if report.to else "the current files"
    if not report.files:
        result.lines = [f"no differences between snapshot {report.source.id} and {target}"]
    for file in report.files:
        result.lines.append(f"diff {file.path} ({file.status})")
        result.lines += file.lines
    return result


def _snapshot(context: JobContext, options: argparse.Namespace) -> JobResult:
    # lazy: only `history snapshot` loads the snapshot machinery
    from memwarden.history.plan import SnapshotRequest
    from memwarden.history.snapshots import snapshot_agents

    agents = select_agents(context.deployment, options.agent)
    requests = [SnapshotRequest(agent, "manual") for agent in agents]
    result = JobResult("history", data={"agents": []})
    for taken in snapshot_agents(context, requests, dry_run=options.dry_run):
        error = taken.error.message if taken.error else None
        result.data["agents"].append(
            {
                "agent": taken.agent_id,
                "snapshot": taken.snapshot.to_json() if taken.snapshot else None,
                "error": error,
                "rewrites": [finding.to_json() for finding in taken.rewrites],
            }
        )
        if error:
            result.problems.append(f"agent {taken.agent_id}: snapshot failed: {error}")
            continue
        result.lines.append(_snapshot_line(taken.agent_id, taken.snapshot, options.dry_run))
        result.lines += [f"  destructive rewrite: {f.message()}" for f in taken.rewrites]
    result.exit_code = 1 if result.problems else 0
    return result


def _snapshot_line(agent_id: str, taken, dry_run: bool) -> str:
    if taken is None:
        return f"{agent_id}: memory unchanged since the last snapshot; nothing to do"
    detail = f"{taken.file_count} files, {taken.changes.short()}"
    if dry_run:
        return f"{agent_id}: would take a snapshot ({detail})"
    return f"{agent_id}: snapshot {taken.id} taken ({detail})"


def _rewind(context: JobContext, options: argparse.Namespace) -> JobResult:
    # lazy: only a rewind loads what a rewind does
    from memwarden.checkpoint.commit.positions import forget_rewound
    from memwarden.compactions.ledger import forget_kept
    from memwarden.history.rewind import rewind
    from memwarden.indexing.index_file import is_ours
    from memwarden.indexing.manifest import INDEX_PATH
    from memwarden.indexing.outcome import Outcome, describe
    from memwarden.indexing.refresh import index_agents

    indexed: list[dict[str, Any]] | None = None

    def forget(state: StateDB, agent_id: str, paths: Sequence[str], marks: Marks | None) -> None:
        """What the other jobs do once the rewind restored or removed files (under the agent's
        memory lock, before the rewound memory is snapshotted): they forget what those files
        held, and the bootstrap manifest (and INDEX.md, when `index.after_checkpoint` and it is
        memwarden's) describes the memory/ folder as the rewind left it."""
        nonlocal indexed
        forget_rewound(state, agent_id, paths, marks)  # the checkpoint logs its entries again
        forget_kept(state, agent_id, paths)  # the compaction watch writes its lost items again
        agent = context.deployment.agent(agent_id)
        if agent is None or not any(path.startswith("memory/") for path in paths):
            return
        rebuild = context.config.index.after_checkpoint
        if rebuild:
            # An INDEX.md a rewind brought back that is not memwarden's (generate-memory-index.sh's,
            # kept before memwarden took it over) stays as it is.
            try:
                text = read_text_if_exists(agent.workspace / INDEX_PATH)
                rebuild = text is None or is_ours(text)
            except (OSError, MemwardenError):
                rebuild = False  # left to the manifest's refresh, which says what is wrong
        indexed = index_agents(context, [agent], write_index=rebuild)

    report = rewind(
        context, options.id, paths=options.path, dry_run=options.dry_run, on_rewound=forget
    )
    result = JobResult("history", data=report.to_json())
    target = report.target
    result.lines.append(_undo_line(report, options.path))
    result.lines += [outcome.line() for outcome in report.outcomes]
    counts = ", ".join(f"{n} {status}" for status, n in sorted(report.counts().items()))
    verb = "would rewind" if report.dry_run else "rewound"
    result.lines.append(
        f"{verb} agent {target.agent_id} to snapshot {target.id} ({target.time}): "
        f"{counts or 'no files'}"
    )
    if indexed is not None:
        result.data["index"] = indexed
        result.lines += [describe(Outcome(**item)) for item in indexed]
    if report.rewound_id:
        result.lines.append(f"saved the rewound memory as snapshot {report.rewound_id}")
    result.problems = [f"rewind: {outcome.line().strip()}" for outcome in report.failed]
    result.problems += [f"rewind: {problem}" for problem in report.problems]
    result.problems += [
        f"rewind: index {item['workspace']}: {item.get('error') or 'failed'}"
        for item in indexed or []
        if item.get("status") == "failed"
    ]
    result.exit_code = 1 if result.problems else 0
    return result


def _undo_line(report, paths: Sequence[str]) -> str:
    """The line naming the snapshot that undoes the rewind, and the command that does: for the
    same paths only (the snapshot holds the whole memory, which may have moved on since)."""
    if report.dry_run:
        if report.saved_now:
            return "would save the current memory as a pre-rewind snapshot first"
        return f"the current memory is already saved as snapshot {report.undo_id}"
    saved = "saved the current memory as" if report.saved_now else "the current memory is"
    flags = [flag for path in paths for flag in ("--path", path)]
    undo = shlex.join(["memwarden", "history", "rewind", report.undo_id, *flags])
    return f"{saved} snapshot {report.undo_id}; undo with: {undo}"


def _prune(context: JobContext, options: argparse.Namespace) -> JobResult:
    result = prune(context, dry_run=options.dry_run)
    result.lines = result.lines or [NO_SNAPSHOTS]
    return result
