"""The XDG base folders (config, state, cache), as the XDG Base Directory spec defines them."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def xdg_home(env: Mapping[str, str], variable: str, fallback: str) -> Path:
    """Given the environment, an XDG variable (`XDG_STATE_HOME`) and its default below the home
    (`.local/state`), return the folder. A relative value is ignored, as the spec says. Raise
    RuntimeError or KeyError if there is no value and no home."""
    value = env.get(variable)
    if value and Path(value).expanduser().is_absolute():
        return Path(value).expanduser()
    home = env.get("HOME")
    return (Path(home) if home else Path.home()) / fallback
