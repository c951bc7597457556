"""The gateway's own settings that decide whether memory survives: memory flush and hooks.

Key names and defaults as in openclaw 2026.7.35 and 2026.9.6: the `agents.defaults.compaction`
schema; memory-core's `buildMemoryFlushPlan` (the flush runs unless `memoryFlush.enabled` is
false; `softThresholdTokens` defaults to 4000); hook discovery and selection as
docs/automation/hooks/configuration.md describes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memwarden.openclaw.fields import mapping

DEFAULT_SOFT_THRESHOLD_TOKENS = 4000
HOOK_HANDLER_FILES = ("handler.js", "handler.ts", "index.js", "index.ts")


@dataclass(frozen=True)
class MemoryFlush:
    enabled: bool
    soft_threshold_tokens: object  # as configured (None when unset); the caller judges it


def memory_flush(config: Mapping[str, Any]) -> MemoryFlush:
    """Given the gateway config, return its pre-compaction memory flush settings."""
    flush = mapping(_get(config, "agents", "defaults", "compaction", "memoryFlush"))
    return MemoryFlush(flush.get("enabled") is not False, flush.get("softThresholdTokens"))


def managed_hooks_dir(state_dir: Path) -> Path:
    """Return the folder of managed hooks, where the gateway discovers `<name>/HOOK.md`."""
    return state_dir / "hooks"


def hook_installed(folder: Path) -> bool:
    """Whether `folder` holds a hook the gateway can load: HOOK.md and a handler."""
    return (folder / "HOOK.md").is_file() and any(
        (folder / handler).is_file() for handler in HOOK_HANDLER_FILES
    )


def hook_selection(config: Mapping[str, Any], name: str) -> tuple[bool, str]:
    """Given the gateway config and a managed hook's name, return (loaded, why).

    `hooks.internal.enabled: false` turns every internal hook off; `entries.<name>.enabled:
    false` turns this one off; named entries (or tracked installs) form an allowlist; with no
    entry, the master switch `true` (or extra hook folders) discovers every managed hook;
    with neither, the gateway loads no directory hook.
    """
    internal = mapping(_get(config, "hooks", "internal"))
    entries = mapping(internal.get("entries"))
    own = entries.get(name) if isinstance(entries.get(name), Mapping) else None
    if internal.get("enabled") is False:
        return False, "hooks.internal.enabled is false (every internal hook is off)"
    if own is not None and own.get("enabled") is False:
        return False, f"hooks.internal.entries.{name}.enabled is false"
    if own is not None:
        return True, f"hooks.internal.entries.{name} selects it"
    selected = [key for key, entry in entries.items() if not _disabled(entry)]
    installs = internal.get("installs")
    if selected or (isinstance(installs, Mapping) and installs):
        return False, "other hooks are named in hooks.internal.entries, and only those load"
    extra_dirs = _get(internal, "load", "extraDirs")
    if internal.get("enabled") is True or (isinstance(extra_dirs, list) and extra_dirs):
        return True, "hooks.internal.enabled is true (every managed hook loads)"
    return False, "no internal hook is enabled, so the gateway loads none"


def _disabled(entry: object) -> bool:
    return isinstance(entry, Mapping) and entry.get("enabled") is False


def _get(data: Mapping[str, Any], *keys: str) -> Any:
    current: Any = data
    for key in keys:
        if not isinstance(current, Mapping):
            return None
        current = current.get(key)
    return current
