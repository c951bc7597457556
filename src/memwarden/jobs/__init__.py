"""The registry of commands. Each module has `add_arguments(parser)` and `run(context, options)`.

Modules are imported only when their command runs (or shows its help), so a job never pays for
another job's imports.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class JobSpec:
    """A command: its module, one-line summary, whether runs lock and are recorded, and
    whether it only reads (then, like any dry run, it creates nothing in memwarden's storage
    and never claims a storage root; see storage.py).

    `runs_without_state`: when memwarden's state cannot be written (disk full, locked), the job
    still runs, without its lock and its run record, and reports the problem itself (health:
    nothing else would alert about it).
    """

    name: str
    module: str
    summary: str
    locks: bool = False
    records_run: bool = False
    read_only: bool = False
    runs_without_state: bool = False


JOBS: tuple[JobSpec, ...] = (
    JobSpec(
        "checkpoint",
        "memwarden.jobs.checkpoint",
        "write each conversation's handoff (ACTIVE_CONTEXT.md for the main one) and the daily log",
        locks=True,
        records_run=True,
    ),
    JobSpec(
        "rotate",
        "memwarden.jobs.rotate",
        "reset sessions whose context passed the threshold, after checkpointing them",
        locks=True,
        records_run=True,
    ),
    JobSpec(
        "index",
        "memwarden.jobs.index",
        "rebuild memory/INDEX.md catalogs and the bootstrap hook's manifest",
        locks=True,
        records_run=True,
    ),
    JobSpec(
        "health",
        "memwarden.jobs.health",
        "check the gateway, the host and memwarden's jobs; alert on Slack and/or Alertmanager",
        locks=True,
        records_run=True,
        runs_without_state=True,
    ),
    JobSpec(
        "maintain",
        "memwarden.jobs.maintain",
        "apply daily retention: old transcripts, logs, state; back up the gateway config",
        locks=True,
        records_run=True,
    ),
    JobSpec(
        "doctor",
        "memwarden.jobs.doctor",
        "check the deployment and print the fix for each finding",
        read_only=True,
    ),
    JobSpec(
        "status",
        "memwarden.jobs.status",
        "show each job's last run, the health checks not ok and the alerts not yet sent "
        "(read-only)",
        read_only=True,
    ),
    JobSpec(
        "sessions",
        "memwarden.jobs.sessions",
        "list the gateway's agents and sessions (read-only)",
        read_only=True,
    ),
    JobSpec(
        "history",
        "memwarden.jobs.history",
        "list, show, diff, snapshot, rewind and prune the memory history of each agent",
    ),
    JobSpec(
        "summarize",
        "memwarden.jobs.summarize",
        "write a session summary for a window that just ended (run by the session-summary hook)",
    ),
    JobSpec(
        "events",
        "memwarden.jobs.events",
        "show the timeline of what memwarden saw and did",
        read_only=True,
    ),
    JobSpec(
        "install", "memwarden.jobs.install", "install the timers (systemd, launchd, cron) or hooks"
    ),
    JobSpec(
        "uninstall",
        "memwarden.jobs.uninstall",
        "remove what install installed",
    ),
    JobSpec(
        "config",
        "memwarden.jobs.config_cmd",
        "show, check and document memwarden's settings",
        read_only=True,
    ),
    JobSpec(
        "state",
        "memwarden.jobs.state_cmd",
        "back up or export memwarden's state database",
        read_only=True,
    ),
)

BY_NAME = {spec.name: spec for spec in JOBS}
