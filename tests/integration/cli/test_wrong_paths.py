"""A wrong path is an error, not a green run: the CLI as a subprocess, as a timer runs it.

A state dir that does not exist, or holds neither a gateway config nor agents, is exit 2 with one
line naming the folder, what chose it and the fix, for every job that reads the gateway; health
alerts on it first. A workspace gone since the agent ran fails that agent; the never-made
workspace of an agent that never ran is skipped.
"""

from __future__ import annotations

import os
import shutil
from datetime import timedelta

import json5
import pytest

from memwarden.health import store
from support.cli import run_subprocess
from support.deployments import make_sqlite_era_state, write_json5_config
from support.gateway_sim import GatewaySimulator
from support.health import MACHINE_DEPENDENT_CHECKS, T0, HealthRunner
from support.slack_server import SlackServer

GATEWAY_JOBS = [
    ["checkpoint"],
    ["rotate"],
    ["index"],
    ["health"],
    ["sessions"],
    ["maintain"],
    ["history", "list"],
]


@pytest.fixture
def live_gateway(monkeypatch):
    """A gateway that answers its probes, so health's only problem is the state dir."""
    with GatewaySimulator() as sim:
        monkeypatch.setenv("MEMWARDEN_HEALTH_GATEWAY_HTTP_URL", sim.http_url)
        monkeypatch.setenv("MEMWARDEN_HEALTH_DISABLED_CHECKS", MACHINE_DEPENDENT_CHECKS)
        yield sim


@pytest.mark.parametrize("job", GATEWAY_JOBS, ids=" ".join)
def test_missing_state_dir_named_by_flag_is_exit_2_with_one_line(job, tmp_path, live_gateway):
    missing = tmp_path / "no-such-state"

    result = run_subprocess("-q", "--state-dir", missing, *job)

    assert result.exit_code == 2, result.stderr
    assert result.stdout == ""
    (line,) = result.messages
    assert line.startswith(f"memwarden: {missing}: no OpenClaw gateway state here: ")
    assert "the folder does not exist (state dir from --state-dir)" in line
    assert "; fix: point memwarden at the folder holding the gateway's openclaw.json" in line
    assert not missing.exists()


@pytest.mark.parametrize("job", ["checkpoint", "rotate", "index", "maintain"])
def test_a_wrong_state_dir_leaves_nothing_in_memwardens_storage(job, tmp_path, isolated_env):
    """A typo creates no state to be taken for the real gateway's (a failed run in `status`)."""
    storage = isolated_env / ".local" / "state" / "memwarden"

    result = run_subprocess("-q", "--state-dir", tmp_path / "typo", job)

    assert result.exit_code == 2, result.stderr
    assert not storage.exists()
    storage.mkdir(parents=True)  # claimed by the real gateway: no gateways/typo-<hash>/ either
    state = make_sqlite_era_state(tmp_path)
    assert run_subprocess("-q", "--state-dir", state.state_dir, "index").exit_code == 0
    before = sorted(path.name for path in storage.iterdir())
    assert run_subprocess("-q", "--state-dir", tmp_path / "typo", job).exit_code == 2
    assert sorted(path.name for path in storage.iterdir()) == before


@pytest.mark.parametrize("job", GATEWAY_JOBS, ids=" ".join)
def test_empty_state_dir_named_by_variable_is_exit_2_with_one_line(job, tmp_path, live_gateway):
    empty = tmp_path / "empty-state"
    empty.mkdir()
    env = dict(os.environ, OPENCLAW_STATE_DIR=str(empty))

    result = run_subprocess("-q", *job, env=env)

    assert result.exit_code == 2, result.stderr
    (line,) = result.messages
    assert f"memwarden: {empty}: no OpenClaw gateway state here: it holds neither" in line
    assert "(state dir from $OPENCLAW_STATE_DIR)" in line
    assert list(empty.iterdir()) == []


def test_state_dir_without_config_but_with_agents_is_a_gateway(tmp_path, live_gateway):
    state = make_sqlite_era_state(tmp_path)
    state.config_path.unlink()  # a gateway running on its defaults has agents/ alone

    result = run_subprocess("-q", "--state-dir", state.state_dir, "sessions")

    assert result.exit_code == 0, result.stderr


def test_health_alerts_on_a_wrong_state_dir_then_exits_2(tmp_path, live_gateway, monkeypatch):
    missing = tmp_path / "typo"
    with SlackServer(token="xoxb-t", channels={"C1"}) as slack:
        monkeypatch.setenv("MEMWARDEN_SLACK_BOT_TOKEN", "xoxb-t")
        monkeypatch.setenv("MEMWARDEN_SLACK_CHANNEL", "C1")
        monkeypatch.setenv("MEMWARDEN_SLACK_API_BASE_URL", slack.api_base_url)
        result = run_subprocess("-q", "--state-dir", missing, "health")
        delivered = slack.delivered()

    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert f" CRITICAL memwarden: {missing}: no OpenClaw gateway state here" in line
    (message,) = delivered
    assert "gateway.state_dir" in message.body["text"]
    assert str(missing) in message.body["text"]


def test_health_with_a_wrong_state_dir_resolves_none_of_the_open_alerts(tmp_path, monkeypatch):
    state = make_sqlite_era_state(tmp_path)
    (state.workspace / "MEMORY.md").write_text("x" * 4096)
    monkeypatch.setenv("MEMWARDEN_HEALTH_MEMORY_FILE_WARNING_KB", "1")
    runner = HealthRunner(state.state_dir, env={"MEMWARDEN_HEALTH_DISABLED_CHECKS": '["disk:*"]'})
    first = runner.run(T0, no_alert=False)
    assert "memory.oversized" in {n["key"] for n in first.data["alerts"]["notices"]}

    state.state_dir.rename(tmp_path / "moved")
    second = runner.run(T0 + timedelta(minutes=5))

    assert second.exit_code == 2
    notices = second.data["alerts"]["notices"]
    assert [(n["kind"], n["key"]) for n in notices] == [("new", "gateway.state_dir")]
    open_keys = set(store.load_states(runner.context().state))
    assert {"memory.oversized", "gateway.state_dir"} <= open_keys


def add_agent(state, agent_id: str, workspace) -> None:
    config = json5.loads(state.config_path.read_text())
    config.setdefault("agents", {})["list"] = [
        {"id": "main", "default": True},
        {"id": agent_id, "workspace": str(workspace)},
    ]
    write_json5_config(state.config_path, config)


@pytest.mark.parametrize("job", ["checkpoint", "index"])
def test_vanished_workspace_fails_its_agent_and_the_run(job, tmp_path):
    state = make_sqlite_era_state(tmp_path)
    state.workspace.rename(tmp_path / "moved")  # the agent has sessions: the gateway made it

    result = run_subprocess("-q", "--state-dir", state.state_dir, job)

    assert result.exit_code == 1
    (line,) = result.messages
    assert f"{state.workspace}: the workspace of agent main is gone, though the agent has " in line
    assert "restore it, or fix the agent's `workspace` in openclaw.json" in line


@pytest.mark.parametrize("job", ["checkpoint", "index"])
def test_workspace_that_is_a_file_is_named_so(job, tmp_path):
    state = make_sqlite_era_state(tmp_path)
    shutil.rmtree(state.workspace)
    state.workspace.write_text("not a folder\n")

    result = run_subprocess("-q", "--state-dir", state.state_dir, job)

    assert result.exit_code == 1
    (line,) = result.messages
    assert (
        f"{state.workspace}: the workspace of agent main is a file where a folder should " in line
    )
    assert "move it away, or fix the agent's `workspace` in openclaw.json" in line
    assert "gone" not in line
    assert state.workspace.read_text() == "not a folder\n"


def test_doctor_says_a_workspace_that_is_a_file_is_a_file(tmp_path):
    state = make_sqlite_era_state(tmp_path)
    shutil.rmtree(state.workspace)
    state.workspace.write_text("not a folder\n")

    result = run_subprocess("--state-dir", state.state_dir, "doctor", "--json", "--skip-gateway")

    finding = {f["key"]: f for f in result.json()["findings"]}["workspace.main"]
    assert finding["severity"] == "action"
    assert (
        f"its workspace {state.workspace} is a file where a folder should be" in finding["message"]
    )
    assert "does not exist" not in finding["message"]
    assert finding["fix"].startswith(f"move {state.workspace} away, or set agent main's")


@pytest.mark.parametrize("job", ["checkpoint", "index"])
def test_never_made_workspace_of_an_agent_that_never_ran_is_skipped(job, tmp_path):
    state = make_sqlite_era_state(tmp_path)
    add_agent(state, "newbie", tmp_path / "workspace-newbie")  # configured, never run

    result = run_subprocess("--json", "--state-dir", state.state_dir, job)

    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    assert "newbie" in result.stdout
    assert not (tmp_path / "workspace-newbie").exists()
