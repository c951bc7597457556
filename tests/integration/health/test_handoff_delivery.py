"""Proof of delivery with no model: after a conversation's reset, the real bootstrap hook leaves a
receipt in memwarden's storage, and health, status and the metrics read it.

One SQLite-era agent whose main conversation was reset in place and got a request after the
reset; checkpoint records the reset, `memwarden install hooks` installs the hooks (before the
reset). Before any bootstrap, health warns that no bootstrap after the reset left a receipt;
once the installed hook (Node) has injected the handoff whole, it is ok; when the gateway's caps
would cut the handoff, health names the conversation and the caps.
"""

from __future__ import annotations

import shutil
from datetime import timedelta
from pathlib import Path

import orjson
import pytest

from memwarden.process.runtime import JobContext
from support.bootstrap_hook import bootstrap_files
from support.cli import run_cli
from support.transcripts import START, make_sqlite_agent_db, transcript_lines

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
KEY = "agent:main:main"
SESSION = "de11fe12-0000-4000-8000-000000000001"


def deployment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path, key: str) -> dict:
    """A SQLite-era agent whose conversation `key` was reset, then got a request."""
    monkeypatch.setattr(JobContext, "now", lambda self: START + timedelta(hours=1))
    monkeypatch.setenv("MEMWARDEN_HISTORY_ENABLED", "false")
    state, workspace = tmp_path / "state", tmp_path / "workspace"
    workspace.mkdir()
    lines = list(transcript_lines(4, session_id=SESSION, with_reset_at=3))
    database = state / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    make_sqlite_agent_db(database, {SESSION: lines}, session_keys={SESSION: key})
    config = {"agents": {"list": [{"id": "main", "workspace": str(workspace)}]}}
    (state / "openclaw.json").write_bytes(orjson.dumps(config))
    storage = home / ".local" / "state" / "memwarden"
    return {"state": state, "workspace": workspace, "storage": storage}


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_env: Path) -> dict:
    return deployment(tmp_path, monkeypatch, isolated_env, KEY)


def health(capsys, agent) -> dict:
    result = run_cli(capsys, "--state-dir", agent["state"], "--json", "health")
    return {check["key"]: check for check in result.json()["checks"]}


def install_hooks(capsys, agent, monkeypatch) -> Path:
    """`memwarden install hooks`, a minute before the conversation's reset; return the
    installed bootstrap hook's handler."""
    monkeypatch.setattr(JobContext, "now", lambda self: START - timedelta(minutes=1))
    installed = run_cli(capsys, "--state-dir", agent["state"], "install", "hooks")
    monkeypatch.setattr(JobContext, "now", lambda self: START + timedelta(hours=1))
    assert installed.exit_code == 0, installed.stderr
    return agent["state"] / "hooks" / "memory-index-inject" / "handler.js"


def test_health_warns_until_the_bootstrap_hook_delivers_the_handoff_whole(
    capsys, agent, monkeypatch
):
    assert run_cli(capsys, "--state-dir", agent["state"], "checkpoint").exit_code == 0
    unhooked = health(capsys, agent)

    handler = install_hooks(capsys, agent, monkeypatch)
    before = health(capsys, agent)
    files = bootstrap_files(agent["workspace"], KEY, handler)
    after = health(capsys, agent)
    status = run_cli(capsys, "--state-dir", agent["state"], "--json", "status")

    assert unhooked["handoff.delivery"]["message"].startswith("no delivery receipt yet")
    warned = before[f"handoff.delivery:main:{KEY}"]
    assert warned["status"] == "warning"
    assert warned["message"].startswith(
        f"agent main: {KEY}: no bootstrap since the reset at 2026-11-22 05:00 UTC left a receipt"
    )
    assert [file["name"] for file in files] == ["AGENTS.md", "memory/ACTIVE_CONTEXT.md"]
    assert after["handoff.delivery"]["status"] == "ok"
    assert after["handoff.delivery"]["value"] == 1
    (delivered,) = status.json()["handoff_deliveries"]
    assert (delivered["session_key"], delivered["handoff"]) == (KEY, "whole")
    handoff = (agent["workspace"] / "memory" / "ACTIVE_CONTEXT.md").read_text()
    assert delivered["handoff_chars"] == len(handoff.rstrip())


def test_health_names_a_handoff_the_gateway_caps_cut(capsys, agent, monkeypatch):
    assert run_cli(capsys, "--state-dir", agent["state"], "checkpoint").exit_code == 0
    handler = install_hooks(capsys, agent, monkeypatch)
    crowded = [
        {"name": "AGENTS.md", "path": "/w/AGENTS.md", "content": "a" * 59_900, "missing": False}
    ]
    cfg = {"agents": {"defaults": {"bootstrapMaxChars": 60_000}}}

    bootstrap_files(agent["workspace"], KEY, handler, files=crowded, cfg=cfg)
    checks = health(capsys, agent)

    warned = checks[f"handoff.delivery:main:{KEY}"]
    assert warned["value"] == "cut"
    assert "carried its handoff cut by the gateway's bootstrap caps" in warned["message"]


@pytest.mark.parametrize(
    ("key", "setting"),
    [
        ("agent:main:telegram:group:77", {}),  # nothing is injected into a group chat
        (KEY, {"MEMWARDEN_INDEX_INJECT_ACTIVE_CONTEXT": "false"}),  # no handoff injected at all
    ],
)
def test_health_judges_no_conversation_the_hook_is_not_meant_to_give_a_handoff(
    capsys, tmp_path, monkeypatch, isolated_env, key, setting
):
    for name, value in setting.items():
        monkeypatch.setenv(name, value)
    agent = deployment(tmp_path, monkeypatch, isolated_env, key)
    assert run_cli(capsys, "--state-dir", agent["state"], "checkpoint").exit_code == 0
    install_hooks(capsys, agent, monkeypatch)

    checks = health(capsys, agent)

    assert checks["handoff.delivery"]["status"] == "ok"
    assert not [name for name in checks if name.startswith("handoff.delivery:")]
