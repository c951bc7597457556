"""Gateway cron runs: the run logs `<state>/cron/runs/<jobId>.jsonl` and the cron store.

Line format, as the gateway writes it (openclaw `src/cron/run-log.ts`, `CronRunLogEntry`):
`{"ts": <ms>, "jobId": "…", "action": "finished", "status": "ok"|"error"|"skipped",
"error"?: "…", "summary"?: "…", "runAtMs"?: <ms>, "durationMs"?: <ms>, …}`, one JSON object per
line, appended; lines whose `action` is not `finished` are ignored, as the gateway does. The runs
folder sits beside the cron store (`cron.store` in the gateway config, default
`<state>/cron/jobs.json`), whose `jobs[].name` gives each job a readable name.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from memwarden.fs.files import read_regular_file
from memwarden.openclaw.config_file import parse_json5
from memwarden.openclaw.fields import mapping
from memwarden.openclaw.paths import resolve_home, user_path

TAIL_BYTES = 1024 * 1024  # the gateway prunes each run log to about 2 MB


@dataclass(frozen=True)
class CronRun:
    job_id: str
    finished_at_ms: int
    status: str
    error: str | None


def cron_store_path(
    state_dir: Path, gateway_config: Mapping[str, Any], env: Mapping[str, str] = os.environ
) -> Path:
    """Given the state dir, the gateway config and the environment, return the cron store
    (`jobs.json`) path; a leading `~` in `cron.store` is the home the gateway uses
    (`$OPENCLAW_HOME`, else `$HOME`)."""
    configured = mapping(gateway_config.get("cron")).get("store")
    if isinstance(configured, str) and configured.strip():
        return user_path(configured, resolve_home(env))
    return state_dir / "cron" / "jobs.json"


def recent_runs(store: Path, since: datetime) -> Iterable[CronRun]:
    """Given the cron store and a start time, yield the finished runs since then, from the run
    logs in the `runs` folder beside the store.

    Files not modified since then are not read; of the others only the tail is read, newest
    line first, up to the first line older than the window.
    """
    since_ms = since.timestamp() * 1000
    try:
        logs = os.scandir(store.parent / "runs")
        entries = [entry for entry in logs if entry.name.endswith(".jsonl")]
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in entries:
        try:
            if entry.stat().st_mtime * 1000 < since_ms:
                continue
            lines = _tail_lines(Path(entry.path))
        except OSError:
            continue
        for line in reversed(lines):  # appended in time order: newest last
            run = parse_run_line(line)
            if run is None:
                continue
            if run.finished_at_ms < since_ms:
                break
            yield run


def parse_run_line(line: bytes) -> CronRun | None:
    """Given one line of a run log, return the run, or None for lines the gateway also skips."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(value, dict) or value.get("action") != "finished":
        return None
    job_id, ts = value.get("jobId"), value.get("ts")
    if not isinstance(job_id, str) or not job_id.strip():
        return None
    if isinstance(ts, bool) or not isinstance(ts, int | float):
        return None
    error = value.get("error")
    status = value.get("status")
    return CronRun(
        job_id,
        int(ts),
        status if isinstance(status, str) else "",
        error if isinstance(error, str) else None,
    )


def job_names(store: Path) -> dict[str, str]:
    """Given the cron store, return job names by id (empty when it cannot be read)."""
    try:
        data = parse_json5(read_regular_file(store))
    except (OSError, ValueError):
        return {}
    jobs = data.get("jobs") if isinstance(data, dict) else None
    if not isinstance(jobs, list):
        return {}
    return {
        job["id"]: job["name"]
        for job in jobs
        if isinstance(job, dict)
        and isinstance(job.get("id"), str)
        and isinstance(job.get("name"), str)
    }


def _tail_lines(path: Path) -> list[bytes]:
    with path.open("rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        start = max(0, size - TAIL_BYTES)
        handle.seek(start)
        data = handle.read()
    lines = data.split(b"\n")
    if start > 0:
        lines = lines[1:]  # the first one is cut
    return [line for line in lines if line.strip()]
