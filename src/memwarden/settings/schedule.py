"""The `[schedule]` options: how often each timer runs its job."""

from memwarden.settings.option import Option

DESCRIPTION = (
    "Intervals of the scheduled jobs: memwarden install renders the timers from them, and the "
    "health check of memwarden's own jobs compares each job's last success against them."
)


def _interval(job: str, minutes: int, what: str) -> Option:
    return Option(
        f"schedule.{job}_minutes",
        "int",
        minutes,
        f"Minutes between two {job} runs ({what}).",
        minimum=1,
        maximum=7 * 24 * 60,
    )


OPTIONS = [
    _interval("checkpoint", 20, "conversation handoffs and daily log"),
    _interval("rotate", 30, "session rotation"),
    _interval("index", 360, "INDEX.md catalogs"),
    _interval("health", 5, "health checks and alerts"),
    _interval("maintain", 1440, "daily retention and backups"),
]
