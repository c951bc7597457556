"""Secrets planted in a transcript never reach the workspace; the run says how many it masked."""

from __future__ import annotations

from datetime import timedelta

import orjson
import pytest

from memwarden.process.runtime import JobContext
from support.cli import run_cli
from support.transcripts import START, transcript_lines, write_jsonl

SESSION = "5ec2e7a1-0000-4000-8000-000000000001"
SECRETS = {
    "openai-key": "sk-proj-Zq8xVb3nLm5kJh7gFd2sAp9oIu4yTr6eWq1zXc0vBn8mLk3j",
    "anthropic-key": "sk-ant-api03-Xy7wV5uT3sR1qP9oN7mL5kJ3hG1fE9dC7bA5zY3xW1vU9tS7rQ5pO3nM1",
    "google-api-key": "AIzaSyD4k9X2m7Q1w8E5r3T6y0U9i2O5p8A1s4D",
    "github-token": "ghp_1A2b3C4d5E6f7G8h9I0j1K2l3M4n5O6p7Q8r",
    "gitlab-token": "glpat-xY9vW8uT7sR6qP5oN4mL",
    "slack-token": "xoxp-2048-4096-8192-AbCdEfGhIjKlMnOpQrStUvWx",
    "stripe-key": "rk_test_51HqLyjWDarjtT1zdp7dcXyZa",
    "aws-access-key": "AKIAIOSFODNN7EXAMPLE",
    "aws-secret-key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtZW13YXJkZW4ifQ.c2lnbmF0dXJlLWhlcmUtMTIz",
    "bearer-token": "tok_9f8e7d6c5b4a3f2e1d0c",
    "password": "correct-horse-battery",
    "url-credentials": "pg-s3cr3t",
}
PRIVATE_KEY_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(JobContext, "now", lambda self: START + timedelta(hours=1))
    monkeypatch.setenv("MEMWARDEN_HISTORY_ENABLED", "false")


def message(entry_id: str, role: str, content, minute: int) -> dict:
    moment = START + timedelta(minutes=minute)
    return {
        "type": "message",
        "id": entry_id,
        "timestamp": moment.isoformat().replace("+00:00", "Z"),
        "message": {"role": role, "content": content, "timestamp": int(moment.timestamp() * 1000)},
    }


def planted_lines() -> list[dict]:
    s = SECRETS
    lines = list(transcript_lines(3, session_id=SESSION))
    lines += [
        message(
            "p1",
            "user",
            f"My keys: OPENAI_API_KEY={s['openai-key']} and {s['anthropic-key']}; "
            f"google {s['google-api-key']}, github {s['github-token']}, gitlab {s['gitlab-token']}",
            10,
        ),
        message(
            "p2",
            "assistant",
            [
                {"type": "text", "text": f"Stored slack {s['slack-token']} and {s['stripe-key']}."},
                {
                    "type": "toolCall",
                    "id": "t1",
                    "name": "read",
                    "arguments": {"path": f"/srv/keys/{s['github-token']}.txt"},
                },
            ],
            11,
        ),
        message(
            "p3",
            "user",
            f"aws_access_key_id = {s['aws-access-key']}\naws_secret_access_key = "
            f"{s['aws-secret-key']}\n- [ ] rotate password: {s['password']}\n"
            f"curl -H 'Authorization: Bearer {s['bearer-token']}' "
            f"postgres://app:{s['url-credentials']}@db.internal/app",
            12,
        ),
        {
            "type": "compaction",
            "id": "k1",
            "timestamp": "2026-11-22T05:13:00Z",
            "summary": f"## Exact identifiers\njwt {s['jwt']}\n-----BEGIN RSA PRIVATE KEY-----\n"
            f"{PRIVATE_KEY_BODY}\n-----END RSA PRIVATE KEY-----",
        },
        message(
            "p4",
            "assistant",
            [{"type": "text", "text": f"TODO: revoke {s['jwt']} tomorrow"}],
            14,
        ),
    ]
    return lines


def test_checkpoint_planted_secrets_never_reach_the_workspace(tmp_path, capsys):
    state, workspace = tmp_path / "state", tmp_path / "workspace"
    workspace.mkdir()
    sessions = state / "agents" / "main" / "sessions"
    write_jsonl(sessions / f"{SESSION}.jsonl", planted_lines())
    store = {"agent:main:main": {"sessionId": SESSION, "updatedAt": int(START.timestamp() * 1000)}}
    (sessions / "sessions.json").write_bytes(orjson.dumps(store))
    config = {"agents": {"list": [{"id": "main", "workspace": str(workspace)}]}}
    (state / "openclaw.json").write_bytes(orjson.dumps(config))

    result = run_cli(capsys, "--state-dir", state, "--json", "checkpoint")

    assert result.exit_code == 0, result.stderr
    written = {
        path.name: path.read_text(encoding="utf-8") for path in (workspace / "memory").iterdir()
    }
    assert set(written) == {"ACTIVE_CONTEXT.md", "2026-11-22.md", ".memwarden-bootstrap.json"}
    everything = "\n".join(written.values()) + result.stdout + result.stderr
    leaked = [kind for kind, secret in SECRETS.items() if secret in everything]
    assert leaked == []
    assert PRIVATE_KEY_BODY not in everything
    context = written["ACTIVE_CONTEXT.md"]
    for kind in SECRETS:
        assert f"[REDACTED:{kind}]" in context, kind
    assert "[REDACTED:private-key]" in context
    assert "OPENAI_API_KEY=[REDACTED:openai-key]" in context
    assert "`/srv/keys/[REDACTED:github-token].txt`" in context
    assert "- [ ] rotate password: [REDACTED:password]" in context
    redactions = result.json()["agents"][0]["redactions"]
    assert set(redactions) == {*SECRETS, "private-key"}
    assert result.json()["summary"]["redactions"] == sum(redactions.values())


def test_checkpoint_redaction_off_writes_text_as_is(tmp_path, capsys, monkeypatch):
    state, workspace = tmp_path / "state", tmp_path / "workspace"
    workspace.mkdir()
    sessions = state / "agents" / "main" / "sessions"
    write_jsonl(sessions / f"{SESSION}.jsonl", planted_lines())
    store = {"agent:main:main": {"sessionId": SESSION, "updatedAt": int(START.timestamp() * 1000)}}
    (sessions / "sessions.json").write_bytes(orjson.dumps(store))
    config = {"agents": {"list": [{"id": "main", "workspace": str(workspace)}]}}
    (state / "openclaw.json").write_bytes(orjson.dumps(config))
    monkeypatch.setenv("MEMWARDEN_CHECKPOINT_REDACT", "false")

    result = run_cli(capsys, "--state-dir", state, "--json", "checkpoint")

    assert result.json()["agents"][0]["redactions"] == {}
    assert SECRETS["github-token"] in (workspace / "memory" / "ACTIVE_CONTEXT.md").read_text()
