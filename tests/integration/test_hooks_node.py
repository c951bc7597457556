"""The hooks' JavaScript: Node's own test runner, and the index → manifest → hook contract."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from support.cli import run_cli
from support.deployments import make_sqlite_era_state

REPO = Path(__file__).resolve().parents[2]
NODE = shutil.which("node")


def node_major() -> int:
    if NODE is None:
        return 0
    version = subprocess.run(
        [NODE, "--version"], capture_output=True, text=True, check=False, timeout=30
    ).stdout
    return int(version.lstrip("v").split(".")[0] or 0)


pytestmark = pytest.mark.skipif(node_major() < 20, reason="node ≥ 20 is not installed")


def test_hooks_node_test_runner_passes():
    # The files are named (not `hooks/`): Node 21+ reads the arguments as globs, not folders.
    tests = sorted(str(path.relative_to(REPO)) for path in REPO.glob("hooks/test/*.test.mjs"))
    assert len(tests) == 2
    completed = subprocess.run(
        [NODE, "--test", *tests],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-2000:]
    assert "# fail 0" in completed.stdout


INJECT = """
const [handlerPath, workspace] = process.argv.slice(1);
const { default: handler } = await import(handlerPath);
const event = {
  type: "agent", action: "bootstrap", sessionKey: "agent:main:main", timestamp: new Date(),
  context: { workspaceDir: workspace, sessionKey: "agent:main:main", agentId: "main",
             bootstrapFiles: [{ name: "AGENTS.md", path: workspace + "/AGENTS.md",
                                content: "agents", missing: false }] },
  messages: [],
};
await handler(event);
process.stdout.write(JSON.stringify(event.context.bootstrapFiles));
"""


def test_index_manifest_is_what_the_bootstrap_hook_injects(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMWARDEN_INDEX_THRESHOLD_KB", "0")
    state = make_sqlite_era_state(tmp_path)
    memory = state.workspace / "memory"
    memory.mkdir()
    (memory / "ACTIVE_CONTEXT.md").write_text("# Active context\nworking on the hook\n")
    (memory / "2026-11-22.md").write_text("# Today\n[DECISION] ship it\n")
    assert run_cli(capsys, "--state-dir", state.state_dir, "index").exit_code == 0

    completed = subprocess.run(
        [
            NODE,
            "--input-type=module",
            "-e",
            INJECT,
            str(REPO / "hooks" / "memory-index-inject" / "handler.js"),
            str(state.workspace),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert completed.returncode == 0, completed.stderr
    files = json.loads(completed.stdout)
    assert [file["name"] for file in files] == [
        "AGENTS.md",
        "memory/INDEX.md",
        "memory/ACTIVE_CONTEXT.md",
    ]
    assert files[1]["content"] == (memory / "INDEX.md").read_text()
    assert files[1]["path"] == str(memory / "INDEX.md")
    assert files[2]["content"] == "# Active context\nworking on the hook\n"
    assert all(file["missing"] is False for file in files)
