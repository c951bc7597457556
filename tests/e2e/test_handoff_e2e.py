"""Each conversation resumes from its own handoff after `memwarden rotate`, on the real gateway.

One agent, two conversations: its main session and a direct chat with a peer
(`agent:main:telegram:direct:<peer>`). memwarden's hooks are installed (`memwarden install
hooks`); both conversations pass the rotation threshold and `memwarden rotate` checkpoints and
resets both (2026.9.6 in place, 2026.7.35 with a new session id and the old transcript renamed).
The fake model's recorded request of each conversation's next turn holds that conversation's own
pre-reset request text and none of the other's. Twice per gateway version: with a memory folder
that has an INDEX.md, and with an empty memory folder on default settings (no INDEX.md at all).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from harness import Gateway

from support.cli import run_subprocess

OVER_THRESHOLD = 170_000  # the default limit is min(150,000, 75% of the 200,000 window)
MAIN = "agent:main:main"


def memwarden(gateway: Gateway, *arguments: str, **extra: str):
    """Run memwarden against the gateway's state, with the gateway's environment (so memwarden
    shares its state with the session-summary hook's runs)."""
    env = {**gateway.env, "MEMWARDEN_ROTATE_QUIET_SECONDS": "0", **extra}
    result = run_subprocess("--state-dir", gateway.state_dir, *arguments, env=env, timeout=180)
    assert result.exit_code == 0, f"memwarden {' '.join(arguments)}:\n{result.stderr}"
    return result


def seed_memory(workspace: Path, tag: str) -> None:
    memory = workspace / "memory"
    (memory / "research").mkdir(parents=True)
    (memory / "research" / "herons.md").write_text(f"# Heron survey {tag}\n\n[FACT] grey\n")
    (memory / "2026-11-21.md").write_text("# 2026-11-21\n\n[DECISION] keep SQLite\n")


def assert_absent(words: str, prompt: str) -> None:
    """Fail, showing where, when the prompt holds another conversation's words."""
    at = prompt.find(words)
    assert at < 0, (
        f"{words!r} reached another conversation's prompt: …{prompt[at - 1500 : at + 200]}"
    )


def prompt_of_next_turn(gateway: Gateway, message: str, session_key: str | None = None) -> str:
    """Make one turn; return every request the fake model received for it, as JSON text."""
    gateway.llm.clear_requests()
    reply = gateway.agent_turn(message, session_key=session_key)
    assert reply["status"] == "ok", reply
    return json.dumps(gateway.llm.requests)


@pytest.mark.parametrize("memory", ["indexed", "empty"])
def test_each_conversation_resumes_from_its_own_handoff_after_rotate(
    gateway_factory, openclaw_bin: Path, memory: str
):
    tag = uuid.uuid4().hex[:8]
    peer = f"agent:main:telegram:direct:{tag}"
    gateway = gateway_factory(start=False)
    gateway.binary = openclaw_bin  # so `openclaw` is on the PATH memwarden install sees
    gateway.llm.start()  # before the config is written: it names the fake model's port
    gateway.prepare()
    index_threshold = {}
    if memory == "indexed":
        seed_memory(gateway.workspace, tag)
        index_threshold = {"MEMWARDEN_INDEX_THRESHOLD_KB": "0"}
        memwarden(gateway, "index", **index_threshold)
    else:
        assert not (gateway.workspace / "memory").exists()
    memwarden(gateway, "install", "hooks")
    gateway.start()

    main_request = f"Count the grey herons at pond {tag} before Friday"
    peer_request = f"Book the ferry to island {tag} for two"
    gateway.llm.prompt_tokens = OVER_THRESHOLD
    gateway.agent_turn(main_request)
    gateway.agent_turn(peer_request, session_key=peer)
    before = {row["key"]: row for row in gateway.sessions()}
    assert before[MAIN]["totalTokens"] == before[peer]["totalTokens"] == OVER_THRESHOLD

    result = memwarden(gateway, "rotate", "--json", **index_threshold)

    decided = {item["key"]: item for item in json.loads(result.stdout)["sessions"]}
    assert decided[MAIN]["status"] == decided[peer]["status"] == "rotated", decided
    after = {row["key"]: row for row in gateway.sessions()}
    for key in (MAIN, peer):
        same_id = after[key]["sessionId"] == before[key]["sessionId"]
        assert same_id is not gateway.file_era  # 2026.7.35: a new id; 2026.9.6: in place
        assert after[key]["totalTokens"] == 0
    files = gateway.workspace / "memory"
    assert main_request in (files / "ACTIVE_CONTEXT.md").read_text()
    peer_handoff = (files / "sessions" / f"main.telegram.direct.{tag}.md").read_text()
    assert peer_request in peer_handoff and main_request not in peer_handoff
    assert (files / "INDEX.md").exists() is (memory == "indexed")

    gateway.llm.prompt_tokens = 2_000
    main_prompt = prompt_of_next_turn(gateway, "Where were we?")
    peer_prompt = prompt_of_next_turn(gateway, "Where were we?", session_key=peer)

    assert main_request in main_prompt
    assert_absent(peer_request, main_prompt)
    assert peer_request in peer_prompt
    assert_absent(main_request, peer_prompt)
    if memory == "indexed":
        assert f"Heron survey {tag}" in main_prompt and f"Heron survey {tag}" in peer_prompt
        # INDEX.md, which both get, names no conversation's handoff: not the peer's identity.
        assert_absent(f"telegram.direct.{tag}", main_prompt)
