"""`memwarden install hooks` makes the gateway load memwarden's two hooks and no other hook it
did not load before (issue 27), on 2026.9.6 and 2026.7.35.

A stock config (no `hooks` section) loads no internal hook. After `install hooks` the gateway
loads memwarden's two and nothing else: its debug log names each hook it loads (`Registered
hook: <name> ->` on 2026.7.35, `Prepared hook: <name> ->` on 2026.9.6). A reset then runs
session-summary (a summary is written) and not the bundled session-memory (which would write
`memory/YYYY-MM-DD-HHMM.md` on 2026.7.35). `uninstall hooks` gives the config back byte for
byte. The control: `hooks.internal.enabled: true`, which `openclaw hooks enable` (and memwarden
before this fix) writes, makes both load every bundled hook, and 2026.7.35's session-memory
then writes its file on a reset.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from pathlib import Path

from harness import Gateway
from test_hooks_e2e import memwarden, wait_for

MEMWARDENS = {"memory-index-inject", "session-summary"}
BUNDLED = {
    "boot-md",
    "bootstrap-extra-files",
    "command-logger",
    "compaction-notifier",
    "session-memory",
}
LOADED = re.compile(r"^(?:Registered|Prepared) hook: (\S+) ->")
SESSION_MEMORY_FILE = re.compile(r"^\d{4}-\d{2}-\d{2}-\d{4}(-\d+)?\.md$")


def start_and_list_loaded_hooks(gateway: Gateway) -> set[str]:
    """Start the gateway, make one turn (its hooks are loaded by then) and return the names of
    the hooks this start loaded, from the debug lines of the JSON log."""
    log = gateway.openclaw_log
    offset = log.stat().st_size if log.exists() else 0
    gateway.start()
    gateway.agent_turn_rpc("Hello", session_key="agent:main:e2e-selection-warmup")
    with log.open("rb") as lines:
        lines.seek(offset)
        messages = [json.loads(line).get("1", "") for line in lines if line.strip()]
    return {match[1] for message in messages if (match := LOADED.match(str(message)))}


def reset_and_wait_for_summary(gateway: Gateway) -> None:
    """Make a turn in a new session, reset it, and wait for session-summary's summary."""
    tag = uuid.uuid4().hex[:8]
    key = f"agent:main:e2e-selection-{tag}"
    gateway.agent_turn_rpc(f"Plan the selection check {tag}", session_key=key)
    gateway.rpc("sessions.reset", {"key": key, "reason": "reset"})
    memory = gateway.workspace / "memory"

    def summarised() -> bool:
        return any(
            f"selection check {tag}" in path.read_text()
            for path in memory.glob("sessions/summaries/*-session-*.md")
        )

    wait_for(summarised, "no session summary was written after sessions.reset", gateway)


def test_install_hooks_loads_memwardens_hooks_and_no_others(gateway_factory, openclaw_bin: Path):
    gateway = gateway_factory(
        start=False, probe_hook=False, extra_config={"logging": {"level": "debug"}}
    )
    gateway.binary = openclaw_bin
    gateway.prepare()
    stock = gateway.config()
    del stock["hooks"]
    gateway.config_path.write_text("// a stock config\n" + json.dumps(stock, indent=2) + "\n")
    config_before = gateway.config_path.read_bytes()

    assert start_and_list_loaded_hooks(gateway) == set()
    gateway.stop()

    installed = json.loads(memwarden(gateway, "install", "hooks", "--json").stdout)
    assert installed["enabled_by"] == "config", installed
    assert gateway.read_config()["hooks"] == {
        "internal": {"entries": {name: {"enabled": True} for name in sorted(MEMWARDENS)}}
    }
    assert start_and_list_loaded_hooks(gateway) == MEMWARDENS
    assert "loaded 2 internal hook handlers" in gateway.log_tail(20_000)
    reset_and_wait_for_summary(gateway)
    time.sleep(2)  # session-memory writes after the reset (see the control): give it time
    files = [path.name for path in (gateway.workspace / "memory").iterdir()]
    assert not [name for name in files if SESSION_MEMORY_FILE.match(name)], files
    gateway.stop()

    removed = json.loads(memwarden(gateway, "uninstall", "hooks", "--json").stdout)
    assert removed["disabled_by"] == "restored", removed
    assert gateway.config_path.read_bytes() == config_before

    # the control: the master switch opens discovery to every bundled hook
    gateway.update_config({"hooks": {"internal": {"enabled": True}}})
    assert start_and_list_loaded_hooks(gateway) == BUNDLED
    if gateway.file_era:
        tag = uuid.uuid4().hex[:8]
        key = f"agent:main:e2e-selection-{tag}"
        gateway.agent_turn_rpc(f"Control {tag}", session_key=key)
        gateway.rpc("sessions.reset", {"key": key, "reason": "reset"})
        memory = gateway.workspace / "memory"

        def session_memory_file() -> bool:
            return any(SESSION_MEMORY_FILE.match(path.name) for path in memory.iterdir())

        wait_for(session_memory_file, "2026.7.35's session-memory wrote no file", gateway)
