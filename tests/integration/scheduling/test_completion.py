"""Shell completion: generated from the parser, installed where each shell looks, removed again."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from memwarden.cli import build_parser
from memwarden.jobs import JOBS
from memwarden.scheduling.completion import SHELLS, locations, script
from support.cli import run_cli

PARSER = build_parser([], every_command=True)[0]


def _bash_complete(script_path, *words: str) -> list[str]:
    """Ask the generated bash function for the completions of `memwarden words...`."""
    array = " ".join(f'"{word}"' for word in ("memwarden", *words))
    program = (
        f"source {script_path}; COMP_WORDS=({array}); COMP_CWORD={len(words)}; "
        'COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}; _shtab_memwarden; '
        'printf "%s\\n" "${COMPREPLY[@]}"'
    )
    completed = subprocess.run(
        ["bash", "-c", program], capture_output=True, text=True, check=True, timeout=30
    )
    return completed.stdout.split()


@pytest.fixture(scope="module")
def bash_script(tmp_path_factory):
    path = tmp_path_factory.mktemp("completion") / "memwarden.bash"
    path.write_text(script("bash", PARSER))
    return path


def test_bash_completes_every_command(bash_script):
    offered = _bash_complete(bash_script, "")
    assert sorted(spec.name for spec in JOBS) == sorted(
        word for word in offered if not word.startswith("-")
    )


def test_bash_completes_verbs_and_their_options(bash_script):
    assert {"list", "show", "diff", "snapshot", "rewind", "prune"} <= set(
        _bash_complete(bash_script, "history", "")
    )
    assert {"--path", "--dry-run", "--json"} <= set(
        _bash_complete(bash_script, "history", "rewind", "--")
    )
    assert "hooks" in _bash_complete(bash_script, "install", "")


@pytest.mark.parametrize(
    ("shell", "check"), [("zsh", ["zsh", "-n"]), ("fish", ["fish", "--no-execute"])]
)
def test_zsh_and_fish_scripts_parse(tmp_path, shell, check):
    if shutil.which(check[0]) is None:
        pytest.skip(f"{shell} is not installed")
    path = tmp_path / f"memwarden.{shell}"
    path.write_text(script(shell, PARSER))
    subprocess.run([*check, str(path)], check=True, capture_output=True, timeout=30)


def test_completion_command_prints_the_script(capsys):
    result = run_cli(capsys, "completion", "fish")
    assert result.exit_code == 0
    assert "memwarden shell completion (fish)" in result.stdout
    assert "complete -c memwarden" in result.stdout


def _env(tmp_path, shells):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for shell in shells:
        (bin_dir / shell).write_text("#!/bin/sh\n")
        (bin_dir / shell).chmod(0o755)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {"HOME": str(home), "PATH": str(bin_dir), "SHELL": "/bin/sh"}


def test_install_completion_writes_each_present_shell_and_uninstall_removes_them(
    capsys, tmp_path, monkeypatch
):
    env = _env(tmp_path, ["bash", "fish"])
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("MEMWARDEN_GENERAL_STORAGE_DIR", str(tmp_path / "storage"))
    home = tmp_path / "home"
    bash_file = home / ".local/share/bash-completion/completions/memwarden"
    fish_file = home / ".config/fish/completions/memwarden.fish"
    zsh_file = home / ".local/share/zsh/site-functions/_memwarden"

    dry = run_cli(capsys, "install", "completion", "--dry-run")
    assert dry.exit_code == 0
    assert not (home / ".local").exists() and not (home / ".config").exists()

    result = run_cli(capsys, "install", "completion")
    assert result.exit_code == 0, result.stderr
    assert bash_file.read_text() == script("bash", PARSER)
    assert fish_file.read_text() == script("fish", PARSER)
    assert not zsh_file.exists()

    foreign = home / ".local/share/zsh/site-functions/_memwarden"
    foreign.parent.mkdir(parents=True)
    foreign.write_text("#compdef memwarden\n# the operator's own\n")
    removed = run_cli(capsys, "uninstall", "completion")
    assert removed.exit_code == 0
    assert not bash_file.exists() and not fish_file.exists()
    assert foreign.read_text() == "#compdef memwarden\n# the operator's own\n"
    assert f"kept {foreign}" in removed.stdout


def test_locations_ignore_relative_xdg_folders():
    env = {"HOME": "/home/a", "XDG_DATA_HOME": "share", "XDG_CONFIG_HOME": "/cfg"}
    paths = {location.shell: str(location.path) for location in locations(env)}
    assert paths == {
        "bash": "/home/a/.local/share/bash-completion/completions/memwarden",
        "zsh": "/home/a/.local/share/zsh/site-functions/_memwarden",
        "fish": "/cfg/fish/completions/memwarden.fish",
    }


def test_every_shell_has_a_script():
    for shell in SHELLS:
        assert f"memwarden shell completion ({shell})" in script(shell, PARSER)


def test_fish_completes_commands_and_verbs(tmp_path):
    if shutil.which("fish") is None:
        pytest.skip("fish is not installed")
    path = tmp_path / "memwarden.fish"
    path.write_text(script("fish", PARSER))
    program = f'source {path}; complete -C"memwarden hist"; complete -C"memwarden history re"'
    completed = subprocess.run(
        ["fish", "--no-config", "-c", program],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    offered = [line.split("\t")[0] for line in completed.stdout.splitlines()]
    assert offered == ["history", "rewind"]
