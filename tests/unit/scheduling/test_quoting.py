"""Escaping for systemd, sh and cron: values survive each parser unchanged."""

from __future__ import annotations

from memwarden.scheduling.quoting import (
    cron_word,
    systemd_assignment,
    systemd_path,
    systemd_word,
)


def test_systemd_word_plain_path_is_left_as_is():
    assert systemd_word("/home/alice/.local/bin/memwarden") == "/home/alice/.local/bin/memwarden"


def test_systemd_word_space_quote_percent_dollar_are_escaped():
    assert systemd_word('/opt/my apps/mem"warden%$x') == '"/opt/my apps/mem\\"warden%%$$x"'


def test_systemd_assignment_with_space_is_quoted_whole():
    assert systemd_assignment("MEMWARDEN_CONFIG", "/a b/c.toml") == '"MEMWARDEN_CONFIG=/a b/c.toml"'


def test_systemd_assignment_percent_is_doubled():
    assert systemd_assignment("TZ", "50%") == "TZ=50%%"


def test_systemd_path_escapes_specifiers_only():
    assert systemd_path("/home/a b/%h.env") == "/home/a b/%%h.env"


def test_cron_word_escapes_percent_for_cron():
    assert cron_word("/logs/100%.log") == "/logs/100\\%.log"
