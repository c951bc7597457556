"""memwarden's state database: migrations, runs, events, read positions."""

from __future__ import annotations

import sqlite3
import stat
import subprocess
import sys

import pytest

from memwarden.store.state import Migration, StateDB, bundled_migrations
from support.positions import stored_position


def test_state_db_new_is_private_wal_and_migrated(tmp_path):
    path = tmp_path / "state" / "state.db"
    state = StateDB(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert state.connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert state.schema_version() == max(m.version for m in bundled_migrations())
    tables = {row[0] for row in state.connection.execute("SELECT name FROM sqlite_master")}
    assert {"runs", "events", "read_positions", "schema_migrations"} <= tables
    state.close()


def test_state_db_migrations_apply_once_in_order(tmp_path):
    migrations = [
        Migration(1, "one", "CREATE TABLE a (x INTEGER);"),
        Migration(2, "two", "INSERT INTO a VALUES (1);\nINSERT INTO a VALUES (2);"),
    ]
    state = StateDB(tmp_path / "s.db", migrations)
    assert state.migrate(migrations) == []
    later = [*migrations, Migration(3, "three", "INSERT INTO a VALUES (3);")]
    assert state.migrate(later) == [3]
    assert [row[0] for row in state.connection.execute("SELECT x FROM a ORDER BY x")] == [1, 2, 3]


def test_state_db_migration_applied_by_another_process_meanwhile_is_skipped(tmp_path):
    path = tmp_path / "s.db"
    migrations = [Migration(1, "one", "CREATE TABLE a (x INTEGER);")]
    late = StateDB(path, [])
    StateDB(path, migrations).close()
    # `late` read the applied versions before the other process committed its migration.
    stale_views = iter([set()])
    real_view = late._applied_versions
    late._applied_versions = lambda: next(stale_views, None) or real_view()
    assert late.migrate(migrations) == []
    assert late.schema_version() == 1


def test_state_db_opened_by_many_processes_at_once_migrates_once(tmp_path):
    path = tmp_path / "state.db"
    opener = "import sys, pathlib, memwarden.store.state as s; s.StateDB(pathlib.Path(sys.argv[1]))"
    processes = [subprocess.Popen([sys.executable, "-c", opener, path]) for _ in range(6)]
    assert [process.wait(timeout=60) for process in processes] == [0] * 6
    state = StateDB(path)
    rows = state.connection.execute("SELECT version FROM schema_migrations").fetchall()
    assert len(rows) == len(bundled_migrations())


def test_state_db_failed_migration_rolls_back_and_is_not_recorded(tmp_path):
    good = Migration(1, "one", "CREATE TABLE a (x INTEGER);")
    bad = Migration(2, "bad", "INSERT INTO a VALUES (1);\nINSERT INTO missing VALUES (2);")
    state = StateDB(tmp_path / "s.db", [good])
    with pytest.raises(sqlite3.OperationalError, match="no such table: missing"):
        state.migrate([good, bad])
    assert state.connection.execute("SELECT count(*) FROM a").fetchone()[0] == 0
    assert state.schema_version() == 1


def test_state_db_trigger_with_inner_semicolons_migrates(tmp_path):
    sql = (
        "CREATE TABLE a (x INTEGER);\nCREATE TABLE b (y INTEGER);\n"
        "CREATE TRIGGER t AFTER INSERT ON a BEGIN\n  INSERT INTO b VALUES (NEW.x);\nEND;\n"
        "INSERT INTO a VALUES (7);\n"
    )
    state = StateDB(tmp_path / "s.db", [Migration(1, "t", sql)])
    assert state.connection.execute("SELECT y FROM b").fetchone()[0] == 7


def test_runs_last_success_ignores_failures_and_dry_runs(tmp_path):
    state = StateDB(tmp_path / "s.db")
    ok = state.start_run("checkpoint", now=100.0)
    state.finish_run(ok, 0, {"written": 2}, now=101.0)
    dry = state.start_run("checkpoint", dry_run=True, now=200.0)
    state.finish_run(dry, 0, {}, now=201.0)
    failed = state.start_run("checkpoint", now=300.0)
    state.finish_run(failed, 1, {"failed": 1}, now=301.0)
    success = state.last_success("checkpoint")
    assert success.id == ok
    assert success.summary == {"written": 2}
    assert [run.id for run in state.last_runs("checkpoint", limit=5)] == [failed, ok]


def test_events_filtered_by_type_and_time(tmp_path):
    state = StateDB(tmp_path / "s.db")
    state.record_event("checkpoint.written", agent_id="main", data={"files": 2}, ts=10.0)
    state.record_event("rotation.done", agent_id="main", session_key="agent:main:main", ts=20.0)
    state.record_event("checkpoint.written", agent_id="ops", ts=30.0)
    events = state.events(types=["checkpoint.written"])
    assert [event["agent_id"] for event in events] == ["main", "ops"]
    assert events[0]["data"] == {"files": 2}
    assert [e["ts"] for e in state.events(types=["checkpoint.written"], since=15.0)] == [30.0]


def test_read_position_upsert_replaces_previous(tmp_path):
    state = StateDB(tmp_path / "s.db")
    assert stored_position(state, "checkpoint", "main", "agent:main:main") is None
    state.set_position("checkpoint", "main", "agent:main:main", "s1", {"offset": 10}, 1.5)
    state.set_position("checkpoint", "main", "agent:main:main", "s2", {"offset": 20}, 2.5)
    row = stored_position(state, "checkpoint", "main", "agent:main:main")
    assert (row["session_id"], row["position"], row["last_entry_at"]) == ("s2", {"offset": 20}, 2.5)
