"""Minimal edits of the gateway's JSON5 config text: set or remove one member, keep the rest.

The gateway's config is JSON5 a person may have written by hand (comments, unquoted keys,
trailing commas); the gateway itself rewrites it as plain JSON when it edits it. memwarden
changes only the members it owns, in place: everything else — comments, order, spacing, quoting —
stays byte for byte. A new member goes last in its object, in the style of its siblings
(indentation, trailing commas), its keys double-quoted (valid in JSON and JSON5); a removed
member takes its own line(s) with it. `edit` checks its result by parsing it: the text must mean
exactly the config asked for, else ConfigEditError and the caller leaves the file alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from memwarden.openclaw.config_file import parse_json5

DEFAULT_INDENT = "  "
_WHITESPACE = " \t\r\n\ufeff\u00a0\u2028\u2029\v\f"
_SCALAR_END = ",]}:/" + _WHITESPACE


class ConfigEditError(ValueError):
    """The text cannot be edited as asked (not JSON5, or a path through a non-object)."""


@dataclass
class _Member:
    key: str
    start: int  # first character of the key
    value: _Value
    comma: int | None = None  # position of the comma after the value, if any


@dataclass
class _Value:
    start: int
    end: int  # just past the value
    members: list[_Member] | None = None  # for an object
    close: int = 0  # for an object: position of its `}`

    def member(self, key: str) -> _Member | None:
        return next((m for m in self.members or [] if m.key == key), None)


@dataclass
class _Document:
    text: str
    root: _Value


Path = Sequence[str]
DELETE = object()


def edit(text: str, changes: Sequence[tuple[Path, Any]], expected: Mapping[str, Any]) -> str:
    """Given the config text, changes (key path, new value or DELETE) and the config they must
    give, return the edited text.

    Changes apply in order, each to the text the previous one left. Raise ConfigEditError if
    the text is not JSON5 with an object at the top, a path crosses a value that is not an
    object, or the result does not parse to `expected`.
    """
    for path, value in changes:
        text = remove_member(text, path) if value is DELETE else set_member(text, path, value)
    try:
        result = parse_json5(text.encode()) if text.strip() else {}
    except ValueError as error:
        raise ConfigEditError(f"the edited text is not JSON5: {error}") from error
    if result != expected:
        raise ConfigEditError("the edited text does not hold the expected config")
    return text


def set_member(text: str, path: Path, value: Any) -> str:
    """Return `text` with the member at `path` set to `value` (created, with its parents)."""
    if not text.strip():
        return _render(_nest(path, value), "", DEFAULT_INDENT) + "\n"
    document = _parse(text)
    node = document.root
    for depth, key in enumerate(path):
        member = node.member(key)
        if member is None:
            return _insert(document, node, key, _nest(path[depth + 1 :], value))
        if depth == len(path) - 1:
            indent = _line_indent(text, member.start)
            rendered = _render(value, indent, _indent_unit(document))
            return text[: member.value.start] + rendered + text[member.value.end :]
        if member.value.members is None:
            raise ConfigEditError(f"{'.'.join(path[: depth + 1])} is not an object")
        node = member.value
    raise ConfigEditError("an empty path names no member")


def remove_member(text: str, path: Path) -> str:
    """Return `text` without the member at `path` (unchanged when there is none)."""
    if not text.strip() or not path:
        return text
    document = _parse(text)
    node = document.root
    for key in path[:-1]:
        member = node.member(key)
        if member is None or member.value.members is None:
            return text
        node = member.value
    members = node.members or []
    target = node.member(path[-1])
    if target is None:
        return text
    for start, end in sorted(_member_spans(text, node, members.index(target)), reverse=True):
        text = text[:start] + text[end:]
    return text


# --- reading --------------------------------------------------------------------------------


def _parse(text: str) -> _Document:
    parser = _Parser(text)
    root = parser.value()
    parser.skip()
    if parser.position != len(text) or root.members is None:
        raise ConfigEditError("the config is not one JSON5 object")
    return _Document(text, root)


class _Parser:
    """Just enough of JSON5 to know where each value and member starts and ends."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.position = 0

    def skip(self) -> None:
        """Skip whitespace and comments."""
        text = self.text
        while self.position < len(text):
            char = text[self.position]
            if char in _WHITESPACE:
                self.position += 1
            elif text.startswith("//", self.position):
                newline = text.find("\n", self.position)
                self.position = len(text) if newline < 0 else newline
            elif text.startswith("/*", self.position):
                close = text.find("*/", self.position + 2)
                if close < 0:
                    raise ConfigEditError("a /* comment is never closed")
                self.position = close + 2
            else:
                return

    def value(self) -> _Value:
        self.skip()
        if self.position >= len(self.text):
            raise ConfigEditError("a value is missing")
        char = self.text[self.position]
        if char == "{":
            return self.object()
        if char == "[":
            return self.array()
        if char in "\"'":
            start = self.position
            self.string()
            return _Value(start, self.position)
        start = self.position
        while self.position < len(self.text) and self.text[self.position] not in _SCALAR_END:
            self.position += 1
        if self.position == start:
            raise ConfigEditError(f"unexpected {char!r} at offset {start}")
        return _Value(start, self.position)

    def object(self) -> _Value:
        start = self.position
        self.position += 1
        members: list[_Member] = []
        while True:
            self.skip()
            if self.expect_optional("}"):
                return _Value(start, self.position, members, self.position - 1)
            key_start = self.position
            key = self.key()
            self.skip()
            if not self.expect_optional(":"):
                raise ConfigEditError(f"expected ':' after a key at offset {key_start}")
            member = _Member(key, key_start, self.value())
            members.append(member)
            self.skip()
            if self.text.startswith(",", self.position):
                member.comma = self.position
                self.position += 1
            elif not self.text.startswith("}", self.position):
                raise ConfigEditError(f"expected ',' or '}}' at offset {self.position}")

    def array(self) -> _Value:
        start = self.position
        self.position += 1
        while True:
            self.skip()
            if self.expect_optional("]"):
                return _Value(start, self.position)
            self.value()
            self.skip()
            if not self.expect_optional(",") and not self.text.startswith("]", self.position):
                raise ConfigEditError(f"expected ',' or ']' at offset {self.position}")

    def key(self) -> str:
        start = self.position
        if self.position < len(self.text) and self.text[self.position] in "\"'":
            self.string()
            try:
                return str(parse_json5(self.text[start : self.position].encode()))
            except ValueError as error:
                raise ConfigEditError(f"a key at offset {start} is not a string") from error
        while self.position < len(self.text) and self.text[self.position] not in _SCALAR_END:
            self.position += 1
        if self.position == start:
            raise ConfigEditError(f"a key is missing at offset {start}")
        return self.text[start : self.position]

    def string(self) -> None:
        quote = self.text[self.position]
        self.position += 1
        while self.position < len(self.text):
            char = self.text[self.position]
            if char == "\\":
                self.position += 2
                continue
            self.position += 1
            if char == quote:
                return
        raise ConfigEditError("a string is never closed")

    def expect_optional(self, char: str) -> bool:
        if self.text.startswith(char, self.position):
            self.position += 1
            return True
        return False


# --- writing --------------------------------------------------------------------------------


def _insert(document: _Document, node: _Value, key: str, value: Any) -> str:
    """Add `key: value` as the last member of the object `node`."""
    text = document.text
    unit = _indent_unit(document)
    members = node.members or []
    if not members:
        outer = _line_indent(text, node.start)
        inner = outer + unit
        body = f"{_key(key)}: {_render(value, inner, unit)}"
        if "\n" in text[node.start : node.close]:
            return text[: node.close] + body + "\n" + outer + text[node.close :]
        return text[: node.start + 1] + f"\n{inner}{body}\n{outer}" + text[node.close :]
    last = members[-1]
    after = last.comma + 1 if last.comma is not None else last.value.end
    line_end = text.find("\n", after)
    multiline = _starts_line(text, last.start) and 0 <= line_end < node.close
    if multiline:
        indent = _line_indent(text, last.start)
        body = f"{_key(key)}: {_render(value, indent, unit)}"
        comma = "," if last.comma is not None else ""
        separator = "" if last.comma is not None else ","
        insertion = f"\n{indent}{body}{comma}"
        return (
            text[: last.value.end]
            + separator
            + text[last.value.end : line_end]
            + insertion
            + text[line_end:]
        )
    body = f"{_key(key)}: {_render(value, '', '')}"
    if last.comma is not None:
        return text[:after] + f" {body}," + text[after:]
    return text[: last.value.end] + f", {body}" + text[last.value.end :]


def _member_spans(text: str, node: _Value, index: int) -> list[tuple[int, int]]:
    """Return the spans of text that removing member `index` of `node` deletes: the member
    (its whole line(s) when it starts a line, with a comment that ends its last line), and the
    comma before it when it was the last member, without a trailing comma of its own."""
    members = node.members or []
    member = members[index]
    end = member.comma + 1 if member.comma is not None else member.value.end
    previous_comma = members[index - 1].comma if index > 0 else None
    if _starts_line(text, member.start):
        start = _line_start(text, member.start)
        line_end = text.find("\n", end)
        rest = text[end:line_end] if line_end >= 0 else text[end:]
        if line_end >= 0 and (not rest.strip() or rest.strip().startswith("//")):
            end = line_end + 1
        if member.comma is None and previous_comma is not None:
            return [(previous_comma, previous_comma + 1), (start, end)]
        return [(start, end)]
    if member.comma is not None:
        while end < len(text) and text[end] in " \t":
            end += 1
        return [(member.start, end)]
    if previous_comma is not None:
        return [(previous_comma, member.value.end)]
    return [(member.start, end)]


def _nest(path: Path, value: Any) -> Any:
    for key in reversed(path):
        value = {key: value}
    return value


def _render(value: Any, indent: str, unit: str) -> str:
    """Render `value` as JSON: objects one member a line at `indent` + `unit` (inline when
    `unit` is empty), as `JSON.stringify(…, null, 2)` does."""
    if isinstance(value, Mapping) and value:
        if not unit:
            inner = ", ".join(f"{_key(k)}: {_render(v, '', '')}" for k, v in value.items())
            return "{" + inner + "}"
        lines = [
            f"{indent}{unit}{_key(k)}: {_render(v, indent + unit, unit)}" for k, v in value.items()
        ]
        return "{\n" + ",\n".join(lines) + "\n" + indent + "}"
    return orjson.dumps(value).decode()


def _key(key: str) -> str:
    return orjson.dumps(key).decode()


def _indent_unit(document: _Document) -> str:
    """The indentation step of the file: that of the top object's first member, else 2 spaces."""
    members = document.root.members or []
    if members and _starts_line(document.text, members[0].start):
        indent = _line_indent(document.text, members[0].start)
        if indent:
            return indent
    return DEFAULT_INDENT


def _line_start(text: str, position: int) -> int:
    return text.rfind("\n", 0, position) + 1


def _line_indent(text: str, position: int) -> str:
    start = _line_start(text, position)
    line = text[start:position]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _starts_line(text: str, position: int) -> bool:
    return not text[_line_start(text, position) : position].strip(" \t")
