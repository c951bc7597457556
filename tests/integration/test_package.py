"""The package as operators install it: sdist and wheel built in isolation, the wheel installed
alone in a fresh virtual environment (as pipx does), its command run from there."""

from __future__ import annotations

import email
import json
import os
import re
import subprocess
import sys
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

import memwarden
from support.deployments import make_sqlite_era_state

ROOT = Path(__file__).resolve().parents[2]


def test_the_version_is_written_once_and_the_changelog_has_it():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "version" not in project
    assert project["dynamic"] == ["version"]
    changelog = (ROOT / "CHANGELOG.md").read_text()
    versions = re.findall(r"^## \[([^\]]+)\]", changelog, flags=re.MULTILINE)
    released = [version for version in versions if version != "Unreleased"]
    assert released[0] == memwarden.__version__


def test_the_licence_file_matches_the_declared_licence():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT"
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Build the sdist, then the wheel from it (python -m build), and install the wheel alone."""
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    wheel = next(out.glob("memwarden-*.whl"))
    sdist = next(out.glob("memwarden-*.tar.gz"))
    environment = tmp_path_factory.mktemp("venv") / "memwarden"
    venv.create(environment, with_pip=True)
    subprocess.run(
        [environment / "bin" / "python", "-m", "pip", "install", "-q", str(wheel)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    return wheel, sdist, environment


def _installed(environment: Path, *arguments: str, env: dict[str, str]):
    return subprocess.run(
        [environment / "bin" / "memwarden", *arguments],
        capture_output=True,
        text=True,
        env=env,
        cwd=environment,
        timeout=120,
        check=False,
    )


@pytest.fixture
def clean_env(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    return {"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}


@pytest.mark.timeout(900)
def test_the_wheel_carries_metadata_hooks_and_docs(built):
    wheel, sdist, _ = built
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata_name = next(name for name in names if name.endswith(".dist-info/METADATA"))
        metadata = email.message_from_bytes(archive.read(metadata_name))
    assert metadata["Version"] == memwarden.__version__
    assert metadata["License-Expression"] == "MIT"
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)
    assert "Operating System :: POSIX :: Linux" in metadata.get_all("Classifier")
    data = f"memwarden-{memwarden.__version__}.data/data/share/"
    for shipped in (
        "memwarden/hooks/memory-index-inject/handler.js",
        "memwarden/hooks/session-summary/HOOK.md",
        "doc/memwarden/CHANGELOG.md",
        "doc/memwarden/docs/install.md",
        "doc/memwarden/memwarden.example.toml",
        "memwarden/prometheus/memwarden.rules.yml",
        "memwarden/prometheus/tests/memwarden.rules.test.yml",
        "memwarden/grafana/memwarden-fleet.json",
        "memwarden/grafana/memwarden-gateway.json",
    ):
        assert data + shipped in names, shipped
    assert sdist.name == f"memwarden-{memwarden.__version__}.tar.gz"


@pytest.mark.timeout(900)
def test_the_installed_wheel_runs_alone(built, clean_env, tmp_path):
    _, _, environment = built
    version = _installed(environment, "--version", env=clean_env)
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == f"memwarden {memwarden.__version__}"

    help_text = _installed(environment, "checkpoint", "--help", env=clean_env).stdout
    docs = environment / "share" / "doc" / "memwarden" / "docs"
    assert help_text.rstrip().endswith(f"docs: {docs}")
    assert (docs / "install.md").is_file()

    state = make_sqlite_era_state(tmp_path)
    env = {**clean_env, "OPENCLAW_STATE_DIR": str(state.state_dir)}
    dry = _installed(environment, "install", "hooks", "--dry-run", env=env)
    assert dry.returncode == 0, dry.stderr
    assert not (state.state_dir / "hooks").exists()
    hooks = _installed(environment, "--json", "install", "hooks", env=env)
    assert hooks.returncode == 0, hooks.stderr
    assert json.loads(hooks.stdout)["executable"] == str(environment / "bin" / "memwarden")
    installed = state.state_dir / "hooks" / "memory-index-inject" / "handler.js"
    shipped = environment / "share" / "memwarden" / "hooks" / "memory-index-inject" / "handler.js"
    assert installed.read_bytes() == shipped.read_bytes()


@pytest.mark.timeout(900)
def test_the_installed_wheel_installs_shell_completion(built, clean_env, tmp_path):
    _, _, environment = built
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "bash").symlink_to("/bin/bash")
    env = {**clean_env, "PATH": f"{bin_dir}:{os.defpath}", "SHELL": "/bin/bash"}
    result = _installed(environment, "install", "completion", env=env)
    assert result.returncode == 0, result.stderr
    script = Path(clean_env["HOME"]) / ".local/share/bash-completion/completions/memwarden"
    assert "memwarden shell completion (bash)" in script.read_text()
    completed = subprocess.run(
        ["bash", "-c", f"source {script} && complete -p memwarden"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        timeout=30,
    )
    assert "_shtab_memwarden" in completed.stdout
