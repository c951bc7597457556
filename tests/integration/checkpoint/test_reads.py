"""What a checkpoint run reads: each agent's session store once, shared with the compaction
watch that follows it."""

from __future__ import annotations

from collections import Counter

import pytest

import memwarden.openclaw.sessions as sessions_module
from support.cli import run_cli
from support.deployments import make_file_era_state, make_sqlite_era_state


@pytest.mark.parametrize("make_state", [make_sqlite_era_state, make_file_era_state])
def test_checkpoint_reads_each_session_store_once(tmp_path, capsys, monkeypatch, make_state):
    monkeypatch.setenv("MEMWARDEN_HISTORY_ENABLED", "false")
    state = make_state(tmp_path)
    reads: Counter[str] = Counter()
    load = sessions_module.load_sessions

    def counted(agent, *arguments, **options):
        reads[agent.id] += 1
        return load(agent, *arguments, **options)

    monkeypatch.setattr(sessions_module, "load_sessions", counted)

    result = run_cli(capsys, "--state-dir", state.state_dir, "checkpoint", "--json")

    assert result.exit_code == 0, result.stderr
    assert result.json()["compactions"]["sessions"] >= 1  # the watch looked at them
    assert reads == {"main": 1}
