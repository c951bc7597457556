"""What `memwarden index` keeps in memwarden's state database.

`index_outputs`: per workspace, the digest of the inputs of the INDEX.md last written, the hash of
that file, and what the job reported about it, so an unchanged folder is not rendered again.
"""

from __future__ import annotations

import time
from typing import Any

import orjson

from memwarden.store.state import StateDB


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
