"""The length of each of the gateway's bootstrap files a snapshot holds, recorded with it.

Every snapshot records `{path: characters}` for the gateway's own bootstrap files it holds
(AGENTS.md, MEMORY.md, …; `openclaw.bootstrap.GATEWAY_BOOTSTRAP`), counted as the gateway
counts them (UTF-16 units, end trimmed), in `history_snapshots.bootstrap_json`. Health's budget
forecast reads their growth from the state database with one query: no git process, no file read.
Only the files that changed are measured; the others keep the length the last snapshot recorded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import orjson

from memwarden.fs.files import read_bytes
from memwarden.openclaw.bootstrap import GATEWAY_BOOTSTRAP, js_length
from memwarden.store.state import StateDB

# One agent's recorded lengths over time: [(snapshot time, {path: characters})], oldest first.
Series = list[tuple[float, dict[str, int]]]


def measure(
    workspace: Path,
    current: Iterable[str],
    contents: Mapping[str, bytes],
    carried: Callable[[], Mapping[str, int] | None],
) -> dict[str, int]:
    """Given a workspace, the paths a snapshot holds, the bytes of those it read (the changed
    ones) and a function returning the lengths the previous snapshot recorded (None: none
    recorded), return the length of each gateway bootstrap file among the paths. An unchanged
    file keeps its recorded length; one never recorded (the first snapshot after an upgrade) is
    read from the workspace. `carried` is called only when an unchanged one is there.

    Raise OSError or UnsafePathError if such a file cannot be read.
    """
    paths = sorted(set(current).intersection(GATEWAY_BOOTSTRAP))
    if not paths:
        return {}  # memory/ files alone: nothing to measure, nothing to look up

    recorded_lengths = carried() if any(path not in contents for path in paths) else None
    lengths = {}
    for path in paths:
        if path in contents:
            data = contents[path]
        elif recorded_lengths is not None and path in recorded_lengths:
            lengths[path] = recorded_lengths[path]
            continue
        else:
            try:
                data = read_bytes(workspace / path)
            except FileNotFoundError:
                continue  # removed since the scan
        lengths[path] = js_length(data.decode("utf-8", errors="replace"))
    return lengths


def series(state: StateDB, since: float) -> dict[str, Series]:
    """Return, by agent, the lengths in force at `since` (the agent's last recording before it,
    if any) then every change recorded from `since` on, oldest first.

    Snapshots whose lengths equal the one before are left out (compared as text, parsed only
    when they differ): most snapshots change memory/ files, not the bootstrap files, and the
    forecast needs only the changes. Both queries walk the (agent, time) index.
    """
    before = state.connection.execute(
        "SELECT agent_id, created_at, bootstrap_json FROM history_snapshots WHERE rowid IN ("
        " SELECT (SELECT rowid FROM history_snapshots WHERE agent_id = agents.agent_id"
        "  AND created_at < ? AND bootstrap_json IS NOT NULL"
        "  ORDER BY created_at DESC, rowid DESC LIMIT 1)"
        " FROM (SELECT DISTINCT agent_id FROM history_snapshots) AS agents)",
        (since,),
    ).fetchall()
    since_then = state.connection.execute(
        "SELECT agent_id, created_at, bootstrap_json FROM history_snapshots "
        "WHERE created_at >= ? AND bootstrap_json IS NOT NULL "
        "ORDER BY agent_id, created_at, rowid",
        (since,),
    ).fetchall()
    found: dict[str, Series] = {}
    last: dict[str, str] = {}
    for agent_id, created_at, text in [*before, *since_then]:  # an agent's rows in time order
        if last.get(agent_id) == text:
            continue
        last[agent_id] = text
        found.setdefault(agent_id, []).append((created_at, orjson.loads(text)))
    return found
