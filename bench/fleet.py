"""A reproducible fleet of OpenClaw agents on disk, for the benchmarks.

    fleet = build_fleet(Path("bench/.fleet"), agents=100, transcript_bytes=2_000_000)
    fleet.state_dir, fleet.workspaces, fleet.config_path
    append_turns(fleet, turns=1)          # what 20 minutes of conversation adds

Agents alternate between the file era (sessions.json + `<sessionId>.jsonl`) and the SQLite era
(`openclaw-agent.sqlite` with `session_nodes` and `transcript_events`, rows over 2 KB
zstd-compressed as the gateway stores them). Each agent has a big main session and a small cron
session that is updated last (so "the newest transcript" would be the wrong one). Turns look
like a working agent's: a request, tool calls (read/exec/write with paths) and their results,
thinking, a reply with paths, TODOs and now and then a secret. Everything comes from one seeded
RNG, so the same parameters give the same bytes; a built fleet is reused (a `.complete` stamp
holds its parameters).
"""

from __future__ import annotations

import hashlib
import random
import shutil
import sqlite3
import sys
from collections.abc import Collection, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

# The tests' schema of the gateway's tables.
from support.transcripts import (
    MINIMAL_NAVIGATION_JSON,
    SESSION_NODES_SQL,
    SESSION_WINDOWS_SQL,
    TRANSCRIPT_EVENTS_SQL,
    zstd,
)

START = datetime(2026, 11, 1, 8, 0, tzinfo=UTC)
COMPRESS_OVER_BYTES = 2048
_PROSE = (
    "agent memory context session window token budget checkpoint gateway deploy config "
    "database migration index query cache latency retry timeout queue worker schedule report "
    "invoice customer ticket release branch commit review test fixture build pipeline metric "
    "alert dashboard backup restore archive storage bucket region cluster node service route"
)
WORDS = tuple(_PROSE.split(" "))
FILES = (
    "src/app/main.py",
    "src/app/models.py",
    "docs/runbook.md",
    "config/prod.toml",
    "/srv/data/export.csv",
    "~/notes/plan.md",
    "scripts/deploy.sh",
    "tests/test_api.py",
)
SECRETS = (
    "OPENAI_API_KEY=sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0f",
    "the slack token is xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "password=correct-horse-battery",
    "postgres://app:s3cr3t-pass@db.internal:5432/app",
)


@dataclass(frozen=True)
class FleetSpec:
    """What to build; the same spec always gives the same bytes."""

    agents: int = 100
    transcript_bytes: int = 2_000_000
    sqlite_every: int = 2  # 0: every agent in the file era
    seed: int = 20261122

    @property
    def name(self) -> str:
        size = f"{self.transcript_bytes / 1_000_000:g}mb"
        return f"agents{self.agents}-{size}-sqlite{self.sqlite_every}-seed{self.seed}"


@dataclass
class Fleet:
    """Where a built fleet lives."""

    root: Path
    spec: FleetSpec
    state_dir: Path
    config_path: Path
    workspaces: dict[str, Path] = field(default_factory=dict)
    eras: dict[str, str] = field(default_factory=dict)
    next_turn: dict[str, int] = field(default_factory=dict)


def build_fleet(
    base: Path, spec: FleetSpec, *, rebuild: bool = False, now: datetime | None = None
) -> Fleet:
    """Build the fleet of `spec` under `base/<spec.name>` (or reuse it); return where it is.

    The session stores say the sessions were updated just before `now` (default: the clock)."""
    root = base.resolve() / spec.name  # openclaw.json names the workspaces by absolute path
    stamp = root / ".complete"
    if stamp.exists() and not rebuild and orjson.loads(stamp.read_bytes()) == asdict(spec):
        return _describe(root, spec)
    if root.exists():
        shutil.rmtree(root)
    rng = random.Random(spec.seed)
    pool = _TextPool(rng)
    agents_config = []
    for index in range(spec.agents):
        agent_id = "main" if index == 0 else f"agent{index:03d}"
        workspace = root / "workspaces" / agent_id
        (workspace / "memory").mkdir(parents=True)
        agents_config.append({"id": agent_id, "workspace": str(workspace), "default": index == 0})
        era = "sqlite" if spec.sqlite_every and index % spec.sqlite_every == 1 else "file"
        turns = _write_agent(
            root / "state",
            agent_id,
            era,
            spec.transcript_bytes,
            pool,
            rng,
            now or datetime.now(UTC),
        )
        (root / "turns").mkdir(exist_ok=True)
        (root / "turns" / agent_id).write_text(f"{era} {turns}\n")
    config = {"gateway": {"port": 18789}, "agents": {"list": agents_config}}
    (root / "state" / "openclaw.json").write_bytes(orjson.dumps(config, option=orjson.OPT_INDENT_2))
    stamp.write_bytes(orjson.dumps(asdict(spec)))
    return _describe(root, spec)


def append_turns(fleet: Fleet, turns: int = 1, agents: Collection[str] | None = None) -> None:
    """Append `turns` turns to the main transcript of every agent (or of `agents`), as a live
    gateway would.

    The fleet keeps them: a reused fleet has grown by the turns earlier benchmarks added.
    """
    rng = random.Random(fleet.spec.seed + sum(fleet.next_turn.values()))
    pool = _TextPool(rng)
    for agent_id, era in fleet.eras.items():
        if agents is not None and agent_id not in agents:
            continue
        first = fleet.next_turn[agent_id]
        lines = [line for n in range(first, first + turns) for line in _turn(n, pool, rng)]
        fleet.next_turn[agent_id] = first + turns
        (fleet.root / "turns" / agent_id).write_text(f"{era} {first + turns}\n")
        session_id = _session_id(agent_id, "main")
        agent_dir = fleet.state_dir / "agents" / agent_id
        if era == "file":
            with (agent_dir / "sessions" / f"{session_id}.jsonl").open("ab") as handle:
                handle.write(b"".join(orjson.dumps(line) + b"\n" for line in lines))
        else:
            connection = sqlite3.connect(agent_dir / "agent" / "openclaw-agent.sqlite")
            with connection:
                (last,) = connection.execute(
                    "SELECT max(seq) FROM transcript_events WHERE session_id = ?", (session_id,)
                ).fetchone()
                connection.executemany(
                    "INSERT INTO transcript_events VALUES (?, ?, ?, ?, ?, ?, ?)",
                    _rows(session_id, lines, first_seq=last + 1),
                )
            connection.close()


def _describe(root: Path, spec: FleetSpec) -> Fleet:
    fleet = Fleet(root, spec, root / "state", root / "state" / "openclaw.json")
    for path in sorted((root / "turns").iterdir()):
        era, turns = path.read_text().split()
        fleet.workspaces[path.name] = root / "workspaces" / path.name
        fleet.eras[path.name] = era
        fleet.next_turn[path.name] = int(turns)
    return fleet


def _write_agent(
    state_dir: Path,
    agent_id: str,
    era: str,
    size: int,
    pool: _TextPool,
    rng: random.Random,
    now: datetime,
) -> int:
    """Write one agent's store and transcripts; return how many turns its main session has."""
    main_id, cron_id = _session_id(agent_id, "main"), _session_id(agent_id, "cron")
    main_lines, turns = _main_transcript(main_id, size, pool, rng)
    cron_lines = list(_cron_transcript(cron_id, pool, rng))
    now_ms = int(now.timestamp() * 1000)
    entries = {
        f"agent:{agent_id}:main": _entry(main_id, now_ms - 60_000, 120_000),
        f"agent:{agent_id}:cron:nightly": _entry(cron_id, now_ms, 8_000),
    }
    agent_dir = state_dir / "agents" / agent_id
    if era == "file":
        sessions = agent_dir / "sessions"
        sessions.mkdir(parents=True)
        for session_id, lines in ((main_id, main_lines), (cron_id, cron_lines)):
            with (sessions / f"{session_id}.jsonl").open("wb") as handle:
                handle.write(b"".join(orjson.dumps(line) + b"\n" for line in lines))
        (sessions / "sessions.json").write_bytes(orjson.dumps(entries))
    else:
        database = agent_dir / "agent" / "openclaw-agent.sqlite"
        database.parent.mkdir(parents=True)
        _write_database(database, entries, {main_id: main_lines, cron_id: cron_lines})
    return turns


def _write_database(
    path: Path, entries: dict[str, dict[str, Any]], transcripts: dict[str, list[dict]]
) -> None:
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA journal_mode = WAL")
    with connection:
        for statement in (SESSION_NODES_SQL, SESSION_WINDOWS_SQL, TRANSCRIPT_EVENTS_SQL):
            connection.execute(statement)
        for key, entry in entries.items():
            session_id, updated = entry["sessionId"], entry["updatedAt"]
            connection.execute(
                "INSERT INTO session_nodes (session_key, current_session_id, entry_json, "
                "updated_at, status) VALUES (?, ?, ?, ?, 'done')",
                (key, session_id, orjson.dumps(entry).decode(), updated),
            )
            connection.execute(
                "INSERT INTO session_windows (session_id, session_key, created_at, updated_at) "
                "VALUES (?, ?, ?, ?)",
                (session_id, key, updated, updated),
            )
            connection.executemany(
                "INSERT INTO transcript_events VALUES (?, ?, ?, ?, ?, ?, ?)",
                _rows(session_id, transcripts[session_id], first_seq=0),
            )
    connection.close()


_COMPRESSOR_LEVEL = 3


def _rows(session_id: str, lines: list[dict], first_seq: int) -> Iterator[tuple]:
    created = int(START.timestamp() * 1000)
    for seq, line in enumerate(lines, start=first_seq):
        raw = orjson.dumps(line)
        if len(raw) > COMPRESS_OVER_BYTES:
            blob = zstd.compress(raw, level=_COMPRESSOR_LEVEL)
            yield (session_id, seq, None, created, blob, len(raw), MINIMAL_NAVIGATION_JSON)
        else:
            yield (session_id, seq, raw.decode(), created, None, len(raw), None)


def _entry(session_id: str, updated_ms: int, tokens: int) -> dict[str, Any]:
    return {
        "sessionId": session_id,
        "updatedAt": updated_ms,
        "totalTokens": tokens,
        "totalTokensFresh": True,
        "contextTokens": 200_000,
        "model": "fake-model",
    }


def _session_id(agent_id: str, name: str) -> str:
    digest = hashlib.sha256(f"{agent_id}:{name}".encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-4{digest[13:16]}-8{digest[17:20]}-{digest[20:32]}"


def _main_transcript(
    session_id: str, size: int, pool: _TextPool, rng: random.Random
) -> tuple[list[dict], int]:
    lines: list[dict] = [_header(session_id)]
    total, turn = 0, 0
    while total < size:
        for line in _turn(turn, pool, rng):
            lines.append(line)
            total += len(orjson.dumps(line)) + 1
        turn += 1
    return lines, turn


def _cron_transcript(session_id: str, pool: _TextPool, rng: random.Random) -> Iterator[dict]:
    yield _header(session_id)
    yield from _turn(0, pool, rng)


def _header(session_id: str) -> dict:
    return {
        "type": "session",
        "version": 3,
        "id": session_id,
        "timestamp": _iso(START),
        "cwd": "/srv/openclaw/workspace",
    }


def _turn(number: int, pool: _TextPool, rng: random.Random) -> Iterator[dict]:
    """Yield the lines of one turn: request, tool calls and results, reply."""
    moment = START + timedelta(minutes=2 * number)
    ids = iter(range(10))

    def next_id() -> str:
        return f"t{number:07d}{next(ids)}"

    request = f"request {number}: {pool.text(rng, 60, 400)}"
    if number % 7 == 0:
        request += f" Please look at {rng.choice(FILES)}."
    if number % 23 == 0:
        request += f" {rng.choice(SECRETS)}"
    yield _message(next_id(), moment, "user", request)
    for call in range(rng.randint(1, 3)):
        tool, arguments = _tool_call(rng, pool)
        content = [
            {"type": "thinking", "thinking": pool.text(rng, 80, 600)},
            {"type": "toolCall", "id": f"call{call}", "name": tool, "arguments": arguments},
        ]
        yield _message(next_id(), moment, "assistant", content, usage=True)
        yield _message(
            next_id(), moment, "toolResult", [{"type": "text", "text": pool.text(rng, 300, 5000)}]
        )
    reply = f"reply {number}: {pool.text(rng, 150, 1200)}"
    if number % 5 == 0:
        reply += f"\n\n- [ ] follow up on {rng.choice(WORDS)} {number}\nEdited {rng.choice(FILES)}."
    if number % 31 == 0:
        reply += f"\nTODO: {pool.text(rng, 20, 60)}"
    yield _message(next_id(), moment, "assistant", [{"type": "text", "text": reply}], usage=True)


def _tool_call(rng: random.Random, pool: _TextPool) -> tuple[str, dict]:
    tool = rng.choice(("read", "exec", "write", "edit"))
    if tool == "exec":
        return tool, {"command": f"grep -rn {rng.choice(WORDS)} src/"}
    arguments: dict[str, Any] = {"path": rng.choice(FILES)}
    if tool in ("write", "edit"):
        arguments["content"] = pool.text(rng, 100, 1500)
    return tool, arguments


def _message(
    entry_id: str, moment: datetime, role: str, content: object, usage: bool = False
) -> dict:
    message: dict[str, Any] = {
        "role": role,
        "content": content,
        "timestamp": int(moment.timestamp() * 1000),
    }
    if usage:
        message |= {
            "api": "openai-completions",
            "provider": "fake",
            "model": "fake-model",
            "usage": {"input": 120_000, "output": 300, "cacheRead": 0, "cacheWrite": 0},
            "stopReason": "stop",
        }
    return {
        "type": "message",
        "id": entry_id,
        "parentId": None,
        "timestamp": _iso(moment),
        "message": message,
    }


class _TextPool:
    """Random prose, built once from the seeded RNG and sliced per message (fast, repeatable)."""

    def __init__(self, rng: random.Random) -> None:
        words = [rng.choice(WORDS) for _ in range(20_000)]
        self.text_block = " ".join(words)

    def text(self, rng: random.Random, shortest: int, longest: int) -> str:
        length = rng.randint(shortest, longest)
        start = rng.randint(0, len(self.text_block) - length - 1)
        return self.text_block[start : start + length].strip()


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
