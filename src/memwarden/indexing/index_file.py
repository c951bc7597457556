"""INDEX.md as a file: rendering it from the template, telling ours from a person's, writing it.

The first line is a comment that marks the file as memwarden's and carries its generation time.
A file without it was written by someone else and is never overwritten, except one written by
the reference script `generate-memory-index.sh` that memwarden replaces (its first line is
`# Memory Index`, its second starts `> **Generated**:`). Two renderings that differ only in
that time are the same index: the file is not rewritten for the time alone.

The bundled template (`templates/index/INDEX.md.j2`) is also written here as a Python function
that writes the same text (`index_text`), so building an index never imports jinja2 (about 30 ms)
unless an operator's own template is set (`index.template`). The .j2 file stays the reference,
the one an operator copies to write their own; a test renders both over many catalogs and
requires the same text, so an edit to one without the other fails.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

import memwarden
from memwarden.fs.files import atomic_write, ensure_dir, sha256_bytes
from memwarden.fs.templating import render
from memwarden.history.snapshots import snapshot
from memwarden.indexing.catalog import (
    Catalog,
    Category,
    CategoryView,
    Plan,
    Totals,
    categorize,
    fit,
    format_markers,
    parse_rules,
)
from memwarden.indexing.manifest import INDEX_PATH
from memwarden.indexing.markers import ABBREVIATIONS, MARKERS, MEANINGS
from memwarden.indexing.scan import PoolFile, collect_facts
from memwarden.process.errors import MemwardenError
from memwarden.process.readable import count_text, size_text, utc_minute

if TYPE_CHECKING:
    from memwarden.indexing.outcome import Outcome
    from memwarden.indexing.targets import Target
    from memwarden.process.runtime import JobContext

TEMPLATE = "index/INDEX.md.j2"
MARKER_PREFIX = "<!-- memwarden:index"
_MARKER = re.compile(r'^<!-- memwarden:index generated="(?P<generated>[^"]*)"')
REFERENCE_GENERATOR = "generate-memory-index.sh"
_REFERENCE_TITLE = "# Memory Index"
_REFERENCE_STAMP = "> **Generated**:"
# What the job reports about an INDEX.md, kept with it in the state database (`index_outputs`)
# so that an unchanged folder is not rendered again.
REPORTED = ("files", "size", "tokens", "markers", "chars", "fits", "condensed")
SHORT_HOW_TO = (
    "Each conversation's handoff (`ACTIVE_CONTEXT.md` for the main session, `sessions/…` for "
    "the others) is given only to that conversation and not listed here: when yours is in "
    "your context, read it first. Load other files with `memory_search` / `memory_get` when a "
    "task needs them. Markers: "
)
LONG_HOW_TO = (
    "- Each conversation has its own handoff, `ACTIVE_CONTEXT.md` for the main session and "
    "`sessions/<conversation>.md` for the others, and only that conversation's session gets it "
    "at its start, next to this index; no handoff is listed here. When yours is in your "
    "context, read it first: it says what this conversation was doing.\n"
    "- Everything else stays on disk. Find it with `memory_search`, then open what you need "
    "with `memory_get` (paths below are relative to `memory/`). Load a file only when the task "
    "needs it.\n"
    "- Prefer the newest daily logs and files whose markers match the question.\n"
    "- Markers tag observations worth keeping:\n"
)
TABLE_HEADER = (
    "| File | Title | Size | ~Tokens | Markers | Modified |\n|---|---|---:|---:|---|---|\n"
)


def inputs_digest(
    stats: Sequence[PoolFile], *, cap: int, rules: Sequence[Mapping[str, str]], template_path: str
) -> str:
    """Return a digest of everything an INDEX.md is made from, except the generation time.

    The files' stats stand for their facts; a custom template counts by its path, size and
    mtime; the built-in one by memwarden's version.
    """
    digest = hashlib.sha256()
    template = memwarden.__version__
    if template_path:
        status = Path(template_path).expanduser().stat()
        template = f"{template_path}:{status.st_size}:{status.st_mtime_ns}"
    header = {"cap": cap, "rules": list(rules), "template": template}
    digest.update(orjson.dumps(header, option=orjson.OPT_SORT_KEYS))
    for stat in stats:
        digest.update(f"\n{stat.path}\0{stat.size}\0{stat.mtime_ns}\0{stat.inode}".encode())
    return digest.hexdigest()


def is_ours(text: str) -> bool:
    """Return True when an INDEX.md text starts with memwarden's marker."""
    return _MARKER.match(text) is not None


def is_reference_index(text: str) -> bool:
    """Return True when an INDEX.md text is one the reference script generate-memory-index.sh
    writes: `# Memory Index`, then a line starting `> **Generated**:`."""
    lines = text.removeprefix("\ufeff").splitlines()
    return (
        len(lines) >= 2
        and lines[0].rstrip() == _REFERENCE_TITLE
        and lines[1].startswith(_REFERENCE_STAMP)
    )


def same_index(old: str, new: str) -> bool:
    """Given the current file and a new rendering, return True when only the time differs."""
    old_match, new_match = _MARKER.match(old), _MARKER.match(new)
    if old_match is None or new_match is None:
        return False
    return old.replace(old_match["generated"], new_match["generated"]) == new


def render_catalog(
    categories: Sequence[Category],
    totals: Totals,
    *,
    cap: int,
    generated: str,
    template_path: str = "",
) -> Catalog:
    """Given the categories and pool totals, return the INDEX.md that fits `cap` characters.

    The bundled template renders as Python (`index_text`); an operator's own with jinja2. Raise
    MemwardenError if the operator's template does not render.
    """
    marker = (
        f'{MARKER_PREFIX} generated="{generated}" -- written by `memwarden index`; '
        "edits are overwritten -->"
    )

    def values(views: list[CategoryView], plan: Plan, notes: list[str]) -> dict[str, Any]:
        return {
            "marker": marker,
            "generated": generated,
            "totals": totals,
            "marker_totals": list(zip(MARKERS, totals.markers, strict=True)),
            "meanings": list(MEANINGS.items()),
            "abbreviations": ABBREVIATIONS,
            "views": views,
            "plan": plan,
            "notes": notes,
            "cap": cap,
            "size": size_text,
            "count": count_text,
            "markers": format_markers,
        }

    if not template_path:
        return fit(categories, cap, lambda *shown: index_text(**values(*shown)))
    import jinja2  # only for an operator's template

    def render_views(views: list[CategoryView], plan: Plan, notes: list[str]) -> str:
        text = render(TEMPLATE, template_path, **values(views, plan, notes))
        return text if text.startswith(MARKER_PREFIX) else f"{marker}\n{text}"

    try:
        return fit(categories, cap, render_views)
    except jinja2.TemplateError as error:
        raise MemwardenError(
            f"{template_path}: the INDEX.md template does not render: {error}"
        ) from error


def write_index_file(
    context: JobContext,
    target: Target,
    stats: list[PoolFile],
    now: datetime,
    current: str | None,
    outcome: Outcome,
    dry_run: bool,
) -> None:
    """Write INDEX.md when it changed apart from its time, taking over one made by the
    reference script (kept in history first). Raise MemwardenError for another foreign one."""
    workspace = target.workspace
    index_path = workspace / INDEX_PATH
    foreign = current is not None and not is_ours(current)
    if foreign and not is_reference_index(current):
        raise MemwardenError(
            f"{index_path}: exists and was not written by memwarden; rename it (for example to "
            "memory/INDEX.notes.md) so memwarden can write its index there"
        )
    real = target.real
    settings = context.config.index
    inputs = inputs_digest(
        stats, cap=target.max_chars, rules=settings.categories, template_path=settings.template
    )
    if current is not None and _reuse_last(context, real, inputs, current, outcome):
        return
    text = _build(context, target, stats, now, outcome)
    if current is None or not same_index(current, text):
        outcome.status = "would_write" if dry_run else "written"
        if foreign:
            outcome.migrated = _keep_in_history(context, target, dry_run)
        if not dry_run:
            ensure_dir(workspace / "memory", root=workspace)
            atomic_write(index_path, text, root=workspace, real_root=Path(real))
            current = text
    if not dry_run and not outcome.unreadable and current is not None:
        reported = orjson.dumps({name: getattr(outcome, name) for name in REPORTED}).decode()
        context.state.connection.execute(
            "INSERT OR REPLACE INTO index_outputs VALUES (?, ?, ?, ?, ?)",
            (real, inputs, sha256_bytes(current.encode()), reported, time.time()),
        )


def _keep_in_history(context: JobContext, target: Target, dry_run: bool) -> str:
    """Snapshot the memory folder holding the reference script's INDEX.md (trigger
    `pre-migrate`, taken even when automatic snapshots are off); return what was kept.

    Raise MemwardenError when no agent uses the workspace, or if the snapshot
    fails: either way the file is left as it is.
    """
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


def _reuse_last(
    context: JobContext, real: str, inputs: str, current: str, outcome: Outcome
) -> bool:
    """Return True (and fill `outcome`) when INDEX.md is the one last made from these inputs."""
    row = context.state.connection.execute(
        "SELECT outcome_json FROM index_outputs "
        "WHERE workspace = ? AND inputs_sha256 = ? AND index_sha256 = ?",
        (real, inputs, sha256_bytes(current.encode())),
    ).fetchone()
    if row is None:
        return False
    try:
        reported = orjson.loads(row[0])
    except orjson.JSONDecodeError:
        return False
    for name in REPORTED:
        if isinstance(reported, dict) and name in reported:
            setattr(outcome, name, reported[name])
    return True


def _build(
    context: JobContext, target: Target, stats: list[PoolFile], now: datetime, outcome: Outcome
) -> str:
    """Read the facts, render the catalog; fill `outcome`; return the text."""
    facts, unreadable = collect_facts(target.workspace / "memory", stats)
    totals = Totals.of(facts)
    rules, descriptions = parse_rules(context.config.index.categories)
    catalog = render_catalog(
        categorize(facts, rules, descriptions),
        totals,
        cap=target.max_chars,
        generated=utc_minute(now),
        template_path=context.config.index.template,
    )
    outcome.files, outcome.size, outcome.tokens = totals.files, totals.size, totals.tokens
    outcome.markers = dict(zip(MARKERS, totals.markers, strict=True))
    outcome.chars, outcome.fits, outcome.condensed = catalog.chars, catalog.fits, catalog.notes
    outcome.unreadable = unreadable
    return catalog.text


# --- the bundled template, as Python --------------------------------------------------------


def index_text(
    *,
    marker: str,
    generated: str,
    totals: Totals,
    views: Sequence[CategoryView],
    plan: Plan,
    notes: Sequence[str],
    cap: int,
    **_helpers: Any,
) -> str:
    """Given the values index/INDEX.md.j2 is rendered with, return the text it gives (the
    template's helpers, the marker names and the formatting functions, are this module's)."""
    counted = " · ".join(
        f"[{name}] {total}" for name, total in zip(MARKERS, totals.markers, strict=True)
    )
    parts = [
        f"{marker}\n# Memory index\n\n",
        f"Generated {generated} by memwarden · {totals.files} files · {size_text(totals.size)} "
        f"· ~{count_text(totals.tokens)} tokens\n",
        f"Markers: {counted}\n\n",
    ]
    if notes:
        parts.append(
            f"> Condensed to fit the bootstrap cap of {cap:,} characters: {'; '.join(notes)}. "
            "Everything is still on disk: use `memory_search`.\n\n"
        )
    parts.append("## How to use this index\n")
    if plan.short_how_to:
        listed = "; ".join(f"[{name}] {meaning}" for name, meaning in MEANINGS.items())
        parts.append(f"{SHORT_HOW_TO}{listed}.\n")
    else:
        parts.append(LONG_HOW_TO)
        for name, meaning in MEANINGS.items():
            short = ABBREVIATIONS[name]
            below = f" ({short} below)" if short != name else ""
            parts.append(f"  - `[{name}]` {meaning}{below}\n")
    for view in views:
        parts.append(_view(view))
    return "".join(parts)


def _view(view: CategoryView) -> str:
    described = f" — {view.description}" if view.description else ""
    parts = [f"\n## {view.name}{described}\n\n"]
    if view.listed:
        parts.append(TABLE_HEADER)
        parts += [
            f"| {row.path} | {row.title} | {row.size} | {row.tokens} | {row.markers} | "
            f"{row.modified} |\n"
            for row in view.listed
        ]
    hidden = view.summarised
    if hidden:
        if view.listed:
            parts.append("\n")
        lead = f"All {hidden.files}" if view.collapsed else f"And {hidden.files} more"
        span = f" → {hidden.last}" if hidden.last != hidden.first else ""
        found = format_markers(hidden.markers)
        tagged = f"; markers {found}" if found else ""
        parts.append(
            f"{lead} file{'s' if hidden.files != 1 else ''}, {hidden.first}{span}, "
            f"{size_text(hidden.size)}, ~{count_text(hidden.tokens)} tokens{tagged}.\n"
        )
    return "".join(parts)
