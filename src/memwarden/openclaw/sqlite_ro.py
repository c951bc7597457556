"""Read-only access to the gateway's SQLite databases.

The gateway owns these files, runs them in WAL mode and uses a newer SQLite than Python's, so
memwarden opens them with `mode=ro`, keeps each read in one short transaction, never writes, and
retries briefly when the database is locked or busy.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar
from urllib.parse import quote

from memwarden.process.errors import StoreError

T = TypeVar("T")

BUSY_TIMEOUT_SECONDS = 0.5
RETRY_ATTEMPTS = 4
RETRY_PAUSE_SECONDS = 0.1


def connect_readonly(path: Path) -> sqlite3.Connection:
    """Given a database path, return a read-only connection. Raise StoreError if it cannot open."""
    uri = f"file:{quote(str(path))}?mode=ro"
    try:
        connection = sqlite3.connect(
            uri, uri=True, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None
        )
    except sqlite3.Error as error:
        raise StoreError(f"{path}: cannot open the gateway database read-only: {error}") from error
    connection.execute("PRAGMA query_only = ON")
    return connection


# Keyed by thread too: a sqlite3 connection may only be used by the thread that opened it.
_open_connections: dict[tuple[int, Path], sqlite3.Connection] = {}


def read_with_retry(path: Path, read: Callable[[sqlite3.Connection], T]) -> T:
    """Run `read(connection)` in one short read transaction on `path`, retrying while busy.

    The connection is kept for the rest of the process (outside transactions it holds no lock):
    parsing the gateway's large schema costs about a millisecond per new connection, and a job
    reads the same agent database several times. Raise StoreError naming the file when the
    database stays locked or cannot be read.
    """
    last_error: sqlite3.Error | None = None
    for attempt in range(RETRY_ATTEMPTS):
        try:
            connection = _connection(path)
            connection.text_factory = str  # a reader may have changed it on the shared connection
            connection.execute("BEGIN")
            try:
                return read(connection)
            finally:
                connection.execute("COMMIT")
        except sqlite3.DatabaseError as error:
            close(path)
            last_error = error
            if not _is_transient(error):
                break
            time.sleep(RETRY_PAUSE_SECONDS * (attempt + 1))
    raise StoreError(f"{path}: cannot read the gateway database: {last_error}")


def _is_transient(error: sqlite3.DatabaseError) -> bool:
    text = str(error).lower()
    return isinstance(error, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def close(path: Path) -> None:
    """Close this thread's kept connection to `path`, if there is one."""
    connection = _open_connections.pop((threading.get_ident(), path), None)
    if connection is not None:
        connection.close()


def _connection(path: Path) -> sqlite3.Connection:
    key = (threading.get_ident(), path)
    connection = _open_connections.get(key)
    if connection is None:
        connection = connect_readonly(path)
        _open_connections[key] = connection
    return connection
