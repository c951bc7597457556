"""The survival rule: does an item of a compacted span survive the compaction? Pure.

What survives a compaction is what the model still sees: the summary and the kept entries
(from `firstKeptEntryId` to the compaction). An item survives when:

- a **marker** or **todo** item: at least two thirds (rounded up) of its key words appear among
  the words of the summary or of the kept entries' texts. Key words are the item's words of three
  or more letters or digits (or two with a digit: `v2`), lower-cased, without common English words
  and the marker names; an item with no key word cannot be judged and counts as surviving;
- a **path** item: the path, or its file name, appears in the summary or the kept texts as a
  whole name (`app.py` is not found in `webapp.py`).

Chinese, Japanese and Korean text has no spaces between words: a run of those characters gives
its overlapping pairs of characters as key words, each found anywhere in the surviving text.

Where the rule errs: a summary that paraphrases an item ("chose Postgres" for "[DECISION] use
PostgreSQL") loses it though the meaning survived (a false loss); a summary that repeats the
item's words in another sense ("PostgreSQL was not discussed") keeps it (a missed loss); words
spread over unrelated sentences count; a file named in passing counts for every item naming it.
Items only in an earlier compaction's summary are not looked at again.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memwarden.agent_memory.observations import MARKERS
from memwarden.compactions.items import Item

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


def lost_items(items: Sequence[Item], surviving_texts: Iterable[str]) -> list[Item]:
    """Given a span's items and the texts that survived (summary, kept entries), return the
    items lost, in order."""
    haystack = Haystack.of(surviving_texts)
    return [item for item in items if not survives(item, haystack)]
