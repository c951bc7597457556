"""sessions.reset through the client, on simulated gateways backed by copies of real state dirs.

The simulator changes the state dir as each gateway version does; these tests pin that down so
the rotate tests that rely on it test against the real behaviours.
"""

from __future__ import annotations

import orjson
import pytest

from memwarden.openclaw.entries import Reset
from memwarden.openclaw.gateway import GatewayCallError, GatewayClient, parse_session_row
from memwarden.openclaw.layout import discover
from memwarden.openclaw.sessions import load_sessions, reset_archives
from memwarden.openclaw.transcripts import read_tail
from support.deployments import make_file_era_state, make_sqlite_era_state
from support.gateway_sim import GatewaySimulator

MAIN = "agent:main:main"


def _main_record(state_dir):
    agent = discover(state_dir, env={}).default_agent()
    return next(record for record in load_sessions(agent) if record.key == MAIN)


def test_sqlite_era_reset_keeps_id_and_appends_reset_line(tmp_path):
    state = make_sqlite_era_state(tmp_path)
    before = _main_record(state.state_dir)

    with (
        GatewaySimulator.from_state_dir(state.state_dir) as sim,
        GatewayClient(sim.url, sim.token, timeout=5) as client,
    ):
        payload = client.call(
            "sessions.reset",
            {"key": MAIN, "reason": "new", "expectedSessionId": before.session_id},
        )

    after = _main_record(state.state_dir)
    assert payload["entry"]["sessionId"] == before.session_id == after.session_id
    assert (after.total_tokens, after.total_tokens_fresh) == (0, True)
    last = read_tail(after.transcript, 1).entries[-1]
    assert type(last) is Reset
    assert last.reason == "new"


def test_file_era_reset_moves_key_to_new_id_and_archives_old_file(tmp_path):
    state = make_file_era_state(tmp_path)
    before = _main_record(state.state_dir)

    with GatewaySimulator.from_state_dir(state.state_dir) as sim:
        assert (sim.reset_mode, sim.accepts_expected_session_id) == ("new_id", False)
        with GatewayClient(sim.url, sim.token, timeout=5) as client:
            payload = client.call("sessions.reset", {"key": MAIN, "reason": "reset"})
            listed = {row["key"]: row for row in client.list_sessions()}

    after = _main_record(state.state_dir)
    new_id = payload["entry"]["sessionId"]
    assert new_id != before.session_id
    assert after.session_id == new_id == listed[MAIN]["sessionId"]
    assert after.transcript.path.name == f"{new_id}.jsonl"
    archives = reset_archives(state.sessions_dir, before.session_id)
    assert len(archives) == 1
    assert not before.transcript.path.exists()
    store = orjson.loads(state.session_store.read_bytes())
    assert store[MAIN]["totalTokens"] == 0


def test_file_era_gateway_rejects_expected_session_id_as_2026_7_does(tmp_path):
    state = make_file_era_state(tmp_path)

    with (
        GatewaySimulator.from_state_dir(state.state_dir) as sim,
        GatewayClient(sim.url, sim.token, timeout=5) as client,
        pytest.raises(GatewayCallError) as caught,
    ):
        client.call("sessions.reset", {"key": MAIN, "expectedSessionId": "x"})

    assert caught.value.code == "INVALID_REQUEST"
    assert "unexpected property 'expectedSessionId'" in caught.value.gateway_message


def test_simulator_rows_from_state_dir_parse_like_gateway_rows(tmp_path):
    state = make_sqlite_era_state(tmp_path)

    with (
        GatewaySimulator.from_state_dir(state.state_dir) as sim,
        GatewayClient(sim.url, sim.token, timeout=5) as client,
    ):
        rows = [parse_session_row(row) for row in client.list_sessions()]

    main = next(row for row in rows if row.key == MAIN)
    assert (main.agent_id, main.total_tokens, main.total_tokens_fresh) == ("main", 1234, False)
