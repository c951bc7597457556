"""A checkpoint run that wrote to an agent refreshes that workspace's INDEX.md (layers chain)."""

from __future__ import annotations

from datetime import UTC, datetime

import orjson
import pytest

from memwarden.process.runtime import JobContext
from support.cli import run_cli
from support.deployments import make_sqlite_era_state

NOW = datetime(2026, 11, 22, 6, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(JobContext, "now", lambda self: NOW)
    monkeypatch.setenv("MEMWARDEN_HISTORY_ENABLED", "false")


def big_memory(workspace) -> None:
    memory = workspace / "memory"
    memory.mkdir(parents=True)
    for day in range(1, 21):
        (memory / f"2026-10-{day:02d}.md").write_text(f"# Day {day}\n\n" + "[FACT] noted.\n" * 300)


def test_checkpoint_written_agent_gets_fresh_index(tmp_path, capsys):
    state = make_sqlite_era_state(tmp_path)
    big_memory(state.workspace)

    result = run_cli(capsys, "--state-dir", state.state_dir, "checkpoint", "--json")

    assert result.exit_code == 0, result.stderr
    (indexed,) = result.json()["index"]
    assert indexed["status"] == "written"
    index = (state.workspace / "memory" / "INDEX.md").read_text()
    assert "ACTIVE_CONTEXT.md" in index
    assert (state.workspace / "memory" / ".memwarden-bootstrap.json").exists()


def test_checkpoint_index_refresh_off_still_writes_the_manifest(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MEMWARDEN_INDEX_AFTER_CHECKPOINT", "false")
    state = make_sqlite_era_state(tmp_path)
    big_memory(state.workspace)

    result = run_cli(capsys, "--state-dir", state.state_dir, "checkpoint", "--json")

    assert result.exit_code == 0, result.stderr
    (indexed,) = result.json()["index"]
    assert (indexed["status"], indexed["manifest"]) == ("left_as_is", "written")
    assert not (state.workspace / "memory" / "INDEX.md").exists()
    manifest = orjson.loads((state.workspace / "memory" / ".memwarden-bootstrap.json").read_bytes())
    assert [file["session"] for file in manifest["files"]] == [
        "agent:main:main",
        "agent:main:agentrpc",
        "agent:main:hooktest",
    ]


def test_checkpoint_of_a_small_memory_folder_writes_a_manifest_of_handoffs_only(tmp_path, capsys):
    state = make_sqlite_era_state(tmp_path)

    result = run_cli(capsys, "--state-dir", state.state_dir, "checkpoint", "--json")

    assert result.exit_code == 0, result.stderr
    (indexed,) = result.json()["index"]
    assert (indexed["status"], indexed["manifest"]) == ("below_threshold", "written")
    assert not (state.workspace / "memory" / "INDEX.md").exists()
    manifest = orjson.loads((state.workspace / "memory" / ".memwarden-bootstrap.json").read_bytes())
    assert [file["path"] for file in manifest["files"]] == [
        "memory/ACTIVE_CONTEXT.md",
        "memory/sessions/main.agentrpc.md",
        "memory/sessions/main.hooktest.md",
    ]


def test_checkpoint_says_an_index_problem_once(tmp_path, capsys):
    state = make_sqlite_era_state(tmp_path)
    big_memory(state.workspace)
    (state.workspace / "memory" / "INDEX.md").write_text("# My own index\n")

    result = run_cli(capsys, "--state-dir", state.state_dir, "checkpoint")

    assert result.exit_code == 1
    refused = [
        line for line in result.stderr.splitlines() if "was not written by memwarden" in line
    ]
    assert len(refused) == 1, result.stderr
