"""Smoke tests of the e2e harness against the real gateway, for both storage eras.

They prove the harness works (install, start, CLI, RPC, restart) and pin the gateway facts the
other e2e tests and memwarden's rotate/hook/health code rely on (tests/e2e/README.md lists them).
Each test uses its own session keys on the shared per-version `gateway`.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from harness import Gateway, GatewayClient, RpcError

OVER_THRESHOLD = 170_000  # above memwarden's default rotate threshold (150K tokens)
CONTEXT_WINDOW = 200_000  # the fake model's contextWindow in the harness config


def _turn(gateway: Gateway, message: str, session_key: str) -> str:
    """One turn (over RPC: no CLI start) reporting OVER_THRESHOLD prompt tokens; its sessionId."""
    gateway.llm.prompt_tokens = OVER_THRESHOLD
    gateway.agent_turn_rpc(message, session_key=session_key)
    return str(_row(gateway, session_key)["sessionId"])


def _row(gateway: Gateway, key: str) -> dict[str, Any]:
    row = gateway.session(key)
    assert row is not None, f"{key} not in sessions.list: {[r['key'] for r in gateway.sessions()]}"
    return row


def _assert_over_threshold(row: dict[str, Any]) -> None:
    assert row["totalTokens"] == OVER_THRESHOLD
    assert row["totalTokensFresh"] is True
    assert row["contextTokens"] == CONTEXT_WINDOW
    assert row["status"] == "done"
    assert row["hasActiveRun"] is False
    assert row["kind"] == "direct"  # for main and cron sessions alike: classify by key


def test_gateway_is_ready_and_speaks_protocol_4(gateway: Gateway) -> None:
    assert gateway.running
    assert gateway.http_get("/readyz")["ready"] is True
    assert gateway.http_get("/health")["ok"] is True

    async def hello() -> dict[str, Any]:
        async with gateway.client() as client:
            return client.hello

    payload = asyncio.run(hello())
    assert payload["type"] == "hello-ok"
    assert payload["protocol"] == 4
    assert payload["server"]["version"] == gateway.version
    methods = set(payload["features"]["methods"])
    assert {"sessions.list", "sessions.reset", "sessions.compact", "agent", "health"} <= methods


def test_wrong_token_is_rejected(gateway: Gateway) -> None:
    async def connect_with_wrong_token() -> None:
        async with GatewayClient.open(gateway.url, "not-the-token"):
            pass

    with pytest.raises(RpcError) as caught:
        asyncio.run(connect_with_wrong_token())
    assert caught.value.code == "INVALID_REQUEST"
    assert caught.value.details["code"] == "AUTH_TOKEN_MISMATCH"


def test_main_session_reports_the_fake_prompt_tokens(gateway: Gateway) -> None:
    gateway.llm.prompt_tokens = OVER_THRESHOLD
    out = gateway.agent_turn("hello from the memwarden e2e smoke test")  # the CLI, no key
    assert out["status"] == "ok", out
    session_id = out["result"]["meta"]["agentMeta"]["sessionId"]

    row = _row(gateway, "agent:main:main")
    assert row["sessionId"] == session_id
    _assert_over_threshold(row)
    assert gateway.llm.saw_user_text("hello from the memwarden e2e smoke test")
    lines = gateway.transcript(session_id)
    assert lines[0]["type"] == "session"
    assert lines[0]["version"] == (3 if gateway.file_era else 4)
    assistant = [
        line["message"]
        for line in lines
        if line["type"] == "message" and line["message"]["role"] == "assistant"
    ]
    assert assistant[-1]["usage"]["input"] == OVER_THRESHOLD
    if not gateway.file_era:
        assert (row["classification"], row["isMain"], row["isBackground"]) == ("main", True, False)


def test_cron_session_from_an_explicit_session_key(gateway: Gateway) -> None:
    key = "agent:main:cron:e2e-nightly"
    gateway.llm.prompt_tokens = OVER_THRESHOLD
    out = gateway.agent_turn("nightly digest", session_key=key)  # openclaw agent --session-key
    session_id = out["result"]["meta"]["agentMeta"]["sessionId"]

    row = _row(gateway, key)
    assert row["sessionId"] == session_id
    _assert_over_threshold(row)
    if not gateway.file_era:
        assert (row["classification"], row["isMain"], row["isBackground"]) == ("cron", False, True)


def test_cron_session_from_a_real_cron_job_run(gateway: Gateway) -> None:
    gateway.llm.prompt_tokens = OVER_THRESHOLD
    entry = gateway.run_cron_job("summarise the day", name="e2e-daily")

    assert entry["status"] == "ok"
    key = f"agent:main:cron:{entry['jobId']}"
    assert entry["sessionKey"] == f"{key}:run:{entry['sessionId']}"
    rows = {row["key"]: row for row in gateway.sessions()}
    assert entry["sessionKey"] not in rows  # only the job's key is listed, not the run's
    row = rows[key]
    assert row["sessionId"] == entry["sessionId"]
    assert row["totalTokens"] == OVER_THRESHOLD
    assert row["totalTokensFresh"] is True
    label = "Cron: e2e-daily" if gateway.file_era else "Automation: e2e-daily"
    assert row["label"] == label
    if not gateway.file_era:
        assert row["classification"] == "cron"


def test_sessions_reset_in_each_era(gateway: Gateway) -> None:
    key = "agent:main:e2e-reset"
    old_id = _turn(gateway, "remember this before the reset", session_key=key)

    payload = gateway.rpc("sessions.reset", {"key": key, "reason": "reset"})

    assert payload["ok"] is True
    assert payload["key"] == key
    entry = payload["entry"]
    assert (entry["totalTokens"], entry["totalTokensFresh"]) == (0, True)
    row = _row(gateway, key)
    assert row["sessionId"] == entry["sessionId"]
    assert row["totalTokens"] == 0
    if gateway.file_era:
        assert entry["sessionId"] != old_id
        assert entry["sessionFile"] == str(gateway.sessions_dir() / f"{entry['sessionId']}.jsonl")
        renamed = list(gateway.sessions_dir().glob(f"{old_id}.jsonl.reset.*"))
        assert len(renamed) == 1
        assert not (gateway.sessions_dir() / f"{old_id}.jsonl").exists()
        new_lines = gateway.transcript(entry["sessionId"])
        assert [line["type"] for line in new_lines] == ["session"]
        store = json.loads((gateway.sessions_dir() / "sessions.json").read_text())
        assert store[key]["sessionId"] == entry["sessionId"]
        assert "resolved" not in payload
    else:
        assert entry["sessionId"] == old_id
        assert entry["lifecycleRevision"]
        last = gateway.transcript(old_id)[-1]
        assert (last["type"], last["reason"]) == ("reset", "reset")
        assert payload["resolved"] == {"modelProvider": "fake", "model": "fake-model"}
    events = [e for e in gateway.hook_events() if e["sessionKey"] == key and e["type"] == "command"]
    assert [(e["action"], e["commandSource"]) for e in events] == [
        ("reset", "gateway:sessions.reset")
    ]


def test_sessions_reset_guard_and_unknown_keys(gateway: Gateway) -> None:
    key = "agent:main:e2e-guard"
    _turn(gateway, "guarded", session_key=key)

    with pytest.raises(RpcError) as caught:
        gateway.rpc("sessions.reset", {"key": key, "expectedSessionId": "not-the-current-id"})
    assert caught.value.code == "INVALID_REQUEST"
    if gateway.file_era:  # 2026.7.35 does not know the parameter at all
        assert "unexpected property 'expectedSessionId'" in str(caught.value)
    else:
        assert caught.value.details == {"reason": "session-changed"}

    # resetting a key that does not exist creates it (ok:true, zero tokens)
    unknown = "agent:main:e2e-never-seen"
    payload = gateway.rpc("sessions.reset", {"key": unknown, "reason": "reset"})
    assert payload["ok"] is True
    assert payload["entry"]["totalTokens"] == 0
    assert _row(gateway, unknown)["sessionId"] == payload["entry"]["sessionId"]


def test_sessions_compact(gateway: Gateway) -> None:
    key = "agent:main:e2e-compact"
    session_id = _turn(gateway, "something worth compacting", session_key=key)

    payload = gateway.compact(key)

    assert (payload["ok"], payload["key"], payload["compacted"]) == (True, key, True)
    result = payload["result"]
    assert result["tokensBefore"] == OVER_THRESHOLD + gateway.llm.completion_tokens
    assert result["summary"]
    assert result["firstKeptEntryId"]
    row = _row(gateway, key)
    assert row["sessionId"] == session_id
    # the context size is unknown until the next turn: totalTokens is absent, fresh is False
    assert "totalTokens" not in row
    assert row["totalTokensFresh"] is False
    assert any(line["type"] == "compaction" for line in gateway.transcript(session_id))
    actions = [e["action"] for e in gateway.hook_events() if e["sessionKey"] == key]
    assert "compact:before" in actions
    assert "compact:after" in actions


def test_cron_session_from_the_agent_rpc(gateway: Gateway) -> None:
    key = "agent:main:cron:e2e-rpc"
    gateway.llm.prompt_tokens = 12_345
    result = gateway.agent_turn_rpc("over the websocket", session_key=key)

    assert result["status"] == "ok"
    row = _row(gateway, key)
    assert row["totalTokens"] == 12_345
    assert row["totalTokensFresh"] is True


def test_restart_keeps_the_state(gateway: Gateway) -> None:
    before = {row["key"]: row["sessionId"] for row in gateway.sessions()}
    old_pid = gateway.pid

    started = time.monotonic()
    gateway.stop()
    assert not gateway.running
    with pytest.raises(OSError):
        gateway.http_get("/readyz", timeout=2)
    gateway.start()
    elapsed = time.monotonic() - started

    assert gateway.pid != old_pid
    after = {row["key"]: row["sessionId"] for row in gateway.sessions()}
    assert after == before
    assert elapsed < 120
