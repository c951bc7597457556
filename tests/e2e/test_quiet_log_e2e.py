"""A cron-scheduled `health` against the real gateway, the way a host runs it: `memwarden install
cron` (a stand-in `crontab`), a secrets file, then the crontab's own command line run by `sh`
with cron's bare environment. Gateway up: the run is quiet and exits 0; gateway stopped: the log
holds one time-stamped CRITICAL line for it.

The gateway fixture may be shared with other tests: it is always started again before the test
ends, on the same port and state.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from support.cli import run_subprocess
from support.schedulers import crontab_stub

pytestmark = pytest.mark.e2e

STAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d"


def install_cron(gateway, tmp_path: Path) -> tuple[str, Path, dict[str, str]]:
    """Install memwarden's cron block for `gateway`; return the health line's command, its log
    and the environment cron runs it with."""
    home = tmp_path / "home"
    config_home, state_home = home / ".config", home / ".local" / "state"
    (config_home / "memwarden").mkdir(parents=True)
    (config_home / "memwarden" / "config.toml").write_text(
        f'[install]\nexecutable = "{Path(sys.executable).with_name("memwarden")}"\n'
        "[health]\nrpc_check = true\nprobe_timeout_seconds = 5.0\n"
        # The machine's disk and the jobs this test does not run are not its subject.
        'disabled_checks = ["disk:*", "jobs.stale:*"]\n'
    )
    secrets = config_home / "memwarden" / "secrets.env"
    secrets.write_text(f"MEMWARDEN_GATEWAY_TOKEN={gateway.token}\n")
    secrets.chmod(0o600)
    env = dict(gateway.env, HOME=str(home))
    env.update(XDG_CONFIG_HOME=str(config_home), XDG_STATE_HOME=str(state_home))
    env.pop("OPENCLAW_GATEWAY_TOKEN")  # a timer sees the secrets file, not this shell
    env.update(crontab_stub(tmp_path / "stubs"))
    installed = run_subprocess("install", "cron", env=env, timeout=120)
    assert installed.exit_code == 0, installed.stderr
    (line,) = [
        line
        for line in Path(env["STUB_CRONTAB"]).read_text().splitlines()
        if line.split()[6:7] == ["health"]
    ]
    cron_env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "SHELL": "/bin/sh"}
    return line.split(None, 5)[5], state_home / "memwarden" / "logs" / "health.log", cron_env


def run_as_cron(command: str, env: dict[str, str]) -> int:
    return subprocess.run(["/bin/sh", "-c", command], env=env, timeout=180, check=False).returncode


def test_cron_health_with_the_gateway_stopped_logs_a_time_stamped_critical_line(gateway, tmp_path):
    command, log, cron_env = install_cron(gateway, tmp_path)

    assert run_as_cron(command, cron_env) == 0, log.read_text() if log.exists() else ""
    assert not log.exists() or log.read_text() == ""  # quiet: nothing to report

    gateway.stop()
    try:
        assert run_as_cron(command, cron_env) == 1
    finally:
        gateway.start()

    lines = log.read_text().splitlines()
    live = [line for line in lines if "memwarden: health gateway.live:" in line]
    assert len(live) == 1, lines
    assert re.match(
        rf"^{STAMP} CRITICAL memwarden: health gateway\.live: gateway not live", live[0]
    )
    assert not [line for line in lines if "gateway.ready" in line or "gateway.rpc" in line]
    assert all(re.match(rf"^{STAMP} [A-Z]+ memwarden: ", line) for line in lines), lines
