"""Which jobs to schedule, how often, and with what stagger."""

from __future__ import annotations

from dataclasses import dataclass

from memwarden.settings.config import Config
from memwarden.settings.install import SCHEDULABLE_JOBS

SUMMARIES = {
    "checkpoint": "write ACTIVE_CONTEXT.md and the daily log from live transcripts",
    "rotate": "reset sessions whose context passed the threshold",
    "index": "rebuild the memory/INDEX.md catalogs",
    "health": "check the gateway, the host and memwarden's jobs; alert",
    "maintain": "daily retention, log rotation and gateway config backups",
}
# Minutes past the start of each period, so the jobs do not all start at the same minute.
OFFSETS = {"health": 0, "checkpoint": 2, "rotate": 4, "index": 7, "maintain": 13}
# The hour of day for jobs that run once a day or less often (cron).
DAILY_HOUR = 3


@dataclass(frozen=True)
class Calendar:
    """Times of day a job runs at: `minute` past each of `hours`, every `day_step` days."""

    minute: int
    hours: tuple[int, ...]
    day_step: int = 1

    def hours_field(self, one_hour: str, every: str) -> str:
        """The hours as a scheduler writes them: `one_hour` formatting a single hour, `*` for
        every hour, else `every` followed by the step (`00/` for systemd, `*/` for cron)."""
        if len(self.hours) == 1:
            return one_hour.format(self.hours[0])
        step = 24 // len(self.hours)
        return "*" if step == 1 else f"{every}{step}"


@dataclass(frozen=True)
class ScheduledJob:
    """One job to run on a timer every `interval_minutes`, `offset_minutes` into each period.

    `limit_seconds` overrides how long one run may take (default: see `timeout_minutes`).
    """

    name: str
    interval_minutes: int
    summary: str
    offset_minutes: int
    limit_seconds: int | None = None

    @property
    def randomized_delay_seconds(self) -> int:
        """A tenth of the interval, between 10 seconds and 15 minutes."""
        return max(10, min(self.interval_minutes * 6, 900))

    @property
    def timeout_minutes(self) -> int:
        """How long one run may take before the scheduler stops it: its interval, 10 to 120."""
        return max(10, min(self.interval_minutes, 120))

    @property
    def timeout_seconds(self) -> int:
        """The whole-run limit the runner scripts enforce, as systemd's TimeoutStartSec=."""
        return self.limit_seconds if self.limit_seconds is not None else self.timeout_minutes * 60

    @property
    def boot_delay_minutes(self) -> int:
        return 2 + self.offset_minutes

    @property
    def calendar(self) -> Calendar | None:
        """The times of day of a job that runs every whole number of hours dividing a day, or of
        days (at DAILY_HOUR): such a job runs on the clock, so a run missed while the machine
        was off or asleep can be caught up. None for shorter or other intervals."""
        minutes = self.interval_minutes
        if minutes % 60 == 0 and minutes < 1440 and 24 % (minutes // 60) == 0:
            return Calendar(self.offset_minutes, tuple(range(0, 24, minutes // 60)))
        if minutes % 1440 == 0:
            return Calendar(self.offset_minutes, (DAILY_HOUR,), minutes // 1440)
        return None


def scheduled_jobs(config: Config) -> list[ScheduledJob]:
    """Given the settings, return the jobs named in install.jobs (schedulable jobs, at least
    one: checked when the settings are loaded) with their schedule, in SCHEDULABLE_JOBS order."""
    chosen = set(config.install.jobs)
    return [
        ScheduledJob(
            name=name,
            interval_minutes=config.values[f"schedule.{name}_minutes"],
            summary=SUMMARIES[name],
            offset_minutes=OFFSETS[name],
        )
        for name in SCHEDULABLE_JOBS
        if name in chosen
    ]


def describe_interval(minutes: int) -> str:
    """Given minutes, return what follows "every" as a person says it: "20 minutes", "6 hours",
    "day"."""
    size, unit = next(
        (size, unit)
        for size, unit in ((1440, "day"), (60, "hour"), (1, "minute"))
        if not minutes % size
    )
    count = minutes // size
    return unit if count == 1 else f"{count} {unit}s"
