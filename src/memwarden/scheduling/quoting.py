"""Escaping values for the files a scheduler reads: systemd units, sh scripts, crontabs."""

from __future__ import annotations

import re
import shlex

_SYSTEMD_PLAIN = re.compile(r"^[A-Za-z0-9_@%+=:,./-]+$")


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
