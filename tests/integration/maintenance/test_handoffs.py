"""`memwarden maintain` archives the handoffs of idle conversations, and only those.

The 2026.7.35 capture, checkpointed on 2026-11-22: `agent:main:main` (ACTIVE_CONTEXT.md),
`agent:main:hot` and `agent:main:fixture` (memory/sessions/). Forty days later `hot` is still
in use (the store saw it yesterday) and `fixture` is not.
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from datetime import timedelta

import orjson
import pytest

from memwarden.process.runtime import JobContext
from support.cli import run_cli
from support.deployments import make_file_era_state

FIXTURE_HANDOFF = "sessions/main.fixture.md"
HOT_HANDOFF = "sessions/main.hot.md"
ARCHIVED = "archive/sessions/main.fixture.2026-11-22.md"


@pytest.fixture
def forty_days_on(tmp_path, capsys, monkeypatch, fixture_clock):
    monkeypatch.setenv("MEMWARDEN_INDEX_THRESHOLD_KB", "0")
    monkeypatch.setenv("MEMWARDEN_HISTORY_ENABLED", "false")
    state = make_file_era_state(tmp_path)
    assert run_cli(capsys, "--state-dir", state.state_dir, "checkpoint").exit_code == 0
    memory = state.workspace / "memory"
    (memory / "sessions" / "notes.md").write_text("# My own notes on sessions\n")
    written = (fixture_clock - timedelta(hours=1)).timestamp()
    for path in (memory / "sessions").iterdir():
        os.utime(path, (written, written))
    later = fixture_clock + timedelta(days=40)
    store = orjson.loads(state.session_store.read_bytes())
    store["agent:main:hot"]["updatedAt"] = int((later - timedelta(days=1)).timestamp() * 1000)
    state.session_store.write_bytes(orjson.dumps(store))
    monkeypatch.setattr(JobContext, "now", lambda self: later)
    return state


def held_conversations(home) -> list[str]:
    (database,) = home.rglob("state.db")
    with closing(sqlite3.connect(database)) as connection:
        rows = connection.execute("SELECT session_key FROM conversations ORDER BY 1").fetchall()
    return [key for (key,) in rows]


def test_maintain_archives_the_handoff_of_an_idle_conversation_only(
    capsys, forty_days_on, isolated_env
):
    memory = forty_days_on.workspace / "memory"
    text = (memory / FIXTURE_HANDOFF).read_text()

    result = run_cli(capsys, "--state-dir", forty_days_on.state_dir, "--json", "maintain")

    assert result.exit_code == 0, result.stderr
    assert result.json()["summary"]["handoffs"] == {"archived": 1}
    assert not (memory / FIXTURE_HANDOFF).exists()
    assert (memory / ARCHIVED).read_text() == text  # moved, not deleted
    assert (memory / HOT_HANDOFF).is_file()  # the store saw it yesterday
    assert (memory / "ACTIVE_CONTEXT.md").is_file()  # the main session's, never archived
    assert (memory / "sessions" / "notes.md").is_file()  # not a handoff of memwarden's
    manifest = orjson.loads((memory / ".memwarden-bootstrap.json").read_bytes())
    assert [file["path"] for file in manifest["files"]] == [
        "memory/ACTIVE_CONTEXT.md",
        f"memory/{HOT_HANDOFF}",
        "memory/INDEX.md",
    ]
    index = (memory / "INDEX.md").read_text()
    # Rebuilt, and naming no conversation's handoff: every session gets INDEX.md.
    assert "| 2026-" in index
    assert "main.hot" not in index and "main.fixture" not in index
    # What the archived conversation held is forgotten with it; the others' stays.
    assert held_conversations(isolated_env) == ["agent:main:hot", "agent:main:main"]


def test_maintain_handoff_archive_dry_run_says_what_it_would_move(capsys, forty_days_on):
    memory = forty_days_on.workspace / "memory"

    result = run_cli(capsys, "--state-dir", forty_days_on.state_dir, "maintain", "--dry-run")

    assert result.exit_code == 0, result.stderr
    assert (
        f"  main: would move memory/{FIXTURE_HANDOFF} to memory/{ARCHIVED} "
        "(`agent:main:fixture`, idle since 2026-11-22)"
    ) in result.stdout
    assert "handoffs: would archive 1 of conversations idle for more than 30 days" in result.stdout
    assert (memory / FIXTURE_HANDOFF).is_file()
    assert not (memory / "archive").exists()


def test_maintain_handoff_archive_never_moves_over_a_file_a_dry_run_too(capsys, forty_days_on):
    memory = forty_days_on.workspace / "memory"
    handoff = (memory / FIXTURE_HANDOFF).read_text()
    (memory / ARCHIVED).parent.mkdir(parents=True)
    (memory / ARCHIVED).write_text("archived by hand\n")
    args = ("--state-dir", forty_days_on.state_dir, "-q", "maintain")

    for dry_run in (("--dry-run",), ()):
        result = run_cli(capsys, *args, *dry_run)

        assert result.exit_code == 1, dry_run
        assert (
            f"agent main: {memory / ARCHIVED}: a file of that name is already there, and "
            f"memwarden never replaces one: compare it with {memory / FIXTURE_HANDOFF} and move "
            f"one away; {FIXTURE_HANDOFF} stays where it is"
        ) in result.stderr
        assert (memory / FIXTURE_HANDOFF).read_text() == handoff
        assert (memory / ARCHIVED).read_text() == "archived by hand\n"


def test_maintain_handoff_archive_off_or_longer_limit_moves_nothing(
    capsys, forty_days_on, monkeypatch
):
    memory = forty_days_on.workspace / "memory"
    monkeypatch.setenv("MEMWARDEN_MAINTAIN_ARCHIVE_HANDOFFS_AFTER_DAYS", "0")
    off = run_cli(capsys, "--state-dir", forty_days_on.state_dir, "--json", "maintain")
    monkeypatch.setenv("MEMWARDEN_MAINTAIN_ARCHIVE_HANDOFFS_AFTER_DAYS", "60")
    longer = run_cli(capsys, "--state-dir", forty_days_on.state_dir, "--json", "maintain")

    assert "handoffs" not in off.json()["summary"]
    assert longer.json()["summary"]["handoffs"] == {"archived": 0}
    assert (memory / FIXTURE_HANDOFF).is_file()


def test_maintain_handoffs_left_alone_when_the_store_cannot_be_read(capsys, forty_days_on):
    forty_days_on.session_store.write_text("{not json")

    result = run_cli(capsys, "--state-dir", forty_days_on.state_dir, "--json", "maintain")

    assert result.exit_code == 1
    assert "agent main: handoffs not archived:" in result.stderr
    assert (forty_days_on.workspace / "memory" / FIXTURE_HANDOFF).is_file()
