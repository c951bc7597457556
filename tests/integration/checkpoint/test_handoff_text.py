"""What the handoff a checkpoint writes tells the model: the context size after a reset, and what
a small budget left out (never "None" for a section whose items did not fit)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import orjson
import pytest

from memwarden.openclaw.bootstrap import js_length
from memwarden.process.runtime import JobContext
from support.cli import run_cli
from support.transcripts import START, transcript_lines, write_jsonl

SESSION = "0a0a0a0a-0000-4000-8000-000000000003"
RESET = {"type": "reset", "id": "r1", "parentId": None, "timestamp": "2026-11-22T06:00:00Z"}


@pytest.fixture(autouse=True)
def quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(JobContext, "now", lambda self: START + timedelta(hours=1))
    monkeypatch.setenv("MEMWARDEN_HISTORY_ENABLED", "false")


def build(root: Path, lines: list[dict], entry: dict) -> tuple[Path, Path]:
    """Write a file-era agent `main` whose main session has `lines` and store `entry`; return
    (state dir, workspace)."""
    state, workspace = root / "state", root / "workspace"
    workspace.mkdir(parents=True)
    sessions = state / "agents" / "main" / "sessions"
    write_jsonl(sessions / f"{SESSION}.jsonl", lines)
    store = {"agent:main:main": {"sessionId": SESSION, "updatedAt": 1, **entry}}
    (sessions / "sessions.json").write_bytes(orjson.dumps(store))
    config = {"agents": {"list": [{"id": "main", "workspace": str(workspace)}]}}
    (state / "openclaw.json").write_bytes(orjson.dumps(config))
    return state, workspace


def with_texts(lines: list[dict], texts: list[str]) -> list[dict]:
    """Return the lines with the user messages' texts replaced by `texts`, in order."""
    users = iter(texts)
    for line in lines:
        if line.get("message", {}).get("role") == "user":
            line["message"]["content"] = next(users, line["message"]["content"])
    return lines


def test_handoff_after_a_reset_says_the_gateways_zero_not_the_prompt_before_it(tmp_path, capsys):
    # The gateway writes 0, fresh, on reset; the transcript's last prompt (1,234) is before it.
    lines = list(transcript_lines(3, session_id=SESSION))
    lines.append(RESET)
    entry = {"totalTokens": 0, "totalTokensFresh": True, "contextTokens": 32_000}
    state, workspace = build(tmp_path, lines, entry)

    result = run_cli(capsys, "checkpoint", "--state-dir", state)

    assert result.exit_code == 0, result.stderr
    handoff = (workspace / "memory" / "ACTIVE_CONTEXT.md").read_text()
    assert "> - context size: 0 of 32,000 tokens (0%)" in handoff
    assert ": the gateway's count, fresh\n" in handoff
    assert "1,234" not in handoff


def test_handoff_after_a_reset_without_a_gateway_count_says_none_since_the_reset(tmp_path, capsys):
    lines = list(transcript_lines(3, session_id=SESSION))
    lines.append(RESET)
    state, workspace = build(tmp_path, lines, {"contextTokens": 32_000})

    assert run_cli(capsys, "checkpoint", "--state-dir", state).exit_code == 0

    handoff = (workspace / "memory" / "ACTIVE_CONTEXT.md").read_text()
    assert (
        "> - context size: 0 of 32,000 tokens (0%) as of 2026-11-22T06:00+00:00: none since the "
        "reset in the transcript (the gateway's count is missing)\n"
    ) in handoff


def test_small_budget_says_the_marked_items_were_left_out_and_which_limit_applied(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("MEMWARDEN_CHECKPOINT_HANDOFF_MAX_CHARS", "2000")
    decisions = [f"[DECISION] decision {n} " + "d" * 250 for n in range(7)]
    later = [f"- [ ] task {n} in src/module_{n}.py " + "t" * 120 for n in range(5)]
    lines = with_texts(list(transcript_lines(12, session_id=SESSION)), decisions + later)
    state, workspace = build(tmp_path, lines, {})

    result = run_cli(capsys, "--json", "checkpoint", "--state-dir", state)

    assert result.exit_code == 0, result.stderr
    text = (workspace / "memory" / "ACTIVE_CONTEXT.md").read_text()
    marked = text.split("## Marked Items\n", 1)[1].split("\n## ", 1)[0]
    assert marked == "_All 7 left out to fit this file's budget, not none: see Left Out below._\n"
    assert "budget of 2,000 characters (the limit set by checkpoint.handoff_max_chars)" in text
    assert "oldest items" in text.split("## Left Out\n", 1)[1]
    [session] = result.json()["agents"]
    assert session["counts"]["handoff_chars"] == js_length(text)  # the file as written
    assert session["counts"]["handoff_budget"] == 2000
