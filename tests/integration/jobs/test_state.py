"""`memwarden state backup|export`: a consistent private copy of state.db, and a JSON export."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import orjson
import pytest

from memwarden.jobs.state import backup_database
from memwarden.store.state import StateDB
from support.cli import run_cli
from support.written import is_private


@pytest.fixture
def state(isolated_env):
    database = StateDB(Path(isolated_env) / ".local" / "state" / "memwarden" / "state.db")
    run_id = database.start_run("checkpoint", now=1_800_000_000)
    database.finish_run(run_id, 0, {"written": 2}, now=1_800_000_001)
    database.record_event("rotation.done", agent_id="main", data={"tokens": 1}, ts=1_800_000_002)
    yield database
    database.close()


def test_state_backup_writes_private_checked_copy_with_all_rows(capsys, state, tmp_path):
    target = tmp_path / "backup.db"
    result = run_cli(capsys, "state", "backup", target)
    assert result.exit_code == 0, result.stderr
    assert "integrity ok" in result.stdout
    assert is_private(target)
    copy = sqlite3.connect(target)
    assert copy.execute("SELECT type FROM events").fetchall() == [("rotation.done",)]
    assert copy.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    copy.close()
    assert not list(tmp_path.glob(".backup.db.*"))


def test_state_backup_into_folder_gets_dated_name(capsys, state, tmp_path):
    result = run_cli(capsys, "state", "backup", tmp_path, "--json")
    written = Path(result.json()["backup"])
    assert written.parent == tmp_path and written.name.startswith("memwarden-state-")
    assert written.is_file()


def test_state_backup_refuses_to_overwrite_without_force(capsys, state, tmp_path):
    target = tmp_path / "backup.db"
    target.write_bytes(b"the operator's own file")
    result = run_cli(capsys, "state", "backup", target)
    assert result.exit_code == 2 and "exists" in result.stderr and "--force" in result.stderr
    assert target.read_bytes() == b"the operator's own file"
    assert run_cli(capsys, "state", "backup", target, "--force").exit_code == 0
    assert target.read_bytes().startswith(b"SQLite format 3\0")


def test_state_backup_refuses_symlink_target(capsys, state, tmp_path):
    real = tmp_path / "real.db"
    (tmp_path / "link.db").symlink_to(real)
    result = run_cli(capsys, "state", "backup", tmp_path / "link.db", "--force")
    assert result.exit_code == 1 and "symlink" in result.stderr
    assert not real.exists()


def test_state_backup_dry_run_writes_nothing(capsys, state, tmp_path):
    result = run_cli(capsys, "state", "backup", tmp_path / "b.db", "--dry-run")
    assert result.exit_code == 0
    assert result.stdout.startswith("would back up ")
    assert not (tmp_path / "b.db").exists()


def test_state_backup_while_another_connection_writes_is_consistent(state, tmp_path):
    writer = sqlite3.connect(state.path, timeout=5, check_same_thread=False)
    stop = threading.Event()

    def write_events():
        while not stop.is_set():
            with writer:
                writer.execute(
                    "INSERT INTO events (ts, type, agent_id) VALUES (1, 'load.test', 'main')"
                )

    thread = threading.Thread(target=write_events)
    thread.start()
    try:
        for number in range(3):
            backup_database(state, tmp_path / f"copy{number}.db")
    finally:
        stop.set()
        thread.join()
        writer.close()
    for number in range(3):
        copy = sqlite3.connect(tmp_path / f"copy{number}.db")
        assert copy.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        copy.close()


def test_state_export_prints_every_table_with_parsed_json(capsys, state):
    result = run_cli(capsys, "state", "export")
    assert result.exit_code == 0, result.stderr
    document = orjson.loads(result.stdout)
    assert document["format"] == "memwarden-state-export"
    assert {"runs", "events", "read_positions", "history_snapshots"} <= set(document["tables"])
    (event,) = document["tables"]["events"]
    assert event["data_json"] == {"tokens": 1}
    (run,) = document["tables"]["runs"]
    assert (run["job"], run["summary_json"]) == ("checkpoint", {"written": 2})


def test_state_export_to_file_is_private_and_refuses_overwrite(capsys, state, tmp_path):
    target = tmp_path / "export.json"
    result = run_cli(capsys, "state", "export", "--output", target)
    assert result.exit_code == 0, result.stderr
    assert is_private(target)
    assert orjson.loads(target.read_bytes())["tables"]["events"][0]["type"] == "rotation.done"
    assert run_cli(capsys, "state", "export", "--output", target).exit_code == 2
