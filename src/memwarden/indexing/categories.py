"""Sorting memory files into the index's categories by ordered glob rules.

A rule is `{glob, name, description?}`; the first rule that matches a file wins. A glob without
`/` matches the file name or the name of any folder on its path; a glob with `/` matches the
whole path relative to memory/. Matching ignores case. Categories keep the order in which the
rules first name them; files that no rule matches go to `Other`, last.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import translate
from typing import NamedTuple

from memwarden.indexing.scan import FileFacts

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
    files: list[FileFacts] = field(default_factory=list)
    protected: bool = False


def parse_rules(tables: Iterable[Mapping[str, str]]) -> tuple[list[Rule], dict[str, str]]:
    """Given the `index.categories` tables, return the rules and each category's description."""
    rules: list[Rule] = []
    descriptions: dict[str, str] = {}
    for table in tables:
        name = table["name"].strip() or OTHER
        rules.append(Rule(table["glob"], name, re.compile(translate(table["glob"].lower()))))
        if table.get("description") and name not in descriptions:
            descriptions[name] = table["description"].strip()
        descriptions.setdefault(name, "")
    descriptions.setdefault(OTHER, OTHER_DESCRIPTION)
    return rules, descriptions


def categorize(
    files: Sequence[FileFacts], rules: Sequence[Rule], descriptions: Mapping[str, str]
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
