"""The destructive-rewrite rule for the root memory files: pure, no I/O.

A root file (MEMORY.md, USER.md, …) is read as Markdown:

- a **section** is an ATX heading line (`#` to `######`, then a space);
- an **entry** is a list item (`-`, `*`, `+`, `1.` or `1)` then a space, at any indent) with the
  lines that continue it, a table row (a line starting with `|`, not the `|---|` rule under the
  header), a fenced code block as a whole, or a paragraph (other consecutive non-blank lines);
- a **Candidate line** is a line whose text, after a list marker, starts with `Candidate:` (or
  `**Candidate:**`): the raw form consolidation leaves when it promotes candidates without
  rewriting them. Candidate lines are counted apart, not as entries.

Entries and sections are compared by their text, lower-cased with whitespace collapsed (list
markers and checkboxes left out): an old one whose text appears nowhere in the new version is
**dropped**. A rewrite is destructive when the file dropped more than `drop_share` of its entries
(judged from `min_entries` entries) or of its sections (from MIN_SECTIONS), was deleted, or gained
Candidate lines.

Where the rule errs: an entry reworded, or merged with others into one, counts as dropped (a
careful consolidation of many entries can warn); text moved within an entry, or lost from inside a
long paragraph that keeps its first words, is not seen as a drop; entries moved to another file
count as dropped from this one.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

MIN_SECTIONS = 3
SHOWN_LINES = 3
LINE_CHARS = 100

_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+(?:\[[ xX]\]\s+)?(.*)$")
_CANDIDATE = re.compile(r"^\s*(?:(?:[-*+]|\d{1,9}[.)])\s+)?(?:\*\*)?Candidate:")
_FENCE = re.compile(r"^\s*(```|~~~)")
_TABLE_RULE = re.compile(r"^\s*\|?[\s:|-]*-[\s:|-]*$")


@dataclass(frozen=True)
class Item:
    """An entry or a section: its comparison key and its first line as written."""

    key: str
    line: str


@dataclass(frozen=True)
class Shape:
    """What a version of a root file holds: its entries, sections and Candidate lines."""

    entries: list[Item] = field(default_factory=list)
    sections: list[Item] = field(default_factory=list)
    candidates: int = 0


@dataclass(frozen=True)
class Rewrite:
    """How a root file was destructively rewritten between two versions."""

    entries_before: int
    entries_after: int
    dropped_entries: list[str]
    sections_before: int
    sections_after: int
    dropped_sections: list[str]
    candidates_added: int
    deleted: bool = False

    def summary(self) -> str:
        """Return what happened in a few words: `lost 140 of 160 entries (88 %), …`."""
        parts = []
        if self.deleted:
            parts.append("was deleted")
        if self.dropped_entries and self.entries_before:
            percent = round(100 * len(self.dropped_entries) / self.entries_before)
            parts.append(
                f"lost {len(self.dropped_entries)} of {self.entries_before} entries ({percent} %)"
            )
        if self.dropped_sections and self.sections_before:
            parts.append(f"lost {len(self.dropped_sections)} of {self.sections_before} sections")
        if self.candidates_added:
            parts.append(f"gained {self.candidates_added} raw Candidate: line(s)")
        return ", ".join(parts)

    def first_dropped(self, count: int = SHOWN_LINES) -> list[str]:
        """Return the first lines of the first dropped entries (then sections)."""
        return (self.dropped_entries + self.dropped_sections)[:count]

    def to_json(self) -> dict[str, Any]:
        """Return the fields, the dropped lines counted (the first few listed)."""
        return {
            **asdict(self),
            "dropped_entries": len(self.dropped_entries),
            "dropped_sections": len(self.dropped_sections),
            "first_dropped": self.first_dropped(),
        }


def read_shape(text: str) -> Shape:
    """Given a root file's text, return its entries, sections and Candidate lines."""
    entries: list[Item | list[str]] = []  # an entry's lines while it is being read
    sections: list[Item] = []
    candidates = 0
    current: list[str] | None = None  # the lines of the entry being read
    fence: str | None = None
    for line in text.splitlines():
        if fence is not None:
            current.append(line)  # type: ignore[union-attr]
            if line.strip().startswith(fence):
                fence = None
                current = None
            continue
        opened = _FENCE.match(line)
        if opened:
            current = [line]
            entries.append(current)
            fence = opened.group(1)
            continue
        if not line.strip():
            current = None
            continue
        heading = _HEADING.match(line)
        if heading:
            sections.append(Item(_key(heading.group(2)), _shown(line)))
            current = None
        elif _CANDIDATE.match(line):
            candidates += 1
            current = None
        elif line.lstrip().startswith("|"):
            if not _TABLE_RULE.match(line):
                entries.append(Item(_key(line.replace("|", " ")), _shown(line)))
            current = None
        elif _LIST_ITEM.match(line):
            current = [line]
            entries.append(current)
        elif current is not None:
            current.append(line)
        else:
            current = [line]
            entries.append(current)
    frozen = [_entry(item) if isinstance(item, list) else item for item in entries]
    return Shape([item for item in frozen if item.key], sections, candidates)


def assess(old: Shape, new: Shape | None, drop_share: float, min_entries: int) -> Rewrite | None:
    """Given a root file's old shape and its new one (None: deleted), return the Rewrite when
    it is destructive, else None."""
    after = new or Shape()
    dropped_entries = _dropped(old.entries, after.entries)
    dropped_sections = _dropped(old.sections, after.sections)
    candidates_added = max(after.candidates - old.candidates, 0)
    judged_entries = len(old.entries) >= min_entries
    judged_sections = len(old.sections) >= MIN_SECTIONS
    destructive = (
        (judged_entries and len(dropped_entries) > drop_share * len(old.entries))
        or (judged_sections and len(dropped_sections) > drop_share * len(old.sections))
        or candidates_added > 0
        or (new is None and (judged_entries or judged_sections))
    )
    if not destructive:
        return None
    return Rewrite(
        entries_before=len(old.entries),
        entries_after=len(after.entries),
        dropped_entries=dropped_entries,
        sections_before=len(old.sections),
        sections_after=len(after.sections),
        dropped_sections=dropped_sections,
        candidates_added=candidates_added,
        deleted=new is None,
    )


def _dropped(old: list[Item], new: list[Item]) -> list[str]:
    """Return the first lines of the old items whose key the new version no longer holds (as
    many times as it held it)."""
    left = Counter(item.key for item in new)
    dropped = []
    for item in old:
        if left[item.key] > 0:
            left[item.key] -= 1
        else:
            dropped.append(item.line)
    return dropped


def _entry(lines: list[str]) -> Item:
    """Given the lines of an entry (they grow until a blank line or another entry), return it."""
    first = lines[0]
    listed = _LIST_ITEM.match(first)
    text = " ".join([listed.group(1) if listed else first, *lines[1:]])
    return Item(_key(text), _shown(first))


def _key(text: str) -> str:
    return " ".join(text.split()).lower()


def _shown(line: str) -> str:
    text = line.strip()
    return text if len(text) <= LINE_CHARS else text[: LINE_CHARS - 1] + "…"
