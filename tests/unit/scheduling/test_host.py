"""Choosing the scheduler, finding memwarden's executable, and what the timers inherit."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memwarden.process.errors import UsageError
from memwarden.scheduling.host import (
    HostFacts,
    choose_target,
    default_systemd_dir,
    pinned_environment,
    resolve_executable,
    unpinned_variables,
)


def facts(**changes) -> HostFacts:
    base = dict(
        system="Linux",
        has_systemctl=True,
        systemd_booted=True,
        user_manager=True,
        has_crontab=True,
    )
    return HostFacts(**(base | changes))


def test_choose_target_macos_is_launchd():
    assert choose_target(facts(system="Darwin", has_systemctl=False)) == "launchd"


def test_choose_target_linux_with_user_manager_is_systemd():
    assert choose_target(facts()) == "systemd"


@pytest.mark.parametrize(
    "change", [{"user_manager": False}, {"systemd_booted": False}, {"has_systemctl": False}]
)
def test_choose_target_linux_without_usable_systemd_falls_back_to_cron(change):
    assert choose_target(facts(**change)) == "cron"


def test_choose_target_nothing_available_raises_with_guidance():
    with pytest.raises(UsageError, match="no scheduler found"):
        choose_target(facts(user_manager=False, has_crontab=False))


def make_executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_resolve_executable_setting_wins(tmp_path):
    chosen = make_executable(tmp_path / "opt" / "memwarden")
    assert resolve_executable(str(chosen), {"PATH": ""}, argv0="x", interpreter="") == chosen


@pytest.mark.parametrize("configured", ["memwarden", "/nonexistent/memwarden"])
def test_resolve_executable_bad_setting_raises_naming_it(configured):
    with pytest.raises(UsageError, match=r"install\.executable"):
        resolve_executable(configured, {"PATH": ""})


def test_resolve_executable_console_script_keeps_symlink(tmp_path):
    real = make_executable(tmp_path / "venv" / "bin" / "memwarden")
    link = tmp_path / "bin" / "memwarden"
    link.parent.mkdir()
    link.symlink_to(real)
    assert resolve_executable("", {"PATH": ""}, argv0=str(link), interpreter="") == link


def test_resolve_executable_beside_interpreter_then_path(tmp_path):
    beside = make_executable(tmp_path / "venv" / "bin" / "memwarden")
    on_path = make_executable(tmp_path / "path" / "memwarden")
    env = {"PATH": str(on_path.parent)}
    interpreter = str(tmp_path / "venv" / "bin" / "python")
    assert resolve_executable("", env, argv0="pytest", interpreter=interpreter) == beside
    assert resolve_executable("", env, argv0="pytest", interpreter="/nowhere/python") == on_path


def test_resolve_executable_nothing_found_raises():
    with pytest.raises(UsageError, match="cannot find the memwarden executable"):
        resolve_executable("", {"PATH": ""}, argv0="pytest", interpreter="/nowhere/python")


def test_pinned_environment_holds_paths_and_never_tokens(tmp_path):
    env = {
        "PATH": "/usr/bin",
        "OPENCLAW_STATE_DIR": "/srv/openclaw",
        "CLAWDBOT_GATEWAY_PORT": "19000",
        "OPENCLAW_GATEWAY_TOKEN": "tok",
        "MEMWARDEN_SLACK_BOT_TOKEN": "xoxb",
        "XDG_CONFIG_HOME": "/cfg",
        "HOME": "/home/a",
        "MEMWARDEN_GENERAL_SECRETS_FILE": "/cfg/memwarden/prod.env",
    }
    pinned = dict(
        pinned_environment(
            env,
            storage_dir=tmp_path / "state",
            config_file=Path("/cfg/memwarden/config.toml"),
            gateway_state_dir=None,
        )
    )
    assert pinned == {
        "PATH": "/usr/bin",
        "OPENCLAW_STATE_DIR": "/srv/openclaw",
        "CLAWDBOT_GATEWAY_PORT": "19000",  # the gateway's port, as layout.env_port reads it
        "XDG_CONFIG_HOME": "/cfg",
        "MEMWARDEN_CONFIG": "/cfg/memwarden/config.toml",
        "MEMWARDEN_GENERAL_STORAGE_DIR": os.path.abspath(tmp_path / "state"),
        "MEMWARDEN_GENERAL_SECRETS_FILE": "/cfg/memwarden/prod.env",  # a path: timers need it
    }


def test_pinned_environment_leaves_out_relative_xdg_folders_and_anchors_gateway_paths(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    env = {
        "PATH": "/usr/bin",
        "XDG_CONFIG_HOME": "cfg",  # relative: the XDG spec says to ignore it
        "XDG_STATE_HOME": "/srv/state",
        "OPENCLAW_STATE_DIR": "gateway/state",  # relative to the installing shell's folder
        "OPENCLAW_CONFIG_PATH": "~/openclaw.json",
    }
    pinned = dict(
        pinned_environment(
            env, storage_dir=tmp_path / "state", config_file=None, gateway_state_dir=None
        )
    )
    assert "XDG_CONFIG_HOME" not in pinned
    assert pinned["XDG_STATE_HOME"] == "/srv/state"
    assert pinned["OPENCLAW_STATE_DIR"] == str(tmp_path / "gateway" / "state")
    assert pinned["OPENCLAW_CONFIG_PATH"] == "~/openclaw.json"


def test_pinned_path_names_each_folder_once_in_its_first_place(tmp_path):
    env = {"PATH": "/home/a/bin:/usr/bin:/bin:/home/a/bin:/usr/bin"}
    pinned = dict(
        pinned_environment(
            env, storage_dir=tmp_path / "state", config_file=None, gateway_state_dir=None
        )
    )
    assert pinned["PATH"] == "/home/a/bin:/usr/bin:/bin"


def test_default_systemd_dir_ignores_a_relative_xdg_config_home_as_config_does():
    assert default_systemd_dir({"HOME": "/home/a", "XDG_CONFIG_HOME": "cfg"}) == Path(
        "/home/a/.config/systemd/user"
    )
    assert default_systemd_dir({"HOME": "/home/a", "XDG_CONFIG_HOME": "/cfg"}) == Path(
        "/cfg/systemd/user"
    )


def test_unpinned_variables_lists_settings_and_gateway_tokens_timers_miss():
    env = {
        "MEMWARDEN_SLACK_BOT_TOKEN": "x",
        "MEMWARDEN_CONFIG": "/c.toml",
        "MEMWARDEN_TEST_X": "1",
        "OPENCLAW_GATEWAY_TOKEN": "t",
        "OPENCLAW_STATE_DIR": "/s",
        "MEMWARDEN_EMPTY": "",
    }
    assert unpinned_variables(env, {"MEMWARDEN_CONFIG": "/c.toml"}) == [
        "MEMWARDEN_SLACK_BOT_TOKEN",
        "OPENCLAW_GATEWAY_TOKEN",
    ]


def test_unpinned_variables_gateway_token_not_needed_when_its_config_holds_one():
    env = {"OPENCLAW_GATEWAY_TOKEN": "t", "MEMWARDEN_SLACK_BOT_TOKEN": "x"}
    assert unpinned_variables(env, {}, config_has_token=True) == ["MEMWARDEN_SLACK_BOT_TOKEN"]


def test_linger_user_is_the_account_name_not_user_nor_home(monkeypatch, tmp_path):
    import os
    import pwd

    from memwarden.scheduling.host import linger_user

    monkeypatch.setenv("USER", "alice")
    monkeypatch.setenv("LOGNAME", "alice")
    monkeypatch.setenv("HOME", str(tmp_path / "bob"))
    user, _lingering = linger_user()
    assert user == pwd.getpwuid(os.getuid()).pw_name
