"""Which hooks the gateway loads before and after `install hooks` selects memwarden's.

The two loaders are written out below as the gateway runs them: 2026.7.35
(dist/configured-*.js: hasConfiguredInternalHooks, resolveConfiguredInternalHookNames;
dist/loader-*.js: loadInternalHooks; dist/config-*.js: shouldIncludeHook) and 2026.9.6
(dist/configured-*.mjs: resolveInternalHookSelection, isHookLoadable; dist/loader-*.mjs:
prepareInternalHooks). tests/e2e/test_hook_selection_e2e.py checks them on the real gateways.
"""

from __future__ import annotations

from typing import Any

import pytest

from memwarden.gateway_hooks.selection import restored, selected
from memwarden.openclaw.gateway_settings import hook_selection

NAMES = ("memory-index-inject", "session-summary")
BUNDLED = (
    "boot-md",
    "bootstrap-extra-files",
    "command-logger",
    "compaction-notifier",
    "session-memory",
)
DISCOVERED = (*BUNDLED, "their-hook", *NAMES)


def internal(**settings: Any) -> dict:
    return {"hooks": {"internal": settings}}


def master_switch(config: dict) -> object:
    return config.get("hooks", {}).get("internal", {}).get("enabled", "absent")


def _parts(config: dict) -> tuple[dict, dict, bool, set[str]]:
    section = config.get("hooks", {}).get("internal") or {}
    entries = section.get("entries") or {}
    extra_dirs = any(folder.strip() for folder in section.get("load", {}).get("extraDirs", []))
    enabled = {name for name, entry in entries.items() if entry.get("enabled") is not False}
    return section, entries, extra_dirs, enabled


def _eligible(names: set[str] | None, entries: dict) -> set[str]:
    return {
        hook
        for hook in DISCOVERED
        if (names is None or hook in names) and entries.get(hook, {}).get("enabled") is not False
    }


def loaded_2026_7(config: dict) -> set[str]:
    section, entries, extra_dirs, enabled = _parts(config)
    if not section or section.get("enabled") is False:
        return set()
    if not (section.get("enabled") is True or enabled or extra_dirs):
        return set()
    open_discovery = section.get("enabled") is True or extra_dirs
    return _eligible(None if open_discovery else enabled, entries)


def loaded_2026_9(config: dict) -> set[str]:
    section, entries, extra_dirs, enabled = _parts(config)
    if section.get("enabled") is False:
        return set()
    if not (section.get("enabled") is True or enabled or extra_dirs):
        return set()
    open_discovery = extra_dirs or (not entries and section.get("enabled") is True)
    return _eligible(None if open_discovery else enabled, entries)


LOADERS = {"2026.7.35": loaded_2026_7, "2026.9.6": loaded_2026_9}
CONFIGS = {
    "stock": {},
    "empty hooks": {"hooks": {}},
    "empty entries": internal(entries={}),
    "the test harness's": internal(enabled=True, entries={"their-hook": {"enabled": True}}),
    "open": internal(enabled=True),
    "allowlist": internal(entries={"their-hook": {"enabled": True}}),
    "one bundled off": internal(enabled=True, entries={"session-memory": {"enabled": False}}),
    "extra dirs": internal(load={"extraDirs": ["/srv/hooks"]}),
    "extra dirs and a list": internal(
        load={"extraDirs": ["/srv/hooks"]}, entries={"their-hook": {"enabled": True}}
    ),
    "ours turned off": internal(entries={"session-summary": {"enabled": False, "env": {}}}),
}


@pytest.mark.parametrize("version", LOADERS)
@pytest.mark.parametrize("name", CONFIGS)
def test_install_loads_what_loaded_before_and_memwardens_hooks(version, name):
    loaded = LOADERS[version]
    before = CONFIGS[name]

    after = selected(before, NAMES)

    assert loaded(after) == loaded(before) | set(NAMES)
    assert master_switch(after) == master_switch(before)


def test_the_master_switch_would_load_every_bundled_hook_on_2026_7():
    """What `openclaw hooks enable` writes, and what an earlier memwarden wrote."""
    master = internal(enabled=True, entries={name: {"enabled": True} for name in NAMES})
    assert loaded_2026_7(master) == set(DISCOVERED)
    assert loaded_2026_9(master) == set(NAMES)
    assert loaded_2026_7(selected({}, NAMES)) == set(NAMES)


def test_hooks_turned_off_stay_off():
    before = internal(enabled=False, entries={"their-hook": {"enabled": True}})
    after = selected(before, NAMES)
    assert all(not loader(after) for loader in LOADERS.values())
    assert not hook_selection(after, "session-summary")[0]  # install leaves it to the operator


@pytest.mark.parametrize("name", CONFIGS)
def test_hook_selection_says_what_both_versions_load(name):
    config = CONFIGS[name]
    for hook in (*NAMES, "their-hook"):
        both = all(hook in loader(config) for loader in LOADERS.values())
        assert hook_selection(config, hook)[0] is both, hook


@pytest.mark.parametrize("name", CONFIGS)
def test_uninstall_puts_back_what_install_selected(name):
    before = CONFIGS[name]
    back, notes = restored(selected(before, NAMES), before, NAMES)
    assert (back, notes) == (before, [])


def test_uninstall_after_an_earlier_memwarden_also_takes_its_master_switch_back():
    earlier = internal(enabled=True, entries={name: {"enabled": True} for name in NAMES})
    back, notes = restored(earlier, {}, NAMES)
    assert (back, notes) == ({}, [])
    assert selected(back, NAMES) == internal(entries={name: {"enabled": True} for name in NAMES})


def test_uninstall_keeps_a_master_switch_other_hooks_may_rely_on():
    since = internal(
        enabled=True, entries={"their-hook": {"enabled": True}, NAMES[0]: {"enabled": True}}
    )
    back, notes = restored(since, {}, NAMES)
    assert back == internal(enabled=True, entries={"their-hook": {"enabled": True}})
    assert notes == [
        "hooks.internal.enabled kept: other hooks' entries changed since install, "
        "and they may rely on it"
    ]
