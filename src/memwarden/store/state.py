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
from dataclasses import fields
from pathlib import Path
from typing import Any, NamedTuple, TypeVar
from urllib.parse import quote

import orjson

from memwarden.fs.files import ensure_dir
from memwarden.process.errors import StateError, describe_os_error

T = TypeVar("T")
BUSY_TIMEOUT_MS = 5000
MEMORY = ":memory:"
# SQLite's primary result codes for a database that cannot be used as it is (sqlite3.h), as
# opposed to a mistake in a statement: those become StateError, naming the file and the fix.
_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_FULL = 5, 6, 13
_SQLITE_UNUSABLE = frozenset({3, 5, 6, 7, 8, 10, 11, 13, 14, 15, 26})  # PERM … NOTADB
_SQLITE_DAMAGED = frozenset({11, 26})  # CORRUPT, NOTADB


class Migration(NamedTuple):
    version: int
    name: str
    sql: str


# The package folder itself (memwarden is installed as files): importlib.resources would cost
# every job about 6 ms of imports (it pulls in zipfile and tempfile) for six small files.
MIGRATIONS_DIR = Path(__file__).with_name("migrations")


def bundled_migrations() -> list[Migration]:
    """Return the migrations shipped in memwarden/store/migrations, ordered by version."""
    return sorted(
        Migration(int(entry.name[:4]), entry.name[5:-4], entry.read_text(encoding="utf-8"))
        for entry in MIGRATIONS_DIR.glob("[0-9][0-9][0-9][0-9]_*.sql")
    )


class Run(NamedTuple):
    id: int
    job: str
    started_at: float
    finished_at: float | None
    exit_code: int | None
    dry_run: bool
    summary: dict[str, Any]


# This process's read-only connection to a state database (`reader`): the pid says whose, since
# a connection never crosses a fork.
_reader: tuple[int, Path, sqlite3.Connection] | None = None


def reader(path: Path) -> sqlite3.Connection:
    """Return this process's read-only connection to the state database at `path`, opened at the
    first call and kept for the next (a forked worker opens its own); StateDB.close closes it."""
    global _reader
    if _reader is not None and _reader[:2] == (os.getpid(), path):
        return _reader[2]
    if _reader is not None:
        close_reader(_reader[1])  # of another database
    connection = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True, timeout=30)
    _reader = (os.getpid(), path, connection)
    return connection


def close_reader(path: Path) -> None:
    """Close this process's reader of the state database at `path`, if it has one."""
    global _reader
    if _reader is not None and _reader[:2] == (os.getpid(), path):
        _reader[2].close()
        _reader = None


class StateConnection(sqlite3.Connection):
    """A connection to state.db whose statements raise StateError, naming the file and the fix,
    when the database cannot be used (locked past the busy timeout, disk full, read-only,
    damaged); a mistake in a statement stays a sqlite3 error."""

    state_path: Path = Path("state.db")

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        try:
            return super().execute(sql, parameters)
        except sqlite3.Error as error:
            raise _as_state_error(self.state_path, error) from error

    def executemany(self, sql: str, parameters: Any, /) -> sqlite3.Cursor:
        try:
            return super().executemany(sql, parameters)
        except sqlite3.Error as error:
            raise _as_state_error(self.state_path, error) from error


class StateDB:
    """A connection to state.db with the schema brought up to date (`Path(":memory:")`: an
    empty database that lives in memory, for runs that must create nothing).

    Raise StateError (one line naming the file and the fix) if it cannot be opened or used.
    """

    def __init__(self, path: Path, migrations: list[Migration] | None = None) -> None:
        self.path = path
        in_memory = str(path) == MEMORY
        try:
            if not in_memory:
                ensure_dir(path.parent)
            fresh = not in_memory and not path.exists()
            self.connection = sqlite3.connect(
                path, timeout=BUSY_TIMEOUT_MS / 1000, factory=StateConnection
            )
            if fresh:
                os.chmod(path, 0o600)
        except sqlite3.Error as error:
            raise _as_state_error(path, error) from error
        except OSError as error:
            raise StateError(describe_os_error(error, "cannot create memwarden's state")) from error
        self.connection.state_path = path
        self.connection.row_factory = sqlite3.Row
        self.connection.isolation_level = None
        try:
            self.connection.execute("PRAGMA journal_mode = WAL")
            self.connection.execute("PRAGMA synchronous = NORMAL")
            self.connection.execute("PRAGMA foreign_keys = ON")
            self.migrate(bundled_migrations() if migrations is None else migrations)
        except BaseException:
            self.connection.close()
            raise

    def close(self) -> None:
        """Close this process's reader of the file first (`reader`), so that this connection,
        the last, takes SQLite's -wal and -shm files away with it."""
        close_reader(self.path)
        self.connection.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Run a block in one IMMEDIATE transaction; commit on success, roll back on error
        (a failed COMMIT, the disk full, rolls back too: the connection stays usable)."""
        self.connection.execute("BEGIN IMMEDIATE")
        try:
            yield self.connection
            self.connection.execute("COMMIT")
        except BaseException:
            if self.connection.in_transaction:
                self.connection.execute("ROLLBACK")
            raise

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
            (now or time.time(), exit_code, json_text(summary), run_id),
        )

    def last_runs(self, job: str, limit: int = 1) -> list[Run]:
        """Return the latest finished runs of `job` that were not dry runs, newest first."""
        rows = self.connection.execute(
            "SELECT * FROM runs WHERE job = ? AND finished_at IS NOT NULL "
            "AND dry_run = 0 ORDER BY started_at DESC LIMIT ?",
            (job, limit),
        ).fetchall()
        return [_run(row) for row in rows]

    def recorded_jobs(self) -> list[str]:
        """Return the names of the jobs that have recorded a run, sorted."""
        rows = self.connection.execute("SELECT DISTINCT job FROM runs ORDER BY job").fetchall()
        return [job for (job,) in rows]

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
                json_text(data) if data else None,
            ),
        )
        return int(cursor.lastrowid)

    def events(
        self,
        *,
        types: list[str] | None = None,
        since: float | None = None,
        limit: int = 1000,
        agent_id: str | None = None,
    ) -> list[dict[str, Any]]:
        """Return events, newest last, filtered by type(s) (None: every type), start time and
        agent (whose filter keeps the events of no particular agent)."""
        clauses, params = [], []
        if types is not None:
            clauses.append(f"type IN ({', '.join('?' * len(types))})")
            params.extend(types)
        if agent_id:
            clauses.append("(agent_id = ? OR agent_id IS NULL)")
            params.append(agent_id)
        if since is not None:
            clauses.append("ts >= ?")
            params.append(since)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = self.connection.execute(
            f"SELECT * FROM (SELECT * FROM events {where} ORDER BY ts DESC, id DESC LIMIT ?) "  # noqa: S608
            "ORDER BY ts, id",
            (*params, limit),
        ).fetchall()
        return [event_of(row) for row in rows]

    # read positions -----------------------------------------------------------------------

    def agent_positions(self, consumer: str, agent_id: str) -> dict[str, tuple[str, Any]]:
        """Return the stored session id and read position of every session of an agent, by
        session key (one query for an agent of 100k sessions, not one each; only the columns
        a watch over all of them compares)."""
        rows = self.connection.execute(
            "SELECT session_key, session_id, position_json FROM read_positions "
            "WHERE consumer = ? AND agent_id = ?",
            (consumer, agent_id),
        )
        return {key: (session_id, orjson.loads(position)) for key, session_id, position in rows}

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
                json_text(position),
                last_entry_at,
                json_text(data) if data else None,
                time.time(),
            ),
        )


class UnavailableState:
    """Stands in for a StateDB that cannot be opened (a full disk): any use raises the StateError
    saying why, so a job that runs without its state (health) can hand it to code that reads
    the state, and that code reports the reason instead of failing the job."""

    def __init__(self, error: StateError) -> None:
        self.error = error

    def __getattr__(self, name: str) -> Any:
        raise StateError(self.error.message)


def _as_state_error(path: Path, error: sqlite3.Error) -> Exception:
    """Given a sqlite3 error on state.db, return the StateError to raise instead, or the error
    itself when it is a mistake in a statement (a bug, not the database's condition)."""
    code = getattr(error, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    if primary not in _SQLITE_UNUSABLE:
        return error
    if primary in (_SQLITE_BUSY, _SQLITE_LOCKED):
        return StateError(
            f"{path}: memwarden's state database is locked by another process (waited "
            f"{BUSY_TIMEOUT_MS // 1000} s); run again later (`lsof {path}` shows who holds it)"
        )
    if primary == _SQLITE_FULL or _disk_full(path.parent):
        return StateError(
            f"{path}: cannot write memwarden's state database: the disk is full; free space on "
            f"the filesystem of {path.parent} (`df -h {path.parent}`)"
        )
    if primary in _SQLITE_DAMAGED:
        return StateError(
            f"{path}: memwarden's state database is damaged ({error}); move it aside and "
            "memwarden starts a new one (run history, alert state and read positions start over)"
        )
    return StateError(
        f"{path}: cannot use memwarden's state database ({error}); check that {path.parent} is "
        "a folder this user can write and that its disk works"
    )


def _disk_full(folder: Path) -> bool:
    """Return True when the filesystem of `folder` has no block left for this user (SQLite
    reports a full disk as a "disk I/O error" when its shared-memory file cannot grow)."""
    try:
        info = os.statvfs(folder)
    except OSError:
        return False
    return info.f_bavail * info.f_frsize < 64 * 1024


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


def json_text(value: Any) -> str:
    """Return `value` as JSON text (what is not JSON, as its str)."""
    return orjson.dumps(value, default=str).decode("utf-8")


def from_row(kind: type[T], row: sqlite3.Row, **computed: Any) -> T:
    """Given a record class (a dataclass or a NamedTuple), a row whose columns are named as its
    fields and the values of the fields that are not plain columns, return the record."""
    names = kind._fields if issubclass(kind, tuple) else [f.name for f in fields(kind)]  # type: ignore[arg-type, attr-defined]
    plain = {name: row[name] for name in names if name not in computed}
    return kind(**plain, **computed)


def _run(row: sqlite3.Row) -> Run:
    summary = orjson.loads(row["summary_json"]) if row["summary_json"] else {}
    return from_row(Run, row, dry_run=bool(row["dry_run"]), summary=summary)


def event_of(row: sqlite3.Row) -> dict[str, Any]:
    """Given a row of the events table, return the event, its data decoded."""
    event = dict(row)
    data = event.pop("data_json")
    event["data"] = orjson.loads(data) if data else {}
    return event
