"""The gateway's config file (`openclaw.json`): JSON5, read once, with errors that say the fix."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from memwarden.fs.files import read_regular_file
from memwarden.process.errors import GatewayConfigError, NotRegularFileError

_NEAR = re.compile(r" near (?P<position>\d+)")
_UNCLOSED = re.compile(r"Unclosed b'(?P<what>\w+)'")


class Json5Error(ValueError):
    """Text that is not JSON5; the message says where (line and column, when known) and why."""


def parse_json5(raw: bytes) -> Any:
    """Given the bytes of a JSON5 file of the gateway, return its value.

    Strict JSON (what the gateway writes when it rewrites a file) is parsed by orjson; anything
    else by pyjson5, a compiled JSON5 parser (imported only then): either takes well under a
    second for megabytes. Raise UnicodeDecodeError if the bytes are not UTF-8, Json5Error if
    the text is not JSON5.
    """
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass
    import pyjson5

    text = raw.decode("utf-8-sig")
    try:
        return pyjson5.loads(text)
    except pyjson5.Json5Exception as error:
        raise _json5_error(text, error) from None


def is_gateway_config(raw: bytes) -> bool:
    """Whether the bytes are a gateway config the gateway could load: JSON5 holding an object."""
    try:
        return isinstance(parse_json5(raw), dict)
    except (UnicodeDecodeError, ValueError):
        return False


def load_gateway_config(path: Path) -> dict[str, Any]:
    """Given the path of openclaw.json, return its content as a dict (`{}` if it does not exist).

    Raise GatewayConfigError (one line naming the file, the line and column when known, and the
    fix) if the file cannot be read, is not JSON5, or is not an object.
    """
    try:
        raw = read_regular_file(path)
    except FileNotFoundError:
        return {}
    except NotRegularFileError as error:
        raise GatewayConfigError(
            f"{path}: the gateway config {error.strerror.removeprefix('it ')}; point memwarden "
            "at the gateway's own openclaw.json (--state-dir, $OPENCLAW_CONFIG_PATH)"
        ) from error
    except OSError as error:
        raise GatewayConfigError(
            f"{path}: cannot read the gateway config ({error.strerror or error}); {_fix_hint(path)}"
        ) from error
    try:
        config = parse_json5(raw)
    except UnicodeDecodeError as error:
        raise GatewayConfigError(
            f"{path}: the gateway config is not UTF-8 text; {_fix_hint(path)}"
        ) from error
    except Json5Error as error:
        raise GatewayConfigError(f"{path}: {error}; {_fix_hint(path)}") from error
    if not isinstance(config, dict):
        raise GatewayConfigError(
            f"{path}: the gateway config is not a JSON object; {_fix_hint(path)}"
        )
    return config


def _json5_error(text: str, error: Any) -> Json5Error:
    """Turn pyjson5's error ("Expected … near <1-based position>, found U+0040") into a
    Json5Error naming the line and column, with a reason people read."""
    import pyjson5

    message = str(error.args[0]) if error.args else type(error).__name__
    near = _NEAR.search(message)
    if isinstance(error, pyjson5.Json5NestingTooDeep):
        reason = "nested too deeply"
    elif isinstance(error, pyjson5.Json5EOF):
        unclosed = _UNCLOSED.search(message)
        what = unclosed["what"].lower() if unclosed else ""
        what = what if what in ("array", "object", "string") else "value"
        reason = f"the {what} that starts here is never closed"
    elif isinstance(error, pyjson5.Json5ExtraData):
        reason = "more text after the end of the value"
    else:
        found = error.args[2] if len(error.args) > 2 and isinstance(error.args[2], str) else None
        reason = f"unexpected {found!r}" if found else " ".join(message.split())
    if near is None:
        return Json5Error(f"not valid JSON5: {reason}")
    offset = min(max(int(near["position"]) - 1, 0), len(text))
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return Json5Error(f"line {line}, column {column}: not valid JSON5: {reason}")


def _fix_hint(path: Path) -> str:
    return f"fix the syntax or restore {path.name}.bak / {path.name}.last-good"
