"""The bundled INDEX.md template rendered as Python (indexing.index_file.index_text) writes
exactly what jinja2 writes from templates/index/INDEX.md.j2, for every shape of catalog."""

from __future__ import annotations

import random

import pytest

from memwarden.fs.templating import render
from memwarden.indexing.catalog import CategoryView, Plan, Row, Totals, format_markers
from memwarden.indexing.index_file import MARKER_PREFIX, TEMPLATE, index_text
from memwarden.indexing.markers import ABBREVIATIONS, MARKERS, MEANINGS
from memwarden.process.readable import count_text, size_text

WORDS = ["", "a", "Daily logs", "notes | pipes", "ünïcödé — 日本語", "{{ x }}", "two\nlines", " "]


def totals(rng: random.Random) -> Totals:
    first = rng.choice(["2026-11-01", "2026-11-20", ""])
    return Totals(
        files=rng.choice([0, 1, 2, 37]),
        size=rng.choice([0, 999, 1024, 5_000_000]),
        tokens=rng.choice([0, 12, 1500, 2_000_000]),
        markers=tuple(rng.choice([0, 0, 1, 12]) for _ in MARKERS),
        first=first,
        last=rng.choice([first, "2026-11-26"]),
    )


def view(rng: random.Random) -> CategoryView:
    rows = [Row(*(rng.choice(WORDS) for _ in range(6))) for _ in range(rng.choice([0, 0, 1, 3]))]
    return CategoryView(
        name=rng.choice(WORDS[1:]),
        description=rng.choice(WORDS),
        totals=totals(rng),
        listed=rows,
        summarised=rng.choice([None, totals(rng)]),
        collapsed=rng.choice([True, False]),
        dated=rng.choice([True, False]),
    )


def values(rng: random.Random) -> dict:
    pool = totals(rng)
    return {
        "marker": f'{MARKER_PREFIX} generated="2026-11-26 06:00 UTC" -->',
        "generated": "2026-11-26 06:00 UTC",
        "totals": pool,
        "marker_totals": list(zip(MARKERS, pool.markers, strict=True)),
        "meanings": list(MEANINGS.items()),
        "abbreviations": ABBREVIATIONS,
        "views": [view(rng) for _ in range(rng.choice([0, 1, 4]))],
        "plan": Plan(short_how_to=rng.choice([True, False])),
        "notes": [rng.choice(WORDS) for _ in range(rng.choice([0, 0, 1, 2]))],
        "cap": rng.choice([0, 999, 20_000, 1_234_567]),
        "size": size_text,
        "count": count_text,
        "markers": format_markers,
    }


@pytest.mark.parametrize("seed", range(20))
def test_bundled_index_writes_what_jinja2_writes(seed):
    rng = random.Random(seed)
    for _ in range(25):
        shown = values(rng)
        assert index_text(**shown) == render(TEMPLATE, **shown), shown
