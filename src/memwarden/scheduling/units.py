"""Render the files a scheduler reads from the templates in memwarden/templates/units/.

Pure: given a UnitSpec (paths, jobs, pinned environment), return each file's path, mode and text.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from memwarden.fs.templating import render
from memwarden.scheduling.cron import cron_schedule
from memwarden.scheduling.jobs import Calendar, ScheduledJob, describe_interval

TARGETS = ("systemd", "launchd", "cron")
FILE_MODE = 0o600
RUNNER_MODE = 0o700
_SYSTEMD_PLAIN = re.compile(r"^[A-Za-z0-9_@%+=:,./-]+$")


@dataclass(frozen=True)
class UnitSpec:
    """Everything the unit files depend on, resolved to absolute paths.

    `environment` holds the non-secret variables pinned into every timer so that timers see the
    same config, state and gateway as the shell that ran `memwarden install`. `writable_paths`
    maps a job to the `ReadWritePaths=` values of the folders it writes (for the commented
    hardening block of its service).
    """

    jobs: tuple[ScheduledJob, ...]
    executable: Path
    secrets_file: Path
    storage_dir: Path
    log_dir: Path
    environment: tuple[tuple[str, str], ...]
    systemd_dir: Path
    launchd_dir: Path
    launchd_label: str
    writable_paths: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def runner(self, target: str) -> Path:
        """The runner script of the launchd or cron target."""
        return self.storage_dir / "bin" / f"memwarden-{target}"


@dataclass(frozen=True)
class PlannedFile:
    """A file an install writes: where, with which mode, what text, and its role."""

    path: Path
    content: str
    mode: int = FILE_MODE
    role: str = "unit"


def systemd_unit_names(job: str) -> tuple[str, str]:
    """Given a job, return its service and timer unit names."""
    return f"memwarden-{job}.service", f"memwarden-{job}.timer"


def launchd_label(spec: UnitSpec, job: str) -> str:
    return f"{spec.launchd_label}.{job}"


def systemd_files(spec: UnitSpec) -> list[PlannedFile]:
    """Given a spec, return a service and a timer per job (systemd user units)."""
    environment = [systemd_assignment(name, value) for name, value in spec.environment]
    files = []
    for job in spec.jobs:
        service, timer = systemd_unit_names(job.name)
        values = {
            "job": job,
            "interval": describe_interval(job.interval_minutes),
            "on_calendar": systemd_calendar(job.calendar) if job.calendar else None,
        }
        files.append(
            PlannedFile(
                spec.systemd_dir / service,
                render(
                    "units/systemd/memwarden-job.service.j2",
                    exec_start=f"{systemd_word(str(spec.executable))} -q {job.name}",
                    secrets_file=str(spec.secrets_file),
                    environment=environment,
                    writable_paths=spec.writable_paths.get(job.name, ()),
                    **values,
                ),
            )
        )
        files.append(
            PlannedFile(
                spec.systemd_dir / timer,
                render("units/systemd/memwarden-job.timer.j2", **values),
            )
        )
    return files


def launchd_files(spec: UnitSpec) -> list[PlannedFile]:
    """Given a spec, return the runner script and one launchd agent per job."""
    files = [runner_file(spec, "launchd")]
    for job in spec.jobs:
        label = launchd_label(spec, job.name)
        files.append(
            PlannedFile(
                spec.launchd_dir / f"{label}.plist",
                render(
                    "units/launchd/job.plist.j2",
                    job=job,
                    label=label,
                    interval=describe_interval(job.interval_minutes),
                    calendar=launchd_calendar(job.calendar),
                    runner=str(spec.runner("launchd")),
                    log_file=str(spec.log_dir / f"{job.name}.log"),
                    environment=list(spec.environment),
                ),
            )
        )
    return files


def systemd_calendar(calendar: Calendar) -> str:
    """Given a job's calendar, return its `OnCalendar=` expression (`*-*-* 00/6:07:00`)."""
    days = "*-*-*" if calendar.day_step == 1 else f"*-*-1/{calendar.day_step}"
    return f"{days} {calendar.hours_field('{:02d}', '00/')}:{calendar.minute:02d}:00"


def launchd_calendar(calendar: Calendar | None) -> list[tuple[int, int]] | None:
    """Given a job's calendar, return its `StartCalendarInterval` entries as (hour, minute).

    None (the job runs every `StartInterval` seconds) without a calendar, or for a step of
    several days, which launchd's calendar cannot say.
    """
    if calendar is None or calendar.day_step != 1:
        return None
    return [(hour, calendar.minute) for hour in calendar.hours]


def cron_block(spec: UnitSpec) -> str:
    """Given a spec, return memwarden's crontab block, between its marker lines."""
    runner = cron_word(str(spec.runner("cron")))
    lines = [
        f"{cron_schedule(job)} {runner} {job.name} "
        f">>{cron_word(str(spec.log_dir / f'{job.name}.log'))} 2>&1"
        for job in spec.jobs
    ]
    return render(
        "units/cron/block.j2",
        lines=lines,
        runner_display=str(spec.runner("cron")),
        secrets_display=str(spec.secrets_file),
    )


def runner_file(spec: UnitSpec, target: str) -> PlannedFile:
    """Given a spec and `launchd` or `cron`, return the runner script (mode 0700).

    It exports the pinned environment and runs `memwarden -q <job>` under the job's whole-run
    limit; memwarden reads the secrets file itself.
    """
    path = spec.runner(target)
    text = render(
        "units/runner.sh.j2",
        target=target,
        runner_name=path.name,
        environment=[(name, shlex.quote(value)) for name, value in spec.environment],
        secrets_display=str(spec.secrets_file),
        executable=shlex.quote(str(spec.executable)),
        jobs=spec.jobs,
        default_limit=max((job.timeout_seconds for job in spec.jobs), default=7200),
    )
    return PlannedFile(path, text, mode=RUNNER_MODE, role="runner")


def secrets_file(path: Path, secret_names: list[str]) -> PlannedFile:
    """Given the secrets file path and the secret variables, return a commented starter file."""
    return PlannedFile(path, render("units/secrets.env.j2", names=secret_names), role="secrets")


# --- escaping for the files a scheduler reads: systemd units, sh scripts, crontabs ----------


def systemd_word(text: str) -> str:
    """Given one argument of ExecStart=, return it escaped for systemd's command-line parser.

    `%` (specifiers) becomes `%%` and `$` (variable expansion) `$$`; an argument with spaces,
    quotes or backslashes is double-quoted with C-style escapes.
    """
    return _systemd_quoted(text.replace("%", "%%").replace("$", "$$"))


def systemd_assignment(name: str, value: str) -> str:
    """Given a variable and its value, return the argument of one `Environment=` line."""
    return _systemd_quoted(f"{name}={value}".replace("%", "%%"))


def _systemd_quoted(text: str) -> str:
    if _SYSTEMD_PLAIN.match(text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def systemd_path(path: str) -> str:
    """Given a path for a setting that takes the rest of the line, return it with `%` escaped."""
    return path.replace("%", "%%")


def cron_word(text: str) -> str:
    """Given a word of a crontab command, return it shell-quoted, `%` (cron's newline) escaped."""
    return shlex.quote(text).replace("%", "\\%")
