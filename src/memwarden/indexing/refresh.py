"""Index workspaces: INDEX.md when the memory pool passes the threshold, and the bootstrap
manifest (each conversation's handoff, and INDEX.md when there is one) always.

Used by `memwarden index` and, after they write or move a handoff, by checkpoint, rotate and
maintain (with `write_index=False` when only the manifest is to be refreshed).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memwarden.agent_memory.handoff_files import main_file_agents
from memwarden.fs.files import (
    atomic_write,
    ensure_dir,
    read_text_if_exists,
    remove_stale_temp_files,
)
from memwarden.history.snapshots import snapshot
from memwarden.indexing.bootstrap import refresh_manifest
from memwarden.indexing.manifest import INDEX_PATH
from memwarden.indexing.markers import MARKERS
from memwarden.indexing.outcome import LISTED, Outcome, budget_warnings
from memwarden.indexing.scan import FileStat, collect_facts, scan_pool
from memwarden.indexing.targets import Target, agent_targets
from memwarden.openclaw.bootstrap import js_length
from memwarden.process import stopping
from memwarden.process.errors import MemwardenError, describe_error
from memwarden.process.runtime import JobContext

# The catalog (categories, facts, rendering) is imported only where INDEX.md is built: a memory
# folder under the threshold, the usual case after a checkpoint, needs only the manifest.

if TYPE_CHECKING:
    from datetime import datetime

    from memwarden.openclaw.agents import Agent

JOB = "index"  # the job its events are recorded under, whoever asked for the index


@dataclass(frozen=True)
class RunShared:
    """What every workspace of one run shares: the time INDEX.md says it was generated, and the
    agents whose main session has ACTIVE_CONTEXT.md."""

    now: datetime
    keeping_main_file: frozenset[str]


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
    targets = agent_targets(context, context.deployment, agents)
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
    shared = RunShared(context.now(), main_file_agents(context.deployment.agents))
    return [
        _index_target(context, target, shared, force, dry_run, write_index) for target in targets
    ]


def _index_target(
    context: JobContext,
    target: Target,
    shared: RunShared,
    force: bool,
    dry_run: bool,
    write_index: bool,
) -> Outcome:
    stopping.check()
    try:
        with _memory_locks(context, target.agents, dry_run):
            outcome = index_workspace(
                context, target, shared, force=force, dry_run=dry_run, write_index=write_index
            )
    except Exception as error:  # noqa: BLE001 - one broken workspace never stops the others
        stopping.check()
        outcome = Outcome(
            str(target.workspace), target.agents, "failed", error=describe_error(error)
        )
    if not dry_run:
        _record(context, target, outcome)
    return outcome


@contextmanager
def _memory_locks(context: JobContext, agent_ids: Sequence[str], dry_run: bool) -> Iterator[None]:
    """Hold the memory lock of every agent sharing the workspace (not needed in a dry run)."""
    with ExitStack() as stack:
        if not dry_run:
            for agent_id in agent_ids:
                stack.enter_context(context.memory_lock(agent_id))
        yield


def index_workspace(
    context: JobContext,
    target: Target,
    shared: RunShared,
    *,
    force: bool,
    dry_run: bool,
    write_index: bool = True,
) -> Outcome:
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
    if not dry_run:  # what a run killed mid-write left in memory/
        remove_stale_temp_files(memory_dir)
    stats = scan_pool(memory_dir)
    outcome.files, outcome.size = len(stats), sum(stat.size for stat in stats)
    current = read_text_if_exists(workspace / INDEX_PATH)
    if outcome.size < context.config.index.threshold_kb * 1024 and not force:
        outcome.status = "below_threshold"
    elif not write_index:
        # lazy: only a pool over index.threshold_kb reads INDEX.md
        from memwarden.indexing.index_file import is_ours

        outcome.status = "left_as_is"
        outcome.chars = js_length(current) if current is not None and is_ours(current) else None
    else:
        try:
            _write_index(context, target, stats, shared, current, outcome, dry_run)
        except (MemwardenError, OSError) as error:
            # INDEX.md failed (a foreign one, a broken template): the handoffs still go out.
            outcome.status, outcome.error = "failed", describe_error(error)
    index_chars = outcome.chars if outcome.status in LISTED else None
    manifest = refresh_manifest(
        context,
        target,
        index_chars,
        shared.keeping_main_file,
        dry_run=dry_run,
    )
    outcome.manifest = manifest.status
    outcome.handoffs = [
        {"path": file.path, "session": file.session, "chars": file.chars}
        for file in manifest.handoffs
    ]
    outcome.warnings = manifest.warnings + budget_warnings(
        target.workspace, target.max_chars, target.total_max_chars, outcome
    )
    return outcome


def _write_index(
    context: JobContext,
    target: Target,
    stats: list[FileStat],
    shared: RunShared,
    current: str | None,
    outcome: Outcome,
    dry_run: bool,
) -> None:
    """Write INDEX.md when it changed apart from its time, taking over one made by the
    reference script (kept in history first). Raise MemwardenError for another foreign one."""
    # lazy: only a pool over index.threshold_kb builds INDEX.md
    from memwarden.indexing.facts_cache import store_output
    from memwarden.indexing.index_file import (
        inputs_digest,
        is_ours,
        is_reference_index,
        same_index,
        text_digest,
    )

    workspace = target.workspace
    index_path = workspace / INDEX_PATH
    foreign = current is not None and not is_ours(current)
    if foreign and not is_reference_index(current):
        raise MemwardenError(
            f"{index_path}: exists and was not written by memwarden; rename it (for example to "
            "memory/INDEX.notes.md) so memwarden can write its index there"
        )
    real = target.real
    inputs = inputs_digest(
        stats,
        cap=target.max_chars,
        rules=context.config.index.categories,
        template_path=context.config.index.template,
    )
    if _reuse_last(context, real, inputs, current, outcome):
        return
    text = _build(context, target, stats, shared, outcome)
    if current is None or not same_index(current, text):
        outcome.status = "would_write" if dry_run else "written"
        if foreign:
            outcome.migrated = _keep_in_history(context, target, dry_run)
        if not dry_run:
            ensure_dir(workspace / "memory", root=workspace)
            atomic_write(index_path, text, root=workspace, real_root=Path(real))
            current = text
    if not dry_run and not outcome.unreadable and current is not None:
        reported = {name: getattr(outcome, name) for name in REPORTED}
        store_output(context.state, real, inputs, text_digest(current), reported)


def _keep_in_history(context: JobContext, target: Target, dry_run: bool) -> str:
    """Snapshot the memory folder holding the reference script's INDEX.md (trigger
    `pre-migrate`, taken even when automatic snapshots are off); return what was kept.

    Raise MemwardenError when no agent uses the workspace, or if the snapshot
    fails: either way the file is left as it is.
    """
    # lazy: only a pool over index.threshold_kb builds INDEX.md
    from memwarden.indexing.index_file import REFERENCE_GENERATOR

    index_path = target.workspace / INDEX_PATH
    agent = context.deployment.agent(target.agents[0]) if target.agents else None
    if agent is None:
        raise MemwardenError(
            f"{index_path}: written by {REFERENCE_GENERATOR}, but no agent uses this workspace, "
            "so memwarden cannot keep it in an agent's memory history before replacing it; "
            "rename it (for example to memory/INDEX.notes.md)"
        )
    if dry_run:
        return f"would keep it in agent {agent.id}'s memory history first"

    taken = snapshot(context, agent, "pre-migrate")
    if taken is None:
        return f"already in agent {agent.id}'s latest memory-history snapshot"
    return f"kept in agent {agent.id}'s memory history: snapshot {taken.id}"


REPORTED = ("files", "size", "tokens", "markers", "chars", "fits", "condensed")


def _reuse_last(
    context: JobContext, real: str, inputs: str, current: str | None, outcome: Outcome
) -> bool:
    """Return True (and fill `outcome`) when INDEX.md is the one last made from these inputs."""
    # lazy: only a pool over index.threshold_kb builds INDEX.md
    from memwarden.indexing.facts_cache import load_output
    from memwarden.indexing.index_file import text_digest

    if current is None:
        return False
    last = load_output(context.state, real)
    if last is None or last[0] != inputs or last[1] != text_digest(current):
        return False
    for name in REPORTED:
        if name in last[2]:
            setattr(outcome, name, last[2][name])
    return True


def _build(
    context: JobContext,
    target: Target,
    stats: list[FileStat],
    shared: RunShared,
    outcome: Outcome,
) -> str:
    """Read the facts, render the catalog; fill `outcome`; return the text."""
    # lazy: only a pool over index.threshold_kb builds INDEX.md
    from memwarden.indexing.catalog import Totals
    from memwarden.indexing.categories import categorize, parse_rules
    from memwarden.indexing.index_file import generated_text, render_catalog

    update = collect_facts(target.workspace / "memory", stats)
    totals = Totals.of(update.facts)
    rules, descriptions = parse_rules(context.config.index.categories)
    catalog = render_catalog(
        categorize(update.facts, rules, descriptions),
        totals,
        cap=target.max_chars,
        generated=generated_text(shared.now),
        template_path=context.config.index.template,
    )
    outcome.files, outcome.size, outcome.tokens = totals.files, totals.size, totals.tokens
    outcome.markers = dict(zip(MARKERS, totals.markers, strict=True))
    outcome.chars, outcome.fits, outcome.condensed = catalog.chars, catalog.fits, catalog.notes
    outcome.unreadable = update.unreadable
    return catalog.text


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
