"""The stderr line format: time stamp and level outside the journal, `<N>` under journald."""

from __future__ import annotations

import io
import logging
import re

from memwarden.process.log_format import (
    StderrFormatter,
    configure,
    stderr_is_journal,
    syslog_priority,
)


def record(level: int, message: str) -> logging.LogRecord:
    return logging.LogRecord("memwarden.test", level, __file__, 1, message, None, None)


def test_plain_lines_start_with_an_iso_time_stamp_and_the_level():
    line = StderrFormatter(journal=False).format(record(logging.WARNING, "disk full"))
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d WARNING memwarden: disk full", line
    )


def test_journal_lines_carry_the_syslog_priority_and_the_same_text():
    formatter = StderrFormatter(journal=True)
    assert formatter.format(record(logging.CRITICAL, "down")) == "<2>memwarden: down"
    assert formatter.format(record(logging.ERROR, "failed")) == "<3>memwarden: failed"
    assert formatter.format(record(logging.WARNING, "full")) == "<4>memwarden: full"
    assert formatter.format(record(logging.INFO, "did")) == "<6>memwarden: did"
    assert formatter.format(record(logging.DEBUG, "why")) == "<7>memwarden: why"


def test_each_line_of_a_long_message_gets_the_prefix():
    text = StderrFormatter(journal=True).format(record(logging.ERROR, "one\ntwo"))
    assert text == "<3>memwarden: one\n<3>two"


def test_levels_between_the_named_ones_take_the_next_priority_up():
    assert syslog_priority(logging.WARNING + 5) == 3
    assert syslog_priority(logging.CRITICAL + 10) == 2


def test_journal_stream_must_name_this_very_stream(tmp_path):
    path = tmp_path / "stream"
    with path.open("w") as stream:
        info = path.stat()
        assert stderr_is_journal({"JOURNAL_STREAM": f"{info.st_dev}:{info.st_ino}"}, stream)
        assert not stderr_is_journal({"JOURNAL_STREAM": f"{info.st_dev}:1"}, stream)
        assert not stderr_is_journal({}, stream)
    assert not stderr_is_journal({"JOURNAL_STREAM": "1:2"}, io.StringIO())


def test_configure_again_replaces_the_handler_instead_of_adding_one():
    first, second = io.StringIO(), io.StringIO()
    configure(logging.WARNING, first, env={})
    logger = configure(logging.WARNING, second, env={})
    logger.warning("once")
    assert first.getvalue() == ""
    assert second.getvalue().count("memwarden: once") == 1
