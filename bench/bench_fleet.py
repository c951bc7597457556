"""Benchmark: what one gateway costs a fleet's Prometheus and Alertmanager, and what the fleet
features (metrics textfile, Alertmanager sink) cost `memwarden health`, as agents grow.

Fleets from `bench/fleet.py` (small transcripts: their size does not matter here) of 10, 100 and
1,000 agents, each with its memory folder and bootstrap files. For each: `memwarden health` with
neither the metrics file nor Alertmanager, and with both (a stand-in Alertmanager on 127.0.0.1
that accepts every POST), measured interleaved; then the textfile's size and samples, and the
bytes posted to Alertmanager per alert (with the gateway down: two open alerts).

Run: `.venv/bin/python bench/run.py fleet` (writes its section of bench/REPORT.md).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from bench_health import add_memory_files, healthy_gateway  # noqa: E402
from fleet import FleetSpec, build_fleet  # noqa: E402
from harness import (  # noqa: E402
    Command,
    Report,
    child_environment,
    measure_interleaved,
    memwarden_accepting_1,
    run_child,
)

FLEETS = BENCH_DIR / ".fleet"
WORK = FLEETS / "fleet-work"
SIZES = (10, 100, 1000)
TRANSCRIPT_BYTES = 20_000
MEMORY_FILES_PER_AGENT = 5
REPEAT = 5


def run(report: Report) -> None:
    section = report.section(
        "fleet",
        "`memwarden -q --state-dir <fleet> health` as a child process: plain (no metrics file, no "
        "Alertmanager) and with the fleet features (the metrics textfile and the Alertmanager "
        "sink, a stand-in on 127.0.0.1 that accepts every POST), measured interleaved, "
        f"{REPEAT} runs each after a warm-up. Fleets from `bench/fleet.py` with "
        f"{MEMORY_FILES_PER_AGENT} memory files and a MEMORY.md and AGENTS.md per agent; each "
        "agent has one conversation and one cron session (not counted in the context metrics). "
        "The gateway is the stand-in of the health bench.",
    )
    timing_rows, size_rows = [], []
    with healthy_gateway() as gateway_url, stand_in_alertmanager() as manager:
        for agents in SIZES:
            state_dir = prepare(agents)
            plain = _env(agents, gateway_url)
            full = _env(
                agents,
                gateway_url,
                MEMWARDEN_HEALTH_METRICS_FILE=str(WORK / f"{agents}.prom"),
                MEMWARDEN_ALERTMANAGER_URLS=f'["{manager.url}"]',
            )
            argv = memwarden_accepting_1("--state-dir", str(state_dir), "health")
            results = measure_interleaved(
                {
                    f"{agents} agents: plain": Command(argv, plain),
                    f"{agents} agents: metrics file + Alertmanager": Command(argv, full),
                },
                repeat=REPEAT,
            )
            base, fleet = results.values()
            timing_rows.append(
                {
                    "agents": agents,
                    "plain median": f"{base.median_s * 1000:.0f} ms",
                    "plain CPU": f"{base.cpu_median_s * 1000:.0f} ms",
                    "with metrics + Alertmanager": f"{fleet.median_s * 1000:.0f} ms",
                    "its CPU": f"{fleet.cpu_median_s * 1000:.0f} ms",
                    "added CPU": f"{(fleet.cpu_median_s - base.cpu_median_s) * 1000:+.0f} ms",
                    "peak RSS": f"{fleet.peak_rss_mb:.0f} MB",
                }
            )
            text = (WORK / f"{agents}.prom").read_text(encoding="utf-8")
            samples = [line for line in text.splitlines() if line and not line.startswith("#")]
            size_rows.append(
                {
                    "agents": agents,
                    "textfile": f"{len(text.encode()) / 1024:.1f} KB",
                    "samples (series)": len(samples),
                    "per agent": f"{len(samples) / agents:.1f}",
                }
            )
            section.headline(
                f"health with metrics + Alertmanager, {agents} agents",
                "-",
                f"{fleet.median_s * 1000:.0f} ms (plain {base.median_s * 1000:.0f} ms), "
                f"{len(samples)} series",
                None,
            )
        posted = alerts_payload(manager, prepare(SIZES[0]))
    section.table(timing_rows)
    section.table(size_rows)
    section.table([posted])
    section.text(
        "The textfile grows with agents (memory size, files and largest file; the bootstrap "
        "caps, total and one sample per bootstrap file present; the three compaction counters) "
        "and with conversations (context tokens, window and ratio: three samples each); the rest "
        "is fixed (checks, jobs, rotations, alerts). Each Alertmanager of `alertmanager.urls` "
        "gets one POST per health run per gateway, holding only "
        "the open alerts and the resolutions not yet delivered, so its load grows with gateways "
        "and problems, not with agents."
    )


def prepare(agents: int) -> Path:
    """Build (or reuse) a fleet of `agents` with memory and bootstrap files; return its state."""
    fleet = build_fleet(FLEETS, FleetSpec(agents=agents, transcript_bytes=TRANSCRIPT_BYTES))
    add_memory_files(fleet.workspaces.values(), MEMORY_FILES_PER_AGENT)
    for workspace in fleet.workspaces.values():
        for name, text in (("MEMORY.md", "- a durable fact\n" * 300), ("AGENTS.md", "Be brief.\n")):
            if not (workspace / name).exists():
                (workspace / name).write_text(text)
    return fleet.state_dir


def alerts_payload(manager: StandIn, state_dir: Path) -> dict[str, object]:
    """Run health once with the gateway down; return what reached Alertmanager."""
    manager.bodies.clear()
    env = _env(
        SIZES[0],
        "http://127.0.0.1:9",  # nothing listens on the discard port: the gateway is down
        MEMWARDEN_ALERTMANAGER_URLS=f'["{manager.url}"]',
    )
    run_child(memwarden_accepting_1("--state-dir", str(state_dir), "health"), env)
    sizes = [len(body) for body in manager.bodies]
    alerts = [body.count(b'"labels"') for body in manager.bodies]
    return {
        "scenario": "gateway down: one health run",
        "POSTs": len(sizes),
        "alerts": sum(alerts),
        "bytes": sum(sizes),
        "bytes per alert": round(sum(sizes) / max(1, sum(alerts))),
    }


def _env(agents: int, gateway_url: str, **extra: str) -> dict[str, str]:
    return child_environment(
        XDG_STATE_HOME=str(WORK / f"state-{agents}"),
        XDG_CONFIG_HOME=str(WORK / "config"),
        MEMWARDEN_HEALTH_GATEWAY_HTTP_URL=gateway_url,
        MEMWARDEN_HEALTH_PROBE_TIMEOUT_SECONDS="1",
        MEMWARDEN_HEALTH_PROCESS_CHECK="false",
        **extra,
    )


class StandIn:
    """A stand-in Alertmanager: accepts every POST and keeps its body."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.bodies: list[bytes] = []


@contextmanager
def stand_in_alertmanager() -> Iterator[StandIn]:
    holder: list[StandIn] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            holder[0].bodies.append(self.rfile.read(length))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    holder.append(StandIn(f"http://127.0.0.1:{server.server_address[1]}"))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield holder[0]
    finally:
        server.shutdown()
        server.server_close()


if __name__ == "__main__":
    standalone = Report()
    standalone.current = "fleet"
    run(standalone)
    print(standalone.sections["fleet"].markdown())
