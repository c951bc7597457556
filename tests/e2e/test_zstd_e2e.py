"""The SQLite era stores long transcript lines zstd-compressed (2026.9.6: `event_json` NULL, the
line in `event_zstd`, for lines of 1 KiB or more that compress); memwarden reads them through
the standard library's zstd (backports.zstd before Python 3.14) into the conversation's handoff."""

from __future__ import annotations

import sqlite3
import uuid

import pytest

from support.cli import run_subprocess

pytestmark = pytest.mark.e2e


def test_compressed_transcript_rows_of_the_real_gateway_reach_the_handoff(gateway):
    if gateway.file_era:
        pytest.skip("the file era writes JSONL: nothing is compressed")
    key = f"agent:main:e2e-zstd-{uuid.uuid4().hex[:8]}"
    marker = f"zstd-marker-{uuid.uuid4().hex[:12]}"
    request = f"{marker}: " + "Please keep these notes about the rollout plan. " * 60
    assert gateway.agent_turn_rpc(request, session_key=key)["status"] == "ok"
    session_id = gateway.session(key)["sessionId"]

    database = f"file:{gateway.agent_db()}?mode=ro"
    with sqlite3.connect(database, uri=True) as connection:
        compressed = connection.execute(
            "SELECT count(*) FROM transcript_events"
            " WHERE session_id = ? AND event_json IS NULL AND event_zstd IS NOT NULL",
            (session_id,),
        ).fetchone()[0]
    assert compressed >= 1, "the gateway stored no compressed line"

    result = run_subprocess(
        "--state-dir", gateway.state_dir, "-q", "checkpoint", "--session", key,
        env=gateway.env, timeout=300,
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    handoffs = list((gateway.workspace / "memory" / "sessions").glob("*.md"))
    assert any(marker in path.read_text() for path in handoffs), [p.name for p in handoffs]
