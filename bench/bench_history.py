"""Benchmark: memory-history snapshots, of one agent and of a whole run's changed agents.

Targets: `snapshot()` of an unchanged 500-file memory folder ≤ 0.1 s (issue 8) — what every run
pays when the agent's memory did not move; lock and directory walk included, no file read and no
git started. Snapshots of 100 changed agents add ≤ 0.1 s to a run (issue 15): one git process
for all of them. Measured in-process (the jobs call them in their own process), in child
processes so each one's peak RSS is known too, and, for the second target, also as what a whole
`memwarden checkpoint` of 100 agents x 2 MB (one new turn each) takes with history on and off,
measured interleaved. For reference: a snapshot with one file changed among 500, the 100 agents
snapshotted one call (one git process) each, and `memwarden history snapshot` of the unchanged
folder as a whole child process.

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
AGENTS = 100
AGENT_FILES = 20  # memory files of each of the AGENTS workspaces (+ 3 root files)
CHANGED_FILES = 3  # rewritten in each agent before each batch (handoff, daily log, INDEX.md)
BATCH_ROUNDS = 9
BATCH_TARGET_MS = 100.0
WHOLE_RUN_ROUNDS = 9
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
    from memwarden.history.snapshots import snapshot
    from memwarden.openclaw.agents import Agent
    from memwarden.process.runtime import JobContext
    from memwarden.settings.config import defaults

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
        assert taken is not None and taken.changes.modified == ["memory/note-0000.md"]
    context.close()
    return {"unchanged": unchanged, "changed": changed}


def make_fleet_workspaces(root: Path) -> list[Path]:
    """Write AGENTS workspaces of AGENT_FILES memory files and three root files each."""
    past = time.time() - AGE_SECONDS
    workspaces = []
    for number in range(AGENTS):
        workspace = root / "workspaces" / f"agent{number:03d}"
        memory = workspace / "memory"
        memory.mkdir(parents=True)
        files = [memory / f"2026-10-{day:02d}.md" for day in range(1, AGENT_FILES + 1)]
        files += [workspace / name for name in ("MEMORY.md", "USER.md", "AGENTS.md")]
        for path in files:
            path.write_text(f"# {path.name} of agent {number}\n" + "- a remembered fact\n" * 80)
            os.utime(path, (past, past))
        workspaces.append(workspace)
    return workspaces


def touch_changed(workspaces: list[Path], round_number: int) -> None:
    """Rewrite CHANGED_FILES files of every workspace, as a checkpoint run does."""
    for workspace in workspaces:
        for name in ("ACTIVE_CONTEXT.md", "2026-11-22.md", "INDEX.md")[:CHANGED_FILES]:
            text = f"# {name}, round {round_number}\n" + f"- line of round {round_number}\n" * 60
            (workspace / "memory" / name).write_text(text)


def batch_in_process(root: Path) -> dict:
    """Return timings (ms) of snapshotting AGENTS changed agents: in one `snapshot_agents` call
    (one git process), and one `snapshot()` call each (one git process each), interleaved."""
    from memwarden.history.plan import SnapshotRequest
    from memwarden.history.snapshots import snapshot, snapshot_agents
    from memwarden.openclaw.agents import Agent
    from memwarden.process.runtime import JobContext
    from memwarden.settings.config import defaults

    workspaces = sorted((root / "workspaces").iterdir())
    agents = [Agent(w.name, w, root / "agents" / w.name, False, "none", True) for w in workspaces]
    timings: dict[str, list[float]] = {"batch": [], "one at a time": []}
    # Each mode keeps its own store, as one memwarden would: the other mode's hundred packs a
    # round would otherwise slow its lookups.
    contexts = {
        mode: JobContext(
            config=defaults(),
            env={"XDG_STATE_HOME": str(root / f"xdg-{number}"), "PATH": os.environ["PATH"]},
        )
        for number, mode in enumerate(timings)
    }
    for context in contexts.values():
        snapshot_agents(context, [SnapshotRequest(agent, "manual") for agent in agents])
    for round_number in range(BATCH_ROUNDS):
        for mode, context in contexts.items():
            touch_changed(workspaces, 2 * round_number + (mode == "batch"))
            started = time.perf_counter()
            if mode == "batch":
                taken = snapshot_agents(
                    context, [SnapshotRequest(agent, "checkpoint") for agent in agents]
                )
                assert all(result.snapshot is not None for result in taken)
            else:
                for agent in agents:
                    assert snapshot(context, agent, "checkpoint") is not None
            timings[mode].append((time.perf_counter() - started) * 1000)
    for context in contexts.values():
        context.close()
    return timings


def batch_in_child(root: Path) -> tuple[dict, float]:
    """Run `batch_in_process` in a child process; return its timings and peak RSS."""
    code = (
        f"import json, sys; sys.path.insert(0, {str(BENCH_DIR)!r}); "
        "from pathlib import Path; from bench_history import batch_in_process; "
        f"print(json.dumps(batch_in_process(Path({str(root)!r}))))"
    )
    output = root / "batch.json"
    sample = run_child([PYTHON, "-c", code], child_environment(), output)
    return json.loads(output.read_text().strip().splitlines()[-1]), sample.max_rss_mb


def whole_run_with_and_without_history() -> dict:
    """Measure `memwarden checkpoint` of 100 agents x 2 MB, one new turn each, with memory
    history on and off, interleaved; return the two Measurements by name."""
    from bench_checkpoint import FLEETS, MB, MEMWARDEN, WORK, _environment
    from fleet import FleetSpec, append_turns, build_fleet
    from harness import Command, measure_interleaved

    fleet = build_fleet(FLEETS, FleetSpec(agents=100, transcript_bytes=2 * MB))
    argv = [MEMWARDEN, "-q", "--state-dir", str(fleet.state_dir), "checkpoint"]

    def one_turn() -> None:
        append_turns(fleet, turns=1)

    commands = {
        name: Command(argv, _environment(WORK / f"{fleet.spec.name}-{folder}", history), one_turn)
        for name, folder, history in (
            (WITH_HISTORY, "history-on", True),
            (WITHOUT_HISTORY, "history-off", False),
        )
    }
    measured = measure_interleaved(commands, repeat=WHOLE_RUN_ROUNDS)
    files = [p for w in fleet.workspaces.values() for p in (w / "memory").rglob("*") if p.is_file()]
    measured["memory"] = (len(files), sum(path.stat().st_size for path in files))
    return measured


WITH_HISTORY = "`checkpoint`, 100 agents x 2 MB, one new turn each: history on"
WITHOUT_HISTORY = "`checkpoint`, 100 agents x 2 MB, one new turn each: history off"


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


def figure(values: list[float], peak_mb: float) -> str:
    """Return timings (ms) as the summary shows them: median (min, max), peak RSS."""
    return (
        f"{statistics.median(values):.1f} ms (min {min(values):.1f}, max {max(values):.1f}), "
        f"peak RSS {peak_mb:.0f} MB"
    )


def batch_rows(timings: dict, peak_mb: float) -> list[dict]:
    rows = []
    for mode, values in timings.items():
        median = statistics.median(values)
        batch = mode == "batch"
        rows.append(
            {
                "scenario": f"{AGENTS} agents with {CHANGED_FILES} changed files each, "
                + ("one `snapshot_agents` call" if batch else "one `snapshot()` call per agent"),
                "median": f"{median:.1f} ms",
                "min": f"{min(values):.1f} ms",
                "max": f"{max(values):.1f} ms",
                "peak RSS": f"{peak_mb:.1f} MB",
                "runs": str(len(values)),
                "target": f"≤ {BATCH_TARGET_MS:g} ms" if batch else "-",
                "verdict": ("met" if median <= BATCH_TARGET_MS else "**missed**") if batch else "-",
                "ok": median <= BATCH_TARGET_MS or not batch,
            }
        )
    return rows


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
            figure(unchanged, peak),
            table[0]["ok"],
        )
        section.measurements([whole_process(root)])
    section.text(
        "The unchanged case reads no file and starts no git: one directory walk compared with the "
        "stat manifest of the last snapshot. The child-process figure is mostly interpreter start "
        "and imports."
    )
    section.text(
        f"**A run's snapshots.** {AGENTS} workspaces of {AGENT_FILES} memory files and 3 root "
        f"files each (files an hour old); before each round {CHANGED_FILES} files of every "
        "workspace are rewritten, as a checkpoint run rewrites the handoff, the daily log and "
        "INDEX.md. In one child process, each mode with its own store, after a first snapshot "
        f"of every agent, {BATCH_ROUNDS} rounds of each mode, interleaved: all {AGENTS} agents "
        "in one `snapshot_agents` call (what checkpoint, rotate, index and health do: one git "
        "process), and one `snapshot()` call per agent (one git process each, the cost model "
        "of history before batching)."
    )
    with tempfile.TemporaryDirectory(prefix="memwarden-bench-history-batch-") as folder:
        root = Path(folder)
        make_fleet_workspaces(root)
        batch_timings, batch_peak = batch_in_child(root)
    batch_table = batch_rows(batch_timings, batch_peak)
    section.table(batch_table, COLUMNS)
    batch = batch_timings["batch"]
    section.headline(
        f"snapshots of {AGENTS} changed agents (in-process, one git process)",
        f"≤ {BATCH_TARGET_MS:g} ms",
        figure(batch, batch_peak),
        batch_table[0]["ok"],
    )
    whole = whole_run_with_and_without_history()
    section.text(
        "**What they add to a whole run**: `memwarden -q checkpoint` of the fleet of "
        "`bench/fleet.py` (100 agents x 2 MB, as in the checkpoint section), one new turn each, "
        f"with memory history on and off, {WHOLE_RUN_ROUNDS} runs of each after a warm-up, "
        "interleaved (one of each in turn), each with its own memwarden state."
    )
    file_count, memory_bytes = whole.pop("memory")
    section.measurements(list(whole.values()))
    added = whole[WITH_HISTORY].median_s - whole[WITHOUT_HISTORY].median_s
    cpu_added = whole[WITH_HISTORY].cpu_median_s - whole[WITHOUT_HISTORY].cpu_median_s
    section.text(
        f"History adds {added * 1000:.0f} ms to the median run ({cpu_added * 1000:.0f} ms of "
        f"CPU, git's included). The fleet's memory folders hold {file_count} files, "
        f"{memory_bytes / 1e6:.1f} MB, and a run rewrites most of it: every agent's handoff and "
        "the day's log, which grows by an entry at each run (and, as the fleet is reused, has "
        "grown over every earlier bench run). A snapshot stores each changed file whole, so its "
        "cost follows these bytes — reading and hashing them, and git hashing and compressing "
        "them — more than the number of agents. The difference of two medians of a second each "
        "also moves by tens of ms on this shared machine from one measurement to the next."
    )
    if not all(row["ok"] for row in table + batch_table):
        raise BenchError("a history snapshot missed its target")


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
