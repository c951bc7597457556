"""memwarden's own state cannot be written: a full disk, state.db locked by another process.

Every job says so in one line naming state.db (no traceback, exit 1); health still runs its
checks and alerts, on stderr and through its sink, without recording anything.

A full disk is simulated with RLIMIT_FSIZE = 0 in the child process: every write that would grow
a file fails (EFBIG, with SIGXFSZ ignored), exactly where a full disk fails it (SQLite's WAL and
shared-memory files, new lock files, temp files), and it needs no privilege, unlike a small
tmpfs or loop device, so the test runs the same on any CI machine. Sockets and pipes are not
files: Slack and the captured stderr still work. (A real full 1 MiB tmpfs gives the same
lines, with "the disk is full" as the reason.)
"""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from memwarden.store import state as state_module
from support.cli import CliResult, run_cli, run_subprocess
from support.deployments import make_sqlite_era_state
from support.health import MACHINE_DEPENDENT_CHECKS
from support.prometheus import Alertmanager
from support.slack_server import SlackServer

pytestmark = pytest.mark.skipif(not hasattr(resource, "RLIMIT_FSIZE"), reason="needs rlimits")

CHANNEL = "C0TEST"
TOKEN = "xoxb-test-token"


@pytest.fixture
def gateway(tmp_path):
    return make_sqlite_era_state(tmp_path)


@pytest.fixture
def env(tmp_path, gateway) -> dict[str, str]:
    environment = dict(os.environ)
    environment["MEMWARDEN_GENERAL_STORAGE_DIR"] = str(tmp_path / "memwarden")
    environment["MEMWARDEN_HEALTH_DISABLED_CHECKS"] = MACHINE_DEPENDENT_CHECKS
    environment["MEMWARDEN_HEALTH_GATEWAY_HTTP_URL"] = "http://127.0.0.1:9"  # nothing listens
    environment["MEMWARDEN_HEALTH_PROBE_TIMEOUT_SECONDS"] = "2"
    environment["PYTHONPATH"] = os.pathsep.join(sys.path)
    return environment


@pytest.fixture
def slack():
    with SlackServer(token=TOKEN, channels={CHANNEL}) as server:
        yield server


def with_slack(env: dict[str, str], slack: SlackServer) -> dict[str, str]:
    return env | {
        "MEMWARDEN_SLACK_BOT_TOKEN": TOKEN,
        "MEMWARDEN_SLACK_CHANNEL": CHANNEL,
        "MEMWARDEN_SLACK_API_BASE_URL": slack.api_base_url,
    }


def run_on_full_disk(*arguments: str, env: dict[str, str]) -> CliResult:
    """Run the CLI in a child process that cannot grow any file (a full disk)."""

    def no_file_may_grow() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))

    completed = subprocess.run(
        [sys.executable, "-m", "memwarden", *arguments],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
        preexec_fn=no_file_may_grow,
    )
    return CliResult(completed.returncode, completed.stdout, completed.stderr)


@contextmanager
def write_locked(database: Path) -> Iterator[None]:
    """Hold state.db's write lock from another connection, as another process would."""
    connection = sqlite3.connect(database, isolation_level=None)
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        connection.execute("ROLLBACK")
        connection.close()


def assert_one_clear_line(result: CliResult, *words: str) -> None:
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert any(all(word in line for word in words) for line in lines), result.stderr


def prime(gateway, env) -> Path:
    """Run health once so state.db, its tables and the lock files exist; return state.db."""
    first = run_subprocess("--state-dir", gateway.state_dir, "health", "-q", env=env)
    assert first.exit_code == 1, first.stderr  # the gateway is down
    return Path(env["MEMWARDEN_GENERAL_STORAGE_DIR"]) / "state.db"


def test_health_on_full_disk_alerts_slack_and_stderr(gateway, env, slack):
    database = prime(gateway, env)
    before = database.stat().st_size

    result = run_on_full_disk(
        "--state-dir", gateway.state_dir, "health", "-q", env=with_slack(env, slack)
    )

    assert result.exit_code == 1
    assert_one_clear_line(result, str(database), "health cannot record its state")
    delivered = slack.delivered()
    assert len(delivered) == 1, result.stderr
    text = delivered[0].body["text"]
    assert "memwarden.state" in text and "gateway.live" in text
    assert database.stat().st_size == before


def test_health_on_full_disk_names_the_alertmanager_that_missed_the_alerts(gateway, env, tmp_path):
    prime(gateway, env)
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{unused.getsockname()[1]}"
    with Alertmanager(tmp_path / "am") as manager:
        urls = json.dumps([manager.url, closed])
        result = run_on_full_disk(
            "--state-dir",
            gateway.state_dir,
            "health",
            "-q",
            env=env | {"MEMWARDEN_ALERTMANAGER_URLS": urls},
        )
        assert manager.alerts(check="gateway.live"), result.stderr

    assert_one_clear_line(result, "not delivered to every Alertmanager", closed)


def test_health_on_full_disk_repeats_the_alert_each_run(gateway, env, slack):
    prime(gateway, env)
    for _run in range(2):
        result = run_on_full_disk(
            "--state-dir", gateway.state_dir, "health", "-q", env=with_slack(env, slack)
        )
        assert result.exit_code == 1
    assert len(slack.delivered()) == 2, "nothing could record that the first one was sent"


def test_health_json_on_full_disk_says_nothing_was_recorded(gateway, env):
    prime(gateway, env)
    result = run_on_full_disk("--state-dir", gateway.state_dir, "--json", "health", env=env)
    assert result.exit_code == 1
    data = result.json()
    assert data["alerts"]["recorded"] is False
    state_check = next(c for c in data["checks"] if c["key"] == "memwarden.state")
    assert state_check["status"] == "critical"


@pytest.mark.parametrize("job", ["checkpoint", "index", "maintain", "rotate"])
def test_job_on_full_disk_fails_in_one_line(gateway, env, job):
    prime(gateway, env)
    result = run_on_full_disk("--state-dir", gateway.state_dir, job, env=env)
    assert result.exit_code == 1
    assert_one_clear_line(result, "state.db", "memwarden's state database")


def test_health_with_state_locked_alerts_slack(gateway, env, slack):
    database = prime(gateway, env)
    with write_locked(database):
        result = run_subprocess(
            "--state-dir", gateway.state_dir, "health", "-q", env=with_slack(env, slack)
        )
    assert result.exit_code == 1
    assert_one_clear_line(result, str(database), "locked by another process")
    assert len(slack.delivered()) == 1
    assert "memwarden.state" in slack.delivered()[0].body["text"]


@pytest.mark.parametrize("job", ["checkpoint", "index", "maintain"])
def test_job_with_state_locked_fails_in_one_line(capsys, monkeypatch, gateway, env, job):
    database = prime(gateway, env)
    monkeypatch.setenv("MEMWARDEN_GENERAL_STORAGE_DIR", env["MEMWARDEN_GENERAL_STORAGE_DIR"])
    monkeypatch.setattr(state_module, "BUSY_TIMEOUT_MS", 50)
    with write_locked(database):
        result = run_cli(capsys, "--state-dir", gateway.state_dir, job)
    assert result.exit_code == 1
    assert_one_clear_line(result, str(database), "locked by another process")


def test_state_dir_a_file_is_a_config_error(tmp_path, gateway, env):
    not_a_folder = tmp_path / "memwarden-file"
    not_a_folder.write_text("x")
    env["MEMWARDEN_GENERAL_STORAGE_DIR"] = str(not_a_folder)
    result = run_subprocess("--state-dir", gateway.state_dir, "checkpoint", env=env)
    assert result.exit_code == 2
    assert_one_clear_line(result, str(not_a_folder), "general.storage_dir", "not a folder")
