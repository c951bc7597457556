"""The compactions of a transcript and what each one took out of the model's context: pure.

A `compaction` entry says the gateway replaced the entries before `firstKeptEntryId` with its
`summary`; the entries from `firstKeptEntryId` up to the compaction entry stay in the prompt.
The **span** of a compaction is what it took out: the entries from the start of what the model
saw (after the last reset, or from the previous compaction's first kept entry) up to its first
kept entry. Without a first kept entry that can be found there, the whole window before the
compaction counts as compacted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memwarden.openclaw.entries import Compaction, Entry, Reset


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
