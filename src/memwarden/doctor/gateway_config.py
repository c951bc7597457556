"""Checks of the gateway's own settings that decide whether memory survives compaction.

Key names and defaults as in openclaw 2026.7.35 and 2026.9.6 (`agents.defaults.compaction`
schema; memory-core's `buildMemoryFlushPlan`: the flush runs unless `memoryFlush.enabled` is
false, `softThresholdTokens` defaults to 4000; hook selection as docs/automation/hooks/
configuration.md describes it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memwarden.doctor.finding import Finding

COMPACTION_MODES = ("default", "safeguard")
DEFAULT_SOFT_THRESHOLD_TOKENS = 4000
SET_COMMAND = "openclaw config set"


def check_compaction_mode(mode: str) -> Finding:
    """Given the gateway's compaction mode (`Deployment.compaction_mode()`), judge it."""
    fix = f"{SET_COMMAND} agents.defaults.compaction.mode default"
    if mode == "default":
        return Finding("compaction.mode", "ok", 'agents.defaults.compaction.mode is "default"')
    if mode == "safeguard":
        return Finding(
            "compaction.mode",
            "warning",
            'agents.defaults.compaction.mode is "safeguard": safeguard compaction has produced '
            "empty summaries, and a session compacted that way keeps nothing of what came "
            'before its last turns; "default" is the mode memwarden is tested with',
            fix,
        )
    return Finding(
        "compaction.mode",
        "action",
        f"agents.defaults.compaction.mode is {mode!r}; the gateway accepts only "
        f"{' or '.join(repr(m) for m in COMPACTION_MODES)} and refuses this config",
        fix,
    )


def check_memory_flush(config: Mapping[str, Any]) -> Finding:
    """Given the gateway config, judge the pre-compaction memory flush settings."""
    flush = _get(config, "agents", "defaults", "compaction", "memoryFlush")
    flush = flush if isinstance(flush, Mapping) else {}
    if flush.get("enabled") is False:
        return Finding(
            "compaction.memory_flush",
            "warning",
            "agents.defaults.compaction.memoryFlush.enabled is false: the agent gets no silent "
            "turn to save its memory before compaction",
            f"{SET_COMMAND} agents.defaults.compaction.memoryFlush.enabled true",
        )
    threshold = flush.get("softThresholdTokens")
    if threshold is not None and (
        isinstance(threshold, bool) or not isinstance(threshold, int | float) or threshold <= 0
    ):
        return Finding(
            "compaction.memory_flush",
            "warning",
            f"agents.defaults.compaction.memoryFlush.softThresholdTokens is {threshold!r}: the "
            "flush starts only at the compaction threshold itself, too late to write memory",
            f"{SET_COMMAND} agents.defaults.compaction.memoryFlush.softThresholdTokens "
            f"{DEFAULT_SOFT_THRESHOLD_TOKENS}",
        )
    shown = "default " if threshold is None else ""
    tokens = DEFAULT_SOFT_THRESHOLD_TOKENS if threshold is None else int(threshold)
    return Finding(
        "compaction.memory_flush",
        "ok",
        f"pre-compaction memory flush on ({shown}softThresholdTokens {tokens})",
    )


def hook_selection(config: Mapping[str, Any], name: str) -> tuple[bool, str]:
    """Given the gateway config and a managed hook's name, return (loaded, why).

    `hooks.internal.enabled: false` turns every internal hook off; `entries.<name>.enabled:
    false` turns this one off; named entries (or tracked installs) form an allowlist; with no
    entry, the master switch `true` (or extra hook folders) discovers every managed hook;
    with neither, the gateway loads no directory hook.
    """
    internal = _get(config, "hooks", "internal")
    internal = internal if isinstance(internal, Mapping) else {}
    entries = internal.get("entries") if isinstance(internal.get("entries"), Mapping) else {}
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


def check_hook(config: Mapping[str, Any], name: str, installed: bool, folder: str) -> Finding:
    """Given the config, a hook's name, whether its folder is complete and where, judge it."""
    key = f"hooks.{name}"
    if not installed:
        return Finding(
            key,
            "action",
            f"the {name} hook is not installed in {folder}",
            "memwarden install hooks",
        )
    loaded, why = hook_selection(config, name)
    if not loaded:
        return Finding(
            key,
            "action",
            f"the {name} hook is installed but not enabled: {why}",
            f"openclaw hooks enable {name}",
        )
    return Finding(key, "ok", f"the {name} hook is installed and enabled ({why})")


def _disabled(entry: object) -> bool:
    return isinstance(entry, Mapping) and entry.get("enabled") is False


def _get(data: Mapping[str, Any], *keys: str) -> Any:
    current: Any = data
    for key in keys:
        if not isinstance(current, Mapping):
            return None
        current = current.get(key)
    return current
