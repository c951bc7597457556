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
    escaped = text.replace("%", "%%").replace("$", "$$")
    if escaped and _SYSTEMD_PLAIN.match(escaped):
        return escaped
    return '"' + escaped.replace("\\", "\\\\").replace('"', '\\"') + '"'


def systemd_assignment(name: str, value: str) -> str:
    """Given a variable and its value, return the argument of one `Environment=` line."""
    text = f"{name}={value}".replace("%", "%%")
    if _SYSTEMD_PLAIN.match(text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def systemd_path(path: str) -> str:
    """Given a path for a setting that takes the rest of the line, return it with `%` escaped."""
    return path.replace("%", "%%")


def sh_word(text: str) -> str:
    """Given a word, return it quoted for a POSIX shell."""
    return shlex.quote(text)


def cron_word(text: str) -> str:
    """Given a word of a crontab command, return it shell-quoted, `%` (cron's newline) escaped."""
    return shlex.quote(text).replace("%", "\\%")
