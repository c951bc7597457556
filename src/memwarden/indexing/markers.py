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
_FENCE_LINE_BYTES = re.compile(rb"^ {0,3}(?:`{3,}|~{3,})", re.MULTILINE)
_FENCE_LINE_TEXT = re.compile(r"^ {0,3}(?:`{3,}|~{3,})")
_INLINE_CODE_BYTES = re.compile(rb"(`+)(?!`).+?(?<!`)\1(?!`)")
_INLINE_CODE_TEXT = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)")
_HEADING = re.compile(rb"^ {0,3}#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*\r?$", re.MULTILINE)
_TITLE_LIMIT = 80
_FAR = 1 << 62


def count_markers(data: bytes) -> tuple[int, ...]:
    """Given a file's bytes, return how many times each marker occurs, in MARKERS order.

    Occurrences inside fenced code blocks and inline code spans do not count.
    """
    if b"[" not in data:
        return ZERO
    hits = list(_MARKER_BYTES.finditer(data))
    if not hits:
        return ZERO
    code_blocks = fenced_blocks(data, end=hits[-1].start())
    counts = [0] * len(MARKERS)
    for hit in hits:
        start = hit.start()
        if _inside(code_blocks, start) or _inside_inline_code(data, start):
            continue
        counts[_POSITION[hit.group(1).decode()]] += 1
    return tuple(counts)


def fenced_blocks(data: bytes, end: int | None = None) -> list[tuple[int, int]]:
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
    blocks: list[tuple[int, int]] = []
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


def _inside(blocks: list[tuple[int, int]], position: int) -> bool:
    index = bisect_right(blocks, (position, _FAR)) - 1
    return index >= 0 and blocks[index][0] <= position < blocks[index][1]


def _inside_inline_code(data: bytes, position: int) -> bool:
    line_start = data.rfind(b"\n", 0, position) + 1
    line_end = data.find(b"\n", position)
    line = data[line_start : line_end if line_end != -1 else len(data)]
    if b"`" not in line:
        return False
    offset = position - line_start
    return any(span.start() <= offset < span.end() for span in _INLINE_CODE_BYTES.finditer(line))


def add_counts(totals: Iterable[Sequence[int]]) -> tuple[int, ...]:
    """Given several marker count tuples, return their sum."""
    summed = tuple(map(sum, zip(*totals, strict=True)))
    return summed or ZERO


def markers_in_line(line: str) -> list[str]:
    """Given one line of text, return the markers it carries outside inline code, in order."""
    if "[" not in line:
        return []
    visible = _INLINE_CODE_TEXT.sub("", line) if "`" in line else line
    return [match.group(1) for match in _MARKER_TEXT.finditer(visible)]


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
    for match in _HEADING.finditer(data):
        if len(_FENCE_LINE_BYTES.findall(data, 0, match.start())) % 2 == 0:
            title = match.group(1).decode("utf-8", errors="replace").strip()
            if title:
                return shorten(title, _TITLE_LIMIT)
    return None


def shorten(text: str, limit: int) -> str:
    """Given a text, return it on one line and at most `limit` characters (with `…`)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
