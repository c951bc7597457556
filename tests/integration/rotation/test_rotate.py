"""`memwarden rotate` end to end in-process: real state dirs, the gateway simulator, real SQLite.

The simulator is seeded from copies of the real captures and changes them on reset as each
gateway version does (2026.9.6 in place, 2026.7.35 new id + archived file); the checkpoint that
runs before each reset is the real one.
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager

import orjson
import pytest

from memwarden.settings.config import load, storage_location
from memwarden.store.state import StateDB
from support.cli import run_cli, run_subprocess
from support.deployments import make_file_era_state, make_generated_fleet, make_sqlite_era_state
from support.gateway_sim import GatewaySimulator
from support.lineage import last_rotations
from support.transcripts import user_text, write_jsonl_transcript

MAIN = "agent:main:main"
CRON = "agent:main:cron:nightly"
SQLITE_MAIN_ID = "b5974d71-c717-4e69-b2ad-af312d36f9f1"
FILE_MAIN_ID = "f02065fb-f8d4-455b-b680-d2e5c4e5cf9b"
SECOND = "agent:main:fixture"  # file era; shares its session with agent:main:hot
SECOND_ID = "33333333-2222-4333-8444-555555555555"
OVER = {"totalTokens": 160_000, "totalTokensFresh": True, "contextTokens": 200_000}


@contextmanager
def gateway_for(state, monkeypatch):
    """Serve `state` through the simulator, with memwarden pointed at it through the env."""
    with GatewaySimulator.from_state_dir(state.state_dir) as sim:
        monkeypatch.setenv("MEMWARDEN_GATEWAY_URL", sim.url)
        monkeypatch.setenv("MEMWARDEN_GATEWAY_TOKEN", sim.token)
        yield sim


@pytest.fixture
def sqlite_state(tmp_path):
    return make_sqlite_era_state(tmp_path)


@pytest.fixture
def file_state(tmp_path):
    """The 2026.7.35 capture, its main and fixture sessions given conversations of three turns."""
    state = make_file_era_state(tmp_path)
    for session_id in (FILE_MAIN_ID, SECOND_ID):
        write_jsonl_transcript(state.sessions_dir / f"{session_id}.jsonl", 3, session_id=session_id)
    return state


def rotate(capsys, state, *arguments):
    return run_cli(capsys, "--state-dir", state.state_dir, "rotate", "--json", *arguments)


def by_key(result):
    return {item["key"]: item for item in result.json()["sessions"]}


def rotated_main_held_back(capsys, state, monkeypatch):
    """Rotate `state` with its main session over the threshold; check that the rotation failed
    (exit 1) without a reset, as the next turn would start without its handoff; return the
    result and the main session's item."""
    with gateway_for(state, monkeypatch) as sim:
        sim.set_row(MAIN, **OVER)
        result = rotate(capsys, state)
        resets = sim.calls("sessions.reset")
    assert result.exit_code == 1
    assert resets == []
    item = by_key(result)[MAIN]
    assert item["status"] == "failed"
    return result, item


def state_db():
    return StateDB(storage_location(load(), os.environ)[0] / "state.db")


def active_context(state):
    return (state.workspace / "memory" / "ACTIVE_CONTEXT.md").read_text()


def test_rotate_sqlite_era_resets_main_in_place_and_leaves_cron(capsys, sqlite_state, monkeypatch):
    with gateway_for(sqlite_state, monkeypatch) as sim:
        sim.set_row(MAIN, **OVER)
        sim.set_row(CRON, totalTokens=900_000)
        result = rotate(capsys, sqlite_state)
        main_after = sim.row(MAIN)
        # The next timer run of checkpoint, in its own process as in production.
        checkpoint = run_subprocess("--state-dir", sqlite_state.state_dir, "checkpoint")

    assert result.exit_code == 0, result.stderr
    sessions = by_key(result)
    assert (sessions[MAIN]["status"], sessions[MAIN]["new_session_id"]) == (
        "rotated",
        SQLITE_MAIN_ID,
    )
    assert (sessions[CRON]["status"], sessions[CRON]["check"]) == ("skipped", "automation")
    assert sim.calls("sessions.reset") == [
        {"key": MAIN, "reason": "reset", "expectedSessionId": SQLITE_MAIN_ID}
    ]
    assert (main_after["sessionId"], main_after["totalTokens"]) == (SQLITE_MAIN_ID, 0)
    assert "second message after reset" in active_context(sqlite_state)
    (lineage,) = last_rotations(state_db())
    assert (lineage.session_key, lineage.outcome, lineage.tokens, lineage.token_limit) == (
        MAIN,
        "rotated",
        160_000,
        150_000,
    )
    assert lineage.old_session_id == lineage.new_session_id == SQLITE_MAIN_ID
    assert lineage.checkpoint["ok"] is True
    assert result.json()["summary"]["rotated"] == 1
    # The next checkpoint finds the reset line and keeps the pre-reset conversation.
    assert checkpoint.exit_code == 0, checkpoint.stderr
    assert "second message after reset" in active_context(sqlite_state)


def test_rotate_counts_an_unscoped_key_as_the_default_agents(capsys, sqlite_state, monkeypatch):
    # `global` (and legacy names) carry no agent: the gateway's default agent owns them.
    with gateway_for(sqlite_state, monkeypatch) as sim:
        sim.set_row(MAIN, **OVER)
        sim.set_row("global", totalTokens=10)
        result = rotate(capsys, sqlite_state, "--dry-run")

    assert result.exit_code == 0, result.stderr
    sessions = by_key(result)
    assert sessions[MAIN]["status"] == "would_rotate"
    assert (sessions["global"]["agent_id"], sessions["global"]["check"]) == (
        "main",
        "below_threshold",
    )


def test_rotate_file_era_moves_key_to_new_id_and_checkpoint_keeps_handoff(
    capsys, file_state, monkeypatch
):
    with gateway_for(file_state, monkeypatch) as sim:
        sim.set_row(MAIN, **OVER)
        result = rotate(capsys, file_state)
        resets = sim.calls("sessions.reset")
        after_rotate = active_context(file_state)
        checkpoint = run_cli(capsys, "--state-dir", file_state.state_dir, "checkpoint")

    assert result.exit_code == 0, result.stderr
    new_id = by_key(result)[MAIN]["new_session_id"]
    assert new_id not in (None, FILE_MAIN_ID)
    # 2026.7.x rejects expectedSessionId: the id is checked again by listing, then reset without.
    assert resets == [
        {"key": MAIN, "reason": "reset", "expectedSessionId": FILE_MAIN_ID},
        {"key": MAIN, "reason": "reset"},
    ]
    assert list(file_state.sessions_dir.glob(f"{FILE_MAIN_ID}.jsonl.reset.*"))
    assert user_text(2)[:40] in after_rotate
    (lineage,) = last_rotations(state_db())
    assert (lineage.old_session_id, lineage.new_session_id) == (FILE_MAIN_ID, new_id)
    assert checkpoint.exit_code == 0, checkpoint.stderr
    assert user_text(2)[:40] in active_context(file_state)


def test_rotate_dry_run_changes_nothing_and_says_what_it_would_do(
    capsys, sqlite_state, monkeypatch
):
    with gateway_for(sqlite_state, monkeypatch) as sim:
        sim.set_row(MAIN, **OVER)
        result = run_cli(capsys, "--state-dir", sqlite_state.state_dir, "rotate", "--dry-run")
        resets = sim.calls("sessions.reset")

    assert result.exit_code == 0, result.stderr
    assert resets == []
    assert not (sqlite_state.workspace / "memory" / "ACTIVE_CONTEXT.md").exists()
    assert f"would rotate {MAIN}" in result.stdout
    assert "would checkpoint it, then sessions.reset (reason reset)" in result.stdout
    db = state_db()
    assert last_rotations(db) == []
    assert db.events(types=["rotation.done", "rotation.failed", "rotation.skipped"]) == []


def test_rotate_checkpoint_fails_session_is_not_reset_and_exit_1(
    capsys, sqlite_state, monkeypatch, tmp_path
):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (sqlite_state.workspace / "memory").symlink_to(outside)  # checkpoint refuses to write there
    result, item = rotated_main_held_back(capsys, sqlite_state, monkeypatch)
    assert "session not reset" in item["detail"] or "checkpoint" in item["detail"]
    assert f"memwarden: rotate {MAIN}:" in result.stderr
    (lineage,) = last_rotations(state_db())
    assert (lineage.outcome, lineage.new_session_id) == ("failed", None)
    assert [event["type"] for event in state_db().events(types=["rotation.failed"])] == [
        "rotation.failed"
    ]


def test_rotate_leaves_a_session_whose_handoff_file_is_the_operators_own(
    capsys, sqlite_state, monkeypatch
):
    memory = sqlite_state.workspace / "memory"
    memory.mkdir(exist_ok=True)
    (memory / "ACTIVE_CONTEXT.md").write_text("# Written by hand\n- keep this\n")
    result, item = rotated_main_held_back(capsys, sqlite_state, monkeypatch)
    assert item["detail"] == (
        f"its handoff was not written, session not reset: {memory / 'ACTIVE_CONTEXT.md'} was not "
        "written by memwarden; move it, then run rotate again"
    )
    assert active_context(sqlite_state) == "# Written by hand\n- keep this\n"
    assert result.messages == [f"memwarden: rotate {MAIN}: {item['detail']}"]  # said once


def test_rotate_resets_a_session_whose_checkpoint_is_written_while_another_agent_is_stuck(
    capsys, sqlite_state, monkeypatch
):
    from memwarden.checkpoint.commit import journal

    def stuck_elsewhere(*arguments, **options):
        return journal.RollForward(problems=["checkpoint journal of agent other: read-only"])

    monkeypatch.setattr(journal, "roll_forward", stuck_elsewhere)
    with gateway_for(sqlite_state, monkeypatch) as sim:
        sim.set_row(MAIN, **OVER)
        result = rotate(capsys, sqlite_state)
        resets = sim.calls("sessions.reset")

    assert [call["key"] for call in resets] == [MAIN]  # one agent's problem stops no other
    assert by_key(result)[MAIN]["status"] == "rotated"


def test_rotate_session_changed_before_reset_is_postponed_not_failed(
    capsys, sqlite_state, monkeypatch
):
    with gateway_for(sqlite_state, monkeypatch) as sim:
        sim.set_row(MAIN, **OVER)
        sim.faults.errors["sessions.reset"] = {
            "code": "INVALID_REQUEST",
            "message": f"Session {MAIN} changed before reset. Retry.",
            "details": {"reason": "session-changed"},
        }
        result = rotate(capsys, sqlite_state)

    assert result.exit_code == 0, result.stderr
    item = by_key(result)[MAIN]
    assert item["status"] == "postponed"
    assert "expectedSessionId" in item["detail"]
    assert last_rotations(state_db()) == []
    assert len(state_db().events(types=["rotation.skipped"])) == 1


def test_rotate_one_session_breaks_the_others_still_rotate(capsys, file_state, monkeypatch):
    with gateway_for(file_state, monkeypatch) as sim:
        sim.set_row(MAIN, **OVER)
        sim.set_row(SECOND, **{**OVER, "totalTokens": 170_000})
        sim.faults.drop_on_key.add(SECOND)  # the fuller one goes first, and breaks
        result = rotate(capsys, file_state)

    assert result.exit_code == 1
    sessions = by_key(result)
    assert sessions[SECOND]["status"] == "failed"
    assert "may not have happened" in sessions[SECOND]["detail"]
    assert sessions[MAIN]["status"] == "rotated"
    outcomes = {row.session_key: row.outcome for row in last_rotations(state_db())}
    assert outcomes == {SECOND: "failed", MAIN: "rotated"}


def test_rotate_unexpected_error_in_one_session_others_still_rotate(
    capsys, file_state, monkeypatch
):
    import sqlite3

    import memwarden.checkpoint.run.job as checkpoint_job

    real = checkpoint_job.checkpoint_session

    def busy_for_second(context, agent, session, **options):
        if session.key == SECOND:
            raise sqlite3.OperationalError("database is locked")
        return real(context, agent, session, **options)

    monkeypatch.setattr(checkpoint_job, "checkpoint_session", busy_for_second)
    with gateway_for(file_state, monkeypatch) as sim:
        sim.set_row(MAIN, **OVER)
        sim.set_row(SECOND, **{**OVER, "totalTokens": 170_000})
        result = rotate(capsys, file_state)
        resets = [call["key"] for call in sim.calls("sessions.reset")]

    assert result.exit_code == 1
    sessions = by_key(result)
    assert sessions[SECOND]["status"] == "failed"
    assert "OperationalError: database is locked" in sessions[SECOND]["detail"]
    assert sessions[MAIN]["status"] == "rotated"
    assert SECOND not in resets and MAIN in resets


def test_rotate_mid_turn_session_is_postponed_with_event(capsys, sqlite_state, monkeypatch):
    with gateway_for(sqlite_state, monkeypatch) as sim:
        sim.set_row(MAIN, **OVER, status="running")
        result = rotate(capsys, sqlite_state)
        resets = sim.calls("sessions.reset")

    assert result.exit_code == 0
    assert resets == []
    item = by_key(result)[MAIN]
    assert (item["status"], item["check"]) == ("postponed", "mid_turn")
    (event,) = state_db().events(types=["rotation.skipped"])
    assert (event["session_key"], event["data"]["check"]) == (MAIN, "mid_turn")


def test_rotate_max_one_rotates_fullest_and_postpones_the_other(capsys, file_state, monkeypatch):
    with gateway_for(file_state, monkeypatch) as sim:
        sim.set_row(MAIN, **OVER)
        sim.set_row(SECOND, **{**OVER, "totalTokens": 170_000})
        result = rotate(capsys, file_state, "--max", "1")
        resets = {call["key"] for call in sim.calls("sessions.reset")}

    assert result.exit_code == 0, result.stderr
    assert resets == {SECOND}
    assert by_key(result)[MAIN]["check"] == "cap"


def test_rotate_threshold_and_ratio_options_override_config(capsys, sqlite_state, monkeypatch):
    with gateway_for(sqlite_state, monkeypatch) as sim:
        sim.set_row(MAIN, totalTokens=20_000, totalTokensFresh=True, contextTokens=200_000)
        result = rotate(
            capsys, sqlite_state, "--threshold", "500000", "--ratio", "0.1", "--dry-run"
        )

    item = by_key(result)[MAIN]
    assert (item["status"], item["limit"]) == ("would_rotate", 20_000)
    assert result.json()["policy"]["context_ratio"] == 0.1


def test_rotate_stale_count_confirmed_from_transcript(capsys, file_state, monkeypatch):
    with gateway_for(file_state, monkeypatch) as sim:
        sim.set_row(MAIN, totalTokens=5, totalTokensFresh=False, contextTokens=200_000)
        result = rotate(capsys, file_state, "--threshold", "1000", "--dry-run")

    item = by_key(result)[MAIN]
    # The generated transcript's assistant messages report 1234 input tokens.
    assert (item["status"], item["tokens"], item["token_source"]) == (
        "would_rotate",
        1234,
        "transcript",
    )


def test_rotate_stale_count_after_a_reset_line_is_the_empty_context(
    capsys, file_state, monkeypatch
):
    transcript = file_state.sessions_dir / f"{FILE_MAIN_ID}.jsonl"
    reset = {"type": "reset", "id": "r1", "timestamp": "2026-11-22T05:30:00.000Z", "reason": "new"}
    with transcript.open("ab") as handle:
        handle.write(orjson.dumps(reset) + b"\n")
    with gateway_for(file_state, monkeypatch) as sim:
        sim.set_row(MAIN, totalTokens=150_000, totalTokensFresh=False, contextTokens=200_000)
        result = rotate(capsys, file_state, "--threshold", "1000", "--dry-run")

    item = by_key(result)[MAIN]
    # The transcript shows the reset: nothing in context, not an unknown size.
    assert (item["status"], item["tokens"], item["token_source"]) == ("skipped", 0, "transcript")
    assert "none since the reset in the transcript" in item["reason"]


def test_rotate_checkpoint_saves_nothing_session_is_not_reset(capsys, file_state, monkeypatch):
    (file_state.sessions_dir / f"{SECOND_ID}.jsonl").unlink()  # no transcript: nothing to save
    with gateway_for(file_state, monkeypatch) as sim:
        sim.set_row(SECOND, **OVER)
        result = rotate(capsys, file_state)
        resets = sim.calls("sessions.reset")

    assert result.exit_code == 0, result.stderr
    assert resets == []
    item = by_key(result)[SECOND]
    assert item["status"] == "postponed"
    assert item["detail"] == "checkpoint skipped it (the session has no transcript yet): not reset"
    assert item["checkpoint"]["outcome"] == "skipped"
    assert last_rotations(state_db()) == []
    (event,) = state_db().events(types=["rotation.skipped"])
    assert event["session_key"] == SECOND


def test_rotate_one_turn_session_is_checkpointed_and_reset(capsys, sqlite_state, monkeypatch):
    small = "agent:main:agentrpc"  # one turn: under the checkpoint's minimum, forced anyway
    with gateway_for(sqlite_state, monkeypatch) as sim:
        sim.set_row(small, **OVER)
        result = rotate(capsys, sqlite_state)

    assert result.exit_code == 0, result.stderr
    assert by_key(result)[small]["status"] == "rotated"
    handoff = (sqlite_state.workspace / "memory" / "sessions" / "main.agentrpc.md").read_text()
    assert "via agent rpc" in handoff
    assert "Written by memwarden rotate right before it reset this conversation" in handoff
    assert not (sqlite_state.workspace / "memory" / "ACTIVE_CONTEXT.md").exists()


def test_rotate_gateway_unreachable_is_one_clear_line(capsys, sqlite_state, monkeypatch):
    monkeypatch.setenv("MEMWARDEN_GATEWAY_URL", "ws://127.0.0.1:9")
    monkeypatch.setenv("MEMWARDEN_GATEWAY_TOKEN", "t")

    result = run_cli(capsys, "--state-dir", sqlite_state.state_dir, "rotate")

    assert result.exit_code == 1
    (line,) = result.messages
    assert line.startswith("memwarden: cannot reach the gateway at ws://127.0.0.1:9")


def test_rotate_wrong_token_exits_2_without_printing_it(capsys, sqlite_state, monkeypatch):
    with gateway_for(sqlite_state, monkeypatch):
        monkeypatch.setenv("MEMWARDEN_GATEWAY_TOKEN", "wrong-secret-value")
        result = run_cli(capsys, "--state-dir", sqlite_state.state_dir, "rotate")

    assert result.exit_code == 2
    assert "AUTH_TOKEN_MISMATCH" in result.stderr
    assert "wrong-secret-value" not in result.stderr + result.stdout


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (("--threshold", "0"), "--threshold: expected a token count ≥ 1, got 0"),
        (("--ratio", "1.5"), "--ratio: expected a fraction above 0 and at most 1, got 1.5"),
        (("--max", "0"), "--max: expected a number of sessions ≥ 1, got 0"),
    ],
)
def test_rotate_bad_option_is_usage_error(capsys, sqlite_state, arguments, message):
    result = run_cli(capsys, "--state-dir", sqlite_state.state_dir, "rotate", *arguments)

    assert result.exit_code == 2
    assert message in result.stderr


def test_rotate_agent_filter_unknown_agent_is_usage_error(capsys, sqlite_state):
    result = run_cli(capsys, "--state-dir", sqlite_state.state_dir, "rotate", "--agent", "nope")

    assert result.exit_code == 2
    assert "unknown agent(s): nope" in result.stderr


def bootstrap_manifest(state) -> dict:
    return orjson.loads((state.workspace / "memory" / ".memwarden-bootstrap.json").read_bytes())


def test_rotate_other_conversation_leaves_main_alone_and_the_manifest_names_it_before_the_reset(
    capsys, file_state, monkeypatch, fixture_clock
):
    assert run_cli(capsys, "--state-dir", file_state.state_dir, "checkpoint").exit_code == 0
    memory = file_state.workspace / "memory"
    main_before = (memory / "ACTIVE_CONTEXT.md").read_bytes()
    with gateway_for(file_state, monkeypatch) as sim:
        sim.set_row(SECOND, **OVER)
        result = rotate(capsys, file_state)

    assert by_key(result)[SECOND]["status"] == "rotated", result.stdout
    # The manifest already listed the conversation's handoff: the rewrite needs no new one.
    assert by_key(result)[SECOND]["checkpoint"]["manifest"] == "unchanged"
    assert (memory / "ACTIVE_CONTEXT.md").read_bytes() == main_before  # main's, untouched
    raw = (memory / "sessions" / "main.fixture.md").read_bytes()
    assert b"Written by memwarden rotate right before it reset" in raw
    assert f"> - session: `{SECOND}`".encode() in raw
    files = {item["session"]: item["path"] for item in bootstrap_manifest(file_state)["files"]}
    assert files[MAIN] == "memory/ACTIVE_CONTEXT.md"
    assert files[SECOND] == "memory/sessions/main.fixture.md"


def test_rotate_with_index_refresh_off_still_writes_the_manifest(capsys, sqlite_state, monkeypatch):
    monkeypatch.setenv("MEMWARDEN_INDEX_AFTER_CHECKPOINT", "false")
    with gateway_for(sqlite_state, monkeypatch) as sim:
        sim.set_row(MAIN, **OVER)
        result = rotate(capsys, sqlite_state)

    item = by_key(result)[MAIN]
    assert item["status"] == "rotated"
    assert (item["checkpoint"]["index"], item["checkpoint"]["manifest"]) == (
        "below_threshold",
        "written",
    )
    (entry,) = bootstrap_manifest(sqlite_state)["files"]
    assert (entry["path"], entry["session"]) == ("memory/ACTIVE_CONTEXT.md", MAIN)


def test_rotate_snapshots_the_handoff_with_the_index_written_before_the_reset(
    capsys, file_state, monkeypatch, fixture_clock
):
    monkeypatch.setenv("MEMWARDEN_INDEX_THRESHOLD_KB", "0")
    with gateway_for(file_state, monkeypatch) as sim:
        sim.set_row(SECOND, **OVER)
        result = rotate(capsys, file_state)

    saved = by_key(result)[SECOND]["checkpoint"]
    assert by_key(result)[SECOND]["status"] == "rotated", result.stdout
    shown = run_cli(
        capsys, "--state-dir", file_state.state_dir, "history", "show", saved["history"]
    )
    assert shown.exit_code == 0, shown.stderr
    assert "  trigger   rotate" in shown.stdout
    handoff = "memory/sessions/main.fixture.md"
    for name in (handoff, "memory/INDEX.md", "memory/.memwarden-bootstrap.json"):
        assert f"  {name}" in shown.stdout


def test_rotate_resets_with_handoff_injection_turned_off(capsys, file_state, monkeypatch):
    # index.inject_active_context = false: the manifest lists no handoff, on purpose.
    monkeypatch.setenv("MEMWARDEN_INDEX_INJECT_ACTIVE_CONTEXT", "false")
    with gateway_for(file_state, monkeypatch) as sim:
        sim.set_row(SECOND, **OVER)
        result = rotate(capsys, file_state)

    assert by_key(result)[SECOND]["status"] == "rotated", result.stdout
    assert result.exit_code == 0, result.stderr


def test_rotate_says_when_a_stopped_checkpoints_agent_gets_its_files_but_not_its_manifest(
    capsys, tmp_path, monkeypatch
):
    from memwarden.checkpoint.commit import journal
    from memwarden.checkpoint.commit.staging import AgentFiles, Writer

    monkeypatch.setenv("MEMWARDEN_HISTORY_ENABLED", "false")
    an_hour_ago = int(time.time() * 1000) - 3_600_000
    state_dir, workspaces = make_generated_fleet(tmp_path, ["alpha", "beta"], an_hour_ago)
    # A checkpoint killed after its commit: beta's daily-log entry is in the journal, not in place.
    db = state_db()
    writer = Writer(db.path.parent)
    daily = workspaces["beta"] / "memory" / "2026-11-25.md"
    files = AgentFiles("beta", workspaces["beta"])
    files.append(daily, "\n### 10:00 · checkpoint · `agent:beta:main`\n", "# 2026-11-25\n")
    with db.transaction() as connection:
        journal.record(connection, writer.token, files.stage(writer))
    os.close(writer._descriptor)  # what SIGKILL leaves: the writer file unlocked, no cleanup
    writer._descriptor = None
    db.close()
    (workspaces["beta"] / "memory" / ".memwarden-bootstrap.json").mkdir()  # cannot be written
    with GatewaySimulator.from_state_dir(state_dir) as sim:
        monkeypatch.setenv("MEMWARDEN_GATEWAY_URL", sim.url)
        monkeypatch.setenv("MEMWARDEN_GATEWAY_TOKEN", sim.token)
        sim.set_row("agent:alpha:main", **OVER)
        result = run_cli(capsys, "--state-dir", state_dir, "rotate", "--json")

    assert by_key(result)["agent:alpha:main"]["status"] == "rotated", result.stderr
    assert "`agent:beta:main`" in daily.read_text()  # the stopped run's entry, put in place
    (warning,) = by_key(result)["agent:alpha:main"]["checkpoint"]["warnings"]
    assert warning.startswith(f"index {workspaces['beta']}: ")
    assert f"memwarden: {warning}" in result.messages


def test_rotate_leaves_a_session_whose_handoff_could_not_be_put_in_place(
    capsys, sqlite_state, monkeypatch
):
    from memwarden.checkpoint.commit import journal

    real_place = journal.place

    def failing_place(staged, **options):
        raise OSError(5, "Input/output error", staged.target)

    monkeypatch.setattr(journal, "place", failing_place)
    _, item = rotated_main_held_back(capsys, sqlite_state, monkeypatch)
    assert "input/output error" in item["detail"].lower()
    assert "put in place by the next run" in item["detail"]
    monkeypatch.setattr(journal, "place", real_place)
    later = run_cli(capsys, "--state-dir", sqlite_state.state_dir, "checkpoint")
    assert "journal: finished what a stopped checkpoint left" in later.stdout
    assert SQLITE_MAIN_ID in active_context(sqlite_state)  # the journal kept it for that run


def test_rotate_leaves_a_session_whose_handoff_the_manifest_cannot_list(
    capsys, sqlite_state, monkeypatch
):
    from memwarden.indexing.manifest import MANIFEST_NAME

    memory = sqlite_state.workspace / "memory"
    memory.mkdir(exist_ok=True)
    (memory / MANIFEST_NAME).mkdir()  # the manifest cannot be written: the hook would find none
    _, item = rotated_main_held_back(capsys, sqlite_state, monkeypatch)
    assert item["detail"].startswith("the bootstrap manifest does not list its handoff")
    assert MANIFEST_NAME in item["detail"]  # why: the index's error
    assert "## " in active_context(sqlite_state)  # the handoff itself is written
