"""Secrets said in a real gateway conversation never reach memwarden's files (2026.9.6, 2026.7.35).

Every sample of tests/support/secret_samples.py goes through the real gateway in a conversation
(the request mid-sentence, in a URL and in a path; the fake model's reply in JSON, after `=` and
in a tool call's arguments written as text), so the transcript is the gateway's own. Then
checkpoint (a handoff for that conversation, the daily log, INDEX.md, a history snapshot), the
session summary and a manual snapshot run as an operator's timers and hooks would; no file under
the workspace's memory/ and memwarden's storage, and no object of its history repository, holds
a raw secret, and the conversation's handoff and summary show the type of every sample the
gateway stored as it was (both versions mask some themselves, at times only the name before a
value: `*** Basic …`, `*** RSA PRIVATE KEY-----`).
"""

from __future__ import annotations

import json
import re
import uuid

import pytest
from harness import Gateway

from support.cli import run_subprocess
from support.secret_samples import SAMPLES, placements
from support.written import history_objects, written_files

pytestmark = pytest.mark.e2e


def memwarden(gateway: Gateway, *arguments: str, **extra: str) -> str:
    env = {**gateway.env, **extra}
    result = run_subprocess("--state-dir", gateway.state_dir, *arguments, env=env, timeout=300)
    assert result.exit_code == 0, f"memwarden {' '.join(arguments)}:\n{result.stderr}"
    return result.stdout + result.stderr


def texts(samples, names: tuple[str, ...]) -> str:
    return "\n".join(placements(sample.snippet)[name] for sample in samples for name in names)


def test_secrets_of_a_real_conversation_never_reach_memory_files_or_history(gateway_factory):
    key = f"agent:main:e2e-secrets-{uuid.uuid4().hex[:8]}"
    # Bootstrap caps that let the handoff show both long messages, each with its secrets masked.
    caps = {"bootstrapMaxChars": 200_000, "bootstrapTotalMaxChars": 400_000}
    gateway = gateway_factory(extra_config={"agents": {"defaults": caps}})
    settings = {
        "MEMWARDEN_CHECKPOINT_SESSIONS": "all",
        "MEMWARDEN_CHECKPOINT_MESSAGE_MAX_CHARS": "20000",
        "MEMWARDEN_INDEX_THRESHOLD_KB": "0",
        "MEMWARDEN_INDEX_SUMMARY_EXCERPT_MESSAGES": "20",
    }
    reply = gateway.llm.reply
    half = len(SAMPLES) // 2
    try:
        for samples in (SAMPLES[:half], SAMPLES[half:]):  # each message under 20,000 characters
            gateway.llm.reply = texts(samples, ("json", "after-equals", "tool-arguments"))
            request = texts(samples, ("mid-sentence", "url", "path"))
            assert gateway.agent_turn_rpc(request, session_key=key)["status"] == "ok"
    finally:
        gateway.llm.reply = reply
    assert gateway.llm.saw_user_text(SAMPLES[0].secret)  # the gateway passed them on
    session_id = gateway.session(key)["sessionId"]

    printed = memwarden(gateway, "checkpoint", **settings)
    printed += memwarden(
        gateway, "summarize", "--agent", "main", "--session-key", key, "--session-id", session_id,
        **settings,
    )  # fmt: skip
    printed += memwarden(gateway, "history", "snapshot", **settings)

    memory = gateway.workspace / "memory"
    storage = gateway.home / ".local" / "state" / "memwarden"
    written = written_files(memory, storage)
    history = history_objects(storage)
    everything = b"".join(written.values()) + history + printed.encode()
    everything += "\n".join(map(str, written)).encode()
    assert [sample.name for sample in SAMPLES if sample.secret.encode() in everything] == []
    texts_of_key = {
        path: text
        for path, content in written.items()
        if path.suffix == ".md" and f"`{key}`" in (text := content.decode())
    }
    summaries = [text for text in texts_of_key.values() if text.startswith("# Session summary")]
    daily = [path for path in texts_of_key if re.fullmatch(r"\d{4}-\d{2}-\d{2}\.md", path.name)]
    handoffs = [
        text for path, text in texts_of_key.items() if text not in summaries and path not in daily
    ]
    assert len(summaries) == 1 and daily and len(handoffs) == 1, sorted(map(str, texts_of_key))
    # Both gateway versions mask some secrets themselves before writing the transcript
    # (`sk-ant…mFAA`, `***`): the types of the others must show in the conversation's handoff.
    stored = json.dumps(gateway.transcript(session_id), ensure_ascii=False)
    raw = [sample for sample in SAMPLES if sample.secret in stored]
    assert len(raw) > len(SAMPLES) // 2, "the gateway stored too few samples as they are"
    kinds = {kind for sample in raw for kind in sample.kinds}
    for text in handoffs:
        assert {kind for kind in kinds if f"[REDACTED:{kind}]" not in text} == set()
    assert b"[REDACTED:" in history
