"""What INDEX.md shows, and how it is condensed until it fits the bootstrap cap.

Files are sorted into the index's categories by ordered glob rules. A rule is
`{glob, name, description?}`; the first rule that matches a file wins. A glob without `/`
matches the file name or the name of any folder on its path; a glob with `/` matches the whole
path relative to memory/. Matching ignores case. Categories keep the order in which the rules
first name them; files that no rule matches go to `Other`, last.

The gateway cuts an injected file longer than `bootstrapMaxChars` in the middle, counting
JavaScript string length (UTF-16 code units) after trimming trailing whitespace. The catalog is
rendered in the full form first; while it is too long it is condensed, step by step:

1. dated categories (daily logs) collapse to one line: a count, a date range and totals;
2. the other categories list only their newest files (as many as fit), the rest summarised;
3. every category but the first is one line;
4. the how-to section is shortened;
5. the first rule's category (core state by default), else kept whole, is one line too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from fnmatch import translate
from functools import cached_property, lru_cache
from typing import NamedTuple

from memwarden.indexing.markers import ABBREVIATIONS, MARKERS, add_counts
from memwarden.indexing.scan import PoolFile
from memwarden.openclaw.bootstrap import js_length
from memwarden.process.readable import count_text, size_text

_DATED = re.compile(r"^(\d{4}-\d{2}-\d{2})")
OTHER = "Other"
OTHER_DESCRIPTION = "everything else"


class Rule(NamedTuple):
    glob: str
    name: str
    pattern: re.Pattern[str]  # the glob's, lower-cased

    def matches(self, path: str, parts: Sequence[str]) -> bool:
        """Given a path relative to memory/ and its parts (lower-cased), return True on a match."""
        if "/" in self.glob:
            return self.pattern.match(path) is not None
        return any(self.pattern.match(part) for part in parts)


@dataclass
class Category:
    """One table of the index: its name, subtitle and files (sorted by path)."""

    name: str
    description: str
    files: list[PoolFile] = field(default_factory=list)
    protected: bool = False

    # Read once its files are all in (categorize), and kept for every plan `fit` tries.
    @cached_property
    def totals(self) -> Totals:
        return Totals.of(self.files)

    @cached_property
    def dated(self) -> bool:
        """Whether every file's name starts with a YYYY-MM-DD date (daily logs)."""
        names = (facts.path.rsplit("/", 1)[-1] for facts in self.files)
        return bool(self.files) and all(map(_DATED.match, names))


def parse_rules(tables: Iterable[Mapping[str, str]]) -> tuple[list[Rule], dict[str, str]]:
    """Given the `index.categories` tables, return the rules and each category's description."""
    rules: list[Rule] = []
    descriptions: dict[str, str] = {}
    for table in tables:
        name = table["name"].strip() or OTHER
        rules.append(Rule(table["glob"], name, re.compile(translate(table["glob"].lower()))))
        descriptions.setdefault(name, (table.get("description") or "").strip())
    descriptions.setdefault(OTHER, OTHER_DESCRIPTION)
    return rules, descriptions


def categorize(
    files: Sequence[PoolFile], rules: Sequence[Rule], descriptions: Mapping[str, str]
) -> list[Category]:
    """Given the pool's facts and the rules, return the non-empty categories in rule order.

    The first rule's category (core state by default) is `protected`: listed in full as long
    as the index can fit at all.
    """
    order = list(dict.fromkeys([*(rule.name for rule in rules), OTHER]))
    by_name = {name: Category(name, descriptions.get(name, "")) for name in order}
    by_name[order[0]].protected = True
    for facts in files:
        by_name[category_of(facts.path, rules)].files.append(facts)
    categories = [by_name[name] for name in order if by_name[name].files]
    for category in categories:
        category.files.sort(key=lambda facts: facts.path)
    return categories


def category_of(path: str, rules: Sequence[Rule]) -> str:
    """Given a path relative to memory/, return the name of the first rule that matches it."""
    lowered = path.lower()
    parts = lowered.split("/")
    for rule in rules:
        if rule.matches(lowered, parts):
            return rule.name
    return OTHER


class Totals(NamedTuple):
    """Counts and sums over a set of files."""

    files: int
    size: int
    tokens: int
    markers: tuple[int, ...]
    first: str
    last: str

    @classmethod
    def of(cls, files: Sequence[PoolFile]) -> Totals:
        dates = [_date_of(facts.path, facts.mtime_ns) for facts in files]
        return cls(
            files=len(files),
            size=sum(facts.size for facts in files),
            tokens=sum(facts.tokens for facts in files),
            markers=add_counts(facts.markers for facts in files),
            first=min(dates, default=""),
            last=max(dates, default=""),
        )


class Row(NamedTuple):
    """One file as its table row shows it: every cell already formatted and escaped."""

    path: str
    title: str
    size: str
    tokens: str
    markers: str
    modified: str


@lru_cache(maxsize=65_536)
def row_of(facts: PoolFile) -> Row:
    """Return the table row of a file (cached: a row is formatted once however often shown)."""
    return Row(
        cell(facts.path),
        cell(facts.title),
        size_text(facts.size),
        count_text(facts.tokens),
        format_markers(facts.markers),
        _utc_date(facts.mtime_ns),
    )


@dataclass
class CategoryView:
    """A category as shown: the files listed, and totals of those summarised instead."""

    name: str
    description: str
    totals: Totals
    listed: list[Row]
    summarised: Totals | None
    collapsed: bool
    dated: bool


class Plan(NamedTuple):
    """How much to show: collapse dated categories, at most `row_limit` rows, short how-to."""

    collapse_dated: bool = False
    row_limit: int | None = None
    short_how_to: bool = False
    protect: bool = True

    def notes(self, views: Sequence[CategoryView]) -> list[str]:
        """Return, for the reader, what this plan left out."""
        notes = []
        dated = [view.name for view in views if view.collapsed and view.dated]
        if dated:
            notes.append(f"{', '.join(dated)}: summarised in one line")
        limited = [view.name for view in views if view.summarised and not view.collapsed]
        if limited:
            notes.append(f"{', '.join(limited)}: only the {self.row_limit} newest files listed")
        collapsed = [view.name for view in views if view.collapsed and not view.dated]
        if collapsed:
            notes.append(f"{', '.join(collapsed)}: summarised in one line each")
        return notes


@dataclass
class Catalog:
    """The rendered index and how it was made to fit."""

    text: str
    chars: int
    fits: bool
    plan: Plan
    notes: list[str] = field(default_factory=list)


Render = Callable[[list[CategoryView], Plan, list[str]], str]


def build_views(categories: Sequence[Category], plan: Plan) -> list[CategoryView]:
    """Given the categories and a plan, return what each category shows under that plan."""
    views = []
    for category in categories:
        files, totals, dated = category.files, category.totals, category.dated
        protected = category.protected and plan.protect
        collapse = not protected and ((plan.collapse_dated and dated) or plan.row_limit == 0)
        summarised: Totals | None = None
        if collapse:
            shown: list[PoolFile] = []
            summarised = totals
        elif protected or plan.row_limit is None or len(files) <= plan.row_limit:
            shown = list(files)
        else:
            newest = sorted(files, key=lambda facts: (-facts.mtime_ns, facts.path))
            shown = sorted(newest[: plan.row_limit], key=lambda facts: facts.path)
            summarised = Totals.of(newest[plan.row_limit :])
        listed = [row_of(facts) for facts in shown]
        views.append(
            CategoryView(
                category.name, category.description, totals, listed, summarised, collapse, dated
            )
        )
    return views


def fit(categories: Sequence[Category], cap: int, render: Render) -> Catalog:
    """Given the categories, the cap in characters and a renderer, return the catalog.

    The full form is returned when it fits; else the least condensed form that fits; else the
    most condensed form, with `fits` False.
    """

    def attempt(plan: Plan) -> Catalog:
        views = build_views(categories, plan)
        notes = plan.notes(views)
        text = render(views, plan, notes)
        chars = js_length(text)
        return Catalog(text, chars, chars <= cap, plan, notes)

    full = attempt(Plan())
    if full.fits:
        return full
    dated = attempt(Plan(collapse_dated=True))
    if dated.fits:
        return dated
    best = _largest_row_limit(categories, cap, attempt, dated)
    if best is not None:
        return best
    short = attempt(Plan(collapse_dated=True, row_limit=0, short_how_to=True))
    return short if short.fits else attempt(short.plan._replace(protect=False))


def _largest_row_limit(
    categories: Sequence[Category],
    cap: int,
    attempt: Callable[[Plan], Catalog],
    unlimited: Catalog,
) -> Catalog | None:
    """Return the catalog with the largest row limit that fits; None if not even 0 fits.

    The limit is first estimated from the length of a row (the unlimited and the zero-row
    renderings), then the estimate is bracketed and refined, so only a few renderings are made.
    """
    zero = attempt(Plan(collapse_dated=True, row_limit=0))
    if not zero.fits:
        return None
    sizes = [
        len(category.files)
        for category in categories
        if not category.protected and not category.dated
    ]
    largest = max(sizes, default=0)
    if largest <= 1:
        return zero
    per_row = max((unlimited.chars - zero.chars) / max(sum(sizes), 1), 1.0)
    guess = _water_level(sizes, (cap - zero.chars) / per_row)
    fits: dict[int, Catalog] = {0: zero}

    def probe(limit: int) -> bool:
        catalog = attempt(Plan(collapse_dated=True, row_limit=limit))
        if catalog.fits:
            fits[limit] = catalog
        return catalog.fits

    low, high = 0, largest  # the unlimited rendering did not fit
    first = min(max(guess, 1), high - 1)
    step = 1
    if probe(first):
        low = first
        while low + step < high and probe(low + step):
            low, step = low + step, step * 2
        high = min(high, low + step)
    else:
        high = first
        while high - step > low and not probe(high - step):
            high, step = high - step, step * 2
        low = max(low, high - step)
    while high - low > 1:
        middle = (low + high) // 2
        if probe(middle):
            low = middle
        else:
            high = middle
    return fits[low]


def _water_level(sizes: Sequence[int], rows: float) -> int:
    """Return the largest L with sum(min(size, L)) <= rows (the per-table row limit)."""
    level = 0
    for candidate in range(1, max(sizes, default=0) + 1):
        if sum(min(size, candidate) for size in sizes) > rows:
            break
        level = candidate
    return level


@lru_cache(maxsize=65_536)
def _date_of(path: str, mtime_ns: int) -> str:
    named = _DATED.match(path.rsplit("/", 1)[-1])
    return named.group(1) if named else _utc_date(mtime_ns)


@lru_cache(maxsize=65_536)
def _utc_date(mtime_ns: int) -> str:
    return datetime.fromtimestamp(mtime_ns / 1e9, tz=UTC).strftime("%Y-%m-%d")


# --- formatting helpers for the template ------------------------------------------------------


def format_markers(counts: Sequence[int]) -> str:
    """Given marker counts, return the non-zero ones abbreviated: `DEC 2 · TODO 1`."""
    return " · ".join(
        f"{ABBREVIATIONS[name]} {count}"
        for name, count in zip(MARKERS, counts, strict=True)
        if count
    )


def cell(text: str) -> str:
    """Given text for a Markdown table cell, return it with pipes escaped."""
    return text.replace("|", "\\|")
