"""The kept read-only connections of `openclaw.sqlite_ro` under threads.

Threads that each open a connection to their agent's database and close it when the agent is
done: a thread closing its own must never trip over another thread adding one.
"""

from __future__ import annotations

import sqlite3
import sys
import threading

from memwarden.openclaw import sqlite_ro

THREADS = 12
ROUNDS = 3
CYCLES = 300


def make_databases(folder, count):
    paths = []
    for number in range(count):
        path = folder / f"agent{number}.sqlite"
        connection = sqlite3.connect(path)
        connection.execute("CREATE TABLE session_nodes (session_key TEXT)")
        connection.commit()
        connection.close()
        paths.append(path)
    return paths


def open_and_close(path, cycles, errors):
    try:
        for _ in range(cycles):
            sqlite_ro.read_with_retry(path, lambda db: db.execute("SELECT 1").fetchone())
            sqlite_ro.close(path)
    except Exception as error:  # noqa: BLE001 - collected and asserted on in the test thread
        errors.append(error)


def test_close_while_other_threads_open_connections_never_fails(tmp_path):
    paths = make_databases(tmp_path, THREADS)
    errors: list[Exception] = []
    saved = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: every race gets its chance
    try:
        for _ in range(ROUNDS):
            threads = [
                threading.Thread(target=open_and_close, args=(path, CYCLES, errors))
                for path in paths
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
    finally:
        sys.setswitchinterval(saved)

    assert errors == []
    assert not [key for key in sqlite_ro._open_connections if key[1] in paths]
