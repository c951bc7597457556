"""File-era trajectory files: which session key a transcript belonged to.

Gateways of the file era (2026.7.x) write `<sessionId>.trajectory.jsonl` beside a transcript that
had turns; every line carries the run's `sessionKey` (the first is `session.started`). A reset
renames the transcript but leaves the trajectory, so it is the gateway's own record of which
conversation a reset archive held. `memwarden maintain` may have gzip-compressed it
(`….trajectory.jsonl.gz`).
"""

from __future__ import annotations

from pathlib import Path

import orjson

TRAJECTORY_SUFFIX = ".trajectory.jsonl"
MAX_FIRST_LINE = 64 * 1024


def trajectory_session_key(sessions_dir: Path, session_id: str) -> str | None:
    """Given a sessions folder and a session id, return the session key (lower-cased) the
    first line of its trajectory names, or None when there is no trajectory, its first line is
    longer than 64 KB or names no key."""
    plain = sessions_dir / f"{session_id}{TRAJECTORY_SUFFIX}"
    try:
        if plain.is_file():
            with plain.open("rb") as handle:
                first = handle.readline(MAX_FIRST_LINE)
        else:
            import gzip  # an archive `maintain` compressed: rare

            with gzip.open(plain.with_name(plain.name + ".gz"), "rb") as handle:
                first = handle.readline(MAX_FIRST_LINE)
    except (OSError, EOFError):
        return None
    try:
        line = orjson.loads(first)
    except orjson.JSONDecodeError:
        return None
    key = line.get("sessionKey") if isinstance(line, dict) else None
    return key.strip().lower() if isinstance(key, str) and key.strip() else None
