"""Render the schema as an example TOML file and as a Markdown table, and a Config as TOML."""

from __future__ import annotations

import re
import textwrap
from typing import Any

import orjson

from memwarden.settings import ALL_OPTIONS, SECTIONS, Option

MASK = "********"
_URL_PASSWORD = re.compile(r"(\w+://[^/@:\s]*:)[^/@\s]+@")


def toml_value(value: Any) -> str:
    """Return `value` written as a TOML value (strings, numbers, booleans, lists, tables)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return orjson.dumps(value).decode()
    if isinstance(value, list):
        if value and all(isinstance(item, dict) for item in value):
            inner = ",\n".join("  " + toml_value(item) for item in value)
            return "[\n" + inner + ",\n]"
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def example_toml() -> str:
    """Return the example config: every option, commented out at its default, with its help."""
    lines = [
        "## memwarden example configuration: every option, commented out at its default.",
        "## Copy to ~/.config/memwarden/config.toml and uncomment what you change.",
        "## Each option can also be set in the environment: MEMWARDEN_<SECTION>_<OPTION>",
        "## (e.g. MEMWARDEN_SCHEDULE_HEALTH_MINUTES=10). Secrets go in the secrets file",
        "## (mode 0600): memwarden refuses one set here.",
        "## Generated from the schema by `memwarden config example`; do not edit by hand.",
    ]
    for section, description in SECTIONS.items():
        options = [option for option in ALL_OPTIONS if option.section == section]
        lines += ["", f"## {description}", f"[{section}]"]
        for option in options:
            lines.append("")
            text = f"{option.description} ({option.describe_type()}; env {option.env_name})"
            lines += ["## " + line for line in textwrap.wrap(text, 96)]
            if option.secret:  # no line to uncomment: memwarden refuses a secret here
                continue
            value = option.example if option.example is not None else option.default
            lines += ["# " + line for line in f"{option.name} = {toml_value(value)}".splitlines()]
    return "\n".join(lines) + "\n"


def docs_markdown() -> str:
    """Return the options reference as Markdown: one table per section."""
    lines = [
        "# Configuration reference",
        "",
        "Generated from the schema by `memwarden config docs`; `make config-example` refreshes it.",
        "memwarden reads `--config FILE`, else `$MEMWARDEN_CONFIG`, else",
        "`$XDG_CONFIG_HOME/memwarden/config.toml`; then the secrets file; then the environment",
        "(`MEMWARDEN_<SECTION>_<OPTION>`), which wins. Unknown keys and bad values are all",
        "reported at once and memwarden exits 2. `memwarden config show` prints first the values",
        "in use that memwarden works out (gateway state dir, gateway URL, storage dir, config and",
        "secrets files) with what chose each (a flag, a variable, a config file, the default),",
        "then every setting with its source, secrets masked. The annotated example is",
        "`config/memwarden.example.toml`.",
    ]
    for section, description in SECTIONS.items():
        options = [option for option in ALL_OPTIONS if option.section == section]
        lines += ["", f"## [{section}]", "", description, ""]
        lines += [
            "| option | type | default | environment | description |",
            "|---|---|---|---|---|",
        ]
        for option in options:
            default = toml_value(option.default).replace("\n", " ")
            description = option.description.replace("|", "\\|")
            row = (
                f"| `{option.name}` | {option.describe_type()} | `{default}` | "
                f"`{option.env_name}` | {description} |"
            )
            lines.append(row)
    return "\n".join(lines) + "\n"


def effective_toml(values: dict[str, Any], sources: dict[str, str]) -> str:
    """Return the effective settings as TOML, secrets masked, each line noting its source."""
    lines: list[str] = []
    for section in SECTIONS:
        options = [option for option in ALL_OPTIONS if option.section == section]
        lines += ["" if lines else None, f"[{section}]"]
        for option in options:
            value = masked(option, values[option.key])
            source = sources.get(option.key, "default")
            lines.append(f"{option.name} = {toml_value(value)}  # {source}")
    return "\n".join(line for line in lines if line is not None) + "\n"


def without_password(text: str) -> str:
    """Return `text` with the password of any URL in it (`ws://user:password@host`) masked."""
    return _URL_PASSWORD.sub(rf"\1{MASK}@", text)


def masked(option: Option, value: Any) -> Any:
    """Return `value`, or a mask when the option is a secret that is set; a password in a URL
    (`http://user:password@host`) is masked in any option."""
    if option.secret and value:
        return MASK
    if isinstance(value, str):
        return without_password(value)
    if isinstance(value, list):
        return [masked(option, item) for item in value]
    return value
