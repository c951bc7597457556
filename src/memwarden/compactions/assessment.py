"""One compaction judged: its facts, its items, the lost ones and how bad it is. Pure.

A compaction is **lossy** when it lost at least one item, and **critical** when its summary is
empty or near-empty (under NEAR_EMPTY_CHARS characters once blanks are collapsed) while its span
was large (at least LARGE_SPAN_MESSAGES kept messages, or some with LARGE_SPAN_TOKENS tokens
before): whatever the span held is gone, items or not (the "safeguard" summaries of openclaw
#6772). A compaction that kept every message (2026.7.35 keeps `keepRecentTokens`, 20000 by
default, of the most recent ones) took nothing out: never critical.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memwarden.checkpoint.digest.extract import kept_messages
from memwarden.compactions.items import Item, span_items
from memwarden.compactions.spans import CompactedSpan
from memwarden.compactions.survival import lost_items

NEAR_EMPTY_CHARS = 80
LARGE_SPAN_MESSAGES = 8
LARGE_SPAN_TOKENS = 8000

Redact = Callable[[str], str]


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
    summary = redact(compaction.summary)
    surviving = [summary, *(message.text for message in kept_messages(span.kept, redact))]
    lost = lost_items(items, surviving)
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
