"""A store with many live conversations: the sessions folder is listed once per run, not once
per conversation (a folder of 100k transcripts listed for each of 5,000 fresh conversations
took ten minutes)."""

from __future__ import annotations

import uuid

import orjson

from memwarden.openclaw import sessions as sessions_module
from support.cli import run_cli
from support.deployments import make_generated_fleet
from support.transcripts import START, transcript_lines, write_jsonl

CONVERSATIONS = 40


def count_listings(monkeypatch) -> list:
    """Record each listing of a sessions folder from now on; return the list of folders."""
    listed = []
    real = sessions_module._files_in
    monkeypatch.setattr(sessions_module, "_files_in", lambda f: listed.append(f) or real(f))
    return listed


def test_checkpoint_of_many_conversations_lists_the_sessions_folder_once(
    tmp_path, capsys, isolated_env, fixture_clock, monkeypatch
):
    state, workspaces = make_generated_fleet(tmp_path, ["main"], int(START.timestamp() * 1000))
    folder = state / "agents" / "main" / "sessions"
    store = orjson.loads((folder / "sessions.json").read_bytes())
    for number in range(CONVERSATIONS):
        session_id = str(uuid.UUID(int=number + 1, version=4))
        write_jsonl(folder / f"{session_id}.jsonl", transcript_lines(2, session_id=session_id))
        key = f"agent:main:telegram:direct:{number}"
        store[key] = {"sessionId": session_id, "updatedAt": int(START.timestamp() * 1000)}
    (folder / "sessions.json").write_bytes(orjson.dumps(store))
    listed = count_listings(monkeypatch)

    result = run_cli(capsys, "--state-dir", state, "--json", "checkpoint")

    assert result.exit_code == 0, result.stderr
    handoffs = list((workspaces["main"] / "memory" / "sessions").glob("*.md"))
    assert len(handoffs) == CONVERSATIONS
    assert len(listed) <= 3, f"the sessions folder was listed {len(listed)} times"


def test_health_reads_the_store_counts_without_listing_the_sessions_folder(
    tmp_path, isolated_env, monkeypatch
):
    from memwarden.openclaw.layout import discover
    from memwarden.openclaw.sessions import load_sessions

    state, _ = make_generated_fleet(tmp_path, ["main"], int(START.timestamp() * 1000))
    (agent,) = discover(state).agents
    with_transcripts = load_sessions(agent)
    listed = count_listings(monkeypatch)

    counts_only = load_sessions(agent, transcripts=False)

    assert listed == []
    assert [r.key for r in counts_only] == [r.key for r in with_transcripts]
    assert [r.total_tokens for r in counts_only] == [r.total_tokens for r in with_transcripts]
    assert all(r.transcript is None for r in counts_only)
