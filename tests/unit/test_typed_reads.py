"""Typed reads of loose fields, and the one-line descriptions of odd values and OS errors."""

from __future__ import annotations

import errno
from datetime import UTC, datetime

import pytest

from memwarden.fs.files import display_path
from memwarden.openclaw.fields import EPOCH_MS_MAX, describe, epoch_ms, integer, moment
from memwarden.process.errors import StateError, describe_error, describe_os_error


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (5, 5),
        (5.9, 5),
        (2**63 - 1, 2**63 - 1),
        (2**63, None),  # beyond what SQLite and orjson hold
        (1e30, None),
        (-(2**63), -(2**63)),
        (float("nan"), None),
        (float("inf"), None),
        (True, None),
        ("5", None),
        (None, None),
    ],
)
def test_integer_is_none_outside_64_bits_and_for_non_numbers(value, expected):
    assert integer(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1795325707916, 1795325707916),
        (0, 0),
        (EPOCH_MS_MAX, EPOCH_MS_MAX),
        (EPOCH_MS_MAX + 1, None),  # past year 9999: no datetime holds it
        (1e30, None),
        (-1, None),
        ("2026-11-22T05:35:07Z", None),
    ],
)
def test_epoch_ms_is_a_time_a_datetime_can_hold(value, expected):
    assert epoch_ms(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-11-22T07:26:49+02:00", datetime(2026, 11, 22, 5, 26, 49, tzinfo=UTC)),
        (1795325209986.5, datetime(2026, 11, 22, 5, 26, 49, 986500, tzinfo=UTC)),
        (1e30, None),  # no datetime holds it
        (True, None),
        ("yesterday", None),
    ],
)
def test_moment_is_aware_utc_or_none(value, expected):
    assert moment(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "null"),
        ("x", "a string ('x')"),
        (5, "a number (5)"),
        (1e30, "a number (1e+30)"),
        (True, "a boolean (true)"),
        ({"a": 1}, "an object"),
        ([1], "a list"),
        (b"\x00", "binary data"),
        ("y" * 50, "a string"),
    ],
)
def test_describe_names_the_json_type_and_short_values(value, expected):
    assert describe(value) == expected


def test_describe_os_error_names_path_reason_and_fix():
    error = OSError(errno.ENOSPC, "No space left on device", "/var/state/locks/x.lock")
    line = describe_os_error(error, "cannot take the x lock")
    assert line == (
        "/var/state/locks/x.lock: cannot take the x lock: no space left on device "
        "(the disk is full: free space there)"
    )


@pytest.mark.parametrize(
    ("code", "reason", "said"),
    [
        (errno.EPERM, "Operation not permitted", "operation not permitted (check the owner"),
        (errno.EACCES, "Permission denied", "permission denied (check the owner"),
    ],
)
def test_describe_os_error_says_a_permission_reason_once(code, reason, said):
    line = describe_os_error(OSError(code, reason, "/w/memory"), "cannot write")
    assert line.startswith(f"/w/memory: cannot write: {said} and mode of the folder")
    assert line.lower().count(reason.lower()) == 1, line


def test_describe_error_keeps_messages_and_types():
    assert describe_error(StateError("state.db: locked")) == "state.db: locked"
    assert describe_error(ValueError("odd")) == "ValueError: odd"
    assert describe_error(IsADirectoryError(errno.EISDIR, "Is a directory", "/w/INDEX.md")) == (
        "/w/INDEX.md: is a directory (a folder is where a file should be: move it away)"
    )


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("notes.md", "notes.md"),
        ("café.md", "café.md"),
        (b"caf\xe9.md".decode("utf-8", "surrogateescape"), "caf\\xe9.md"),
        ("two\nlines.md", "two\\x0alines.md"),
        ("tab\there.md", "tab\\x09here.md"),
        ("line\u2028sep.md", "line\\u2028sep.md"),
    ],
)
def test_display_path_escapes_what_is_not_plain_text(name, shown):
    assert display_path(name) == shown
    display_path(name).encode("utf-8")  # always encodable: SQLite, JSON, Markdown
