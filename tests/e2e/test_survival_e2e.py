"""Memory survival on the real gateway: every item a conversation held reaches its next prompt
after a rotation, an operator reset (between two timer runs) and a compaction, and nothing of
another conversation does.

One agent, two conversations (its main session and a direct chat with a peer), each planted over
seven turns with 16 items of every kind: marked lines ([DECISION] … [PREFERENCE]), open tasks
(`- [ ]`, `TODO:`, `[TODO]`), file paths, plain names and numbers the user gave, and two marked
lines the assistant said. memwarden's hooks are installed (`memwarden install hooks`) and its
jobs run as the timers run them. The fake model records every prompt: an item survives when its
token is in the system prompt of the conversation's next turn (where the bootstrap hook puts
the handoff: after a compaction the kept turns do not count), and no token of the other
conversation may be anywhere in that turn's requests.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from harness import Gateway

from support.cli import run_subprocess

OVER_THRESHOLD = 170_000  # the default rotation limit is min(150,000, 75% of the 200,000 window)
MAIN = "agent:main:main"
# Only the last turns stay in the context after a compaction (the gateway's default keeps them
# all in a conversation this short, and the test would prove nothing).
KEEP_LITTLE = {"agents": {"defaults": {"compaction": {"keepRecentTokens": 40}}}}


@dataclass
class Conversation:
    """A conversation's key and the tokens of the items planted in it."""

    key: str
    tokens: list[str]

    def survival(self, prompt: str) -> list[str]:
        """Return the tokens missing from `prompt`."""
        return [token for token in self.tokens if token not in prompt]


def turns_of(tag: str) -> tuple[list[tuple[str, str | None]], list[str]]:
    """Seven turns (request, the fake model's reply or None for its canned one) planting 16
    items, each carrying a token unique to `tag`; return the turns and the tokens."""
    t = [f"{tag}x{number:02d}" for number in range(16)]
    turns = [
        (f"Let's start.\n[DECISION] use PostgreSQL 16 for orders {t[0]}\n"
         f"The database owner is Ada {t[1]}.", None),
        (f"Plan:\n- [ ] write the schema migration {t[2]}\nThe code lives in src/{t[3]}/orders.py",
         f"Noted.\n[SOLUTION] batch the inserts by 500 rows {t[4]}"),
        (f"TODO: rotate the API keys {t[5]}\n[GOTCHA] WAL mode needs the -shm file {t[6]}", None),
        (f"[TODO] benchmark the bulk insert {t[7]}\nThe budget is {t[8]} euros.", None),
        (f"[PREFERENCE] answers in French {t[9]}\nThe settings are in config/{t[10]}/prod.toml",
         f"Understood.\n[FACT] the staging region is eu-west-3 {t[11]}"),
        (f"[TRADEOFF] replicas cost more but read faster {t[12]}\n"
         f"The launch is on Thursday with Bram {t[13]}.", None),
        (f"[PATTERN] every migration gets a rollback {t[14]}\nRead docs/{t[15]}/runbook.md",
         None),
    ]  # fmt: skip
    return turns, t


def memwarden(gateway: Gateway, *arguments: str, **extra: str):
    """Run memwarden as the timers do, with the gateway's environment (the hook's runs share
    its state)."""
    env = {**gateway.env, "MEMWARDEN_ROTATE_QUIET_SECONDS": "0", **extra}
    result = run_subprocess("--state-dir", gateway.state_dir, *arguments, env=env, timeout=180)
    assert result.exit_code == 0, f"memwarden {' '.join(arguments)}:\n{result.stderr}"
    return result


def hooked_gateway(gateway: Gateway, openclaw_bin: Path) -> Gateway:
    """Install memwarden's hooks into a gateway not started yet, then start it."""
    gateway.binary = openclaw_bin  # so `openclaw` is on the PATH memwarden install sees
    gateway.llm.start()  # before the config is written: it names the fake model's port
    gateway.prepare()
    memwarden(gateway, "install", "hooks")
    return gateway.start()


@pytest.fixture(scope="module")
def hooked(
    openclaw_version: str, openclaw_bin: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Gateway]:
    """One gateway per version with memwarden's hooks, shared by the scenarios below (each
    with conversations of its own): compaction mode `default`, and only the last turns kept
    in the context after a compaction."""
    root = tmp_path_factory.mktemp(f"gw-{openclaw_version}-survival")
    gateway = Gateway(openclaw_version, root, compaction_mode="default", extra_config=KEEP_LITTLE)
    try:  # not `with`: that starts the gateway, and 2026.7.x loads hooks only as it starts
        yield hooked_gateway(gateway, openclaw_bin)
    finally:
        gateway.close()


def plant(gateway: Gateway, key: str, turns: list[tuple[str, str | None]]) -> None:
    for request, reply in turns:
        gateway.llm.reply = reply or "Hello from the fake LLM. (canned reply)"
        gateway.agent_turn_rpc(request, session_key=key)
    gateway.llm.reply = "Hello from the fake LLM. (canned reply)"


def next_turn(gateway: Gateway, key: str) -> tuple[str, str]:
    """Make the conversation's next turn; return its system prompts and all its requests, as
    the fake model received them."""
    gateway.llm.clear_requests()
    gateway.agent_turn_rpc("Where were we?", session_key=key)
    return "\n".join(gateway.llm.system_prompts()), json.dumps(gateway.llm.requests)


def two_conversations(key: str) -> tuple[Conversation, Conversation, dict]:
    """A conversation of `key` and a direct chat with a peer, with their turns."""
    tag = uuid.uuid4().hex[:6]
    main_turns, main_tokens = turns_of(f"m{tag}")
    peer_turns, peer_tokens = turns_of(f"p{tag}")
    peer_key = f"agent:main:telegram:direct:{tag}"
    turns = {key: main_turns, peer_key: peer_turns}
    return Conversation(key, main_tokens), Conversation(peer_key, peer_tokens), turns


def assert_survived(gateway: Gateway, this: Conversation, other: Conversation, when: str) -> None:
    system, everything = next_turn(gateway, this.key)
    assert this.survival(system) == [], f"{when}: {this.key} lost items"
    leaked = [token for token in other.tokens if token in everything]
    assert leaked == [], f"{when}: {other.key}'s items reached {this.key}'s prompt"


def test_every_item_survives_a_rotation(hooked):
    gateway = hooked
    main, peer, turns = two_conversations(f"agent:main:e2e-rotated-{uuid.uuid4().hex[:6]}")
    gateway.llm.prompt_tokens = OVER_THRESHOLD
    for conversation in (main, peer):
        plant(gateway, conversation.key, turns[conversation.key])

    rotated = memwarden(gateway, "--json", "rotate")

    decided = {item["key"]: item["status"] for item in json.loads(rotated.stdout)["sessions"]}
    assert decided[main.key] == decided[peer.key] == "rotated", decided
    gateway.llm.prompt_tokens = 2_000
    assert_survived(gateway, main, peer, "after rotate")
    assert_survived(gateway, peer, main, "after rotate")


def test_every_item_survives_an_operator_reset_between_two_timer_runs(hooked):
    gateway = hooked
    main, peer, turns = two_conversations(MAIN)
    gateway.llm.prompt_tokens = 2_000
    for conversation in (main, peer):
        plant(gateway, conversation.key, turns[conversation.key][:4])
    memwarden(gateway, "-q", "checkpoint")  # the last timer run before the reset
    for conversation in (main, peer):
        plant(gateway, conversation.key, turns[conversation.key][4:])

    gateway.rpc("sessions.reset", {"key": main.key, "reason": "reset"})
    gateway.rpc("sessions.reset", {"key": peer.key, "reason": "new"})

    assert_survived(gateway, main, peer, "after /reset")
    assert_survived(gateway, peer, main, "after /new")
    memwarden(gateway, "-q", "checkpoint")  # the next timer run changes nothing lost
    assert_survived(gateway, main, peer, "after /reset and the next checkpoint")


def test_every_item_survives_a_compaction_and_the_checkpoints_after_it(hooked):
    gateway = hooked
    main, peer, turns = two_conversations(f"agent:main:e2e-compacted-{uuid.uuid4().hex[:6]}")
    gateway.llm.prompt_tokens = 40_000
    for conversation in (main, peer):
        plant(gateway, conversation.key, turns[conversation.key])

    for conversation in (main, peer):
        assert gateway.compact(conversation.key)["compacted"] is True

    assert_survived(gateway, main, peer, "after the compaction")
    assert_survived(gateway, peer, main, "after the compaction")
    for run in range(2):
        memwarden(gateway, "-q", "checkpoint")
        assert_survived(gateway, main, peer, f"after checkpoint {run + 1} since the compaction")
    status = json.loads(memwarden(gateway, "--json", "status").stdout)
    delivered = {row["session_key"]: row for row in status["handoff_deliveries"]}
    assert delivered[main.key]["handoff"] == "whole", delivered


def test_a_long_conversation_keeps_every_item_within_the_bootstrap_budget(
    gateway_factory, openclaw_bin
):
    tag = uuid.uuid4().hex[:6]
    key = f"agent:main:telegram:direct:long{tag}"
    budget = 9_000
    caps = {
        "agents": {"defaults": {"bootstrapMaxChars": budget, **KEEP_LITTLE["agents"]["defaults"]}}
    }
    gateway = hooked_gateway(gateway_factory(start=False, extra_config=caps), openclaw_bin)
    plant(gateway, MAIN, [("Hello, a new week begins.", None)])
    memwarden(gateway, "-q", "checkpoint")  # a timer run: memwarden watches the agent
    tokens, facts = [], []
    for turn in range(42):
        token, fact = f"l{tag}i{turn:02d}", f"l{tag}f{turn:02d}"
        kind = ("[DECISION] keep", "- [ ] check", "TODO: ask", "see src/x/")[turn % 4]
        item = f"{kind}{token}.py" if kind.endswith("/") else f"{kind} {token}"
        tokens.append(token)
        facts.append(fact)
        plant(gateway, key, [(f"{item}\nplain fact {fact}: " + "lorem ipsum " * 40, None)])

    gateway.rpc("sessions.reset", {"key": key, "reason": "reset"})
    system, _ = next_turn(gateway, key)

    assert [token for token in tokens if token not in system] == []
    handoff = next(
        path
        for path in (gateway.workspace / "memory" / "sessions").glob("*.md")
        if f"long{tag}" in path.name
    )
    text = handoff.read_text()
    assert len(text.rstrip()) <= budget
    left_out = [fact for fact in facts if fact not in text]
    assert left_out, "the conversation is longer than the budget: some plain facts must go"
    assert left_out == facts[: len(left_out)], "the oldest plain facts go first"
    assert "## Left Out" in text
    print(f"plain facts left out to fit {budget:,} characters: {left_out}")
