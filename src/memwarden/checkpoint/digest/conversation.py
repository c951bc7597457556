"""What a conversation has held since it began, accumulated as the checkpoint reads new lines.

One `Conversation` per session key, kept in memwarden's state database with the read position
it was built up to: every marked line (`[DECISION]` …), open task and file path said in it, by
whom and when, across its resets and compactions, until a task is closed; its latest messages
(as many as a handoff could show); the tools it called; its last compaction summary; its resets
and compactions; its model and context size. A run reads only the lines after the position
and `take`s them, so its cost stays flat in the transcript's length.

Every text arrives masked by the run's redactor, as the checkpoint reads it; paths and tasks are
found in the masked texts (see `observations`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from memwarden.agent_memory.observations import (
    argument_paths,
    cut,
    find_paths,
    marked_lines,
    shorten,
    task_changes,
)
from memwarden.checkpoint.digest.extract import Excerpt, Redact, excerpt_of
from memwarden.openclaw.entries import (
    Compaction,
    Entry,
    Message,
    ModelChange,
    Reset,
    SessionHeader,
    ToolCallBlock,
)

FORMAT = 1
ITEM_CHARS = 300
# The latest messages kept, in characters: twice what a handoff shows at the gateway's default
# per-file cap (20,000 characters), or twice its budget when that is larger, so the budget, not
# this, decides what a handoff leaves out.
KEPT_MESSAGE_CHARS = 40_000
MAX_MARKED = 2_000
MAX_TASKS = 1_000
MAX_PATHS = 1_000
MAX_BREAKS = 50


@dataclass(slots=True)
class Said:
    """One thing said in the conversation: who said it, when (Unix seconds), and the text."""

    role: str
    text: str
    at: float | None
    marker: str | None = None  # for a marked line: its first marker


@dataclass(slots=True)
class ContextSize:
    """The context size the transcript shows: the last model call's prompt, what the last
    compaction left, or 0 after a reset; `compacted_at` is a compaction after that call that did
    not say."""

    tokens: int | None = None
    at: float | None = None
    after_compaction: bool = False
    compacted_at: float | None = None
    after_reset: bool = False

    @property
    def measure(self) -> str:
        """Which transcript measure it is (a key of `context_count.TRANSCRIPT_MEASURES`)."""
        return "reset" if self.after_reset else "compaction" if self.after_compaction else "prompt"


@dataclass
class Conversation:
    """Everything one conversation held since it began (see the module's docstring)."""

    messages: list[Said] = field(default_factory=list)
    message_count: int = 0
    dropped_messages: int = 0
    marked: dict[str, Said] = field(default_factory=dict)  # by text, in the order first said
    tasks: dict[str, Said] = field(default_factory=dict)  # open ones, in the order opened
    paths: dict[str, Said] = field(default_factory=dict)  # the last mention last
    dropped_items: int = 0
    tools: dict[str, int] = field(default_factory=dict)
    compaction_summary: str | None = None
    breaks: list[tuple[str, float | None]] = field(default_factory=list)
    resets: int = 0
    compactions: int = 0
    model: str | None = None
    context: ContextSize = field(default_factory=ContextSize)
    started_at: float | None = None
    last_at: float | None = None
    # How far it was read: the session id the key had and the position in its transcript.
    session_id: str | None = None
    through: dict[str, int] | None = None
    # How many characters of the latest messages to keep (a run's setting, not kept itself).
    keep_chars: int = field(default=KEPT_MESSAGE_CHARS, compare=False)

    def take(
        self,
        entries: Iterable[Entry],
        redact: Redact,
        message_chars: int,
        *,
        after: float | None = None,
    ) -> list[Excerpt]:
        """Take in `entries` (in transcript order, each text masked by `redact`); return the user
        and assistant messages among them that a checkpoint keeps. With `after`, entries at or
        before that time (Unix seconds) were taken in already and are passed over."""
        kept = []
        for entry in entries:
            at = entry.timestamp.timestamp() if entry.timestamp is not None else None
            if after is not None and (at is None or at <= after):
                continue
            if at is not None:
                self.started_at = at if self.started_at is None else self.started_at
                self.last_at = at
            kind = type(entry)
            if kind is Message:
                excerpt = self._take_message(entry, at, redact, message_chars)
                if excerpt is not None:
                    kept.append(excerpt)
            elif kind is Compaction:
                self._take_compaction(entry, at, redact)
            elif kind is Reset or (kind is SessionHeader and self.message_count):
                # A header after messages: the key's new session id, after a file-era reset.
                self.resets += 1
                self._add_break("reset", at)
                self.context = ContextSize(0, at, after_reset=True)  # the model sees nothing before
            elif kind is ModelChange and entry.model_id:
                self.model = redact(entry.model_id)
        self._bound()
        return kept

    def _take_message(
        self, message: Message, at: float | None, redact: Redact, message_chars: int
    ) -> Excerpt | None:
        if message.role == "assistant":
            if message.model:
                self.model = redact(message.model)
            usage = message.usage
            if usage is not None and usage.context_tokens:
                moment = message.time or message.timestamp
                self.context = ContextSize(
                    usage.context_tokens, moment.timestamp() if moment else at
                )
            for block in message.blocks:
                if type(block) is ToolCallBlock:
                    name = redact(block.name or "?")
                    self.tools[name] = self.tools.get(name, 0) + 1
                    for path in argument_paths(block.arguments):
                        self._note_path(redact(path), "assistant", at)
        excerpt = excerpt_of(message, redact)
        if excerpt is None:
            return None
        said_at = excerpt.time.timestamp() if excerpt.time is not None else at
        self.message_count += 1
        self.messages.append(Said(excerpt.role, cut(excerpt.text, message_chars), said_at))
        self._note_items(excerpt.text, excerpt.role, said_at)
        return excerpt

    def _note_items(self, text: str, role: str, at: float | None) -> None:
        for marker, line in marked_lines(text):
            if marker == "TODO":
                continue  # a task: `task_changes` opens it
            item = shorten(line, ITEM_CHARS)
            if item not in self.marked:
                self.marked[item] = Said(role, item, at, marker)
        for task, is_open in task_changes(text):
            task = shorten(task, ITEM_CHARS)
            self.tasks.pop(task, None)
            if is_open:
                self.tasks[task] = Said(role, task, at)
        for path in find_paths(text):
            self._note_path(path, role, at)

    def _note_path(self, path: str, role: str, at: float | None) -> None:
        """Note a path as mentioned last; who mentioned it first, and when, stay."""
        first = self.paths.pop(path, None)
        self.paths[path] = Said(role, path, at) if first is None else first

    def _take_compaction(self, entry: Compaction, at: float | None, redact: Redact) -> None:
        self.compactions += 1
        self._add_break("compaction", at)
        if entry.summary.strip():
            self.compaction_summary = redact(entry.summary.strip())
        # The prompt measured before a compaction is no longer the context.
        if entry.tokens_after is not None:
            self.context = ContextSize(entry.tokens_after, at, after_compaction=True)
        elif self.context.tokens is not None:  # 0 after a reset too: it holds more now
            self.context.compacted_at = at

    def _add_break(self, kind: str, at: float | None) -> None:
        self.breaks.append((kind, at))
        del self.breaks[:-MAX_BREAKS]

    def _bound(self) -> None:
        """Keep the latest messages within `keep_chars` and each kind of item within its
        maximum (the oldest go first; how many went is counted)."""
        total = sum(len(message.text) for message in self.messages)
        drop = 0
        while total > self.keep_chars and drop < len(self.messages) - 1:
            total -= len(self.messages[drop].text)
            drop += 1
        if drop:
            del self.messages[:drop]
            self.dropped_messages += drop
        for items, limit in (
            (self.marked, MAX_MARKED),
            (self.tasks, MAX_TASKS),
            (self.paths, MAX_PATHS),
        ):
            while len(items) > limit:
                del items[next(iter(items))]
                self.dropped_items += 1

    def to_json(self) -> dict[str, Any]:
        """Return the conversation as plain JSON data for the state database."""
        return {
            "format": FORMAT,
            "session_id": self.session_id,
            "through": self.through,
            "started_at": self.started_at,
            "last_at": self.last_at,
            "messages": [[m.role, m.at, m.text] for m in self.messages],
            "message_count": self.message_count,
            "dropped_messages": self.dropped_messages,
            "marked": [[m.role, m.at, m.marker, m.text] for m in self.marked.values()],
            "tasks": [[t.role, t.at, t.text] for t in self.tasks.values()],
            "paths": [[p.role, p.at, p.text] for p in self.paths.values()],
            "dropped_items": self.dropped_items,
            "tools": self.tools,
            "compaction_summary": self.compaction_summary,
            "breaks": [list(one) for one in self.breaks],
            "resets": self.resets,
            "compactions": self.compactions,
            "model": self.model,
            "context": [
                self.context.tokens,
                self.context.at,
                self.context.after_compaction,
                self.context.compacted_at,
                self.context.after_reset,
            ],
        }

    @classmethod
    def from_json(cls, data: Any) -> Conversation | None:
        """Given what `to_json` returned, return the conversation; None when the data is not of
        this format (the conversation is then built again from its transcript)."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            return None
        try:
            return cls(
                messages=[Said(role, text, at) for role, at, text in data["messages"]],
                message_count=int(data["message_count"]),
                dropped_messages=int(data["dropped_messages"]),
                marked={
                    text: Said(role, text, at, marker) for role, at, marker, text in data["marked"]
                },
                tasks={text: Said(role, text, at) for role, at, text in data["tasks"]},
                paths={text: Said(role, text, at) for role, at, text in data["paths"]},
                dropped_items=int(data["dropped_items"]),
                tools=dict(data["tools"]),
                compaction_summary=data["compaction_summary"],
                breaks=[(kind, at) for kind, at in data["breaks"]],
                resets=int(data["resets"]),
                compactions=int(data["compactions"]),
                model=data["model"],
                context=ContextSize(*data["context"]),
                started_at=data["started_at"],
                last_at=data["last_at"],
                session_id=data["session_id"],
                through=data["through"],
            )
        except (KeyError, TypeError, ValueError):
            return None
