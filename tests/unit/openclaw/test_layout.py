"""Pure rules of openclaw paths, agents and layout: env precedence, ids, roster, defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from memwarden.openclaw import agents, paths
from memwarden.openclaw.layout import Deployment

HOME = Path("/home/tester")


def make_deployment(config: dict, env: dict | None = None) -> Deployment:
    return Deployment(Path("/state"), Path("/state/openclaw.json"), config, [], env or {})


# --- home and env precedence (no filesystem: overrides are taken as they are) -----------------


def test_resolve_home_openclaw_home_set_wins_over_home():
    env = {"HOME": "/home/other", "OPENCLAW_HOME": "/srv/claw"}
    assert paths.resolve_home(env) == Path("/srv/claw")


def test_resolve_home_openclaw_home_with_tilde_expands_against_home():
    env = {"HOME": str(HOME), "OPENCLAW_HOME": "~/claw"}
    assert paths.resolve_home(env) == HOME / "claw"


def test_resolve_home_no_override_uses_env_home():
    assert paths.resolve_home({"HOME": "/home/other"}) == Path("/home/other")


def test_user_path_leading_tilde_expands_to_home():
    assert paths.user_path("~/work", HOME) == HOME / "work"
    assert paths.user_path(" ~ ", HOME) == HOME
    assert paths.user_path("/abs/../abs/x", HOME) == Path("/abs/x")


def test_user_path_tilde_user_form_left_alone():
    assert paths.user_path("~bob/x", HOME).name == "x"
    assert "~bob" in str(paths.user_path("~bob/x", HOME))


def test_resolve_state_dir_override_wins_over_env():
    env = {"OPENCLAW_STATE_DIR": "/from/env", "CLAWDBOT_STATE_DIR": "/from/clawdbot"}
    assert paths.locate_state_dir(Path("~/cli"), {**env, "HOME": str(HOME)})[0] == HOME / "cli"


def test_resolve_state_dir_openclaw_env_wins_over_clawdbot_env():
    env = {"OPENCLAW_STATE_DIR": "~/oc", "CLAWDBOT_STATE_DIR": "/from/clawdbot", "HOME": str(HOME)}
    assert paths.locate_state_dir(None, env)[0] == HOME / "oc"


def test_resolve_state_dir_blank_openclaw_env_falls_to_clawdbot_env():
    env = {"OPENCLAW_STATE_DIR": "  ", "CLAWDBOT_STATE_DIR": "/from/clawdbot", "HOME": str(HOME)}
    assert paths.locate_state_dir(None, env)[0] == Path("/from/clawdbot")


def test_resolve_state_dir_nothing_exists_defaults_to_dot_openclaw():
    assert paths.locate_state_dir(None, {"HOME": str(HOME)})[0] == HOME / ".openclaw"


def test_resolve_config_path_env_precedence():
    state = Path("/state")
    home = {"HOME": str(HOME)}
    both = {"OPENCLAW_CONFIG_PATH": "~/a.json", "CLAWDBOT_CONFIG_PATH": "/b.json", **home}
    assert paths.resolve_config_path(state, both) == HOME / "a.json"
    clawdbot = {"CLAWDBOT_CONFIG_PATH": "/b.json", **home}
    assert paths.resolve_config_path(state, clawdbot) == Path("/b.json")
    assert paths.resolve_config_path(state, home) == state / "openclaw.json"


# --- agent ids, roster, default agent -----------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Main", "main"),
        ("  Ops_2 ", "ops_2"),
        ("My Agent!", "my-agent"),
        ("--x--", "x"),
        ("", "main"),
        (None, "main"),
        ("!!!", "main"),
        ("a" * 80, "a" * 64),
    ],
)
def test_normalize_agent_id_various_inputs_canonical(raw, expected):
    assert agents.normalize_agent_id(raw) == expected


def test_read_roster_list_normalized_first_duplicate_wins():
    config = {"agents": {"list": [{"id": "Ops", "workspace": "/a"}, {"id": "ops"}, "junk", {}]}}
    roster = agents.read_roster(config)[0]
    assert list(roster) == ["ops", "main"]
    assert roster["ops"]["workspace"] == "/a"


def test_read_roster_entries_map_wins_over_list():
    config = {"agents": {"entries": {"Work": {}, "home": {}}, "list": [{"id": "ignored"}]}}
    assert list(agents.read_roster(config)[0]) == ["work", "home"]


def test_read_roster_no_agents_section_empty():
    assert agents.read_roster({})[0] == {}
    assert agents.read_roster({"agents": "nonsense"})[0] == {}


def test_default_agent_id_marked_entry_wins():
    config = {"agents": {"list": [{"id": "a"}, {"id": "B", "default": True}]}}
    assert agents.default_agent_id(config) == "b"


def test_default_agent_id_explicit_ownership_ignores_mark_uses_system_agent():
    config = {
        "agents": {
            "ownership": "explicit",
            "defaults": {"systemAgent": {"agentId": "Ops"}},
            "entries": {"main": {"default": True}, "ops": {}},
        }
    }
    assert agents.default_agent_id(config) == "ops"


def test_default_agent_id_no_mark_first_configured():
    assert agents.default_agent_id({"agents": {"entries": {"zed": {}, "amy": {}}}}) == "zed"


def test_default_agent_id_nothing_configured_main():
    assert agents.default_agent_id({}) == "main"


@pytest.mark.parametrize(
    ("written", "relative"),
    [
        ("ws/rel", True),
        ("~user/ws", True),
        ("/srv/ws", False),
        ("~", False),
        ("~/ws", False),
        ("~\\ws", False),
    ],
)
def test_workspace_problem_relative_setting_refused_absolute_and_home_forms_accepted(
    written, relative
):
    setting = ("its workspace", written)
    problem = agents.workspace_problem("ops", HOME / "ws", setting, "/home/tester/ws", str(HOME))
    assert (problem is not None) == relative
    if relative:
        assert problem.startswith(f'agent ops: its workspace "{written}" is a relative path')


# --- deployment helpers --------------------------------------------------------------------


def test_gateway_port_env_wins_over_config_like_the_gateway():
    deployment = make_deployment({"gateway": {"port": 18792}}, {"OPENCLAW_GATEWAY_PORT": "19001"})
    assert deployment.gateway_port_and_source()[0] == 19001


def test_gateway_port_env_host_and_port_form_accepted():
    deployment = make_deployment({}, {"OPENCLAW_GATEWAY_PORT": "127.0.0.1:19002"})
    assert deployment.gateway_port_and_source()[0] == 19002


def test_gateway_port_env_garbage_falls_back_to_config():
    deployment = make_deployment({"gateway": {"port": 18792}}, {"OPENCLAW_GATEWAY_PORT": "soon"})
    assert deployment.gateway_port_and_source()[0] == 18792


def test_gateway_port_nothing_set_default():
    assert make_deployment({}).gateway_port_and_source()[0] == 18789
    assert make_deployment({"gateway": {"port": True}}).gateway_port_and_source()[0] == 18789


def test_gateway_token_config_wins_over_env():
    deployment = make_deployment(
        {"gateway": {"auth": {"token": "from-config"}}}, {"OPENCLAW_GATEWAY_TOKEN": "from-env"}
    )
    assert deployment.gateway_token() == "from-config"


def test_gateway_token_env_reference_and_secret_ref_resolved():
    env = {"MY_TOKEN": "secret"}
    assert make_deployment(
        {"gateway": {"auth": {"token": "${MY_TOKEN}"}}}, env
    ).gateway_token() == ("secret")
    secret_ref = {"source": "env", "provider": "default", "id": "MY_TOKEN"}
    assert make_deployment({"gateway": {"auth": {"token": secret_ref}}}, env).gateway_token() == (
        "secret"
    )


def test_gateway_token_absent_env_fallback_or_none():
    assert make_deployment({}, {"OPENCLAW_GATEWAY_TOKEN": "t"}).gateway_token() == "t"
    assert make_deployment({}).gateway_token() is None


def test_deployment_repr_never_shows_token():
    deployment = make_deployment(
        {"gateway": {"auth": {"token": "hunter2"}}}, {"OPENCLAW_GATEWAY_TOKEN": "hunter3"}
    )
    assert "hunter" not in repr(deployment)


def test_bootstrap_limits_per_agent_override_then_defaults_then_builtin():
    config = {
        "agents": {
            "defaults": {"bootstrapMaxChars": 12000, "bootstrapTotalMaxChars": 50000},
            "entries": {"ops": {"bootstrapMaxChars": 8000.7}, "bad": {"bootstrapMaxChars": -1}},
        }
    }
    deployment = make_deployment(config)
    assert deployment.bootstrap_caps("OPS")[0] == 8000
    assert deployment.bootstrap_caps("main")[0] == 12000
    assert deployment.bootstrap_caps("ops")[1] == 50000
    assert deployment.bootstrap_caps("bad")[0] == 20000  # invalid override: built-in default
    assert make_deployment({}).bootstrap_caps("main") == (20000, 60000)


def test_compaction_mode_set_and_default():
    config = {"agents": {"defaults": {"compaction": {"mode": "safeguard"}}}}
    assert make_deployment(config).compaction_mode() == "safeguard"
    assert make_deployment({}).compaction_mode() == "default"
