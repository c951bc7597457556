"""`memwarden install hooks` / `uninstall hooks` on a real state dir and JSON5 gateway config."""

from __future__ import annotations

import os
import stat
from datetime import UTC, datetime
from pathlib import Path

import json5
import orjson
import pytest

from memwarden import config
from memwarden.errors import UsageError
from memwarden.hooks_install import HOOK_NAMES, install_hooks, uninstall_hooks
from memwarden.runtime import JobContext
from support.cli import run_cli
from support.deployments import make_sqlite_era_state

REPO_HOOKS = Path(__file__).resolve().parents[2] / "hooks"
MOMENT = datetime(2026, 11, 22, 6, 30, tzinfo=UTC)


def executable(folder: Path, name: str, body: str = "exit 0") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def state(tmp_path):
    return make_sqlite_era_state(tmp_path)


def context(state, tmp_path, path_dirs: tuple[Path, ...] = (), **env: str) -> JobContext:
    environment = dict(os.environ)
    environment["PATH"] = os.pathsep.join([*map(str, path_dirs), "/usr/bin", "/bin"])
    environment["MEMWARDEN_INSTALL_EXECUTABLE"] = str(executable(tmp_path / "bin", "memwarden"))
    environment.update(env)
    return JobContext(
        config=config.load(None, env=environment),
        env=environment,
        state_dir_override=state.state_dir,
        clock=lambda: MOMENT,
    )


def entries(state) -> dict:
    return json5.loads(state.config_path.read_text())["hooks"]["internal"]["entries"]


def test_install_copies_both_hooks_and_writes_the_executable(state, tmp_path):
    result = install_hooks(context(state, tmp_path), dry_run=False)

    assert result.exit_code == 0, result.problems
    for name in HOOK_NAMES:
        for file in ("HOOK.md", "handler.js"):
            installed = state.state_dir / "hooks" / name / file
            assert installed.read_bytes() == (REPO_HOOKS / name / file).read_bytes()
    settings = orjson.loads((state.state_dir / "hooks/session-summary/memwarden.json").read_bytes())
    assert settings == {
        "executable": str(tmp_path / "bin" / "memwarden"),
        "config": None,
        "stateDir": str(state.state_dir),
    }


def test_install_without_openclaw_cli_edits_the_json5_config_after_a_backup(state, tmp_path):
    original = state.config_path.read_bytes()
    assert original.startswith(b"//")  # JSON5 with a comment, as the helper writes it

    result = install_hooks(context(state, tmp_path), dry_run=False)

    assert result.data["enabled_by"] == "config"
    internal = json5.loads(state.config_path.read_text())["hooks"]["internal"]
    assert internal["enabled"] is True
    assert internal["entries"]["memory-index-inject"] == {"enabled": True}
    assert internal["entries"]["session-summary"] == {"enabled": True}
    assert internal["entries"]["oc-probe"] == {"enabled": True}  # others untouched
    orjson.loads(state.config_path.read_bytes())  # written back as plain JSON
    backup = state.config_path.with_name("openclaw.json.memwarden-20261122T063000Z.bak")
    assert backup.read_bytes() == original
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600
    assert f"hooks: backed up {state.config_path} to {backup}" in result.lines


def test_install_twice_changes_nothing_the_second_time(state, tmp_path):
    install_hooks(context(state, tmp_path), dry_run=False)
    config_before = state.config_path.read_bytes()
    files_before = sorted(state.state_dir.iterdir())

    again = install_hooks(context(state, tmp_path), dry_run=False)

    assert again.exit_code == 0
    assert [hook["files"] for hook in again.data["hooks"]] == ["unchanged", "unchanged"]
    assert again.data["enabled_by"] == "already"
    assert state.config_path.read_bytes() == config_before
    assert sorted(state.state_dir.iterdir()) == files_before  # no second backup


def test_install_dry_run_changes_nothing_and_says_everything(state, tmp_path):
    before = state.config_path.read_bytes()

    result = install_hooks(context(state, tmp_path), dry_run=True)

    assert not (state.state_dir / "hooks" / "memory-index-inject").exists()
    assert state.config_path.read_bytes() == before
    assert len(list(state.state_dir.glob("openclaw.json.memwarden-*"))) == 0
    text = "\n".join(result.lines)
    assert "hook memory-index-inject: would copy" in text
    assert "hook session-summary: would copy" in text and "memwarden.json" in text
    assert "hooks: would back up" in text
    assert "hooks: would enable memory-index-inject, session-summary in" in text


def test_install_with_openclaw_on_path_enables_through_the_cli(state, tmp_path):
    calls = tmp_path / "calls.log"
    fake_bin = tmp_path / "fake-bin"
    executable(
        fake_bin,
        "openclaw",
        f'echo "$* state=$OPENCLAW_STATE_DIR config=$OPENCLAW_CONFIG_PATH" >> "{calls}"',
    )
    before = state.config_path.read_bytes()

    result = install_hooks(context(state, tmp_path, (fake_bin,)), dry_run=False)

    assert result.data["enabled_by"] == "cli"
    suffix = f"state={state.state_dir} config={state.config_path}"
    assert calls.read_text().splitlines() == [
        f"hooks enable memory-index-inject {suffix}",
        f"hooks enable session-summary {suffix}",
    ]
    assert state.config_path.read_bytes() == before


def test_install_when_the_openclaw_cli_fails_falls_back_to_the_config(state, tmp_path):
    fake_bin = tmp_path / "fake-bin"
    executable(fake_bin, "openclaw", 'echo "openclaw requires Node >= 24" >&2; exit 1')

    result = install_hooks(context(state, tmp_path, (fake_bin,)), dry_run=False)

    assert result.data["enabled_by"] == "config"
    assert entries(state)["session-summary"] == {"enabled": True}
    assert any("exited 1: openclaw requires Node >= 24" in line for line in result.problems)


def test_install_with_a_broken_config_prints_the_exact_steps(state, tmp_path):
    state.config_path.write_text("{ hooks: { internal: ")
    broken = state.config_path.read_bytes()

    result = install_hooks(context(state, tmp_path), dry_run=False)

    assert result.exit_code == 1
    assert result.data["enabled_by"] == "manual"
    assert state.config_path.read_bytes() == broken
    steps = result.problems[-1]
    assert "openclaw hooks enable memory-index-inject && openclaw hooks enable session-summary" in (
        steps
    )
    assert '"session-summary":{"enabled":true}' in steps
    assert (state.state_dir / "hooks" / "session-summary" / "handler.js").is_file()


def test_install_executable_override_must_be_executable(state, tmp_path):
    plain = tmp_path / "not-executable"
    plain.write_text("")

    with pytest.raises(UsageError, match="not an executable file"):
        install_hooks(context(state, tmp_path), dry_run=False, executable=str(plain))


def test_install_into_open_selection_warns_that_only_listed_hooks_will_load(state, tmp_path):
    value = json5.loads(state.config_path.read_text())
    value["hooks"] = {"internal": {"enabled": True}}
    state.config_path.write_text(orjson.dumps(value).decode())

    result = install_hooks(context(state, tmp_path), dry_run=False)

    assert any("lists no entries" in problem for problem in result.problems)
    assert result.exit_code == 0


def test_uninstall_disables_and_removes_what_install_added(state, tmp_path):
    install_hooks(context(state, tmp_path), dry_run=False)

    result = uninstall_hooks(context(state, tmp_path), dry_run=False)

    assert result.exit_code == 0
    assert entries(state)["memory-index-inject"] == {"enabled": False}
    assert entries(state)["session-summary"] == {"enabled": False}
    assert entries(state)["oc-probe"] == {"enabled": True}
    assert not (state.state_dir / "hooks" / "memory-index-inject").exists()
    assert not (state.state_dir / "hooks" / "session-summary").exists()
    backups = sorted(state.state_dir.glob("openclaw.json.memwarden-*.bak"))
    assert [path.name for path in backups] == [
        "openclaw.json.memwarden-20261122T063000Z-2.bak",
        "openclaw.json.memwarden-20261122T063000Z.bak",
    ]
    again = uninstall_hooks(context(state, tmp_path), dry_run=False)
    assert again.data["disabled_by"] == "already"


def test_uninstall_leaves_a_folder_that_is_not_memwardens(state, tmp_path):
    foreign = state.state_dir / "hooks" / "session-summary"
    foreign.mkdir(parents=True)
    (foreign / "HOOK.md").write_text("---\nname: session-summary\n---\nsomeone else's\n")

    result = uninstall_hooks(context(state, tmp_path), dry_run=False)

    assert foreign.is_dir()
    assert result.exit_code == 1
    assert any("not memwarden's session-summary hook" in line for line in result.problems)


def test_install_hooks_command_line(capsys, state, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setenv(
        "MEMWARDEN_INSTALL_EXECUTABLE", str(executable(tmp_path / "bin", "memwarden"))
    )

    result = run_cli(capsys, "--state-dir", state.state_dir, "install", "hooks", "--json")

    assert result.exit_code == 0, result.stderr
    assert result.json()["enabled_by"] == "config"
    assert entries(state)["memory-index-inject"] == {"enabled": True}
