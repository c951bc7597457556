"""Where memwarden finds the gateway and its token: config, environment, the gateway's config."""

from __future__ import annotations

import json5

from memwarden.openclaw.endpoint import resolve_endpoint
from memwarden.openclaw.layout import discover
from memwarden.settings.config import load
from support.deployments import make_file_era_state, write_json5_config


def _deployment(tmp_path, gateway: dict, env: dict | None = None):
    state = make_file_era_state(tmp_path)
    config = json5.loads(state.config_path.read_text())
    config["gateway"] = gateway
    write_json5_config(state.config_path, config)
    return discover(state.state_dir, env=env or {})


def test_resolve_endpoint_gateway_config_gives_port_and_token(tmp_path):
    deployment = _deployment(tmp_path, {"port": 19001, "auth": {"token": "from-gateway"}})

    assert resolve_endpoint(load(env={}), deployment, {}) == (
        "ws://127.0.0.1:19001",
        "from-gateway",
    )


def test_resolve_endpoint_nothing_configured_uses_default_port_and_no_token(tmp_path):
    deployment = _deployment(tmp_path, {})

    assert resolve_endpoint(load(env={}), deployment, {}) == ("ws://127.0.0.1:18789", None)


def test_resolve_endpoint_openclaw_token_env_beats_gateway_config(tmp_path):
    env = {"OPENCLAW_GATEWAY_TOKEN": "from-env"}
    deployment = _deployment(tmp_path, {"auth": {"token": "from-gateway"}}, env)

    assert resolve_endpoint(load(env={}), deployment, env)[1] == "from-env"


def test_resolve_endpoint_memwarden_config_beats_everything(tmp_path):
    env = {
        "OPENCLAW_GATEWAY_TOKEN": "from-env",
        "MEMWARDEN_GATEWAY_TOKEN": "from-memwarden",
        "MEMWARDEN_GATEWAY_URL": "ws://10.0.0.5:1234",
    }
    deployment = _deployment(tmp_path, {"port": 19001, "auth": {"token": "from-gateway"}}, env)

    assert resolve_endpoint(load(env=env), deployment, env) == (
        "ws://10.0.0.5:1234",
        "from-memwarden",
    )


def test_resolve_endpoint_port_env_and_tls_give_wss_url(tmp_path):
    env = {"OPENCLAW_GATEWAY_PORT": "19443"}
    deployment = _deployment(tmp_path, {"port": 19001, "tls": {"enabled": True}}, env)

    assert resolve_endpoint(load(env={}), deployment, env)[0] == "wss://127.0.0.1:19443"


def test_resolve_endpoint_token_as_env_reference_is_looked_up(tmp_path):
    env = {"MY_GATEWAY_SECRET": "referenced"}
    deployment = _deployment(tmp_path, {"auth": {"token": "${MY_GATEWAY_SECRET}"}}, env)

    assert resolve_endpoint(load(env={}), deployment, env)[1] == "referenced"


def test_resolve_endpoint_without_deployment_reads_port_from_env():
    env = {"OPENCLAW_GATEWAY_PORT": "127.0.0.1:19002"}

    assert resolve_endpoint(load(env={}), None, env) == ("ws://127.0.0.1:19002", None)
