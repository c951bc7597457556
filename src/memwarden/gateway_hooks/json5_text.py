"""Change a few members of the gateway's JSON5 config text in place, every other byte kept.

The config may be JSON5 written by hand (comments, unquoted keys, trailing commas); the gateway
rewrites it as plain JSON. A new member goes last in its object, in its siblings' style (own
line and indentation, or inline; trailing comma or not), its key double-quoted; a removed member
takes its line(s) with it. The result must parse to exactly the config asked for.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from memwarden.openclaw.config_file import parse_json5

MISSING = object()  # no such member (before: to add; after: to remove)
_TOKEN = re.compile(
    r"""(?P<skip>[\s\ufeff]+|//[^\n]*|/\*.*?\*/)|(?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')"""
    r"""|[{}\[\]:,]|[^\s{}\[\]:,/"']+""",
    re.DOTALL,
)


class ConfigEditError(ValueError):
    """The text does not hold the config it was said to, or the edit would not mean the
    config asked for."""


@dataclass
class _Member:
    start: int  # the key's first character
    value_start: int
    value_end: int
    comma: int | None = None  # the comma after the value
    object: _Object | None = None  # the value, when it is an object


@dataclass
class _Object:
    start: int  # its `{`
    close: int  # its `}`
    members: dict[str, _Member] = field(default_factory=dict)


def edit(text: str, before: Mapping[str, Any], after: Mapping[str, Any]) -> str:
    """Given the config's text (empty: no file), the config it holds and the config wanted,
    return the text with the fewest members set or removed. Raise ConfigEditError if the text
    does not hold `before` or the edited text does not hold `after`."""
    text = text if text.strip() else "{}\n"
    try:
        if parse_json5(text.encode()) != before:
            raise ConfigEditError("the text does not hold the config it was read as")
        for path, value in changes(before, after):
            text = _change(text, path, value)
        result = parse_json5(text.encode())
    except (ValueError, KeyError, IndexError) as error:
        raise ConfigEditError(str(error) or "not one JSON5 object") from error
    if result != after:
        raise ConfigEditError("the edited text does not hold the expected config")
    return text


def changes(before: Any, after: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple, Any]]:
    """Given two values, return the fewest (key path, new value or MISSING) that turn one into
    the other: objects are compared member by member, anything else is replaced whole."""
    if before == after:
        return []
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        return [
            change
            for key in dict.fromkeys([*before, *after])
            for change in changes(before.get(key, MISSING), after.get(key, MISSING), (*path, key))
        ]
    return [(path, after)]


def _change(text: str, path: tuple[str, ...], value: Any) -> str:
    """Set (or with MISSING remove) the member at `path`, whose parent is an object in `text`."""
    tokens = [
        (match.lastgroup, match.group(), match.start())
        for match in _TOKEN.finditer(text)
        if match.lastgroup != "skip"
    ]
    root = _value(tokens, 0)[2]
    parent = root
    for key in path[:-1]:
        parent = parent.members[key].object
    member = parent.members.get(path[-1])
    unit = _indent_unit(text, root)
    if value is MISSING:
        for start, end in sorted(_spans(text, parent, path[-1]), reverse=True):
            text = text[:start] + text[end:]
        return text
    if member is not None:
        rendered = _render(value, _line_indent(text, member.start), unit)
        return text[: member.value_start] + rendered + text[member.value_end :]
    return _insert(text, parent, path[-1], value, unit)


def _value(tokens: list, index: int) -> tuple[int, int, _Object | None, int]:
    """Read the value at `tokens[index]`: its start and end offsets, the object it is (if one),
    and the index of the token after it."""
    _kind, symbol, start = tokens[index]
    if symbol not in ("{", "["):
        return start, start + len(symbol), None, index + 1
    closing, found = ("}" if symbol == "{" else "]"), _Object(start, 0)
    index += 1
    while tokens[index][1] != closing:
        member = None
        if symbol == "{":
            kind, key, key_start = tokens[index]
            value_start, value_end, inner, index = _value(tokens, index + 2)
            member = _Member(key_start, value_start, value_end, object=inner)
            found.members[str(parse_json5(key.encode())) if kind == "string" else key] = member
        else:
            index = _value(tokens, index)[3]
        if tokens[index][1] == ",":
            if member is not None:
                member.comma = tokens[index][2]
            index += 1
    found.close = tokens[index][2]
    return start, found.close + 1, found if symbol == "{" else None, index + 1


def _insert(text: str, parent: _Object, key: str, value: Any, unit: str) -> str:
    """Add `key: value` as the last member of `parent`."""
    if not parent.members:
        outer = _line_indent(text, parent.start)
        body = f"\n{outer}{unit}{_key(key)}: {_render(value, outer + unit, unit)}"
        closing = "" if "\n" in text[parent.start : parent.close] else f"\n{outer}"
        return text[: parent.start + 1] + body + closing + text[parent.start + 1 :]
    last = list(parent.members.values())[-1]
    after = last.comma + 1 if last.comma is not None else last.value_end
    line_end = text.find("\n", after)
    comma = "," if last.comma is not None else ""
    if _starts_line(text, last.start) and 0 <= line_end < parent.close:
        indent = _line_indent(text, last.start)
        body = f"\n{indent}{_key(key)}: {_render(value, indent, unit)}{comma}"
        end = last.value_end
        return text[:end] + ("" if comma else ",") + text[end:line_end] + body + text[line_end:]
    body = f"{_key(key)}: {_render(value, '', '')}"
    if comma:
        return text[:after] + f" {body}," + text[after:]
    return text[:after] + f", {body}" + text[after:]


def _spans(text: str, parent: _Object, key: str) -> list[tuple[int, int]]:
    """The spans removing member `key` deletes: the member (its whole lines when it starts one,
    with a comment that ends its last line), and the comma before it when it was the last
    member and has none of its own."""
    members = list(parent.members.values())
    member = parent.members[key]
    index = members.index(member)
    end = member.comma + 1 if member.comma is not None else member.value_end
    previous_comma = members[index - 1].comma if index > 0 else None
    if _starts_line(text, member.start):
        start = text.rfind("\n", 0, member.start) + 1
        line_end = text.find("\n", end)
        rest = text[end:line_end].strip()
        if line_end >= 0 and (not rest or rest.startswith("//")):
            end = line_end + 1
        if member.comma is None and previous_comma is not None:
            return [(previous_comma, previous_comma + 1), (start, end)]
        return [(start, end)]
    if member.comma is not None:
        return [(member.start, len(text) - len(text[end:].lstrip(" \t")))]
    if previous_comma is not None:
        return [(previous_comma, member.value_end)]
    return [(member.start, end)]


def _render(value: Any, indent: str, unit: str) -> str:
    """`value` as JSON: an object one member a line at `indent` + `unit` (inline when `unit`
    is empty), as `JSON.stringify(value, null, 2)` writes it."""
    if not isinstance(value, Mapping) or not value:
        return orjson.dumps(value).decode()
    if not unit:
        return "{" + ", ".join(f"{_key(k)}: {_render(v, '', '')}" for k, v in value.items()) + "}"
    inner = indent + unit
    lines = [f"{inner}{_key(k)}: {_render(v, inner, unit)}" for k, v in value.items()]
    return "{\n" + ",\n".join(lines) + f"\n{indent}}}"


def _key(key: str) -> str:
    return orjson.dumps(key).decode()


def _indent_unit(text: str, root: _Object) -> str:
    """The file's indentation step: that of the top object's first member, else 2 spaces."""
    first = next(iter(root.members.values()), None)
    indent = _line_indent(text, first.start) if first and _starts_line(text, first.start) else ""
    return indent or "  "


def _line_indent(text: str, position: int) -> str:
    line = text[text.rfind("\n", 0, position) + 1 : position]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _starts_line(text: str, position: int) -> bool:
    return not text[text.rfind("\n", 0, position) + 1 : position].strip(" \t")
