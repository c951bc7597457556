"""Read-only commands and dry runs create nothing: listings of memwarden's storage, its HOME and
the gateway's state dir are compared before and after each run (the CLI as a subprocess)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import orjson
import pytest

from support.cli import run_subprocess
from support.deployments import make_sqlite_era_state

READ_ONLY = [
    ["status"],
    ["checkpoint", "--dry-run"],
    ["index", "--dry-run"],
    ["maintain", "--dry-run"],
    ["health", "--dry-run"],
    ["rotate", "--dry-run"],
    ["sessions"],
    ["events"],
    ["compactions"],
    ["history", "list"],
    ["doctor", "--skip-gateway"],
    ["config", "show"],
]


def listing(*roots: Path) -> dict[str, tuple[int, int] | None]:
    """Every path under the roots, with the size and modification time of each file (a folder's
    own time changes when SQLite's transient -wal and -shm files come and go)."""
    found: dict[str, tuple[int, int] | None] = {}
    for root in roots:
        for path in [root, *root.rglob("*")]:
            info = path.lstat()
            found[str(path)] = None if path.is_dir() else (info.st_size, info.st_mtime_ns)
    return found


@pytest.fixture
def gateway(tmp_path, monkeypatch):
    state = make_sqlite_era_state(tmp_path)
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(state.state_dir))
    monkeypatch.setenv("MEMWARDEN_HEALTH_GATEWAY_HTTP_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("MEMWARDEN_GATEWAY_URL", "ws://127.0.0.1:9")
    monkeypatch.setenv("MEMWARDEN_GATEWAY_TIMEOUT_SECONDS", "1")
    return state


@pytest.mark.parametrize("command", READ_ONLY, ids=" ".join)
def test_read_only_run_on_a_fresh_host_creates_nothing(command, gateway, isolated_env, tmp_path):
    before = listing(isolated_env, tmp_path)

    result = run_subprocess(*command)

    assert result.exit_code in (0, 1), result.stderr
    assert listing(isolated_env, tmp_path) == before
    assert not (isolated_env / ".local" / "state" / "memwarden").exists()


def test_read_only_runs_after_real_runs_change_nothing(gateway, isolated_env, tmp_path):
    for job in ("checkpoint", "index", "health"):
        run_subprocess(job)
    storage = isolated_env / ".local" / "state" / "memwarden"
    assert (storage / "state.db").exists()
    before = listing(isolated_env, tmp_path)

    for command in READ_ONLY:
        result = run_subprocess(*command)
        assert result.exit_code in (0, 1), (command, result.stderr)
        assert listing(isolated_env, tmp_path) == before, command


def test_a_dry_run_with_something_new_to_write_creates_nothing(gateway, isolated_env, tmp_path):
    assert run_subprocess("checkpoint").exit_code == 0
    _add_user_turn(gateway.sqlite_path, "[DECISION] keep the nightly backup at 02:00")
    before = listing(isolated_env, tmp_path)

    result = run_subprocess("--json", "checkpoint", "--dry-run")

    assert result.exit_code == 0, result.stderr
    written = [one for one in orjson.loads(result.stdout)["agents"] if one["outcome"] == "written"]
    assert written, result.stdout  # the dry run had something to write
    assert listing(isolated_env, tmp_path) == before


def _add_user_turn(database: Path, text: str) -> None:
    """Append a user message to the capture's longest transcript, as the gateway would (its
    CHECK calls octet_length(), which Python's SQLite lacks)."""
    with sqlite3.connect(database) as connection:
        connection.execute("PRAGMA ignore_check_constraints = ON")
        session_id, seq, created_at = connection.execute(
            "SELECT session_id, max(seq), max(created_at) FROM transcript_events "
            "GROUP BY session_id ORDER BY count(*) DESC LIMIT 1"
        ).fetchone()
        line = {
            "type": "message",
            "id": "0b0e7a8c-5d1e-4f7a-9c3e-000000000001",
            "parentId": None,
            "timestamp": "2026-11-22T05:40:00.000Z",
            "message": {"role": "user", "content": text},
        }
        connection.execute(
            "INSERT INTO transcript_events (session_id, seq, event_json, created_at, "
            "event_utf8_bytes) VALUES (?, ?, ?, ?, ?)",
            (session_id, seq + 1, orjson.dumps(line).decode(), created_at + 1, None),
        )
    connection.close()


def test_status_on_a_fresh_host_says_nothing_ran(gateway, isolated_env):
    result = run_subprocess("status")

    assert result.exit_code == 0
    assert "  checkpoint  never run" in result.stdout
