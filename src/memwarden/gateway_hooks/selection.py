"""Which keys of the gateway config select memwarden's hooks at install, and what uninstall
puts back: decided, not done.

Install adds `hooks.internal.entries.<hook>: {"enabled": true}` for each of its hooks the config
does not load yet, and nothing else: named entries are an allowlist on both 2026.7.x and 2026.9.x,
so the gateway then loads what it loaded before and memwarden's two. It never sets
`hooks.internal.enabled: true` (`openclaw hooks enable` does): 2026.7.x then loads every hook
it finds, the bundled ones too, whatever the entries say. Uninstall puts back memwarden's
entries, the master switch an earlier memwarden set, and the objects install created.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from memwarden.openclaw.fields import mapping
from memwarden.openclaw.gateway_settings import hook_selection

MISSING = object()  # a key that is not there
ENABLED = ("hooks", "internal", "enabled")
ENTRIES = ("hooks", "internal", "entries")
CONTAINERS = (ENTRIES, ("hooks", "internal"), ("hooks",))


def selected(config: Mapping[str, Any], names: Sequence[str]) -> dict:
    """Given the gateway config, return a copy that selects the hooks `names` as well: an
    entry `enabled: true` for each one it does not load yet (see `hook_selection`)."""
    updated = copy.deepcopy(dict(config))
    for name in names:
        if not hook_selection(updated, name)[0]:
            entry = mapping(_get(updated, (*ENTRIES, name)))
            _put(updated, (*ENTRIES, name), {**entry, "enabled": True})
    return updated


def restored(
    current: Mapping[str, Any], before: Mapping[str, Any] | None, names: Sequence[str]
) -> tuple[dict, list[str]]:
    """Given the config now, the config before the install (None: not known) and the hooks,
    return the config with memwarden's keys put back, and what was kept and why.

    Each hook's entry becomes what it was before (absent, most often). The master switch
    `hooks.internal.enabled` (which an earlier memwarden set) goes back too, unless it is no
    longer `true` or other hooks' entries changed since (they may rely on it); without `before`
    it stays. An object install created that is empty again goes.
    """
    target = copy.deepcopy(dict(current))
    known = before if before is not None else {}
    for name in names:
        _put(target, (*ENTRIES, name), _get(known, (*ENTRIES, name)))
    notes = []
    if before is not None and _get(current, ENABLED) != _get(before, ENABLED):
        if _get(current, ENABLED) is not True:
            notes.append("hooks.internal.enabled was changed since install: left as it is")
        elif _other_entries(current, names) != _other_entries(before, names):
            notes.append(
                "hooks.internal.enabled kept: other hooks' entries changed since install, "
                "and they may rely on it"
            )
        else:
            _put(target, ENABLED, _get(before, ENABLED))
    for container in CONTAINERS:
        if _get(known, container) is MISSING and _get(target, container) == {}:
            _put(target, container, MISSING)
    return target, notes


def _other_entries(config: Mapping[str, Any], names: Sequence[str]) -> dict:
    entries = mapping(_get(config, ENTRIES))
    return {key: value for key, value in entries.items() if key not in names}


def _get(config: Any, path: Sequence[str]) -> Any:
    for key in path:
        if not isinstance(config, Mapping) or key not in config:
            return MISSING
        config = config[key]
    return config


def _put(config: dict, path: Sequence[str], value: Any) -> None:
    """Set `path` to `value` (creating objects on the way), or remove it when MISSING."""
    parent = config
    for key in path[:-1]:
        if not isinstance(parent.get(key), dict):
            if value is MISSING:
                return
            parent[key] = {}
        parent = parent[key]
    if value is MISSING:
        parent.pop(path[-1], None)
    else:
        parent[path[-1]] = copy.deepcopy(value)
