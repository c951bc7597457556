"""Doctor's judgement of the gateway's compaction, memory flush and hook selection settings."""

from __future__ import annotations

import pytest

from memwarden.doctor.gateway_config import check_compaction_mode, check_hook, check_memory_flush
from memwarden.openclaw.gateway_settings import (
    hook_installed,
    hook_selection,
    managed_hooks_dir,
    memory_flush,
)


def compaction(**settings) -> dict:
    return {"agents": {"defaults": {"compaction": settings}}}


def test_check_compaction_mode_default_is_ok():
    assert check_compaction_mode("default").severity == "ok"


def test_check_compaction_mode_safeguard_warns_why_and_gives_the_exact_command():
    finding = check_compaction_mode("safeguard")
    assert finding.severity == "warning"
    assert "empty summaries" in finding.message
    assert finding.fix == "openclaw config set agents.defaults.compaction.mode default"


def test_check_compaction_mode_unknown_mode_needs_action():
    assert check_compaction_mode("aggressive").severity == "action"


def test_memory_flush_default_is_on_with_4000_tokens():
    finding = check_memory_flush(memory_flush({}))
    assert finding.severity == "ok"
    assert "softThresholdTokens 4000" in finding.message


def test_memory_flush_disabled_warns_with_command_to_enable():
    finding = check_memory_flush(memory_flush(compaction(memoryFlush={"enabled": False})))
    assert finding.severity == "warning"
    assert finding.fix == "openclaw config set agents.defaults.compaction.memoryFlush.enabled true"


@pytest.mark.parametrize("threshold", [0, -5, "soon", True])
def test_memory_flush_unusable_threshold_warns(threshold):
    config = compaction(memoryFlush={"softThresholdTokens": threshold})
    finding = check_memory_flush(memory_flush(config))
    assert finding.severity == "warning"
    assert finding.fix.endswith("memoryFlush.softThresholdTokens 4000")


def internal(**settings) -> dict:
    return {"hooks": {"internal": settings}}


@pytest.mark.parametrize(
    ("config", "loaded"),
    [
        ({}, False),
        (internal(enabled=True), True),
        (internal(enabled=False, entries={"session-summary": {"enabled": True}}), False),
        (internal(entries={"session-summary": {}}), True),
        (internal(enabled=True, entries={"session-summary": {"enabled": False}}), False),
        (internal(enabled=True, entries={"oc-probe": {"enabled": True}}), False),
        # 2026.9.x: any named entry, a disabled one too, makes the list (2026.7.x loads all)
        (internal(enabled=True, entries={"oc-probe": {"enabled": False}}), False),
        (internal(load={"extraDirs": ["/srv/hooks"]}), True),
        (internal(load={"extraDirs": ["/srv/hooks"]}, entries={"oc-probe": {}}), True),
    ],
)
def test_hook_selection_follows_the_gateways_rules(config, loaded):
    assert hook_selection(config, "session-summary")[0] is loaded


def test_hook_missing_needs_install():
    selection = hook_selection({}, "session-summary")
    finding = check_hook("session-summary", False, "/s/hooks/session-summary", selection)
    assert (finding.severity, finding.fix) == ("action", "memwarden install hooks")


def test_hook_installed_but_not_selected_needs_enable_command():
    config = internal(enabled=True, entries={"oc-probe": {"enabled": True}})
    selection = hook_selection(config, "memory-index-inject")
    finding = check_hook("memory-index-inject", True, "/s", selection)
    assert finding.severity == "action"
    assert finding.fix == "memwarden install hooks"
    assert "only those load" in finding.message


def test_hook_installed_needs_hook_md_and_a_handler(tmp_path):
    folder = managed_hooks_dir(tmp_path) / "session-summary"
    folder.mkdir(parents=True)
    (folder / "HOOK.md").write_text("---\nname: session-summary\n---\n")
    assert not hook_installed(folder)
    (folder / "handler.ts").write_text("export default async () => {};\n")
    assert hook_installed(folder)
    (folder / "HOOK.md").unlink()
    assert not hook_installed(folder)
