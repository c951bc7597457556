"""A run stopped part way keeps what it did: no daily-log entry is appended twice on the rerun."""

from __future__ import annotations

import sys
from pathlib import Path

import memwarden.checkpoint.run.agents as agents_module
import memwarden.checkpoint.run.job as job_module
from support.cli import run_cli

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))
import sample_deployment


def entries(workspace: Path) -> int:
    logs = workspace / "memory"
    return sum(path.read_text().count("· checkpoint ·") for path in logs.glob("20??-??-??.md"))


def test_checkpoint_interrupted_after_first_agent_rerun_adds_no_duplicate(
    tmp_path, capsys, monkeypatch
):
    sample = sample_deployment.build(tmp_path / "demo")
    monkeypatch.setenv("MEMWARDEN_HISTORY_ENABLED", "false")
    monkeypatch.setenv("MEMWARDEN_CHECKPOINT_MIN_MESSAGES", "2")
    monkeypatch.setenv("MEMWARDEN_CHECKPOINT_SESSIONS", "main")
    real = agents_module.checkpoint_agent

    def killed_at_second_agent(state, agent, *, force):
        if agent.id == "legacy":
            raise KeyboardInterrupt
        return real(state, agent, force=force)

    monkeypatch.setattr(job_module, "checkpoint_agent", killed_at_second_agent)
    first = run_cli(capsys, "--state-dir", sample.state_dir, "checkpoint")
    assert first.exit_code == 130
    assert entries(sample.workspaces["main"]) == 1

    monkeypatch.setattr(job_module, "checkpoint_agent", real)
    second = run_cli(capsys, "--state-dir", sample.state_dir, "checkpoint")
    assert second.exit_code == 0, second.stderr
    assert entries(sample.workspaces["main"]) == 1
    assert entries(sample.workspaces["legacy"]) == 1
