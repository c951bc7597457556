"""What `install hooks` and `uninstall hooks` change in the gateway config: decided, not done.

memwarden owns these keys of the gateway config, and no other: `hooks.internal.enabled`,
`hooks.internal.entries.<hook>` for its two hooks, and the `hooks`, `hooks.internal`,
`hooks.internal.entries` objects when it had to create them. Enabling sets them as
`openclaw hooks enable` does; restoring puts back what they were before the install, keeping
every other change made since.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from memwarden.openclaw.config_edit import DELETE
from memwarden.openclaw.fields import mapping

MISSING = object()
ENABLED = ("hooks", "internal", "enabled")
ENTRIES = ("hooks", "internal", "entries")
CONTAINERS = (ENTRIES, ("hooks", "internal"), ("hooks",))


def hooks_switched(config: Mapping[str, Any], names: Sequence[str], enable: bool) -> dict:
    """Given the gateway config, return a copy with the hooks enabled (or disabled).

    Enabling sets `hooks.internal.enabled` and each `hooks.internal.entries.<name>.enabled`;
    disabling sets the entries' `enabled` to false and leaves the rest alone, as
    `openclaw hooks enable|disable` do.
    """
    updated = copy.deepcopy(dict(config))
    hooks = updated.setdefault("hooks", {})
    internal = hooks.setdefault("internal", {})
    if enable:
        internal["enabled"] = True
    entries = internal.setdefault("entries", {})
    for name in names:
        entry = entries.get(name) if isinstance(entries.get(name), dict) else {}
        if not enable and not entry:
            continue
        entries[name] = {**entry, "enabled": enable}
    return updated


def is_switched(config: Mapping[str, Any], names: Sequence[str], enable: bool) -> bool:
    """Return True when the config already has the hooks enabled (or not enabled)."""
    internal = mapping(mapping(config.get("hooks")).get("internal"))
    entries = mapping(internal.get("entries"))
    states = [mapping(entries.get(name)).get("enabled") is True for name in names]
    if enable:
        return internal.get("enabled") is True and all(states)
    return not any(states)


def restored(
    current: Mapping[str, Any], before: Mapping[str, Any] | None, names: Sequence[str]
) -> tuple[dict, list[str]]:
    """Given the config now, the config before the install (None: not known) and the hooks,
    return the config with memwarden's keys put back, and what was kept and why.

    Each hook's entry becomes what it was before (absent, most often). The master switch
    `hooks.internal.enabled` goes back too, unless it is no longer what install set or other
    hooks' entries changed since (they may rely on it); without `before` it stays. An object
    install created that is empty again goes.
    """
    target = copy.deepcopy(dict(current))
    known = before if before is not None else {}
    for name in names:
        _put(target, (*ENTRIES, name), _get(known, (*ENTRIES, name)))
    notes = []
    if before is not None and _get(current, ENABLED) != _get(before, ENABLED):
        others_then = _other_entries(before, names)
        if _get(current, ENABLED) is not True:
            notes.append("hooks.internal.enabled was changed since install: left as it is")
        elif _other_entries(current, names) != others_then:
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


def changes(
    current: Mapping[str, Any], target: Mapping[str, Any], path: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], Any]]:
    """Given two configs, return the fewest (key path, value or DELETE) that turn one into the
    other: objects are compared member by member, anything else is replaced whole."""
    old, new = _get(current, path), _get(target, path)
    if old == new:
        return []
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        found = []
        for key in dict.fromkeys([*old, *new]):
            found += changes(current, target, (*path, key))
        return found
    return [(path, DELETE if new is MISSING else new)]


def _other_entries(config: Mapping[str, Any], names: Sequence[str]) -> dict:
    entries = mapping(_get(config, ENTRIES))
    return {key: value for key, value in entries.items() if key not in names}


def _get(config: Any, path: Sequence[str]) -> Any:
    current = config
    for key in path:
        if not isinstance(current, Mapping) or key not in current:
            return MISSING
        current = current[key]
    return current


def _put(config: dict, path: Sequence[str], value: Any) -> None:
    """Set `path` to `value` (creating objects on the way), or remove it when MISSING."""
    parent = config
    for key in path[:-1]:
        child = parent.get(key)
        if not isinstance(child, dict):
            if value is MISSING:
                return
            child = parent[key] = {}
        parent = child
    if value is MISSING:
        parent.pop(path[-1], None)
    else:
        parent[path[-1]] = copy.deepcopy(value)
