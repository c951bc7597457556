"""Judgement of the gateway's own settings that decide whether memory survives compaction.

The settings are read by `memwarden.openclaw.gateway_settings`; here they are only judged.
"""

from __future__ import annotations

from collections.abc import Sequence

from memwarden.doctor.finding import Finding
from memwarden.openclaw.gateway_settings import DEFAULT_SOFT_THRESHOLD_TOKENS, MemoryFlush

COMPACTION_MODES = ("default", "safeguard")
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


def check_memory_flush(flush: MemoryFlush) -> Finding:
    """Given the gateway's memory flush settings, judge them."""
    if not flush.enabled:
        return Finding(
            "compaction.memory_flush",
            "warning",
            "agents.defaults.compaction.memoryFlush.enabled is false: the agent gets no silent "
            "turn to save its memory before compaction",
            f"{SET_COMMAND} agents.defaults.compaction.memoryFlush.enabled true",
        )
    threshold = flush.soft_threshold_tokens
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


def check_hook(
    name: str,
    installed: bool,
    folder: str,
    selection: tuple[bool, str],
    outdated: Sequence[str] = (),
) -> Finding:
    """Given a hook's name, whether its folder is complete, where, whether the gateway's config
    selects it (`hook_selection`) and what is out of date in the installed copy, judge it."""
    loaded, why = selection
    if not installed:
        problem = f"the {name} hook is not installed in {folder}"
    elif not loaded:
        problem = f"the {name} hook is installed but not enabled: {why}"
    elif outdated:
        problem = (
            f"the {name} hook in {folder} is not the one this memwarden ships: "
            f"{'; '.join(outdated)}"
        )
    else:
        return Finding(f"hooks.{name}", "ok", f"the {name} hook is installed and enabled ({why})")
    # Not `openclaw hooks enable` for a hook not enabled: it sets hooks.internal.enabled, with
    # which 2026.7.x loads every bundled hook too.
    return Finding(f"hooks.{name}", "action", problem, "memwarden install hooks")
