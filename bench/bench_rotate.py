"""Benchmark: rotation decisions for 100, 1,000 and 10,000 listed sessions (no RPC).

Target (issue 4): 1,000 sessions decided in ≤ 50 ms, from the gateway's raw `sessions.list`
rows (parsing included) to the list of decisions. Measured in-process with
`time.perf_counter` (the RPC and interpreter start are not part of the target), median of
REPEATS runs after one warm-up. Run: `.venv/bin/python bench/run.py rotate` (writes
bench/REPORT.md), or this file alone (prints the figures).
"""

from __future__ import annotations

import random
import statistics
import time
from datetime import UTC, datetime

from memwarden.openclaw.gateway import parse_session_row
from memwarden.rotation import Policy, decide

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
SIZES = (100, 1_000, 10_000)
TARGET_MS = {1_000: 50.0}
REPEATS = 7
KEY_SHAPES = (
    "agent:{agent}:main",
    "agent:{agent}:telegram:direct:{n}",
    "agent:{agent}:slack:group:c{n}",
    "agent:{agent}:cron:job{n}",
    "agent:{agent}:cron:job{n}:run:{n}",
    "agent:{agent}:subagent:{n:08x}",
    "agent:{agent}:discord:channel:{n}:thread:{n}",
)


def fleet_rows(count: int, seed: int = 4) -> list[dict]:
    """Return `count` raw sessions.list rows: a mix of kinds, sizes, freshness and activity."""
    chooser = random.Random(seed)
    now_ms = int(NOW.timestamp() * 1000)
    rows = []
    for index in range(count):
        shape = KEY_SHAPES[index % len(KEY_SHAPES)]
        window = chooser.choice((128_000, 200_000, 400_000, 1_000_000))
        rows.append(
            {
                "key": shape.format(agent=f"a{index % 20}", n=index),
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


def decide_raw(raw_rows: list[dict], policy: Policy) -> int:
    """Parse raw rows and decide; return how many sessions would be rotated."""
    rows = [parsed for row in raw_rows if (parsed := parse_session_row(row)) is not None]
    return sum(decision.action == "rotate" for decision in decide(rows, policy, NOW))


def measure(count: int) -> dict:
    """Return timings (ms) of deciding `count` rows, best and median of REPEATS runs."""
    raw_rows = fleet_rows(count)
    policy = Policy(max_per_run=5, automation_patterns=("agent:*:reports",))
    decide_raw(raw_rows, policy)  # warm caches, as a long-lived process or repeated run would
    timings = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        decide_raw(raw_rows, policy)
        timings.append((time.perf_counter() - started) * 1000)
    return {"sessions": count, "best_ms": min(timings), "median_ms": statistics.median(timings)}


def results() -> list[dict]:
    """Measure every size; return one result per size with `ok` against its target."""
    measured = []
    for count in SIZES:
        result = measure(count)
        target = TARGET_MS.get(count)
        result["target_ms"] = target
        result["ok"] = target is None or result["median_ms"] <= target
        measured.append(result)
    return measured


def run(report) -> None:
    """Write the rotate section of bench/REPORT.md (called by bench/run.py)."""
    section = report.section(
        "rotate",
        "Rotation decisions (`memwarden.rotation.decide`, raw `sessions.list` rows parsed "
        f"first) in-process, median of {REPEATS} runs after a warm-up; the gateway RPC is not "
        "included. Rows: a mix of main, direct, group, thread, cron, cron-run and sub-agent "
        "keys over 20 agents, windows of 128k to 1M tokens, 10% stale counts, some running.",
    )
    rows = []
    for result in results():
        target = result["target_ms"]
        rows.append(
            {
                "sessions": f"{result['sessions']:,}",
                "median": f"{result['median_ms']:.1f} ms",
                "best": f"{result['best_ms']:.1f} ms",
                "target": f"≤ {target:g} ms" if target else "-",
                "verdict": ("met" if result["ok"] else "**missed**") if target else "-",
            }
        )
    section.table(rows)


def main() -> int:
    measured = results()
    for result in measured:
        target = f" (target ≤ {result['target_ms']:.0f} ms)" if result["target_ms"] else ""
        verdict = "ok" if result["ok"] else "TOO SLOW"
        print(
            f"rotation decisions for {result['sessions']:>6,} sessions: median "
            f"{result['median_ms']:7.2f} ms, best {result['best_ms']:7.2f} ms{target} {verdict}"
        )
    return 0 if all(result["ok"] for result in measured) else 1


if __name__ == "__main__":
    raise SystemExit(main())
