"""Rendered timers read back as their schedulers read them: plists, crontab lines, unit keys."""

from __future__ import annotations

import configparser
import plistlib
import re
import shlex
from pathlib import Path

import pytest

from memwarden.scheduling.jobs import OFFSETS, SUMMARIES, ScheduledJob
from memwarden.scheduling.units import (
    UnitSpec,
    cron_block,
    cron_word,
    launchd_files,
    runner_file,
    secrets_file,
    systemd_assignment,
    systemd_calendar,
    systemd_files,
    systemd_path,
    systemd_word,
)

HOME = "/home/alice smith"
INTERVALS = {"checkpoint": 20, "rotate": 30, "index": 360, "health": 5, "maintain": 1440}
CRON_FIELD = re.compile(r"^(\*|\d+(-\d+)?(/\d+)?|\*/\d+)$")
CRON_RANGES = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 7)]


def spec() -> UnitSpec:
    storage = f"{HOME}/.local/state/memwarden"
    return UnitSpec(
        jobs=tuple(ScheduledJob(n, m, SUMMARIES[n], OFFSETS[n]) for n, m in INTERVALS.items()),
        executable=Path(f"{HOME}/bin/memwarden"),
        secrets_file=Path(f"{HOME}/.config/memwarden/secrets.env"),
        storage_dir=Path(storage),
        log_dir=Path(f"{storage}/logs"),
        environment=(
            ("MEMWARDEN_CONFIG", f"{HOME}/.config/memwarden/100% config.toml"),
            ("PATH", "/usr/bin:/bin"),
        ),
        systemd_dir=Path(f"{HOME}/.config/systemd/user"),
        launchd_dir=Path(f"{HOME}/Library/LaunchAgents"),
        launchd_label="org.memwarden",
    )


def unit_sections(text: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None, comment_prefixes=("#",))
    parser.optionxform = str
    parser.read_string(text)
    return parser


def test_systemd_files_one_service_and_timer_per_job():
    names = sorted(planned.path.name for planned in systemd_files(spec()))
    expected = sorted(
        f"memwarden-{job}.{kind}" for job in INTERVALS for kind in ("service", "timer")
    )
    assert names == expected


def test_systemd_service_is_oneshot_low_priority_hardened_and_holds_no_secret():
    service = next(p for p in systemd_files(spec()) if p.path.name == "memwarden-health.service")
    section = unit_sections(service.content)["Service"]
    assert section["Type"] == "oneshot"
    assert section["Nice"] == "19"
    assert section["IOSchedulingClass"] == "idle"
    assert section["SuccessExitStatus"] == "75"
    assert "EnvironmentFile" not in section  # memwarden reads its secrets file itself
    assert shlex.split(section["ExecStart"]) == [f"{HOME}/bin/memwarden", "-q", "health"]
    assert '"MEMWARDEN_CONFIG=' in service.content and "100%% config.toml" in service.content
    for setting in ("NoNewPrivileges", "LockPersonality", "RestrictRealtime", "RestrictSUIDSGID"):
        assert section[setting] == "yes"
    assert section["RestrictNamespaces"] == "yes"
    assert section["RestrictAddressFamilies"] == "AF_UNIX AF_INET AF_INET6"
    assert section["SystemCallArchitectures"] == "native"
    assert section["SystemCallFilter"] == "@system-service"
    assert section["UMask"] == "0077"
    assert "# ProtectSystem=strict" in service.content  # the path-dependent part stays off


@pytest.mark.parametrize(
    ("job", "on_calendar"),
    [("index", "*-*-* 00/6:07:00"), ("maintain", "*-*-* 03:13:00")],
)
def test_systemd_timer_of_a_daily_or_six_hourly_job_runs_on_the_calendar_and_catches_up(
    job, on_calendar
):
    timer = next(p for p in systemd_files(spec()) if p.path.name == f"memwarden-{job}.timer")
    section = unit_sections(timer.content)["Timer"]
    assert section["OnCalendar"] == on_calendar
    assert section["Persistent"] == "true"
    assert section["RandomizedDelaySec"] == "900s"
    assert "OnUnitActiveSec" not in section and "OnBootSec" not in section
    assert unit_sections(timer.content)["Install"]["WantedBy"] == "timers.target"


def test_systemd_timer_of_a_frequent_job_runs_after_the_last_run_without_catch_up():
    timer = next(p for p in systemd_files(spec()) if p.path.name == "memwarden-checkpoint.timer")
    section = unit_sections(timer.content)["Timer"]
    assert section["OnUnitActiveSec"] == "20min"
    assert section["OnBootSec"] == "4min"
    assert section["RandomizedDelaySec"] == "120s"
    assert "Persistent" not in section  # it does nothing without OnCalendar=


@pytest.mark.parametrize(
    ("minutes", "expected"),
    [
        (60, "*-*-* *:07:00"),
        (120, "*-*-* 00/2:07:00"),
        (1440, "*-*-* 03:07:00"),
        (2880, "*-*-1/2 03:07:00"),
    ],
)
def test_systemd_calendar_expressions(minutes, expected):
    calendar = ScheduledJob("index", minutes, "s", 7).calendar
    assert systemd_calendar(calendar) == expected


def test_launchd_plists_round_trip_through_plistlib():
    plists = [p for p in launchd_files(spec()) if p.path.suffix == ".plist"]
    assert len(plists) == len(INTERVALS)
    for planned in plists:
        data = plistlib.loads(planned.content.encode("utf-8"))
        job = data["ProgramArguments"][1]
        assert planned.path.name == f"org.memwarden.{job}.plist"
        assert data["Label"] == f"org.memwarden.{job}"
        assert data["ProgramArguments"] == [
            f"{HOME}/.local/state/memwarden/bin/memwarden-launchd",
            job,
        ]
        if job == "index":
            assert data["StartCalendarInterval"] == [
                {"Hour": hour, "Minute": 7} for hour in (0, 6, 12, 18)
            ]
        elif job == "maintain":
            assert data["StartCalendarInterval"] == {"Hour": 3, "Minute": 13}
        else:
            assert data["StartInterval"] == INTERVALS[job] * 60
            assert "StartCalendarInterval" not in data
        assert data["RunAtLoad"] is True
        assert data["StandardOutPath"] == f"{HOME}/.local/state/memwarden/logs/{job}.log"
        assert data["StandardErrorPath"] == data["StandardOutPath"]
        assert data["EnvironmentVariables"]["MEMWARDEN_CONFIG"].endswith("100% config.toml")


def test_launchd_plist_escapes_xml_in_values():
    special = UnitSpec(**{**spec().__dict__, "environment": (("TZ", "<&>"),)})
    planned = next(p for p in launchd_files(special) if p.path.suffix == ".plist")
    assert plistlib.loads(planned.content.encode())["EnvironmentVariables"]["TZ"] == "<&>"


def test_cron_block_lines_have_five_valid_fields_and_a_command():
    lines = [line for line in cron_block(spec()).splitlines() if line and not line.startswith("#")]
    assert len(lines) == len(INTERVALS)
    for line in lines:
        fields = line.split(None, 5)
        assert len(fields) == 6
        for field, (low, high) in zip(fields[:5], CRON_RANGES, strict=True):
            assert CRON_FIELD.match(field), line
            numbers = [int(n) for n in re.findall(r"\d+", field.split("/")[0])]
            assert all(low <= n <= high for n in numbers), line
        command = shlex.split(fields[5].replace("\\%", "%"))
        assert command[0] == f"{HOME}/.local/state/memwarden/bin/memwarden-cron"
        assert command[1] in INTERVALS


def test_runner_execs_the_absolute_executable_quietly_and_pins_environment():
    runner = runner_file(spec(), "cron")
    assert runner.mode == 0o700
    assert f"\n'{HOME}/bin/memwarden' -q \"$@\" &\n" in runner.content
    assert "\tcheckpoint) limit=1200 ;;\n" in runner.content  # TimeoutStartSec's 20 min
    assert f"export MEMWARDEN_CONFIG='{HOME}/.config/memwarden/100% config.toml'" in runner.content


def test_secrets_file_starter_lists_names_commented_out():
    planned = secrets_file(Path("/s/secrets.env"), ["MEMWARDEN_GATEWAY_TOKEN"])
    assert planned.role == "secrets"
    assert "# MEMWARDEN_GATEWAY_TOKEN=\n" in planned.content
    assert all(line.startswith("#") or not line for line in planned.content.splitlines())


# Escaping for systemd, sh and cron: values survive each parser unchanged.


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
