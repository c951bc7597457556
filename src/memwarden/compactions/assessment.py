"""One compaction judged, pure: its span, its items, the lost ones and how bad it is; the rule
as docs/compactions.md states it (where it errs included).

- **Span.** A `compaction` entry says the gateway replaced the entries before `firstKeptEntryId`
  with its `summary`; the entries from `firstKeptEntryId` up to the compaction entry stay in the
  prompt. Its span is what it took out: the entries from the start of what the model saw (after
  the last reset, or from the previous compaction's first kept entry) up to its first kept
  entry; without one that can be found there, the whole window before the compaction.
- **Items**, from the user and assistant texts a checkpoint keeps (checkpoint.digest.extract),
  masked by the run's redactor: a **marker** line (`[DECISION]`, `[GOTCHA]`, `[SOLUTION]`,
  `[PATTERN]`, `[TRADEOFF]`, `[FACT]`, `[PREFERENCE]`, `[TODO]`) outside code; a **todo** still
  open at the end of the span (`- [ ] item`, `TODO: item`) that no marker line already holds; a
  **path** the texts mention (not inside a URL). Each once (the first time), at most MAX_ITEMS,
  markers first.
- **Survival**: what the model still sees is the summary and the kept entries. A marker or todo
  item survives when at least two thirds (rounded up) of its key words appear among their words.
  Key words are the item's words of three or more letters or digits (or two with a digit: `v2`),
  lower-cased, without common English words and the marker names; an item with no key word
  cannot be judged and survives. A run of Chinese, Japanese or Korean characters gives its
  overlapping pairs as key words, each found anywhere in the surviving text. A path item survives
  when the path, or its file name, appears there as a whole name (`app.py` is not in `webapp.py`).
- **Grade.** A compaction is **lossy** when it lost at least one item, and **critical** when its
  summary is empty or near-empty (under NEAR_EMPTY_CHARS characters once blanks are collapsed)
  while its span was large (at least LARGE_SPAN_MESSAGES kept messages, or some with
  LARGE_SPAN_TOKENS tokens before): whatever the span held is gone, items or not (the
  "safeguard" summaries of openclaw #6772). A compaction that kept every message (2026.7.35 keeps
  `keepRecentTokens`, 20000 by default, of the most recent ones) took nothing out: never critical.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from memwarden.agent_memory.observations import (
    MARKERS,
    find_paths,
    marked_lines,
    open_todos,
    shorten,
)
from memwarden.checkpoint.digest.extract import Excerpt, Redact, kept_messages
from memwarden.openclaw.entries import Compaction, Entry, Reset

NEAR_EMPTY_CHARS = 80
LARGE_SPAN_MESSAGES = 8
LARGE_SPAN_TOKENS = 8000
MAX_ITEMS = 200
ITEM_CHARS = 300


@dataclass(frozen=True)
class CompactedSpan:
    """One compaction, the entries it compacted (`span`) and those it kept (`kept`)."""

    compaction: Compaction
    span: list[Entry]
    kept: list[Entry]


def compacted_spans(entries: Sequence[Entry]) -> list[CompactedSpan]:
    """Given a transcript's entries in order, return each compaction with its span and kept
    entries, in transcript order."""
    found = []
    window_start = 0  # where what the model sees begins: after a reset or at a first kept entry
    for index, entry in enumerate(entries):
        kind = type(entry)
        if kind is Reset:
            window_start = index + 1
        elif kind is Compaction:
            cut = _first_kept(entries, entry.first_kept_entry_id, window_start, index)
            found.append(
                CompactedSpan(
                    entry,
                    _without_compactions(entries[window_start:cut]),
                    _without_compactions(entries[cut:index]),
                )
            )
            window_start = cut
    return found


def _first_kept(entries: Sequence[Entry], entry_id: str | None, start: int, end: int) -> int:
    """Return the index of the entry `entry_id` between `start` and `end`, else `end`."""
    if entry_id is not None:
        for index in range(start, end):
            if entries[index].id == entry_id:
                return index
    return end


def _without_compactions(entries: Sequence[Entry]) -> list[Entry]:
    return [entry for entry in entries if type(entry) is not Compaction]


@dataclass(frozen=True)
class Item:
    """One thing a span held: its kind, its marker (for `marker` items) and its text."""

    kind: str
    text: str
    marker: str | None = None

    def label(self) -> str:
        """Return the item as one line: `[DECISION] use …`, `TODO: …` or `file: …`."""
        if self.kind == "marker":
            return self.text
        return f"TODO: {self.text}" if self.kind == "todo" else f"file: {self.text}"

    def to_json(self) -> dict[str, str]:
        return {name: value for name, value in asdict(self).items() if value is not None}


def lost_text(items: Sequence[Item], shown: int = 3) -> str:
    """Return `4 item(s): [DECISION] …; TODO: …; file: … and 1 more` for the first `shown`."""
    labels = "; ".join(item.label() for item in items[:shown])
    more = f" and {len(items) - shown} more" if len(items) > shown else ""
    return f"{len(items)} item(s): {labels}{more}"


def span_items(messages: Sequence[Excerpt]) -> list[Item]:
    """Given the kept messages of a span, in order, return its items."""
    texts = [message.text for message in messages]
    markers = [
        Item("marker", shorten(line, ITEM_CHARS), marker)
        for text in texts
        for marker, line in marked_lines(text)
    ]
    held = " ".join(item.text for item in markers)
    todos = [
        Item("todo", shorten(todo, ITEM_CHARS)) for todo in open_todos(texts) if todo not in held
    ]
    paths = [Item("path", path) for text in texts for path in find_paths(text)]
    unique: dict[tuple[str, str], Item] = {}
    for item in (*markers, *todos, *paths):
        unique.setdefault((item.kind, item.text), item)
    return list(unique.values())[:MAX_ITEMS]


SHARE = 2 / 3
_WORD = re.compile(r"[^\W_]+")
# Han, kana, Hangul (and compatibility ideographs): scripts written without spaces.
_CJK_RUN = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")
_COMMON_WORDS = """
a about above after again against all also am an and any are as at be because been before
being below between both but by can could did do does doing done down during each else few
for from further had has have having he her here hers him his how i if in into is it its
itself just let me more most my no nor not now of off on once only or other our ours out
over own same she should so some such than that the their theirs them then there these they
this those through to too under until up use used using very was we were what when where
which while who whom why will with would yes yet you your yours
"""
STOP_WORDS = frozenset(_COMMON_WORDS.split()) | {marker.lower() for marker in MARKERS}


@dataclass(frozen=True)
class Haystack:
    """What survived a compaction, ready to be searched: its words and its lower-cased text."""

    words: frozenset[str]
    text: str

    @classmethod
    def of(cls, texts: Iterable[str]) -> Haystack:
        lowered = "\n".join(texts).lower()
        return cls(frozenset(_WORD.findall(lowered)), lowered)


def key_words(text: str) -> list[str]:
    """Given an item's text, return its key words, lower-cased, each once, in order (pairs of
    characters for a run of Chinese, Japanese or Korean)."""
    found: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        for run in _CJK_RUN.findall(word):
            for start in range(max(1, len(run) - 1)):
                found.setdefault(run[start : start + 2], None)
        for part in _CJK_RUN.sub(" ", word).split():
            if part in STOP_WORDS:
                continue
            if len(part) >= 3 or (len(part) == 2 and any(c.isdigit() for c in part)):
                found.setdefault(part, None)
    return list(found)


def survives(item: Item, haystack: Haystack) -> bool:
    """Given an item and what survived its compaction, return True when the item survives."""
    if item.kind == "path":
        path = item.text.lower()
        name = path.rstrip("/").rsplit("/", 1)[-1]
        return _named(path, haystack.text) or (bool(name) and _named(name, haystack.text))
    words = key_words(item.text)
    if not words:
        return True
    needed = math.ceil(SHARE * len(words))
    return sum(_found(word, haystack) for word in words) >= needed


def _found(word: str, haystack: Haystack) -> bool:
    if _CJK_RUN.match(word):
        return word in haystack.text
    return word in haystack.words


def _named(name: str, text: str) -> bool:
    """Whether `name` (a path or a file name) is in `text` as a whole name, not inside another."""
    return re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", text) is not None


@dataclass(frozen=True)
class Assessment:
    """What one compaction did to a conversation, every text masked."""

    entry_id: str
    compacted_at: datetime | None
    tokens_before: int | None
    tokens_after: int | None
    summary_chars: int
    span_messages: int
    items: list[Item]
    lost: list[Item]
    severity: str  # ok, warning or critical

    @property
    def lossy(self) -> bool:
        return self.severity != "ok"

    def describe_loss(self) -> str:
        """Return `lost 2 item(s): [DECISION] …, TODO: …` (the first few), or what the summary
        lacked for a critical one."""
        text = f"lost {lost_text(self.lost)}" if self.lost else "lost no marked item"
        if self.severity == "critical":
            text = (
                f"left a near-empty summary ({self.summary_chars} characters) of "
                f"{self.span_messages} message(s); {text}"
            )
        return text

    def to_json(self) -> dict[str, Any]:
        return {
            "compaction": self.entry_id,
            "compacted_at": self.compacted_at.isoformat() if self.compacted_at else None,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "summary_chars": self.summary_chars,
            "span_messages": self.span_messages,
            "items": len(self.items),
            "lost": [item.to_json() for item in self.lost],
            "severity": self.severity,
        }


def assess(span: CompactedSpan, redact: Redact, entry_id: str) -> Assessment:
    """Given a compacted span, the run's redactor and the compaction's id (its entry id, or one
    made up for an entry without), return the assessment."""
    compaction = span.compaction
    messages = kept_messages(span.span, redact)
    items = span_items(messages)
    kept = kept_messages(span.kept, redact)
    surviving = Haystack.of([redact(compaction.summary), *(message.text for message in kept)])
    lost = [item for item in items if not survives(item, surviving)]
    summary_chars = len(" ".join(compaction.summary.split()))
    return Assessment(
        entry_id=entry_id,
        compacted_at=compaction.timestamp,
        tokens_before=compaction.tokens_before,
        tokens_after=compaction.tokens_after,
        summary_chars=summary_chars,
        span_messages=len(messages),
        items=items,
        lost=lost,
        severity=grade(summary_chars, len(messages), compaction.tokens_before, len(lost)),
    )


def grade(summary_chars: int, span_messages: int, tokens_before: int | None, lost: int) -> str:
    """Return `critical` for an empty or near-empty summary of a large span, `warning` for a
    compaction that lost items, else `ok`."""
    large = span_messages >= LARGE_SPAN_MESSAGES or (
        span_messages > 0 and (tokens_before or 0) >= LARGE_SPAN_TOKENS
    )
    if summary_chars < NEAR_EMPTY_CHARS and large:
        return "critical"
    return "warning" if lost else "ok"
