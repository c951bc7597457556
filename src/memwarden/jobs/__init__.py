"""The registry of commands. Each command is the module of its name in this package, with
`add_arguments(parser)` and `run(context, options)`.

Modules are imported only when their command runs (or shows its help), so a job never pays for
another job's imports.
"""

from __future__ import annotations

from typing import NamedTuple


class JobSpec(NamedTuple):
    """A command: its one-line summary, whether its runs are recorded (a recorded run also
    takes the job's lock), the examples its `--help` ends with, and whether it only reads
    (then, like any dry run, it creates nothing in memwarden's storage and never claims a
    storage root; see store/storage.py).

    `runs_without_state`: when memwarden's state cannot be written (disk full, locked), the job
    still runs, without its lock and its run record, and reports the problem itself (health:
    nothing else would alert about it).

    `renders`: the job writes files from the templates; a template option naming no file it can
    read stops it as a configuration error (the other commands, health and doctor first, run).
    """

    name: str
    summary: str
    records_run: bool = False
    read_only: bool = False
    runs_without_state: bool = False
    renders: bool = False
    examples: tuple[str, ...] = ()

    @property
    def module(self) -> str:
        return f"{__name__}.{self.name}"


JOBS: tuple[JobSpec, ...] = (
    JobSpec(
        "checkpoint",
        "write each conversation's handoff (ACTIVE_CONTEXT.md for the main one) and the daily log",
        records_run=True,
        renders=True,
        examples=(
            "memwarden checkpoint --dry-run",
            "memwarden checkpoint --agent main",
            "memwarden -q checkpoint    # as the timer runs it",
        ),
    ),
    JobSpec(
        "rotate",
        "reset sessions whose context passed the threshold, after checkpointing them",
        records_run=True,
        renders=True,
        examples=(
            "memwarden rotate --dry-run",
            "memwarden rotate --threshold 120000 --max 2",
            "memwarden --json rotate --dry-run --ratio 0.6",
        ),
    ),
    JobSpec(
        "index",
        "rebuild memory/INDEX.md catalogs and the bootstrap hook's manifest",
        records_run=True,
        renders=True,
        examples=(
            "memwarden index --dry-run",
            "memwarden index --force --agent main",
            "memwarden index --workspace ~/.openclaw/workspace",
        ),
    ),
    JobSpec(
        "health",
        "check the gateway, the host and memwarden's jobs; alert on Slack and/or Alertmanager",
        records_run=True,
        runs_without_state=True,
        examples=(
            "memwarden health --no-alert",
            "memwarden -q health    # as the timer runs it",
            "memwarden --json health --no-alert",
        ),
    ),
    JobSpec(
        "maintain",
        "apply daily retention: old transcripts, logs, state; back up the gateway config",
        records_run=True,
        renders=True,
        examples=(
            "memwarden maintain --dry-run",
            "memwarden -v maintain",
        ),
    ),
    JobSpec(
        "doctor",
        "check the deployment and print the fix for each finding",
        read_only=True,
        examples=(
            "memwarden doctor",
            "memwarden doctor --problems-only",
            "memwarden doctor --skip-gateway    # the gateway is down on purpose",
        ),
    ),
    JobSpec(
        "status",
        "show each job's last run, the health checks not ok and the alerts not yet sent "
        "(read-only)",
        read_only=True,
        examples=("memwarden status", "memwarden --json status"),
    ),
    JobSpec(
        "sessions",
        "list the gateway's agents and sessions (read-only)",
        read_only=True,
        examples=("memwarden sessions", "memwarden sessions --all --agent main"),
    ),
    JobSpec(
        "compactions",
        "list the compactions of each conversation and the items they lost (read-only)",
        read_only=True,
        examples=(
            "memwarden compactions",
            "memwarden compactions --lossy --agent main",
            "memwarden --json compactions --session agent:main:main",
        ),
    ),
    JobSpec(
        "history",
        "list, show, diff, snapshot, rewind and prune the memory history of each agent",
        examples=(
            "memwarden history list --agent main",
            "memwarden history diff 19322a98",
            "memwarden history rewind 19322a98 --path MEMORY.md --dry-run",
        ),
    ),
    JobSpec(
        "summarize",
        "write a session summary for a window that just ended (run by the session-summary hook)",
        renders=True,
        examples=(
            "memwarden summarize --agent main --session-key agent:main:main "
            "--session-id 101fbd0d-c6e3-4b83-94f5-65435a94d00e --event command:reset",
        ),
    ),
    JobSpec(
        "events",
        "show the timeline of what memwarden saw and did",
        read_only=True,
        examples=(
            "memwarden events --since 24h",
            "memwarden events --agent main --type rotation --limit 20",
        ),
    ),
    JobSpec(
        "install",
        "install the timers (systemd, launchd, cron), the hooks or shell completion",
        examples=(
            "memwarden install auto --dry-run",
            "memwarden install hooks",
            "memwarden install completion",
        ),
    ),
    JobSpec(
        "uninstall",
        "remove what install installed",
        examples=("memwarden uninstall auto --dry-run", "memwarden uninstall hooks"),
    ),
    JobSpec(
        "config",
        "show, check and document memwarden's settings",
        read_only=True,
        examples=(
            "memwarden config show",
            "memwarden config check",
            "memwarden config example > ~/.config/memwarden/config.toml",
        ),
    ),
    JobSpec(
        "state",
        "back up or export memwarden's state database",
        read_only=True,
        examples=(
            "memwarden state backup ~/memwarden-state.db",
            "memwarden state export --output state.json",
        ),
    ),
    JobSpec(
        "completion",
        "print the shell completion script for bash, zsh or fish",
        read_only=True,
        examples=(
            "memwarden completion bash > ~/.local/share/bash-completion/completions/memwarden",
            "memwarden completion fish | source",
        ),
    ),
)

BY_NAME = {spec.name: spec for spec in JOBS}
