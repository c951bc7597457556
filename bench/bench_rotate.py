"""Benchmark: rotation decisions for 100, 1,000 and 10,000 listed sessions.

Target (issue 4): 1,000 sessions decided in ≤ 50 ms, from the gateway's raw `sessions.list`
rows (parsing included) to the list of decisions, the RPC excluded. Two measurements:

- *decisions*: in a fresh child process per run (as a timer's run is), the first
  `parse_session_row` + `decide` over the rows, timed in-process with `time.perf_counter`; 5
  processes per size, each process's peak RSS from `os.wait4`. The child also times the same
  call again, warm, for reference.
- *whole run*: `memwarden rotate --dry-run` as a child process against the gateway simulator
  (`tests/support/gateway_sim.py`, in this process, on 127.0.0.1) listing that many sessions
  of 20 agents: interpreter start, imports, the WebSocket handshake, the paged `sessions.list`,
  the decisions and the report. No target; the simulator's own time (it shares the two cores)
  is part of it.

Run: `.venv/bin/python bench/run.py rotate` (writes bench/REPORT.md), or this file alone.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
sys.path.insert(0, str(BENCH_DIR.parent / "tests"))

from harness import (  # noqa: E402
    PYTHON,
    REPO,
    Measurement,
    Report,
    child_environment,
    measure,
    run_child,
)

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
SIZES = (100, 1_000, 10_000)
TARGET_MS = {1_000: 50.0}
PROCESSES = 5
AGENTS = 20
KEY_SHAPES = (
    "agent:{agent}:main",
    "agent:{agent}:telegram:direct:{n}",
    "agent:{agent}:slack:group:c{n}",
    "agent:{agent}:cron:job{n}",
    "agent:{agent}:cron:job{n}:run:{n}",
    "agent:{agent}:subagent:{n:08x}",
    "agent:{agent}:discord:channel:{n}:thread:{n}",
)


def fleet_rows(count: int, seed: int = 4, now: datetime = NOW) -> list[dict]:
    """Return `count` raw sessions.list rows: a mix of kinds, sizes, freshness and activity."""
    chooser = random.Random(seed)
    now_ms = int(now.timestamp() * 1000)
    rows = []
    for index in range(count):
        shape = KEY_SHAPES[index % len(KEY_SHAPES)]
        window = chooser.choice((128_000, 200_000, 400_000, 1_000_000))
        rows.append(
            {
                "key": shape.format(agent=f"a{index % AGENTS}", n=index),
                "sessionId": f"{index:08x}-0000-4000-8000-000000000000",
                "updatedAt": now_ms - chooser.randint(0, 86_400_000),
                "status": chooser.choice(("done", "done", "done", "running", None)),
                "totalTokens": chooser.randint(0, window),
                "totalTokensFresh": chooser.random() > 0.1,
                "contextTokens": window,
                "model": "fake-model",
            }
        )
    return rows


# The child: one process, one cold decision (what a timer's run pays), then warm ones.
_CHILD = """
import json, statistics, sys, time
sys.path.insert(0, sys.argv[1])
from bench_rotate import NOW, fleet_rows
from memwarden.openclaw.gateway import parse_session_row
from memwarden.rotation.policy import Policy, decide

raw = fleet_rows(int(sys.argv[2]))
policy = Policy(max_per_run=5, automation_patterns=("agent:*:reports",))

def decide_raw():
    rows = [parsed for row in raw if (parsed := parse_session_row(row)) is not None]
    return sum(decision.action == "rotate" for decision in decide(rows, policy, NOW))

started = time.perf_counter()
decide_raw()
cold = time.perf_counter() - started
warm = []
for _ in range(5):
    started = time.perf_counter()
    decide_raw()
    warm.append(time.perf_counter() - started)
print(json.dumps({"cold_ms": cold * 1000, "warm_ms": statistics.median(warm) * 1000}))
"""


def decisions(count: int) -> dict:
    """Run PROCESSES children deciding `count` rows; return their timings and peak RSS."""
    env = child_environment()
    colds, warms, rss = [], [], []
    with tempfile.TemporaryDirectory(prefix="mw-bench-rotate-") as folder:
        output = Path(folder) / "timings.json"
        for _ in range(PROCESSES):
            sample = run_child([PYTHON, "-c", _CHILD, str(BENCH_DIR), str(count)], env, output)
            timings = json.loads(output.read_text().strip().splitlines()[-1])
            colds.append(timings["cold_ms"])
            warms.append(timings["warm_ms"])
            rss.append(sample.max_rss_mb)
    target = TARGET_MS.get(count)
    median = statistics.median(colds)
    return {
        "sessions": count,
        "median_ms": median,
        "min_ms": min(colds),
        "max_ms": max(colds),
        "warm_ms": statistics.median(warms),
        "rss_mb": max(rss),
        "target_ms": target,
        "ok": target is None or median <= target,
    }


def whole_runs(sizes: tuple[int, ...] = SIZES) -> list[Measurement]:
    """Measure `memwarden rotate --dry-run` against the simulator for each size."""
    results = []
    with tempfile.TemporaryDirectory(prefix="mw-bench-rotate-") as folder:
        root = Path(folder)
        state_dir = _state_dir(root)
        for count in sizes:
            rows = fleet_rows(count, now=datetime.now(UTC))
            with _listing_gateway(rows) as simulator:
                env = child_environment(
                    XDG_STATE_HOME=str(root / "xdg-state"),
                    XDG_CONFIG_HOME=str(root / "xdg-config"),
                    HOME=str(root / "home"),
                    MEMWARDEN_GATEWAY_URL=simulator.url,
                    MEMWARDEN_GATEWAY_TOKEN=simulator.token,
                )
                argv = [str(REPO / ".venv" / "bin" / "memwarden"), "-q", "--state-dir"]
                argv += [str(state_dir), "rotate", "--dry-run"]
                results.append(
                    measure(f"`rotate --dry-run`, {count:,} sessions listed", argv, env=env)
                )
    return results


def _listing_gateway(rows: list[dict]):
    """Return the gateway simulator serving `rows`, its pages cut from one sorted list.

    The simulator copies every row for every page it serves (tests change rows while it runs);
    at 10,000 rows in pages of 200 that would time the simulator, not memwarden.
    """
    from support.gateway_sim import GatewaySimulator

    class ListingGateway(GatewaySimulator):
        def _sessions_list(self, params: dict) -> dict:
            limit, offset = params.get("limit") or 100, params.get("offset") or 0
            page = listed[offset : offset + limit]
            after = offset + len(page)
            more = after < len(listed)
            return {
                "ts": int(time.time() * 1000),
                "count": len(page),
                "totalCount": len(listed),
                "limitApplied": limit,
                "offset": offset or None,
                "nextOffset": after if more else None,
                "hasMore": more,
                "defaults": {"model": "fake-model", "contextTokens": 200_000},
                "sessions": page,
            }

    simulator = ListingGateway(rows)
    listed = sorted(simulator.rows, key=lambda row: -(row.get("updatedAt") or 0))
    return simulator


def _state_dir(root: Path) -> Path:
    """A gateway state dir naming the 20 agents the rows belong to (no sessions on disk)."""
    state_dir = root / "gateway"
    agents = []
    for number in range(AGENTS):
        workspace = root / "workspaces" / f"a{number}"
        workspace.mkdir(parents=True)
        agents.append({"id": f"a{number}", "workspace": str(workspace), "default": number == 0})
    state_dir.mkdir()
    config = {"gateway": {"port": 18789}, "agents": {"list": agents}}
    (state_dir / "openclaw.json").write_text(json.dumps(config))
    return state_dir


def run(report: Report) -> None:
    """Write the rotate section of bench/REPORT.md (called by bench/run.py)."""
    section = report.section(
        "rotate",
        "Rows: a mix of main, direct, group, thread, cron, cron-run and sub-agent keys over "
        f"{AGENTS} agents, windows of 128k to 1M tokens, 10% stale counts, some running; "
        "policy: the defaults with at most 5 resets a run.",
    )
    section.text(
        "**Decisions** (`parse_session_row` + `rotation.decide`, the RPC excluded): the first "
        f"call in a fresh process, {PROCESSES} processes per size; *warm* is the same call "
        "repeated in the same process."
    )
    rows = []
    decided = {}
    for count in SIZES:
        result = decided[count] = decisions(count)
        target = result["target_ms"]
        rows.append(
            {
                "sessions": f"{count:,}",
                "median": f"{result['median_ms']:.1f} ms",
                "min": f"{result['min_ms']:.1f} ms",
                "max": f"{result['max_ms']:.1f} ms",
                "warm": f"{result['warm_ms']:.1f} ms",
                "peak RSS": f"{result['rss_mb']:.1f} MB",
                "runs": str(PROCESSES),
                "target": f"≤ {target:g} ms" if target else "-",
                "verdict": ("met" if result["ok"] else "**missed**") if target else "-",
            }
        )
        section.headline(
            f"decisions, {count:,} sessions listed (RPC excluded)",
            f"≤ {target:g} ms" if target else "-",
            f"{result['median_ms']:.1f} ms (min {result['min_ms']:.1f}, max "
            f"{result['max_ms']:.1f}), peak RSS {result['rss_mb']:.0f} MB",
            result["ok"] if target else None,
        )
    section.table(rows)
    section.text(
        "**Whole run**: `memwarden rotate --dry-run` as a child process against the gateway "
        "simulator (no target: the RPC, the interpreter and the simulator are in it)."
    )
    whole = whole_runs()
    section.measurements(whole)
    largest = max(SIZES)
    section.text(
        "Decisions grow linearly with the sessions listed: each row is parsed, its key "
        "classified (cached per key) and checked against the policy once. With "
        f"{largest:,} sessions they take {decided[largest]['median_ms']:.0f} ms of the whole "
        f"run's {whole[-1].median_s * 1000:.0f} ms; the rest is the interpreter and imports, "
        "the WebSocket handshake, the paged `sessions.list` and its JSON, and the report of "
        "every session (one line and one JSON item each)."
    )


def main() -> int:
    measured = [decisions(count) for count in SIZES]
    for result in measured:
        target = f" (target ≤ {result['target_ms']:.0f} ms)" if result["target_ms"] else ""
        verdict = "ok" if result["ok"] else "TOO SLOW"
        print(
            f"rotation decisions for {result['sessions']:>6,} sessions: median "
            f"{result['median_ms']:7.2f} ms, min {result['min_ms']:7.2f} ms, warm "
            f"{result['warm_ms']:7.2f} ms{target} {verdict}"
        )
    return 0 if all(result["ok"] for result in measured) else 1


if __name__ == "__main__":
    raise SystemExit(main())
