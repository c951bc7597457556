"""The per-agent skip: an agent whose store and transcripts did not change is settled by stats."""

from __future__ import annotations

import os
import time
from datetime import timedelta
from pathlib import Path

import orjson
import pytest

from memwarden.checkpoint.outcome import SessionOutcome
from memwarden.checkpoint.read.unchanged import make_record, signatures, still_valid
from memwarden.openclaw.layout import discover
from memwarden.process.runtime import JobContext
from support.cli import run_cli
from support.transcripts import START, transcript_lines, write_jsonl

NOW = START + timedelta(hours=1)
SESSION = "0a0a0a0a-0000-4000-8000-000000000001"
OTHER = "0a0a0a0a-0000-4000-8000-000000000002"
LONG_AGO = time.time() - 3600


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(JobContext, "now", lambda self: NOW)
    monkeypatch.setenv("MEMWARDEN_HISTORY_ENABLED", "false")


def age(*paths: Path) -> None:
    """Set the files' times an hour back, so their stat signatures are trusted."""
    for path in paths:
        os.utime(path, (LONG_AGO, LONG_AGO))


def build(root: Path, other_updated: float | None = None) -> tuple[Path, Path, Path]:
    """Write a file-era agent `main`; return (state dir, sessions.json, main transcript)."""
    state, workspace = root / "state", root / "workspace"
    workspace.mkdir(parents=True)
    sessions = state / "agents" / "main" / "sessions"
    transcript = sessions / f"{SESSION}.jsonl"
    write_jsonl(transcript, transcript_lines(4, session_id=SESSION))
    store = {"agent:main:main": {"sessionId": SESSION, "updatedAt": int(START.timestamp() * 1000)}}
    if other_updated is not None:
        write_jsonl(sessions / f"{OTHER}.jsonl", transcript_lines(4, session_id=OTHER))
        store["agent:main:telegram:direct:7"] = {
            "sessionId": OTHER,
            "updatedAt": int(other_updated * 1000),
        }
        age(sessions / f"{OTHER}.jsonl")
    store_path = sessions / "sessions.json"
    store_path.write_bytes(orjson.dumps(store))
    config = {"agents": {"list": [{"id": "main", "workspace": str(workspace)}]}}
    (state / "openclaw.json").write_bytes(orjson.dumps(config))
    age(transcript, store_path)
    return state, store_path, transcript


def run(capsys, state: Path, *extra: str):
    result = run_cli(capsys, "--state-dir", state, "--json", "checkpoint", *extra)
    return result, result.json()["agents"]


def corrupt_in_place(path: Path) -> None:
    """Overwrite a file with garbage of the same size, keeping its inode and times."""
    status = path.stat()
    with path.open("r+b") as handle:
        handle.write(b"#" * status.st_size)
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns))


def test_unchanged_agent_is_settled_without_opening_its_store(tmp_path, capsys):
    state, store, _ = build(tmp_path)
    run(capsys, state)
    corrupt_in_place(store)  # same inode, size and time: only reading it would notice

    result, (outcome,) = run(capsys, state)

    assert result.exit_code == 0
    assert (outcome["outcome"], outcome["reason"]) == (
        "unchanged",
        "nothing new since the last run",
    )
    assert outcome["session_key"] == "agent:main:main"


def test_unchanged_skip_ends_when_the_transcript_grows(tmp_path, capsys):
    state, _, transcript = build(tmp_path)
    run(capsys, state)
    with transcript.open("ab") as handle:
        handle.write(
            orjson.dumps({"type": "custom", "id": "c", "timestamp": "2026-11-22T05:50:00Z"})
        )
        handle.write(b"\n")

    _, (outcome,) = run(capsys, state)

    assert (outcome["outcome"], outcome["reason"]) == (
        "unchanged",
        "new lines, but nothing that changes the files",  # read, not skipped after a stat
    )


def test_unchanged_skip_ends_when_settings_change_or_forced(tmp_path, capsys, monkeypatch):
    state, store, _ = build(tmp_path)
    run(capsys, state)
    corrupt_in_place(store)

    _, (forced,) = run(capsys, state, "--force")
    monkeypatch.setenv("MEMWARDEN_CHECKPOINT_MESSAGE_MAX_CHARS", "300")
    _, (changed,) = run(capsys, state)

    assert forced["outcome"] == "failed"  # it did read the (now corrupt) store
    assert changed["outcome"] == "failed"


def test_unchanged_skip_ends_when_a_written_file_is_gone(tmp_path, capsys):
    state, _, _ = build(tmp_path)
    run(capsys, state)
    (tmp_path / "workspace" / "memory" / "ACTIVE_CONTEXT.md").unlink()

    _, (outcome,) = run(capsys, state)

    assert outcome["outcome"] == "written"
    assert (tmp_path / "workspace" / "memory" / "ACTIVE_CONTEXT.md").is_file()


def test_unchanged_skip_ends_when_another_conversation_goes_stale(tmp_path, capsys, monkeypatch):
    newer = (START + timedelta(minutes=5)).timestamp()
    state, _, _ = build(tmp_path, other_updated=newer)
    _, first = run(capsys, state)
    monkeypatch.setattr(JobContext, "now", lambda self: START + timedelta(hours=4, minutes=6))

    _, later = run(capsys, state)

    assert [item["session_key"] for item in first] == [
        "agent:main:main",
        "agent:main:telegram:direct:7",
    ]
    assert [item["session_key"] for item in later] == ["agent:main:main"]


def test_unchanged_skip_ends_when_the_chosen_main_session_goes_stale_in_recent_mode(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("MEMWARDEN_CHECKPOINT_SESSIONS", "recent")
    newer = (START + timedelta(minutes=5)).timestamp()
    state, _, _ = build(tmp_path, other_updated=newer)
    _, (first,) = run(capsys, state)
    monkeypatch.setattr(JobContext, "now", lambda self: START + timedelta(hours=4, minutes=1))

    _, (later,) = run(capsys, state)

    assert first["session_key"] == "agent:main:main"
    assert later["session_key"] == "agent:main:telegram:direct:7"
    assert later["outcome"] == "written"


def test_failed_agent_is_always_looked_at_again(tmp_path, capsys):
    state, _, _ = build(tmp_path)
    run(capsys, state)
    memory = tmp_path / "workspace" / "memory"
    memory.rename(tmp_path / "moved")
    (tmp_path / "outside").mkdir()
    os.symlink(tmp_path / "outside", memory)

    _, (failed,) = run(capsys, state)
    memory.unlink()
    _, (again,) = run(capsys, state)

    assert failed["outcome"] == "failed"
    assert again["outcome"] == "written"
    assert (memory / "ACTIVE_CONTEXT.md").is_file()


def record_for(root: Path, taken_at: float):
    state, store, transcript = build(root)
    agent = discover(state).agent("main")
    (agent.workspace / "memory").mkdir()
    (agent.workspace / "memory" / "ACTIVE_CONTEXT.md").write_text("x")
    watched = signatures([*agent.store_files, transcript])
    outcome = SessionOutcome(
        "main", str(agent.workspace), "written", "", "agent:main:main", SESSION
    )
    files = {"agent:main:main": "ACTIVE_CONTEXT.md"}
    return agent, make_record(agent, "s1", watched, [outcome], files, "", None, taken_at), store


def test_still_valid_distrusts_files_modified_just_before_they_were_recorded(tmp_path):
    agent, record, store = record_for(tmp_path, taken_at=time.time())
    trusted = still_valid(record, agent, "s1", NOW)
    other_settings = still_valid(record, agent, "s2", NOW)
    os.utime(store)  # modified now: within 2 s of the next record
    fresh = make_record(
        agent,
        "s1",
        signatures([store]),
        [SessionOutcome("main", "w", "unchanged", "", "agent:main:main", SESSION)],
        {},
        "",
        None,
        time.time(),
    )

    assert trusted
    assert not other_settings
    assert not still_valid(fresh, agent, "s1", NOW)


def test_make_record_refuses_a_run_with_a_failure(tmp_path):
    agent, _, _ = record_for(tmp_path, taken_at=time.time())
    failed = SessionOutcome("main", "w", "failed", "boom", "agent:main:main", SESSION)

    assert make_record(agent, "s1", {}, [failed], {}, "", None, time.time()) is None
