"""One configurable option: its key, kind, default, limits and description."""

from __future__ import annotations

import math
import re
from typing import Any, NamedTuple

import orjson

from memwarden.settings.urls import shown_url, url_problem

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}
# Texts an operator's named pattern is tried on for an empty match (one that mangles every text).
_PROBES = ("", "x a-Z_0.9:/\n")
# The name of a rule {name, pattern}: it is shown in the text, as `[REDACTED:<name>]`.
RULE_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,40}$")
ENV_PREFIX = "MEMWARDEN_"


def env_name(key: str) -> str:
    """Given an option's key (`section.name`), return its environment variable."""
    return ENV_PREFIX + key.replace(".", "_").upper()


class Option(NamedTuple):
    """A setting. `key` is dotted (`section.name`); `kind` is int, float, bool, str, path,
    choice, str_list, str_map or table_list (`describe_type` names each; `_coerce_<kind>` reads it).

    For `choice`, `choices` lists the allowed strings; for `table_list`, `fields` names the string
    fields every table must have (others are optional and listed in `optional_fields`); a
    `str_map` is one table of string values (`{ env = "prod" }`), whose names `pattern` must
    match when it is set, and which may not be one of `reserved_names`. A `name_list` is a list
    of plain file names (no folder, no `..`). A `str_list` with `choices` takes only those
    strings, and with `non_empty` at least one. A `str` or `str_list` with `url_schemes` holds
    URLs of those schemes (an empty string: none), and with `api_path` base URLs to which
    memwarden adds that path (a URL ending in it, or in a part of it, is refused). A `path`
    that is an `existing_file` must name a file memwarden can read when set:
    `memwarden.settings.config` checks that once every source is read.
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
    reserved_names: tuple[str, ...] = ()
    non_empty: bool = False
    url_schemes: tuple[str, ...] = ()
    api_path: str = ""
    existing_file: bool = False

    @property
    def section(self) -> str:
        return self.key.split(".", 1)[0]

    @property
    def name(self) -> str:
        return self.key.split(".", 1)[1]

    @property
    def env_name(self) -> str:
        return env_name(self.key)

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
        if self.kind in ("int", "float"):
            try:
                return self.coerce(int(text.strip()) if self.kind == "int" else float(text.strip()))
            except ValueError:
                raise ValueError(self._expected_number(text)) from None
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
            "str_list": "list of any of " + ", ".join(self.choices)
            if self.choices
            else "list of strings",
            "str_map": "table of strings",
            "table_list": "list of tables {" + ", ".join(self.fields + self.optional_fields) + "}",
        }
        text = names[self.kind]
        if self.url_schemes:
            urls = " or ".join(f"{scheme}://" for scheme in self.url_schemes) + " URL"
            text = f"list of {urls}s" if self.kind == "str_list" else urls
        if self.non_empty:
            text = "non-empty " + text
        if self.existing_file:
            text += " of a file"
        return text + self._limits(" {} to {}")

    def _limits(self, between: str) -> str:
        """Return the limits as ` ≥ 1`, or `between` filled with both limits."""
        if self.minimum is not None and self.maximum is not None:
            return between.format(_fmt(self.minimum), _fmt(self.maximum))
        return f" ≥ {_fmt(self.minimum)}" if self.minimum is not None else ""

    def _expected_number(self, value: Any) -> str:
        what = "an integer" if self.kind == "int" else "a number"
        shown = f'"{value}"' if isinstance(value, str) else repr(value)
        return f"expected {what}{self._limits(' between {} and {}')}, got {shown}"

    def _coerce_number(self, value: Any) -> int | float:
        numbers = int if self.kind == "int" else int | float
        if isinstance(value, bool) or not isinstance(value, numbers):
            raise ValueError(self._expected_number(value))
        try:
            number = value if self.kind == "int" else float(value)
        except OverflowError:  # an integer too large for a float
            raise ValueError(self._expected_number(value)) from None
        if isinstance(number, float) and not math.isfinite(number):  # NaN is never out of range
            raise ValueError(self._expected_number(value))
        too_small = self.minimum is not None and number < self.minimum
        too_big = self.maximum is not None and number > self.maximum
        if too_small or too_big:
            raise ValueError(self._expected_number(value))
        return number

    _coerce_int = _coerce_float = _coerce_number

    def _coerce_bool(self, value: Any) -> bool:
        if not isinstance(value, bool):
            word = value.strip().lower() if isinstance(value, str) else ""
            hint = f" (write it without quotes: {word})" if word in ("true", "false") else ""
            raise ValueError(f"expected true or false, got {value!r}{hint}")
        return value

    def _coerce_str(self, value: Any) -> str:
        if not isinstance(value, str):
            raise ValueError(f"expected a string, got {value!r}")
        if self.url_schemes and value.strip():
            self._check_url(value.strip())
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
            hint = ""
            if isinstance(value, int | float) and not isinstance(value, bool):
                written = {str(value), format(value, "o")} if isinstance(value, int) else set()
                meant = [choice for choice in self.choices if choice.lstrip("0") in written]
                hint = f' (write it in quotes: "{meant[0] if meant else value}")'
            raise ValueError(f"expected one of {', '.join(self.choices)}, got {value!r}{hint}")
        return value

    def _coerce_str_list(self, value: Any) -> list[str]:
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ValueError(f"expected a list of strings, got {value!r}")
        for item in value:
            if self.name_list and not is_plain_name(item):
                raise ValueError(
                    f"{item!r} is not a file name (a name such as MEMORY.md, no folder)"
                )
            if self.url_schemes and item.strip():
                self._check_url(item.strip())
        if self.choices:
            wrong = [item for item in value if item not in self.choices]
            if wrong:
                raise ValueError(
                    f"expected any of {', '.join(self.choices)}, got {', '.join(map(repr, wrong))}"
                )
        if self.non_empty and not value:
            among = f" of {', '.join(self.choices)}" if self.choices else ""
            raise ValueError(f"expected at least one{among}, got []")
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
        reserved = [name for name in value if name in self.reserved_names]
        if reserved:
            raise ValueError(
                f"{', '.join(map(repr, reserved))}: memwarden sets this name itself; choose "
                "another name"
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
            if self.pattern_list:
                _check_rule(table["name"], table["pattern"])
            tables.append(dict(table))
        return tables

    def _check_url(self, url: str) -> None:
        problem = url_problem(url, self.url_schemes)
        if problem is None:
            self._check_base_url(url)
            return
        expected = "expected a URL starting with " + " or ".join(
            f"{scheme}://" for scheme in self.url_schemes
        )
        if self.secret:
            raise ValueError(f"{expected} ({problem}; the value is a secret, not shown)")
        raise ValueError(f"{expected}, got {shown_url(url)!r} ({problem})")

    def _check_base_url(self, url: str) -> None:
        """Raise ValueError if `url` ends in the API path memwarden adds to it (or its first
        segments, `/api/v2`): every call would go to that path twice and fail with a 404."""
        from urllib.parse import urlsplit  # only when a URL is set

        segments = self.api_path.strip("/").split("/")
        endings = ["/" + "/".join(segments[:count]) for count in range(2, len(segments) + 1)]
        path = urlsplit(url).path.rstrip("/")
        ending = next((end for end in endings if path.endswith(end)), None)
        if not self.api_path or ending is None:
            return
        raise ValueError(
            f"expected a base URL, got {shown_url(url)!r}: memwarden adds {self.api_path} "
            f"itself; remove {ending} from its end"
        )


def _check_rule(name: str, pattern: str) -> None:
    """Raise ValueError if a rule {name, pattern} has a name that cannot be shown, a pattern
    that does not compile, or one that matches an empty text: every match is replaced, and an
    empty one would be replaced between every two characters."""
    if not RULE_NAME.match(name):
        raise ValueError(
            f"rule {name!r}: a name is lower-case letters, digits, - or _ (up to 41 characters)"
        )
    try:
        compiled = re.compile(pattern)
    except re.error as error:
        raise ValueError(f"invalid regular expression {pattern!r}: {error}") from None
    if any(not match.group() for probe in _PROBES for match in compiled.finditer(probe)):
        raise ValueError(
            f"rule {name!r}: pattern {pattern!r} matches an empty text, so it would be replaced "
            "between every two characters: make it match at least one character (+ instead of *)"
        )


def is_plain_name(value: str) -> bool:
    """Return True when `value` is one plain file-name component (no folder, no `.`/`..`)."""
    return bool(value) and value not in {".", ".."} and not any(mark in value for mark in "/\\\0")


def _fmt(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)
