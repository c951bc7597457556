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

COMMENT_STARTS = "#;"
WHITESPACE = " \t"
NEWLINES = "\n\r"
# In double quotes, a backslash before one of these is an escape; before anything else it stays.
DOUBLE_QUOTE_ESCAPES = '"\\`$'
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class EnvFileProblem:
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
    reader = _Reader(text)
    while not reader.done():
        reader.skip(WHITESPACE + NEWLINES)
        if reader.done():
            break
        start = reader.line
        if reader.peek() in COMMENT_STARTS:
            reader.skip_line()
            continue
        _read_assignment(reader, start, result)
    return result


def _read_assignment(reader: _Reader, start: int, result: EnvFile) -> None:
    """Read one `NAME=VALUE` (the reader is at its first character). Values never appear in a
    problem's message: a line of a secrets file may be a secret pasted on its own."""
    key = reader.take_until("=" + NEWLINES).rstrip(WHITESPACE)
    if reader.done() or reader.peek() != "=":
        result.problems.append(EnvFileProblem(start, "expected NAME=VALUE: this line has no `=`"))
        reader.skip_line()
        return
    reader.advance()
    try:
        value = _read_value(reader)
    except _ValueProblem as problem:
        result.problems.append(EnvFileProblem(problem.line, problem.message))
        reader.skip_line()
        return
    exported = key.removeprefix("export").strip(WHITESPACE)
    if key.startswith(("export ", "export\t")) and _NAME.match(exported):
        message = f"`export {exported}=`: write `{exported}=` (this file is not a shell script)"
        result.problems.append(EnvFileProblem(start, message))
    elif key.startswith("\ufeff"):
        message = (
            "the file starts with a UTF-8 byte-order mark (some editors add it): save it as "
            "UTF-8 without BOM"
        )
        result.problems.append(EnvFileProblem(start, message))
    elif not _NAME.match(key):
        result.problems.append(
            EnvFileProblem(
                start,
                "the text before `=` is not a variable name (letters, digits and _, not "
                "starting with a digit)",
            )
        )
    else:
        result.values[key] = value


class _ValueProblem(Exception):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def _read_value(reader: _Reader) -> str:
    """Read one value, from after the `=` to the end of its (last) line.

    Whitespace before the value and around quoted parts is dropped; quoted parts join up
    (`"a" 'b'` is `ab`); bare text runs to the end of the line, inner whitespace and quote
    characters included, trailing whitespace dropped.
    """
    parts: list[str] = []
    while True:
        gap = reader.take_while(WHITESPACE)
        if reader.done() or reader.peek() in NEWLINES:
            break
        char = reader.peek()
        if char == "#" and gap:
            raise _comment_after_value(reader.line)
        if char in "'\"":
            parts.append(_read_quoted(reader, char))
            continue
        parts.append(_read_bare(reader))
        break
    reader.skip_newline()
    return "".join(parts)


def _comment_after_value(line: int) -> _ValueProblem:
    return _ValueProblem(
        line,
        "`#` after a value is not a comment in this file (systemd keeps it as part of the "
        "value): put the comment on a line of its own, or quote the whole value",
    )


def _read_quoted(reader: _Reader, quote: str) -> str:
    opened = reader.line
    reader.advance()
    text: list[str] = []
    while True:
        if reader.done():
            raise _ValueProblem(opened, f"the {quote} opened on this line is never closed")
        char = reader.take()
        if char == quote:
            return "".join(text)
        if quote == '"' and char == "\\" and not reader.done():
            escaped = reader.take()
            if escaped in DOUBLE_QUOTE_ESCAPES:
                text.append(escaped)
            elif escaped != "\n":  # a backslash-newline continues the line
                text.append("\\" + escaped)
            continue
        text.append(char)


def _read_bare(reader: _Reader) -> str:
    """Read bare text to the end of the line; a backslash keeps the next character."""
    text: list[str] = []
    kept = 0  # length of the text without its trailing (unescaped) whitespace
    after_blank = False
    while not reader.done() and reader.peek() not in NEWLINES:
        char = reader.take()
        if char == "\\":
            if not reader.done():
                escaped = reader.take()
                if escaped not in NEWLINES:  # a backslash-newline continues the line
                    text.append(escaped)
                    kept = len(text)
            after_blank = False
            continue
        if char in WHITESPACE:
            text.append(char)
            after_blank = True
            continue
        if char == "#" and after_blank:
            raise _comment_after_value(reader.line)
        text.append(char)
        kept = len(text)
        after_blank = False
    return "".join(text[:kept])


class _Reader:
    """The text, a position in it, and the line number there."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.position = 0
        self.line = 1

    def done(self) -> bool:
        return self.position >= len(self.text)

    def peek(self) -> str:
        return self.text[self.position]

    def take(self) -> str:
        char = self.text[self.position]
        self.advance()
        return char

    def advance(self) -> None:
        if self.text[self.position] == "\n" or (
            self.text[self.position] == "\r"
            and self.text[self.position + 1 : self.position + 2] != "\n"
        ):
            self.line += 1
        self.position += 1

    def skip(self, chars: str) -> None:
        while not self.done() and self.peek() in chars:
            self.advance()

    def take_while(self, chars: str) -> str:
        start = self.position
        self.skip(chars)
        return self.text[start : self.position]

    def take_until(self, stops: str) -> str:
        start = self.position
        while not self.done() and self.peek() not in stops:
            self.advance()
        return self.text[start : self.position]

    def skip_line(self) -> None:
        self.take_until(NEWLINES)
        self.skip_newline()

    def skip_newline(self) -> None:
        if not self.done() and self.peek() == "\r":
            self.advance()
        if not self.done() and self.peek() == "\n":
            self.advance()
