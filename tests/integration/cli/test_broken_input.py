"""Broken input from the operator or the gateway, through the real CLI: one line naming the file
and the field with the fix, never a traceback or Python's raw exception text, and never a silent
skip with exit 0 where an agent's data cannot be read."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import json5
import orjson
import pytest

from support.cli import CliResult, run_subprocess
from support.deployments import make_file_era_state, make_sqlite_era_state, write_json5_config
from support.transcripts import (
    MINIMAL_NAVIGATION_JSON,
    make_sqlite_agent_db,
    transcript_lines,
)

RAW_PYTHON = ("Traceback", "Error:", "[Errno", "Is a directory: ")


def assert_clear(result: CliResult, *words: str) -> None:
    """No traceback nor raw exception text; some stderr line holds every word."""
    for raw in RAW_PYTHON:
        assert raw not in result.stderr, result.stderr
    lines = result.stderr.splitlines()
    assert any(all(word in line for word in words) for line in lines), result.stderr


def edit_store(state, change) -> None:
    store = orjson.loads(state.session_store.read_bytes())
    change(store)
    state.session_store.write_bytes(orjson.dumps(store))


def edit_config(state, change) -> None:
    config = json5.loads(state.config_path.read_text())
    change(config)
    write_json5_config(state.config_path, config)


# --- memwarden's own config ------------------------------------------------------------------


def test_config_not_utf8_is_one_line_exit_2(tmp_path):
    config = tmp_path / "config.toml"
    config.write_bytes(b'[general]\nstorage_dir = "\xff\xfe"\n')
    result = run_subprocess("--config", config, "sessions")
    assert result.exit_code == 2
    assert_clear(result, str(config), "not UTF-8")


@pytest.mark.parametrize("option", ["--config", "--state-dir"])
def test_empty_path_option_says_it_is_empty(tmp_path, option):
    result = run_subprocess(option, "", "sessions", cwd=str(tmp_path))
    assert result.exit_code == 2
    assert_clear(result, f"argument {option}: the option is empty", "leave the option out")
    assert "folder" not in result.stderr and "no OpenClaw gateway state" not in result.stderr


def test_config_files_that_are_fifos_are_refused_without_blocking(tmp_path, monkeypatch):
    state = make_sqlite_era_state(tmp_path)
    fifos = {name: tmp_path / name for name in ("config.toml", "secrets.env")}
    for fifo in fifos.values():
        os.mkfifo(fifo)
    state.config_path.unlink()
    os.mkfifo(state.config_path)
    monkeypatch.setenv("MEMWARDEN_GENERAL_SECRETS_FILE", str(fifos["secrets.env"]))

    checked = run_subprocess("--config", fifos["config.toml"], "config", "check", timeout=20)

    assert checked.exit_code == 2
    assert_clear(checked, str(fifos["config.toml"]), "named pipe (FIFO)", "the TOML file itself")
    assert_clear(checked, str(fifos["secrets.env"]), "named pipe (FIFO)", "the secrets file")
    monkeypatch.delenv("MEMWARDEN_GENERAL_SECRETS_FILE")
    listed = run_subprocess("--state-dir", state.state_dir, "sessions", timeout=20)
    assert listed.exit_code == 2
    assert_clear(listed, str(state.config_path), "gateway config is a named pipe (FIFO)")


def test_relative_storage_dir_is_refused(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('[general]\nstorage_dir = "relative/state"\n')
    result = run_subprocess("--config", config, "checkpoint")
    assert result.exit_code == 2
    assert_clear(result, "general.storage_dir", "absolute path", "relative/state")


def test_secrets_file_a_folder_names_it(tmp_path, monkeypatch):
    folder = tmp_path / "secrets.env"
    folder.mkdir()
    monkeypatch.setenv("MEMWARDEN_GENERAL_SECRETS_FILE", str(folder))
    result = run_subprocess("sessions")
    assert result.exit_code == 2
    assert_clear(result, str(folder), "folder")


# --- the gateway's config ---------------------------------------------------------------------


def test_huge_gateway_port_names_file_and_field(tmp_path):
    state = make_sqlite_era_state(tmp_path)
    edit_config(state, lambda config: config["gateway"].update(port=1e30))
    result = run_subprocess("--state-dir", state.state_dir, "rotate")
    assert result.exit_code == 2
    assert_clear(result, str(state.config_path), "gateway.port", "1 to 65535")


def test_huge_bootstrap_cap_is_no_cap(tmp_path):
    state = make_sqlite_era_state(tmp_path)
    edit_config(state, lambda config: config["agents"]["defaults"].update(bootstrapMaxChars=1e308))
    memory = state.workspace / "memory"
    memory.mkdir()
    for number in range(30):
        (memory / f"note-{number}.md").write_text("[DECISION] keep this\n" * 120)
    result = run_subprocess("--state-dir", state.state_dir, "--json", "index")
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr
    (workspace,) = result.json()["workspaces"]
    assert workspace["status"] == "written"
    assert workspace["cap"] == 2**53 - 1


@pytest.mark.parametrize("job", ["checkpoint", "index", "sessions"])
def test_agent_entries_the_gateway_ignores_or_misreads_are_named(tmp_path, job):
    state = make_sqlite_era_state(tmp_path)
    entries = [
        {"id": "main", "default": True, "workspace": str(state.workspace)},
        "x",
        {"id": 5, "workspace": str(tmp_path / "five")},
        {"workspace": str(tmp_path / "nameless")},
    ]
    edit_config(state, lambda config: config["agents"].update(list=entries))

    result = run_subprocess("--state-dir", state.state_dir, "-q", job)

    assert result.exit_code == 1
    config = str(state.config_path)
    assert_clear(result, config, "agents.list[1]: a string ('x')", "ignore", "make it an object")
    assert_clear(result, config, "agents.list[2].id: a number (5)", "as agent main's", "a string")
    assert_clear(result, config, "agents.list[3].id: missing", "as agent main's")
    assert len(result.stderr.splitlines()) == 3, result.stderr


def test_agent_entries_map_with_a_value_that_is_not_an_entry_is_named(tmp_path):
    state = make_sqlite_era_state(tmp_path)
    entries = {"main": {"workspace": str(state.workspace)}, "ops": "/srv/ops"}
    edit_config(state, lambda config: config["agents"].update(entries=entries))
    result = run_subprocess("--state-dir", state.state_dir, "-q", "sessions")
    assert result.exit_code == 1
    assert_clear(result, str(state.config_path), "agents.entries.ops: a string ('/srv/ops')")


# --- session stores ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda store: store.update({"agent:main:main": None}), ["agent:main:main", "null"]),
        (lambda store: store.update({"agent:main:odd": "text"}), ["agent:main:odd", "a string"]),
        (
            lambda store: store["agent:main:main"].update(sessionId=5),
            ["agent:main:main", "sessionId", "a number (5)"],
        ),
        (
            lambda store: store["agent:main:main"].update(updatedAt="yesterday"),
            ["agent:main:main", "updatedAt", "not a time"],
        ),
        (
            lambda store: store["agent:main:main"].update(updatedAt=1e30),
            ["agent:main:main", "updatedAt", "1e+30"],
        ),
    ],
)
@pytest.mark.parametrize("job", ["sessions", "checkpoint"])
def test_unreadable_store_entry_is_reported_exit_1(tmp_path, change, words, job):
    state = make_file_era_state(tmp_path)
    edit_store(state, change)
    result = run_subprocess("--state-dir", state.state_dir, job)
    assert result.exit_code == 1
    assert_clear(result, str(state.session_store), *words)


def test_unreadable_entry_is_reported_again_on_the_next_checkpoint(tmp_path):
    state = make_file_era_state(tmp_path)
    edit_store(state, lambda store: store.update({"agent:main:odd": None}))
    for _run in range(2):
        result = run_subprocess("--state-dir", state.state_dir, "-q", "checkpoint")
        assert result.exit_code == 1
        assert_clear(result, "agent:main:odd")


def test_store_a_folder_is_reported_exit_1(tmp_path):
    state = make_file_era_state(tmp_path)
    state.session_store.unlink()
    state.session_store.mkdir()
    for job in ("sessions", "checkpoint"):
        result = run_subprocess("--state-dir", state.state_dir, job)
        assert result.exit_code == 1
        assert_clear(result, str(state.session_store), "folder")


def test_store_missing_beside_transcripts_is_reported_exit_1(tmp_path):
    state = make_file_era_state(tmp_path)
    state.session_store.unlink()
    result = run_subprocess("--state-dir", state.state_dir, "sessions")
    assert result.exit_code == 1
    assert_clear(result, str(state.session_store), "missing", "transcript")


def test_agent_database_a_folder_is_reported_exit_1(tmp_path):
    state = make_sqlite_era_state(tmp_path)
    state.sqlite_path.unlink()
    state.sqlite_path.mkdir()
    result = run_subprocess("--state-dir", state.state_dir, "checkpoint")
    assert result.exit_code == 1
    assert_clear(result, str(state.sqlite_path), "folder")


def test_odd_column_types_are_reported_not_misread(tmp_path):
    state = make_sqlite_era_state(tmp_path)
    with sqlite3.connect(state.sqlite_path) as connection:  # an older, non-STRICT table
        rows = connection.execute(
            "SELECT session_key, current_session_id, entry_json FROM session_nodes"
        ).fetchall()
        connection.execute("DROP TABLE session_nodes")
        connection.execute(
            "CREATE TABLE session_nodes (session_key, current_session_id, entry_json, updated_at)"
        )
        good, second, third = rows
        connection.executemany(
            "INSERT INTO session_nodes VALUES (?, ?, ?, ?)",
            [
                (*good, 1e30),
                (second[0].encode(), second[1], second[2], "yesterday"),
                (third[0], 12345, third[2], 1795325503954),
            ],
        )
    result = run_subprocess("--state-dir", state.state_dir, "--json", "sessions")
    assert result.exit_code == 1
    assert_clear(result, "session_key", "binary data")
    assert_clear(result, third[0], "current_session_id", "a number (12345)")
    keys = [session["key"] for session in result.json()["agents"][0]["sessions"]]
    assert keys == [good[0]]


# --- transcripts -----------------------------------------------------------------------------


def test_skipped_jsonl_lines_are_reported_once_by_reason(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMWARDEN_CHECKPOINT_SESSIONS", "main")
    state = make_file_era_state(tmp_path)
    session_id = orjson.loads(state.session_store.read_bytes())["agent:main:main"]["sessionId"]
    transcript = state.sessions_dir / f"{session_id}.jsonl"
    first = run_subprocess("--state-dir", state.state_dir, "-q", "checkpoint")
    assert (first.exit_code, first.stderr) == (0, "")
    with transcript.open("ab") as handle:
        handle.write(b'{"type":"message","x":"' + b"a" * (32 * 1024 * 1024) + b'"}\n')
        handle.write(b"not json\n")
        handle.write(b'{"type":"message","x":"\xff\xfe"}\n')

    result = run_subprocess("--state-dir", state.state_dir, "-q", "--json", "checkpoint")

    assert result.exit_code == 0, result.stderr
    (line,) = result.stderr.splitlines()
    assert " WARNING memwarden: " in line
    assert line.endswith(
        f"{transcript}: 3 transcript line(s) skipped: 1 longer than 33554432 bytes (memwarden's "
        "limit per line), 1 not JSON, 1 not UTF-8"
    )
    (session,) = result.json()["agents"]
    assert session["counts"]["skipped_lines"] == 3
    again = run_subprocess("--state-dir", state.state_dir, "-q", "checkpoint", "--force")
    assert (again.exit_code, again.stderr) == (0, ""), "reported once, by the run that met them"


def test_skipped_sqlite_rows_are_reported_once_by_reason(tmp_path):
    session_id = "5e551011-0000-4000-8000-00000000000a"
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    database = tmp_path / "state" / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    make_sqlite_agent_db(database, {session_id: transcript_lines(3, session_id=session_id)})
    config = {"agents": {"list": [{"id": "main", "workspace": str(workspace)}]}}
    (tmp_path / "state" / "openclaw.json").write_bytes(orjson.dumps(config))
    state_dir = tmp_path / "state"
    first = run_subprocess("--state-dir", state_dir, "-q", "checkpoint")
    assert (first.exit_code, first.stderr) == (0, "")
    with sqlite3.connect(database) as connection:
        (last,) = connection.execute("SELECT max(seq) FROM transcript_events").fetchone()
        connection.executemany(
            "INSERT INTO transcript_events VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (session_id, last + 1, "not json", 0, None, 8, None),
                (session_id, last + 2, None, 0, b"not a zstd frame", 16, MINIMAL_NAVIGATION_JSON),
            ],
        )
    connection.close()

    result = run_subprocess("--state-dir", state_dir, "-q", "checkpoint")

    assert result.exit_code == 0, result.stderr
    (line,) = result.stderr.splitlines()
    assert line.endswith(
        f"{database} (session {session_id}): 2 transcript_events row(s) skipped: 2 not JSON, or "
        "no event that can be read"
    )
    again = run_subprocess("--state-dir", state_dir, "-q", "checkpoint", "--force")
    assert (again.exit_code, again.stderr) == (0, ""), "reported once, by the run that met them"


# --- files in the workspace -------------------------------------------------------------------


def test_index_file_a_folder_names_it(tmp_path):
    state = make_sqlite_era_state(tmp_path)
    memory = state.workspace / "memory"
    (memory / "INDEX.md").mkdir(parents=True)
    for number in range(30):
        (memory / f"note-{number}.md").write_text("[FACT] a fact\n" * 150)
    result = run_subprocess("--state-dir", state.state_dir, "index")
    assert result.exit_code == 1
    assert_clear(result, str(memory / "INDEX.md"), "folder")


def odd_name_pool(state) -> tuple[bytes, bytes]:
    """Fill the memory pool past the index threshold, with a file whose name is not UTF-8 and
    one with a newline in its name; return both names (as bytes)."""
    memory = state.workspace / "memory"
    memory.mkdir()
    for number in range(30):
        (memory / f"note-{number}.md").write_text("[FACT] a fact\n" * 150)
    not_utf8, newline = b"caf\xe9 notes.md", b"two\nlines.md"
    for name in (not_utf8, newline):
        try:
            with open(os.path.join(os.fsencode(memory), name), "wb") as handle:
                handle.write(b"# Odd\n[TODO] still indexed\n" + b"x" * 60_000)
        except OSError:
            pytest.skip("this filesystem refuses such names")
    return not_utf8, newline


def test_index_escapes_file_names_that_are_not_text(tmp_path):
    state = make_sqlite_era_state(tmp_path)
    odd_name_pool(state)
    for _run in range(2):  # the second run reads the facts cached by the first
        result = run_subprocess("--state-dir", state.state_dir, "index", "--force")
        assert result.exit_code == 0, result.stderr
    rows = (state.workspace / "memory" / "INDEX.md").read_text().splitlines()
    table = [row for row in rows if row.startswith("| ")]
    assert any(row.startswith("| caf\\xe9 notes.md | Odd |") for row in table), table
    assert any(row.startswith("| two\\x0alines.md | Odd |") for row in table), table
    assert all(row.rstrip().endswith("|") for row in table), "a name broke a table row"


def test_health_names_oversized_files_that_are_not_text(tmp_path, monkeypatch):
    state = make_sqlite_era_state(tmp_path)
    odd_name_pool(state)
    monkeypatch.setenv("MEMWARDEN_HEALTH_DISABLED_CHECKS", '["gateway*", "disk:*"]')
    result = run_subprocess("--state-dir", state.state_dir, "--json", "health")
    assert "Traceback" not in result.stderr and "failed" not in result.stderr, result.stderr
    (check,) = [c for c in result.json()["checks"] if c["key"] == "memory.oversized"]
    assert "memory/caf\\xe9 notes.md" in check["message"]
    assert "memory/two\\x0alines.md" in check["message"]


# --- workspaces memwarden must not write into -------------------------------------------------


def two_agents(tmp_path, monkeypatch, other_workspace: str):
    """A SQLite-era gateway whose default agent `main` is fine and whose agent `other` (same
    sessions) has `other_workspace`; checkpoint takes each agent's main session, whatever the
    time (the capture is old)."""
    monkeypatch.setenv("MEMWARDEN_CHECKPOINT_SESSIONS", "main")
    state = make_sqlite_era_state(tmp_path)
    other_database = state.state_dir / "agents" / "other" / "agent" / state.sqlite_path.name
    other_database.parent.mkdir(parents=True)
    shutil.copy2(state.sqlite_path, other_database)
    entries = [
        {"id": "main", "default": True, "workspace": str(state.workspace)},
        {"id": "other", "workspace": other_workspace},
    ]
    edit_config(state, lambda config: config["agents"].update(list=entries))
    return state


@pytest.mark.parametrize("where", ["home", "root", "system"])
def test_workspace_home_root_or_system_folder_is_refused(
    tmp_path, monkeypatch, isolated_env, where
):
    workspace = {"home": str(isolated_env), "root": "/", "system": "/etc"}[where]
    state = two_agents(tmp_path, monkeypatch, workspace)
    result = run_subprocess("--state-dir", state.state_dir, "checkpoint", "--force")
    assert result.exit_code == 1
    assert_clear(result, str(state.config_path), "agent other", workspace, "will not create")
    assert not (Path(workspace) / "memory").exists()
    assert (state.workspace / "memory" / "ACTIVE_CONTEXT.md").is_file(), "main still runs"


def test_relative_workspace_is_refused_not_resolved_here(tmp_path, monkeypatch):
    state = two_agents(tmp_path, monkeypatch, "relative/workspace")
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    result = run_subprocess("--state-dir", state.state_dir, "checkpoint", cwd=str(elsewhere))
    assert result.exit_code == 1
    assert_clear(result, "agent other", '"relative/workspace"', "relative path")
    assert list(elsewhere.iterdir()) == []
    assert (state.workspace / "memory" / "ACTIVE_CONTEXT.md").is_file()


def test_agent_asked_for_by_name_with_a_refused_workspace_is_one_line(tmp_path, monkeypatch):
    state = two_agents(tmp_path, monkeypatch, "/")
    for arguments in (
        ("checkpoint", "--agent", "other"),
        ("checkpoint", "--session", "agent:other:main"),
        ("index", "--agent", "other"),
    ):
        result = run_subprocess("--state-dir", state.state_dir, *arguments)
        assert result.exit_code == 1, arguments
        assert_clear(result, "agent other", "root folder")


def test_health_never_snapshots_a_relative_workspace_and_rewind_refuses_it(tmp_path, monkeypatch):
    state = two_agents(tmp_path, monkeypatch, "ws/rel")
    elsewhere = tmp_path / "cwd"
    (elsewhere / "ws" / "rel").mkdir(parents=True)
    memory_file = elsewhere / "ws" / "rel" / "MEMORY.md"
    memory_file.write_text("# not the agent's\n")
    (state.workspace / "MEMORY.md").write_text("# main's own\n")
    env = dict(os.environ, MEMWARDEN_HEALTH_DISABLED_CHECKS="*")

    run_subprocess("--state-dir", state.state_dir, "-q", "health", env=env, cwd=str(elsewhere))
    listing = run_subprocess("--state-dir", state.state_dir, "history", "list", "--json")

    snapshots = listing.json()["snapshots"]
    assert snapshots, "main was snapshotted"
    assert {snapshot["agent"] for snapshot in snapshots} == {"main"}
    assert memory_file.read_text() == "# not the agent's\n"


def test_rewind_refuses_a_workspace_the_config_now_names_relatively(tmp_path, monkeypatch):
    workspace = tmp_path / "ws" / "rel"
    workspace.mkdir(parents=True)
    (workspace / "MEMORY.md").write_text("# before\n")
    state = two_agents(tmp_path, monkeypatch, str(workspace))
    env = dict(os.environ, MEMWARDEN_HEALTH_DISABLED_CHECKS="*")
    run_subprocess("--state-dir", state.state_dir, "-q", "health", env=env)
    listing = run_subprocess("--state-dir", state.state_dir, "history", "list", "--json")
    (snapshot,) = [s for s in listing.json()["snapshots"] if s["agent"] == "other"]
    entries = [
        {"id": "main", "default": True, "workspace": str(state.workspace)},
        {"id": "other", "workspace": "ws/rel"},
    ]
    edit_config(state, lambda config: config["agents"].update(list=entries))
    (workspace / "MEMORY.md").write_text("# after\n")

    result = run_subprocess(
        "--state-dir", state.state_dir, "history", "rewind", snapshot["id"], cwd=str(tmp_path)
    )

    assert result.exit_code != 0
    assert_clear(result, "agent other", "relative path")
    assert (workspace / "MEMORY.md").read_text() == "# after\n"


def test_doctor_names_a_refused_and_a_vanished_workspace(tmp_path, monkeypatch):
    state = two_agents(tmp_path, monkeypatch, "ws/rel")
    shutil.rmtree(state.workspace)
    result = run_subprocess("--state-dir", state.state_dir, "doctor", "--json", "--skip-gateway")
    findings = {f["key"]: f for f in result.json()["findings"]}
    assert findings["workspace.other"]["severity"] == "action"
    assert "relative path" in findings["workspace.other"]["message"]
    assert findings["workspace.main"]["severity"] == "action"
    assert "does not exist" in findings["workspace.main"]["message"]
    assert result.exit_code == 1
