"""One configurable option: its key, kind, default, limits and description."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import orjson

KINDS = ("int", "float", "bool", "str", "path", "choice", "str_list", "str_map", "table_list")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class Option:
    """A setting. `key` is dotted (`section.name`); `kind` is one of KINDS.

    For `choice`, `choices` lists the allowed strings; for `table_list`, `fields` names the string
    fields every table must have (others are optional and listed in `optional_fields`); a
    `str_map` is one table of string values (`{ env = "prod" }`), whose names `pattern` must
    match when it is set. A `name_list` is a list of plain file names (no folder, no `..`).
    """

    key: str
    kind: str
    default: Any
    description: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    fields: tuple[str, ...] = ()
    optional_fields: tuple[str, ...] = ()
    secret: bool = False
    pattern_list: bool = False
    name_list: bool = False
    example: Any = None
    pattern: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"{self.key}: unknown kind {self.kind}")

    @property
    def section(self) -> str:
        return self.key.split(".", 1)[0]

    @property
    def name(self) -> str:
        return self.key.split(".", 1)[1]

    @property
    def env_name(self) -> str:
        return "MEMWARDEN_" + self.key.replace(".", "_").upper()

    def coerce(self, value: Any) -> Any:
        """Given a value read from TOML, return it typed. Raise ValueError if it does not fit."""
        checker = getattr(self, f"_coerce_{self.kind}")
        return checker(value)

    def coerce_text(self, text: str) -> Any:
        """Given a string from the environment, return it typed. Raise ValueError if invalid."""
        if self.kind in ("str_list", "str_map", "table_list"):
            try:
                return self.coerce(orjson.loads(text))
            except orjson.JSONDecodeError:
                if self.kind == "str_list":
                    return self.coerce([part.strip() for part in text.split(",") if part.strip()])
                what = (
                    "a JSON object of strings"
                    if self.kind == "str_map"
                    else "a JSON list of tables"
                )
                raise ValueError(f"expected {what}, got {text!r}") from None
        if self.kind == "bool":
            lowered = text.strip().lower()
            if lowered in _TRUE | _FALSE:
                return lowered in _TRUE
            raise ValueError(f"expected true or false, got {text!r}")
        if self.kind == "int":
            try:
                return self.coerce(int(text.strip()))
            except ValueError:
                raise ValueError(self._expected_number("an integer", text)) from None
        if self.kind == "float":
            try:
                return self.coerce(float(text.strip()))
            except ValueError:
                raise ValueError(self._expected_number("a number", text)) from None
        return self.coerce(text)

    def describe_type(self) -> str:
        """Return the type as a person reads it, with its limits."""
        names = {
            "int": "integer",
            "float": "number",
            "bool": "boolean",
            "str": "string",
            "path": "absolute path",
            "choice": "one of " + ", ".join(self.choices),
            "str_list": "list of strings",
            "str_map": "table of strings",
            "table_list": "list of tables {" + ", ".join(self.fields + self.optional_fields) + "}",
        }
        text = names[self.kind]
        if self.minimum is not None and self.maximum is not None:
            text += f" {_fmt(self.minimum)} to {_fmt(self.maximum)}"
        elif self.minimum is not None:
            text += f" ≥ {_fmt(self.minimum)}"
        return text

    def _expected_number(self, what: str, value: Any) -> str:
        limits = ""
        if self.minimum is not None and self.maximum is not None:
            limits = f" between {_fmt(self.minimum)} and {_fmt(self.maximum)}"
        elif self.minimum is not None:
            limits = f" ≥ {_fmt(self.minimum)}"
        shown = f'"{value}"' if isinstance(value, str) else repr(value)
        return f"expected {what}{limits}, got {shown}"

    def _check_range(self, number: float, what: str, original: Any) -> None:
        too_small = self.minimum is not None and number < self.minimum
        too_big = self.maximum is not None and number > self.maximum
        if too_small or too_big:
            raise ValueError(self._expected_number(what, original))

    def _coerce_int(self, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(self._expected_number("an integer", value))
        self._check_range(value, "an integer", value)
        return value

    def _coerce_float(self, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(self._expected_number("a number", value))
        self._check_range(float(value), "a number", value)
        return float(value)

    def _coerce_bool(self, value: Any) -> bool:
        if not isinstance(value, bool):
            raise ValueError(f"expected true or false, got {value!r}")
        return value

    def _coerce_str(self, value: Any) -> str:
        if not isinstance(value, str):
            raise ValueError(f"expected a string, got {value!r}")
        return value

    def _coerce_path(self, value: Any) -> str:
        if not isinstance(value, str):
            raise ValueError(f"expected a path string, got {value!r}")
        if value.strip() and not value.strip().startswith(("/", "~")):
            # A timer runs memwarden from another folder than the shell that tested it.
            raise ValueError(
                f'expected an absolute path (or one starting with ~), got "{value}": write it '
                "in full, memwarden runs from timers whose working folder differs"
            )
        return value

    def _coerce_choice(self, value: Any) -> str:
        if value not in self.choices:
            raise ValueError(f"expected one of {', '.join(self.choices)}, got {value!r}")
        return value

    def _coerce_str_list(self, value: Any) -> list[str]:
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ValueError(f"expected a list of strings, got {value!r}")
        for item in value:
            if self.pattern_list:
                _check_regex(item)
            if self.name_list:
                _check_file_name(item)
        return list(value)

    def _coerce_str_map(self, value: Any) -> dict[str, str]:
        if not isinstance(value, dict) or not all(isinstance(item, str) for item in value.values()):
            raise ValueError(f"expected a table of strings, got {value!r}")
        if self.pattern:
            wrong = [name for name in value if not re.fullmatch(self.pattern, name)]
            if wrong:
                raise ValueError(
                    f"invalid name(s) {', '.join(map(repr, wrong))}: expected {self.pattern}"
                )
        return dict(value)

    def _coerce_table_list(self, value: Any) -> list[dict[str, str]]:
        if not isinstance(value, list):
            raise ValueError(f"expected a list of tables, got {value!r}")
        allowed = set(self.fields) | set(self.optional_fields)
        tables = []
        for position, table in enumerate(value, start=1):
            if not isinstance(table, dict):
                raise ValueError(f"item {position}: expected a table, got {table!r}")
            missing = [name for name in self.fields if not isinstance(table.get(name), str)]
            unknown = sorted(set(table) - allowed)
            if missing:
                raise ValueError(f"item {position}: missing string field(s) {', '.join(missing)}")
            if unknown:
                raise ValueError(f"item {position}: unknown field(s) {', '.join(unknown)}")
            if self.pattern_list and "pattern" in table:
                _check_regex(table["pattern"])
            tables.append(dict(table))
        return tables


def _check_regex(pattern: str) -> None:
    try:
        re.compile(pattern)
    except re.error as error:
        raise ValueError(f"invalid regular expression {pattern!r}: {error}") from None


def _check_file_name(name: str) -> None:
    if not name or name in (".", "..") or any(mark in name for mark in "/\\\0"):
        raise ValueError(f"{name!r} is not a file name (a name such as MEMORY.md, no folder)")


def _fmt(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)
