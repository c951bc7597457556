"""Benchmark: `memwarden health` as a timer runs it (every check, alert policy, metrics file).

Targets (issue 6): a full run on a healthy host ≤ 1 s; with the gateway hanging (it accepts
connections and never answers) and Slack hanging too, a run is bounded by the configured
timeouts: ≤ probe timeout + Slack timeout + the healthy run's time + 0.5 s.

The host: a fleet from `bench/fleet.py` (100 agents, both storage eras) with memory folders and
gateway cron run logs added, and a stand-in gateway answering /healthz and /readyz on 127.0.0.1.

Run: `.venv/bin/python bench/run.py health` (writes bench/REPORT.md), or this file alone (prints
the table). The fleet is built once under bench/.fleet/.
"""

from __future__ import annotations

import socket
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import orjson

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from fleet import FleetSpec, build_fleet  # noqa: E402
from harness import (  # noqa: E402
    Report,
    Target,
    child_environment,
    measure,
    memwarden_accepting_1,
)

FLEETS = BENCH_DIR / ".fleet"
WORK = FLEETS / "health-work"
SPEC = FleetSpec(agents=100, transcript_bytes=500_000)
MEMORY_FILES_PER_AGENT = 20
CRON_JOBS = 10
PROBE_TIMEOUT_S = 1.0
SLACK_TIMEOUT_S = 1.0
MARGIN_S = 0.5
HEALTHY_TARGET_S = 1.0
REPEAT = 5
HEALTHY = "healthy host, 100 agents"
HANGING = f"gateway and Slack hanging (timeouts {PROBE_TIMEOUT_S:g} s + {SLACK_TIMEOUT_S:g} s)"


def run(report: Report) -> None:
    section = report.section(
        "health",
        "`memwarden -q --state-dir <fleet> health` as a child process (interpreter start "
        f"included), {REPEAT} runs after one warm-up run. Fleet: `bench/fleet.py` "
        f"with {SPEC.agents} agents in both storage eras, {MEMORY_FILES_PER_AGENT} memory files "
        f"each and {CRON_JOBS} gateway cron run logs; the gateway is a stand-in HTTP server on "
        "127.0.0.1; the machine-dependent process check is off (no real gateway runs here).",
    )
    state_dir = prepare_host()
    with healthy_gateway() as url:
        healthy = measure(HEALTHY, _argv(state_dir), env=_environment(url), repeat=REPEAT)
    with hanging_server() as gateway_url, hanging_server() as slack_url:
        env = _environment(gateway_url, MEMWARDEN_SLACK_WEBHOOK_URL=slack_url + "/services/T/B/x")
        hanging = measure(HANGING, _argv(state_dir), env=env, repeat=REPEAT)
    bound = PROBE_TIMEOUT_S + SLACK_TIMEOUT_S + healthy.median_s + MARGIN_S
    targets = {HEALTHY: Target(wall_s=HEALTHY_TARGET_S), HANGING: Target(wall_s=round(bound, 2))}
    section.measurements([healthy, hanging], targets)
    section.text(
        "With the gateway hanging, `/healthz` costs one probe timeout and `/readyz` is not tried; "
        "the first undelivered Slack message costs one Slack timeout and ends the delivery round. "
        "Nothing else waits on the network."
    )


def prepare_host() -> Path:
    """Build (or reuse) the fleet, add memory folders and cron run logs; return the state dir."""
    fleet = build_fleet(FLEETS, SPEC)
    add_memory_files(fleet.workspaces.values(), MEMORY_FILES_PER_AGENT)
    runs = fleet.state_dir / "cron" / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    now_ms = int(time.time() * 1000)
    for job in range(CRON_JOBS):
        lines = [
            {"ts": now_ms - minute * 60_000, "jobId": f"job{job}", "action": "finished"}
            | {"status": "ok"}
            for minute in range(500, 0, -1)
        ]
        text = b"\n".join(orjson.dumps(line) for line in lines) + b"\n"
        (runs / f"job{job}.jsonl").write_bytes(text)
    return fleet.state_dir


def add_memory_files(workspaces: Iterable[Path], count: int) -> None:
    """Give each workspace `count` memory files (kept when they exist)."""
    for workspace in workspaces:
        memory = workspace / "memory"
        memory.mkdir(parents=True, exist_ok=True)
        for number in range(count):
            path = memory / f"note-{number:02d}.md"
            if not path.exists():
                path.write_text("- remembered fact\n" * 200)


def _argv(state_dir: Path) -> list[str]:
    return memwarden_accepting_1("--state-dir", str(state_dir), "health")


def _environment(gateway_url: str, **extra: str) -> dict[str, str]:
    return child_environment(
        XDG_STATE_HOME=str(WORK / "state"),
        XDG_CONFIG_HOME=str(WORK / "config"),
        MEMWARDEN_HEALTH_GATEWAY_HTTP_URL=gateway_url,
        MEMWARDEN_HEALTH_PROBE_TIMEOUT_SECONDS=str(PROBE_TIMEOUT_S),
        MEMWARDEN_HEALTH_PROCESS_CHECK="false",
        MEMWARDEN_HEALTH_METRICS_FILE=str(WORK / "memwarden.prom"),
        MEMWARDEN_SLACK_TIMEOUT_SECONDS=str(SLACK_TIMEOUT_S),
        **extra,
    )


GATEWAY_BODIES = {
    "/healthz": {"ok": True, "status": "live"},
    "/readyz": {"ready": True, "failing": []},
}


class _Gateway(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = orjson.dumps(GATEWAY_BODIES.get(self.path.split("?")[0], {"ok": False}))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@contextmanager
def healthy_gateway() -> Iterator[str]:
    """A stand-in gateway answering /healthz and /readyz; yield its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Gateway)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def hanging_server() -> Iterator[str]:
    """A port that accepts connections (into its backlog) and never answers; yield its URL."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"


if __name__ == "__main__":
    standalone = Report()
    standalone.current = "health"
    run(standalone)
    print(standalone.sections["health"].markdown())
