"""Generate gateway transcripts for tests and benchmarks, in both storage eras.

Lines look like the real captures in tests/fixtures (header, user and assistant messages with
usage, an optional in-place reset); their texts are predictable, so a test can say what it
expects to read back:

    write_jsonl_transcript(path, 100, text_size=200)
    assert entries[-1].text == assistant_text(99, 200)

    make_sqlite_agent_db(db, {"s1": list(transcript_lines(10))}, compress=True)

The SQLite schema is the subset of the 2026.9.6 agent database memwarden reads (`session_nodes`,
`session_windows`, `transcript_events`), copied from the capture with fewer value CHECKs and
without the one that calls `octet_length()`, which Python's bundled SQLite does not have.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from memwarden.openclaw.sqlite_tail import zstd_library

zstd = zstd_library()

DEFAULT_SESSION_ID = "5e551011-0000-4000-8000-000000000001"
START = datetime(2026, 11, 22, 5, 0, tzinfo=UTC)
FILLER = "lorem ipsum dolor sit amet "

SESSION_NODES_SQL = """
CREATE TABLE session_nodes (
  session_key TEXT NOT NULL PRIMARY KEY,
  current_session_id TEXT NOT NULL,
  entry_json TEXT NOT NULL,
  legacy_acp_migration_json TEXT,
  entry_valid INTEGER NOT NULL DEFAULT 0 CHECK (entry_valid IN (-1, 0, 1)),
  updated_at INTEGER NOT NULL,
  status TEXT CHECK (
    status IS NULL OR status IN ('running', 'done', 'failed', 'killed', 'timeout')
  ),
  created_at INTEGER,
  created_via TEXT,
  created_actor_type TEXT,
  created_actor_id TEXT,
  owner_actor_type TEXT,
  owner_actor_id TEXT,
  owner_assigned_by_type TEXT,
  owner_assigned_by_id TEXT,
  owner_assigned_at INTEGER,
  project_id TEXT,
  parent_session_key TEXT,
  spawned_by TEXT,
  fork_source_session_key TEXT,
  fork_source_session_id TEXT,
  fork_source_entry_id TEXT,
  label TEXT,
  display_name TEXT,
  category TEXT,
  icon TEXT,
  pinned_at INTEGER,
  archived_at INTEGER,
  last_read_at INTEGER,
  last_interaction_at INTEGER,
  last_activity_at INTEGER
) STRICT
"""

SESSION_WINDOWS_SQL = """
CREATE TABLE session_windows (
  session_id TEXT NOT NULL PRIMARY KEY,
  session_key TEXT NOT NULL,
  previous_session_id TEXT,
  reason TEXT,
  session_scope TEXT NOT NULL DEFAULT 'conversation',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  transcript_updated_at INTEGER DEFAULT NULL,
  transcript_observed_at INTEGER DEFAULT NULL,
  session_entry_provenance INTEGER NOT NULL DEFAULT 0,
  acp_owned INTEGER NOT NULL DEFAULT 0,
  plugin_owner_id TEXT,
  hook_external_content_source TEXT,
  started_at INTEGER,
  ended_at INTEGER,
  status TEXT,
  chat_type TEXT,
  channel TEXT,
  account_id TEXT,
  primary_conversation_id TEXT,
  model_provider TEXT,
  model TEXT,
  agent_harness_id TEXT,
  parent_session_key TEXT,
  spawned_by TEXT,
  display_name TEXT,
  FOREIGN KEY (session_key) REFERENCES session_nodes(session_key) ON DELETE CASCADE
) STRICT
"""

TRANSCRIPT_EVENTS_SQL = """
CREATE TABLE transcript_events (
  session_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  event_json TEXT,
  created_at INTEGER NOT NULL,
  event_zstd BLOB,
  event_utf8_bytes INTEGER CHECK (event_utf8_bytes IS NULL OR event_utf8_bytes >= 0),
  navigation_json TEXT,
  PRIMARY KEY (session_id, seq),
  FOREIGN KEY (session_id) REFERENCES "session_windows"(session_id) ON DELETE CASCADE,
  CHECK (
    (event_json IS NOT NULL AND event_zstd IS NULL)
    OR (
      event_json IS NULL AND event_zstd IS NOT NULL
      AND event_utf8_bytes IS NOT NULL
      AND event_utf8_bytes BETWEEN 1 AND 4194304
      AND length(event_zstd) BETWEEN 1 AND 4194304
      AND navigation_json IS NOT NULL
    )
  )
) STRICT
"""

# The smallest navigation_json the capture's CHECK accepts on a compressed row.
MINIMAL_NAVIGATION_JSON = orjson.dumps(
    {
        "version": 1,
        "report": {"kind": "canonical"},
        "navigation": {},
        "reset": {},
        "model": {},
        "modelBytes": 0,
        "modelWithoutCheckpointBytes": 0,
        "withoutCustomDataBytes": 0,
    }
).decode()


def user_text(turn: int, text_size: int = 200) -> str:
    """Return the text of the user message of `turn`, about `text_size` characters long."""
    return _padded(f"user message {turn}", text_size)


def assistant_text(turn: int, text_size: int = 200) -> str:
    """Return the text of the assistant reply of `turn`, about `text_size` characters long."""
    return _padded(f"assistant reply {turn}", text_size)


def transcript_lines(
    n_turns: int,
    *,
    text_size: int = 200,
    session_id: str = DEFAULT_SESSION_ID,
    with_reset_at: int | None = None,
    version: int = 3,
) -> Iterator[dict[str, Any]]:
    """Yield a header and `n_turns` user/assistant pairs; a reset line before `with_reset_at`."""
    yield {
        "type": "session",
        "version": version,
        "id": session_id,
        "timestamp": _iso(START),
        "cwd": "/srv/openclaw/workspace",
    }
    parent = None
    for turn in range(n_turns):
        moment = START + timedelta(seconds=turn + 1)
        if turn == with_reset_at:
            yield {
                "type": "reset",
                "id": f"r{turn:07x}",
                "parentId": parent,
                "timestamp": _iso(moment),
                "reason": "reset",
            }
            parent = f"r{turn:07x}"
        yield _message(f"u{turn:07x}", parent, moment, "user", user_text(turn, text_size))
        yield _message(
            f"a{turn:07x}",
            f"u{turn:07x}",
            moment + timedelta(milliseconds=500),
            "assistant",
            [{"type": "text", "text": assistant_text(turn, text_size)}],
        )
        parent = f"a{turn:07x}"


def write_jsonl_transcript(
    path: Path,
    n_turns: int,
    *,
    text_size: int = 200,
    session_id: str = DEFAULT_SESSION_ID,
    with_reset_at: int | None = None,
    line_ending: bytes = b"\n",
) -> Path:
    """Write a file-era transcript of `n_turns` turns to `path` and return the path."""
    lines = transcript_lines(
        n_turns, text_size=text_size, session_id=session_id, with_reset_at=with_reset_at
    )
    write_jsonl(path, lines, line_ending=line_ending)
    return path


def write_jsonl(
    path: Path, lines: Iterable[Mapping[str, Any]], *, line_ending: bytes = b"\n"
) -> None:
    """Write `lines` as JSONL to `path`, creating its folder, in batches."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        batch: list[bytes] = []
        for line in lines:
            batch.append(orjson.dumps(line) + line_ending)
            if len(batch) >= 4096:
                handle.write(b"".join(batch))
                batch.clear()
        handle.write(b"".join(batch))


def make_sqlite_agent_db(
    path: Path,
    sessions: Mapping[str, list[Mapping[str, Any]]],
    *,
    compress: bool = False,
    session_keys: Mapping[str, str] | None = None,
) -> Path:
    """Build an agent database at `path` holding `sessions` (session id → lines); return it.

    Each session gets a `session_nodes` row (key from `session_keys`, else `agent:main:main` for
    the first and `agent:main:session-<n>` for the others), a `session_windows` row and one
    `transcript_events` row a line, seq from 0. With `compress`, lines go to `event_zstd` with
    `event_json` NULL, as the gateway stores large transcripts.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    created = int(START.timestamp() * 1000)
    connection = sqlite3.connect(path)
    try:
        with connection:
            for statement in (SESSION_NODES_SQL, SESSION_WINDOWS_SQL, TRANSCRIPT_EVENTS_SQL):
                connection.execute(statement)
            for index, (session_id, lines) in enumerate(sessions.items()):
                key = (session_keys or {}).get(session_id) or (
                    "agent:main:main" if index == 0 else f"agent:main:session-{index}"
                )
                entry = orjson.dumps({"sessionId": session_id, "updatedAt": created}).decode()
                connection.execute(
                    "INSERT INTO session_nodes (session_key, current_session_id, entry_json,"
                    " updated_at) VALUES (?, ?, ?, ?)",
                    (key, session_id, entry, created),
                )
                connection.execute(
                    "INSERT INTO session_windows (session_id, session_key, created_at,"
                    " updated_at) VALUES (?, ?, ?, ?)",
                    (session_id, key, created, created),
                )
                connection.executemany(
                    "INSERT INTO transcript_events VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        event_row(session_id, seq, orjson.dumps(line), created, compress=compress)
                        for seq, line in enumerate(lines)
                    ),
                )
    finally:
        connection.close()
    return path


def event_row(
    session_id: str, seq: int, line: bytes, created_at: int, *, compress: bool = False
) -> tuple[Any, ...]:
    """Return the `transcript_events` values of one line, zstd-compressed when `compress`."""
    if compress:
        blob = zstd.compress(line)
        return (session_id, seq, None, created_at, blob, len(line), MINIMAL_NAVIGATION_JSON)
    return (session_id, seq, line.decode(), created_at, None, len(line), None)


def _message(
    entry_id: str, parent: str | None, moment: datetime, role: str, content: object
) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": role,
        "content": content,
        "timestamp": int(moment.timestamp() * 1000),
    }
    if role == "assistant":
        message |= {
            "api": "openai-completions",
            "provider": "fake",
            "model": "fake-model",
            "usage": {
                "input": 1234,
                "output": 9,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 1243,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            },
            "stopReason": "stop",
        }
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": _iso(moment),
        "message": message,
    }


def _padded(text: str, size: int) -> str:
    if len(text) >= size:
        return text
    filler = FILLER * (size // len(FILLER) + 1)
    return f"{text} {filler}"[:size]


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
