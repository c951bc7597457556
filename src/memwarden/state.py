"""memwarden's own SQLite database: job runs, events, read positions, and each job's tables.

WAL mode, short transactions, and versioned migrations: every `migrations/NNNN_name.sql` file is
applied once, in order, and recorded in `schema_migrations`.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from memwarden.errors import MemwardenError
from memwarden.files import ensure_dir

BUSY_TIMEOUT_MS = 5000
MEMORY = ":memory:"


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


# The package folder itself (memwarden is installed as files): importlib.resources would cost
# every job about 6 ms of imports (it pulls in zipfile and tempfile) for six small files.
MIGRATIONS_DIR = Path(__file__).with_name("migrations")


def bundled_migrations() -> list[Migration]:
    """Return the migrations shipped in memwarden/migrations, ordered by version."""
    found = []
    for entry in MIGRATIONS_DIR.iterdir():
        name = entry.name
        if name.endswith(".sql") and name[:4].isdigit():
            found.append(Migration(int(name[:4]), name[5:-4], entry.read_text(encoding="utf-8")))
    return sorted(found, key=lambda migration: migration.version)


@dataclass(frozen=True)
class Run:
    id: int
    job: str
    started_at: float
    finished_at: float | None
    exit_code: int | None
    dry_run: bool
    summary: dict[str, Any]


class StateDB:
    """A connection to state.db with the schema brought up to date (`Path(":memory:")`: an
    empty database that lives in memory, for runs that must create nothing)."""

    def __init__(self, path: Path, migrations: list[Migration] | None = None) -> None:
        self.path = path
        in_memory = str(path) == MEMORY
        if not in_memory:
            ensure_dir(path.parent)
        fresh = not in_memory and not path.exists()
        try:
            self.connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000)
        except sqlite3.Error as error:
            message = f"{path}: cannot open memwarden's state database: {error}"
            raise MemwardenError(message) from error
        if fresh:
            os.chmod(path, 0o600)
        self.connection.row_factory = sqlite3.Row
        self.connection.isolation_level = None
        self.connection.execute("PRAGMA journal_mode = WAL")
        self.connection.execute("PRAGMA synchronous = NORMAL")
        self.connection.execute("PRAGMA foreign_keys = ON")
        self.migrate(bundled_migrations() if migrations is None else migrations)

    def close(self) -> None:
        self.connection.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Run a block in one IMMEDIATE transaction; commit on success, roll back on error."""
        self.connection.execute("BEGIN IMMEDIATE")
        try:
            yield self.connection
        except BaseException:
            self.connection.execute("ROLLBACK")
            raise
        self.connection.execute("COMMIT")

    def migrate(self, migrations: list[Migration]) -> list[int]:
        """Apply the migrations not yet recorded; return the versions applied now."""
        self.connection.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations "
            "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL)"
        )
        applied = self._applied_versions()
        done = []
        for migration in migrations:
            if migration.version in applied:
                continue
            with self.transaction() as connection:
                # Two jobs starting together on a fresh state dir both see the migration as missing;
                # the write lock taken by BEGIN IMMEDIATE makes the second one see it applied here.
                if migration.version in self._applied_versions():
                    continue
                for statement in _statements(migration.sql):
                    connection.execute(statement)
                connection.execute(
                    "INSERT INTO schema_migrations VALUES (?, ?, ?)",
                    (migration.version, migration.name, time.time()),
                )
            done.append(migration.version)
        return done

    def _applied_versions(self) -> set[int]:
        rows = self.connection.execute("SELECT version FROM schema_migrations")
        return {row[0] for row in rows}

    def schema_version(self) -> int:
        row = self.connection.execute("SELECT max(version) FROM schema_migrations").fetchone()
        return row[0] or 0

    # runs ---------------------------------------------------------------------------------

    def start_run(self, job: str, dry_run: bool = False, now: float | None = None) -> int:
        """Record that `job` started; return the run id."""
        cursor = self.connection.execute(
            "INSERT INTO runs (job, started_at, dry_run, pid) VALUES (?, ?, ?, ?)",
            (job, now or time.time(), int(dry_run), os.getpid()),
        )
        return int(cursor.lastrowid)

    def finish_run(
        self, run_id: int, exit_code: int, summary: Mapping[str, Any], now: float | None = None
    ) -> None:
        self.connection.execute(
            "UPDATE runs SET finished_at = ?, exit_code = ?, summary_json = ? WHERE id = ?",
            (now or time.time(), exit_code, _dumps(summary), run_id),
        )

    def last_runs(self, job: str, limit: int = 1, include_dry_run: bool = False) -> list[Run]:
        """Return the latest finished runs of `job`, newest first."""
        rows = self.connection.execute(
            "SELECT * FROM runs WHERE job = ? AND finished_at IS NOT NULL "
            "AND (dry_run = 0 OR ?) ORDER BY started_at DESC LIMIT ?",
            (job, int(include_dry_run), limit),
        ).fetchall()
        return [_run(row) for row in rows]

    def last_success(self, job: str) -> Run | None:
        row = self.connection.execute(
            "SELECT * FROM runs WHERE job = ? AND exit_code = 0 AND dry_run = 0 "
            "ORDER BY started_at DESC LIMIT 1",
            (job,),
        ).fetchone()
        return _run(row) if row else None

    # events -------------------------------------------------------------------------------

    def record_event(
        self,
        type: str,
        *,
        job: str | None = None,
        run_id: int | None = None,
        agent_id: str | None = None,
        session_key: str | None = None,
        session_id: str | None = None,
        data: Mapping[str, Any] | None = None,
        ts: float | None = None,
    ) -> int:
        """Append a typed event to the timeline; return its id."""
        cursor = self.connection.execute(
            "INSERT INTO events (ts, type, job, run_id, agent_id, session_key, session_id, "
            "data_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                ts or time.time(),
                type,
                job,
                run_id,
                agent_id,
                session_key,
                session_id,
                _dumps(data) if data else None,
            ),
        )
        return int(cursor.lastrowid)

    def events(
        self,
        *,
        agent_id: str | None = None,
        types: list[str] | None = None,
        since: float | None = None,
        limit: int = 1000,
    ) -> list[dict[str, Any]]:
        """Return events, newest last, filtered by agent, type(s) and start time."""
        clauses, params = [], []
        if agent_id:
            clauses.append("agent_id = ?")
            params.append(agent_id)
        if types:
            clauses.append(f"type IN ({', '.join('?' * len(types))})")
            params.extend(types)
        if since is not None:
            clauses.append("ts >= ?")
            params.append(since)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = self.connection.execute(
            f"SELECT * FROM (SELECT * FROM events {where} ORDER BY ts DESC, id DESC LIMIT ?) "  # noqa: S608
            "ORDER BY ts, id",
            (*params, limit),
        ).fetchall()
        return [_event(row) for row in rows]

    # read positions -----------------------------------------------------------------------

    def get_position(self, consumer: str, agent_id: str, session_key: str) -> dict[str, Any] | None:
        """Return the stored read position row for a session, or None."""
        row = self.connection.execute(
            "SELECT * FROM read_positions WHERE consumer = ? AND agent_id = ? AND session_key = ?",
            (consumer, agent_id, session_key),
        ).fetchone()
        if row is None:
            return None
        return {
            "session_id": row["session_id"],
            "position": orjson.loads(row["position_json"]),
            "last_entry_at": row["last_entry_at"],
            "data": orjson.loads(row["data_json"]) if row["data_json"] else {},
            "updated_at": row["updated_at"],
        }

    def set_position(
        self,
        consumer: str,
        agent_id: str,
        session_key: str,
        session_id: str,
        position: Any,
        last_entry_at: float | None = None,
        data: Mapping[str, Any] | None = None,
    ) -> None:
        self.connection.execute(
            "INSERT INTO read_positions VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (consumer, agent_id, session_key) DO UPDATE SET "
            "session_id = excluded.session_id, position_json = excluded.position_json, "
            "last_entry_at = excluded.last_entry_at, data_json = excluded.data_json, "
            "updated_at = excluded.updated_at",
            (
                consumer,
                agent_id,
                session_key,
                session_id,
                _dumps(position),
                last_entry_at,
                _dumps(data) if data else None,
                time.time(),
            ),
        )


def _statements(sql: str) -> list[str]:
    """Split a migration into statements (trigger bodies contain semicolons of their own)."""
    statements, buffer = [], ""
    for line in sql.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip() and not buffer.strip().startswith("--"):
        statements.append(buffer.strip())
    return statements


def _dumps(value: Any) -> str:
    return orjson.dumps(value, default=str).decode("utf-8")


def _run(row: sqlite3.Row) -> Run:
    return Run(
        id=row["id"],
        job=row["job"],
        started_at=row["started_at"],
        finished_at=row["finished_at"],
        exit_code=row["exit_code"],
        dry_run=bool(row["dry_run"]),
        summary=orjson.loads(row["summary_json"]) if row["summary_json"] else {},
    )


def _event(row: sqlite3.Row) -> dict[str, Any]:
    event = dict(zip(row.keys(), tuple(row), strict=True))
    event.pop("data_json")
    event["data"] = orjson.loads(row["data_json"]) if row["data_json"] else {}
    return event
