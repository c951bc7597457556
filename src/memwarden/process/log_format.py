"""How memwarden's stderr lines look, so a timer's log can use them.

Every warning, problem and error goes through the `memwarden` logger to stderr, one line each:

- outside the journal: `2026-11-22T07:00:00+00:00 WARNING memwarden: <text>` (an ISO-8601
  time stamp with its offset, then the level), for cron and launchd logs that add neither;
- under journald (systemd sets `JOURNAL_STREAM` to the device:inode of the stream it connected
  to stderr): `<4>memwarden: <text>`, the syslog priority journald reads, so
  `journalctl -p warning` finds problems. journald adds the time itself.

The text after the prefix is the same in both. A message of several lines gets the prefix on
each, so no line of it lands in the journal at the wrong priority.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from datetime import datetime
from typing import TextIO

LOGGER_NAME = "memwarden"
# syslog priorities (sd-daemon.h): crit 2, err 3, warning 4, info 6, debug 7.
SYSLOG_PRIORITIES = {
    logging.CRITICAL: 2,
    logging.ERROR: 3,
    logging.WARNING: 4,
    logging.INFO: 6,
    logging.DEBUG: 7,
}


class StderrFormatter(logging.Formatter):
    """Format a record as `memwarden: <message>`, each line prefixed with the time stamp and
    level (`journal` False) or the `<N>` syslog priority (`journal` True)."""

    def __init__(self, journal: bool) -> None:
        super().__init__()
        self.journal = journal

    def format(self, record: logging.LogRecord) -> str:
        text = f"{LOGGER_NAME}: {super().format(record)}"
        prefix = self.prefix(record)
        return "\n".join(prefix + line for line in text.splitlines() or [""])

    def prefix(self, record: logging.LogRecord) -> str:
        if self.journal:
            return f"<{syslog_priority(record.levelno)}>"
        stamp = datetime.fromtimestamp(record.created).astimezone()
        return f"{stamp.isoformat(timespec='seconds')} {record.levelname} "


def syslog_priority(level: int) -> int:
    """Given a logging level, return the syslog priority of the nearest level at or above it."""
    for known in sorted(SYSLOG_PRIORITIES):
        if level <= known:
            return SYSLOG_PRIORITIES[known]
    return SYSLOG_PRIORITIES[logging.CRITICAL]


def stderr_is_journal(env: Mapping[str, str], stream: TextIO) -> bool:
    """Return True when `stream` is the journal stream systemd names in `$JOURNAL_STREAM`.

    systemd.exec(5): the variable holds `<device>:<inode>` of the stream; a process whose stderr
    is something else (redirected, a pipe of another program) must not use the journal's format.
    """
    expected = (env.get("JOURNAL_STREAM") or "").strip()
    if not expected:
        return False
    try:
        info = os.fstat(stream.fileno())
    except (OSError, ValueError, AttributeError):
        return False
    return expected == f"{info.st_dev}:{info.st_ino}"


def configure(level: int, stream: TextIO, env: Mapping[str, str] = os.environ) -> logging.Logger:
    """Send the `memwarden` logger's records at `level` and above to `stream`, formatted for
    the journal or for a plain log; return the logger. Calling it again replaces the handler."""
    logger = logging.getLogger(LOGGER_NAME)
    for handler in list(logger.handlers):
        if getattr(handler, "memwarden_stderr", False):
            logger.removeHandler(handler)
    handler = logging.StreamHandler(stream)
    handler.memwarden_stderr = True  # type: ignore[attr-defined]
    handler.setFormatter(StderrFormatter(journal=stderr_is_journal(env, stream)))
    logger.addHandler(handler)
    logger.propagate = False
    logger.setLevel(level)
    return logger
