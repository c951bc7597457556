"""Benchmark: snapshot of an unchanged 500-file memory folder (and of one with a file changed).

Target (issue 8): `snapshot()` of an unchanged 500-file memory folder ≤ 0.1 s — what every
checkpoint run pays when the agent's memory did not move; lock and directory walk included, no
file read and no git started. Measured in-process (the checkpoint job calls it in its own
process), in PROCESSES child processes of REPEATS calls each, so each process's peak RSS is
known too. For reference: a snapshot with one file changed among 500 (one git process), and
`memwarden history snapshot` of the unchanged folder as a whole child process.

Run: `.venv/bin/python bench/run.py history` (writes bench/REPORT.md), or this file alone.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from harness import (  # noqa: E402
    PYTHON,
    BenchError,
    Report,
    child_environment,
    measure,
    run_child,
)

FILES = 500
TARGET_MS = 100.0
REPEATS = 15
PROCESSES = 5
# Old enough that the stat manifest trusts the files (history/manifest.py: racy files).
AGE_SECONDS = 3600


def make_memory(workspace: Path, count: int) -> None:
    """Write `count` memory files (notes, and daily logs in archive folders), a few KB each."""
    memory = workspace / "memory"
    past = time.time() - AGE_SECONDS
    for index in range(count):
        folder = memory / "archive" / f"2026-{index % 12 + 1:02d}" if index % 3 else memory
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"note-{index:04d}.md"
        path.write_text(f"# note {index}\n" + "- remembered fact\n" * (index % 200 + 10))
        os.utime(path, (past, past))


def in_process(root: Path) -> dict:
    """Return timings (ms) of snapshot(): unchanged folder, and one file changed per call."""
    from memwarden.config import defaults
    from memwarden.history import snapshot
    from memwarden.openclaw.agents import Agent
    from memwarden.runtime import JobContext

    workspace = root / "workspace"
    env = {"XDG_STATE_HOME": str(root / "xdg"), "PATH": os.environ.get("PATH", os.defpath)}
    context = JobContext(config=defaults(), env=env)
    agent = Agent("main", workspace, root / "agent", True, "none", True)
    snapshot(context, agent, "manual")  # the first process's takes the whole folder
    unchanged = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        taken = snapshot(context, agent, "checkpoint")
        unchanged.append((time.perf_counter() - started) * 1000)
        assert taken is None, "an unchanged folder must not produce a snapshot"
    changed = []
    active = workspace / "memory" / "note-0000.md"
    for round_number in range(REPEATS):
        active.write_text(f"# active context, round {round_number} of {time.time()}\n")
        started = time.perf_counter()
        taken = snapshot(context, agent, "checkpoint")
        changed.append((time.perf_counter() - started) * 1000)
        assert taken is not None and taken.changes.modified == ["note-0000.md"]
    context.close()
    return {"unchanged": unchanged, "changed": changed}


def in_children(root: Path) -> tuple[dict, float]:
    """Run `in_process` in PROCESSES children; return all their timings and the largest peak
    RSS of a child."""
    code = (
        f"import json, sys; sys.path.insert(0, {str(BENCH_DIR)!r}); "
        "from pathlib import Path; from bench_history import in_process; "
        f"print(json.dumps(in_process(Path({str(root)!r}))))"
    )
    timings: dict[str, list[float]] = {"unchanged": [], "changed": []}
    peak = 0.0
    output = root / "timings.json"
    for _ in range(PROCESSES):
        sample = run_child([PYTHON, "-c", code], child_environment(), output)
        for name, values in json.loads(output.read_text().strip().splitlines()[-1]).items():
            timings[name] += values
        peak = max(peak, sample.max_rss_mb)
    return timings, peak


def whole_process(root: Path):
    """Return the harness Measurement of `memwarden history snapshot` on the unchanged folder."""
    state_dir = root / "gateway"
    state_dir.mkdir(exist_ok=True)
    config = {"agents": {"defaults": {"workspace": str(root / "workspace")}}}
    (state_dir / "openclaw.json").write_text(json.dumps(config))
    env = child_environment(XDG_STATE_HOME=str(root / "xdg"), OPENCLAW_STATE_DIR=str(state_dir))
    argv = [PYTHON, "-m", "memwarden", "-q", "history", "snapshot"]
    return measure("`memwarden history snapshot`, unchanged", argv, env=env, repeat=7)


def rows(timings: dict, peak_mb: float | None = None) -> list[dict]:
    unchanged, changed = timings["unchanged"], timings["changed"]
    rss = f"{peak_mb:.1f} MB" if peak_mb is not None else "-"
    runs = f"{PROCESSES} x {REPEATS}" if peak_mb is not None else str(REPEATS)
    median = statistics.median(unchanged)
    return [
        {
            "scenario": f"snapshot(), unchanged {FILES}-file folder",
            "median": f"{median:.1f} ms",
            "min": f"{min(unchanged):.1f} ms",
            "max": f"{max(unchanged):.1f} ms",
            "peak RSS": rss,
            "runs": runs,
            "target": f"≤ {TARGET_MS:g} ms",
            "verdict": "met" if median <= TARGET_MS else "**missed**",
            "ok": median <= TARGET_MS,
        },
        {
            "scenario": f"snapshot(), 1 of {FILES} files changed",
            "median": f"{statistics.median(changed):.1f} ms",
            "min": f"{min(changed):.1f} ms",
            "max": f"{max(changed):.1f} ms",
            "peak RSS": rss,
            "runs": runs,
            "target": "-",
            "verdict": "-",
            "ok": True,
        },
    ]


COLUMNS = ("scenario", "median", "min", "max", "peak RSS", "runs", "target", "verdict")


def run(report: Report) -> None:
    section = report.section(
        "history",
        f"`memwarden.history.snapshot()` in-process over a {FILES}-file memory folder (a third "
        "at the top, the rest in archive sub-folders; files an hour old): a first snapshot, "
        f"then {REPEATS} calls each unchanged and with one file changed, in {PROCESSES} child "
        "processes (peak RSS: the largest of them). Then the CLI as a child process, for "
        "reference.",
    )
    with tempfile.TemporaryDirectory(prefix="memwarden-bench-history-") as folder:
        root = Path(folder)
        make_memory(root / "workspace", FILES)
        timings, peak = in_children(root)
        table = rows(timings, peak)
        section.table(table, COLUMNS)
        unchanged = timings["unchanged"]
        section.headline(
            f"snapshot(), unchanged {FILES}-file folder (in-process)",
            f"≤ {TARGET_MS:g} ms",
            f"{statistics.median(unchanged):.1f} ms (min {min(unchanged):.1f}, max "
            f"{max(unchanged):.1f}), peak RSS {peak:.0f} MB",
            table[0]["ok"],
        )
        section.measurements([whole_process(root)])
    section.text(
        "The unchanged case reads no file and starts no git: one directory walk compared with the "
        "stat manifest of the last snapshot. The child-process figure is mostly interpreter start "
        "and imports."
    )
    if not all(row["ok"] for row in table):
        raise BenchError(f"snapshot of an unchanged folder missed its {TARGET_MS:g} ms target")


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="memwarden-bench-history-") as folder:
        root = Path(folder)
        make_memory(root / "workspace", FILES)
        table = rows(*in_children(root))
    for row in table:
        print(f"{row['scenario']}: median {row['median']}, min {row['min']}, max {row['max']}")
    return 0 if all(row["ok"] for row in table) else 1


if __name__ == "__main__":
    raise SystemExit(main())
