"""memwarden's secrets file: one grammar, systemd's `EnvironmentFile=`, read by memwarden alone.

The rules are those of systemd.exec(5) (and its parser, `src/basic/env-file.c`): one
`KEY=VALUE` per line; lines starting with `#` or `;` are comments; whitespace around the key and
the value is dropped; a value may be single-quoted (everything verbatim up to the next `'`),
double-quoted (`\\"`, `\\\\`, `\\$` and `` \\` `` are escapes, any other backslash stays) or
bare (a backslash keeps the next character); a backslash at the end of a line continues it;
quoted values may span lines. Nothing is expanded: `$HOME` is those five characters.

Where systemd would read a line differently from what its writer surely meant, or drop it
without a word, it is a problem to fix rather than a guess: a line with no `=`, a name that is
not a variable name (`export NAME=…` included), a quote that is never closed, and a `#` after a
value (`KEY="C0123" # ops channel`), which systemd keeps as part of the value, not as a comment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

COMMENT_STARTS = "#;"
NEWLINES = "\n\r"
# In double quotes, a backslash before one of these is an escape; before anything else it stays.
DOUBLE_QUOTE_ESCAPES = '"\\`$'
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_BLANK_LINES = re.compile(r"[ \t\n\r]*")
_KEY = re.compile(r"[^=\n\r]*")
_GAP = re.compile(r"[ \t]*")
_QUOTED = {"'": re.compile(r"'([^']*)'"), '"': re.compile(r'"((?:[^"\\]|\\.)*)"', re.DOTALL)}
_DOUBLE_QUOTE_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
# Bare text runs to the end of the line; a backslash keeps the next character, a newline too.
_BARE = re.compile(r"(?:\\(?s:.)?|[^\\\n\r])*")
_BARE_PART = re.compile(r"\\((?s:.)?)|([ \t]+)|([^\\ \t]+)")
_REST_OF_LINE = re.compile(r"[^\n\r]*(?:\r\n?|\n)?")
_LINE_BREAK = re.compile(r"\r\n?|\n")


class EnvFileProblem(NamedTuple):
    """A line the grammar cannot read as its writer meant: where, and the fix."""

    line: int
    message: str


@dataclass
class EnvFile:
    """The variables a secrets file defines, in order, and the problems found reading it."""

    values: dict[str, str] = field(default_factory=dict)
    problems: list[EnvFileProblem] = field(default_factory=list)


def parse_env_text(text: str) -> EnvFile:
    """Given the text of an env file, return its variables and the lines it cannot read.

    A later assignment of a name replaces an earlier one, as in systemd. A line with a problem
    defines nothing.
    """
    result = EnvFile()
    position = _BLANK_LINES.match(text).end()
    while position < len(text):
        if text[position] in COMMENT_STARTS:
            position = _REST_OF_LINE.match(text, position).end()
        else:
            position = _read_assignment(text, position, result)
        position = _BLANK_LINES.match(text, position).end()
    return result


def _read_assignment(text: str, start: int, result: EnvFile) -> int:
    """Read the `NAME=VALUE` at `start`; return where the text goes on. Values never appear in
    a problem's message: a line of a secrets file may be a secret pasted on its own."""
    equals = _KEY.match(text, start).end()
    key = text[start:equals].rstrip(" \t")
    if text[equals : equals + 1] != "=":
        message = "expected NAME=VALUE: this line has no `=`"
        result.problems.append(EnvFileProblem(_line(text, start), message))
        return _REST_OF_LINE.match(text, equals).end()
    try:
        value, end = _read_value(text, equals + 1)
    except _ValueProblem as problem:
        result.problems.append(EnvFileProblem(_line(text, problem.position), problem.message))
        return _REST_OF_LINE.match(text, problem.resume).end()
    problem = _name_problem(key)
    if problem is None:
        result.values[key] = value
    else:
        result.problems.append(EnvFileProblem(_line(text, start), problem))
    return end


def _name_problem(key: str) -> str | None:
    """Return why the text before `=` is no variable name, with the fix, or None."""
    exported = key.removeprefix("export").strip(" \t")
    if key.startswith(("export ", "export\t")) and _NAME.match(exported):
        return f"`export {exported}=`: write `{exported}=` (this file is not a shell script)"
    if key.startswith("\ufeff"):
        return (
            "the file starts with a UTF-8 byte-order mark (some editors add it): save it as "
            "UTF-8 without BOM"
        )
    if not _NAME.match(key):
        return (
            "the text before `=` is not a variable name (letters, digits and _, not starting "
            "with a digit)"
        )
    return None


class _ValueProblem(Exception):
    """A value the grammar refuses: the position the problem is at, and where reading resumes
    (the rest of that line is skipped)."""

    def __init__(self, position: int, message: str, resume: int | None = None) -> None:
        super().__init__(message)
        self.position = position
        self.message = message
        self.resume = position if resume is None else resume


def _read_value(text: str, position: int) -> tuple[str, int]:
    """Read the value after the `=` at `position - 1`; return it and where its (last) line ends.

    Whitespace before the value and around quoted parts is dropped; quoted parts join up
    (`"a" 'b'` is `ab`); bare text runs to the end of the line, inner whitespace and quote
    characters included, trailing whitespace dropped.
    """
    parts: list[str] = []
    while True:
        gap = _GAP.match(text, position)
        position = gap.end()
        char = text[position : position + 1]
        if not char or char in NEWLINES:
            break
        if char in "'\"":
            quoted = _QUOTED[char].match(text, position)
            if quoted is None:
                message = f"the {char} opened on this line is never closed"
                raise _ValueProblem(position, message, resume=len(text))
            parts.append(quoted[1] if char == "'" else _DOUBLE_QUOTE_ESCAPE.sub(_escape, quoted[1]))
            position = quoted.end()
            continue
        bare = _BARE.match(text, position)
        parts.append(_bare_text(text, position, bare.end(), after_blank=bool(gap.group())))
        position = bare.end()
        break
    newline = _LINE_BREAK.match(text, position)
    return "".join(parts), newline.end() if newline else position


def _escape(found: re.Match) -> str:
    """A backslash in double quotes: an escape, a line continued, or a backslash kept."""
    char = found[1]
    if char in DOUBLE_QUOTE_ESCAPES:
        return char
    return "" if char == "\n" else "\\" + char


def _bare_text(text: str, start: int, end: int, after_blank: bool) -> str:
    """Return the bare text from `start` to `end` as systemd reads it: a backslash keeps the
    next character (one that ends a line continues it), trailing whitespace is dropped. A `#`
    after whitespace (`after_blank`: also before `start`) is a problem: no comment there."""
    kept: list[str] = []
    blank = ""  # whitespace, kept only when something follows it
    for part in _BARE_PART.finditer(text, start, end):
        escaped, whitespace, word = part.groups()
        if whitespace is not None:
            blank += whitespace
            after_blank = True
            continue
        if word is not None and word.startswith("#") and after_blank:
            raise _comment_after_value(part.start())
        after_blank = False
        shown = word if word is not None else escaped.strip(NEWLINES)
        if shown:
            kept += [blank, shown]
            blank = ""
    return "".join(kept)


def _comment_after_value(position: int) -> _ValueProblem:
    return _ValueProblem(
        position,
        "`#` after a value is not a comment in this file (systemd keeps it as part of the "
        "value): put the comment on a line of its own, or quote the whole value",
    )


def _line(text: str, position: int) -> int:
    """Return the number of the line `position` is on (a CR, LF or CRLF ends a line)."""
    return 1 + len(_LINE_BREAK.findall(text, 0, position))
