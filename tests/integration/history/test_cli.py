"""`memwarden history …` through the CLI: lines for people, JSON for machines, exit codes."""

from __future__ import annotations

import shlex

import json5
import pytest

from support.cli import run_cli
from support.deployments import make_sqlite_era_state, write_json5_config


@pytest.fixture
def gateway(tmp_path):
    state = make_sqlite_era_state(tmp_path)
    (state.workspace / "memory").mkdir()
    return state


def history(capsys, gateway, *arguments):
    return run_cli(capsys, "--state-dir", gateway.state_dir, "history", *arguments)


def take(capsys, gateway) -> str:
    result = history(capsys, gateway, "snapshot", "--json")
    assert result.exit_code == 0, result.stderr
    return result.json()["agents"][0]["snapshot"]["id"]


def test_history_snapshot_then_list_shows_it_with_trigger_and_counts(capsys, gateway):
    (gateway.workspace / "memory" / "MEMORY.md").write_text("a\n")
    result = history(capsys, gateway, "snapshot")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("main: snapshot ") and "(1 files, +1 ~0 -0)" in result.stdout
    again = history(capsys, gateway, "snapshot")
    assert "main: memory unchanged since the last snapshot" in again.stdout
    listing = history(capsys, gateway, "list", "--agent", "MAIN")
    (line,) = listing.stdout.splitlines()
    assert " main " in line and " manual " in line and "+1 ~0 -0" in line


def test_history_list_json_after_the_verb_and_empty_message(capsys, gateway):
    empty = history(capsys, gateway, "list")
    assert "no snapshots yet" in empty.stdout
    (gateway.workspace / "memory" / "MEMORY.md").write_text("a\n")
    snapshot_id = take(capsys, gateway)
    data = history(capsys, gateway, "list", "--json").json()
    assert [s["id"] for s in data["snapshots"]] == [snapshot_id]
    assert data["snapshots"][0]["trigger"] == "manual"


def test_history_show_lists_files_and_changes(capsys, gateway):
    (gateway.workspace / "memory" / "MEMORY.md").write_text("hello\n")
    snapshot_id = take(capsys, gateway)
    result = history(capsys, gateway, "show", snapshot_id[:5])
    assert result.exit_code == 0, result.stderr
    assert f"snapshot {snapshot_id}" in result.stdout
    assert "added     memory/MEMORY.md" in result.stdout
    assert "6  memory/MEMORY.md" in result.stdout
    data = history(capsys, gateway, "show", snapshot_id, "--json").json()
    assert data["file_list"] == [
        {"path": "memory/MEMORY.md", "blob": "ce013625030ba8dba906f756967f9e9ca394464a", "bytes": 6}
    ]


def test_history_diff_against_current_and_between_snapshots(capsys, gateway):
    memory = gateway.workspace / "memory"
    (memory / "MEMORY.md").write_text("one\ntwo\n")
    first = take(capsys, gateway)
    (memory / "MEMORY.md").write_text("one\nthree\n")
    current = history(capsys, gateway, "diff", first)
    assert current.exit_code == 0, current.stderr
    assert "diff memory/MEMORY.md (modified)" in current.stdout
    assert "-two\n+three" in current.stdout
    second = take(capsys, gateway)
    between = history(capsys, gateway, "diff", first, second, "--json").json()
    assert [f["path"] for f in between["files"]] == ["memory/MEMORY.md"]
    assert "+three" in between["files"][0]["diff"]
    same = history(capsys, gateway, "diff", second)
    assert f"no differences between snapshot {second} and the current files" in same.stdout


def test_history_rewind_prints_one_line_per_file_and_undo_hint(capsys, gateway):
    memory = gateway.workspace / "memory"
    (memory / "MEMORY.md").write_text("good\n")
    (memory / "keep.md").write_text("same\n")
    good = take(capsys, gateway)
    (memory / "MEMORY.md").write_text("bad\n")
    (memory / "junk.md").write_text("junk\n")
    dry = history(capsys, gateway, "rewind", good, "--dry-run")
    assert "would restore   memory/MEMORY.md" in dry.stdout
    assert (memory / "junk.md").exists()
    result = history(capsys, gateway, "rewind", good)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("saved the current memory as snapshot ")
    assert "undo with: memwarden history rewind " in lines[0]
    assert lines[1:4] == [
        "restored        memory/MEMORY.md",
        "removed         memory/junk.md",
        "unchanged       memory/keep.md",
    ]
    assert lines[4].startswith(f"rewound agent main to snapshot {good} (")
    assert (memory / "MEMORY.md").read_text() == "good\n"


def test_history_rewind_of_one_file_says_the_undo_of_that_file_only(capsys, gateway):
    memory = gateway.workspace / "memory"
    (memory / "MEMORY.md").write_text("good\n")
    good = take(capsys, gateway)
    (memory / "MEMORY.md").write_text("bad\n")
    result = history(capsys, gateway, "rewind", good, "--path", "memory/MEMORY.md")
    assert result.exit_code == 0, result.stderr
    (memory / "other.md").write_text("written after the rewind\n")

    undo = shlex.split(result.stdout.splitlines()[0].split("undo with: ")[1])
    assert undo[:3] == ["memwarden", "history", "rewind"]
    undone = run_cli(capsys, "--state-dir", gateway.state_dir, *undo[1:])

    assert undone.exit_code == 0, undone.stderr
    assert (memory / "MEMORY.md").read_text() == "bad\n"
    assert (memory / "other.md").read_text() == "written after the rewind\n"


def test_history_rewind_with_failure_exits_1_and_reports_on_stderr(capsys, gateway, tmp_path):
    memory = gateway.workspace / "memory"
    (memory / "MEMORY.md").write_text("good\n")
    good = take(capsys, gateway)
    (memory / "MEMORY.md").unlink()
    (memory / "MEMORY.md").symlink_to(tmp_path / "elsewhere.md")
    result = history(capsys, gateway, "rewind", good)
    assert result.exit_code == 1
    assert "failed          memory/MEMORY.md: is a symlink" in result.stdout
    assert "memwarden: rewind: failed" in result.stderr


def test_history_unknown_snapshot_exits_2_with_hint(capsys, gateway):
    result = history(capsys, gateway, "show", "abcdef12")
    assert result.exit_code == 2
    assert "abcdef12: no such snapshot (see `memwarden history list`)" in result.stderr


def test_history_snapshot_unknown_agent_exits_2(capsys, gateway):
    result = history(capsys, gateway, "snapshot", "--agent", "nobody")
    assert result.exit_code == 2
    assert "unknown agent(s): nobody" in result.stderr


def test_history_prune_reports_per_agent(capsys, gateway):
    (gateway.workspace / "memory" / "MEMORY.md").write_text("a\n")
    take(capsys, gateway)
    result = history(capsys, gateway, "prune", "--dry-run")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "history main: would prune 0 snapshot(s), kept 1"


def test_history_snapshot_one_broken_agent_does_not_stop_the_others(capsys, gateway, tmp_path):
    config = json5.loads(gateway.config_path.read_text())
    ops_workspace = tmp_path / "workspace-ops"
    ops_workspace.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (ops_workspace / "memory").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    config["agents"]["list"] = [
        {"id": "main", "default": True},
        {"id": "ops", "workspace": str(ops_workspace)},
    ]
    write_json5_config(gateway.config_path, config)
    (gateway.workspace / "memory" / "MEMORY.md").write_text("a\n")
    result = history(capsys, gateway, "snapshot")
    assert result.exit_code == 1
    assert result.stdout.startswith("main: snapshot ")
    assert "agent ops: snapshot failed:" in result.stderr
    assert "outside the workspace" in result.stderr


def test_history_list_unknown_agent_exits_2_as_snapshot_does(capsys, gateway):
    (gateway.workspace / "memory" / "MEMORY.md").write_text("a\n")
    take(capsys, gateway)
    result = history(capsys, gateway, "list", "--agent", "nobody", "--json")
    assert result.exit_code == 2
    (message,) = result.messages
    assert message == "memwarden: unknown agent(s): nobody (agents found: main)"
    assert result.json()["error"] == ["unknown agent(s): nobody (agents found: main)"]


def test_history_list_of_an_agent_removed_from_the_gateway_still_lists_its_snapshots(
    capsys, gateway
):
    (gateway.workspace / "memory" / "MEMORY.md").write_text("a\n")
    snapshot_id = take(capsys, gateway)
    (gateway.state_dir / "agents" / "main").rename(gateway.state_dir / "agents" / "ops")
    config = json5.loads(gateway.config_path.read_text())
    config["agents"]["list"] = [{"id": "ops", "default": True, "workspace": str(gateway.workspace)}]
    write_json5_config(gateway.config_path, config)

    listed = history(capsys, gateway, "list", "--agent", "main", "--json")
    assert listed.exit_code == 0, listed.stderr
    assert [s["id"] for s in listed.json()["snapshots"]] == [snapshot_id]
    unknown = history(capsys, gateway, "list", "--agent", "nobody")
    assert unknown.exit_code == 2
    assert "unknown agent(s): nobody (agents found: main, ops)" in unknown.stderr
