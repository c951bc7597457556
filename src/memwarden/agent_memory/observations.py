"""What a conversation's text holds that must survive: marked lines, open tasks and file paths.

The one grammar of these items, shared by the checkpoint (a conversation's handoff carries every
one of them), the compaction watch (which of them a compaction dropped), session summaries and
the index (which counts the markers of memory files):

- a **marked line** carries an observation marker (`[DECISION]`, `[GOTCHA]`, `[SOLUTION]`,
  `[PATTERN]`, `[TRADEOFF]`, `[FACT]`, `[PREFERENCE]`, `[TODO]`) outside code;
- a **task** is opened by `- [ ] item`, `TODO: item` or a `[TODO] item` line, and closed by a later
  `- [x] item` with the same text;
- a **path** is a file path in the text (absolute, `~/…`, `dir/file.ext`; never inside a URL) or
  in a tool call's path argument (`path`, `file_path`, …).

Every pattern runs in time linear in the text, however long its lines or blank runs.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Mapping

MARKERS: tuple[str, ...] = (
    "DECISION",
    "GOTCHA",
    "SOLUTION",
    "PATTERN",
    "TRADEOFF",
    "FACT",
    "PREFERENCE",
    "TODO",
)
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

_MARKER_TEXT = re.compile(r"\[(" + "|".join(MARKERS) + r")\]")
_FENCE_LINE = re.compile(r"^ {0,3}(?:`{3,}|~{3,})")
_BACKTICK_RUN_TEXT = re.compile(r"`+")
_BACKTICK_RUN_BYTES = re.compile(rb"`+")
_FAR = 1 << 62
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
# A task runs to the end of the line; its trailing blanks are stripped afterwards (a lazy
# `(.*?)[ \t]*$` would try every position against every blank: quadratic on a long blank run).
_CHECKBOX_ITEM = re.compile(r"^[ \t]*[-*+][ \t]+\[([ xX])\][ \t]+(\S[^\n]*)", re.MULTILINE)
_TODO_LINE = re.compile(r"\bTODO:[ \t]*(\S[^\n]*)", re.MULTILINE)
_TODO_MARKER = re.compile(r"\[TODO\][ \t]*(\S[^\n]*)", re.MULTILINE)
_TASK_PREFIX = re.compile(r"^(?:TODO:|\[TODO\])[ \t]*")

Span = tuple[int, int]


def markers_in_line(line: str) -> list[str]:
    """Given one line of text, return the markers it carries outside inline code, in order."""
    if "[" not in line:
        return []
    return [match.group(1) for match in _outside_code(_MARKER_TEXT, line)]


def marked_lines(text: str) -> list[tuple[str, str]]:
    """Given a text, return (first marker, line without its list bullet) for each of its lines
    that carries a marker outside code, in order."""
    if "[" not in text:
        return []
    found = []
    for line in lines_outside_code(text):
        markers = markers_in_line(line)
        if markers:
            found.append((markers[0], unlisted(line)))
    return found


def task_changes(text: str) -> list[tuple[str, bool]]:
    """Given one text, return the tasks it opens (True) or closes (False), in order; those in
    fenced code blocks are examples, not tasks."""
    if "[" not in text and "TODO" not in text:
        return []
    if "```" in text or "~~~" in text:
        text = "\n".join(lines_outside_code(text))
    boxes = list(_CHECKBOX_ITEM.finditer(text))
    found = [(box.start(), _task_text(box.group(2)), box.group(1) == " ") for box in boxes]
    lines = [
        (match.start(), match.group(1).rstrip(" \t"), True) for match in _TODO_LINE.finditer(text)
    ]
    if "[TODO]" in text:
        lines += _todo_marker_lines(text)
    # `- [ ] TODO: item` is one task, not two: a TODO inside a checkbox's text is its name.
    spans = [box.span() for box in boxes]
    found += [one for one in lines if not inside(spans, one[0])]
    return [(item, is_open) for _, item, is_open in sorted(found)]


def _task_text(item: str) -> str:
    """A checkbox's task without its trailing blanks and a leading `TODO:` or `[TODO]`, as a
    TODO line names it."""
    item = item.rstrip(" \t")
    return _TASK_PREFIX.sub("", item, count=1) or item


def open_todos(texts: Iterable[str]) -> list[str]:
    """Given texts in order, return the tasks still open at the end, in order of last mention."""
    state: dict[str, bool] = {}
    for text in texts:
        for item, is_open in task_changes(text):
            state.pop(item, None)
            state[item] = is_open
    return [item for item, is_open in state.items() if is_open]


def find_paths(text: str) -> list[str]:
    """Given a text, return the file paths it mentions, in order (URLs left out)."""
    if "/" not in text:
        return []
    return [path.rstrip(".") for path in _PATH.findall(text)]


def argument_paths(arguments: Mapping[str, object]) -> list[str]:
    """Given a tool call's arguments, return the paths its path arguments hold, in order."""
    found = []
    for name, value in arguments.items():
        if name not in PATH_ARGUMENTS:
            continue
        values = value if isinstance(value, list) else [value]
        found.extend(
            item.strip()
            for item in values
            if isinstance(item, str) and item.strip() and "\n" not in item
        )
    return found


def lines_outside_code(text: str) -> list[str]:
    """Given Markdown text, return its lines that are not inside fenced code blocks."""
    kept: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        opening = _FENCE_LINE.match(line)
        if fence is None and opening:
            fence = opening.group(0).strip()[:3]
            continue
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            continue
        kept.append(line)
    return kept


def inline_code_spans(line: str | bytes) -> list[Span]:
    """Given one line (text or bytes), return the (start, end) offsets of its inline code spans,
    in order.

    As in CommonMark, a span opens with a run of backticks and closes at the next run of exactly
    as many; a run that nothing closes is plain text. Each run is looked at once, so the time
    grows linearly with the line.
    """
    pattern = _BACKTICK_RUN_BYTES if isinstance(line, bytes) else _BACKTICK_RUN_TEXT
    runs = [match.span() for match in pattern.finditer(line)]  # type: ignore[arg-type]
    runs_by_length: dict[int, list[int]] = {}
    for index, (start, end) in enumerate(runs):
        runs_by_length.setdefault(end - start, []).append(index)
    spans: list[Span] = []
    index = 0
    while index < len(runs):
        start, end = runs[index]
        same_length = runs_by_length[end - start]
        following = bisect_right(same_length, index)
        if following == len(same_length):
            index += 1
            continue
        closing = same_length[following]
        spans.append((start, runs[closing][1]))
        index = closing + 1
    return spans


def unlisted(line: str) -> str:
    """Return a line without its list bullet (`- `, `* `, `1. `)."""
    stripped = line.strip()
    head, _, rest = stripped.partition(" ")
    if rest and (head in ("-", "*", "+") or (head[:-1].isdigit() and head[-1:] in ".)")):
        return rest.strip()
    return stripped


def shorten(text: str, limit: int) -> str:
    """Given a text, return it on one line and at most `limit` characters (with `…`)."""
    return cut(" ".join(text.split()), limit)


def cut(text: str, limit: int) -> str:
    """Return text cut to at most `limit` characters, ending with … when it was cut."""
    if len(text) <= limit:
        return text
    return text[: limit - 1].rstrip() + "…"


def _todo_marker_lines(text: str) -> list[tuple[int, str, bool]]:
    """`[TODO] item` outside inline code, as (offset, item, True)."""
    found = []
    offset = 0
    for line in text.splitlines(keepends=True):
        if "[TODO]" in line:
            found += [
                (offset + match.start(), match.group(1).rstrip(" \t\r\n"), True)
                for match in _outside_code(_TODO_MARKER, line)
            ]
        offset += len(line)
    return found


def _outside_code(pattern: re.Pattern[str], line: str) -> list[re.Match[str]]:
    """The matches of `pattern` in one line that do not start inside inline code."""
    spans = inline_code_spans(line) if "`" in line else []
    return [match for match in pattern.finditer(line) if not inside(spans, match.start())]


def inside(spans: list[Span], position: int) -> bool:
    """Return True when `position` lies in one of `spans` (sorted, not overlapping)."""
    index = bisect_right(spans, (position, _FAR)) - 1
    return index >= 0 and spans[index][0] <= position < spans[index][1]
