"""`memwarden install hooks` / `uninstall hooks` on a real state dir and JSON5 gateway config."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from datetime import UTC, datetime
from pathlib import Path

import json5
import orjson
import pytest

from memwarden.gateway_hooks.install import install_hooks, uninstall_hooks
from memwarden.gateway_hooks.shipped import HOOK_NAMES
from memwarden.health.deliveries import FOLDER
from memwarden.process.errors import UsageError
from memwarden.process.runtime import JobContext
from memwarden.settings import config
from support.cli import run_cli
from support.deployments import make_sqlite_era_state, write_json5_config

REPO_HOOKS = Path(__file__).resolve().parents[3] / "hooks"
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


def test_install_copies_both_hooks_and_writes_their_settings(state, tmp_path, isolated_env):
    result = install_hooks(context(state, tmp_path), dry_run=False)

    assert result.exit_code == 0, result.problems
    for name in HOOK_NAMES:
        for file in ("HOOK.md", "handler.js"):
            installed = state.state_dir / "hooks" / name / file
            assert installed.read_bytes() == (REPO_HOOKS / name / file).read_bytes()
    raw = (state.state_dir / "hooks/session-summary/memwarden.json").read_bytes()
    assert (state.state_dir / "hooks/memory-index-inject/memwarden.json").read_bytes() == raw
    settings = orjson.loads(raw)
    environment = settings.pop("environment")
    # the folder the bootstrap hook writes its receipts to is the one health reads
    deliveries = context(state, tmp_path).storage_dir / FOLDER
    assert settings == {
        "executable": str(tmp_path / "bin" / "memwarden"),
        "config": None,
        "stateDir": str(state.state_dir),
        "deliveries": str(deliveries),
    }
    assert deliveries.is_absolute() and deliveries.parent == storage(isolated_env)
    # what the timers get: the run the hook starts keeps its state where theirs is
    assert environment["MEMWARDEN_GENERAL_STORAGE_DIR"] == str(storage(isolated_env))
    assert environment["MEMWARDEN_GATEWAY_STATE_DIR"] == str(state.state_dir)
    assert environment["XDG_CONFIG_HOME"] == str(isolated_env / ".config")


def test_the_hook_environment_never_holds_a_secret(state, tmp_path):
    secret = "xoxb-never-in-a-file"
    install_hooks(
        context(state, tmp_path, MEMWARDEN_SLACK_BOT_TOKEN=secret, OPENCLAW_GATEWAY_TOKEN=secret),
        dry_run=False,
    )

    for name in HOOK_NAMES:
        assert secret not in (state.state_dir / "hooks" / name / "memwarden.json").read_text()


def storage(home: Path) -> Path:
    return home / ".local" / "state" / "memwarden"


def listing(folder: Path) -> dict[str, bytes | None]:
    """Every file (with its bytes) and folder (None) under `folder`, and the config's mode."""
    found: dict[str, bytes | None] = {}
    for path in sorted(folder.rglob("*")):
        found[str(path.relative_to(folder))] = path.read_bytes() if path.is_file() else None
    return found


def test_install_edits_the_json5_config_in_place_and_backs_it_up_in_memwardens_storage(
    state, tmp_path, isolated_env
):
    original = state.config_path.read_text()
    assert original.startswith("//")  # JSON5 with a comment, as the helper writes it

    result = install_hooks(context(state, tmp_path), dry_run=False)

    assert result.data["enabled_by"] == "config"
    text = state.config_path.read_text()
    assert text.startswith(original.split("\n")[0] + "\n")  # the comment is still there
    internal = json5.loads(text)["hooks"]["internal"]
    assert internal["enabled"] is True
    assert internal["entries"]["memory-index-inject"] == {"enabled": True}
    assert internal["entries"]["session-summary"] == {"enabled": True}
    assert internal["entries"]["oc-probe"] == {"enabled": True}  # others untouched
    for line in original.splitlines():
        if "hooks" not in line and "entries" not in line:
            assert line in text  # every other line kept as it was
    (backup,) = (storage(isolated_env) / "config-backups").iterdir()
    assert backup.read_text() == original
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600
    assert sorted(path.name for path in state.state_dir.iterdir()) == [
        "agents",
        "hooks",
        "openclaw.json",
    ]
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
    # the config change itself, as a diff of what is there now and what install would write
    assert f"    --- {state.config_path} (now)" in result.lines
    assert f"    +++ {state.config_path} (after)" in result.lines
    added = [line for line in result.lines if line.startswith("    +") and "+++" not in line]
    assert any('"memory-index-inject"' in line for line in added)


def test_install_with_openclaw_on_path_still_edits_the_config_itself(state, tmp_path):
    calls = tmp_path / "calls.log"
    fake_bin = tmp_path / "fake-bin"
    executable(fake_bin, "openclaw", f'echo "$*" >> "{calls}"')

    result = install_hooks(context(state, tmp_path, (fake_bin,)), dry_run=False)

    # `openclaw hooks enable` would drop the comments and leave .bak files in the state dir.
    assert result.data["enabled_by"] == "config"
    assert not calls.exists()
    assert entries(state)["session-summary"] == {"enabled": True}


def test_install_with_a_broken_config_prints_the_exact_steps(state, tmp_path):
    state.config_path.write_text("{ hooks: { internal: ")
    broken = state.config_path.read_bytes()

    result = install_hooks(context(state, tmp_path), dry_run=False)

    assert result.exit_code == 1
    assert result.data["enabled_by"] == "manual"
    assert state.config_path.read_bytes() == broken
    steps = result.problems[-1]
    entries = '{"memory-index-inject":{"enabled":true},"session-summary":{"enabled":true}}'
    assert f'merge {{"hooks":{{"internal":{{"entries":{entries}}}}}}} into' in steps
    assert "not with `openclaw hooks enable`" in steps  # it sets hooks.internal.enabled
    assert (state.state_dir / "hooks" / "session-summary" / "handler.js").is_file()


def test_install_whose_config_is_left_to_the_operator_still_records_the_files_it_wrote(
    state, tmp_path
):
    older = tmp_path / "older-hooks"  # a memwarden whose handler differs from this one's
    shutil.copytree(REPO_HOOKS, older)
    handler = older / "session-summary" / "handler.js"
    handler.write_text(handler.read_text() + "// an older memwarden's line\n")
    state.config_path.write_text("{ hooks: { internal: ")  # the steps are printed: manual

    installed = install_hooks(context(state, tmp_path), dry_run=False, source=older)
    state.config_path.write_text("{}\n")  # the operator fixed the config, hooks not enabled
    removed = uninstall_hooks(context(state, tmp_path), dry_run=False)

    assert installed.data["enabled_by"] == "manual"
    assert [hook["files"] for hook in removed.data["hooks"]] == ["removed", "removed"]


def test_install_executable_setting_must_be_executable(state, tmp_path):
    plain = tmp_path / "not-executable"
    plain.write_text("")

    with pytest.raises(UsageError, match=r"install\.executable = .*not an absolute path"):
        install_hooks(
            context(state, tmp_path, MEMWARDEN_INSTALL_EXECUTABLE=str(plain)), dry_run=False
        )


def test_install_starts_the_executable_the_timers_run_a_link_kept(state, tmp_path):
    # A ~/.local/bin/memwarden link survives an upgrade that moves what it points to; the hooks
    # start it as the timers do, not the file it pointed to at install time.
    link = tmp_path / "local-bin" / "memwarden"
    link.parent.mkdir()
    link.symlink_to(executable(tmp_path / "venv-1.0" / "bin", "memwarden"))

    install_hooks(context(state, tmp_path, MEMWARDEN_INSTALL_EXECUTABLE=str(link)), dry_run=False)

    raw = (state.state_dir / "hooks/session-summary/memwarden.json").read_bytes()
    assert orjson.loads(raw)["executable"] == str(link)


def test_install_into_an_open_selection_leaves_the_config_as_it_is(state, tmp_path):
    value = json5.loads(state.config_path.read_text())
    value["hooks"] = {"internal": {"enabled": True}}  # every hook found loads, memwarden's too
    state.config_path.write_text(orjson.dumps(value).decode())
    before = state.config_path.read_bytes()

    result = install_hooks(context(state, tmp_path), dry_run=False)

    # a first entry would make the list an allowlist, and 2026.9.x would load only those hooks
    assert (result.exit_code, result.problems) == (0, [])
    assert result.data["enabled_by"] == "already"
    assert state.config_path.read_bytes() == before
    assert uninstall_hooks(context(state, tmp_path), dry_run=False).data["disabled_by"] == "already"
    assert state.config_path.read_bytes() == before


def test_install_adds_memwardens_entries_and_never_the_master_switch(state, tmp_path):
    value = json5.loads(state.config_path.read_text())
    del value["hooks"]
    write_json5_config(state.config_path, value)

    install_hooks(context(state, tmp_path), dry_run=False)

    # hooks.internal.enabled: true would make 2026.7.x load every bundled hook
    assert json5.loads(state.config_path.read_text())["hooks"] == {
        "internal": {"entries": {name: {"enabled": True} for name in HOOK_NAMES}}
    }


def test_install_leaves_internal_hooks_turned_off_to_the_operator(state, tmp_path):
    value = json5.loads(state.config_path.read_text())
    value["hooks"]["internal"]["enabled"] = False
    write_json5_config(state.config_path, value)
    before = state.config_path.read_bytes()

    result = install_hooks(context(state, tmp_path), dry_run=False)

    assert (result.exit_code, result.data["enabled_by"]) == (1, "manual")
    assert state.config_path.read_bytes() == before
    assert result.problems == [
        f"{state.config_path}: hooks.internal.enabled is false (every internal hook is off); "
        "memwarden does not turn internal hooks on: remove that key (the gateway then loads the "
        "hooks named in hooks.internal.entries) and run `memwarden install hooks` again"
    ]
    removed = uninstall_hooks(context(state, tmp_path), dry_run=False)
    assert [hook["files"] for hook in removed.data["hooks"]] == ["removed", "removed"]
    assert state.config_path.read_bytes() == before


def test_install_again_takes_back_the_master_switch_an_earlier_memwarden_set(
    state, tmp_path, isolated_env
):
    value = json5.loads(state.config_path.read_text())
    del value["hooks"]
    write_json5_config(state.config_path, value)
    original = state.config_path.read_bytes()
    install_hooks(context(state, tmp_path), dry_run=False)
    earlier = state.config_path.read_text().replace(
        '"internal": {\n', '"internal": {\n    "enabled": true,\n'
    )  # what an earlier memwarden wrote, as `openclaw hooks enable` does
    state.config_path.write_text(earlier)
    record = storage(isolated_env) / "install" / "hooks.json"
    data = orjson.loads(record.read_bytes())
    data["config_after_sha256"] = hashlib.sha256(earlier.encode()).hexdigest()
    record.write_bytes(orjson.dumps(data))

    result = install_hooks(context(state, tmp_path), dry_run=False)

    assert result.data["enabled_by"] == "config"
    assert "enabled" not in json5.loads(state.config_path.read_text())["hooks"]["internal"]
    removed = uninstall_hooks(context(state, tmp_path), dry_run=False)
    assert removed.data["disabled_by"] == "restored"
    assert state.config_path.read_bytes() == original


@pytest.mark.parametrize("style", ["json5", "json", "no hooks key", "no config"])
def test_install_then_uninstall_leaves_the_state_dir_byte_identical(
    state, tmp_path, isolated_env, style
):
    if style == "json":  # as the gateway itself writes it
        state.config_path.write_bytes(
            orjson.dumps(json5.loads(state.config_path.read_text()), option=orjson.OPT_INDENT_2)
        )
    elif style == "no hooks key":
        value = json5.loads(state.config_path.read_text())
        del value["hooks"]
        write_json5_config(state.config_path, value)
    elif style == "no config":
        state.config_path.unlink()
    if state.config_path.exists():
        state.config_path.chmod(0o640)
    before = listing(state.state_dir)
    mode = stat.S_IMODE(state.config_path.stat().st_mode) if state.config_path.exists() else None

    installed = install_hooks(context(state, tmp_path), dry_run=False)
    assert installed.exit_code == 0, installed.problems
    assert entries(state)["session-summary"] == {"enabled": True}
    result = uninstall_hooks(context(state, tmp_path), dry_run=False)

    assert result.exit_code == 0, result.problems
    assert result.data["disabled_by"] == "restored"
    assert listing(state.state_dir) == before  # no .bak, no empty hooks/, the config as it was
    if mode is not None:
        assert stat.S_IMODE(state.config_path.stat().st_mode) == mode
    assert not (storage(isolated_env) / "install" / "hooks.json").exists()
    again = uninstall_hooks(context(state, tmp_path), dry_run=False)
    assert again.data["disabled_by"] == "already"
    assert listing(state.state_dir) == before


def test_uninstall_after_an_operator_edit_restores_only_memwardens_keys(
    state, tmp_path, isolated_env
):
    value = json5.loads(state.config_path.read_text())
    del value["hooks"]
    write_json5_config(state.config_path, value)
    install_hooks(context(state, tmp_path), dry_run=False)
    edited = state.config_path.read_text().replace(
        "// written by", "// the operator was here\n// written by"
    )
    edited = edited.replace(f"port: {value['gateway']['port']}", "port: 19999")
    state.config_path.write_text(edited)

    result = uninstall_hooks(context(state, tmp_path), dry_run=False)

    assert result.exit_code == 0, result.problems
    assert result.data["disabled_by"] == "config"
    text = state.config_path.read_text()
    assert "// the operator was here" in text  # their comment and their edit are kept
    assert json5.loads(text) == {**value, "gateway": {**value["gateway"], "port": 19999}}
    assert any(
        "changed since install, so only memwarden's keys were put back" in line
        for line in result.lines
    )
    backups = sorted((storage(isolated_env) / "config-backups").iterdir())
    assert backups[-1].read_text() == edited  # what it overwrote is kept in memwarden's storage
    assert not (state.state_dir / "hooks").exists()


def test_uninstall_keeps_the_master_switch_when_other_hooks_were_listed_since(state, tmp_path):
    value = json5.loads(state.config_path.read_text())
    del value["hooks"]
    write_json5_config(state.config_path, value)
    install_hooks(context(state, tmp_path), dry_run=False)
    now = json5.loads(state.config_path.read_text())
    now["hooks"]["internal"]["enabled"] = True  # `openclaw hooks enable their-hook`, which
    now["hooks"]["internal"]["entries"]["their-hook"] = {"enabled": True}
    state.config_path.write_bytes(orjson.dumps(now))  # rewrote it as JSON

    result = uninstall_hooks(context(state, tmp_path), dry_run=False)

    assert json5.loads(state.config_path.read_text())["hooks"] == {
        "internal": {"enabled": True, "entries": {"their-hook": {"enabled": True}}}
    }
    assert any("hooks.internal.enabled kept" in line for line in result.lines)


def test_uninstall_without_a_record_removes_memwardens_entries_only(state, tmp_path):
    value = json5.loads(state.config_path.read_text())
    value["hooks"]["internal"]["entries"]["memory-index-inject"] = {"enabled": False}
    value["hooks"]["internal"]["entries"]["session-summary"] = {"enabled": True}
    write_json5_config(state.config_path, value)

    result = uninstall_hooks(context(state, tmp_path), dry_run=False)

    assert result.data["disabled_by"] == "config"
    assert json5.loads(state.config_path.read_text())["hooks"] == {
        "internal": {"enabled": True, "entries": {"oc-probe": {"enabled": True}}}
    }
    assert any("no record of the install" in line for line in result.lines)


def test_uninstall_dry_run_changes_nothing(state, tmp_path, isolated_env):
    install_hooks(context(state, tmp_path), dry_run=False)
    before = listing(state.state_dir)

    result = uninstall_hooks(context(state, tmp_path), dry_run=True)

    assert listing(state.state_dir) == before
    assert (storage(isolated_env) / "install" / "hooks.json").exists()
    assert f"hooks: would restore {state.config_path} as it was before the install" in (
        result.lines
    )


def test_uninstall_leaves_a_folder_that_is_not_memwardens(state, tmp_path):
    foreign = state.state_dir / "hooks" / "session-summary"
    foreign.mkdir(parents=True)
    (foreign / "HOOK.md").write_text("---\nname: session-summary\n---\nsomeone else's\n")

    result = uninstall_hooks(context(state, tmp_path), dry_run=False)

    assert foreign.is_dir()
    assert result.exit_code == 1
    assert any("not memwarden's session-summary hook" in line for line in result.problems)


@pytest.mark.parametrize("kind", ["their own hook", "a symlink"])
def test_install_refuses_a_hook_folder_that_is_not_memwardens_and_writes_nothing(
    state, tmp_path, isolated_env, kind
):
    hooks = state.state_dir / "hooks"
    theirs = tmp_path / "their-hook"
    theirs.mkdir()
    (theirs / "HOOK.md").write_text("---\nname: session-summary\ndescription: mine\n---\n")
    (theirs / "handler.js").write_text("export default async () => {};\n")
    (theirs / "data.json").write_text('{"important": 1}\n')
    hooks.mkdir()
    if kind == "a symlink":
        (hooks / "session-summary").symlink_to(theirs)
    else:
        theirs.rename(hooks / "session-summary")
    before = listing(state.state_dir)

    with pytest.raises(UsageError, match=r"move or rename it.*nothing was changed"):
        install_hooks(context(state, tmp_path), dry_run=False)

    assert listing(state.state_dir) == before
    assert not (storage(isolated_env) / "install" / "hooks.json").exists()
    result = uninstall_hooks(context(state, tmp_path), dry_run=False)  # and it stays there
    assert listing(state.state_dir) == before
    assert result.exit_code == 1
    assert any("not memwarden's session-summary hook" in line for line in result.problems)


def test_install_keeps_a_copy_of_a_hook_file_edited_since_and_says_so(
    state, tmp_path, isolated_env
):
    install_hooks(context(state, tmp_path), dry_run=False)
    handler = state.state_dir / "hooks" / "session-summary" / "handler.js"
    edited = handler.read_bytes() + b"// my tweak\n"
    handler.write_bytes(edited)

    result = install_hooks(context(state, tmp_path), dry_run=False)

    assert result.exit_code == 1
    assert handler.read_bytes() == (REPO_HOOKS / "session-summary" / "handler.js").read_bytes()
    (kept,) = (storage(isolated_env) / "hook-backups").glob("*-session-summary/handler.js")
    assert kept.read_bytes() == edited
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert result.problems == [
        f"{handler.parent}: handler.js changed since memwarden installed it; replaced, "
        f"kept a copy in {kept.parent}"
    ]
    assert install_hooks(context(state, tmp_path), dry_run=False).exit_code == 0


def test_install_over_hooks_of_an_install_without_hashes_keeps_what_it_replaces(
    state, tmp_path, isolated_env
):
    install_hooks(context(state, tmp_path), dry_run=False)
    record = storage(isolated_env) / "install" / "hooks.json"
    data = orjson.loads(record.read_bytes())
    del data["files"]  # as an earlier memwarden wrote it
    record.write_bytes(orjson.dumps(data))
    handler = state.state_dir / "hooks" / "memory-index-inject" / "handler.js"
    older = b"// an earlier memwarden's handler\n"
    handler.write_bytes(older)

    result = install_hooks(context(state, tmp_path), dry_run=False)

    assert result.exit_code == 0, result.problems
    (kept,) = (storage(isolated_env) / "hook-backups").glob("*-memory-index-inject/handler.js")
    assert kept.read_bytes() == older
    assert any("kept a copy in" in line and "(handler.js)" in line for line in result.lines)
    assert "memory-index-inject/handler.js" in orjson.loads(record.read_bytes())["files"]


def test_uninstall_keeps_an_edited_hook_file_and_files_not_memwardens_unless_forced(
    state, tmp_path
):
    install_hooks(context(state, tmp_path), dry_run=False)
    folder = state.state_dir / "hooks" / "session-summary"
    (folder / "handler.js").write_text("// mine now\n")
    (folder / "notes.txt").write_text("the operator's\n")

    kept = uninstall_hooks(context(state, tmp_path), dry_run=False)

    assert kept.exit_code == 1
    names = ["HOOK.md", "handler.js", "memwarden.json", "notes.txt"]
    assert sorted(path.name for path in folder.iterdir()) == names  # the hook, whole
    assert kept.problems == [
        f"{folder}: handler.js changed since memwarden installed it; the hook is kept "
        "(`memwarden uninstall hooks --force` removes memwarden's files)"
    ]
    assert not (state.state_dir / "hooks" / "memory-index-inject").exists()

    forced = uninstall_hooks(context(state, tmp_path), dry_run=False, force=True)

    assert forced.exit_code == 0, forced.problems
    assert sorted(path.name for path in folder.iterdir()) == ["notes.txt"]  # never theirs
    assert (
        f"hook session-summary: removed HOOK.md, handler.js, memwarden.json from {folder}; "
        "kept notes.txt: not memwarden's"
    ) in forced.lines
    again = uninstall_hooks(context(state, tmp_path), dry_run=False)
    assert again.exit_code == 0, again.problems


def test_install_hooks_command_line(capsys, state, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setenv(
        "MEMWARDEN_INSTALL_EXECUTABLE", str(executable(tmp_path / "bin", "memwarden"))
    )

    result = run_cli(capsys, "--state-dir", state.state_dir, "install", "hooks", "--json")

    assert result.exit_code == 0, result.stderr
    assert result.json()["enabled_by"] == "config"
    assert entries(state)["memory-index-inject"] == {"enabled": True}
