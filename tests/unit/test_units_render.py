"""Rendered timers read back as their schedulers read them: plists, crontab lines, unit keys."""

from __future__ import annotations

import configparser
import plistlib
import re
import shlex
from pathlib import Path

from memwarden.scheduling.jobs import OFFSETS, SUMMARIES, ScheduledJob
from memwarden.scheduling.units import (
    UnitSpec,
    cron_block,
    launchd_files,
    runner_file,
    secrets_file,
    systemd_files,
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


def test_systemd_service_is_oneshot_low_priority_with_secrets_from_env_file():
    service = next(p for p in systemd_files(spec()) if p.path.name == "memwarden-health.service")
    section = unit_sections(service.content)["Service"]
    assert section["Type"] == "oneshot"
    assert section["Nice"] == "19"
    assert section["IOSchedulingClass"] == "idle"
    assert section["SuccessExitStatus"] == "75"
    assert section["EnvironmentFile"] == f"-{HOME}/.config/memwarden/secrets.env"
    assert shlex.split(section["ExecStart"]) == [f"{HOME}/bin/memwarden", "-q", "health"]
    assert '"MEMWARDEN_CONFIG=' in service.content and "100%% config.toml" in service.content
    assert "# ProtectSystem=strict" in service.content


def test_systemd_timer_schedules_every_interval_after_boot():
    timer = next(p for p in systemd_files(spec()) if p.path.name == "memwarden-index.timer")
    parser = unit_sections(timer.content)
    assert parser["Timer"]["OnUnitActiveSec"] == "360min"
    assert parser["Timer"]["OnBootSec"] == "9min"
    assert parser["Timer"]["RandomizedDelaySec"] == "900s"
    assert parser["Timer"]["Persistent"] == "true"
    assert parser["Install"]["WantedBy"] == "timers.target"


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
        assert data["StartInterval"] == INTERVALS[job] * 60
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
    assert f"exec '{HOME}/bin/memwarden' -q \"$@\"" in runner.content
    assert f"export MEMWARDEN_CONFIG='{HOME}/.config/memwarden/100% config.toml'" in runner.content


def test_secrets_file_starter_lists_names_commented_out():
    planned = secrets_file(Path("/s/secrets.env"), ["MEMWARDEN_GATEWAY_TOKEN"])
    assert planned.role == "secrets"
    assert "# MEMWARDEN_GATEWAY_TOKEN=\n" in planned.content
    assert all(line.startswith("#") or not line for line in planned.content.splitlines())
