"""`memwarden events`: the timeline from state.db, filtered by agent, type and time."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memwarden.store.state import StateDB
from support.cli import run_cli

HOUR = 3600.0


@pytest.fixture
def state(isolated_env):
    database = StateDB(Path(isolated_env) / ".local" / "state" / "memwarden" / "state.db")
    yield database
    database.close()


@pytest.fixture
def timeline(state):
    """A small story: a checkpoint, a snapshot, an alert, a rotation of `main`, one of `ops`."""
    now = time.time()
    run_id = state.start_run("rotate", now=now - 2 * HOUR)
    state.finish_run(run_id, 0, {"rotated": 1}, now=now - 2 * HOUR + 3)
    failed = state.start_run("checkpoint", now=now - 0.5 * HOUR)
    state.finish_run(failed, 1, {"failed": 1}, now=now - 0.5 * HOUR + 1)
    record = state.record_event
    record("checkpoint.written", agent_id="main", session_key="agent:main:main", ts=now - 3 * HOUR)
    record("snapshot.taken", agent_id="main", data={"snapshot": "abcd1234"}, ts=now - 2.5 * HOUR)
    record(
        "rotation.done",
        job="rotate",
        run_id=run_id,
        agent_id="main",
        session_key="agent:main:main",
        session_id="new-session",
        data={"previous_session_id": "old-session", "tokens": 181000},
        ts=now - 2 * HOUR + 1,
    )
    record("alert.sent", data={"issue": "gateway.down"}, ts=now - 1 * HOUR)
    record("alert.resolved", data={"issue": "gateway.down"}, ts=now - 0.9 * HOUR)
    record("rotation.done", agent_id="ops", session_key="agent:ops:main", ts=now - 0.2 * HOUR)
    return now


def events(capsys, *arguments):
    result = run_cli(capsys, "events", "--json", *arguments)
    assert result.exit_code == 0, result.stderr
    return [event["type"] for event in result.json()["events"]]


def test_events_all_in_time_order_with_runs(capsys, timeline):
    assert events(capsys) == [
        "checkpoint.written",
        "snapshot.taken",
        "rotation.done",
        "run.done",
        "alert.sent",
        "alert.resolved",
        "run.failed",
        "rotation.done",
    ]


def test_events_agent_keeps_its_own_and_global_events(capsys, timeline):
    found = events(capsys, "--agent", "ops")
    assert found == ["run.done", "alert.sent", "alert.resolved", "run.failed", "rotation.done"]


def test_events_type_family_glob_and_comma_list(capsys, timeline):
    assert events(capsys, "--type", "rotation") == ["rotation.done", "rotation.done"]
    assert events(capsys, "--type", "alert.*") == ["alert.sent", "alert.resolved"]
    assert events(capsys, "--type", "run,snapshot") == ["snapshot.taken", "run.done", "run.failed"]
    assert events(capsys, "--type", "run.failed", "--type", "alert.resolved") == [
        "alert.resolved",
        "run.failed",
    ]


def test_events_since_relative_and_iso(capsys, timeline):
    assert events(capsys, "--since", "75m") == [
        "alert.sent",
        "alert.resolved",
        "run.failed",
        "rotation.done",
    ]
    moment = datetime.fromtimestamp(timeline - 0.6 * HOUR, UTC).isoformat()
    assert events(capsys, "--since", moment) == ["run.failed", "rotation.done"]


def test_events_limit_keeps_the_newest(capsys, timeline):
    assert events(capsys, "--limit", "2") == ["run.failed", "rotation.done"]


def test_events_json_carries_lineage_data_and_time(capsys, timeline):
    result = run_cli(capsys, "events", "--type", "rotation.done", "--agent", "main", "--json")
    (event,) = result.json()["events"]
    assert event["session_id"] == "new-session"
    assert event["data"] == {"previous_session_id": "old-session", "tokens": 181000}
    assert event["time"].endswith("Z") and event["job"] == "rotate"


def test_events_human_lines_show_time_type_agent_session_and_data(capsys, timeline):
    result = run_cli(capsys, "events", "--type", "rotation.done", "--agent", "main")
    (line,) = result.stdout.splitlines()
    assert "rotation.done" in line and "main" in line and "agent:main:main" in line
    assert "previous_session_id=old-session" in line and "tokens=181000" in line
    run_line = run_cli(capsys, "events", "--type", "run.failed").stdout.strip()
    assert "run.failed" in run_line and "job=checkpoint" in run_line and "exit_code=1" in run_line


def test_events_nothing_matches_says_so(capsys, timeline):
    assert run_cli(capsys, "events", "--type", "index").stdout.strip() == "no events match"


def test_events_unknown_agent_exits_2_naming_the_agents_found(capsys, timeline):
    result = run_cli(capsys, "events", "--agent", "mian")
    assert result.exit_code == 2
    assert "unknown agent(s): mian (agents found: main, ops)" in result.stderr
    assert result.stdout == ""


def test_events_agent_of_the_timeline_needs_no_readable_gateway_config(
    capsys, timeline, tmp_path, monkeypatch
):
    gateway = tmp_path / "openclaw"
    gateway.mkdir()
    (gateway / "openclaw.json").write_text("{ agents: [ broken\n")
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(gateway))
    result = run_cli(capsys, "events", "--agent", "main")
    assert result.exit_code == 0, result.stderr
    assert "rotation.done" in result.stdout


def test_events_type_matching_no_event_type_exits_2_listing_the_types(capsys, timeline, state):
    state.record_event("custom.thing", ts=timeline)
    for typo in ("rotaton", "alret.*"):
        result = run_cli(capsys, "events", "--type", f"run,{typo}")
        assert result.exit_code == 2
        assert f"--type {typo}: no such event type" in result.stderr
        assert "rotation.done" in result.stderr and "custom.thing" in result.stderr
    assert events(capsys, "--type", "custom") == ["custom.thing"]


def test_events_bad_since_exits_2_with_one_line(capsys, timeline):
    result = run_cli(capsys, "events", "--since", "last tuesday")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "--since last tuesday" in result.stderr


@pytest.mark.parametrize("since", ["99999999999d", "999999999w", "1" + "0" * 5000 + "s"])
def test_events_since_too_far_back_is_a_usage_error_naming_the_option(capsys, timeline, since):
    result = run_cli(capsys, "events", "--since", since, "--json")
    assert result.exit_code == 2
    (message,) = result.messages
    assert message == (
        f"memwarden: --since {since}: too far back (before the year 1); give a shorter "
        "duration or a date"
    )
    assert result.json() == {
        "job": "events",
        "exit_code": 2,
        "error": [message.removeprefix("memwarden: ")],
    }
