"""`memwarden rotate` against the real gateway (2026.9.6 resets in place, 2026.7.35 moves the key
to a new session id): the main session over the threshold is checkpointed and reset, the cron
session over the threshold is left alone, and the lineage is recorded.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from memwarden.store.state import StateDB
from support.cli import run_subprocess
from support.lineage import last_rotations

pytestmark = pytest.mark.e2e

MAIN = "agent:main:main"
OVER_THRESHOLD = 170_000  # the default limit is min(150,000, 75% of the 200,000 window)


def memwarden_env(gateway, tmp_path: Path, leave_alone: list[str]) -> dict[str, str]:
    """The environment of a memwarden run against `gateway`, its own state kept in `tmp_path`.

    The token comes from `OPENCLAW_GATEWAY_TOKEN` (as an operator would set it). Sessions other
    tests left on the shared gateway are marked as automation, so this test resets only its own.
    """
    env = dict(gateway.env)
    env.update(
        XDG_STATE_HOME=str(tmp_path / "xdg-state"),
        XDG_CONFIG_HOME=str(tmp_path / "xdg-config"),
        OPENCLAW_GATEWAY_TOKEN=gateway.token,
        MEMWARDEN_ROTATE_QUIET_SECONDS="0",  # the turns just happened
        MEMWARDEN_ROTATE_AUTOMATION_PATTERNS=json.dumps(leave_alone),
    )
    return env


def test_rotate_resets_main_over_threshold_and_leaves_cron(gateway, tmp_path):
    cron = f"agent:main:cron:e2e-{uuid.uuid4().hex[:8]}"
    marker = f"the heron is {uuid.uuid4().hex[:6]}"
    gateway.llm.prompt_tokens = OVER_THRESHOLD
    gateway.agent_turn(f"Please remember this: {marker}.")
    gateway.agent_turn("And plan the migration for Tuesday.")  # enough turns to checkpoint
    gateway.agent_turn("Nightly report run.", session_key=cron)
    before = {row["key"]: row for row in gateway.sessions()}
    assert before[MAIN]["totalTokens"] == before[cron]["totalTokens"] == OVER_THRESHOLD
    others = [key for key in before if key not in (MAIN, cron)]

    env = memwarden_env(gateway, tmp_path, others)
    result = run_subprocess(
        "--state-dir", gateway.state_dir, "rotate", "--json", env=env, timeout=120
    )

    assert result.exit_code == 0, result.stderr
    decided = {item["key"]: item for item in result.json()["sessions"]}
    assert decided[MAIN]["status"] == "rotated", decided[MAIN]
    assert (decided[cron]["status"], decided[cron]["check"]) == ("skipped", "automation")

    after = {row["key"]: row for row in gateway.sessions()}
    assert after[MAIN]["totalTokens"] == 0
    if gateway.file_era:
        assert after[MAIN]["sessionId"] != before[MAIN]["sessionId"]
    else:
        assert after[MAIN]["sessionId"] == before[MAIN]["sessionId"]
    assert after[cron]["sessionId"] == before[cron]["sessionId"]
    assert after[cron]["totalTokens"] == OVER_THRESHOLD

    active_context = gateway.workspace / "memory" / "ACTIVE_CONTEXT.md"
    assert marker in active_context.read_text()
    # The next checkpoint run finds the reset and keeps the pre-reset conversation as handoff.
    checkpoint = run_subprocess("--state-dir", gateway.state_dir, "checkpoint", env=env)
    assert checkpoint.exit_code == 0, checkpoint.stderr
    assert marker in active_context.read_text()

    (lineage,) = last_rotations(StateDB(tmp_path / "xdg-state" / "memwarden" / "state.db"))
    assert (lineage.session_key, lineage.outcome, lineage.tokens) == (MAIN, "rotated", 170_000)
    assert lineage.old_session_id == before[MAIN]["sessionId"]
    assert lineage.new_session_id == after[MAIN]["sessionId"]

    # A fresh window: the model no longer sees the conversation from before the reset.
    gateway.llm.prompt_tokens = 2_000
    seen_before = len(gateway.llm.requests)
    gateway.agent_turn("What did I ask you to remember?")
    prompt = json.dumps(gateway.llm.requests[seen_before:])
    assert "What did I ask you to remember?" in prompt
    assert marker not in prompt
