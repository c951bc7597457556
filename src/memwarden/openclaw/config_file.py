"""The gateway's config file (`openclaw.json`): JSON5, read once, with errors that say the fix."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from memwarden.errors import GatewayConfigError

_JSON5_ERROR = re.compile(r"^<string>:(?P<line>\d+) (?P<reason>.*) at column (?P<column>\d+)$")


def load_gateway_config(path: Path) -> dict[str, Any]:
    """Given the path of openclaw.json, return its content as a dict (`{}` if it does not exist).

    Raise GatewayConfigError (one line naming the file, the line and column when known, and the
    fix) if the file cannot be read, is not JSON5, or is not an object.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as error:
        raise GatewayConfigError(
            f"{path}: cannot read the gateway config ({error.strerror or error}); {_fix_hint(path)}"
        ) from error
    config = _parse_config(path, raw)
    if not isinstance(config, dict):
        raise GatewayConfigError(
            f"{path}: the gateway config is not a JSON object; {_fix_hint(path)}"
        )
    return config


def _parse_config(path: Path, raw: bytes) -> Any:
    try:
        return orjson.loads(raw)  # fast path: the gateway rewrites its config as plain JSON
    except orjson.JSONDecodeError:
        pass
    import json5  # only for configs a person edited by hand: plain JSON never needs it

    try:
        return json5.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as error:
        raise GatewayConfigError(
            f"{path}: the gateway config is not UTF-8 text; {_fix_hint(path)}"
        ) from error
    except (ValueError, RecursionError) as error:
        raise GatewayConfigError(
            f"{path}: {_describe_json5_error(error)}; {_fix_hint(path)}"
        ) from error


def _describe_json5_error(error: Exception) -> str:
    text = " ".join(str(error).split())
    match = _JSON5_ERROR.match(text)
    if match is None:
        return f"not valid JSON5: {text or type(error).__name__}"
    return (
        f"line {match['line']}, column {match['column']}: not valid JSON5: "
        f"{match['reason'][0].lower()}{match['reason'][1:]}"
    )


def _fix_hint(path: Path) -> str:
    return f"fix the syntax or restore {path.name}.bak / {path.name}.last-good"
