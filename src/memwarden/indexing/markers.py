"""Observation markers (`[DECISION]`, `[TODO]`, …) and titles in Markdown memory files.

Markers are counted per occurrence. Those inside code (fenced blocks and inline code spans) are
examples, not observations, and are not counted. Files are read as bytes so a file that is not
UTF-8 still gets its markers counted.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence

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
MEANINGS: dict[str, str] = {
    "DECISION": "a choice that was made, and why",
    "GOTCHA": "a trap to avoid",
    "SOLUTION": "a fix that worked",
    "PATTERN": "a recurring way of doing things",
    "TRADEOFF": "options weighed against each other",
    "FACT": "something verified",
    "PREFERENCE": "how the user likes things done",
    "TODO": "open work",
}
ZERO: tuple[int, ...] = (0,) * len(MARKERS)

_POSITION = {name: position for position, name in enumerate(MARKERS)}
_ALTERNATIVES = "|".join(MARKERS)
_MARKER_BYTES = re.compile(rb"\[(" + _ALTERNATIVES.encode() + rb")\]")
_MARKER_TEXT = re.compile(r"\[(" + _ALTERNATIVES + r")\]")
_FENCE_LINE_TEXT = re.compile(r"^ {0,3}(?:`{3,}|~{3,})")
_BACKTICK_RUN_BYTES = re.compile(rb"`+")
_BACKTICK_RUN_TEXT = re.compile(r"`+")
_HEADING = re.compile(rb"^ {0,3}#{1,6}[ \t]+([^\n]+)", re.MULTILINE)
_TITLE_LIMIT = 80
_FAR = 1 << 62

Span = tuple[int, int]


def count_markers(data: bytes) -> tuple[int, ...]:
    """Given a file's bytes, return how many times each marker occurs, in MARKERS order.

    Occurrences inside fenced code blocks and inline code spans do not count. The time taken
    grows linearly with the size of the file, however long its lines.
    """
    if b"[" not in data:
        return ZERO
    hits = list(_MARKER_BYTES.finditer(data))
    if not hits:
        return ZERO
    code_blocks = fenced_blocks(data, end=hits[-1].start())
    counts = [0] * len(MARKERS)
    line_end = -1
    line_start = 0
    line_spans: list[Span] = []
    for hit in hits:
        start = hit.start()
        if _inside(code_blocks, start):
            continue
        if start > line_end:
            line_start = data.rfind(b"\n", 0, start) + 1
            line_end = data.find(b"\n", start)
            if line_end == -1:
                line_end = len(data)
            line_spans = inline_code_spans(data[line_start:line_end])
        if _inside(line_spans, start - line_start):
            continue
        counts[_POSITION[hit.group(1).decode()]] += 1
    return tuple(counts)


def fenced_blocks(data: bytes, end: int | None = None) -> list[Span]:
    """Given Markdown bytes, return the (start, end) offsets of its fenced code blocks.

    A fence is a line starting (after at most three spaces) with ``` or ~~~; the block ends at
    the next fence line of the same character, or at the end of the file. With `end`, only
    fences starting before it are looked for (a block still open there runs to the end).
    """
    limit = len(data) if end is None else end
    fences: list[tuple[int, bytes]] = []
    for fence in (b"```", b"~~~"):
        position = data.find(fence, 0, limit)
        while position != -1:
            line_start = data.rfind(b"\n", 0, position) + 1
            if position - line_start <= 3 and not data[line_start:position].strip(b" "):
                fences.append((line_start, fence))
            next_line = data.find(b"\n", position, limit) + 1
            position = data.find(fence, next_line, limit) if next_line else -1
    fences.sort()
    blocks: list[Span] = []
    opening: tuple[int, bytes] | None = None
    for start, fence in fences:
        if opening is None:
            opening = (start, fence)
        elif fence == opening[1]:
            blocks.append((opening[0], start + len(fence)))
            opening = None
    if opening is not None:
        blocks.append((opening[0], len(data)))
    return blocks


def inline_code_spans(line: str | bytes) -> list[Span]:
    """Given one line, return the (start, end) offsets of its inline code spans, in order.

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


def _inside(spans: list[Span], position: int) -> bool:
    index = bisect_right(spans, (position, _FAR)) - 1
    return index >= 0 and spans[index][0] <= position < spans[index][1]


def add_counts(totals: Iterable[Sequence[int]]) -> tuple[int, ...]:
    """Given several marker count tuples, return their sum."""
    summed = tuple(map(sum, zip(*totals, strict=True)))
    return summed or ZERO


def markers_in_line(line: str) -> list[str]:
    """Given one line of text, return the markers it carries outside inline code, in order."""
    if "[" not in line:
        return []
    spans = inline_code_spans(line) if "`" in line else []
    return [
        match.group(1) for match in _MARKER_TEXT.finditer(line) if not _inside(spans, match.start())
    ]


def lines_outside_code(text: str) -> list[str]:
    """Given Markdown text, return its lines that are not inside fenced code blocks."""
    kept: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        opening = _FENCE_LINE_TEXT.match(line)
        if fence is None and opening:
            fence = opening.group(0).strip()[:3]
            continue
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            continue
        kept.append(line)
    return kept


def first_heading(data: bytes) -> str | None:
    """Given a file's bytes, return the text of its first heading outside code, or None."""
    code_blocks: list[Span] | None = None
    for match in _HEADING.finditer(data):
        if code_blocks is None:
            code_blocks = fenced_blocks(data)
        if _inside(code_blocks, match.start()):
            continue
        text = match.group(1).rstrip(b" \t\r")
        text = text.rstrip(b"#").rstrip(b" \t") or text
        title = text.decode("utf-8", errors="replace").strip()
        if title:
            return shorten(title, _TITLE_LIMIT)
    return None


def shorten(text: str, limit: int) -> str:
    """Given a text, return it on one line and at most `limit` characters (with `…`)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
