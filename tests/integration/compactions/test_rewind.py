"""A rewind of a daily log brings back the compaction watch's sections with the checkpoint's
entries: the next checkpoint writes the lost items again, once, and the ledger names the file."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from integration.compactions.test_watch import COMPACTION_ID, DAY_LOG, SESSION_ID, conversation
from support.cli import run_cli
from support.deployments import make_generated_fleet
from support.transcripts import START, write_jsonl

MARK = f"dropped by compaction `{COMPACTION_ID}`"


def cli(capsys, state: Path, *arguments: str) -> dict:
    result = run_cli(capsys, "--state-dir", state, "--json", *arguments)
    assert result.exit_code == 0, result.stderr
    return result.json()


@pytest.fixture
def compacted(tmp_path, isolated_env, fixture_clock):
    """A file-era agent checkpointed before its conversation was compacted (snapshot
    `before`) and after (the day's log holds the lost items)."""
    state, workspaces = make_generated_fleet(tmp_path, ["main"], int(START.timestamp() * 1000))
    transcript = state / "agents" / "main" / "sessions" / f"{SESSION_ID}.jsonl"
    lines = conversation()
    cut = next(i for i, line in enumerate(lines) if line.get("type") == "compaction")
    write_jsonl(transcript, lines[:cut])
    return state, workspaces["main"], transcript, lines


def test_rewound_daily_log_gets_the_lost_items_again_once(compacted, capsys):
    state, workspace, transcript, lines = compacted
    (before,) = cli(capsys, state, "checkpoint")["agents"]
    write_jsonl(transcript, lines)
    cli(capsys, state, "checkpoint")
    log = workspace / DAY_LOG
    assert log.read_text().count(MARK) == 1

    rewound = cli(capsys, state, "history", "rewind", before["snapshot"], "--path", DAY_LOG)
    assert [item["status"] for item in rewound["files"]] == ["restored"]
    assert MARK not in log.read_text()
    pending = run_cli(capsys, "--state-dir", state, "compactions", "--lossy")
    assert f"(kept in {DAY_LOG})" not in pending.stdout
    assert f"to be written again to {DAY_LOG}" in pending.stdout

    cli(capsys, state, "checkpoint")

    assert log.read_text().count(MARK) == 1
    listed = run_cli(capsys, "--state-dir", state, "compactions", "--lossy")
    assert f"(kept in {DAY_LOG})" in listed.stdout
    (row,) = cli(capsys, state, "compactions")["compactions"]
    assert (row["kept"], row["kept_file"]) == (True, DAY_LOG)
    cli(capsys, state, "checkpoint", "--force")
    assert log.read_text().count(MARK) == 1, "written again once, not at every run"


def test_removed_daily_log_is_made_again_with_the_lost_items(compacted, capsys):
    state, workspace, transcript, lines = compacted
    (workspace / "MEMORY.md").write_text("# Memory\n- a fact\n")
    (empty,) = cli(capsys, state, "history", "snapshot")["agents"]
    cli(capsys, state, "checkpoint")
    write_jsonl(transcript, lines)
    cli(capsys, state, "checkpoint")

    rewound = cli(capsys, state, "history", "rewind", empty["snapshot"]["id"], "--path", DAY_LOG)
    assert [item["status"] for item in rewound["files"]] == ["removed"]
    cli(capsys, state, "checkpoint")

    log = (workspace / DAY_LOG).read_text()
    assert log.count(MARK) == 1
    assert "9 requests, 9 replies" in log, "the checkpoint logged the whole session again"
    assert log.index("· checkpoint ·") < log.index(MARK)


def test_rewind_to_a_log_that_holds_the_section_does_not_write_it_twice(compacted, capsys):
    state, workspace, transcript, lines = compacted
    cli(capsys, state, "checkpoint")
    write_jsonl(transcript, lines)
    (after,) = cli(capsys, state, "checkpoint")["agents"]
    (workspace / DAY_LOG).write_text("# emptied by hand\n")
    cli(capsys, state, "history", "rewind", after["snapshot"], "--path", DAY_LOG)

    cli(capsys, state, "checkpoint")

    assert (workspace / DAY_LOG).read_text().count(MARK) == 1


def test_checkpoint_of_one_session_writes_again_only_that_sessions_lost_items(compacted, capsys):
    state, workspace, transcript, lines = compacted
    (before,) = cli(capsys, state, "checkpoint")["agents"]
    write_jsonl(transcript, lines)
    cli(capsys, state, "checkpoint")
    peer_id = "00000009-0000-4000-8000-000000000000"
    sessions = transcript.parent
    write_jsonl(sessions / f"{peer_id}.jsonl", conversation(peer_id)[:3])
    store = orjson.loads((sessions / "sessions.json").read_bytes())
    store["agent:main:telegram:direct:42"] = {"sessionId": peer_id, "updatedAt": 1}
    (sessions / "sessions.json").write_bytes(orjson.dumps(store))
    cli(capsys, state, "history", "rewind", before["snapshot"], "--path", DAY_LOG)
    log = workspace / DAY_LOG

    other = cli(capsys, state, "checkpoint", "--session", "agent:main:telegram:direct:42")
    assert other["compactions"]["kept_again"] == []
    assert MARK not in log.read_text()

    own = cli(capsys, state, "checkpoint", "--session", "AGENT:MAIN:MAIN")
    (again,) = own["compactions"]["kept_again"]
    assert (again["session"], again["kept_file"]) == ("agent:main:main", DAY_LOG)
    assert log.read_text().count(MARK) == 1
