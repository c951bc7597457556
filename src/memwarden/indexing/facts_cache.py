"""What `memwarden index` keeps in memwarden's state database.

`index_file_facts`: each pool file's facts, reused while its (size, mtime_ns, inode) is unchanged.
`index_outputs`: per workspace, the digest of the inputs of the INDEX.md last written, the hash of
that file, and what the job reported about it, so an unchanged folder is not rendered again.
"""

from __future__ import annotations

import time
from typing import Any

import orjson

from memwarden.indexing.markers import MARKERS
from memwarden.indexing.scan import FactsUpdate, FileFacts
from memwarden.state import StateDB


def load_facts(state: StateDB, workspace: str) -> dict[str, FileFacts]:
    """Given the state DB and a workspace's real path, return its cached facts by path."""
    rows = state.connection.execute(
        "SELECT path, size, mtime_ns, inode, title, markers_json FROM index_file_facts "
        "WHERE workspace = ?",
        (workspace,),
    )
    cached = {}
    for path, size, mtime_ns, inode, title, markers_json in rows:
        markers = _markers(markers_json)
        if markers is not None:  # a row that does not decode is read again from the file
            cached[path] = FileFacts(path, size, mtime_ns, inode, title, markers)
    return cached


def store_facts(state: StateDB, workspace: str, update: FactsUpdate) -> None:
    """Write the changed facts of a workspace and forget its removed files, in one transaction."""
    if not update.changed and not update.removed:
        return
    with state.transaction() as connection:
        connection.executemany(
            "INSERT OR REPLACE INTO index_file_facts VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    workspace,
                    facts.path,
                    facts.size,
                    facts.mtime_ns,
                    facts.inode,
                    facts.title,
                    orjson.dumps(facts.markers).decode(),
                )
                for facts in update.changed
            ],
        )
        connection.executemany(
            "DELETE FROM index_file_facts WHERE workspace = ? AND path = ?",
            [(workspace, path) for path in update.removed],
        )


def _markers(text: str) -> tuple[int, ...] | None:
    try:
        counts = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(counts, list) or len(counts) != len(MARKERS):
        return None
    if not all(type(count) is int for count in counts):
        return None
    return tuple(counts)


def load_output(state: StateDB, workspace: str) -> tuple[str, str, dict[str, Any]] | None:
    """Return (inputs digest, INDEX.md sha256, reported outcome) of a workspace, or None."""
    row = state.connection.execute(
        "SELECT inputs_sha256, index_sha256, outcome_json FROM index_outputs WHERE workspace = ?",
        (workspace,),
    ).fetchone()
    if row is None:
        return None
    try:
        outcome = orjson.loads(row[2])
    except orjson.JSONDecodeError:
        return None
    return row[0], row[1], outcome if isinstance(outcome, dict) else {}


def store_output(
    state: StateDB, workspace: str, inputs: str, index_sha256: str, outcome: dict[str, Any]
) -> None:
    """Remember the INDEX.md of a workspace and the digest of what it was made from."""
    state.connection.execute(
        "INSERT OR REPLACE INTO index_outputs VALUES (?, ?, ?, ?, ?)",
        (workspace, inputs, index_sha256, orjson.dumps(outcome).decode(), time.time()),
    )
