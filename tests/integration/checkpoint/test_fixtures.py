"""`memwarden checkpoint` against copies of the real captures of both gateway eras, on defaults.

The 2026.9.6 capture (SQLite era) holds `agent:main:main`: two turns, a reset in place, a turn, a
manual compaction; `agent:main:agentrpc`, one turn; `agent:main:hooktest`, one turn and two
resets. The 2026.7.35 capture (file era) holds `agent:main:main` right after a reset (an empty new
transcript and the old one renamed `<old id>.jsonl.reset.<ts>`), and `agent:main:fixture` and
`agent:main:hot`, one short hand-written turn each (831 bytes). Real first conversations are that
short: with the default settings every one of them gets its handoff.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from memwarden.process.runtime import JobContext
from support.cli import run_cli
from support.deployments import make_file_era_state, make_sqlite_era_state
from support.positions import stored_position
from support.transcripts import write_jsonl_transcript

NOW = datetime(2026, 11, 22, 6, 0, tzinfo=UTC)
SQLITE_MAIN_ID = "b5974d71-c717-4e69-b2ad-af312d36f9f1"
HOOKTEST_ID = "a9564a35-b31e-4dee-a039-26288e780302"
FILE_MAIN_ID = "f02065fb-f8d4-455b-b680-d2e5c4e5cf9b"
FILE_OLD_ID = "101fbd0d-c6e3-4b83-94f5-65435a94d00e"


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(JobContext, "now", lambda self: NOW)
    monkeypatch.setenv("MEMWARDEN_HISTORY_ENABLED", "false")


def section(text: str, title: str) -> str:
    """Return the body of the `## title` section (up to the next heading of that level)."""
    body = text.split(f"\n## {title}\n", 1)[1]
    return body.split("\n## ", 1)[0].strip()


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_checkpoint_sqlite_era_capture_writes_context_matching_the_transcript(tmp_path, capsys):
    state = make_sqlite_era_state(tmp_path)

    result = run_cli(capsys, "--state-dir", state.state_dir, "checkpoint")

    assert result.exit_code == 0, result.stderr
    assert "3 written" in result.stdout
    text = read(state.workspace / "memory" / "ACTIVE_CONTEXT.md")
    assert text.startswith("# Active Context — agent main\n")
    assert f"> - session: `agent:main:main` (id `{SQLITE_MAIN_ID}`, model fake-model)\n" in text
    assert "> - generated at: 2026-11-22T06:00:00Z\n" in text
    assert (
        "> - conversation: since 2026-11-22T05:26+00:00, 4 messages, 1 reset, 1 compaction\n"
    ) in text
    # The store's count is stale after the compaction, and the transcript's last call (1,234
    # at 05:29) came before it: what the compaction left is shown.
    assert (
        "> - context size: 80 of 32,000 tokens (0%) as of 2026-11-22T05:31+00:00: what the last "
        "compaction left, in the transcript (the gateway's count is stale)\n"
    ) in text
    # Across the reset in place: the whole conversation, with the reset and the compaction.
    assert section(text, "Conversation") == (
        "- **2026-11-22T05:26+00:00, user:** hello from the cli test\n"
        "- **2026-11-22T05:26+00:00, assistant:** Hello from the fake LLM. (canned reply)\n"
        "- _2026-11-22T05:27+00:00: the session was reset here_\n"
        "- **2026-11-22T05:28+00:00, user:** second message after reset\n"
        "- **2026-11-22T05:29+00:00, assistant:** Hello from the fake LLM. (canned reply)\n"
        "- _2026-11-22T05:31+00:00: the session was compacted here_"
    )
    assert section(text, "Files Referenced") == "_None._"
    assert section(text, "Tools Used") == "_None._"
    summary = section(text, "Last Compaction Summary")
    assert summary.startswith('#### Latest user request context\n"second message after reset"')
    assert "#### Decisions\nNo prior history." in summary
    assert "via agent rpc" not in text and "hello hook test" not in text


def test_checkpoint_sqlite_era_capture_each_conversation_gets_its_own_handoff(tmp_path, capsys):
    state = make_sqlite_era_state(tmp_path)

    result = run_cli(capsys, "--state-dir", state.state_dir, "checkpoint")

    assert result.exit_code == 0, result.stderr
    sessions = state.workspace / "memory" / "sessions"
    assert sorted(path.name for path in sessions.iterdir()) == [
        "main.agentrpc.md",
        "main.hooktest.md",
    ]
    rpc = read(sessions / "main.agentrpc.md")
    assert rpc.startswith("# Conversation Handoff — agent main, named conversation\n")
    assert "> - session: `agent:main:agentrpc`" in rpc
    assert section(rpc, "Conversation").startswith(
        "- **2026-11-22T05:39+00:00, user:** via agent rpc\n"
    )
    hooktest = read(sessions / "main.hooktest.md")
    assert f"(id `{HOOKTEST_ID}`" in hooktest
    assert section(hooktest, "Conversation").startswith(
        "- **2026-11-22T05:28+00:00, user:** hello hook test\n"
    )
    assert hooktest.count("the session was reset here") == 2
    for text in (rpc, hooktest):
        assert "second message after reset" not in text and "hello from the cli test" not in text


def test_checkpoint_sqlite_era_capture_daily_log_entry_then_no_duplicate(tmp_path, capsys):
    state = make_sqlite_era_state(tmp_path)
    daily = state.workspace / "memory" / "2026-11-22.md"

    first = run_cli(capsys, "--state-dir", state.state_dir, "checkpoint")
    logged = read(daily)
    context = state.workspace / "memory" / "ACTIVE_CONTEXT.md"
    written_at = context.stat().st_mtime_ns
    second = run_cli(capsys, "--state-dir", state.state_dir, "checkpoint")

    assert first.exit_code == second.exit_code == 0
    assert logged.startswith(
        "# 2026-11-22\n\n"
        'Daily log of agent main. Entries marked "checkpoint" are appended by memwarden from '
        "the live\ntranscript, one per run that saw new messages.\n\n"
        "### 05:29 · checkpoint · `agent:main:main`\n"
        f"- session `{SQLITE_MAIN_ID}`: 2 requests, 2 replies (05:26\N{EN DASH}05:29)\n"
        "- 05:26 user: hello from the cli test\n"
        "- 05:28 user: second message after reset\n"
        "- last output: Hello from the fake LLM. (canned reply)\n"
    )
    assert logged.count("### ") == 3
    assert "### 05:39 · checkpoint · `agent:main:agentrpc`\n" in logged
    assert "### 05:28 · checkpoint · `agent:main:hooktest`\n" in logged
    assert second.stdout.count("unchanged: nothing new since the last run") == 3
    assert read(daily) == logged
    assert context.stat().st_mtime_ns == written_at


def test_checkpoint_file_era_capture_short_real_sessions_are_written_on_defaults(tmp_path, capsys):
    state = make_file_era_state(tmp_path)

    result = run_cli(capsys, "--state-dir", state.state_dir, "--json", "checkpoint")

    assert result.exit_code == 0, result.stderr
    outcomes = {agent["session_key"]: agent for agent in result.json()["agents"]}
    assert {key: agent["outcome"] for key, agent in outcomes.items()} == {
        "agent:main:main": "written",
        "agent:main:hot": "written",
        "agent:main:fixture": "written",
    }
    memory = state.workspace / "memory"
    assert outcomes["agent:main:fixture"]["files"][0] == str(memory / "sessions/main.fixture.md")
    fixture = read(memory / "sessions" / "main.fixture.md")
    assert section(fixture, "Conversation").startswith(
        "- **2026-11-22T05:35+00:00, user:** handwritten fixture\n"
    )


def test_checkpoint_empty_session_is_skipped_and_says_so(tmp_path, capsys):
    state = make_file_era_state(tmp_path)
    for archive in state.sessions_dir.glob("*.jsonl.reset.*"):
        archive.unlink()  # agent:main:main: a header, nothing before it

    result = run_cli(capsys, "--state-dir", state.state_dir, "--json", "checkpoint")

    outcomes = {agent["session_key"]: agent for agent in result.json()["agents"]}
    main = outcomes["agent:main:main"]
    assert main["outcome"] == "skipped"
    assert main["reason"] == "no user or assistant message yet: nothing to hand off"
    assert not (state.workspace / "memory" / "ACTIVE_CONTEXT.md").exists()


def test_checkpoint_file_era_capture_hands_off_the_archived_window(tmp_path, capsys):
    state = make_file_era_state(tmp_path)
    arguments = ("--state-dir", state.state_dir, "checkpoint", "--agent", "main")

    first = run_cli(capsys, *arguments)
    second = run_cli(capsys, *arguments)

    assert first.exit_code == second.exit_code == 0, first.stderr
    text = read(state.workspace / "memory" / "ACTIVE_CONTEXT.md")
    assert f"> - session: `agent:main:main` (id `{FILE_MAIN_ID}`, model fake-model)\n" in text
    # The first run after a file-era reset: the archive the gateway renamed, this key's.
    assert section(text, "Conversation") == (
        "- **2026-11-22T05:34+00:00, user:** hello legacy layout\n"
        "- **2026-11-22T05:34+00:00, assistant:** Hello from the fake LLM. (canned reply)\n"
        "- _2026-11-22T05:35+00:00: the session was reset here_"
    )
    daily = read(state.workspace / "memory" / "2026-11-22.md")
    assert daily.count("`agent:main:main`") == 1
    assert (
        "### 05:34 · checkpoint · `agent:main:main`\n"
        f"- session `{FILE_OLD_ID}`: 1 request, 1 reply\n"
        "- 05:34 user: hello legacy layout\n"
        "- last output: Hello from the fake LLM. (canned reply)\n"
    ) in daily
    assert second.stdout.count("unchanged: nothing new since the last run") == 3


def test_checkpoint_json_reports_each_agent_with_files_counts_and_redactions(tmp_path, capsys):
    state = make_sqlite_era_state(tmp_path)

    result = run_cli(capsys, "--state-dir", state.state_dir, "--json", "checkpoint")

    document = result.json()
    assert document["summary"] == {
        "agents": 1,
        "sessions": 3,
        "written": 3,
        "unchanged": 0,
        "skipped": 0,
        "failed": 0,
        "redactions": 0,
    }
    agent = document["agents"][0]
    memory = state.workspace / "memory"
    assert agent["agent"] == "main"
    assert agent["workspace"] == str(state.workspace)
    assert (agent["session_key"], agent["session_id"]) == ("agent:main:main", SQLITE_MAIN_ID)
    assert agent["files"] == [str(memory / "ACTIVE_CONTEXT.md"), str(memory / "2026-11-22.md")]
    assert agent["counts"]["messages"] == 4
    assert (agent["counts"]["resets"], agent["counts"]["compactions"]) == (1, 1)
    assert agent["counts"]["new_messages"] == 4
    assert agent["previous_session_id"] is None
    assert agent["redactions"] == {}
    assert document["agents"][1]["files"] == [
        str(memory / "sessions" / "main.agentrpc.md"),
        str(memory / "2026-11-22.md"),
    ]


def test_checkpoint_records_read_position_for_other_jobs(tmp_path, capsys, isolated_env):
    from memwarden.store.state import StateDB

    state = make_sqlite_era_state(tmp_path)
    run_cli(capsys, "--state-dir", state.state_dir, "checkpoint")

    database = StateDB(isolated_env / ".local" / "state" / "memwarden" / "state.db")
    row = stored_position(database, "checkpoint", "main", "agent:main:main")
    events = database.events(types=["checkpoint.written"])
    database.close()
    assert row["session_id"] == SQLITE_MAIN_ID
    assert row["position"] == {"seq": 13}
    # The newest line is the compaction at 05:31:43.832Z.
    assert row["last_entry_at"] == datetime(2026, 11, 22, 5, 31, 43, 832000, UTC).timestamp()
    assert row["data"]["file"] == "ACTIVE_CONTEXT.md"
    assert row["data"]["written_at"] == NOW.timestamp()
    assert [event["session_key"] for event in events] == [
        "agent:main:main",
        "agent:main:agentrpc",
        "agent:main:hooktest",
    ]
    assert events[0]["data"]["files"][0].endswith("ACTIVE_CONTEXT.md")
    assert events[1]["data"]["files"][0].endswith("sessions/main.agentrpc.md")


def test_checkpoint_dry_run_writes_nothing_and_shows_the_files(tmp_path, capsys):
    state = make_sqlite_era_state(tmp_path)

    result = run_cli(capsys, "--state-dir", state.state_dir, "checkpoint", "--dry-run")
    again = run_cli(capsys, "--state-dir", state.state_dir, "--json", "checkpoint", "--dry-run")

    assert result.exit_code == 0
    assert not (state.workspace / "memory").exists()
    assert "would write memory/ACTIVE_CONTEXT.md and memory/2026-11-22.md" in result.stdout
    assert "would write memory/sessions/main.agentrpc.md and memory/2026-11-22.md" in result.stdout
    assert "    ## Conversation" in result.stdout
    assert "    - 05:28 user: second message after reset" in result.stdout
    agent = again.json()["agents"][0]
    assert agent["outcome"] == "written"
    previews = agent["previews"]
    assert previews[str(state.workspace / "memory" / "2026-11-22.md")].startswith("# 2026-11-22\n")


def test_checkpoint_session_option_checkpoints_a_named_session_forced(tmp_path, capsys):
    state = make_sqlite_era_state(tmp_path)

    result = run_cli(
        capsys,
        "--state-dir",
        state.state_dir,
        "--json",
        "checkpoint",
        "--session",
        "agent:main:agentrpc",
    )

    assert result.exit_code == 0, result.stderr
    (agent,) = result.json()["agents"]
    assert agent["session_key"] == "agent:main:agentrpc"
    assert agent["outcome"] == "written"
    text = read(state.workspace / "memory" / "sessions" / "main.agentrpc.md")
    assert "- **2026-11-22T05:39+00:00, user:** via agent rpc\n" in text
    assert not (state.workspace / "memory" / "ACTIVE_CONTEXT.md").exists()


def test_checkpoint_session_option_unknown_key_is_a_usage_error(tmp_path, capsys):
    state = make_sqlite_era_state(tmp_path)

    result = run_cli(
        capsys, "--state-dir", state.state_dir, "checkpoint", "--session", "agent:main:nope"
    )

    assert result.exit_code == 2
    assert "agent main has no session 'agent:main:nope'" in result.stderr


def test_checkpoint_a_day_later_keeps_main_and_leaves_the_idle_conversations(
    tmp_path, capsys, monkeypatch
):
    state = make_sqlite_era_state(tmp_path)
    monkeypatch.setattr(JobContext, "now", lambda self: datetime(2026, 11, 23, 6, 0, tzinfo=UTC))

    result = run_cli(capsys, "--state-dir", state.state_dir, "--json", "checkpoint")

    (agent,) = result.json()["agents"]
    assert (agent["session_key"], agent["outcome"]) == ("agent:main:main", "written")
    assert not (state.workspace / "memory" / "sessions").exists()


def test_checkpoint_recent_mode_stale_main_falls_back_to_most_recent_interactive(
    tmp_path, capsys, monkeypatch
):
    state = make_sqlite_era_state(tmp_path)
    monkeypatch.setattr(JobContext, "now", lambda self: datetime(2026, 11, 23, 6, 0, tzinfo=UTC))
    monkeypatch.setenv("MEMWARDEN_CHECKPOINT_SESSIONS", "recent")

    result = run_cli(capsys, "--state-dir", state.state_dir, "--json", "checkpoint")

    (agent,) = result.json()["agents"]
    # agentrpc (05:39) is newer than main (05:31) and hooktest (05:28); its own file.
    assert (agent["session_key"], agent["outcome"]) == ("agent:main:agentrpc", "written")
    assert (state.workspace / "memory" / "sessions" / "main.agentrpc.md").is_file()
    assert not (state.workspace / "memory" / "ACTIVE_CONTEXT.md").exists()


def test_checkpoint_timezone_setting_dates_the_daily_log(tmp_path, capsys, monkeypatch):
    state = make_sqlite_era_state(tmp_path)
    monkeypatch.setenv("MEMWARDEN_GENERAL_TIMEZONE", "Pacific/Kiritimati")  # UTC+14

    run_cli(capsys, "--state-dir", state.state_dir, "checkpoint")

    daily = read(state.workspace / "memory" / "2026-11-22.md")
    assert "### 19:29 · checkpoint" in daily
    assert "2026-11-22T19:28+14:00" in read(state.workspace / "memory" / "ACTIVE_CONTEXT.md")


def peer_started_beside_the_main_reset(state) -> str:
    """Add `agent:main:telegram:direct:9`: one turn in a transcript begun 2 s before the
    capture's reset of agent:main:main renamed its transcript (05:35:07.925). Return its key."""
    key, session_id = "agent:main:telegram:direct:9", "99999999-0000-4000-8000-000000000009"
    header = {
        "type": "session",
        "version": 3,
        "id": session_id,
        "timestamp": "2026-11-22T05:35:05.900Z",
        "cwd": "/srv/openclaw/workspace",
    }
    write_jsonl_transcript(state.sessions_dir / f"{session_id}.jsonl", 1, session_id=session_id)
    transcript = state.sessions_dir / f"{session_id}.jsonl"
    lines = transcript.read_text().splitlines()
    transcript.write_text("\n".join([orjson.dumps(header).decode(), *lines[1:]]) + "\n")
    store = orjson.loads(state.session_store.read_bytes())
    store[key] = {"sessionId": session_id, "updatedAt": int(NOW.timestamp() * 1000) - 60_000}
    state.session_store.write_bytes(orjson.dumps(store))
    return key


def test_checkpoint_first_run_never_hands_off_another_conversations_reset_archive(tmp_path, capsys):
    state = make_file_era_state(tmp_path)
    peer_started_beside_the_main_reset(state)

    result = run_cli(capsys, "--state-dir", state.state_dir, "checkpoint")

    assert result.exit_code == 0, result.stderr
    memory = state.workspace / "memory"
    peer = read(memory / "sessions" / "main.telegram.direct.9.md")
    assert "hello legacy layout" not in peer
    main = read(memory / "ACTIVE_CONTEXT.md")  # its trajectory says the archive was main's
    assert "hello legacy layout" in main


def test_checkpoint_first_run_takes_no_archive_whose_owner_is_unknown(tmp_path, capsys):
    state = make_file_era_state(tmp_path)
    (state.sessions_dir / f"{FILE_OLD_ID}.trajectory.jsonl").unlink()

    result = run_cli(capsys, "--state-dir", state.state_dir, "--json", "checkpoint")

    outcomes = {agent["session_key"]: agent for agent in result.json()["agents"]}
    assert outcomes["agent:main:main"]["outcome"] == "skipped"
    assert not (state.workspace / "memory" / "ACTIVE_CONTEXT.md").exists()
