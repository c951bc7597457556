"""The bundled INDEX.md template (`templates/index/INDEX.md.j2`) as a Python function that
writes the same text, so building an index never imports jinja2 (about 30 ms) unless an
operator's own template is set (`index.template`).

The .j2 file stays the reference, the one an operator copies to write their own; a test
renders both over many catalogs and requires the same text, so an edit to one without the
other fails.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memwarden.indexing.catalog import (
    ABBREVIATIONS,
    CategoryView,
    Plan,
    Totals,
    format_count,
    format_markers,
    format_size,
)
from memwarden.indexing.markers import MARKERS, MEANINGS

SHORT_HOW_TO = (
    "Each conversation's handoff (`ACTIVE_CONTEXT.md` for the main session, `sessions/…` for "
    "the others) is given only to that conversation: when yours is in your context, read it "
    "first. Load other files with `memory_search` / `memory_get` when a task needs them. "
    "Markers: "
)
LONG_HOW_TO = (
    "- Each conversation has its own handoff, `ACTIVE_CONTEXT.md` for the main session and "
    "`sessions/<conversation>.md` for the others, and only that conversation's session gets it "
    "at its start, next to this index. When yours is in your context, read it first: it says "
    "what this conversation was doing.\n"
    "- Everything else stays on disk. Find it with `memory_search`, then open what you need "
    "with `memory_get` (paths below are relative to `memory/`). Load a file only when the task "
    "needs it.\n"
    "- Prefer the newest daily logs and files whose markers match the question.\n"
    "- Markers tag observations worth keeping:\n"
)
TABLE_HEADER = (
    "| File | Title | Size | ~Tokens | Markers | Modified |\n|---|---|---:|---:|---|---|\n"
)


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
        f"Generated {generated} by memwarden · {totals.files} files · {format_size(totals.size)} "
        f"· ~{format_count(totals.tokens)} tokens\n",
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
            f"{format_size(hidden.size)}, ~{format_count(hidden.tokens)} tokens{tagged}.\n"
        )
    return "".join(parts)
