"""openclaw paths, config_file, agents, layout on real folders: legacy dirs, JSON5, captures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memwarden.openclaw import config_file, layout, paths
from memwarden.process.errors import GatewayConfigError
from support.deployments import (
    FILE_ERA_FIXTURE,
    SQLITE_ERA_FIXTURE,
    make_file_era_state,
    make_sqlite_era_state,
    write_json5_config,
)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


# --- state dir and config path ---------------------------------------------------------------


def test_resolve_state_dir_dot_openclaw_exists_wins_over_legacy(home):
    (home / ".openclaw").mkdir()
    (home / ".clawdbot").mkdir()
    assert paths.locate_state_dir(None, {"HOME": str(home)})[0] == home / ".openclaw"


@pytest.mark.parametrize("legacy_name", [".clawdbot", ".moltbot", ".moldbot"])
def test_resolve_state_dir_only_legacy_exists_uses_legacy(home, legacy_name):
    (home / legacy_name).mkdir()
    assert paths.locate_state_dir(None, {"HOME": str(home)})[0] == home / legacy_name


def test_resolve_state_dir_several_legacy_clawdbot_first(home):
    (home / ".moltbot").mkdir()
    (home / ".clawdbot").mkdir()
    assert paths.locate_state_dir(None, {"HOME": str(home)})[0] == home / ".clawdbot"


def test_resolve_state_dir_env_set_ignores_existing_dirs(home):
    (home / ".openclaw").mkdir()
    env = {"OPENCLAW_STATE_DIR": str(home / "elsewhere")}
    assert paths.locate_state_dir(None, {**env, "HOME": str(home)})[0] == home / "elsewhere"


def test_resolve_state_dir_home_from_environment(home):
    (home / ".clawdbot").mkdir()
    assert paths.locate_state_dir(None, {"HOME": str(home)})[0] == home / ".clawdbot"


def test_resolve_config_path_legacy_names_when_openclaw_json_absent(tmp_path):
    (tmp_path / "moltbot.json").write_text("{}")
    assert paths.resolve_config_path(tmp_path, {}) == tmp_path / "moltbot.json"
    (tmp_path / "clawdbot.json").write_text("{}")
    assert paths.resolve_config_path(tmp_path, {}) == tmp_path / "clawdbot.json"
    (tmp_path / "openclaw.json").write_text("{}")
    assert paths.resolve_config_path(tmp_path, {}) == tmp_path / "openclaw.json"


# --- loading the config ------------------------------------------------------------------------


def test_load_gateway_config_json5_features_parsed(tmp_path):
    path = tmp_path / "openclaw.json"
    path.write_text(
        """// comment line
        {
          /* block comment */
          gateway: { port: 18792, auth: { token: 'single-quoted', }, },
          agents: { list: [ { id: "main", default: true, }, ], },
        }
        """
    )
    config = config_file.load_gateway_config(path)
    assert config["gateway"] == {"port": 18792, "auth": {"token": "single-quoted"}}
    assert config["agents"]["list"] == [{"id": "main", "default": True}]


def test_load_gateway_config_missing_file_empty(tmp_path):
    assert config_file.load_gateway_config(tmp_path / "openclaw.json") == {}


def test_load_gateway_config_broken_one_line_error_with_file_and_line(tmp_path):
    path = tmp_path / "openclaw.json"
    path.write_text("{\n  gateway: { port: 18789 },\n  agents: { list: [ }\n}\n")
    with pytest.raises(GatewayConfigError) as caught:
        config_file.load_gateway_config(path)
    message = caught.value.message
    assert "\n" not in message
    assert message.startswith(f"{path}: line 3, column")
    assert "openclaw.json.bak" in message
    assert "openclaw.json.last-good" in message
    assert caught.value.exit_code == 2


def test_load_gateway_config_top_level_array_rejected(tmp_path):
    path = tmp_path / "openclaw.json"
    path.write_text("[1, 2]")
    with pytest.raises(GatewayConfigError, match="not a JSON object"):
        config_file.load_gateway_config(path)


def test_load_gateway_config_not_utf8_rejected(tmp_path):
    path = tmp_path / "openclaw.json"
    path.write_bytes(b"{gateway: '\xff\xfe'}")
    with pytest.raises(GatewayConfigError, match="not UTF-8"):
        config_file.load_gateway_config(path)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads unreadable files")
def test_load_gateway_config_unreadable_error_names_file(tmp_path):
    path = tmp_path / "openclaw.json"
    path.write_text("{}")
    path.chmod(0)
    with pytest.raises(GatewayConfigError, match="cannot read"):
        config_file.load_gateway_config(path)


def test_load_gateway_config_directory_error_names_file(tmp_path):
    path = tmp_path / "openclaw.json"
    path.mkdir()
    with pytest.raises(GatewayConfigError, match=r"openclaw\.json: the gateway config is a folder"):
        config_file.load_gateway_config(path)


@pytest.mark.parametrize("fixture", [SQLITE_ERA_FIXTURE, FILE_ERA_FIXTURE])
def test_load_gateway_config_real_captures_parsed(fixture):
    config = config_file.load_gateway_config(fixture / "openclaw.json")
    assert config["gateway"]["auth"]["mode"] == "token"
    assert config["agents"]["defaults"]["workspace"] == "/srv/openclaw/workspace"


# --- agents ------------------------------------------------------------------------------------


def write_config(state_dir: Path, config: dict) -> None:
    write_json5_config(state_dir / "openclaw.json", config)


def make_agent_folder(state_dir: Path, agent_id: str, era: str = "none") -> Path:
    agent_dir = state_dir / "agents" / agent_id
    (agent_dir / "sessions").mkdir(parents=True)
    if era == "file":
        (agent_dir / "sessions" / "sessions.json").write_text("{}")
    if era == "sqlite":
        (agent_dir / "agent").mkdir()
        (agent_dir / "agent" / "openclaw-agent.sqlite").write_bytes(b"")
    return agent_dir


def test_discover_nothing_anywhere_main_alone(tmp_path, home):
    deployment = layout.discover(tmp_path / "state", env={"HOME": str(home)})
    assert [agent.id for agent in deployment.agents] == ["main"]
    main = deployment.agents[0]
    assert main.is_default and main.era == "none"
    assert main.workspace == tmp_path / "state" / "workspace"
    assert deployment.config == {}


def test_discover_list_entries_and_disk_deduplicated_in_stable_order(tmp_path, home):
    state = tmp_path / "state"
    write_config(
        state,
        {"agents": {"list": [{"id": "Writer"}, {"id": "ops", "default": True}, {"id": "WRITER"}]}},
    )
    make_agent_folder(state, "zeta", "file")
    make_agent_folder(state, "writer", "sqlite")
    make_agent_folder(state, "alpha")
    (state / "agents" / "Not Canonical").mkdir()
    deployment = layout.discover(state, env={"HOME": str(home)})
    assert [agent.id for agent in deployment.agents] == ["ops", "writer", "alpha", "zeta"]
    by_id = {agent.id: agent for agent in deployment.agents}
    assert by_id["ops"].is_default
    assert by_id["writer"].era == "sqlite"
    assert by_id["zeta"].era == "file"
    assert by_id["alpha"].era == "none"


def test_discover_entries_map_agents_and_folder_duplicates_merged(tmp_path, home):
    state = tmp_path / "state"
    write_config(state, {"agents": {"entries": {"Main": {}, "helper": {"workspace": "~/h"}}}})
    make_agent_folder(state, "helper", "file")
    make_agent_folder(state, "main", "file")
    deployment = layout.discover(state, env={"HOME": str(home)})
    assert [agent.id for agent in deployment.agents] == ["main", "helper"]
    assert deployment.agent("HELPER").workspace == home / "h"
    assert deployment.agent("nobody") is None
    assert deployment.default_agent().id == "main"


def test_agent_paths_follow_agent_dir(tmp_path, home):
    agent = layout.discover(tmp_path / "state", env={"HOME": str(home)}).agents[0]
    assert agent.agent_dir == tmp_path / "state" / "agents" / "main"
    assert agent.sessions_dir == agent.agent_dir / "sessions"
    assert agent.sqlite_path == agent.agent_dir / "agent" / "openclaw-agent.sqlite"
    assert agent.memory_dir == agent.workspace / "memory"


# --- workspaces --------------------------------------------------------------------------------


def workspace_of(state: Path, home: Path, agent_id: str, env: dict | None = None) -> Path:
    deployment = layout.discover(state, env={**(env or {}), "HOME": str(home)})
    return deployment.agent(agent_id).workspace


def test_workspace_own_entry_wins_over_defaults(tmp_path, home):
    state = tmp_path / "state"
    write_config(
        state,
        {"agents": {"defaults": {"workspace": "/d"}, "list": [{"id": "main", "workspace": "~/w"}]}},
    )
    assert workspace_of(state, home, "main", {"OPENCLAW_WORKSPACE_DIR": "/env"}) == home / "w"


def test_workspace_default_agent_defaults_win_over_env(tmp_path, home):
    state = tmp_path / "state"
    write_config(state, {"agents": {"defaults": {"workspace": "~/d"}}})
    assert workspace_of(state, home, "main", {"OPENCLAW_WORKSPACE_DIR": "/env"}) == home / "d"


def test_workspace_default_agent_env_when_no_defaults(tmp_path, home):
    state = tmp_path / "state"
    assert workspace_of(state, home, "main", {"OPENCLAW_WORKSPACE_DIR": "~/env"}) == home / "env"


def test_workspace_default_agent_state_workspace_before_home_openclaw(tmp_path, home):
    state = tmp_path / "state"
    assert workspace_of(state, home, "main") == state / "workspace"
    (home / ".openclaw" / "workspace").mkdir(parents=True)
    assert workspace_of(state, home, "main") == home / ".openclaw" / "workspace"
    (state / "workspace").mkdir(parents=True)
    assert workspace_of(state, home, "main") == state / "workspace"


def test_workspace_default_agent_in_home_state_dir(home):
    (home / ".openclaw").mkdir()
    deployment = layout.discover(env={"HOME": str(home)})
    assert deployment.state_dir == home / ".openclaw"
    assert deployment.agents[0].workspace == home / ".openclaw" / "workspace"


def test_workspace_other_agent_under_defaults_workspace(tmp_path, home):
    state = tmp_path / "state"
    write_config(state, {"agents": {"defaults": {"workspace": "~/ws"}, "list": [{"id": "a"}, {}]}})
    assert workspace_of(state, home, "a") == home / "ws"  # default agent: first configured
    assert workspace_of(state, home, "main") == home / "ws" / "main"


def test_workspace_other_agent_older_layout_found_on_disk(tmp_path, home):
    state = tmp_path / "state"
    write_config(state, {"agents": {"defaults": {"workspace": "~/ws"}, "list": [{"id": "a"}]}})
    make_agent_folder(state, "b")
    (state / "workspace-b").mkdir()
    assert workspace_of(state, home, "b") == state / "workspace-b"


def test_workspace_other_agent_without_defaults_state_workspace_id(tmp_path, home):
    state = tmp_path / "state"
    make_agent_folder(state, "b")
    assert workspace_of(state, home, "b") == state / "workspace-b"


def test_workspace_clawdbot_era_uses_clawd_folders(home):
    state = home / ".clawdbot"
    make_agent_folder(state, "main", "file")
    make_agent_folder(state, "ops", "file")
    deployment = layout.discover(env={"HOME": str(home)})
    assert deployment.state_dir == state
    assert deployment.agent("main").workspace == home / "clawd"
    assert deployment.agent("ops").workspace == home / "clawd-ops"


def test_workspace_clawdbot_era_config_defaults_still_win(home):
    state = home / ".moltbot"
    write_config(state, {"agents": {"defaults": {"workspace": "~/mine"}}})
    assert workspace_of(state, home, "main") == home / "mine"
    assert paths.resolve_config_path(state, {}) == state / "openclaw.json"


# --- the real captures -------------------------------------------------------------------------


def test_discover_sqlite_capture_copy(tmp_path, home):
    state = make_sqlite_era_state(tmp_path)
    deployment = layout.discover(state.state_dir, env={"HOME": str(home)})
    assert deployment.config_path == state.config_path
    assert [agent.id for agent in deployment.agents] == ["main"]
    main = deployment.agents[0]
    assert (main.era, main.workspace, main.sqlite_path) == (
        "sqlite",
        state.workspace,
        state.sqlite_path,
    )
    assert deployment.gateway_port_and_source()[0] == 18789
    assert deployment.gateway_token() == "test-token-123"
    assert deployment.compaction_mode() == "default"
    assert deployment.bootstrap_caps("main") == (20000, 60000)


def test_discover_sqlite_capture_other_agent_id(tmp_path, home):
    state = make_sqlite_era_state(tmp_path, agent_id="ops")
    deployment = layout.discover(state.state_dir, env={"HOME": str(home)})
    assert [agent.id for agent in deployment.agents] == ["ops"]
    assert deployment.agents[0].workspace == state.workspace
    assert deployment.agents[0].era == "sqlite"


def test_discover_file_capture_copy(tmp_path, home):
    state = make_file_era_state(tmp_path)
    deployment = layout.discover(state.state_dir, env={"HOME": str(home)})
    main = deployment.agent("main")
    assert (main.era, main.workspace, main.sessions_dir) == (
        "file",
        state.workspace,
        state.sessions_dir,
    )
    assert deployment.gateway_port_and_source()[0] == 18792


def test_discover_state_dir_from_env_and_config_path_override(tmp_path, home):
    state = make_file_era_state(tmp_path)
    other_config = write_json5_config(tmp_path / "elsewhere.json", {"gateway": {"port": 1}})
    env = {"OPENCLAW_STATE_DIR": str(state.state_dir), "OPENCLAW_CONFIG_PATH": str(other_config)}
    deployment = layout.discover(env={**env, "HOME": str(home)})
    assert deployment.state_dir == state.state_dir
    assert deployment.config_path == other_config
    assert deployment.gateway_port_and_source()[0] == 1


def test_discover_broken_config_raises(tmp_path, home):
    state = tmp_path / "state"
    state.mkdir()
    (state / "openclaw.json").write_text("{ gateway: ")
    with pytest.raises(GatewayConfigError, match=r"openclaw\.json: line 1"):
        layout.discover(state, env={"HOME": str(home)})
