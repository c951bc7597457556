"""History and checkpoint together: the snapshot holds the run's INDEX.md and bootstrap manifest;
after a rewind the checkpoint writes the rewound files again, every entry logged once."""

from __future__ import annotations

from datetime import timedelta

import orjson
import pytest

from memwarden.process.runtime import JobContext
from support.cli import run_cli
from support.deployments import make_sqlite_era_state
from support.transcripts import START

NOW = START + timedelta(hours=1)


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(JobContext, "now", lambda self: NOW)


# FileAgent and turn() build a file-era agent whose main session grows turn by turn.
from integration.checkpoint.test_incremental import (  # noqa: E402
    FileAgent,
    entries_in,
    turn,
)


def cli(capsys, state_dir, *arguments):
    result = run_cli(capsys, "--state-dir", state_dir, "--json", *arguments)
    assert result.exit_code == 0, result.stderr
    return result.json()


def test_checkpoint_snapshot_is_taken_after_the_index_refresh(tmp_path, capsys):
    state = make_sqlite_era_state(tmp_path)
    memory = state.workspace / "memory"
    memory.mkdir(parents=True)
    for day in range(1, 21):
        (memory / f"2026-10-{day:02d}.md").write_text(f"# Day {day}\n\n" + "[FACT] noted.\n" * 300)

    run = cli(capsys, state.state_dir, "checkpoint")

    agent = next(item for item in run["agents"] if item["session_key"] == "agent:main:main")
    assert run["index"][0]["status"] == "written"
    shown = cli(capsys, state.state_dir, "history", "show", agent["snapshot"])
    paths = {item["path"] for item in shown["file_list"]}
    assert {
        "memory/INDEX.md",
        "memory/.memwarden-bootstrap.json",
        "memory/ACTIVE_CONTEXT.md",
    } <= paths
    assert shown["snapshot"]["trigger"] == "checkpoint"


def test_after_a_rewind_checkpoint_rewrites_the_handoff_and_logs_later_entries_again(
    tmp_path, capsys
):
    agent = FileAgent(tmp_path)
    first = cli(capsys, agent.state, "checkpoint")["agents"][0]
    agent.append(*turn(10, START + timedelta(minutes=30), "please rotate the logs now"))
    second = cli(capsys, agent.state, "checkpoint")["agents"][0]
    assert second["outcome"] == "written" and entries_in(agent.memory("2026-11-22.md")) == 2
    logged = agent.memory("2026-11-22.md")

    rewound = cli(capsys, agent.state, "history", "rewind", first["snapshot"])
    statuses = {item["path"]: item["status"] for item in rewound["files"]}
    assert statuses["memory/ACTIVE_CONTEXT.md"] == "restored"
    assert statuses["memory/2026-11-22.md"] == "restored"
    assert "please rotate the logs now" not in agent.memory("ACTIVE_CONTEXT.md")

    third = cli(capsys, agent.state, "checkpoint")["agents"][0]

    assert third["outcome"] == "written"
    assert "please rotate the logs now" in agent.memory("ACTIVE_CONTEXT.md")
    daily = agent.memory("2026-11-22.md")
    assert entries_in(daily) == 2, "the entry logged after the snapshot is logged again, once"
    assert daily == logged
    fourth = cli(capsys, agent.state, "checkpoint")["agents"][0]
    assert fourth["outcome"] == "unchanged"


def test_rewind_of_a_root_file_leaves_what_checkpoint_remembers_alone(tmp_path, capsys):
    agent = FileAgent(tmp_path)
    (agent.workspace / "MEMORY.md").write_text("# Memory\n- kept\n")
    first = cli(capsys, agent.state, "checkpoint")["agents"][0]
    (agent.workspace / "MEMORY.md").write_text("# Memory\n")

    cli(capsys, agent.state, "history", "rewind", first["snapshot"], "--path", "MEMORY.md")

    assert (agent.workspace / "MEMORY.md").read_text() == "# Memory\n- kept\n"
    assert cli(capsys, agent.state, "checkpoint")["agents"][0]["outcome"] == "unchanged"


def test_index_job_snapshots_the_workspaces_it_indexed(tmp_path, capsys):
    state = make_sqlite_era_state(tmp_path)
    (state.workspace / "MEMORY.md").write_text("# Memory\n- a fact\n")
    (state.workspace / "memory").mkdir()

    cli(capsys, state.state_dir, "index")

    (taken,) = cli(capsys, state.state_dir, "history", "list")["snapshots"]
    assert taken["trigger"] == "index" and taken["changes"]["added"] == ["MEMORY.md"]
    cli(capsys, state.state_dir, "index")
    assert len(cli(capsys, state.state_dir, "history", "list")["snapshots"]) == 1


def manifest_paths(workspace) -> list[str]:
    manifest = orjson.loads((workspace / "memory" / ".memwarden-bootstrap.json").read_bytes())
    return [item["path"] for item in manifest["files"]]


def test_rewind_of_the_bootstrap_manifest_refreshes_it_at_once(tmp_path, capsys):
    agent = FileAgent(tmp_path)
    (agent.workspace / "MEMORY.md").write_text("# Memory\n- a fact\n")
    (before,) = cli(capsys, agent.state, "history", "snapshot")["agents"]
    cli(capsys, agent.state, "checkpoint")
    assert manifest_paths(agent.workspace) == ["memory/ACTIVE_CONTEXT.md"]
    manifest = "memory/.memwarden-bootstrap.json"

    rewound = cli(
        capsys, agent.state, "history", "rewind", before["snapshot"]["id"], "--path", manifest
    )

    assert [item["status"] for item in rewound["files"]] == ["removed"]
    assert manifest_paths(agent.workspace) == ["memory/ACTIVE_CONTEXT.md"]
    assert rewound["index"][0]["manifest"] == "written"
    assert rewound["rewound_snapshot"] is None, "the memory is as the pre-rewind snapshot has it"
    assert cli(capsys, agent.state, "checkpoint")["agents"][0]["outcome"] == "unchanged"
    again = run_cli(
        capsys,
        *("--state-dir", agent.state, "history", "rewind", before["snapshot"]["id"]),
        *("--path", manifest),
    )
    assert "removed         memory/.memwarden-bootstrap.json\n" in again.stdout
    assert "bootstrap manifest written (1 conversation handoff)\n" in again.stdout


def test_rewind_of_index_md_rebuilds_it_when_the_checkpoint_would(tmp_path, capsys):
    state = make_sqlite_era_state(tmp_path)
    memory = state.workspace / "memory"
    memory.mkdir(parents=True)
    (state.workspace / "MEMORY.md").write_text("# Memory\n- a fact\n")
    (before,) = cli(capsys, state.state_dir, "history", "snapshot")["agents"]
    for day in range(1, 21):
        (memory / f"2026-10-{day:02d}.md").write_text(f"# Day {day}\n\n" + "[FACT] noted.\n" * 300)
    cli(capsys, state.state_dir, "checkpoint")
    built = (memory / "INDEX.md").read_text()
    assert "memory/INDEX.md" in manifest_paths(state.workspace)

    cli(
        capsys,
        state.state_dir,
        "history",
        "rewind",
        before["snapshot"]["id"],
        "--path",
        "memory/INDEX.md",
        "--path",
        "memory/.memwarden-bootstrap.json",
    )

    assert (memory / "INDEX.md").read_text() == built
    assert "memory/INDEX.md" in manifest_paths(state.workspace)


def test_rewind_to_before_a_file_era_reset_logs_both_sessions_again(tmp_path, capsys):

    agent = FileAgent(tmp_path)
    first = cli(capsys, agent.state, "checkpoint")["agents"][0]
    agent.append(*turn(10, START + timedelta(minutes=20), "words before the reset"))
    agent.reset()
    agent.append(*turn(11, START + timedelta(minutes=30), "words after the reset"))
    cli(capsys, agent.state, "checkpoint")
    cli(capsys, agent.state, "history", "rewind", first["snapshot"])
    assert "words after the reset" not in agent.memory("2026-11-22.md")

    cli(capsys, agent.state, "checkpoint")

    daily = agent.memory("2026-11-22.md")
    assert daily.count("words before the reset") == daily.count("words after the reset") == 1
