"""The hooks' JavaScript: Node's own test runner, and the index → manifest → hook contract."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from memwarden.agent_memory.handoff_files import handoff_name
from support.bootstrap_hook import bootstrap_files
from support.cli import run_cli
from support.deployments import make_sqlite_era_state

REPO = Path(__file__).resolve().parents[3]
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


def test_index_manifest_is_what_the_bootstrap_hook_injects(
    capsys, tmp_path, monkeypatch, fixture_clock
):
    monkeypatch.setenv("MEMWARDEN_INDEX_THRESHOLD_KB", "0")
    state = make_sqlite_era_state(tmp_path)
    memory = state.workspace / "memory"
    memory.mkdir()
    (memory / "2026-11-22.md").write_text("# Today\n[DECISION] ship it\n")
    assert run_cli(capsys, "--state-dir", state.state_dir, "checkpoint").exit_code == 0
    assert run_cli(capsys, "--state-dir", state.state_dir, "index").exit_code == 0

    files = bootstrap_files(state.workspace, "agent:main:main")

    assert [file["name"] for file in files] == [
        "AGENTS.md",
        "memory/ACTIVE_CONTEXT.md",
        "memory/INDEX.md",
    ]
    assert files[1]["content"] == (memory / "ACTIVE_CONTEXT.md").read_text()
    assert "> - session: `agent:main:main`" in files[1]["content"]
    assert files[2]["content"] == (memory / "INDEX.md").read_text()
    assert files[2]["path"] == str(memory / "INDEX.md")
    assert all(file["missing"] is False for file in files)


def test_checkpoint_alone_each_conversation_gets_its_own_handoff_and_no_other(
    capsys, tmp_path, fixture_clock
):
    state = make_sqlite_era_state(tmp_path)  # an empty memory folder, default settings
    assert run_cli(capsys, "--state-dir", state.state_dir, "checkpoint").exit_code == 0
    assert not (state.workspace / "memory" / "INDEX.md").exists()

    main = bootstrap_files(state.workspace, "agent:main:main")
    rpc = bootstrap_files(state.workspace, "agent:main:agentrpc")
    stranger = bootstrap_files(state.workspace, "agent:main:telegram:direct:4242")

    assert [file["name"] for file in main] == ["AGENTS.md", "memory/ACTIVE_CONTEXT.md"]
    assert "second message after reset" in main[1]["content"]
    assert [file["name"] for file in rpc] == ["AGENTS.md", "memory/sessions/main.agentrpc.md"]
    assert "via agent rpc" in rpc[1]["content"]
    assert "second message after reset" not in rpc[1]["content"]
    assert [file["name"] for file in stranger] == ["AGENTS.md"]


def test_index_manifest_active_context_of_main_is_not_injected_into_a_dm(
    capsys, tmp_path, monkeypatch
):
    monkeypatch.setenv("MEMWARDEN_INDEX_THRESHOLD_KB", "0")
    state = make_sqlite_era_state(tmp_path)
    assert run_cli(capsys, "--state-dir", state.state_dir, "checkpoint").exit_code == 0
    assert run_cli(capsys, "--state-dir", state.state_dir, "index").exit_code == 0

    files = bootstrap_files(state.workspace, "agent:main:telegram:direct:4242")

    assert [file["name"] for file in files] == ["AGENTS.md", "memory/INDEX.md"]


def peer_handoff(memory: Path, session_key: str, words: str) -> None:
    """Write a direct chat's handoff where checkpoint writes it, naming its session."""
    path = memory / handoff_name(session_key)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"# Conversation Handoff — agent main, direct chat\n\n> - session: `{session_key}`\n\n"
        f"{words}\n",
        encoding="utf-8",
    )


def test_index_a_peers_bootstrap_holds_nothing_of_another_peer(capsys, tmp_path, monkeypatch):
    """INDEX.md goes to every session: it never names nor counts a conversation's handoff."""
    monkeypatch.setenv("MEMWARDEN_INDEX_THRESHOLD_KB", "0")
    state = make_sqlite_era_state(tmp_path)
    memory = state.workspace / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text("# Long-term memory\n\n[FACT] prod is eu-west\n")
    mine = "agent:main:whatsapp:direct:+4917600000000@s.whatsapp.net"
    other = "agent:main:whatsapp:direct:+4917612345678@s.whatsapp.net"
    peer_handoff(memory, mine, "Talking with the first peer.")
    peer_handoff(memory, other, "[PREFERENCE] tea [PREFERENCE] quiet [TODO] call back")
    assert run_cli(capsys, "--state-dir", state.state_dir, "checkpoint").exit_code == 0
    assert run_cli(capsys, "--state-dir", state.state_dir, "index").exit_code == 0

    files = bootstrap_files(state.workspace, mine)

    assert [file["name"] for file in files] == [
        "AGENTS.md",
        f"memory/{handoff_name(mine)}",
        "memory/INDEX.md",
    ]
    injected = "\n".join(file["content"] for file in files)
    assert "4917612345678" not in injected
    assert "Talking with the first peer." in files[1]["content"]
    index_text = files[2]["content"]
    assert "| MEMORY.md |" in index_text
    assert "| sessions/" not in index_text and "| ACTIVE_CONTEXT.md |" not in index_text
    assert "4917600000000" not in index_text
    assert "[PREFERENCE] 0" in index_text and "[TODO] 0" in index_text
