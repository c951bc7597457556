"""Index workspaces: write memory/INDEX.md and the bootstrap hook's manifest for each target.

Used by `memwarden index` and, after they write ACTIVE_CONTEXT.md, by checkpoint and rotate.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memwarden.errors import MemwardenError, describe_error
from memwarden.files import (
    atomic_write,
    ensure_dir,
    read_text_if_exists,
    remove_stale_temp_files,
)
from memwarden.history.locking import memory_lock
from memwarden.indexing.catalog import Totals, js_length
from memwarden.indexing.categories import Rule, categorize, parse_rules
from memwarden.indexing.facts_cache import load_facts, load_output, store_facts, store_output
from memwarden.indexing.index_file import (
    generated_text,
    inputs_digest,
    is_ours,
    render_catalog,
    same_index,
    text_digest,
)
from memwarden.indexing.manifest import (
    ACTIVE_CONTEXT_PATH,
    INDEX_PATH,
    MANIFEST_NAME,
    InjectedFile,
    active_context_session,
    build_manifest,
    text_sha256,
)
from memwarden.indexing.markers import MARKERS
from memwarden.indexing.outcome import Outcome, budget_warnings
from memwarden.indexing.scan import FileStat, collect_facts, scan_pool
from memwarden.indexing.targets import Target, agent_targets
from memwarden.runtime import JobContext

if TYPE_CHECKING:
    from memwarden.openclaw.agents import Agent

JOB = "index"  # the job its events are recorded under, whoever asked for the index


class IndexWriteRefused(MemwardenError):
    """memory/INDEX.md exists and was not written by memwarden."""


def index_agents(
    context: JobContext, agents: Sequence[Agent], *, force: bool = False, dry_run: bool = False
) -> list[dict[str, Any]]:
    """Given agents, index their workspaces (each once); return one outcome dict a workspace.

    Never raises for one workspace's failure: it is reported in its outcome (`status` failed).
    """
    targets = agent_targets(context, context.deployment, agents)
    return [outcome.to_json() for outcome in index_targets(context, targets, force, dry_run)]


def index_targets(
    context: JobContext, targets: Sequence[Target], force: bool, dry_run: bool
) -> list[Outcome]:
    """Index every target; one failing workspace never stops the others."""
    rules, descriptions = parse_rules(context.config.index.categories)
    generated = generated_text(context.now())
    outcomes = []
    for target in targets:
        try:
            with _memory_locks(context, target.agents, dry_run):
                outcome = index_workspace(
                    context, target, rules, descriptions, generated, force=force, dry_run=dry_run
                )
        except Exception as error:  # noqa: BLE001 - one broken workspace never stops the others
            outcome = Outcome(
                str(target.workspace), target.agents, "failed", error=describe_error(error)
            )
        if not dry_run:
            _record(context, target, outcome)
        outcomes.append(outcome)
    return outcomes


@contextmanager
def _memory_locks(context: JobContext, agent_ids: Sequence[str], dry_run: bool) -> Iterator[None]:
    """Hold the memory lock of every agent sharing the workspace (not needed in a dry run)."""
    with ExitStack() as stack:
        if not dry_run:
            wait = context.config.history.lock_wait_seconds
            for agent_id in agent_ids:
                stack.enter_context(memory_lock(context.storage_dir / "locks", agent_id, wait))
        yield


def index_workspace(
    context: JobContext,
    target: Target,
    rules: list[Rule],
    descriptions: dict[str, str],
    generated: str,
    *,
    force: bool,
    dry_run: bool,
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
    if outcome.size < context.config.index.threshold_kb * 1024 and not force:
        outcome.status = "below_threshold"
        outcome.manifest = _remove_manifest(workspace, dry_run)
        return outcome

    index_path = workspace / INDEX_PATH
    current = read_text_if_exists(index_path)
    if current is not None and not is_ours(current):
        raise IndexWriteRefused(
            f"{index_path}: exists and was not written by memwarden; rename it (for example to "
            "memory/INDEX.notes.md) so memwarden can write its index there"
        )
    real = os.path.realpath(workspace)
    inputs = inputs_digest(
        stats,
        cap=target.max_chars,
        rules=context.config.index.categories,
        template_path=context.config.index.template,
    )
    if not _reuse_last(context, real, inputs, current, outcome):
        text = _build(context, target, stats, (rules, descriptions), generated, outcome, dry_run)
        if current is None or not same_index(current, text):
            outcome.status = "would_write" if dry_run else "written"
            if not dry_run:
                ensure_dir(memory_dir, root=workspace)
                atomic_write(index_path, text, root=workspace)
                current = text
        if not dry_run and not outcome.unreadable and current is not None:
            store_output(context.state, real, inputs, text_digest(current), _reported(outcome))

    unnamed = _read_active_context(context, target, outcome)
    outcome.warnings = unnamed + budget_warnings(
        target.workspace, target.max_chars, target.total_max_chars, outcome
    )
    outcome.manifest = _write_manifest(context, target, outcome, dry_run)
    return outcome


REPORTED = ("files", "size", "tokens", "markers", "chars", "fits", "condensed")


def _reported(outcome: Outcome) -> dict[str, Any]:
    return {name: getattr(outcome, name) for name in REPORTED}


def _reuse_last(
    context: JobContext, real: str, inputs: str, current: str | None, outcome: Outcome
) -> bool:
    """Return True (and fill `outcome`) when INDEX.md is the one last made from these inputs."""
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
    categories: tuple[list[Rule], dict[str, str]],
    generated: str,
    outcome: Outcome,
    dry_run: bool,
) -> str:
    """Read the facts (cached by stat), render the catalog; fill `outcome`; return the text."""
    real = os.path.realpath(target.workspace)
    rules, descriptions = categories
    update = collect_facts(target.workspace / "memory", stats, load_facts(context.state, real))
    if not dry_run:
        store_facts(context.state, real, update)
    totals = Totals.of(update.facts)
    catalog = render_catalog(
        categorize(update.facts, rules, descriptions),
        totals,
        cap=target.max_chars,
        generated=generated,
        template_path=context.config.index.template,
    )
    outcome.files, outcome.size, outcome.tokens = totals.files, totals.size, totals.tokens
    outcome.markers = dict(zip(MARKERS, totals.markers, strict=True))
    outcome.chars, outcome.fits, outcome.condensed = catalog.chars, catalog.fits, catalog.notes
    outcome.unreadable = update.unreadable
    return catalog.text


def _read_active_context(context: JobContext, target: Target, outcome: Outcome) -> list[str]:
    """Fill the outcome's ACTIVE_CONTEXT.md size and session; return a warning if it names none."""
    path = target.workspace / ACTIVE_CONTEXT_PATH
    text = read_text_if_exists(path)
    if text is None:
        return []
    outcome.active_context_chars = js_length(text)
    outcome.active_context_session = active_context_session(text, target.agents)
    outcome.active_context_sha256 = text_sha256(text)
    if outcome.active_context_session is not None or not context.config.index.inject_active_context:
        return []
    return [
        f'{path}: names no session (no "> - session: `KEY`" line at its top, as the '
        "checkpoint writes it): the bootstrap hook will not inject it"
    ]


def _write_manifest(context: JobContext, target: Target, outcome: Outcome, dry_run: bool) -> str:
    files = [InjectedFile(INDEX_PATH, outcome.chars)]
    if context.config.index.inject_active_context:
        files.append(
            InjectedFile(
                ACTIVE_CONTEXT_PATH,
                outcome.active_context_chars,
                private=True,
                session=outcome.active_context_session,
                sha256=outcome.active_context_sha256,
            )
        )
    payload = build_manifest(
        agents=target.agents,
        max_chars=target.max_chars,
        total_max_chars=target.total_max_chars,
        group_chats=context.config.index.inject_in_group_chats,
        files=files,
    )
    path = target.workspace / "memory" / MANIFEST_NAME
    current = read_text_if_exists(path)
    if current is not None and current.encode() == payload:
        return "unchanged"
    if not dry_run:
        atomic_write(path, payload, root=target.workspace)
    return "would_write" if dry_run else "written"


def _remove_manifest(workspace: Path, dry_run: bool) -> str | None:
    path = workspace / "memory" / MANIFEST_NAME
    if not path.is_file() or path.is_symlink():
        return None
    if not dry_run:
        path.unlink()
    return "would_remove" if dry_run else "removed"


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
            "error": outcome.error,
        },
    )
