"""The cron and launchd runner scripts as the schedulers run them: the installed crontab line
through `sh -c` with cron's bare environment, the real memwarden behind it, its secrets file,
a Slack stand-in on 127.0.0.1, and the whole-run limit.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from memwarden.scheduling.jobs import ScheduledJob
from memwarden.scheduling.units import UnitSpec, runner_file
from support.cli import run_cli
from support.deployments import make_sqlite_era_state
from support.schedulers import Stubs, install_stubs
from support.slack_server import SlackServer

MEMWARDEN = Path(sys.executable).with_name("memwarden")
# A bot token with what a shell would expand or cut, and a channel written in quotes.
BOT_TOKEN = "xoxb-1$PATH`id`'q"
SECRETS = (
    "# memwarden's secrets\n"
    "MEMWARDEN_SLACK_BOT_TOKEN=xoxb-1$PATH`id`'q\n"
    'MEMWARDEN_SLACK_CHANNEL="C0123"\n'
)
ISO_STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z ")


def closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def cron_environment(home: Path) -> dict[str, str]:
    """What cron gives a job: no variables of the shell that installed it."""
    return {"PATH": "/usr/bin:/bin", "HOME": str(home), "SHELL": "/bin/sh", "LOGNAME": "alice"}


def run_as_cron(stubs: Stubs, job: str, home: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["/bin/sh", "-c", stubs.cron_command(job)],
        env=cron_environment(home),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def installed_cron(capsys, tmp_path, isolated_env, monkeypatch):
    """`memwarden install cron` of the real memwarden against a gateway whose HTTP port is closed,
    with Slack pointed at a local stand-in; yields (stubs, slack, secrets file, log dir)."""
    stubs = install_stubs(tmp_path / "stubs")
    for name, value in stubs.env().items():
        monkeypatch.setenv(name, value)
    state = make_sqlite_era_state(tmp_path)
    with SlackServer(token=BOT_TOKEN, channels={"C0123"}) as slack:
        config = tmp_path / "config.toml"
        config.write_text(
            f'[install]\nexecutable = "{MEMWARDEN}"\n'
            f'[slack]\napi_base_url = "{slack.api_base_url}"\ntimeout_seconds = 5\n'
            f'[health]\ngateway_http_url = "{closed_port_url()}"\nprobe_timeout_seconds = 2\n'
            'disabled_checks = ["gateway.process", "disk:*", "jobs.stale:*"]\n'
        )
        installed = run_cli(
            capsys, "--config", config, "--state-dir", state.state_dir, "install", "cron"
        )
        assert installed.exit_code == 0, installed.stderr
        secrets = isolated_env / ".config" / "memwarden" / "secrets.env"
        yield stubs, slack, secrets, isolated_env / ".local/state/memwarden/logs"


def test_cron_runner_memwarden_reads_the_secrets_file_as_written(installed_cron, isolated_env):
    stubs, slack, secrets, logs = installed_cron
    secrets.write_text(SECRETS)
    secrets.chmod(0o600)

    completed = run_as_cron(stubs, "health", isolated_env)

    assert completed.returncode == 1  # memwarden's exit code: health found the gateway down
    assert completed.stdout == completed.stderr == ""  # the crontab line logs everything
    (sent,) = slack.delivered()  # the token with `$`, backticks and a quote, as written
    assert sent.body["channel"] == "C0123"
    assert "gateway.live" in sent.body["text"]
    log = (logs / "health.log").read_text()
    assert BOT_TOKEN not in log and "xoxb" not in log
    runner = (isolated_env / ".local/state/memwarden/bin/memwarden-cron").read_text()
    assert str(secrets) not in runner.split("\n", 5)[5]  # named in a comment, never sourced
    assert ". " not in runner and "source" not in runner


def test_cron_runner_a_comment_after_a_value_is_a_config_error_naming_the_line(
    installed_cron, isolated_env, capsys
):
    stubs, slack, secrets, logs = installed_cron
    secrets.write_text(SECRETS.replace('"C0123"', '"C0123" # ops channel'))
    secrets.chmod(0o600)

    completed = run_as_cron(stubs, "health", isolated_env)

    assert completed.returncode == 2
    log = (logs / "health.log").read_text()
    assert f"{secrets}:3: `#` after a value is not a comment" in log
    assert slack.requests == []  # nothing was sent with a channel nobody meant
    for command in (("config", "check"), ("doctor", "--skip-gateway")):
        checked = run_cli(capsys, *command)
        assert checked.exit_code == 2
        assert f"{secrets}:3: `#` after a value is not a comment" in checked.stderr


def run_checkpoint(runner: Path) -> subprocess.CompletedProcess:
    """Run `<runner> checkpoint` as a scheduler would, with a bare PATH."""
    return subprocess.run(
        [str(runner), "checkpoint"],
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def write_runner(
    tmp_path: Path, executable: Path, job: ScheduledJob, target: str, environment=()
) -> Path:
    """Render the `target` runner for `executable` and `job` into tmp_path; return its path."""
    spec = UnitSpec(
        jobs=(job,),
        executable=executable,
        secrets_file=tmp_path / "secrets.env",
        storage_dir=tmp_path / "storage",
        log_dir=tmp_path / "storage" / "logs",
        environment=environment,
        systemd_dir=tmp_path / "systemd",
        launchd_dir=tmp_path / "launchd",
        launchd_label="org.memwarden",
    )
    planned = runner_file(spec, target)
    script = tmp_path / planned.path.name
    script.write_text(planned.content)
    script.chmod(planned.mode)
    return script


@pytest.fixture
def slow_runner(tmp_path) -> Path:
    """A runner rendered for a stand-in memwarden that never finishes, with a 1 s limit."""
    fake = tmp_path / "slow-memwarden"
    fake.write_text(
        "#!/bin/sh\n"
        f"echo started > {tmp_path}/started\n"
        f"trap 'echo stopped by TERM > {tmp_path}/stopped; exit 143' TERM\n"
        "while :; do sleep 1; done\n"
    )
    fake.chmod(0o755)
    job = ScheduledJob("checkpoint", 20, "summary", 2, limit_seconds=1)
    return write_runner(tmp_path, fake, job, "cron", (("PATH", "/usr/bin:/bin"),))


def test_runner_stops_a_run_past_its_limit_and_says_so_with_a_time_stamp(slow_runner, tmp_path):
    completed = run_checkpoint(slow_runner)

    assert (tmp_path / "started").exists()
    assert (tmp_path / "stopped").read_text() == "stopped by TERM\n"
    assert completed.returncode == 143
    (line,) = completed.stderr.splitlines()
    assert ISO_STAMP.match(line), line
    assert "memwarden-cron: error: memwarden checkpoint still running after 1s" in line


def test_runner_a_quick_run_leaves_no_watchdog_behind(tmp_path):
    quick = tmp_path / "quick-memwarden"
    quick.write_text('#!/bin/sh\necho "ran $*"\nexit 3\n')
    quick.chmod(0o755)
    script = write_runner(tmp_path, quick, ScheduledJob("health", 5, "summary", 0), "launchd")

    # Through a pipe that stays open as long as any process holding it lives: `communicate`
    # returns only once the runner and every child it started (the watchdog's sleep) are gone.
    process = subprocess.Popen(
        [str(script), "health"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    stdout, stderr = process.communicate(timeout=60)

    assert process.returncode == 3
    assert stdout == "ran -q health\n"
    assert stderr == ""


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX sh")
def test_runner_is_valid_posix_sh(slow_runner):
    assert subprocess.run(["sh", "-n", str(slow_runner)], check=False).returncode == 0
    if shutil.which("dash"):
        assert subprocess.run(["dash", "-n", str(slow_runner)], check=False).returncode == 0
    assert os.access(slow_runner, os.X_OK)


def test_runner_whose_memwarden_is_gone_says_so_in_one_stamped_line(tmp_path):
    """The venv removed or moved: cron's log gets the path and the fix, not the shell's bare
    "not found"."""
    gone = tmp_path / "old venv" / "bin" / "memwarden"
    job = ScheduledJob("checkpoint", 20, "summary", 2)
    script = write_runner(tmp_path, gone, job, "cron", (("PATH", "/usr/bin:/bin"),))

    completed = run_checkpoint(script)

    assert completed.returncode == 127
    assert completed.stdout == ""
    (line,) = completed.stderr.splitlines()
    assert ISO_STAMP.match(line), line
    assert line.endswith(
        f"memwarden-cron: error: {gone} is missing or not executable; "
        "install memwarden again, then run `memwarden install cron`"
    )
