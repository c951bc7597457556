"""INDEX.md as a file: rendering it from the template, and telling ours from a person's.

The first line is a comment that marks the file as memwarden's and carries its generation time.
A file without it was written by someone else and is never overwritten, except one written by
the reference script `generate-memory-index.sh` that memwarden replaces (its first line is
`# Memory Index`, its second starts `> **Generated**:`). Two renderings that differ only in
that time are the same index: the file is not rewritten for the time alone.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

import memwarden
from memwarden.fs.templating import render
from memwarden.indexing.catalog import (
    ABBREVIATIONS,
    Catalog,
    CategoryView,
    Plan,
    Totals,
    fit,
    format_count,
    format_markers,
    format_size,
)
from memwarden.indexing.categories import Category
from memwarden.indexing.index_text import index_text
from memwarden.indexing.markers import MARKERS, MEANINGS
from memwarden.indexing.scan import FileStat
from memwarden.process.errors import MemwardenError

TEMPLATE = "index/INDEX.md.j2"
MARKER_PREFIX = "<!-- memwarden:index"
_MARKER = re.compile(r'^<!-- memwarden:index generated="(?P<generated>[^"]*)"')
REFERENCE_GENERATOR = "generate-memory-index.sh"
_REFERENCE_TITLE = "# Memory Index"
_REFERENCE_STAMP = "> **Generated**:"


def inputs_digest(
    stats: Sequence[FileStat], *, cap: int, rules: Sequence[Mapping[str, str]], template_path: str
) -> str:
    """Return a digest of everything an INDEX.md is made from, except the generation time.

    The files' stats stand for their facts (the facts cache trusts them the same way); a custom
    template counts by its path, size and mtime; the built-in one by memwarden's version.
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


def text_digest(text: str) -> str:
    """Return the sha256 of a text (UTF-8)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def generated_text(moment: datetime) -> str:
    """Given an aware time, return it as the index shows it: `2026-11-22 06:00 UTC`."""
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def marker_line(generated: str) -> str:
    return (
        f'{MARKER_PREFIX} generated="{generated}" -- written by `memwarden index`; '
        "edits are overwritten -->"
    )


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
    marker = marker_line(generated)

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
            "size": format_size,
            "count": format_count,
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
