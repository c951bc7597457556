"""What a window of a conversation says, from its typed entries, without any model.

Kept: user and assistant text (not thinking blocks, tool results, HEARTBEAT_OK / NO_REPLY, user
slash commands, or texts under five characters); the file paths the window mentions (in text
and in tool-call arguments such as `path` / `file_path`); the tools called and how often; open
TODOs (`- [ ]` items and `TODO:` lines not later ticked off); the latest compaction summary; the
model; and the prompt size of the last model call.

Every text that leaves this module has been through `redact` (the run's redactor) whole, as it
was read: messages, paths from tool-call arguments, tool and model names, the compaction
summary. Paths and TODOs are then found in the masked texts, so a secret made of path-like
characters (`Bearer abc/def.ghi`) is masked in its context and never listed as a file, and a cut
(see `render`) never leaves half a key behind.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from memwarden.openclaw.entries import (
    CONTROL_REPLIES,
    Compaction,
    Entry,
    Message,
    ModelChange,
    ToolCallBlock,
)

Redact = Callable[[str], str]
MIN_TEXT_CHARS = 5
KEPT_ROLES = frozenset({"user", "assistant"})
# Tool-call argument names that hold file paths, in the tools of OpenClaw and its plugins.
PATH_ARGUMENTS = frozenset(
    {
        "path",
        "file_path",
        "filePath",
        "file",
        "filename",
        "target_file",
        "notebook_path",
        "paths",
        "files",
    }
)

# Absolute (`/etc/hosts`, `~/notes/a.md`) paths with at least two parts or an extension, and
# relative paths with a folder and an extension (`src/app.py`); never inside a URL. A masked
# secret stays a part of the path it was in (`/srv/keys/[REDACTED:github-token].txt`).
_MASKED = r"\[REDACTED:[\w-]+\]"
_PART = rf"(?:[\w.@+-]|{_MASKED})+"
_STEM = rf"(?:[\w@+-]|{_MASKED})+"
_PATH = re.compile(
    r"(?<![\w@:/.\\-])"
    r"("
    rf"(?:~|\.{{1,2}})?/{_PART}(?:/{_PART})+"
    rf"|(?:~|\.{{1,2}})?/{_STEM}\.[A-Za-z][A-Za-z0-9]{{0,7}}"
    rf"|(?:{_PART}/)+{_STEM}\.[A-Za-z][A-Za-z0-9]{{0,7}}"
    r")"
    r"(?![\w/])"
)
# The item runs to the end of the line; its trailing blanks are stripped afterwards (a lazy
# `(.*?)[ \t]*$` would try every position against every blank: quadratic on a long blank run).
_OPEN_ITEM = re.compile(r"^[ \t]*[-*+][ \t]+\[ \][ \t]+(\S[^\n]*)", re.MULTILINE)
_DONE_ITEM = re.compile(r"^[ \t]*[-*+][ \t]+\[[xX]\][ \t]+(\S[^\n]*)", re.MULTILINE)
_TODO_LINE = re.compile(r"\bTODO:[ \t]*(\S[^\n]*)", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Excerpt:
    """One kept message: who said it, the whole text, and when."""

    role: str
    text: str
    time: datetime | None


@dataclass
class WindowDigest:
    """What one conversation window contains, as plain data."""

    messages: list[Excerpt] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    tools: dict[str, int] = field(default_factory=dict)
    todos: list[str] = field(default_factory=list)
    compaction_summary: str | None = None
    model: str | None = None
    context_tokens: int | None = None
    context_tokens_at: datetime | None = None
    context_after_compaction: bool = False  # the size is what a compaction left (tokensAfter)
    # A compaction after the measured prompt that did not say what it left: when it was.
    compacted_since_at: datetime | None = None
    entries: int = 0
    first_entry_at: datetime | None = None
    last_entry_at: datetime | None = None

    @property
    def requests(self) -> list[Excerpt]:
        """Return the user messages, in order."""
        return [message for message in self.messages if message.role == "user"]

    @property
    def outputs(self) -> list[Excerpt]:
        """Return the assistant messages, in order."""
        return [message for message in self.messages if message.role == "assistant"]


def digest_window(entries: Sequence[Entry], max_files: int = 20, *, redact: Redact) -> WindowDigest:
    """Given the entries of one window in transcript order, return its WindowDigest, every text
    in it masked by `redact`.

    `files` holds at most `max_files` paths, the most recently mentioned first.
    """
    digest = WindowDigest(entries=len(entries))
    tools: Counter[str] = Counter()
    paths: list[str] = []
    todo_texts: list[str] = []
    for entry in entries:
        if entry.timestamp is not None:
            if digest.first_entry_at is None:
                digest.first_entry_at = entry.timestamp
            digest.last_entry_at = entry.timestamp
        kind = type(entry)
        if kind is Message:
            _take_message(entry, digest, tools, paths, todo_texts, redact)
        elif kind is Compaction:
            if entry.summary.strip():
                digest.compaction_summary = entry.summary.strip()
            _take_compaction(entry, digest)
        elif kind is ModelChange and entry.model_id:
            digest.model = entry.model_id
    if digest.compaction_summary is not None:
        digest.compaction_summary = redact(digest.compaction_summary)
    if digest.model is not None:
        digest.model = redact(digest.model)
    masked_tools: Counter[str] = Counter()
    for name, count in tools.items():
        masked_tools[redact(name)] += count
    digest.tools = dict(sorted(masked_tools.items(), key=lambda item: (-item[1], item[0])))
    digest.files = _most_recent_unique(paths, max_files)
    digest.todos = open_todos(todo_texts)
    return digest


def kept_messages(entries: Iterable[Entry], redact: Redact | None = None) -> list[Excerpt]:
    """Given entries, return the user and assistant messages a checkpoint keeps, in order, their
    texts masked by `redact` (None: as they are, for a caller that only counts them)."""
    kept = []
    for entry in entries:
        if type(entry) is Message:
            excerpt = _excerpt(entry, redact)
            if excerpt is not None:
                kept.append(excerpt)
    return kept


def find_paths(text: str) -> list[str]:
    """Given a text, return the file paths it mentions, in order (URLs left out)."""
    if "/" not in text:
        return []
    return [path.rstrip(".") for path in _PATH.findall(text)]


def open_todos(texts: Iterable[str]) -> list[str]:
    """Given texts in order, return the TODOs still open at the end, in order of last mention.

    Open: `- [ ] item` and `TODO: item` lines. A later `- [x] item` with the same text closes it.
    """
    state: dict[str, bool] = {}
    for text in texts:
        if "[" not in text and "TODO" not in text:
            continue
        found = [
            (match.start(), match.group(1).rstrip(" \t"), is_open)
            for pattern, is_open in ((_OPEN_ITEM, True), (_TODO_LINE, True), (_DONE_ITEM, False))
            for match in pattern.finditer(text)
        ]
        for _, item, is_open in sorted(found):
            state.pop(item, None)
            state[item] = is_open
    return [item for item, is_open in state.items() if is_open]


def _take_message(
    message: Message,
    digest: WindowDigest,
    tools: Counter[str],
    paths: list[str],
    todo_texts: list[str],
    redact: Redact,
) -> None:
    if message.role == "assistant":
        if message.model:
            digest.model = message.model
        if message.usage is not None and message.usage.context_tokens:
            digest.context_tokens = message.usage.context_tokens
            digest.context_tokens_at = message.time or message.timestamp
            digest.context_after_compaction = False
            digest.compacted_since_at = None
        for block in message.blocks:
            if type(block) is ToolCallBlock:
                tools[block.name or "?"] += 1
                paths.extend(redact(path) for path in _argument_paths(block))
    excerpt = _excerpt(message, redact)
    if excerpt is None:
        return
    digest.messages.append(excerpt)
    paths.extend(find_paths(excerpt.text))
    todo_texts.append(excerpt.text)


def _take_compaction(entry: Compaction, digest: WindowDigest) -> None:
    """The prompt measured before a compaction is no longer the context: take what it left, or
    remember when it came when it does not say."""
    if entry.tokens_after is not None:
        digest.context_tokens = entry.tokens_after
        digest.context_tokens_at = entry.timestamp
        digest.context_after_compaction = True
        digest.compacted_since_at = None
    elif digest.context_tokens:
        digest.compacted_since_at = entry.timestamp


def _excerpt(message: Message, redact: Redact | None) -> Excerpt | None:
    """Return the message as an Excerpt (its text masked by `redact`), or None when a checkpoint
    leaves it out (tool results, `Message.is_control_reply`, `Message.is_command`, short
    texts)."""
    role = message.role
    if role not in KEPT_ROLES:
        return None
    # Message.text joins the blocks on every call: joined once here, where every message of
    # every tail passes, rather than once for each test.
    text = message.text.strip()
    if role == "assistant" and text in CONTROL_REPLIES:
        return None
    if role == "user" and text.startswith("/"):
        return None
    if len(text) < MIN_TEXT_CHARS:
        return None
    return Excerpt(role, redact(text) if redact is not None else text, message.time)


def _argument_paths(block: ToolCallBlock) -> list[str]:
    found = []
    for name, value in block.arguments.items():
        if name not in PATH_ARGUMENTS:
            continue
        values = value if isinstance(value, list) else [value]
        found.extend(item.strip() for item in values if isinstance(item, str) and item.strip())
    return found


def _most_recent_unique(paths: list[str], limit: int) -> list[str]:
    seen: dict[str, None] = {}
    for path in reversed(paths):
        if path not in seen:
            seen[path] = None
            if len(seen) >= limit:
                break
    return list(seen)
