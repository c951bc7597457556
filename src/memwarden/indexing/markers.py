"""Observation markers (`[DECISION]`, `[TODO]`, …) and titles in Markdown memory files.

Markers are counted per occurrence. Those inside code (fenced blocks and inline code spans) are
examples, not observations, and are not counted. Files are read as bytes so a file that is not
UTF-8 still gets its markers counted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from memwarden.agent_memory.observations import MARKERS, Span, inline_code_spans, inside, shorten

# Each marker's abbreviation in INDEX.md's tables, and what it means.
_MARKER_NOTES = {
    "DECISION": ("DEC", "a choice that was made, and why"),
    "GOTCHA": ("GOT", "a trap to avoid"),
    "SOLUTION": ("SOL", "a fix that worked"),
    "PATTERN": ("PAT", "a recurring way of doing things"),
    "TRADEOFF": ("TRA", "options weighed against each other"),
    "FACT": ("FACT", "something verified"),
    "PREFERENCE": ("PREF", "how the user likes things done"),
    "TODO": ("TODO", "open work"),
}
ABBREVIATIONS = {name: short for name, (short, _) in _MARKER_NOTES.items()}
MEANINGS = {name: meaning for name, (_, meaning) in _MARKER_NOTES.items()}
ZERO: tuple[int, ...] = (0,) * len(MARKERS)

_POSITION = {name: position for position, name in enumerate(MARKERS)}
_ALTERNATIVES = "|".join(MARKERS)
_MARKER_BYTES = re.compile(rb"\[(" + _ALTERNATIVES.encode() + rb")\]")
_HEADING = re.compile(rb"^ {0,3}#{1,6}[ \t]+([^\n]+)", re.MULTILINE)
_TITLE_LIMIT = 80


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
        if inside(code_blocks, start):
            continue
        if start > line_end:
            line_start = data.rfind(b"\n", 0, start) + 1
            line_end = data.find(b"\n", start)
            if line_end == -1:
                line_end = len(data)
            line_spans = inline_code_spans(data[line_start:line_end])
        if inside(line_spans, start - line_start):
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


def add_counts(totals: Iterable[Sequence[int]]) -> tuple[int, ...]:
    """Given several marker count tuples, return their sum."""
    summed = tuple(map(sum, zip(*totals, strict=True)))
    return summed or ZERO


def first_heading(data: bytes) -> str | None:
    """Given a file's bytes, return the text of its first heading outside code, or None."""
    code_blocks: list[Span] | None = None
    for match in _HEADING.finditer(data):
        if code_blocks is None:
            code_blocks = fenced_blocks(data)
        if inside(code_blocks, match.start()):
            continue
        text = match.group(1).rstrip(b" \t\r")
        text = text.rstrip(b"#").rstrip(b" \t") or text
        title = text.decode("utf-8", errors="replace").strip()
        if title:
            return shorten(title, _TITLE_LIMIT)
    return None
