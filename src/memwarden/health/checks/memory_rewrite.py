"""Destructive rewrites of the root memory files, and workspaces history could not snapshot.

Every snapshot (checkpoint, rotate, index, and health's own scan before the checks) compares the
guarded root files (`history.root_files`) with the snapshot before; a file that lost more than
`history.guard_drop_share` of its entries or sections, or gained raw `Candidate:` lines, is
recorded as a `memory.rewrite` event (see memwarden.history.guard for the rule). This check keeps
each one a warning for `health.rewrite_window_hours`, naming the file, what was dropped, the
snapshot to go back to and the one-file rewind, until a rewind restores that file.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from memwarden.health.checks import HealthInputs
from memwarden.health.model import CheckResult, ok, warning

KEY = "memory.rewrite"
SNAPSHOT_KEY = "history.snapshot"
REWRITE_EVENT = "memory.rewrite"
REWIND_EVENT = "rewind.done"


def check_memory_rewrite(inputs: HealthInputs) -> list[CheckResult]:
    """Given the inputs, return a warning per root file destructively rewritten within the
    window and not rewound since (`memory.rewrite:<agent>:<file>`), else `memory.rewrite` ok."""
    hours = inputs.health.rewrite_window_hours
    since = (inputs.now - timedelta(hours=hours)).timestamp()
    events = inputs.state.events(types=[REWRITE_EVENT, REWIND_EVENT], since=since, limit=10_000)
    return grade_rewrites(events, hours)


def grade_rewrites(events: Sequence[dict[str, Any]], hours: int) -> list[CheckResult]:
    """Given the `memory.rewrite` and `rewind.done` events of the window, oldest first, return
    the results: the newest rewrite of each agent's file, unless a later rewind restored it."""
    open_rewrites: dict[tuple[str, str], dict[str, Any]] = {}
    for event in events:
        agent_id, data = event.get("agent_id") or "?", event.get("data") or {}
        if event["type"] == REWRITE_EVENT:
            open_rewrites[(agent_id, str(data.get("file")))] = event
        else:
            for path in data.get("restored") or []:
                open_rewrites.pop((agent_id, path), None)
    if not open_rewrites:
        return [ok(KEY, f"no destructive rewrite of a root memory file in the last {hours} h")]
    return [
        _warning(agent_id, path, event["data"])
        for (agent_id, path), event in sorted(open_rewrites.items())
    ]


def _warning(agent_id: str, path: str, data: dict[str, Any]) -> CheckResult:
    return warning(
        f"{KEY}:{agent_id}:{path}",
        str(data.get("message") or f"agent {agent_id}: {path} was destructively rewritten"),
        value=data.get("dropped_entries"),
        threshold=data.get("entries_before"),
        agent=agent_id,
        file=path,
        snapshot=data.get("snapshot"),
        previous_snapshot=data.get("previous_snapshot"),
        command=data.get("command"),
    )


def grade_snapshots(failures: Sequence[tuple[str, str]]) -> list[CheckResult]:
    """Given (agent id, error) for each workspace health's scan could not snapshot, return a
    `history.snapshot:<agent>` warning each (a missing or unreadable workspace), and one
    `history.snapshot` warning for an error shared by several agents (git missing, the store
    broken), naming them."""
    by_error: dict[str, list[str]] = {}
    for agent_id, error in failures:
        by_error.setdefault(error, []).append(agent_id)
    results = []
    for error, agents in by_error.items():
        if len(agents) == 1:
            key, who = f"{SNAPSHOT_KEY}:{agents[0]}", f"agent {agents[0]}"
        else:
            shown = ", ".join(agents[:5]) + (
                f" and {len(agents) - 5} more" if len(agents) > 5 else ""
            )
            key, who = SNAPSHOT_KEY, f"{len(agents)} agents ({shown})"
        results.append(warning(key, f"{who}: memory history: {error}", len(agents)))
    return results
