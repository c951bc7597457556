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
    """Given the gateway config and a managed hook's name, return (loaded, why): whether both
    2026.7.x and 2026.9.x load it (their `hooks/configured` modules).

    `hooks.internal.enabled: false` turns every internal hook off; `entries.<name>.enabled:
    false` turns this one off; its entry selects it; a non-empty `load.extraDirs` opens
    discovery to every hook; other named entries (2026.9.x counts disabled ones too) or tracked
    installs form an allowlist; with none, the master switch `true` discovers every hook; with
    neither, the gateway loads no directory hook.
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
    extra_dirs = _get(internal, "load", "extraDirs")
    if isinstance(extra_dirs, list) and any(str(folder).strip() for folder in extra_dirs):
        return True, "hooks.internal.load.extraDirs opens discovery (every managed hook loads)"
    installs = internal.get("installs")
    if entries or (isinstance(installs, Mapping) and installs):
        return False, "other hooks are named in hooks.internal.entries, and only those load"
    if internal.get("enabled") is True:
        return True, "hooks.internal.enabled is true (every managed hook loads)"
    return False, "no internal hook is enabled, so the gateway loads none"


def _get(data: Mapping[str, Any], *keys: str) -> Any:
    current: Any = data
    for key in keys:
        if not isinstance(current, Mapping):
            return None
        current = current.get(key)
    return current
