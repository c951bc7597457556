"""What a transcript read is: where the transcript lives, how far it was read, what came back."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NamedTuple

import orjson

from memwarden.openclaw.entries import Entry, parse_line


class TranscriptLocation(NamedTuple):
    """Where a session's transcript lives.

    `file`: `path` is the JSONL file. `sqlite`: `path` is the agent database and the transcript
    is the rows of `transcript_events` whose `session_id` is `session_id`.
    """

    kind: Literal["file", "sqlite"]
    path: Path
    session_id: str


class ReadPosition(NamedTuple):
    """How far a transcript has been read.

    Files: `offset` is the byte just past the last complete line read, and `device`/`inode`
    identify the file, so a replaced file is noticed. SQLite: `seq` is the last row read
    (-1 before the first row).
    """

    offset: int | None = None
    device: int | None = None
    inode: int | None = None
    seq: int | None = None

    def to_json(self) -> dict[str, int]:
        """Return the position as a small JSON object for memwarden's state database."""
        return {
            name: value for name, value in zip(self._fields, self, strict=True) if value is not None
        }

    @classmethod
    def from_json(cls, value: str | bytes | Mapping[str, object]) -> ReadPosition:
        """Given what `to_json` returned (or its JSON text), return the position.

        Raise ValueError if the value is not a position.
        """
        numbers = position_fields(orjson.loads(value) if isinstance(value, str | bytes) else value)
        if numbers is None:
            raise ValueError(f"not a read position: {value!r}")
        return cls(*numbers)


def position_fields(stored: object) -> tuple[int | None, int | None, int | None, int | None] | None:
    """Given a read position as stored (`ReadPosition.to_json`), return its (offset, device,
    inode, seq), or None when it is not one: its fields integers or absent, an offset or a seq
    among them."""
    if type(stored) is not dict:  # a watch asks this of 100k positions: no more than needed
        return None
    fields = stored.get("offset"), stored.get("device"), stored.get("inode"), stored.get("seq")
    for value in fields:
        if value is not None and type(value) is not int:
            return None
    return fields if fields[0] is not None or fields[3] is not None else None


@dataclass
class TailResult:
    """What one read returned, and what it skipped; a read in progress `take`s its lines.

    `start` is the position just before the first line examined (reading on from it returns the
    same entries again) and `end` the position after the last one. `malformed`, `invalid_utf8`
    and `oversized` count skipped lines; `partial_last_line` says an unterminated last line was
    left unread; `reached_start` that the read covers the transcript from its first line;
    `reset_detected` that the given position was no longer valid and the tail was read instead.
    With `needle`, a line that does not hold those bytes is not parsed: it is counted (as an
    entry of the read, in `unparsed`) and left out of `entries`. For a caller that looks for
    one kind of line (the compaction watch) among many it does not use.
    """

    entries: list[Entry] = field(default_factory=list)
    start: ReadPosition = field(default_factory=ReadPosition)
    end: ReadPosition = field(default_factory=ReadPosition)
    malformed: int = 0
    invalid_utf8: int = 0
    oversized: int = 0
    bytes_read: int = 0
    partial_last_line: bool = False
    reached_start: bool = False
    reset_detected: bool = False
    unparsed: int = 0
    needle: bytes | None = field(default=None, repr=False, compare=False)

    @property
    def count(self) -> int:
        """Return how many entries the read has taken so far, parsed or not."""
        return len(self.entries) + self.unparsed

    def take(self, line: bytes | None) -> None:
        """Parse one line (None: too long to keep) and keep its entry or count it as skipped."""
        if line is None:
            self.oversized += 1
            return
        if self.needle is not None and self.needle not in line:
            if line.strip():
                self.unparsed += 1
            return
        try:
            entry = parse_line(line)
        except UnicodeDecodeError:
            self.invalid_utf8 += 1
            return
        except ValueError:
            self.malformed += 1
            return
        if entry is not None:
            self.entries.append(entry)
