"""The real Prometheus tools in tests: promtool, and Alertmanager run on 127.0.0.1.

`scripts/test-tools.sh` (run by `make test` and `make e2e`) installs the Debian packages
`prometheus` and `prometheus-alertmanager` when missing. Without them the tests that need them
skip, naming the fix; with MEMWARDEN_TEST_REQUIRE_TOOLS=1 in the environment (`.ci/run` sets it)
they fail instead, so CI never passes by skipping them.

    with Alertmanager(tmp_path, receiver_url=slack.webhook_url) as manager:
        ... point memwarden at manager.url ...
        manager.alerts()           # the active alerts, as its API v2 lists them

Alertmanager runs with clustering off (`--cluster.listen-address=`), its own storage under the
given folder, a free loopback port, and a route that sends every group to `receiver_url` (a
webhook) at once: group_wait 0 s, group_interval 1 s, no repeat within the test.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Self

import httpx
import pytest

# Read at import: the tests' own fixtures clear MEMWARDEN_* variables before each test.
REQUIRED = os.environ.get("MEMWARDEN_TEST_REQUIRE_TOOLS") == "1"
START_TIMEOUT = 30.0
WAIT_TIMEOUT = 30.0

ROUTE_TO_WEBHOOK = """\
route:
  receiver: hook
  group_by: [alertname, gateway]
  group_wait: 0s
  group_interval: 1s
  repeat_interval: 24h
receivers:
  - name: hook
    webhook_configs:
      - url: {receiver_url}
        send_resolved: true
"""
NO_RECEIVER = """\
route:
  receiver: none
receivers:
  - name: none
"""


def tool(*names: str) -> str:
    """Return the path of the first of `names` on PATH; skip the test (fail it when the tools
    are required) when none is installed."""
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    reason = (
        f"{' or '.join(names)} not installed: run `make test-tools` as root "
        "(apt-get install prometheus prometheus-alertmanager)"
    )
    if REQUIRED:
        pytest.fail(reason + " [MEMWARDEN_TEST_REQUIRE_TOOLS=1]")
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(condition: Callable[[], Any], what: str, timeout: float = WAIT_TIMEOUT) -> Any:
    """Poll `condition` until it returns something true; return it. Fail naming `what` when it
    does not happen within `timeout` (a bound on waiting, not a measure of speed)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what} after {timeout:g} s")
        time.sleep(0.1)


class Alertmanager:
    """A real Alertmanager process on 127.0.0.1, its files under `root`."""

    def __init__(
        self, root: Path, receiver_url: str | None = None, config: str | None = None
    ) -> None:
        self.binary = tool("prometheus-alertmanager", "alertmanager")
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)
        if config is None:
            config = ROUTE_TO_WEBHOOK.format(receiver_url=receiver_url) if receiver_url else None
        self.config_path = root / "alertmanager.yml"
        self.config_path.write_text(config or NO_RECEIVER, encoding="utf-8")
        self.port = free_port()
        self.log_path = root / "alertmanager.log"
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Self:
        """Start it (again, on the same port and storage); return once it is ready."""
        arguments = [
            self.binary,
            f"--config.file={self.config_path}",
            f"--storage.path={self.root / 'data'}",
            f"--web.listen-address=127.0.0.1:{self.port}",
            "--cluster.listen-address=",
            "--log.level=warn",
        ]
        with self.log_path.open("ab") as log:
            self._process = subprocess.Popen(arguments, stdout=log, stderr=log)
        deadline = time.monotonic() + START_TIMEOUT
        while not self._ready():
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"Alertmanager did not start: {self.log_tail()}")
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def alerts(self, **filters: str) -> list[dict[str, Any]]:
        """Return the active alerts (optionally those whose labels equal `filters`)."""
        matchers = [f'{name}="{value}"' for name, value in filters.items()]
        response = httpx.get(
            f"{self.url}/api/v2/alerts", params={"filter": matchers}, timeout=5, trust_env=False
        )
        response.raise_for_status()
        return response.json()

    def log_tail(self, lines: int = 20) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def _ready(self) -> bool:
        try:
            response = httpx.get(f"{self.url}/-/ready", timeout=1, trust_env=False)
        except httpx.HTTPError:
            return False
        return response.status_code == 200


def run_tool(*arguments: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run promtool/amtool with `arguments`; return the completed process (never raises)."""
    binary = tool(str(arguments[0]))
    return subprocess.run(
        [binary, *map(str, arguments[1:])],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )
