"""SIGTERM stops a real job process at once and its run is recorded as failed (exit 143).

Each job is caught while it waits (on a gateway that drips bytes, on another run's memory
lock), so the signal lands mid-run every time. `wait(timeout=10)` is a liveness check: before
the fix the jobs went on with their next items, or waited out their own timeouts (minutes here).
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memwarden.process.locks import RunLock
from support.deployments import make_generated_fleet, make_sqlite_era_state
from support.drip_server import DripServer, http_headers_drip
from support.health import MACHINE_DEPENDENT_CHECKS

pytestmark = pytest.mark.timeout(120)


def start(state_dir: Path, *arguments: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "memwarden", "--state-dir", str(state_dir), *arguments],
        env=os.environ | env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(condition, what: str) -> None:
    for _ in range(600):
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"never happened: {what}")


def recorded_runs() -> list[tuple]:
    database = Path(os.environ["XDG_STATE_HOME"]) / "memwarden" / "state.db"
    with sqlite3.connect(database) as connection:
        return connection.execute("SELECT job, exit_code, summary_json FROM runs").fetchall()


def stop(process: subprocess.Popen[str]) -> tuple[int, str]:
    process.send_signal(signal.SIGTERM)
    try:
        _out, err = process.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise
    return process.returncode, err


def test_sigterm_health_waiting_on_the_gateway_stops_and_records_the_run_failed(tmp_path):
    state = make_sqlite_era_state(tmp_path)
    with DripServer(http_headers_drip()) as gateway:
        process = start(
            state.state_dir,
            "health",
            MEMWARDEN_HEALTH_GATEWAY_HTTP_URL=gateway.http_url,
            MEMWARDEN_HEALTH_PROBE_TIMEOUT_SECONDS="60",
            MEMWARDEN_HEALTH_DISABLED_CHECKS=MACHINE_DEPENDENT_CHECKS,
        )
        wait_for(lambda: gateway.connections >= 1, "health probing the gateway")
        exit_code, stderr = stop(process)

    assert exit_code == 143
    assert (
        stderr.strip()
        .splitlines()[-1]
        .endswith(" ERROR memwarden: stopped by SIGTERM before finishing")
    )
    assert recorded_runs() == [
        ("health", 143, '{"error":"stopped by SIGTERM before finishing"}'),
    ]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_sigterm_checkpoint_waiting_for_memory_locks_stops_and_records_the_run_failed(
    tmp_path, workers
):
    now_ms = int(time.time() * 1000)
    state_dir, workspaces = make_generated_fleet(tmp_path, ["alpha", "bravo"], now_ms)
    locks = Path(os.environ["XDG_STATE_HOME"]) / "memwarden" / "locks"
    held = [RunLock(locks, f"memory-{name}") for name in workspaces]
    for lock in held:
        lock.acquire()  # as another run changing both agents' memory would
    try:
        process = start(
            state_dir,
            "checkpoint",
            MEMWARDEN_CHECKPOINT_WORKERS=workers,
            MEMWARDEN_HISTORY_LOCK_WAIT_SECONDS="300",
        )
        wait_for(lambda: _run_started(), "the checkpoint run to start")
        time.sleep(0.5)  # into the lock wait
        exit_code, stderr = stop(process)
    finally:
        for lock in held:
            lock.release()

    assert exit_code == 143, stderr
    assert (
        stderr.strip()
        .splitlines()[-1]
        .endswith(" ERROR memwarden: stopped by SIGTERM before finishing")
    )
    assert recorded_runs() == [
        ("checkpoint", 143, '{"error":"stopped by SIGTERM before finishing"}'),
    ]
    assert not any(
        (workspace / "memory" / "ACTIVE_CONTEXT.md").exists() for workspace in workspaces.values()
    )


def _run_started() -> bool:
    try:
        return bool(recorded_runs())
    except sqlite3.Error:
        return False
