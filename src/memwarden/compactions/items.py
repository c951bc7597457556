"""What a compacted span holds that matters, as items: pure.

From the user and assistant texts a checkpoint keeps (see checkpoint.digest.extract: no tool
results, slash commands, control replies or very short texts), masked by the run's redactor:

- **marker**: a line carrying an observation marker (`[DECISION]`, `[GOTCHA]`, `[SOLUTION]`,
  `[PATTERN]`, `[TRADEOFF]`, `[FACT]`, `[PREFERENCE]`, `[TODO]`) outside code;
- **todo**: a TODO still open at the end of the span (`- [ ] item`, `TODO: item`) that no marker
  line already holds;
- **path**: a file path the texts mention (not inside a URL).

Each item appears once (the first time), at most MAX_ITEMS in all, markers first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memwarden.agent_memory.observations import find_paths, marked_lines, open_todos, shorten
from memwarden.checkpoint.digest.extract import Excerpt

MAX_ITEMS = 200
ITEM_CHARS = 300
KINDS = ("marker", "todo", "path")


@dataclass(frozen=True)
class Item:
    """One thing a span held: its kind, its marker (for `marker` items) and its text."""

    kind: str
    text: str
    marker: str | None = None

    def label(self) -> str:
        """Return the item as one line: `[DECISION] use …`, `TODO: …` or `path: …`."""
        if self.kind == "marker":
            return self.text
        return f"TODO: {self.text}" if self.kind == "todo" else f"file: {self.text}"

    def to_json(self) -> dict[str, str]:
        found = {"kind": self.kind, "text": self.text}
        if self.marker:
            found["marker"] = self.marker
        return found


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
