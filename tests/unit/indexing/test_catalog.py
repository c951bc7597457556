"""Categories, the catalog's condensing under the bootstrap cap, and INDEX.md identity."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memwarden.indexing.catalog import (
    OTHER,
    Plan,
    Totals,
    build_views,
    categorize,
    category_of,
    fit,
    js_length,
    parse_rules,
)
from memwarden.indexing.index_file import is_ours, render_catalog, same_index
from memwarden.indexing.markers import MARKERS, ZERO
from memwarden.indexing.scan import PoolFile
from memwarden.settings.index import DEFAULT_CATEGORIES

RULES, DESCRIPTIONS = parse_rules(DEFAULT_CATEGORIES)
DAY_NS = 86_400 * 10**9
BASE_NS = int(datetime(2026, 11, 1, tzinfo=UTC).timestamp()) * 10**9


def facts(path: str, size: int = 1000, day: int = 0, markers=ZERO, title: str = "") -> PoolFile:
    mtime_ns = BASE_NS + day * DAY_NS
    return PoolFile(path, size, mtime_ns, 1, title=title or path, markers=tuple(markers))


def pool(daily: int = 0, research: int = 0, other: int = 0) -> list[PoolFile]:
    files = [facts("MEMORY.md", 900)]
    files += [facts(f"2026-10-{day + 1:02d}.md", 3000, day) for day in range(daily)]
    files += [facts(f"research/topic-{n:03d}.md", 2000, n) for n in range(research)]
    files += [facts(f"misc-{n:03d}.md", 500, n) for n in range(other)]
    return files


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("MEMORY.md", "Core state"),
        ("2026-11-22.md", "Daily logs"),
        ("2026-11-22-release-plan.md", "Daily logs"),
        ("daily/2026-11-22.md", "Daily logs"),
        ("plans/launch.md", "Plans and procedures"),
        ("Deploy-Runbook.md", "Plans and procedures"),
        ("research/llm-costs.md", "Research"),
        ("hosts-config.md", "Config"),
        ("people.md", OTHER),
    ],
)
def test_category_of_default_rules_first_match_wins(path, expected):
    assert category_of(path, RULES) == expected


def test_category_of_glob_with_slash_matches_the_whole_path():
    rules, _ = parse_rules([{"glob": "projects/*/notes.md", "name": "Project notes"}])

    assert category_of("projects/alpha/notes.md", rules) == "Project notes"
    assert category_of("notes.md", rules) == OTHER


def test_categorize_keeps_rule_order_drops_empty_and_puts_other_last():
    files = [facts("zzz.md"), facts("2026-01-01.md"), facts("MEMORY.md"), facts("a/plan.md")]

    categories = categorize(files, RULES, DESCRIPTIONS)

    assert [category.name for category in categories] == [
        "Core state",
        "Daily logs",
        "Plans and procedures",
        OTHER,
    ]
    assert categories[0].description.startswith("what the agent keeps")


def test_totals_sum_sizes_tokens_markers_and_date_range_from_names():
    files = [
        facts("2026-10-03.md", 400, markers=(1,) + (0,) * 7),
        facts("2026-10-01-x.md", 4, markers=(2,) + (0,) * 6 + (1,)),
    ]

    totals = Totals.of(files)

    assert (totals.files, totals.size, totals.tokens) == (2, 404, 101)
    assert totals.markers == (3, 0, 0, 0, 0, 0, 0, 1)
    assert (totals.first, totals.last) == ("2026-10-01", "2026-10-03")


def test_build_views_row_limit_keeps_newest_and_summarises_the_rest():
    categories = categorize(pool(research=5), RULES, DESCRIPTIONS)

    views = build_views(categories, Plan(collapse_dated=True, row_limit=2))

    research = next(view for view in views if view.name == "Research")
    assert [item.path for item in research.listed] == [
        "research/topic-003.md",
        "research/topic-004.md",
    ]
    assert research.summarised is not None and research.summarised.files == 3
    assert views[0].listed and views[0].summarised is None  # the first category stays whole


def render_stub(views, plan, notes) -> str:
    """A stand-in renderer: one line per listed file, one per summarised category."""
    lines = ["header", *notes]
    for view in views:
        lines += [f"{item.path} {'x' * 40}" for item in view.listed]
        if view.summarised:
            lines.append(f"{view.name}: {view.summarised.files} files")
    return "\n".join(lines)


def test_fit_full_form_when_it_fits():
    catalog = fit(categorize(pool(daily=3), RULES, DESCRIPTIONS), 10_000, render_stub)

    assert catalog.fits and catalog.plan == Plan() and catalog.notes == []


def test_fit_collapses_daily_logs_first():
    categories = categorize(pool(daily=60, other=3), RULES, DESCRIPTIONS)

    catalog = fit(categories, 1_000, render_stub)

    assert catalog.fits and catalog.plan == Plan(collapse_dated=True)
    assert catalog.notes == ["Daily logs: summarised in one line"]
    assert "misc-000.md" in catalog.text


def test_fit_then_limits_rows_to_the_largest_count_that_fits():
    categories = categorize(pool(daily=30, research=100), RULES, DESCRIPTIONS)

    catalog = fit(categories, 2_000, render_stub)

    assert catalog.fits and catalog.chars <= 2_000
    limit = catalog.plan.row_limit
    assert limit is not None and 0 < limit < 100
    one_more = Plan(collapse_dated=True, row_limit=limit + 1)
    views = build_views(categories, one_more)
    assert js_length(render_stub(views, one_more, one_more.notes(views))) > 2_000
    assert f"only the {limit} newest files listed" in catalog.notes[-1]


def test_fit_cap_too_small_returns_most_condensed_not_fitting():
    categories = categorize(pool(daily=10, research=10), RULES, DESCRIPTIONS)

    catalog = fit(categories, 10, render_stub)

    assert not catalog.fits
    assert catalog.plan == Plan(collapse_dated=True, row_limit=0, short_how_to=True, protect=False)
    assert catalog.notes[-1] == "Core state, Research: summarised in one line each"


def test_fit_without_core_files_condenses_every_category():
    files = [facts(f"2026-10-{day:02d}.md", 3000, day) for day in range(1, 31)]
    files += [facts(f"research/topic-{n:03d}.md", 2000, n) for n in range(50)]
    categories = categorize(files, RULES, DESCRIPTIONS)

    catalog = fit(categories, 1_500, render_stub)

    assert catalog.fits
    assert catalog.plan.collapse_dated and catalog.plan.protect
    assert not any(category.protected for category in categories)


def test_fit_row_limit_search_renders_only_a_few_times():
    categories = categorize(pool(daily=400, research=800, other=800), RULES, DESCRIPTIONS)
    calls = []

    def counting(views, plan, notes):
        calls.append(plan)
        return render_stub(views, plan, notes)

    catalog = fit(categories, 20_000, counting)

    assert catalog.fits and catalog.plan.row_limit
    assert len(calls) <= 10


def test_js_length_counts_utf16_units_and_ignores_trailing_whitespace():
    assert js_length("abc \n\n") == 3
    assert js_length("é") == 1
    assert js_length("🗂️x") == 4  # U+1F5C2 is two UTF-16 units, U+FE0F one


def render(files: list[PoolFile], cap: int = 20_000, generated: str = "2026-11-22 06:00 UTC"):
    categories = categorize(files, RULES, DESCRIPTIONS)
    return render_catalog(categories, Totals.of(files), cap=cap, generated=generated)


def test_render_catalog_header_has_totals_of_all_eight_markers():
    files = [*pool(daily=2), facts("notes.md", markers=(1, 2, 3, 4, 5, 6, 7, 8))]

    text = render(files).text

    assert text.startswith('<!-- memwarden:index generated="2026-11-22 06:00 UTC"')
    expected = " · ".join(f"[{name}] {n}" for name, n in zip(MARKERS, range(1, 9), strict=True))
    assert f"Markers: {expected}\n" in text
    assert "| notes.md | notes.md | 1000 B | 250 | DEC 1 · GOT 2 · SOL 3 · PAT 4 · TRA 5" in text


def test_render_catalog_same_input_same_text_and_pipes_escaped():
    files = [*pool(daily=3), facts("a.md", title="left | right")]

    first, second = render(files).text, render(list(reversed(files))).text

    assert first == second
    assert "left \\| right" in first


def test_render_catalog_condensed_says_so_in_the_file():
    catalog = render(pool(daily=300), cap=4_000)

    assert catalog.fits
    assert "> Condensed to fit the bootstrap cap of 4,000 characters: Daily logs" in catalog.text
    assert "All 300 files, 2026-10-01 → " in catalog.text


def test_same_index_ignores_only_the_generation_time():
    old = render(pool(daily=2), generated="2026-11-22 06:00 UTC").text
    new = render(pool(daily=2), generated="2026-11-23 09:30 UTC").text
    changed = render(pool(daily=3), generated="2026-11-23 09:30 UTC").text

    assert same_index(old, new)
    assert not same_index(old, changed)
    assert not same_index("# my own index\n", new)


def test_is_ours_only_for_memwarden_marker():
    assert is_ours(render(pool()).text)
    assert not is_ours("# Index\n<!-- memwarden:index -->")
