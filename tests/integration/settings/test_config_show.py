"""`memwarden config show` says which values are in use and what chose each (the CLI as a
subprocess): the gateway state dir, the gateway URL, the storage dir, the config and secrets
files."""

from __future__ import annotations

import os

import json5

from support.cli import run_subprocess
from support.deployments import make_sqlite_era_state, write_json5_config


def in_use(*arguments: str, env: dict | None = None) -> dict[str, dict[str, str]]:
    result = run_subprocess(*arguments, "config", "show", "--json", env=env)
    assert result.exit_code == 0, result.stderr
    return result.json()["in_use"]


def test_defaults_name_the_default_folders(isolated_env, monkeypatch):
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.delenv("XDG_CONFIG_HOME")

    found = in_use()

    assert found["gateway_state_dir"]["value"] == str(isolated_env / ".openclaw")
    assert found["gateway_state_dir"]["source"].startswith("default; no gateway there:")
    assert found["gateway_url"] == {"value": "ws://127.0.0.1:18789", "source": "default"}
    storage = isolated_env / ".local" / "state" / "memwarden"
    assert found["storage_dir"] == {"value": str(storage), "source": "default"}
    secrets = isolated_env / ".config" / "memwarden" / "secrets.env"
    assert found["secrets_file"] == {"value": str(secrets), "source": "default; not found"}
    assert found["config_file"]["source"] == "defaults and environment only"


def test_flag_variables_and_config_file_are_named_as_sources(tmp_path, isolated_env):
    state = make_sqlite_era_state(tmp_path)
    config = json5.loads(state.config_path.read_text())
    config["gateway"]["port"] = 19999
    write_json5_config(state.config_path, config)
    secrets = tmp_path / "secrets.env"
    secrets.write_text("# nothing yet\n")
    secrets.chmod(0o600)
    toml = tmp_path / "memwarden.toml"
    toml.write_text(f'[general]\nsecrets_file = "{secrets}"\n')
    env = dict(os.environ, STATE_DIRECTORY=str(tmp_path / "systemd-state"))

    found = in_use("--config", toml, "--state-dir", state.state_dir, env=env)

    assert found["config_file"] == {"value": str(toml), "source": "--config"}
    assert found["gateway_state_dir"] == {"value": str(state.state_dir), "source": "--state-dir"}
    assert found["gateway_url"] == {
        "value": "ws://127.0.0.1:19999",
        "source": f"port: gateway.port in {state.config_path}",
    }
    assert found["storage_dir"] == {
        "value": str(tmp_path / "systemd-state"),
        "source": "$STATE_DIRECTORY (systemd)",
    }
    assert found["secrets_file"] == {
        "value": str(secrets),
        "source": f"general.secrets_file ({toml})",
    }


def test_environment_sources_and_the_human_header(tmp_path):
    state = make_sqlite_era_state(tmp_path)
    toml = tmp_path / "from-env.toml"
    toml.write_text(f'[gateway]\nstate_dir = "{state.state_dir}"\n')
    env = dict(
        os.environ,
        MEMWARDEN_CONFIG=str(toml),
        MEMWARDEN_GATEWAY_URL="ws://127.0.0.1:4242",
        MEMWARDEN_GENERAL_STORAGE_DIR=str(tmp_path / "mine"),
    )

    found = in_use(env=env)
    shown = run_subprocess("config", "show", env=env).stdout.splitlines()

    assert found["config_file"] == {"value": str(toml), "source": "$MEMWARDEN_CONFIG"}
    assert found["gateway_state_dir"]["source"] == f"gateway.state_dir ({toml})"
    assert found["gateway_url"]["source"] == "gateway.url (environment MEMWARDEN_GATEWAY_URL)"
    assert found["storage_dir"]["source"] == (
        "general.storage_dir (environment MEMWARDEN_GENERAL_STORAGE_DIR)"
    )
    assert shown[0] == "# in use:"
    assert f"#   gateway state dir: {state.state_dir} (gateway.state_dir ({toml}))" in shown
    assert "#   gateway URL:       ws://127.0.0.1:4242 (gateway.url (environment " in "\n".join(
        shown
    )


def test_config_check_says_which_secrets_file_it_read(tmp_path):
    state = make_sqlite_era_state(tmp_path)
    without = run_subprocess("--state-dir", state.state_dir, "config", "check")
    assert without.exit_code == 0, without.stderr
    assert "secrets file: none read" in without.stdout.splitlines()

    secrets = tmp_path / "secrets.env"
    secrets.write_text("MEMWARDEN_SLACK_BOT_TOKEN=xoxb-t\nMEMWARDEN_SLACK_CHANNEL=C1\n")
    secrets.chmod(0o600)
    env = dict(os.environ, MEMWARDEN_GENERAL_SECRETS_FILE=str(secrets))
    read = run_subprocess("--state-dir", state.state_dir, "--json", "config", "check", env=env)
    assert read.exit_code == 0, read.stderr
    assert read.json()["secrets_file"] == str(secrets)
    assert "xoxb-t" not in read.stdout


def test_config_check_refuses_half_a_slack_setup_as_health_does(tmp_path):
    state = make_sqlite_era_state(tmp_path)
    halves = {
        "MEMWARDEN_SLACK_BOT_TOKEN": ("xoxb-t", "slack.channel: required with a bot token"),
        "MEMWARDEN_SLACK_CHANNEL": ("C1", "MEMWARDEN_SLACK_BOT_TOKEN=xoxb-… to the secrets file"),
    }
    for name, (value, expected) in halves.items():
        env = dict(os.environ, **{name: value})
        for command in (["config", "check"], ["health"], ["-q", "health"]):
            result = run_subprocess("--state-dir", state.state_dir, *command, env=env)
            assert result.exit_code == 2, (command, result.stdout, result.stderr)
            assert expected in result.stderr, (command, result.stderr)
            assert "memwarden config: ok" not in result.stdout


def test_config_check_lists_every_problem_health_refuses_at_once(tmp_path):
    state = make_sqlite_era_state(tmp_path)
    env = dict(
        os.environ,
        MEMWARDEN_HEALTH_DISABLED_CHECKS='["gateway.lvie"]',
        MEMWARDEN_SLACK_CHANNEL="C1",
        MEMWARDEN_ALERTMANAGER_URLS='["http://127.0.0.1:9"]',
        MEMWARDEN_ALERTMANAGER_RESOLVE_TIMEOUT_MINUTES="1",
    )
    result = run_subprocess("--state-dir", state.state_dir, "config", "check", env=env)
    assert result.exit_code == 2
    assert "slack.channel: set to C1" in result.stderr
    assert "alertmanager.resolve_timeout_minutes: expected more than" in result.stderr
    assert "'gateway.lvie' names no check (did you mean gateway.live?)" in result.stderr
    health = run_subprocess("--state-dir", state.state_dir, "-q", "health", env=env)
    assert health.exit_code == 2
    assert health.stderr.count(" memwarden: ") == 3, health.stderr


def test_a_password_in_the_gateway_url_is_masked_where_it_is_shown(tmp_path):
    env = dict(os.environ, MEMWARDEN_GATEWAY_URL="ws://ops:hunter2-secret@127.0.0.1:4242")

    found = in_use(env=env)
    shown = run_subprocess("config", "show", env=env).stdout

    assert found["gateway_url"]["value"] == "ws://ops:********@127.0.0.1:4242"
    assert "#   gateway URL:       ws://ops:********@127.0.0.1:4242 (gateway.url" in shown
    assert "hunter2-secret" not in shown


def test_without_a_gateway_config_the_port_variables_are_read_as_the_gateway_reads_them(
    isolated_env, monkeypatch
):
    monkeypatch.setenv("CLAWDBOT_GATEWAY_PORT", "4321")
    assert in_use()["gateway_url"] == {
        "value": "ws://127.0.0.1:4321",
        "source": "port: $CLAWDBOT_GATEWAY_PORT",
    }
    monkeypatch.setenv("OPENCLAW_GATEWAY_PORT", "a:b:123")  # not a port: the legacy one wins
    assert in_use()["gateway_url"]["value"] == "ws://127.0.0.1:4321"
