"""memwarden's gateway hooks on the real gateway (2026.9.6 and 2026.7.35).

One private gateway per version: `memwarden index` writes INDEX.md and the bootstrap manifest,
`memwarden install hooks` installs and enables both hooks (editing the gateway's JSON5 config in
place, though the `openclaw` CLI is on PATH), then the gateway starts and:

- an agent turn's system prompt, as the fake model receives it, holds INDEX.md and that
  conversation's handoff (memory-index-inject), which leaves a delivery receipt in the folder
  install named in its memwarden.json; another session's holds INDEX.md only, as the handoff
  names the session it was written from;
- `sessions.reset` makes the session-summary hook start `memwarden summarize`, which writes
  `memory/YYYY-MM-DD-<slug>.md` for the window that ended;
- `sessions.compact` makes it start `memwarden checkpoint --session KEY --force`, which writes
  the session's handoff before the compaction summary replaces the conversation;
- `memwarden doctor` finds both hooks installed and enabled and the gateway reachable.

And on a running gateway, `install hooks` then `uninstall hooks` leaves its config byte for byte
as it was and its state dir without a backup file or a hooks folder of memwarden's.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from harness import Gateway

from support.cli import run_subprocess

WAIT_SECONDS = 90


def memwarden(gateway: Gateway, *arguments: str, **extra: str):
    """Run memwarden against the gateway's state with the gateway's own environment."""
    env = {**gateway.env, **extra}
    result = run_subprocess("--state-dir", gateway.state_dir, *arguments, env=env, timeout=180)
    assert result.exit_code == 0, f"memwarden {' '.join(arguments)}:\n{result.stderr}"
    return result


def wait_for(check: Callable[[], object], what: str, gateway: Gateway) -> object:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.5)
    raise AssertionError(f"{what} within {WAIT_SECONDS}s\n{gateway.log_tail()}")


def session_key(tag: str) -> str:
    return f"agent:main:e2e-hooks-{tag}"


def handoff_of(workspace: Path, tag: str) -> Path:
    """The handoff file of `session_key(tag)` (not the main session: under memory/sessions/)."""
    return workspace / "memory" / "sessions" / f"main.e2e-hooks-{tag}.md"


def seed_memory(workspace: Path, tag: str) -> None:
    memory = workspace / "memory"
    (memory / "research").mkdir(parents=True, exist_ok=True)
    handoff_of(workspace, tag).parent.mkdir(parents=True, exist_ok=True)
    handoff_of(workspace, tag).write_text(
        "# Conversation Handoff\n\n"
        f"> - session: `{session_key(tag)}` (id `seeded`)\n\n"  # injected into that session only
        f"active-{tag}: migrating\n"
    )
    (memory / "research" / "herons.md").write_text(f"# Heron survey {tag}\n\n[FACT] grey\n")
    (memory / "2026-11-21.md").write_text("# 2026-11-21\n\n[DECISION] keep SQLite\n")


@pytest.fixture
def hooked_gateway(gateway_factory, openclaw_bin: Path) -> tuple[Gateway, str]:
    gateway = gateway_factory(start=False)
    gateway.binary = openclaw_bin  # so `openclaw` is on the PATH memwarden install sees
    gateway.llm.start()  # before the config is written: it names the fake model's port
    gateway.prepare()
    tag = uuid.uuid4().hex[:8]
    seed_memory(gateway.workspace, tag)
    memwarden(gateway, "index", MEMWARDEN_INDEX_THRESHOLD_KB="0")
    installed = json.loads(memwarden(gateway, "install", "hooks", "--json").stdout)
    assert installed["enabled_by"] == "config", installed
    entries = gateway.read_config()["hooks"]["internal"]["entries"]
    assert entries["memory-index-inject"] == entries["session-summary"] == {"enabled": True}
    gateway.start()
    return gateway, tag


def test_hooks_inject_index_summarise_resets_and_checkpoint_compactions(hooked_gateway):
    gateway, tag = hooked_gateway
    key = session_key(tag)
    memory = gateway.workspace / "memory"

    gateway.llm.clear_requests()
    reply = gateway.agent_turn(f"Plan the heron migration {tag} please", session_key=key)
    assert reply["status"] == "ok", reply

    prompts = "\n".join(gateway.llm.system_prompts())
    assert f"Heron survey {tag}" in prompts  # a row of INDEX.md
    assert "# Memory index" in prompts
    assert f"active-{tag}: migrating" in prompts  # the conversation's own handoff
    assert str(memory / "INDEX.md") in prompts
    # its receipt, in the folder install named in memwarden.json, which status reads
    settings = json.loads((gateway.hooks_dir / "memory-index-inject/memwarden.json").read_text())
    receipt = Path(settings["deliveries"]) / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"
    wait_for(receipt.is_file, f"no delivery receipt {receipt}", gateway)
    status = json.loads(memwarden(gateway, "status", "--json").stdout)
    delivered = {item["session_key"]: item for item in status["handoff_deliveries"]}
    assert delivered[key]["handoff"] == "whole", delivered

    gateway.llm.clear_requests()  # another session: INDEX.md, never this session's context
    other = gateway.agent_turn(f"Hello from another peer {tag}", session_key=f"{key}-other")
    assert other["status"] == "ok", other
    prompts = "\n".join(gateway.llm.system_prompts())
    assert f"Heron survey {tag}" in prompts
    assert f"active-{tag}: migrating" not in prompts
    assert f"main.e2e-hooks-{tag}.md" not in prompts  # INDEX.md names no conversation's handoff

    gateway.rpc("sessions.reset", {"key": key, "reason": "reset"})

    def summary() -> Path | None:
        for path in memory.glob("sessions/summaries/*.md"):
            text = path.read_text()
            if text.startswith("# Session summary") and f"heron migration {tag}" in text:
                return path
        return None

    path = wait_for(summary, "no session summary was written after sessions.reset", gateway)
    assert path.name.endswith(f"-session-main.e2e-hooks-{tag}.md")  # never the conversation's words
    # never among the dated notes a typed /new quotes into any session, another peer's too
    assert list(memory.glob("*-session-*.md")) == []
    assert path.read_text().startswith(f"# Session summary — `{key}`\n")

    gateway.agent_turn(f"Now compact this {tag} conversation", session_key=key)
    handoff = handoff_of(gateway.workspace, tag)
    handoff.unlink()  # only a checkpoint writes it again (one of the operator's would be kept)
    gateway.compact(key)

    def checkpointed() -> bool:
        return handoff.exists() and f"Now compact this {tag} conversation" in handoff.read_text()

    wait_for(checkpointed, "no checkpoint was written after sessions.compact", gateway)

    # doctor sees what the real gateway sees: both hooks installed, current and selected, the
    # gateway answering with its token, and the harness's "safeguard" compaction mode.
    result = run_subprocess(
        "--state-dir", gateway.state_dir, "doctor", "--json", env=gateway.env, timeout=180
    )
    found = {item["key"]: item for item in json.loads(result.stdout)["findings"]}
    for name in ("hooks.memory-index-inject", "hooks.session-summary", "gateway.reachable"):
        assert found[name]["severity"] == "ok", found[name]
    assert found["gateway.config"]["severity"] == "ok", found["gateway.config"]
    assert gateway.compaction_mode == "safeguard"
    assert found["compaction.mode"]["severity"] == "warning", found["compaction.mode"]
    assert "empty summaries" in found["compaction.mode"]["message"]


def test_install_then_uninstall_hooks_on_a_running_gateway_leaves_it_as_it_was(
    gateway_factory, openclaw_bin: Path
):
    gateway = gateway_factory()
    gateway.binary = openclaw_bin
    config_before = gateway.config_path.read_bytes()
    names_before = {path.name for path in gateway.state_dir.iterdir()}
    hooks_before = sorted(path.name for path in gateway.hooks_dir.iterdir())

    installed = json.loads(memwarden(gateway, "install", "hooks", "--json").stdout)
    assert installed["enabled_by"] == "config", installed
    entries = gateway.read_config()["hooks"]["internal"]["entries"]
    assert entries["memory-index-inject"] == entries["session-summary"] == {"enabled": True}
    assert gateway.config_path.read_text().startswith("// openclaw")  # its comment is kept
    removed = json.loads(memwarden(gateway, "uninstall", "hooks", "--json").stdout)

    assert removed["disabled_by"] == "restored", removed
    assert gateway.config_path.read_bytes() == config_before
    assert sorted(path.name for path in gateway.hooks_dir.iterdir()) == hooks_before
    new = {path.name for path in gateway.state_dir.iterdir()} - names_before
    # The gateway itself may keep a copy of a config it reloaded (OPENCLAW.md): not ours.
    new.discard("openclaw.json.last-good")
    assert not [name for name in new if "openclaw.json" in name or "memwarden" in name], new
