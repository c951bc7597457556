"""`memwarden checkpoint` against copies of the real captures of both gateway eras.

The 2026.9.6 capture (SQLite era) holds `agent:main:main`: two turns, a reset in place, a turn, a
manual compaction. The 2026.7.35 capture (file era) holds `agent:main:main` right after a reset:
an empty new transcript and the old one renamed `<old id>.jsonl.reset.<ts>`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from memwarden.runtime import JobContext
from support.cli import run_cli
from support.deployments import make_file_era_state, make_sqlite_era_state

NOW = datetime(2026, 11, 22, 6, 0, tzinfo=UTC)
SQLITE_MAIN_ID = "b5974d71-c717-4e69-b2ad-af312d36f9f1"
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
    assert "1 written" in result.stdout
    text = read(state.workspace / "memory" / "ACTIVE_CONTEXT.md")
    assert text.startswith("# Active Context — agent main\n")
    assert f"> - session: `agent:main:main` (id `{SQLITE_MAIN_ID}`, model fake-model)\n" in text
    assert "> - generated at: 2026-11-22T06:00:00Z\n" in text
    assert "> - entries read: 14\n" in text
    assert "> - context pressure: 1,234 of 32,000 tokens (4%)\n" in text
    assert (
        section(text, "Recent Requests")
        == "- **2026-11-22T05:28+00:00** second message after reset"
    )
    assert section(text, "Recent Work") == (
        "- **2026-11-22T05:29+00:00** Hello from the fake LLM. (canned reply)"
    )
    assert section(text, "Files Referenced") == "_None._"
    assert section(text, "Tools Used") == "_None._"
    summary = section(text, "Last Compaction Summary")
    assert summary.startswith('#### Latest user request context\n"second message after reset"')
    assert "#### Decisions\nNo prior history." in summary
    kept = text.split(f"\n## Previous Session `{SQLITE_MAIN_ID}`\n", 1)[1]
    assert "before the reset at 2026-11-22T05:27+00:00" in kept
    assert "### Recent Requests\n- **2026-11-22T05:26+00:00** hello from the cli test\n" in kept
    assert "### Recent Work\n- **2026-11-22T05:26+00:00** Hello from the fake LLM." in kept


def test_checkpoint_sqlite_era_capture_daily_log_entry_then_no_duplicate(tmp_path, capsys):
    state = make_sqlite_era_state(tmp_path)
    daily = state.workspace / "memory" / "2026-11-22.md"

    first = run_cli(capsys, "--state-dir", state.state_dir, "checkpoint")
    logged = read(daily)
    context = state.workspace / "memory" / "ACTIVE_CONTEXT.md"
    written_at = context.stat().st_mtime_ns
    second = run_cli(capsys, "--state-dir", state.state_dir, "checkpoint")

    assert first.exit_code == second.exit_code == 0
    assert logged == (
        "# 2026-11-22\n\n"
        'Daily log of agent main. Entries marked "checkpoint" are appended by memwarden from '
        "the live\ntranscript, one per run that saw new messages.\n\n"
        "### 05:29 · checkpoint · `agent:main:main`\n"
        f"- session `{SQLITE_MAIN_ID}`: 2 requests, 2 replies (05:26\N{EN DASH}05:29)\n"
        "- last request: second message after reset\n"
        "- last output: Hello from the fake LLM. (canned reply)\n"
    )
    assert "unchanged: nothing new since the last run" in second.stdout
    assert read(daily) == logged
    assert context.stat().st_mtime_ns == written_at


def test_checkpoint_file_era_capture_below_minimum_is_skipped_and_says_so(tmp_path, capsys):
    state = make_file_era_state(tmp_path)

    result = run_cli(capsys, "--state-dir", state.state_dir, "--json", "checkpoint")

    assert result.exit_code == 0
    (agent,) = result.json()["agents"]
    assert agent["outcome"] == "skipped"
    assert agent["reason"] == "2 message(s), under the minimum of 3"
    assert not (state.workspace / "memory").exists()


def test_checkpoint_file_era_capture_hands_off_the_archived_window(tmp_path, capsys):
    state = make_file_era_state(tmp_path)
    config = tmp_path / "memwarden.toml"
    config.write_text("[checkpoint]\nmin_messages = 2\n")
    arguments = ("--config", config, "--state-dir", state.state_dir, "checkpoint")

    first = run_cli(capsys, *arguments)
    second = run_cli(capsys, *arguments)

    assert first.exit_code == second.exit_code == 0, first.stderr
    text = read(state.workspace / "memory" / "ACTIVE_CONTEXT.md")
    assert f"> - session: `agent:main:main` (id `{FILE_MAIN_ID}`, model fake-model)\n" in text
    assert section(text, "Recent Requests") == "_No user messages in this window yet._"
    kept = text.split(f"\n## Previous Session `{FILE_OLD_ID}`\n", 1)[1]
    assert "before the reset at 2026-11-22T05:35+00:00" in kept
    assert "the current window has only 0 messages so far" in kept
    assert "### Recent Requests\n- **2026-11-22T05:34+00:00** hello legacy layout\n" in kept
    assert "### Recent Work\n- **2026-11-22T05:34+00:00** Hello from the fake LLM." in kept
    daily = read(state.workspace / "memory" / "2026-11-22.md")
    assert daily.count("### ") == 1
    assert daily.endswith(
        "### 05:34 · checkpoint · `agent:main:main`\n"
        f"- session `{FILE_OLD_ID}`: 1 request, 1 reply\n"
        "- last request: hello legacy layout\n"
        "- last output: Hello from the fake LLM. (canned reply)\n"
    )
    assert "unchanged: nothing new since the last run" in second.stdout


def test_checkpoint_json_reports_each_agent_with_files_counts_and_redactions(tmp_path, capsys):
    state = make_sqlite_era_state(tmp_path)

    result = run_cli(capsys, "--state-dir", state.state_dir, "--json", "checkpoint")

    document = result.json()
    assert document["summary"] == {
        "agents": 1,
        "sessions": 1,
        "written": 1,
        "unchanged": 0,
        "skipped": 0,
        "failed": 0,
        "redactions": 0,
    }
    (agent,) = document["agents"]
    memory = state.workspace / "memory"
    assert agent["agent"] == "main"
    assert agent["workspace"] == str(state.workspace)
    assert (agent["session_key"], agent["session_id"]) == ("agent:main:main", SQLITE_MAIN_ID)
    assert agent["files"] == [str(memory / "ACTIVE_CONTEXT.md"), str(memory / "2026-11-22.md")]
    assert agent["counts"]["messages"] == 2
    assert agent["counts"]["previous_messages"] == 2
    assert agent["counts"]["new_messages"] == 4
    assert agent["redactions"] == {}


def test_checkpoint_records_read_position_for_other_jobs(tmp_path, capsys, isolated_env):
    from memwarden.state import StateDB

    state = make_sqlite_era_state(tmp_path)
    run_cli(capsys, "--state-dir", state.state_dir, "checkpoint")

    database = StateDB(isolated_env / ".local" / "state" / "memwarden" / "state.db")
    row = database.get_position("checkpoint", "main", "agent:main:main")
    events = database.events(types=["checkpoint.written"])
    database.close()
    assert row["session_id"] == SQLITE_MAIN_ID
    assert row["position"] == {"seq": 13}
    # The newest line is the compaction at 05:31:43.832Z.
    assert row["last_entry_at"] == datetime(2026, 11, 22, 5, 31, 43, 832000, UTC).timestamp()
    assert row["data"]["file"] == "ACTIVE_CONTEXT.md"
    assert row["data"]["written_at"] == NOW.timestamp()
    assert [event["session_key"] for event in events] == ["agent:main:main"]
    assert events[0]["data"]["files"][0].endswith("ACTIVE_CONTEXT.md")


def test_checkpoint_dry_run_writes_nothing_and_shows_the_files(tmp_path, capsys):
    state = make_sqlite_era_state(tmp_path)

    result = run_cli(capsys, "--state-dir", state.state_dir, "checkpoint", "--dry-run")
    again = run_cli(capsys, "--state-dir", state.state_dir, "--json", "checkpoint", "--dry-run")

    assert result.exit_code == 0
    assert not (state.workspace / "memory").exists()
    assert "would write memory/ACTIVE_CONTEXT.md and memory/2026-11-22.md" in result.stdout
    assert "    ## Recent Requests" in result.stdout
    assert "    - last request: second message after reset" in result.stdout
    (agent,) = again.json()["agents"]
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
    assert agent["outcome"] == "written"  # 2 messages: under the minimum, written all the same
    text = read(state.workspace / "memory" / "ACTIVE_CONTEXT.md")
    assert section(text, "Recent Requests") == "- **2026-11-22T05:39+00:00** via agent rpc"


def test_checkpoint_session_option_unknown_key_is_a_usage_error(tmp_path, capsys):
    state = make_sqlite_era_state(tmp_path)

    result = run_cli(
        capsys, "--state-dir", state.state_dir, "checkpoint", "--session", "agent:main:nope"
    )

    assert result.exit_code == 2
    assert "agent main has no session 'agent:main:nope'" in result.stderr


def test_checkpoint_stale_main_falls_back_to_most_recent_interactive(tmp_path, capsys, monkeypatch):
    state = make_sqlite_era_state(tmp_path)
    monkeypatch.setattr(JobContext, "now", lambda self: datetime(2026, 11, 23, 6, 0, tzinfo=UTC))

    result = run_cli(capsys, "--state-dir", state.state_dir, "--json", "checkpoint")

    (agent,) = result.json()["agents"]
    # agentrpc (05:39) is newer than main (05:31) and hooktest (05:28); it has 2 messages.
    assert agent["session_key"] == "agent:main:agentrpc"
    assert agent["outcome"] == "skipped"
    assert agent["reason"] == "2 message(s), under the minimum of 3"


def test_checkpoint_timezone_setting_dates_the_daily_log(tmp_path, capsys, monkeypatch):
    state = make_sqlite_era_state(tmp_path)
    monkeypatch.setenv("MEMWARDEN_GENERAL_TIMEZONE", "Pacific/Kiritimati")  # UTC+14

    run_cli(capsys, "--state-dir", state.state_dir, "checkpoint")

    daily = read(state.workspace / "memory" / "2026-11-22.md")
    assert "### 19:29 · checkpoint" in daily
    assert "2026-11-22T19:28+14:00" in read(state.workspace / "memory" / "ACTIVE_CONTEXT.md")
