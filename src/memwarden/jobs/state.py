"""`memwarden state backup PATH` and `memwarden state export`: memwarden's own database, copied.

The backup is SQLite's online backup of state.db (consistent even while jobs write), written
under a temp name, checked, then renamed into place with mode 0600. The export is one JSON
document with every table, read in one transaction.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import os
import sqlite3
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from memwarden.fs.files import atomic_write, check_inside, fsync_dir, replace_or_remove, write_temp
from memwarden.jobs.common import add_dry_run, add_verb
from memwarden.process.errors import MemwardenError, UsageError
from memwarden.process.runtime import JobContext, JobResult
from memwarden.store.state import StateDB

EXPORT_FORMAT = "memwarden-state-export"
EXPORT_VERSION = 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    verbs = parser.add_subparsers(dest="verb", metavar="<verb>", required=True)
    backup = add_verb(verbs, "backup", "write a consistent copy of state.db to PATH (0600)")
    backup.add_argument(
        "path", type=Path, metavar="PATH", help="file to write, or a folder to write it into"
    )
    backup.add_argument("--force", action="store_true", help="replace PATH if it exists")
    add_dry_run(backup)
    export = add_verb(verbs, "export", "print every table of state.db as one JSON document")
    export.add_argument(
        "--output", type=Path, metavar="FILE", help="write it to FILE (0600) instead of stdout"
    )
    export.add_argument("--force", action="store_true", help="replace FILE if it exists")
    add_dry_run(export)


def run(context: JobContext, options: argparse.Namespace) -> JobResult:
    if options.verb == "backup":
        return _backup(context, options)
    return _export(context, options)


def backup_target(path: Path, now: datetime) -> Path:
    """Given PATH as typed and the time, return the file to write (a folder gets a dated name)."""
    if path.is_dir() and not path.is_symlink():
        return path / f"memwarden-state-{now.strftime('%Y%m%dT%H%M%SZ')}.db"
    return path


def backup_database(state: StateDB, target: Path) -> int:
    """Copy `state` to `target` atomically (0600, journal mode DELETE), checked; return its size.

    Raise MemwardenError if the copy fails its integrity check.
    """
    temp = write_temp(target, b"")  # an empty 0600 file beside the target, copied into
    try:
        with contextlib.closing(sqlite3.connect(temp)) as copy:
            state.connection.backup(copy)
            copy.execute("PRAGMA journal_mode = DELETE")
            verdict = copy.execute("PRAGMA integrity_check").fetchone()[0]
        if verdict != "ok":
            raise MemwardenError(f"{target}: the copy failed its integrity check: {verdict}")
        with open(temp, "rb") as handle:
            os.fsync(handle.fileno())
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    replace_or_remove(temp, target)
    fsync_dir(target.parent)
    return target.stat().st_size


def export_document(state: StateDB, now: datetime) -> dict[str, Any]:
    """Return every table of `state` as {table: [row, …]}, read in one transaction.

    Columns named `*_json` are parsed; binary values become {"base64": …}.
    """
    connection = state.connection
    connection.execute("BEGIN")
    try:
        names = [
            row[0]
            for row in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' "
                "AND name NOT LIKE 'sqlite_%' ORDER BY name"
            )
        ]
        tables = {name: [_row(row) for row in _all_rows(connection, name)] for name in names}
    finally:
        connection.execute("COMMIT")
    return {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "exported_at": now.isoformat(),
        "database": str(state.path),
        "schema_version": state.schema_version(),
        "tables": tables,
    }


def _backup(context: JobContext, options: argparse.Namespace) -> JobResult:
    source = context.storage_dir / "state.db"
    target = _checked_target(backup_target(options.path, context.now()), options.force)
    result = JobResult("state", data={"database": str(source), "backup": str(target)})
    if options.dry_run:
        size = source.stat().st_size if source.exists() else 0
        result.lines = [f"would back up {source} ({size:,} bytes) to {target}"]
        result.data["dry_run"] = True
        return result
    size = backup_database(context.state, target)
    result.data |= {"bytes": size, "schema_version": context.state.schema_version()}
    result.lines = [f"backed up {source} to {target} ({size:,} bytes, integrity ok)"]
    return result


def _export(context: JobContext, options: argparse.Namespace) -> JobResult:
    document = export_document(context.state, context.now())
    result = JobResult("state")
    if options.output is None:
        result.data = {"export": document}
        result.lines = [orjson.dumps(document, option=orjson.OPT_INDENT_2).decode()]
        return result
    target = _checked_target(options.output, options.force)
    rows = sum(len(rows) for rows in document["tables"].values())
    result.data = {"output": str(target), "tables": len(document["tables"]), "rows": rows}
    if options.dry_run:
        result.lines = [f"would export {rows} rows of {len(document['tables'])} tables to {target}"]
        result.data["dry_run"] = True
        return result
    atomic_write(target, orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
    result.lines = [f"exported {rows} rows of {len(document['tables'])} tables to {target}"]
    return result


def _checked_target(target: Path, force: bool) -> Path:
    if not target.parent.is_dir():
        raise UsageError(f"{target}: folder {target.parent} does not exist; create it first")
    checked = check_inside(target, target.parent)
    if checked.exists() and not force:
        raise UsageError(f"{target}: exists; choose another name or pass --force to replace it")
    if checked.is_dir():
        raise UsageError(f"{target}: is a folder")
    return checked


def _all_rows(connection: sqlite3.Connection, table: str) -> list[sqlite3.Row]:
    quoted = table.replace('"', '""')
    # The name comes from sqlite_master, not from the user.
    return connection.execute(f'SELECT * FROM "{quoted}"').fetchall()  # noqa: S608


def _row(row: sqlite3.Row) -> dict[str, Any]:
    out = {}
    for key in row.keys():  # noqa: SIM118 - sqlite3.Row is not a mapping
        value = row[key]
        if isinstance(value, bytes):
            value = {"base64": base64.b64encode(value).decode("ascii")}
        elif key.endswith("_json") and isinstance(value, str):
            value = orjson.loads(value)
        out[key] = value
    return out
