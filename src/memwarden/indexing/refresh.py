"""Index workspaces: INDEX.md when the memory pool passes the threshold, and the bootstrap
manifest (each conversation's handoff, and INDEX.md when there is one) always.

Used by `memwarden index` and, after they write or move a handoff, by checkpoint, rotate and
maintain (with `write_index=False` when only the manifest is to be refreshed).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from memwarden.agent_memory.handoff_files import main_file_agents, read_handoffs
from memwarden.fs.files import (
    atomic_write,
    ensure_dir,
    read_text_if_exists,
    remove_stale_temp_files,
)
from memwarden.indexing.manifest import (
    INDEX_PATH,
    MANIFEST_NAME,
    InjectedFile,
    build_manifest,
    choose_handoffs,
)
from memwarden.indexing.outcome import JOB, LISTED, Outcome, budget_warnings
from memwarden.indexing.scan import scan_pool
from memwarden.indexing.targets import Target, agent_targets
from memwarden.openclaw.bootstrap import js_length
from memwarden.process import stopping
from memwarden.process.errors import MemwardenError, describe_error
from memwarden.process.runtime import JobContext

# INDEX.md (index_file: the catalog, its categories and facts) is imported only where it is
# built: a memory folder under the threshold, the usual case after a checkpoint, needs only the
# manifest.

if TYPE_CHECKING:
    from datetime import datetime

    from memwarden.openclaw.agents import Agent


class Run(NamedTuple):
    """What every workspace of one run shares: the time INDEX.md says it was generated, the
    agents whose main session has ACTIVE_CONTEXT.md, and how the run was asked for."""

    now: datetime
    keeping_main_file: frozenset[str]
    force: bool
    dry_run: bool
    write_index: bool


def index_agents(
    context: JobContext,
    agents: Sequence[Agent],
    *,
    dry_run: bool = False,
    write_index: bool = True,
) -> list[dict[str, Any]]:
    """Given agents, index their workspaces (each once); return one outcome dict a workspace.

    With `write_index` False, INDEX.md is left as it is and only the manifest is refreshed.
    Never raises for one workspace's failure: it is reported in its outcome (`status` failed).
    """
    targets = agent_targets(context, agents)
    outcomes = index_targets(
        context, targets, force=False, dry_run=dry_run, write_index=write_index
    )
    return [outcome.to_json() for outcome in outcomes]


def index_targets(
    context: JobContext,
    targets: Sequence[Target],
    force: bool,
    dry_run: bool,
    *,
    write_index: bool = True,
) -> list[Outcome]:
    """Index every target; one failing workspace never stops the others."""
    keeping_main_file = main_file_agents(context.deployment.agents)
    run = Run(context.now(), keeping_main_file, force, dry_run, write_index)
    outcomes = []
    for target in targets:
        stopping.check()
        try:
            with ExitStack() as locks:
                if not dry_run:  # the memory lock of every agent sharing the workspace
                    for agent_id in target.agents:
                        locks.enter_context(context.memory_lock(agent_id))
                outcome = index_workspace(context, target, run)
        except Exception as error:  # noqa: BLE001 - one broken workspace never stops the others
            stopping.check()
            outcome = Outcome(
                str(target.workspace), target.agents, "failed", error=describe_error(error)
            )
        if not dry_run:
            _record(context, target, outcome)
        outcomes.append(outcome)
    return outcomes


def index_workspace(context: JobContext, target: Target, run: Run) -> Outcome:
    """Index one workspace; return what was done. Raise MemwardenError or OSError on failure
    (a workspace gone though its agent has sessions is one)."""
    workspace = target.workspace
    outcome = Outcome(str(workspace), target.agents, "unchanged", cap=target.max_chars)
    if not workspace.is_dir():
        if target.lost is not None:
            raise MemwardenError(target.lost)
        outcome.status = "no_workspace"
        return outcome
    memory_dir = workspace / "memory"
    if not run.dry_run:  # what a run killed mid-write left in memory/
        remove_stale_temp_files(memory_dir)
    stats = scan_pool(memory_dir)
    outcome.files, outcome.size = len(stats), sum(stat.size for stat in stats)
    current = read_text_if_exists(workspace / INDEX_PATH)
    if outcome.size < context.config.index.threshold_kb * 1024 and not run.force:
        outcome.status = "below_threshold"
    elif not run.write_index:
        # lazy: only a pool over index.threshold_kb reads INDEX.md
        from memwarden.indexing.index_file import is_ours

        outcome.status = "left_as_is"
        outcome.chars = js_length(current) if current is not None and is_ours(current) else None
    else:
        # lazy: only a pool over index.threshold_kb builds INDEX.md
        from memwarden.indexing.index_file import write_index_file

        try:
            write_index_file(context, target, stats, run.now, current, outcome, run.dry_run)
        except (MemwardenError, OSError) as error:
            # INDEX.md failed (a foreign one, a broken template): the handoffs still go out.
            outcome.status, outcome.error = "failed", describe_error(error)
    index_chars = outcome.chars if outcome.status in LISTED else None
    outcome.manifest, handoffs, left_out = _refresh_manifest(context, target, index_chars, run)
    outcome.handoffs = [file._asdict() for file in handoffs]
    outcome.warnings = left_out + budget_warnings(
        target.workspace, target.max_chars, target.total_max_chars, outcome
    )
    return outcome


def _refresh_manifest(
    context: JobContext, target: Target, index_chars: int | None, run: Run
) -> tuple[str, list[InjectedFile], list[str]]:
    """Given a workspace and the length of its INDEX.md (None: INDEX.md is not injected), read
    its handoff files (ACTIVE_CONTEXT.md, memory/sessions/*.md), keep those that are the files
    of the sessions they name, and write the manifest when its content changed; with nothing to
    inject, remove it. Return what was done (written, would_write, unchanged, removed,
    would_remove or none), the handoffs it lists and why other handoff files are left out.
    Raise OSError if a handoff cannot be read."""
    memory = target.workspace / "memory"
    found = read_handoffs(memory, target.agents) if memory.is_dir() else []
    injected, left_out = choose_handoffs(found, run.keeping_main_file, target.workspace)
    handoffs = injected if context.config.index.inject_active_context else []
    files = list(handoffs)
    if index_chars is not None:
        files.append(InjectedFile(INDEX_PATH, chars=index_chars))
    path = memory / MANIFEST_NAME
    current = read_text_if_exists(path)
    if not files:
        if current is None:
            return "none", [], left_out
        if run.dry_run:
            return "would_remove", [], left_out
        path.unlink()
        return "removed", [], left_out
    payload = build_manifest(target, context.config.index.inject_in_group_chats, files)
    if current is not None and current.encode() == payload:
        return "unchanged", handoffs, left_out
    if run.dry_run:
        return "would_write", handoffs, left_out
    if not memory.is_dir():  # else the write's own check covers the folder on the way
        ensure_dir(memory, root=target.workspace)
    atomic_write(path, payload, root=target.workspace, real_root=Path(target.real))
    return "written", handoffs, left_out


def _record(context: JobContext, target: Target, outcome: Outcome) -> None:
    if outcome.status not in ("written", "failed"):
        return
    context.state.record_event(
        "index.written" if outcome.status == "written" else "index.failed",
        job=JOB,
        run_id=context.run_id,
        agent_id=target.agents[0] if target.agents else None,
        data={
            "workspace": outcome.workspace,
            "files": outcome.files,
            "chars": outcome.chars,
            "condensed": outcome.condensed,
            "migrated": outcome.migrated,
            "error": outcome.error,
        },
    )
