"""What a timer's log holds: `memwarden -q <job>` run as a real process, its stderr read back.

Quiet is not silent: one line per problem (a check not ok, a failed agent, a failed send, a
doctor finding), time-stamped with its level outside the journal, with the `<N>` syslog priority
under journald; a run skipped for the lock (exit 75) stays silent under -q.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from memwarden.process.locks import RunLock
from support.cli import run_subprocess
from support.deployments import make_sqlite_era_state
from support.health import MACHINE_DEPENDENT_CHECKS
from support.schedulers import crontab_stub
from support.slack_server import SlackServer, server_error

STAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d"


def closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def state(tmp_path):
    return make_sqlite_era_state(tmp_path)


@pytest.fixture
def gateway_down(monkeypatch):
    """The gateway's HTTP port answers nothing; checks that depend on this machine are off."""
    monkeypatch.setenv("MEMWARDEN_HEALTH_GATEWAY_HTTP_URL", closed_port_url())
    monkeypatch.setenv("MEMWARDEN_HEALTH_DISABLED_CHECKS", MACHINE_DEPENDENT_CHECKS)
    monkeypatch.delenv("JOURNAL_STREAM", raising=False)


def test_quiet_health_with_the_gateway_down_logs_one_time_stamped_critical_line(
    state, gateway_down
):
    result = run_subprocess("-q", "--state-dir", state.state_dir, "health")

    assert result.exit_code == 1
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()  # one outage, one line: readiness is not probed
    assert re.match(rf"^{STAMP} CRITICAL memwarden: health gateway\.live: gateway not live", line)


def test_quiet_health_logs_each_warning_at_warning_level(state, gateway_down, monkeypatch):
    monkeypatch.setenv("MEMWARDEN_HEALTH_MEMORY_FILE_WARNING_KB", "1")
    (state.workspace / "MEMORY.md").write_text("x" * 4096)

    result = run_subprocess("-q", "--state-dir", state.state_dir, "health")

    warnings = [line for line in result.stderr.splitlines() if " WARNING " in line]
    assert any("memwarden: health memory.oversized:" in line for line in warnings), result.stderr
    assert len(result.stderr.splitlines()) == 2  # the critical gateway.live and this warning


def test_quiet_health_under_journald_carries_syslog_priorities(
    state, gateway_down, monkeypatch, tmp_path
):
    monkeypatch.setenv("MEMWARDEN_HEALTH_MEMORY_FILE_WARNING_KB", "1")
    (state.workspace / "MEMORY.md").write_text("x" * 4096)
    journal = tmp_path / "journal-stream"
    with journal.open("w") as stream:
        info = os.fstat(stream.fileno())
        env = dict(os.environ, JOURNAL_STREAM=f"{info.st_dev}:{info.st_ino}")
        completed = subprocess.run(
            [sys.executable, "-m", "memwarden", "-q", "--state-dir", state.state_dir, "health"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=stream,
            timeout=60,
            check=False,
        )
    lines = journal.read_text().splitlines()
    assert completed.returncode == 1
    assert lines[0].startswith("<2>memwarden: health gateway.live: gateway not live")
    assert any(line.startswith("<4>memwarden: health memory.oversized:") for line in lines)
    assert all(re.match(r"^<\d>memwarden: ", line) for line in lines), lines


def test_journal_stream_of_another_file_keeps_time_stamps(state, gateway_down, tmp_path):
    elsewhere = tmp_path / "not-my-stderr"
    elsewhere.write_text("")
    info = elsewhere.stat()
    env = dict(os.environ, JOURNAL_STREAM=f"{info.st_dev}:{info.st_ino}")

    result = run_subprocess("-q", "--state-dir", state.state_dir, "health", env=env)

    assert re.match(rf"^{STAMP} CRITICAL memwarden: health gateway\.live", result.stderr)


def test_quiet_checkpoint_logs_one_error_line_per_failed_agent(state, tmp_path):
    # The agent has sessions, so the gateway made its workspace: it was removed since.
    state.workspace.rename(tmp_path / "moved-away")

    result = run_subprocess("-q", "--state-dir", state.state_dir, "checkpoint")

    assert result.exit_code == 1
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert re.match(rf"^{STAMP} ERROR memwarden: checkpoint of agent main failed: ", line)
    assert f"{state.workspace}: the workspace of agent main is gone" in line


def test_quiet_health_failed_send_is_a_line_of_its_own(state, gateway_down, monkeypatch):
    with SlackServer(token="xoxb-t", channels={"C1"}) as slack:
        slack.default = server_error(503)
        monkeypatch.setenv("MEMWARDEN_SLACK_BOT_TOKEN", "xoxb-t")
        monkeypatch.setenv("MEMWARDEN_SLACK_CHANNEL", "C1")
        monkeypatch.setenv("MEMWARDEN_SLACK_API_BASE_URL", slack.api_base_url)
        monkeypatch.setenv("MEMWARDEN_SLACK_RETRY_BUDGET_SECONDS", "0")
        result = run_subprocess("-q", "--state-dir", state.state_dir, "health")

    lines = result.stderr.splitlines()
    assert len(lines) == 2, lines
    assert " CRITICAL memwarden: health gateway.live:" in lines[0]
    assert re.match(rf"^{STAMP} ERROR memwarden: alert not delivered \(", lines[1])
    assert "xoxb-t" not in result.stderr


def test_quiet_doctor_logs_each_finding_that_needs_action_or_is_a_warning(state):
    result = run_subprocess("-q", "--state-dir", state.state_dir, "doctor", "--skip-gateway")

    assert result.exit_code == 1
    assert result.stdout == ""
    lines = result.messages
    assert "memwarden: doctor timers.installed: no timers are installed" in "\n".join(lines)
    assert all(line.startswith("memwarden: doctor ") for line in lines), lines
    errors = [line for line in result.stderr.splitlines() if " ERROR " in line]
    assert any("hooks.session-summary" in line and "; fix: " in line for line in errors)
    assert any(" WARNING memwarden: doctor " in line for line in result.stderr.splitlines())


def test_doctor_for_people_prints_the_report_and_no_stderr_lines(state):
    result = run_subprocess("--state-dir", state.state_dir, "doctor", "--skip-gateway")

    assert result.exit_code == 1
    assert "[action]  timers.installed" in result.stdout
    assert result.stderr == ""


@pytest.mark.parametrize("quiet", [True, False])
def test_run_skipped_for_the_lock_is_silent_only_under_quiet(state, isolated_env, quiet):
    locks = isolated_env / ".local" / "state" / "memwarden" / "locks"
    with RunLock(locks, "checkpoint"):
        flags = ["-q"] if quiet else []
        result = run_subprocess(*flags, "--state-dir", state.state_dir, "checkpoint")

    assert result.exit_code == 75
    if quiet:
        assert result.stderr == ""
    else:
        (line,) = result.messages
        assert line.startswith("memwarden: checkpoint is already running (pid ")


def test_abbreviated_global_option_is_refused_in_one_line():
    result = run_subprocess("--conf", "x.toml", "status")

    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.messages == ["memwarden: unrecognized option: --conf (see `memwarden --help`)"]


@pytest.mark.parametrize(
    "arguments",
    [
        ["status", "--jso"],
        ["health", "--no-al"],
        ["history", "list", "--lim", "3"],
        ["checkpoint", "--dry"],
    ],
)
def test_abbreviated_command_options_are_refused(arguments):
    result = run_subprocess(*arguments)

    assert result.exit_code == 2
    (line,) = result.messages
    assert "unrecognized arguments:" in line
    assert line.endswith(f"(see `memwarden {arguments[0]} --help`)")  # that command's options


def test_cron_runner_logs_a_time_stamped_critical_line_when_the_gateway_is_down(
    state, gateway_down, tmp_path, isolated_env, monkeypatch
):
    """The whole path of a cron run: install, then the crontab's own command line."""
    for name, value in crontab_stub(tmp_path / "stubs").items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(state.state_dir))
    config = tmp_path / "config.toml"
    config.write_text(
        f'[install]\nexecutable = "{Path(sys.executable).parent / "memwarden"}"\n'
        f'[health]\ngateway_http_url = "{os.environ["MEMWARDEN_HEALTH_GATEWAY_HTTP_URL"]}"\n'
        f"disabled_checks = {MACHINE_DEPENDENT_CHECKS}\n"
    )
    monkeypatch.setenv("MEMWARDEN_CONFIG", str(config))
    for name in ("MEMWARDEN_HEALTH_GATEWAY_HTTP_URL", "MEMWARDEN_HEALTH_DISABLED_CHECKS"):
        monkeypatch.delenv(name)
    installed = run_subprocess("install", "cron")
    assert installed.exit_code == 0, installed.stderr
    (line,) = [
        line
        for line in Path(os.environ["STUB_CRONTAB"]).read_text().splitlines()
        if " health " in line
    ]
    command = line.split(None, 5)[5]  # what cron runs, with its redirection into the log

    cron_env = {"HOME": str(isolated_env), "PATH": "/usr/bin:/bin", "SHELL": "/bin/sh"}
    completed = subprocess.run(["/bin/sh", "-c", command], env=cron_env, timeout=60, check=False)

    assert completed.returncode == 1
    log = (isolated_env / ".local/state/memwarden/logs/health.log").read_text()
    assert re.search(rf"^{STAMP} CRITICAL memwarden: health gateway\.live: ", log, re.M), log
