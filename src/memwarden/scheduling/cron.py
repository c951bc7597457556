"""memwarden's block in a crontab: its schedule expressions, and replacing it idempotently."""

from __future__ import annotations

from memwarden.process.errors import UsageError
from memwarden.scheduling.jobs import ScheduledJob

BEGIN_MARKER = "# >>> memwarden >>>"
END_MARKER = "# <<< memwarden <<<"


def cron_schedule(job: ScheduledJob) -> str:
    """Given a job, return the five cron fields that run it every `interval_minutes`.

    Cron counts from the start of the hour, day or month, so an interval must divide 60 minutes,
    be whole hours dividing 24, or whole days. Raise UsageError naming the setting otherwise.
    """
    minutes = job.interval_minutes
    if minutes < 60 and 60 % minutes == 0:
        start = job.offset_minutes % minutes
        field = "*" if minutes == 1 else f"{start}-59/{minutes}"
        return f"{field} * * * *"
    calendar = job.calendar
    if calendar is not None:
        days = "*" if calendar.day_step == 1 else f"*/{calendar.day_step}"
        return f"{calendar.minute} {calendar.hours_field('{}', '*/')} {days} * *"
    raise UsageError(
        f"schedule.{job.name}_minutes = {minutes} cannot be written as a cron schedule: use a "
        "divisor of 60 (5, 10, 15, 20, 30), whole hours dividing 24 (60, 120, 180, 240, 360, "
        "480, 720) or whole days (1440), or install with systemd or launchd"
    )


def find_block(crontab: str) -> tuple[int, int] | None:
    """Given a crontab, return the (first, last) line numbers of memwarden's block, or None.

    Raise UsageError if a begin marker has no end marker (a hand-edited crontab).
    """
    lines = crontab.splitlines()
    begin = next((i for i, line in enumerate(lines) if line.startswith(BEGIN_MARKER)), None)
    if begin is None:
        return None
    end = next((i for i in range(begin, len(lines)) if lines[i].startswith(END_MARKER)), None)
    if end is None:
        raise UsageError(
            f"your crontab has the line {BEGIN_MARKER!r} but no {END_MARKER!r} after it; "
            "fix it with `crontab -e`, then run this again"
        )
    return begin, end


def replace_block(crontab: str, block: str) -> str:
    """Given a crontab and memwarden's block, return the crontab with the block in place.

    The block replaces an existing one where it stands, else is appended; the rest of the
    crontab is kept as it is. Raise UsageError as find_block does.
    """
    lines = crontab.splitlines()
    block_lines = block.rstrip("\n").splitlines()
    found = find_block(crontab)
    if found is None:
        if lines and lines[-1].strip():
            lines.append("")
        lines += block_lines
    else:
        begin, end = found
        lines[begin : end + 1] = block_lines
    return "\n".join(lines) + "\n"


def remove_block(crontab: str) -> str:
    """Given a crontab, return it without memwarden's block (and the blank line added before it)."""
    found = find_block(crontab)
    if found is None:
        return crontab
    lines = crontab.splitlines()
    begin, end = found
    if begin > 0 and not lines[begin - 1].strip() and (end + 1 >= len(lines)):
        begin -= 1
    del lines[begin : end + 1]
    return "\n".join(lines) + "\n" if lines else ""
