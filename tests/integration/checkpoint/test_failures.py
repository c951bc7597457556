"""Failure isolation, unsafe paths, the run lock, and the API the rotate job calls."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import orjson
import pytest

from memwarden.process.locks import RunLock
from memwarden.process.runtime import JobContext
from memwarden.settings import config as config_module
from support.cli import run_cli, run_subprocess
from support.deployments import make_sqlite_era_state
from support.positions import stored_position
from support.transcripts import START, transcript_lines, write_jsonl

NOW = START + timedelta(hours=1)


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(JobContext, "now", lambda self: NOW)
    monkeypatch.setenv("MEMWARDEN_HISTORY_ENABLED", "false")


def fleet(root: Path, names: list[str]) -> Path:
    """Write a file-era state with one healthy agent per name; return the state dir."""
    state = root / "state"
    entries = []
    for index, name in enumerate(names):
        workspace = root / f"workspace-{name}"
        workspace.mkdir(parents=True)
        session_id = f"0000000{index}-0000-4000-8000-000000000000"
        sessions = state / "agents" / name / "sessions"
        write_jsonl(sessions / f"{session_id}.jsonl", transcript_lines(4, session_id=session_id))
        store = {
            f"agent:{name}:main": {
                "sessionId": session_id,
                "updatedAt": int(START.timestamp() * 1000),
            }
        }
        (sessions / "sessions.json").write_bytes(orjson.dumps(store))
        entries.append({"id": name, "workspace": str(workspace)})
    (state / "openclaw.json").write_bytes(orjson.dumps({"agents": {"list": entries}}))
    return state


def outcomes(result) -> dict[str, dict]:
    return {agent["agent"]: agent for agent in result.json()["agents"]}


def test_checkpoint_broken_agents_fail_alone_and_the_run_exits_1(tmp_path, capsys):
    state = fleet(tmp_path, ["alpha", "bravo", "charlie", "delta", "echo"])
    (state / "agents" / "bravo" / "sessions" / "sessions.json").write_text("{not json")
    (tmp_path / "workspace-charlie").rmdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, tmp_path / "workspace-delta" / "memory")

    result = run_cli(capsys, "--state-dir", state, "--json", "checkpoint")

    assert result.exit_code == 1
    found = outcomes(result)
    assert {name: found[name]["outcome"] for name in found} == {
        "alpha": "written",
        "bravo": "failed",
        "charlie": "failed",
        "delta": "failed",
        "echo": "written",
    }
    assert "sessions.json: the session store is not valid JSON" in found["bravo"]["reason"]
    assert "the workspace of agent charlie is gone" in found["charlie"]["reason"]
    assert "outside" in found["delta"]["reason"]
    assert list(outside.iterdir()) == []
    assert result.json()["summary"]["failed"] == 3
    assert "checkpoint of agent bravo failed" in result.stderr
    assert (tmp_path / "workspace-echo" / "memory" / "ACTIVE_CONTEXT.md").is_file()


def test_checkpoint_memory_linked_to_the_workspace_itself_fails_that_agent_alone(tmp_path, capsys):
    # memory/ -> . would put the handoff and the daily log at the workspace's top, where
    # history then takes every workspace file as one of memory/'s: refused, as history does.
    state = fleet(tmp_path, ["alpha", "bravo"])
    workspace = tmp_path / "workspace-alpha"
    (workspace / "memory").symlink_to(".", target_is_directory=True)

    result = run_cli(capsys, "--state-dir", state, "--json", "checkpoint")

    assert result.exit_code == 1
    found = outcomes(result)
    assert (found["alpha"]["outcome"], found["bravo"]["outcome"]) == ("failed", "written")
    assert "a link to the workspace itself" in found["alpha"]["reason"]
    assert sorted(path.name for path in workspace.iterdir()) == ["memory"]


def test_checkpoint_context_file_symlink_is_refused(tmp_path, capsys):
    state = fleet(tmp_path, ["alpha"])
    memory = tmp_path / "workspace-alpha" / "memory"
    memory.mkdir()
    target = tmp_path / "elsewhere.md"
    target.write_text("precious\n")
    os.symlink(target, memory / "ACTIVE_CONTEXT.md")

    result = run_cli(capsys, "--state-dir", state, "--json", "checkpoint")

    assert result.exit_code == 1
    assert "symlink" in outcomes(result)["alpha"]["reason"]
    assert target.read_text() == "precious\n"


@pytest.mark.parametrize(
    ("name", "make", "words"),
    [
        ("ACTIVE_CONTEXT.md", os.mkfifo, "it is a named pipe (FIFO), not a regular file"),
        ("2026-11-22.md", os.mkfifo, "it is a named pipe (FIFO), not a regular file"),
        ("ACTIVE_CONTEXT.md", os.mkdir, "it is a folder, not a file"),
        ("2026-11-22.md", os.mkdir, "it is a folder, not a file"),
    ],
)
def test_checkpoint_target_that_is_not_a_file_fails_its_agent_alone_without_blocking(
    tmp_path, name, make, words
):
    state = fleet(tmp_path, ["alpha", "bravo"])
    memory = tmp_path / "workspace-alpha" / "memory"
    memory.mkdir()
    make(memory / name)

    # Its own process: a FIFO opened for reading waits for a writer, for ever.
    result = run_subprocess("--state-dir", state, "--json", "checkpoint", timeout=30)

    assert result.exit_code == 1
    found = outcomes(result)
    assert (found["alpha"]["outcome"], found["bravo"]["outcome"]) == ("failed", "written")
    assert found["alpha"]["reason"].startswith(f"{memory / name}: {words} (")
    assert "move it away" in found["alpha"]["reason"]
    assert f"checkpoint of agent alpha failed: {memory / name}: {words}" in result.stderr


def test_checkpoint_agent_filter_only_touches_named_agents(tmp_path, capsys):
    state = fleet(tmp_path, ["alpha", "bravo"])

    result = run_cli(capsys, "--state-dir", state, "--json", "checkpoint", "--agent", "bravo")
    unknown = run_cli(capsys, "--state-dir", state, "checkpoint", "--agent", "zulu")

    assert list(outcomes(result)) == ["bravo"]
    assert not (tmp_path / "workspace-alpha" / "memory").exists()
    assert unknown.exit_code == 2
    assert "unknown agent(s): zulu" in unknown.stderr


def test_checkpoint_agent_with_only_automation_sessions_is_skipped(tmp_path, capsys):
    state = fleet(tmp_path, ["alpha"])
    store_path = state / "agents" / "alpha" / "sessions" / "sessions.json"
    store = orjson.loads(store_path.read_bytes())
    store = {"agent:alpha:cron:nightly": store["agent:alpha:main"]}
    store_path.write_bytes(orjson.dumps(store))

    result = run_cli(capsys, "--state-dir", state, "--json", "checkpoint")

    assert result.exit_code == 0
    assert outcomes(result)["alpha"]["outcome"] == "skipped"
    assert outcomes(result)["alpha"]["reason"] == "no interactive session"


def test_checkpoint_lock_held_exits_75(tmp_path, capsys, isolated_env):
    state = fleet(tmp_path, ["alpha"])
    lock = RunLock(isolated_env / ".local" / "state" / "memwarden" / "locks", "checkpoint")
    lock.acquire()
    try:
        result = run_cli(capsys, "--state-dir", state, "checkpoint")
    finally:
        lock.release()

    assert result.exit_code == 75
    assert not (tmp_path / "workspace-alpha" / "memory").exists()


def test_checkpoint_quiet_prints_nothing_but_problems(tmp_path, capsys):
    state = fleet(tmp_path, ["alpha"])

    result = run_cli(capsys, "-q", "--state-dir", state, "checkpoint")

    assert result.exit_code == 0
    assert result.stdout == ""


def test_checkpoint_invalid_redaction_pattern_is_a_config_error(tmp_path, capsys):
    state = fleet(tmp_path, ["alpha"])
    config = tmp_path / "memwarden.toml"
    config.write_text('[checkpoint]\nredact_patterns = [{name = "Bad Name", pattern = "x"}]\n')

    for command in (("checkpoint",), ("config", "check"), ("health", "--dry-run")):
        result = run_cli(capsys, "--config", config, "--state-dir", state, *command)

        assert result.exit_code == 2  # refused at load, whatever the command
        assert f"{config}: checkpoint.redact_patterns: rule 'Bad Name': a name is" in result.stderr


def context_for(state_dir: Path) -> JobContext:
    return JobContext(config=config_module.load(None), state_dir_override=state_dir, env=os.environ)


def test_checkpoint_session_api_checkpoints_one_session_for_rotate(tmp_path):
    from memwarden.checkpoint.run.job import checkpoint_session
    from memwarden.openclaw.sessions import load_sessions

    state = make_sqlite_era_state(tmp_path)
    context = context_for(state.state_dir)
    agent = context.deployment.agent("main")
    session = next(s for s in load_sessions(agent) if s.key == "agent:main:hooktest")
    try:
        outcome = checkpoint_session(context, agent, session)
        again = checkpoint_session(context, agent, session)
        stored = stored_position(context.state, "checkpoint", "main", "agent:main:hooktest")
    finally:
        context.close()

    # hooktest: one turn, then two resets in place; its own handoff, never ACTIVE_CONTEXT.md.
    handoff = state.workspace / "memory" / "sessions" / "main.hooktest.md"
    assert outcome.ok and outcome.error is None
    assert outcome.outcome == "written"
    assert outcome.files == [str(handoff), str(state.workspace / "memory" / "2026-11-22.md")]
    assert outcome.to_json()["session_key"] == "agent:main:hooktest"
    assert outcome.previous_session_id is None  # reset in place: one transcript, one id
    assert "hello hook test" in handoff.read_text()
    assert "the session was reset here" in handoff.read_text()
    assert "Written by memwarden rotate right before it reset" in handoff.read_text()
    assert not (state.workspace / "memory" / "ACTIVE_CONTEXT.md").exists()
    assert again.outcome == "written"  # forced: rewritten, but no second daily entry
    assert again.files == [str(handoff)]
    assert stored["session_id"] == session.session_id


def test_checkpoint_session_api_failure_is_an_outcome_not_an_exception(tmp_path):
    from memwarden.checkpoint.run.job import checkpoint_session
    from memwarden.openclaw.sessions import load_sessions

    state = make_sqlite_era_state(tmp_path)
    context = context_for(state.state_dir)
    agent = context.deployment.agent("main")
    session = next(s for s in load_sessions(agent) if s.key == "agent:main:main")
    state.workspace.rmdir()
    try:
        outcome = checkpoint_session(context, agent, session)
    finally:
        context.close()

    assert not outcome.ok
    assert outcome.outcome == "failed"
    assert "workspace does not exist" in outcome.error
    assert outcome.to_json()["ok"] is False


def test_checkpoint_writes_private_files_and_takes_a_history_snapshot(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("MEMWARDEN_HISTORY_ENABLED", "true")
    state = make_sqlite_era_state(tmp_path)

    result = run_cli(capsys, "--state-dir", state.state_dir, "--json", "checkpoint")

    assert result.exit_code == 0, result.stderr
    agent = result.json()["agents"][0]
    assert agent["snapshot"]
    memory = state.workspace / "memory"
    assert oct(memory.stat().st_mode & 0o777) == "0o700"
    assert oct((memory / "sessions").stat().st_mode & 0o777) == "0o700"
    for path in memory.rglob("*"):
        if path.is_file():
            assert oct(path.stat().st_mode & 0o777) == "0o600", path
