"""`memwarden summarize` on real transcripts of both eras: the window a reset ended, once."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest

from support.cli import run_cli
from support.deployments import make_file_era_state, make_sqlite_era_state
from support.transcripts import START, event_row, make_sqlite_agent_db, transcript_lines

MAIN_9_6 = "b5974d71-c717-4e69-b2ad-af312d36f9f1"
RESET_EVENT_9_6 = "2026-11-22T05:27:11.400Z"  # the hook fired; the reset line is 05:27:11.472
OLD_7_35 = "101fbd0d-c6e3-4b83-94f5-65435a94d00e"
NEW_7_35 = "f02065fb-f8d4-455b-b680-d2e5c4e5cf9b"


def summarize(capsys, state, *arguments: str):
    return run_cli(capsys, "--state-dir", state.state_dir, "summarize", "--session-key", *arguments)


def summaries(workspace):
    folder = workspace / "memory" / "sessions" / "summaries"
    return sorted(folder.glob("*.md")) if folder.is_dir() else []


def test_summarize_sqlite_era_writes_the_window_before_the_reset(capsys, tmp_path):
    state = make_sqlite_era_state(tmp_path)

    result = summarize(
        capsys,
        state,
        "agent:main:main",
        "--agent",
        "main",
        "--session-id",
        MAIN_9_6,
        "--event",
        "command:reset",
        "--event-time",
        RESET_EVENT_9_6,
    )

    assert result.exit_code == 0, result.stderr
    (path,) = summaries(state.workspace)
    # Named and titled after the session, never its words: INDEX.md shows names and titles to
    # every session, another peer's too.
    assert path.name == "2026-11-22-session-main.main.md"
    text = path.read_text()
    assert text.startswith("# Session summary — `agent:main:main`\n")
    assert "- First request: hello from the cli test\n" in text
    assert "**User** (2026-11-22 05:26 UTC): hello from the cli test" in text
    assert "second message after reset" not in text  # that is the next window
    assert "- Ended by: command:reset" in text
    assert path.stat().st_mode & 0o077 == 0


def test_summarize_same_window_twice_writes_one_file(capsys, tmp_path):
    state = make_sqlite_era_state(tmp_path)
    arguments = ("agent:main:main", "--session-id", MAIN_9_6, "--event-time", RESET_EVENT_9_6)
    summarize(capsys, state, *arguments)

    again = summarize(capsys, state, *arguments, "--event", "command:new")

    assert again.exit_code == 0
    assert "already summarised" in again.stdout
    assert len(summaries(state.workspace)) == 1


def test_summarize_reset_then_new_second_window_is_empty(capsys, tmp_path):
    state = make_sqlite_era_state(tmp_path)
    # agent:main:hooktest was reset (05:28:26.178) then new (05:28:26.338), as captured.
    common = ("agent:main:hooktest", "--session-id", "a9564a35-b31e-4dee-a039-26288e780302")

    first = summarize(capsys, state, *common, "--event-time", "2026-11-22T05:28:26.169Z")
    second = summarize(capsys, state, *common, "--event-time", "2026-11-22T05:28:26.331Z")

    assert "wrote" in first.stdout
    assert "holds no conversation" in second.stdout
    (path,) = summaries(state.workspace)
    assert "hello hook test" in path.read_text()


def test_summarize_file_era_reads_the_renamed_transcript(capsys, tmp_path):
    state = make_file_era_state(tmp_path)

    result = summarize(
        capsys,
        state,
        "agent:main:main",
        "--session-id",
        NEW_7_35,
        "--previous-session-id",
        OLD_7_35,
        "--event-time",
        "2026-11-22T05:35:07.742Z",
    )

    assert result.exit_code == 0, result.stderr
    (path,) = summaries(state.workspace)
    assert path.name == "2026-11-22-session-main.main.md"
    assert f"(id {OLD_7_35})" in path.read_text()


def test_summarize_file_era_before_the_rename_reads_the_live_transcript(capsys, tmp_path):
    state = make_file_era_state(tmp_path)
    archive = next(state.sessions_dir.glob(f"{OLD_7_35}.jsonl.reset.*"))
    archive.rename(state.sessions_dir / f"{OLD_7_35}.jsonl")

    result = summarize(capsys, state, "agent:main:main", "--previous-session-id", OLD_7_35)

    assert "wrote" in result.stdout
    assert "hello legacy layout" in summaries(state.workspace)[0].read_text()


def test_summarize_keeps_the_summary_out_of_the_notes_any_new_session_is_given(capsys, tmp_path):
    """A session begun by a typed `/new` or `/reset`, another peer's too, gets today's and
    yesterday's `memory/<date>.md` and up to four `memory/<date>-*.md` quoted in its first turn
    (OpenClaw's startup context: src/auto-reply/reply/startup-context.ts); a conversation's
    summary is its own, so it is never one of those."""
    state = make_sqlite_era_state(tmp_path)

    result = summarize(capsys, state, "agent:main:main", "--session-id", MAIN_9_6)

    assert result.exit_code == 0, result.stderr
    memory = state.workspace / "memory"
    (path,) = summaries(state.workspace)
    assert path.parent == memory / "sessions" / "summaries"
    assert (path.parent.stat().st_mode & 0o777, path.stat().st_mode & 0o777) == (0o700, 0o600)
    dated = [name.name for name in memory.iterdir() if name.name.startswith("2026-")]
    assert dated == []


def test_summarize_dry_run_writes_nothing(capsys, tmp_path):
    state = make_sqlite_era_state(tmp_path)

    result = summarize(
        capsys, state, "agent:main:main", "--session-id", MAIN_9_6, "--dry-run", "--json"
    )

    assert result.json()["status"] == "would_write"
    summary = "memory/sessions/summaries/2026-11-22-session-main.main.md"
    assert result.json()["path"].endswith(summary)
    assert summaries(state.workspace) == []


def test_summarize_automation_session_is_skipped(capsys, tmp_path):
    state = make_sqlite_era_state(tmp_path)

    result = summarize(capsys, state, "agent:main:cron:nightly", "--session-id", MAIN_9_6)

    assert result.exit_code == 0
    assert "automation session" in result.stdout
    assert summaries(state.workspace) == []


def test_summarize_a_key_with_no_session_says_no_id_was_given(capsys, tmp_path):
    state = make_sqlite_era_state(tmp_path)

    result = summarize(capsys, state, "agent:main:no-such-conversation")

    assert result.exit_code == 0
    assert "no transcript found for it (no --session-id given): no summary" in result.stdout
    assert summaries(state.workspace) == []


def test_summarize_unknown_agent_is_a_usage_error(capsys, tmp_path):
    state = make_sqlite_era_state(tmp_path)

    result = summarize(capsys, state, "agent:main:main", "--agent", "nobody")

    assert result.exit_code == 2
    assert "--agent nobody: no such agent" in result.stderr


def observed_transcript(session_id: str) -> list[dict]:
    lines = list(transcript_lines(2, session_id=session_id))
    marked = (
        "Plan for the migration:\n- [DECISION] move to SQLite [TRADEOFF] one writer\n"
        "- [ ] write the rollback script\n- [x] done item\n"
        "Touched `src/store.py` and /etc/memwarden/config.toml\n"
        "```\n[GOTCHA] inside code, ignored\n```"
    )
    lines[-1]["message"]["content"] = [
        {"type": "text", "text": marked},
        {"type": "toolCall", "name": "read", "arguments": {"path": "docs/plan.md"}},
    ]
    return lines


def test_summarize_collects_markers_todos_and_files(capsys, tmp_path):
    state = make_sqlite_era_state(tmp_path)
    session_id = "5e551011-0000-4000-8000-0000000000aa"
    state.sqlite_path.unlink()
    make_sqlite_agent_db(state.sqlite_path, {session_id: observed_transcript(session_id)})

    result = summarize(capsys, state, "agent:main:main", "--session-id", session_id)

    assert "wrote" in result.stdout
    text = summaries(state.workspace)[0].read_text()
    line = "- [DECISION] move to SQLite [TRADEOFF] one writer"
    assert f"### [DECISION]\n{line}\n" in text
    assert f"### [TRADEOFF]\n{line}\n" in text
    assert "### [TODO]\n- write the rollback script\n" in text
    observed = text.split("## Files referenced")[0]
    assert "GOTCHA" not in observed and "done item" not in observed
    assert "- `docs/plan.md`\n- `src/store.py`\n- `/etc/memwarden/config.toml`\n" in text


def append_reset(database, session_id: str, seq: int, moment: datetime) -> None:
    line = {"type": "reset", "id": "late-reset", "timestamp": moment.isoformat(), "reason": "new"}
    connection = sqlite3.connect(database)
    with connection:
        connection.execute(
            "INSERT INTO transcript_events VALUES (?, ?, ?, ?, ?, ?, ?)",
            event_row(session_id, seq, orjson.dumps(line), 0),
        )
    connection.close()


def test_summarize_waits_for_the_reset_written_after_the_hook(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMWARDEN_INDEX_SUMMARY_WAIT_SECONDS", "20")
    state = make_sqlite_era_state(tmp_path)
    session_id = "5e551011-0000-4000-8000-0000000000bb"
    state.sqlite_path.unlink()
    lines = list(transcript_lines(3, session_id=session_id))
    make_sqlite_agent_db(state.sqlite_path, {session_id: lines})
    event_time = datetime.now(UTC)
    writer = threading.Timer(
        0.5,
        append_reset,
        (state.sqlite_path, session_id, len(lines), event_time + timedelta(milliseconds=9)),
    )
    writer.start()
    started = time.monotonic()

    result = summarize(
        capsys,
        state,
        "agent:main:main",
        "--session-id",
        session_id,
        "--event-time",
        event_time.isoformat(),
    )

    writer.join()
    assert time.monotonic() - started >= 0.5
    text = summaries(state.workspace)[0].read_text()
    assert "- Note:" not in text
    assert "3 user and 3 assistant messages" in text
    assert "wrote" in result.stdout


def test_summarize_reset_never_written_summarises_the_open_window_with_a_note(
    capsys, tmp_path, monkeypatch
):
    monkeypatch.setenv("MEMWARDEN_INDEX_SUMMARY_WAIT_SECONDS", "0")
    state = make_sqlite_era_state(tmp_path)

    result = summarize(
        capsys,
        state,
        "agent:main:main",
        "--session-id",
        MAIN_9_6,
        "--event-time",
        (START + timedelta(days=400)).isoformat(),
    )

    assert "wrote" in result.stdout
    text = summaries(state.workspace)[0].read_text()
    assert "- Note: the gateway's reset line did not appear" in text
    assert "second message after reset" in text


@pytest.mark.parametrize("value", ["yesterday", "2026-11-22T05:00:00"])
def test_summarize_bad_event_time_is_a_usage_error(capsys, tmp_path, value):
    state = make_sqlite_era_state(tmp_path)

    result = summarize(capsys, state, "agent:main:main", "--event-time", value)

    assert result.exit_code == 2
    assert "argument --event-time" in result.stderr


def test_summarize_masks_secrets_as_the_checkpoint_does(capsys, tmp_path):
    state = make_sqlite_era_state(tmp_path)
    session_id = "5e551011-0000-4000-8000-0000000000cc"
    lines = list(transcript_lines(1, session_id=session_id))
    lines[1]["message"]["content"] = "deploy with password=hunter2secret [FACT] key rotated"
    state.sqlite_path.unlink()
    make_sqlite_agent_db(state.sqlite_path, {session_id: lines})

    summarize(capsys, state, "agent:main:main", "--session-id", session_id)

    (path,) = summaries(state.workspace)
    text = path.read_text()
    assert "hunter2secret" not in text and "hunter2secret" not in path.name
    assert "### [FACT]\n- deploy with password=[REDACTED:password] [FACT] key rotated\n" in text


HOLD_LOCK = """
import sys, time
from pathlib import Path
from memwarden.process.locks import memory_lock
with memory_lock(Path(sys.argv[1]), "main"):
    print("held", flush=True)
    time.sleep(0.5)
    Path(sys.argv[2]).write_text(repr(time.time()))
"""


def test_summarize_waits_for_the_agents_memory_lock(capsys, tmp_path):
    state = make_sqlite_era_state(tmp_path)
    locks = Path(os.environ["XDG_STATE_HOME"]) / "memwarden" / "locks"
    released = tmp_path / "released"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(locks), str(released)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline().strip() == "held"

    result = summarize(capsys, state, "agent:main:main", "--session-id", MAIN_9_6)

    holder.wait(10)
    assert "wrote" in result.stdout
    (path,) = summaries(state.workspace)
    assert path.stat().st_mtime >= float(released.read_text())


def test_summarize_without_agent_takes_it_from_the_session_key(capsys, tmp_path):
    state = make_sqlite_era_state(tmp_path, agent_id="ops")

    result = summarize(
        capsys, state, "agent:ops:main", "--session-id", MAIN_9_6, "--event-time", RESET_EVENT_9_6
    )

    assert result.exit_code == 0, result.stderr
    assert state.workspace.name == "workspace-ops"
    assert [path.name for path in summaries(state.workspace)] == ["2026-11-22-session-ops.main.md"]


def test_summarize_file_era_topic_session_reads_its_session_file(capsys, tmp_path):
    state = make_file_era_state(tmp_path)
    archive = next(state.sessions_dir.glob(f"{OLD_7_35}.jsonl.reset.*"))
    archive.rename(state.sessions_dir / f"{OLD_7_35}-topic-42.jsonl")
    store = orjson.loads(state.session_store.read_bytes())
    store["agent:main:main"]["sessionId"] = OLD_7_35
    store["agent:main:main"]["sessionFile"] = f"{OLD_7_35}-topic-42.jsonl"
    state.session_store.write_bytes(orjson.dumps(store))

    result = summarize(capsys, state, "agent:main:main", "--previous-session-id", OLD_7_35)

    assert "wrote" in result.stdout, result.stdout + result.stderr
    assert "hello legacy layout" in summaries(state.workspace)[0].read_text()


@pytest.mark.parametrize("session_id", ["../outside", "a/b", "..", "."])
def test_summarize_session_id_not_a_file_name_is_a_usage_error(capsys, tmp_path, session_id):
    state = make_file_era_state(tmp_path)
    archive = next(state.sessions_dir.glob(f"{OLD_7_35}.jsonl.reset.*"))
    shutil.copy(archive, state.sessions_dir.parent / "outside.jsonl")

    result = summarize(capsys, state, "agent:main:main", "--previous-session-id", session_id)

    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert f"--previous-session-id {session_id!r}: not a session id" in result.stderr
    assert summaries(state.workspace) == []
