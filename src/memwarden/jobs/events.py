"""`memwarden events`: the timeline of what memwarden saw and did, from its state database.

Typed events (`checkpoint.written`, `rotation.done`, `alert.sent`, `snapshot.taken`,
`rewind.done`, …) and job runs (`run.done`, `run.failed`, `run.started` for one still going)
in time order, so an operator can see what happened just before an agent lost its context.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta, tzinfo
from fnmatch import fnmatchcase
from typing import Any

import orjson

from memwarden.jobs.common import positive_int, require_known_agents
from memwarden.process.errors import GatewayConfigError, UsageError
from memwarden.process.runtime import JobContext, JobResult
from memwarden.store.state import StateDB

RELATIVE = re.compile(r"^\s*(\d+)\s*(s|sec|m|min|h|d|w)\s*$", re.IGNORECASE)
UNIT_SECONDS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 604800}
MAX_VALUE_CHARS = 60
# The types memwarden records (docs/events.md's table); a state.db may hold more.
EVENT_TYPES = (
    "run.done",
    "run.failed",
    "run.started",
    "checkpoint.written",
    "checkpoint.failed",
    "rotation.done",
    "rotation.failed",
    "rotation.skipped",
    "compaction.recorded",
    "index.written",
    "index.failed",
    "alert.opened",
    "alert.resolved",
    "alert.sent",
    "alert.failed",
    "summary.written",
    "config.backed_up",
    "config.shrunk",
    "transcripts.retention",
    "snapshot.taken",
    "snapshot.pruned",
    "memory.rewrite",
    "rewind.done",
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--agent",
        metavar="ID",
        help="only this agent's events (events of no particular agent, such as job runs, stay)",
    )
    parser.add_argument(
        "--since",
        metavar="WHEN",
        help="from this time: ISO date or time (2026-11-22, 2026-11-22T05:30, …Z or +01:00; "
        "without a zone: general.timezone, else local time) or a duration ago (30m, 2h, 7d)",
    )
    parser.add_argument(
        "--type",
        action="append",
        default=[],
        metavar="TYPE",
        help="only these types (repeatable, or comma-separated): exact (rotation.done), "
        "a family (rotation, run) or a glob (alert.*)",
    )
    parser.add_argument(
        "--limit", type=positive_int, default=500, metavar="N", help="the N newest (default 500)"
    )


def run(context: JobContext, options: argparse.Namespace) -> JobResult:
    zone = context.zone  # None: the machine's
    since = parse_since(options.since, context.now(), zone) if options.since else None
    types = [part.strip() for item in options.type for part in item.split(",") if part.strip()]
    agent = options.agent.lower() if options.agent else None
    if agent:  # the timeline's agents first: the gateway's config is read only when needed
        require_known_agents([options.agent], _agents(context), lambda: _gateway_agents(context))
    recorded = _recorded_types(context.state) if types else []
    require_known_types(types, recorded)  # none asked for: nothing to check
    timeline = load_timeline(
        context.state,
        recorded,
        agent_id=agent,
        since=since.timestamp() if since else None,
        types=types,
        limit=options.limit,
    )
    result = JobResult("events", data={"since": since.isoformat() if since else None})
    result.data |= {"count": len(timeline), "events": [_public(event) for event in timeline]}
    result.lines = [event_line(event) for event in timeline] or ["no events match"]
    return result


def parse_since(text: str, now: datetime, zone: tzinfo | None) -> datetime:
    """Given `--since` text, the current time and the zone for times without one (None: the
    machine's, with its summer time on that date), return the
    moment it names (aware). Raise UsageError if it is neither ISO nor a duration like 2h, or
    a duration that reaches before the year 1.
    """
    relative = RELATIVE.match(text)
    if relative:
        try:
            amount, unit = int(relative[1]), relative[2].lower()
            return now - timedelta(seconds=amount * UNIT_SECONDS[unit])
        except (OverflowError, ValueError):  # before the year 1, or digits past int's limit
            raise UsageError(
                f"--since {text}: too far back (before the year 1); give a shorter duration "
                "or a date"
            ) from None
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(
            f"--since {text}: expected an ISO date or time (2026-11-22, 2026-11-22T05:30Z) "
            "or a duration ago (30m, 2h, 7d)"
        ) from None
    if moment.tzinfo:
        return moment
    return moment.replace(tzinfo=zone) if zone else moment.astimezone()


def type_matches(event_type: str, patterns: Sequence[str]) -> bool:
    """Return True when `event_type` is one of `patterns`: exact, family (`x` for `x.*`), glob."""
    return not patterns or any(
        fnmatchcase(event_type, pattern) or fnmatchcase(event_type, pattern + ".*")
        for pattern in patterns
    )


def require_known_types(patterns: Sequence[str], recorded: Sequence[str]) -> None:
    """Given `--type` patterns and the types state.db holds, raise UsageError naming the
    patterns that match none of those nor of EVENT_TYPES (a typo), and the types there are."""
    known = sorted({*EVENT_TYPES, *recorded})
    unknown = [
        pattern for pattern in patterns if not any(type_matches(k, [pattern]) for k in known)
    ]
    if unknown:
        raise UsageError(
            f"--type {', '.join(unknown)}: no such event type (types: {', '.join(known)}; "
            "a family such as rotation, or a glob such as alert.*)"
        )


def load_timeline(
    state: StateDB,
    recorded: Sequence[str],
    *,
    agent_id: str | None = None,
    since: float | None = None,
    types: Sequence[str] = (),
    limit: int = 500,
) -> list[dict[str, Any]]:
    """Return the `limit` newest events and job runs matching the filters, oldest first, given
    the types the events table holds (`recorded`; read when `types` filter)."""
    wanted = None
    if types:
        # StateDB.events takes exact types, and picks the newest `limit` in SQL: the patterns
        # (families, globs, as type_matches reads them) become the recorded types they match.
        wanted = [kind for kind in recorded if type_matches(kind, types)]
    events = state.events(types=wanted, since=since, limit=limit, agent_id=agent_id)
    runs = [run for run in _runs(state, since, limit) if type_matches(run["type"], types)]
    merged = sorted(events + runs, key=lambda event: (event["ts"], event["id"]))
    return merged[-limit:] if limit else []


def event_line(event: dict[str, Any]) -> str:
    """Given a timeline event, return one line: time, type, agent, session, data."""
    moment = datetime.fromtimestamp(event["ts"], UTC).isoformat(timespec="seconds")
    parts = [moment.replace("+00:00", "Z"), f"{event['type']:<18}"]
    parts.append(f"{event['agent_id'] or '-':<10}")
    if event.get("session_key"):
        parts.append(event["session_key"])
    if event.get("job") and not event["type"].startswith("run."):
        parts.append(f"job={event['job']}")
    data = event.get("data") or {}
    parts += [f"{key}={_short(value)}" for key, value in data.items() if value or value == 0]
    return "  ".join(parts)


def _recorded_types(state: StateDB) -> list[str]:
    return [kind for (kind,) in state.connection.execute("SELECT DISTINCT type FROM events")]


def _gateway_agents(context: JobContext) -> list[str]:
    """The gateway's agent ids; none when no gateway is here or its config cannot be read (the
    timeline is memwarden's)."""
    try:
        return [agent.id for agent in context.deployment.agents]
    except GatewayConfigError:  # GatewayNotFound too
        return []


def _agents(context: JobContext) -> list[str]:
    """The agent ids the timeline holds (an agent removed from the gateway since, too)."""
    rows = context.state.connection.execute(
        "SELECT DISTINCT agent_id FROM events WHERE agent_id IS NOT NULL"
    )
    return [agent_id for (agent_id,) in rows]


def _runs(state, since, limit) -> list[dict[str, Any]]:
    rows = state.connection.execute(
        "SELECT * FROM runs WHERE coalesce(finished_at, started_at) >= ? "
        "ORDER BY coalesce(finished_at, started_at) DESC LIMIT ?",
        (since if since is not None else float("-inf"), limit),
    ).fetchall()
    return [_run_event(row) for row in rows]


def _run_event(row) -> dict[str, Any]:
    finished = row["finished_at"] is not None
    kind = "run.started" if not finished else "run.done" if row["exit_code"] == 0 else "run.failed"
    data: dict[str, Any] = {"job": row["job"]}
    if finished:
        data["exit_code"] = row["exit_code"]
        data["seconds"] = round(row["finished_at"] - row["started_at"], 3)
    if row["dry_run"]:
        data["dry_run"] = True
    if row["summary_json"]:
        data["summary"] = orjson.loads(row["summary_json"])
    return {
        # Runs sort after events of the same instant, which they sum up.
        "id": float("inf"),
        "ts": row["finished_at"] if finished else row["started_at"],
        "type": kind,
        "job": row["job"],
        "run_id": row["id"],
        "agent_id": None,
        "session_key": None,
        "session_id": None,
        "data": data,
    }


def _public(event: dict[str, Any]) -> dict[str, Any]:
    moment = datetime.fromtimestamp(event["ts"], UTC).isoformat().replace("+00:00", "Z")
    public = {key: value for key, value in event.items() if key not in ("id", "ts")}
    return {"time": moment, "ts": event["ts"], **public}


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else orjson.dumps(value, default=str).decode()
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 1] + "…"
